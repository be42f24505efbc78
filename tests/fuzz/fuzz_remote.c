/*
 * fuzz_remote.c: libFuzzer target for everything libztensor-remote parses
 * from the network (lib/remote/http_parse.c, and the core's
 * zt_manifest_locate/zt_open_manifest that open a file from the bytes at its
 * two ends). The first input byte picks the parser; the rest is its input.
 *
 *   0 Content-Range   1 Retry-After   2 ETag   3 status line
 *   4 header line     5 error body    6 URL    7+ a file seen through windows
 *
 * For 7+, the next two bytes choose the head and tail window sizes (a v2
 * file's tail at least 64 bytes, as the remote reader's) and the rest is a
 * whole file (zTensor 1.x or v2, safetensors), opened as a remote reader
 * does (locate, widen the window to the manifest, open) and also with
 * zt_open_memory.
 * Invariants (a broken one traps): Content-Range first <= last < total; a
 * status code of three digits; outputs NUL-terminated within their buffers
 * and printable; the windowed open agrees with zt_open_memory on the status,
 * the error offset and the manifest JSON (ALT files, which cannot be opened
 * from a manifest, excepted).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "remote_internal.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            __builtin_trap();                                                                      \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void text_parsers(unsigned sel, const char *s, size_t n)
{
    switch (sel) {
    case 0: {
        ztr_content_range cr;
        if (ztr__parse_content_range(s, n, &cr) == 0) {
            CHECK(cr.unsatisfied || cr.first <= cr.last);
            CHECK(!cr.total_known || cr.unsatisfied || cr.last < cr.total);
            CHECK(cr.total_known || !cr.unsatisfied);
        }
        break;
    }
    case 1: {
        double sec = -1;
        if (ztr__parse_retry_after(s, n, 1700000000, &sec) == 0)
            CHECK(sec >= 0);
        break;
    }
    case 2: {
        int k = ztr__etag_kind(s, n);
        CHECK(k >= 0 && k <= 2);
        CHECK(k == 0 || (n >= 2 && s[n - 1] == '"'));
        break;
    }
    case 3: {
        int code = 0;
        if (ztr__parse_status_line(s, n, &code) == 0)
            CHECK(code >= 100 && code <= 999);
        break;
    }
    case 4: {
        const char *v;
        size_t vl;
        if (ztr__header_is(s, n, "content-range", &v, &vl))
            CHECK(v >= s && v + vl <= s + n);
        break;
    }
    case 5: {
        char out[64];
        ztr__error_summary(s, n, out, sizeof(out));
        size_t len = strnlen(out, sizeof(out));
        CHECK(len < sizeof(out));
        for (size_t i = 0; i < len; i++)
            CHECK(out[i] >= 0x20 && out[i] < 0x7f);
        break;
    }
    case 6: {
        char *z = malloc(n + 1), out[256];
        CHECK(z != NULL);
        memcpy(z, s, n);
        z[n] = 0;
        bool st;
        const char *why = NULL;
        if (ztr__data_url(z, (unsigned)n & 1u, out, sizeof(out), &st, &why) == 0)
            CHECK(strnlen(out, sizeof(out)) < sizeof(out) && !strncasecmp(out, "http", 4));
        else
            CHECK(why != NULL);
        free(z);
        break;
    }
    }
}

/* The remote reader's open: ends of hn and tn bytes, widened to the manifest. */
static zt_status windowed(const uint8_t *b, size_t n, size_t hn, size_t tn, zt_file **f,
                          zt_error *err)
{
    /* The remote reader's tail window is at least 64 bytes (session.c): a v2
     * footer (40 bytes) always fits; a v2 file is not asked to do without. */
    if (n >= 8 && !memcmp(b, "\x89ZT2\r\n\x1a\n", 8) && tn < 64)
        tn = 64;
    hn = hn < n ? hn : n;
    tn = tn < n ? tn : n;
    zt_file_kind kind;
    uint64_t off, len;
    zt_status st = zt_manifest_locate(b, hn, b + n - tn, tn, n, NULL, &kind, &off, &len, err);
    if (st)
        return st;
    if (kind == ZT_KIND_SAFETENSORS) {
        CHECK(off == 8 && len <= n - 8);
        if (off + len > hn)
            hn = (size_t)(off + len);
    } else {
        CHECK(off + len <= n);
        if (n - off > tn)
            tn = n - (size_t)off;
    }
    return zt_open_manifest(b, hn, b + n - tn, tn, n, NULL, f, err);
}

static void file_windows(const uint8_t *data, size_t size)
{
    if (size < 2)
        return;
    size_t hn = (size_t)16 << (data[0] % 8), tn = (size_t)16 << (data[1] % 12);
    const uint8_t *b = data + 2;
    size_t n = size - 2;
    if (n >= 4 && (!memcmp(b, "altc", 4) || !memcmp(b, "ctla", 4)))
        return;
    zt_file *fm = NULL, *fw = NULL;
    zt_error em, ew;
    zt_status sm = zt_open_memory(b, n, NULL, &fm, &em);
    zt_status sw = windowed(b, n, hn, tn, &fw, &ew);
    CHECK(sm == sw);
    if (sm == ZT_OK) {
        char *jm = zt_file_manifest_json(fm, ZT_JSON_COMPACT, NULL);
        char *jw = zt_file_manifest_json(fw, ZT_JSON_COMPACT, NULL);
        CHECK((jm == NULL) == (jw == NULL));
        CHECK(!jm || !strcmp(jm, jw));
        zt_free(jm);
        zt_free(jw);
        CHECK(zt_file_bytes(fw) == NULL);
        for (size_t i = 0; i < zt_file_object_count(fw); i++) {
            const zt_object *o = zt_file_object_at(fw, i);
            for (size_t k = 0; k < zt_object_component_count(o); k++) {
                const zt_component *c = zt_object_component_at(o, k);
                /* a v2 part in a shard has its offset in that shard */
                CHECK(zt_component_shard(c) >= 0 ||
                      zt_component_offset(c) + zt_component_length(c) <= n);
                CHECK(zt_component_stored(fw, c) == NULL);
            }
        }
    } else {
        CHECK(em.has_offset == ew.has_offset && (!em.has_offset || em.offset == ew.offset));
    }
    zt_close(fm);
    zt_close(fw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned sel = data[0];
    if (sel < 7)
        text_parsers(sel, (const char *)data + 1, size - 1);
    else
        file_windows(data + 1, size - 1);
    return 0;
}
