/*
 * Files known by their manifest alone (zt_open_manifest): a remote reader
 * fetches the bytes at both ends of a file, asks zt_manifest_locate where the
 * manifest is, fetches it if the first bytes did not hold it, and opens the
 * file from those bytes. The model is built and validated by the same code as
 * zt_open's, reading through the two windows (file_io.c, read_window), so a
 * remote file is accepted exactly when the same bytes on disk would be.
 */
#include "internal.h"

#include <string.h>

static zt_status check_window(const void *head, size_t head_len, const void *tail, size_t tail_len,
                              uint64_t file_size, bool need_tail, zt_error *err)
{
    size_t want = file_size < 16 ? (size_t)file_size : 16;
    if ((!head && head_len) || (!tail && tail_len))
        return ZT_FAIL(err, ZT_E_ARG, "NULL bytes with a non-zero length");
    if (head_len > file_size || tail_len > file_size)
        return ZT_FAIL(err, ZT_E_ARG, "%zu and %zu bytes given for a file of %llu bytes", head_len,
                       tail_len, (unsigned long long)file_size);
    if (head_len < want || (need_tail && tail_len < want))
        return ZT_FAIL(err, ZT_E_ARG,
                       "the first and last %zu bytes of the file are needed (%zu and %zu given)",
                       want, head_len, tail_len);
    return ZT_OK;
}

static zt_file_kind kind_of(const uint8_t *head, size_t head_len)
{
    if (head_len >= 8 && !memcmp(head, zt__v2_magic, 8))
        return ZT_KIND_ZT_2;
    return zt__detect_kind(head, head_len < 9 ? head_len : 9);
}

/* v2 (spec §2.3): the 40-byte footer says where the manifest is. A data shard
 * (§7.2) has none: its "manifest" is the empty range at the footer, so a
 * reader that fetches [offset, end) fetches the footer and nothing more. */
static zt_status locate_v2(const uint8_t *tail, size_t tail_len, uint64_t file_size,
                           uint64_t max_manifest, uint64_t *offset, uint64_t *length, zt_error *err)
{
    size_t want = file_size < ZT_V2_FOOTER ? (size_t)file_size : ZT_V2_FOOTER;
    if (tail_len < want)
        return ZT_FAIL(err, ZT_E_ARG,
                       "the last %zu bytes of a v2 file are needed (its footer); %zu given", want,
                       tail_len);
    zt__v2_footer ft;
    zt_status st = zt__v2_footer_parse(tail + tail_len - want, file_size, max_manifest, &ft, err);
    if (st)
        return st;
    *offset = ft.manifest_length ? ft.manifest_offset : file_size - ZT_V2_FOOTER;
    *length = ft.manifest_length;
    return ZT_OK;
}

zt_status zt_manifest_locate(const void *head, size_t head_len, const void *tail, size_t tail_len,
                             uint64_t file_size, const zt_open_options *opt, zt_file_kind *kind,
                             uint64_t *offset, uint64_t *length, zt_error *err)
{
    if (!offset || !length)
        return ZT_FAIL(err, ZT_E_ARG, "NULL argument");
    zt_status st = check_window(head, head_len, tail, tail_len, file_size, false, err);
    if (st)
        return st;
    zt_file_kind k = kind_of(head, head_len);
    if (kind)
        *kind = k;
    uint64_t user_max = opt ? opt->max_manifest_size : 0;
    switch (k) {
    case ZT_KIND_ZT_2:
        if ((st = check_window(head, head_len, tail, tail_len, file_size, true, err)))
            return st;
        return locate_v2(tail, tail_len, file_size, user_max ? user_max : ZT_DEFAULT_MAX_MANIFEST,
                         offset, length, err);
    case ZT_KIND_ALT:
        return ZT_FAIL(err, ZT_E_UNSUPPORTED,
                       "an ALT file's tensor table is not in one place: it cannot be opened "
                       "from its manifest alone");
    case ZT_KIND_SAFETENSORS: {
        uint64_t n;
        st = zt__st_header_size(head, file_size, user_max ? user_max : ZT__ST_DEFAULT_MAX_HEADER,
                                &n, err);
        if (st)
            return st;
        *offset = 8;
        *length = n;
        return ZT_OK;
    }
    default: {
        if ((st = check_window(head, head_len, tail, tail_len, file_size, true, err)))
            return st;
        zt__layout lay;
        const uint8_t *t = tail;
        size_t tl = file_size < 16 ? (size_t)file_size : 16;
        st = zt__footer_locate(head, t + tail_len - tl, file_size,
                               user_max ? user_max : ZT_DEFAULT_MAX_MANIFEST, &lay, err);
        if (st)
            return st;
        *offset = lay.manifest_offset;
        *length = lay.manifest_length;
        return ZT_OK;
    }
    }
}

zt_status zt_open_manifest(const void *head, size_t head_len, const void *tail, size_t tail_len,
                           uint64_t file_size, const zt_open_options *opt, zt_file **out,
                           zt_error *err)
{
    if (!out)
        return ZT_FAIL(err, ZT_E_ARG, "NULL argument");
    zt_status st = check_window(head, head_len, tail, tail_len, file_size, false, err);
    if (st)
        return st;
    zt_file *f = zt__calloc(1, sizeof(*f));
    if (!f)
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    zt__arena_init(&f->model.arena);
    f->fd = -1;
    f->size = file_size;
    f->no_data = true;
    f->win_head = head;
    f->win_head_len = head_len;
    f->win_tail = tail;
    f->win_tail_len = tail_len;
    st = zt__open_finish(f, opt, out, err);
    if (st)
        return st;
    /* The caller keeps its bytes: nothing may read them after this call. */
    f->win_head = f->win_tail = NULL;
    f->win_head_len = f->win_tail_len = 0;
    return ZT_OK;
}
