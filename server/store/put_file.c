/*
 * A whole file arriving as one request body (put_file.h): the staging file,
 * a 1 MiB write buffer, the body's sha256 on another core when a thread can
 * be had (each buffer handed over once written), and the first component
 * hashed speculatively as the body arrives, for verification.
 */
#include "store/put_file.h"
#include "store/body_hash.h"
#include "core/wbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ztensor/ztensor_experimental.h>

#define WBUF (1u << 20)

struct ztd_put_file {
    ztd_staging *st;
    int fd;
    char name[ZTD_STAGING_NAME_MAX]; /* in the staging directory; "" once published or removed */
    uint64_t received;
    zt_hasher *sha;       /* the body's sha256, when no thread could be had */
    zt_hash_thread *shat; /* ... or beside the receiving: owns buf's memory */
    ztd_body_hash *bh;    /* the first component, from the page cache */
    uint8_t *buf;
    size_t blen;
    uint64_t written;
    zt_writeback wb;
};

ztd_put_file *ztd_put_file_new(ztd_staging *st, const char *kind, bool want_sha256)
{
    ztd_put_file *p = calloc(1, sizeof(*p));
    if (!p || !(p->buf = malloc(WBUF))) {
        free(p);
        errno = ENOMEM;
        return NULL;
    }
    p->st = st;
    if ((p->fd = ztd_staging_create(st, kind, p->name)) < 0) {
        int e = errno;
        p->name[0] = 0;
        ztd_put_file_free(p);
        errno = e;
        return NULL;
    }
    zt_writeback_init(&p->wb, p->fd);
    p->bh = ztd_body_hash_new(p->fd); /* NULL: verification hashes it all */
    uint8_t *first;
    if (want_sha256 && (p->shat = zt_hash_thread_new(ZT_DIGEST_SHA256, WBUF, &first))) {
        free(p->buf);
        p->buf = first;
    } else if (want_sha256 && !(p->sha = zt_hasher_new(ZT_DIGEST_SHA256))) {
        ztd_put_file_free(p);
        errno = ENOMEM;
        return NULL;
    }
    return p;
}

static int flush_buf(ztd_put_file *p)
{
    if (ztd_write_all(p->fd, p->buf, p->blen) != 0)
        return -1;
    p->written += p->blen;
    if (p->shat && p->blen)
        p->buf = zt_hash_thread_submit(p->shat, p->buf, p->blen);
    p->blen = 0;
    if (p->bh)
        ztd_body_hash_written(p->bh, p->written);
    zt_writeback_note(&p->wb, p->written);
    return 0;
}

int ztd_put_file_write(ztd_put_file *p, const void *data, size_t n)
{
    const uint8_t *d = data;
    p->received += n;
    if (p->sha)
        zt_hasher_update(p->sha, d, n);
    while (n)
        if (ztd_wbuf_fill(p->buf, &p->blen, WBUF, &d, &n) && flush_buf(p) != 0)
            return -1;
    return 0;
}

/* The tail of an append after copy_file_range gave up: through the buffer. */
static int append_read(ztd_put_file *p, int fd, off_t off, uint64_t left)
{
    while (left) {
        if (p->blen == WBUF && flush_buf(p) != 0)
            return -1;
        size_t want = WBUF - p->blen < left ? WBUF - p->blen : (size_t)left;
        ssize_t k = pread(fd, p->buf + p->blen, want, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            errno = k < 0 ? errno : EIO;
            return -1;
        }
        p->blen += (size_t)k;
        p->received += (uint64_t)k;
        off += k;
        left -= (uint64_t)k;
    }
    return 0;
}

int ztd_put_file_append_fd(ztd_put_file *p, int fd, uint64_t off, uint64_t len)
{
    loff_t in = (loff_t)off;
    if (flush_buf(p) != 0)
        return -1;
    while (len) {
        size_t want = len > (1u << 30) ? (1u << 30) : (size_t)len;
        ssize_t k = copy_file_range(fd, &in, p->fd, NULL, want, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k == 0 ? (errno = EIO, -1) : append_read(p, fd, (off_t)in, len);
        len -= (uint64_t)k;
        p->received += (uint64_t)k;
        p->written += (uint64_t)k;
        if (p->bh)
            ztd_body_hash_written(p->bh, p->written);
        zt_writeback_note(&p->wb, p->written);
    }
    return 0;
}

uint64_t ztd_put_file_received(const ztd_put_file *p)
{
    return p->received;
}

int ztd_put_file_end(ztd_put_file *p, uint8_t sha256[32])
{
    if (flush_buf(p) != 0)
        return -1;
    if (p->bh)
        ztd_body_hash_stop(p->bh); /* verification goes on from where it got to */
    if (p->shat)
        zt_hash_thread_final(p->shat, sha256);
    else if (p->sha)
        zt_hasher_final(p->sha, sha256);
    return 0;
}

ztd_err ztd_put_file_publish(ztd_put_file *p, ztd_publisher *pub, const char *rel,
                             const ztd_preconds *pc, size_t *nobj, ztd_published *out, char *msg,
                             size_t cap)
{
    ztd_staged f = {p->fd, p->name, p->received, p->bh ? ztd_body_hash_known : NULL, p->bh};
    ztd_err err = ztd_publish_check(pub, &f, rel, true, true, nobj, msg, cap);
    if (!err)
        err = ztd_publish_commit(pub, &f, rel, pc, true, out, msg, cap);
    p->name[0] = 0; /* published or removed */
    return err;
}

uint64_t ztd_put_file_hashed(const ztd_put_file *p)
{
    return p->bh ? ztd_body_hash_done(p->bh) : 0;
}

unsigned ztd_put_file_answered(const ztd_put_file *p)
{
    return p->bh ? ztd_body_hash_answered(p->bh) : 0;
}

void ztd_put_file_free(ztd_put_file *p)
{
    if (!p)
        return;
    ztd_body_hash_free(p->bh); /* before the fd it reads is closed */
    if (p->fd >= 0)
        close(p->fd);
    if (p->name[0])
        ztd_staging_remove(p->st, p->name);
    zt_hasher_free(p->sha);
    if (p->shat)
        zt_hash_thread_free(p->shat, p->buf);
    else
        free(p->buf);
    free(p);
}
