/*
 * zt_remote_pull_object: a file that is not a zTensor file (config.json,
 * tokenizer.json, a README) of an S3 store or a ztensord to disk, checked
 * against what is said of it. A HEAD (head.c) gives the size, the ETag
 * (pinned: every request then carries If-Match) and what the bytes hash to:
 * the caller's sha256 (a ztensord listing's), else Repr-Digest, else an S3
 * object's whole-object x-amz-checksum-sha256, else a ztensord ETag
 * "sha256:<hex>"; in an S3 session an ETag of 32 hex digits is a
 * single-part upload's MD5. The bytes come by the
 * transport's range requests (retried and resumed from the last byte, like
 * every read), in order, hashed as they land and written with pwrite to
 * PATH.ztpart; then checked, fsynced, marked (user.ztensor.pull, so that a
 * later pull of the same version skips it), renamed to PATH, and the
 * directory fsynced. A mismatch removes PATH.ztpart: nothing is published.
 */
#include "remote_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define DONE_XATTR "user.ztensor.pull"

typedef ztr_head head;

/* What the store says the bytes hash to. */
typedef struct claim {
    int kind; /* 0 none, 1 sha256, 2 md5 */
    uint8_t want[32];
    char text[80]; /* for messages */
} claim;

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static void sha256_claim(claim *c, const uint8_t *sha, const char *what)
{
    c->kind = 1;
    memcpy(c->want, sha, 32);
    char hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", sha[i]);
    snprintf(c->text, sizeof(c->text), "%s sha256 %.16s...", what, hex);
}

