/*
 * Multi-file models (v2 §7): the files a root manifest's shard table names.
 * A shard name is a label, resolved here by the positional convention of
 * Appendix B, "<stem>-<name>.zt" beside a root "<stem>.zt" opened by path
 * (the only location this library knows; a caller that resolves names
 * otherwise opens the shard itself). At open, each shard passes §7.3 steps
 * 1-2 (magic, footer, version; exact size) or is recorded as unavailable:
 * the root stays valid, its references having been checked from the root
 * alone, and reading a part in that shard fails with ZT_E_SHARD. Step 3,
 * the whole-file digest, is zt_file_shard_verify().
 *
 * Also the v2 per-part check: digests cover the decoded bytes (§3.4).
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static zt_status shard_fail(zt__shard *s, zt_status code, const char *fmt, const char *a)
{
    s->status = code;
    snprintf(s->message, sizeof(s->message), fmt, s->name, a);
    return code;
}

/* "<dir>/<stem>-<name>.zt" for root "<dir>/<stem>.zt" (or any other name). */
static char *shard_path(const char *root, const char *name)
{
    const char *base = strrchr(root, '/');
    size_t dir = base ? (size_t)(base - root) + 1 : 0, stem = strlen(root) - dir;
    if (stem > 3 && !strcmp(root + strlen(root) - 3, ".zt"))
        stem -= 3;
    size_t n = dir + stem + 1 + strlen(name) + 4;
    char *p = zt__malloc(n);
    if (p)
        snprintf(p, n, "%.*s-%s.zt", (int)(dir + stem), root, name);
    return p;
}