/* A ztensord's ETag of hashed bytes: "sha256:<64 hex>". */
static bool etag_sha256(const char *e, uint8_t out[32])
{
    if (strlen(e) != 73 || strncmp(e, "\"sha256:", 8) || e[72] != '"')
        return false;
    for (int i = 0; i < 32; i++) {
        int hi = hexval(e[8 + 2 * i]), lo = hexval(e[9 + 2 * i]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (uint8_t)(hi * 16 + lo);
    }
    return true;
}

static void make_claim(const zt_remote *r, const head *h, const uint8_t *expect, claim *c)
{
    memset(c, 0, sizeof(*c));
    size_t n = strlen(h->sha256);
    uint8_t out[48];
    if (expect || h->has_repr_sha256) {
        sha256_claim(c, expect ? expect : h->repr_sha256,
                     expect ? "the listing's" : "Repr-Digest's");
        return;
    }
    /* A whole object's sha256 is 44 base64 characters; a multipart upload's
     * composite checksum ends in "-N" and is not the bytes' sha256. */
    if (n == 44 && !strchr(h->sha256, '-') &&
        EVP_DecodeBlock(out, (const unsigned char *)h->sha256, 44) == 33) {
        c->kind = 1;
        memcpy(c->want, out, 32);
        snprintf(c->text, sizeof(c->text), "x-amz-checksum-sha256 %.44s", h->sha256);
        return;
    }
    const char *e = h->etag;
    if (etag_sha256(e, out)) {
        sha256_claim(c, out, "the ETag's");
        return;
    }
    if (r->s3_region && strlen(e) == 34 && e[0] == '"' && e[33] == '"') {
        for (int i = 0; i < 16; i++) {
            int hi = hexval(e[1 + 2 * i]), lo = hexval(e[2 + 2 * i]);
            if (hi < 0 || lo < 0)
                return;
            c->want[i] = (uint8_t)(hi * 16 + lo);
        }
        c->kind = 2;
        snprintf(c->text, sizeof(c->text), "the ETag %.34s (MD5)", e);
    }
}

typedef struct sink {
    int fd;
    EVP_MD_CTX *md;
    const volatile sig_atomic_t *cancel;
    const char *part; /* for messages */
    const char *url;
} sink;

static int on_bytes(void *ud, uint64_t at, const uint8_t *p, size_t n, zt_error *err)
{
    sink *s = ud;
    if (s->cancel && *s->cancel)
        return ztr__fail(err, ZT_E_IO, s->url, NULL, NULL, 0, 0, "interrupted"), -1;
    for (size_t done = 0; done < n;) {
        ssize_t w = pwrite(s->fd, p + done, n - done, (off_t)(at + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            ztr__fail(err, e == ENOSPC || e == EDQUOT ? ZT_E_NOSPACE : ZT_E_IO, s->url, NULL, NULL,
                      1, at + done, "cannot write %s: %s", s->part, strerror(e));
            return -1;
        }
        done += (size_t)w;
    }
    if (s->md && EVP_DigestUpdate(s->md, p, n) != 1)
        return ztr__fail(err, ZT_E_NOMEM, s->url, NULL, NULL, 0, 0, "hashing failed"), -1;
    return 0;
}

/* "ETAG\nLAST-MODIFIED\nMTIME" of a file published from this version. */
static int mark_of(const head *h, const struct stat *sb, char *out, size_t cap)
{
    return snprintf(out, cap, "%s\n%s\n%lld.%09ld", h->etag, h->lm, (long long)sb->st_mtim.tv_sec,
                    sb->st_mtim.tv_nsec);
}

static bool already_done(int dfd, const char *leaf, const head *h)
{
    int e, fd = ztr__open_regular(dfd, leaf, O_RDONLY, &e);
    struct stat sb;
    char want[400], got[400];
    if (fd < 0)
        return false;
    bool done = fstat(fd, &sb) == 0 && (int64_t)sb.st_size == h->size && h->etag[0];
    int n = done ? mark_of(h, &sb, want, sizeof(want)) : 0;
    ssize_t g = done ? fgetxattr(fd, DONE_XATTR, got, sizeof(got)) : -1;
    close(fd);
    return n > 0 && g == n && !memcmp(got, want, (size_t)n);
}

/* PATH holds the bytes already, by their sha256 (a file system without user
 * xattrs, or a copy made by other means): the claim is a sha256 and PATH's
 * size and bytes match it. */
static bool same_bytes(int dfd, const char *leaf, const head *h, const claim *c)
{
    if (c->kind != 1)
        return false;
    int e, fd = ztr__open_regular(dfd, leaf, O_RDONLY, &e);
    struct stat sb;
    if (fd < 0)
        return false;
    EVP_MD_CTX *md =
        fstat(fd, &sb) == 0 && (int64_t)sb.st_size == h->size ? EVP_MD_CTX_new() : NULL;
    bool ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1;
    uint8_t buf[65536], got[EVP_MAX_MD_SIZE];
    unsigned glen = 0;
    for (ssize_t n; ok && (n = read(fd, buf, sizeof(buf))) != 0;)
        ok = n > 0 ? EVP_DigestUpdate(md, buf, (size_t)n) == 1 : errno == EINTR;
    ok = ok && EVP_DigestFinal_ex(md, got, &glen) == 1 && glen == 32 && !memcmp(got, c->want, 32);
    EVP_MD_CTX_free(md);
    close(fd);
    return ok;
}

typedef struct job {
    zt_remote *r;
    const char *url, *path, *leaf;
    const zt_remote_pull_options *opt;
    zt_remote_pull_stats *stats;
    int dfd;
    char *part;
    head h;
    claim c;
} job;

static zt_status fail_io(job *j, zt_error *err, const char *what, const char *name, int e)
{
    return ztr__fail(err, e == ENOSPC || e == EDQUOT ? ZT_E_NOSPACE : ZT_E_IO, j->url, NULL, NULL,
                     0, 0, "%s %s: %s", what, name, ztr__why(j->dfd, ztr__leaf(name), false, e));
}

/* One fetch of the whole object into a new PATH.ztpart (fd in *fd), hashed. */
static zt_status fetch(job *j, int *fd, zt_error *err)
{
    int e;
    *fd = ztr__create_new(j->dfd, ztr__leaf(j->part), O_RDWR, &e);
    if (*fd < 0)
        return fail_io(j, err, "cannot create", j->part, e);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    const EVP_MD *alg = j->c.kind == 1 ? EVP_sha256() : EVP_md5();
    if (!md || EVP_DigestInit_ex(md, alg, NULL) != 1) {
        EVP_MD_CTX_free(md);
        return ztr__fail(err, ZT_E_NOMEM, j->url, NULL, NULL, 0, 0, "out of memory");
    }
    sink s = {*fd, md, j->opt->cancel, j->part, j->url};
    ztr_pin pin = {.strong = ztr__etag_kind(j->h.etag, strlen(j->h.etag)) == 1,
                   .size = (uint64_t)j->h.size};
    snprintf(pin.etag, sizeof(pin.etag), "%s", j->h.etag);
    snprintf(pin.lm, sizeof(pin.lm), "%s", j->h.lm);
    ztr_xfer x = {.start = 0, .len = (uint64_t)j->h.size, .on_body = on_bytes, .ud = &s};
    ztr_batch b = {.r = j->r,
                   .url = j->url,
                   .pin = &pin,
                   .x = &x,
                   .n = 1,
                   .conns = 1,
                   .deadline = ztr__deadline(j->r),
                   .err = err};
    zt_status st = j->h.size > 0 ? ztr__run(&b) : ZT_OK;
    j->stats->fetched += x.got;
    uint8_t got[EVP_MAX_MD_SIZE];
    unsigned glen = 0;
    if (!st && EVP_DigestFinal_ex(md, got, &glen) != 1)
        st = ztr__fail(err, ZT_E_NOMEM, j->url, NULL, NULL, 0, 0, "hashing failed");
    EVP_MD_CTX_free(md);
    if (!st && j->c.kind &&
        (glen != (j->c.kind == 1 ? 32u : 16u) || memcmp(got, j->c.want, glen))) {
        char hex[65];
        for (unsigned i = 0; i < glen && i < 32; i++)
            snprintf(hex + 2 * i, 3, "%02x", got[i]);
        st = ztr__fail(err, ZT_E_DIGEST_MISMATCH, j->url, NULL, NULL, 0, 0,
                       "the %llu bytes received hash to %s (%s), the store says %s",
                       (unsigned long long)j->h.size, hex, j->c.kind == 1 ? "sha256" : "MD5",
                       j->c.text);
    }
    return st;
}

/* PATH.ztpart complete and checked: durable, marked, renamed, directory synced. */
static zt_status publish(job *j, int fd, zt_error *err)
{
    struct stat sb;
    char mark[400];
    if (fsync(fd) != 0)
        return fail_io(j, err, "cannot write", j->part, errno);
    int n = fstat(fd, &sb) == 0 ? mark_of(&j->h, &sb, mark, sizeof(mark)) : -1;
    if (n > 0 && (size_t)n < sizeof(mark) && j->h.etag[0]) /* best effort, as pull.c */
        (void)fsetxattr(fd, DONE_XATTR, mark, (size_t)n, 0);
    if (renameat(j->dfd, ztr__leaf(j->part), j->dfd, j->leaf) != 0)
        return fail_io(j, err, "cannot rename to", j->path, errno);
    if (fsync(j->dfd) != 0)
        return fail_io(j, err, "cannot sync the directory of", j->path, errno);
    return ZT_OK;
}

static zt_status run_job(job *j, zt_error *err)
{
    zt_status st = ztr__head(j->r, j->url, ztr__deadline(j->r), &j->h, err);
    if (st)
        return st;
    j->stats->size = (uint64_t)j->h.size;
    if (j->opt->progress) /* the total, known from the first answer */
        j->opt->progress(j->opt->progress_ud, 0, j->stats->size);
    snprintf(j->stats->etag, sizeof(j->stats->etag), "%s", j->h.etag[0] ? j->h.etag : j->h.lm);
    if (j->opt->expect_etag && strcmp(j->opt->expect_etag, j->h.etag))
        j->stats->changed = 1;
    /* the listing's sha256 is of the version listed: not of another one */
    make_claim(j->r, &j->h, j->stats->changed ? NULL : j->opt->expect_sha256, &j->c);
    if (already_done(j->dfd, j->leaf, &j->h) || same_bytes(j->dfd, j->leaf, &j->h, &j->c)) {
        j->stats->skipped = 1;
        return ZT_OK;
    }
    for (unsigned attempt = 0;; attempt++) {
        int fd = -1;
        st = fetch(j, &fd, err);
        if (!st)
            st = publish(j, fd, err);
        if (fd >= 0)
            close(fd);
        if (st)
            unlinkat(j->dfd, ztr__leaf(j->part), 0); /* nothing half-made stays */
        if (st != ZT_E_DIGEST_MISMATCH || attempt >= j->opt->digest_retries)
            break;
        j->stats->digest_retries++;
    }
    if (!st) {
        j->stats->verified = j->c.kind != 0;
        j->stats->unverified = j->c.kind == 0;
        if (j->opt->progress)
            j->opt->progress(j->opt->progress_ud, j->stats->size, j->stats->size);
    }
    return st;
}

zt_status zt_remote_pull_object(zt_remote *r, const char *url, const char *path,
                                const zt_remote_pull_options *opt, zt_remote_pull_stats *stats,
                                zt_error *err)
{
    zt_remote_pull_options defaults;
    zt_remote_pull_stats local;
    zt_error e2;
    if (!err)
        err = &e2;
    if (!opt) {
        zt_remote_pull_options_init(&defaults);
        opt = &defaults;
    }
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof(*stats));
    if (!r || !url || !path)
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0, "NULL argument");
    if (opt->size < sizeof(*opt))
        return ztr__fail(err, ZT_E_ARG, url, NULL, NULL, 0, 0,
                         "zt_remote_pull_options not set by zt_remote_pull_options_init");
    job j = {.r = r, .url = url, .path = path, .leaf = ztr__leaf(path), .opt = opt, .stats = stats};
    j.dfd = ztr__pull_dir_open(opt->dir_fd, path, url, err);
    if (j.dfd < 0)
        return err->code;
    size_t n = strlen(path);
    zt_status st = ZT_OK;
    if ((j.part = malloc(n + 8)))
        snprintf(j.part, n + 8, "%s.ztpart", path);
    else
        st = ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
    /* Replaced at the store during the pull (412 on If-Match): that version
     * is fetched whole again, as zt_remote_pull does. */
    for (unsigned round = 0; !st; round++) {
        zt_remote_pull_stats keep = *stats;
        st = run_job(&j, err);
        if (st != ZT_E_CHANGED || round >= opt->restarts)
            break;
        *stats = keep;
        stats->changed = 1;
        stats->restarts++;
        st = ZT_OK;
    }
    free(j.part);
    close(j.dfd);
    return st;
}