/* §7.3 steps 1-2 on an open fd. */
static zt_status check_shard(zt__shard *s)
{
    struct stat sb;
    if (fstat(s->fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return shard_fail(s, ZT_E_SHARD, "v2 §7.3: shard \"%s\" (%s) is not a regular file",
                          s->path);
    if ((uint64_t)sb.st_size != s->size) {
        char got[96];
        snprintf(got, sizeof(got), "%s is %llu bytes, the table says %llu", s->path,
                 (unsigned long long)sb.st_size, (unsigned long long)s->size);
        return shard_fail(s, ZT_E_SHARD, "v2 §7.3: shard \"%s\": %s", got);
    }
    uint8_t head[8], tail[ZT_V2_FOOTER];
    zt__v2_footer ft;
    if (pread(s->fd, head, 8, 0) != 8 ||
        pread(s->fd, tail, ZT_V2_FOOTER, (off_t)(s->size - ZT_V2_FOOTER)) != ZT_V2_FOOTER)
        return shard_fail(s, ZT_E_SHARD, "v2 §7.3: shard \"%s\": cannot read %s", s->path);
    zt_error e;
    if (memcmp(head, zt__v2_magic, 8) ||
        zt__v2_footer_parse(tail, s->size, ZT_V2_MAX_MANIFEST, &ft, &e))
        return shard_fail(s, ZT_E_SHARD, "v2 §7.3: shard \"%s\" (%s) is not a v2 container",
                          s->path);
    void *p = mmap(NULL, (size_t)s->size, PROT_READ, MAP_SHARED, s->fd, 0);
    if (p == MAP_FAILED)
        return shard_fail(s, ZT_E_IO, "shard \"%s\": mmap: %s", strerror(errno));
    s->data = p;
    s->status = ZT_OK;
    return ZT_OK;
}

zt_status zt__v2_open_shards(zt_file *f)
{
    zt__v2_info *vi = f->model.v2;
    for (size_t i = 0; i < vi->nshards; i++) {
        zt__shard *s = &vi->shards[i];
        s->fd = -1;
        if (!f->path) {
            shard_fail(s, ZT_E_SHARD,
                       "v2 §7.1: shard \"%s\" cannot be located: the root was not "
                       "opened by path%s",
                       "");
            continue;
        }
        if (!(s->path = shard_path(f->path, s->name))) {
            shard_fail(s, ZT_E_NOMEM, "shard \"%s\": out of memory%s", "");
            continue;
        }
        s->fd = open(s->path, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0)
            shard_fail(s, ZT_E_SHARD, "v2 §7.1: shard \"%s\" not found at %s", s->path);
        else
            check_shard(s);
    }
    return ZT_OK;
}

/* ---- the shard table */

static const zt__shard *shard_at(const zt_file *f, size_t i)
{
    return f->model.v2 && i < f->model.v2->nshards ? &f->model.v2->shards[i] : NULL;
}

size_t zt_file_shard_count(const zt_file *f)
{
    return f->model.v2 ? f->model.v2->nshards : 0;
}

const char *zt_file_shard_name(const zt_file *f, size_t i)
{
    const zt__shard *s = shard_at(f, i);
    return s ? s->name : NULL;
}

uint64_t zt_file_shard_size(const zt_file *f, size_t i)
{
    const zt__shard *s = shard_at(f, i);
    return s ? s->size : 0;
}

const char *zt_file_shard_digest(const zt_file *f, size_t i)
{
    const zt__shard *s = shard_at(f, i);
    return s ? s->digest : NULL;
}

const char *zt_file_shard_path(const zt_file *f, size_t i)
{
    const zt__shard *s = shard_at(f, i);
    return s ? s->path : NULL;
}

zt_status zt_file_shard_status(const zt_file *f, size_t i, zt_error *err)
{
    const zt__shard *s = shard_at(f, i);
    if (!s)
        return ZT_FAIL(err, ZT_E_ARG, "no shard %zu", i);
    return s->status ? zt__fail(err, s->status, NULL, NULL, 0, 0, "%s", s->message) : ZT_OK;
}

zt_status zt_file_shard_verify(const zt_file *f, size_t i, zt_error *err)
{
    const zt__shard *s = shard_at(f, i);
    zt_status st = zt_file_shard_status(f, i, err);
    if (st)
        return st;
    zt_hasher *h = zt_hasher_new(s->kind);
    uint8_t *buf = zt__malloc(1u << 20);
    if (!h || !buf) {
        zt_hasher_free(h);
        zt__free(buf);
        return ZT_FAIL(err, ZT_E_NOMEM, "out of memory");
    }
    for (uint64_t done = 0; done < s->size && !st;) {
        size_t n = s->size - done > (1u << 20) ? (1u << 20) : (size_t)(s->size - done);
        ssize_t r = pread(s->fd, buf, n, (off_t)done);
        if (r <= 0)
            st = zt__fail(err, r == 0 ? ZT_E_TRUNCATED : ZT_E_IO, NULL, NULL, 1, done,
                          "shard \"%s\": read: %s", s->name,
                          r == 0 ? "file shrank" : strerror(errno));
        else
            zt_hasher_update(h, buf, (size_t)r), done += (uint64_t)r;
    }
    uint8_t out[32];
    size_t n = st ? 0 : zt_hasher_final(h, out);
    zt_hasher_free(h);
    zt__free(buf);
    if (!st && memcmp(out, s->bin, n)) {
        char got[80];
        zt_digest_format(s->kind, out, got);
        st = zt__fail(err, ZT_E_DIGEST_MISMATCH, NULL, NULL, 0, 0,
                      "v2 §7.3: shard \"%s\" (%s) hashes to %s, the table says %s", s->name,
                      s->path, got, s->digest);
    }
    return st;
}

/* ---- a part's digest, over its decoded bytes */

zt_status zt__v2_component_verify(const zt_file *f, const struct zt_object *o,
                                  const struct zt_component *c, int *checked, zt_error *err)
{
    if (c->encoding == ZT_ENC_OTHER)
        return ZT_V2_FAIL(err, ZT_E_UNSUPPORTED, o ? o->name : NULL, c->role, 1, c->offset, "§5.3",
                          "encoding \"%.60s\" is not one this reader decodes: the part "
                          "cannot be checked",
                          c->encoding_name);
    zt_hasher *h = c->digest_kind ? zt_hasher_new(c->digest_kind) : NULL;
    uint8_t *buf = zt__malloc(1u << 20);
    zt_decoder *d = NULL;
    zt_status st = (c->digest_kind && !h) || !buf ? ZT_FAIL(err, ZT_E_NOMEM, "out of memory")
                                                  : zt_decoder_new(f, c, &d, err);
    for (size_t n = 1; !st && n;) {
        st = zt_decoder_read(d, buf, 1u << 20, &n, err);
        if (!st && h)
            zt_hasher_update(h, buf, n);
    }
    zt_decoder_free(d);
    zt__free(buf);
    uint8_t out[32];
    size_t n = !st && h ? zt_hasher_final(h, out) : 0;
    zt_hasher_free(h);
    if (st || !h)
        return st;
    if (checked)
        *checked = 1;
    if (memcmp(out, c->digest_bin, n)) {
        char got[80];
        zt_digest_format(c->digest_kind, out, got);
        return ZT_V2_FAIL(err, ZT_E_DIGEST_MISMATCH, o ? o->name : NULL, c->role, 1, c->offset,
                          "§3.4", "decoded bytes hash to %s, the manifest says %s", got, c->digest);
    }
    return ZT_OK;
}
