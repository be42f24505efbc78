/*
 * zt_remote_pull: a whole remote file to disk, byte-identical, resumable.
 *
 * The file is reproduced from byte ranges: every component (digest checked in
 * order as its chunks land, by the same planner and hashing lanes as
 * zt_remote_read_many) and the spans between them (header, manifest,
 * padding, footer), all written into PATH.ztpart with pwrite at their
 * offsets and hashed from pread (the buffers the planner is handed are a
 * shared mapping of the file that the bytes never go through: pages written
 * or read through it counted in the process's RSS, the whole window), in
 * batches of file offsets. After each batch the data is made durable, then
 * PATH.ztpull records the batch's verified components and spans (on a thread
 * of its own, pull_sync.c, while the next batch is fetched); a later pull
 * with the same validator skips them. The spans carry no digest of their
 * own: where they overlap the bytes the file was opened from (header,
 * manifest, footer) they must hash to the sha256 taken of those at the start
 * (the bytes themselves are let go: d.zt's manifest is 11 MB), and other
 * padding that is not zeros is fetched twice; then fsync, rename and fsync
 * of the directory.
 *
 * A v2 root's parts in shards are not in its bytes: they are skipped here,
 * and each shard is pulled as a file of its own (pull_shards.c), checked by
 * the root's shard table (whole-file digest) and the digests of the root's
 * parts in it, and held unpublished until every file of the model is.
 */
#include "remote_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define STATE_MAX (64u << 20) /* a larger state file is not ours: start over */

typedef struct comp_ref {
    const zt_component *c;
    size_t index; /* in manifest order: the state file's numbering */
    uint64_t off, len;
} comp_ref;

typedef struct pull {
    zt_remote_file *rf;
    const zt_remote_pull_options *opt;
    zt_remote_pull_stats *stats;
    const char *path; /* for messages; files are named in dfd by their last segment */
    char *part, *state;
    int dfd, fd, sfd;
    uint8_t *map;
    uint64_t size;
    comp_ref *comps; /* by offset */
    size_t ncomp;
    ztr_span *spans; /* the bytes between components, by offset */
    size_t nspans;
    uint8_t *done;  /* ncomp + nspans flags: components first, then spans */
    bool spans_bad; /* check_spans failed: the spans are pending again */
    ztr_syncer *syncer;
    uint64_t *prefix;          /* by manifest index: bytes on disk of a component begun */
    uint64_t step;             /* bytes between two records of a component's prefix */
    const ztr_shard_of *shard; /* this file is a shard of a root, or NULL */
    /* The windows fetched at open (file offsets; len 0: none) and the sha256
     * of the spans' bytes in them, taken before rf let go of those bytes
     * (ends_digest): d.zt's manifest alone is 11 MB for the whole pull. */
    uint64_t head_len, tail_at, tail_len;
    uint8_t ends[32];
    char key[256]; /* what the bytes are (pull_skip.c), "" when not known */
} pull;

void zt_remote_pull_options_init(zt_remote_pull_options *o)
{
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
    o->digest_retries = ZT_REMOTE_PULL_DEFAULT_DIGEST_RETRIES;
    o->restarts = ZT_REMOTE_PULL_DEFAULT_RESTARTS;
    o->batch_bytes = ZT_REMOTE_PULL_DEFAULT_BATCH;
    o->window_bytes = ZT_REMOTE_PULL_DEFAULT_WINDOW;
    o->dir_fd = -1;
}

static zt_status sys_fail(pull *p, zt_error *err, const char *what, const char *path, int e)
{
    zt_status code = e == ENOSPC || e == EDQUOT ? ZT_E_NOSPACE : ZT_E_IO;
    return ztr__fail(err, code, p->rf ? p->rf->url : NULL, NULL, NULL, 0, 0, "%s %s: %s", what,
                     path, strerror(e));
}

/* A file of the pull that could not be opened or made: says why (a link
 * there is not followed). */
static zt_status file_fail(pull *p, zt_error *err, const char *what, const char *path, int e)
{
    zt_status code = e == ENOSPC || e == EDQUOT ? ZT_E_NOSPACE : ZT_E_IO;
    return ztr__fail(err, code, p->rf ? p->rf->url : NULL, NULL, NULL, 0, 0, "%s %s: %s", what,
                     path, ztr__why(p->dfd, ztr__leaf(path), false, e));
}

static int by_offset(const void *a, const void *b)
{
    const comp_ref *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* The components in offset order and the spans between them. */
static zt_status layout(pull *p, zt_error *err)
{
    const zt_file *f = zt_remote_file_zt(p->rf);
    size_t n = 0;
    for (size_t i = 0; i < zt_file_object_count(f); i++)
        for (size_t j = 0; j < zt_object_component_count(zt_file_object_at(f, i)); j++)
            n += zt_component_shard(zt_object_component_at(zt_file_object_at(f, i), j)) < 0;
    p->comps = calloc(n ? n : 1, sizeof(*p->comps));
    p->spans = calloc(n + 1, sizeof(*p->spans));
    p->done = calloc(2 * n + 1, 1);
    p->prefix = calloc(2 * n + 1, sizeof(*p->prefix)); /* the state file numbers spans too */
    if (!p->comps || !p->spans || !p->done || !p->prefix)
        return ztr__fail(err, ZT_E_NOMEM, p->rf->url, NULL, NULL, 0, 0, "out of memory");
    for (size_t i = 0, k = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        bool unchecked = false;
        for (size_t j = 0; j < zt_object_component_count(o); j++) {
            const zt_component *c = zt_object_component_at(o, j);
            unchecked |= zt_component_digest_kind(c) == ZT_DIGEST_NONE;
            if (zt_component_shard(c) >= 0) /* in a shard's bytes, pulled with it */
                continue;
            p->comps[k] = (comp_ref){c, k, zt_component_offset(c), zt_component_length(c)};
            k++;
        }
        p->stats->objects_unverified += unchecked;
    }
    p->ncomp = n;
    qsort(p->comps, n, sizeof(*p->comps), by_offset);
    uint64_t at = 0;
    for (size_t i = 0; i <= n; i++) {
        uint64_t next = i < n ? p->comps[i].off : p->size;
        if (next > at)
            p->spans[p->nspans++] = (ztr_span){at, next - at};
        if (i < n && p->comps[i].off + p->comps[i].len > at)
            at = p->comps[i].off + p->comps[i].len;
    }
    if (at > p->size)
        return ztr__fail(err, ZT_E_BOUNDS, p->rf->url, NULL, NULL, 0, 0,
                         "components end at byte %llu of a %llu-byte file", (unsigned long long)at,
                         (unsigned long long)p->size);
    return ZT_OK;
}

/* A state file of this version: its records are kept (resume). */
static bool load_state(pull *p)
{
    int e, fd = ztr__open_regular(p->dfd, ztr__leaf(p->state), O_RDONLY, &e);
    if (fd < 0)
        return false; /* a link there is refused when the state is made anew */
    struct stat sb;
    char *buf = NULL;
    bool ok = false;
    if (fstat(fd, &sb) == 0 && sb.st_size > 0 && sb.st_size <= STATE_MAX &&
        (buf = malloc((size_t)sb.st_size)) &&
        read(fd, buf, (size_t)sb.st_size) == (ssize_t)sb.st_size) {
        ztr_pull_state st;
        ok = ztr__pull_state_parse(buf, (size_t)sb.st_size, &st, p->done, p->prefix,
                                   p->ncomp + p->nspans) == 0 &&
             st.size == p->size && !strcmp(st.etag, p->rf->pin.etag) &&
             !strcmp(st.lm, p->rf->pin.lm) && (p->rf->pin.etag[0] || p->rf->pin.lm[0]);
    }
    free(buf);
    close(fd);
    struct stat pb;
    if (ok && (fstatat(p->dfd, ztr__leaf(p->part), &pb, AT_SYMLINK_NOFOLLOW) != 0 ||
               !S_ISREG(pb.st_mode) || (uint64_t)pb.st_size != p->size))
        ok = false;
    if (!ok)
        memset(p->done, 0, p->ncomp + p->nspans);
    for (size_t i = 0; i < p->ncomp; i++) { /* p->comps is by offset */
        uint64_t *pre = &p->prefix[p->comps[i].index];
        if (!ok || p->done[p->comps[i].index] || *pre >= p->comps[i].len)
            *pre = 0;
    }
    return ok;
}

/* PATH.ztpart (kept, or new and preallocated) and PATH.ztpull (appended to,
 * or new with its header). */
static zt_status open_files(pull *p, bool resume, zt_error *err)
{
    if (!resume) {
        ztr_pull_state st = {.size = p->size};
        memcpy(st.etag, p->rf->pin.etag, sizeof(st.etag));
        memcpy(st.lm, p->rf->pin.lm, sizeof(st.lm));
        char head[512];
        int n = ztr__pull_state_header(head, sizeof(head), &st, p->ncomp + p->nspans);
        int e;
        if ((p->sfd = ztr__create_new(p->dfd, ztr__leaf(p->state), O_WRONLY, &e)) < 0)
            return file_fail(p, err, "cannot create", p->state, e);
        if (n < 0 || write(p->sfd, head, (size_t)n) != n || fdatasync(p->sfd) != 0)
            return sys_fail(p, err, "cannot write", p->state, n < 0 ? EINVAL : errno);
        if ((p->fd = ztr__create_new(p->dfd, ztr__leaf(p->part), O_RDWR, &e)) < 0)
            return file_fail(p, err, "cannot create", p->part, e);
    } else {
        int e;
        if ((p->sfd = ztr__open_regular(p->dfd, ztr__leaf(p->state), O_WRONLY | O_APPEND, &e)) < 0)
            return file_fail(p, err, "cannot open", p->state, e);
        if ((p->fd = ztr__open_regular(p->dfd, ztr__leaf(p->part), O_RDWR, &e)) < 0)
            return file_fail(p, err, "cannot open", p->part, e);
    }
    if (!resume) {
        /* All the space now: a full disk is one clear error before any transfer. */
        int e = posix_fallocate(p->fd, 0, (off_t)p->size);
        if (e == EOPNOTSUPP || e == EINVAL)
            e = ftruncate(p->fd, (off_t)p->size) ? errno : 0;
        if (e) {
            /* Give back what was allocated; the error to report is e. */
            int ignored = ftruncate(p->fd, 0);
            (void)ignored;
            return ztr__fail(err, e == ENOSPC ? ZT_E_NOSPACE : ZT_E_IO, p->rf->url, NULL, NULL, 0,
                             0, "cannot allocate %llu bytes for %s: %s",
                             (unsigned long long)p->size, p->part, strerror(e));
        }
    }
    p->map = mmap(NULL, (size_t)p->size, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
    if (p->map == MAP_FAILED) {
        p->map = NULL;
        return sys_fail(p, err, "cannot map", p->part, errno);
    }
    if (!(p->syncer = ztr__syncer_new(p->fd, p->sfd, p->map)))
        return ztr__fail(err, ZT_E_NOMEM, p->rf->url, NULL, NULL, 0, 0, "out of memory");
    return ZT_OK;
}

/* The syncer's verdict on a batch: 0 or a failure in *err. */
static zt_status synced(pull *p, int r, zt_error *err)
{
    if (!r)
        return ZT_OK;
    return r > 0 ? sys_fail(p, err, "cannot write", p->part, r)
                 : sys_fail(p, err, "cannot write", p->state, -r);
}

/* The batch [lo, hi) to the syncer: made durable, then its records appended
 * to the state file, while the next batch is fetched. */
static zt_status record(pull *p, uint64_t lo, uint64_t hi, const size_t *comps, size_t nc,
                        const size_t *spans, size_t ns, zt_error *err)
{
    size_t cap = (nc + ns) * 24 + 1, len = 0;
    char *text = malloc(cap);
    if (!text)
        return ztr__fail(err, ZT_E_NOMEM, p->rf->url, NULL, NULL, 0, 0, "out of memory");
    for (size_t i = 0; i < nc; i++)
        len += (size_t)snprintf(text + len, cap - len, "c %zu\n", comps[i]);
    for (size_t i = 0; i < ns; i++)
        len += (size_t)snprintf(text + len, cap - len, "c %zu\n", p->ncomp + spans[i]);
    return synced(p, ztr__syncer_push(p->syncer, lo, hi, text, len), err);
}

typedef struct batch_ctx {
    pull *p;
    const size_t *map; /* reqs[k] is comps[map[k]] */
} batch_ctx;

/* A large component's landed prefix has grown: once on disk, the state file
 * records it, so a kill loses at most a step of it. When the syncer still
 * has the batch before in hand, this step is left to the next one (waiting
 * would idle the connections). */
static int on_prefix(void *ud, size_t k, uint64_t bytes, zt_error *err)
{
    batch_ctx *b = ud;
    pull *p = b->p;
    const comp_ref *c = &p->comps[b->map[k]];
    if (ztr__syncer_busy(p->syncer))
        return 0;
    char *text = malloc(48);
    if (!text)
        return ztr__fail(err, ZT_E_NOMEM, p->rf->url, NULL, NULL, 0, 0, "out of memory"), -1;
    int n = snprintf(text, 48, "p %zu %llu\n", c->index, (unsigned long long)bytes);
    uint64_t lo = c->off + p->prefix[c->index];
    p->prefix[c->index] = bytes;
    return synced(p, ztr__syncer_push(p->syncer, lo, c->off + bytes, text, (size_t)n), err) ? -1
                                                                                            : 0;
}

/* One batch: its pending components and spans, fetched again (up to
 * digest_retries times) while a digest fails; what passed is kept. A
 * component begun by an earlier pull continues from its recorded prefix
 * (hashed from the disk); fetched again after a mismatch, it starts over. */
static zt_status fetch_batch(pull *p, const size_t *ci, size_t nc, const size_t *si, size_t ns,
                             zt_error *err)
{
    zt_remote_request *reqs = calloc(nc ? nc : 1, sizeof(*reqs));
    ztr_span *spans = calloc(ns ? ns : 1, sizeof(*spans));
    size_t *map = calloc(nc ? nc : 1, sizeof(*map)); /* reqs[k] is comps[map[k]] */
    uint64_t *from = calloc(nc ? nc : 1, sizeof(*from));
    zt_status st = reqs && spans && map && from
                       ? ZT_OK
                       : ztr__fail(err, ZT_E_NOMEM, p->rf->url, NULL, NULL, 0, 0, "out of memory");
    for (size_t k = 0; !st && k < ns; k++)
        spans[k] = p->spans[si[k]];
    size_t left = nc;
    for (size_t k = 0; k < nc && !st; k++)
        map[k] = ci[k];
    batch_ctx bc = {p, map};
    ztr_pull_io io = {.window = p->opt->window_bytes ? p->opt->window_bytes
                                                     : ZT_REMOTE_PULL_DEFAULT_WINDOW,
                      .cancel = p->opt->cancel,
                      .from = from,
                      .on_prefix = on_prefix,
                      .ud = &bc,
                      .prefix_step = p->step,
                      .file_map = p->map,
                      .fd = p->fd};
    for (unsigned attempt = 0; !st; attempt++) {
        for (size_t k = 0; k < left; k++) {
            const comp_ref *c = &p->comps[map[k]];
            reqs[k] = (zt_remote_request){.component = c->c,
                                          .flags = ZT_REMOTE_STORED,
                                          .buf = p->map + c->off,
                                          .cap = (size_t)c->len};
            from[k] = attempt ? 0 : p->prefix[c->index];
            if (attempt)
                p->prefix[c->index] = 0;
        }
        st =
            ztr__read_spans(p->rf, reqs, left, spans, ns, p->map, 0, p->opt->connections, &io, err);
        for (size_t k = 0; k < left; k++) { /* from[k]: what was resumed (0: fetched whole) */
            p->stats->fetched += p->comps[map[k]].len - from[k];
            p->stats->resumed += from[k];
        }
        if (st != ZT_E_DIGEST_MISMATCH || attempt >= p->opt->digest_retries)
            break;
        p->stats->digest_retries++;
        size_t kept = 0; /* the ones still to fetch */
        for (size_t k = 0; k < left; k++)
            if (reqs[k].status != ZT_OK)
                map[kept++] = map[k];
        left = kept;
        st = ZT_OK;
        if (!left)
            break;
    }
    free(reqs);
    free(spans);
    free(map);
    free(from);
    return st;
}

/* Every pending component and span, in batches of file offsets. */
static zt_status fetch_all(pull *p, zt_error *err)
{
    size_t *ci = calloc(p->ncomp + 1, sizeof(*ci)), *si = calloc(p->nspans + 1, sizeof(*si));
    if (!ci || !si) {
        free(ci);
        free(si);
        return ztr__fail(err, ZT_E_NOMEM, p->rf->url, NULL, NULL, 0, 0, "out of memory");
    }
    zt_status st = ZT_OK;
    size_t a = 0, b = 0;     /* next component, next span */
    uint64_t left = p->size; /* bytes not on disk yet */
    /* At least 8 batches for a file of a few batches, so a kill loses little. */
    uint64_t batch = p->opt->batch_bytes;
    if (p->size / 8 < batch)
        batch = p->size / 8 > (1u << 20) ? p->size / 8 : (1u << 20);
    p->step = batch;
    for (size_t i = 0; i < p->ncomp; i++)
        if (p->done[p->comps[i].index]) {
            p->stats->resumed += p->comps[i].len;
            left -= p->comps[i].len;
        }
    for (size_t i = 0; i < p->nspans; i++)
        if (p->done[p->ncomp + i])
            left -= p->spans[i].len;
    uint64_t pre = 0; /* prefixes of components on disk, hashed again, not fetched */
    for (size_t i = 0; i < p->ncomp; i++)
        pre += p->done[p->comps[i].index] ? 0 : p->prefix[p->comps[i].index];
    if (p->opt->progress) /* the total, and what an earlier pull left on disk */
        p->opt->progress(p->opt->progress_ud, p->size - left + pre, p->size);
    while (!st && (a < p->ncomp || b < p->nspans)) {
        size_t nc = 0, ns = 0;
        uint64_t bytes = 0, lo = UINT64_MAX, hi = 0;
        while (bytes < batch && (a < p->ncomp || b < p->nspans)) {
            bool comp = b >= p->nspans || (a < p->ncomp && p->comps[a].off < p->spans[b].start);
            uint64_t off = comp ? p->comps[a].off : p->spans[b].start;
            uint64_t len = comp ? p->comps[a].len : p->spans[b].len;
            bool done = comp ? p->done[p->comps[a].index] : p->done[p->ncomp + b];
            if (!done) {
                if (comp)
                    ci[nc++] = a;
                else
                    si[ns++] = b;
                bytes += len;
                lo = off < lo ? off : lo;
                hi = off + len > hi ? off + len : hi;
            }
            if (comp)
                a++;
            else
                b++;
        }
        if (!nc && !ns)
            continue;
        if (p->opt->cancel && *p->opt->cancel) {
            st = ztr__fail(err, ZT_E_IO, p->rf->url, NULL, NULL, 0, 0, "interrupted");
            break;
        }
        st = fetch_batch(p, ci, nc, si, ns, err);
        for (size_t k = 0; !st && k < nc; k++)
            ci[k] = p->comps[ci[k]].index;
        if (!st && hi > lo)
            st = record(p, lo, hi, ci, nc, si, ns, err);
        left -= bytes;
        if (!st && p->opt->progress)
            p->opt->progress(p->opt->progress_ud, p->size - left, p->size);
    }
    free(ci);
    free(si);
    int r = ztr__syncer_wait(p->syncer); /* the last batch is durable */
    return st ? st : synced(p, r, err);
}

#define SECOND_GROUP (8u << 20) /* bytes of spans fetched again at once */

/* The checks below read the written bytes with pread, not through the
 * mapping: touching every page of padding spread over the file would make
 * the whole file resident in this process. Compares [off, off + n) of the
 * partial file with want, or with zeros when want is NULL. -1: read error. */
static int compare_written(const pull *p, uint64_t off, uint64_t n, const uint8_t *want)
{
    uint8_t buf[16384];
    while (n) {
        size_t k = n < sizeof(buf) ? (size_t)n : sizeof(buf);
        if (pread(p->fd, buf, k, (off_t)off) != (ssize_t)k)
            return -1;
        for (size_t i = 0; i < k; i++)
            if (buf[i] != (want ? want[i] : 0))
                return 1;
        if (want)
            want += k;
        off += k;
        n -= k;
    }
    return 0;
}

/* Spans outside the windows fetched at open (padding between components,
 * the rest of a long header) that hold anything but zeros (what writers pad
 * with, and what a flipped byte in zeros is not) are fetched a second time:
 * both fetches must agree. 0: they do; 1: they do not; -1: error in *err. */
static bool in_windows(const pull *p, const ztr_span *g)
{
    uint64_t end = g->start + g->len;
    return (p->head_len && end <= p->head_len) ||
           (p->tail_len && g->start >= p->tail_at && end <= p->tail_at + p->tail_len);
}

static int second_opinion(pull *p, zt_error *err)
{
    size_t last = p->nspans;
    for (size_t i = 0; i < last;) {
        const ztr_span *g = &p->spans[i];
        if (in_windows(p, g) || compare_written(p, g->start, g->len, NULL) == 0) {
            i++;
            continue;
        }
        uint64_t lo = g->start;
        size_t n = 1;
        while (i + n < last && g[n].start + g[n].len - lo <= SECOND_GROUP)
            n++;
        uint64_t hi = g[n - 1].start + g[n - 1].len;
        uint8_t *scratch = malloc((size_t)(hi - lo));
        if (!scratch)
            return ztr__fail(err, ZT_E_NOMEM, p->rf->url, NULL, NULL, 0, 0, "out of memory"), -1;
        ztr_pull_io io = {.cancel = p->opt->cancel};
        zt_status st =
            ztr__read_spans(p->rf, NULL, 0, g, n, scratch, lo, p->opt->connections, &io, err);
        bool same = !st;
        for (size_t j = 0; same && j < n; j++)
            same = compare_written(p, g[j].start, g[j].len, scratch + (g[j].start - lo)) == 0;
        free(scratch);
        if (st)
            return -1;
        if (!same)
            return 1;
        i += n;
    }
    return 0;
}

/* The spans' bytes where they overlap the windows fetched at open (the
 * header; the manifest and footer), in span order, the head's part of a
 * span before the tail's, into h: from rf's windows when `open` (they must
 * still be held), else from the partial file with pread. -1: read error. */
static int hash_ends(const pull *p, bool open, zt_hasher *h)
{
    const zt_remote_file *rf = p->rf;
    const uint8_t *win[2] = {rf->whole ? rf->whole : rf->head, rf->tail};
    uint64_t at[2] = {0, p->tail_at}, len[2] = {p->head_len, p->tail_len};
    uint8_t buf[16384];
    for (size_t i = 0; i < p->nspans; i++)
        for (int w = 0; w < 2; w++) {
            uint64_t s = p->spans[i].start, e = s + p->spans[i].len;
            uint64_t lo = s > at[w] ? s : at[w], hi = e < at[w] + len[w] ? e : at[w] + len[w];
            if (open && lo < hi)
                zt_hasher_update(h, win[w] + (lo - at[w]), (size_t)(hi - lo));
            for (; !open && lo < hi;) {
                size_t k = hi - lo < sizeof(buf) ? (size_t)(hi - lo) : sizeof(buf);
                ssize_t got = pread(p->fd, buf, k, (off_t)lo);
                if (got != (ssize_t)k) {
                    errno = got < 0 ? errno : EIO; /* short: the file was cut */
                    return -1;
                }
                zt_hasher_update(h, buf, k);
                lo += k;
            }
        }
    return 0;
}

/* p->ends from rf's windows, which rf then lets go of (the pull's rf is its
 * own: nothing else asks for them). */
static zt_status ends_digest(pull *p, zt_error *err)
{
    zt_remote_file *rf = p->rf;
    p->head_len = rf->whole || rf->head ? rf->head_len : 0;
    p->tail_at = rf->tail_at;
    p->tail_len = rf->tail ? rf->tail_len : 0;
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    if (!h)
        return ztr__fail(err, ZT_E_NOMEM, rf->url, NULL, NULL, 0, 0, "out of memory");
    hash_ends(p, true, h);
    zt_hasher_final(h, p->ends);
    zt_hasher_free(h);
    ztr__file_forget_ends(rf);
    return ZT_OK;
}

/* The spans carry no digest. Where they overlap the bytes fetched at open
 * (the header; the manifest and footer), they must equal those (the model
 * was built and validated from them): their sha256 is p->ends. The other
 * spans (padding between components) must agree with a second fetch unless
 * they are zeros. */
static zt_status check_spans(pull *p, zt_error *err)
{
    const zt_remote_file *rf = p->rf;
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    if (!h)
        return ztr__fail(err, ZT_E_NOMEM, rf->url, NULL, NULL, 0, 0, "out of memory");
    uint8_t got[32];
    int r = hash_ends(p, false, h), e = errno;
    zt_hasher_final(h, got);
    zt_hasher_free(h);
    if (r < 0)
        return sys_fail(p, err, "cannot read", p->part, e);
    bool same = !memcmp(got, p->ends, sizeof(got));
    /* A shard's whole-file digest covers its spans: no second fetch. */
    int second = same && !p->shard ? second_opinion(p, err) : !same;
    if (second < 0)
        return err->code;
    if (!second)
        return ZT_OK;
    /* Fetch the spans again: they are what is wrong. */
    memset(p->done + p->ncomp, 0, p->nspans);
    p->spans_bad = true;
    return ztr__fail(err, ZT_E_DIGEST_MISMATCH, rf->url, NULL, NULL, 0, 0, "%s",
                     same ? "two fetches of the bytes between components disagree"
                          : "the header, manifest or footer written differ from the bytes the "
                            "file was opened from");
}

static int hash_sink(void *ud, const void *data, size_t n)
{
    zt_hasher_update(ud, data, n);
    return 0;
}

/* The partial file's bytes [off, off + len) into h, through d when given (a
 * part whose digest is over its decoded bytes). */
static zt_status hash_written(pull *p, uint64_t off, uint64_t len, zt_hasher *h, zt_decoder *d,
                              zt_error *err)
{
    uint8_t *buf = malloc(1u << 20);
    zt_status st =
        buf ? ZT_OK : ztr__fail(err, ZT_E_NOMEM, p->rf->url, NULL, NULL, 0, 0, "out of memory");
    for (uint64_t at = 0; !st && at < len;) {
        size_t k = len - at < (1u << 20) ? (size_t)(len - at) : (1u << 20);
        if (pread(p->fd, buf, k, (off_t)(off + at)) != (ssize_t)k)
            st = sys_fail(p, err, "cannot read", p->part, errno ? errno : EIO);
        else if (d)
            st = zt_decoder_push(d, buf, k, hash_sink, h, err);
        else
            zt_hasher_update(h, buf, k);
        at += k;
    }
    if (!st && d)
        st = zt_decoder_push_end(d, hash_sink, h, err);
    free(buf);
    return st;
}

/* Does h hold the digest `want` (want_n bytes; 0: as many as h gives)?
 * Formats what it got. */
static bool digest_is(zt_hasher *h, zt_digest_kind kind, const uint8_t *want, size_t want_n,
                      char got[80])
{
    uint8_t bin[32];
    size_t n = zt_hasher_final(h, bin);
    zt_digest_format(kind, bin, got);
    return (!want_n || n == want_n) && !memcmp(bin, want, n);
}

/* The root's parts in this shard, each against its digest (v2 §3.4): the
 * shard's bytes matched the table, so a mismatch is the root's, not the
 * transfer's, and is not retried. */
static zt_status check_shard_parts(pull *p, zt_error *err)
{
    const zt_file *root = p->shard->root;
    zt_status st = ZT_OK;
    for (size_t i = 0; !st && i < zt_file_object_count(root); i++) {
        const zt_object *o = zt_file_object_at(root, i);
        for (size_t j = 0; !st && j < zt_object_component_count(o); j++) {
            const zt_component *c = zt_object_component_at(o, j);
            zt_digest_kind kind = zt_component_digest_kind(c);
            if (zt_component_shard(c) != (int)p->shard->index)
                continue;
            if (kind == ZT_DIGEST_NONE) {
                p->stats->unverified++;
                continue;
            }
            zt_hasher *h = zt_hasher_new(kind);
            zt_decoder *d = NULL;
            st = h ? ZT_OK
                   : ztr__fail(err, ZT_E_NOMEM, p->rf->url, NULL, NULL, 0, 0, "out of memory");
            if (!st && zt_component_digest_scope(c) == ZT_DIGEST_OF_DECODED &&
                zt_component_encoding(c) != ZT_ENC_RAW)
                st = zt_decoder_new(root, c, &d, err);
            if (!st)
                st = hash_written(p, zt_component_offset(c), zt_component_length(c), h, d, err);
            size_t want_n;
            const uint8_t *want = zt_component_digest_bytes(c, &want_n);
            char got[80];
            if (!st && !digest_is(h, kind, want, want_n, got))
                st = ztr__fail(err, ZT_E_DIGEST_MISMATCH, p->rf->url, zt_object_name(o),
                               zt_component_role(c), 1, zt_component_offset(c),
                               "the part's bytes in shard \"%s\" hash to %s, the root's manifest "
                               "says %s",
                               zt_file_shard_name(root, p->shard->index), got,
                               zt_component_digest(c));
            p->stats->verified += !st;
            zt_decoder_free(d);
            zt_hasher_free(h);
        }
    }
    return st;
}

/* v2 §7.3 step 3: the whole shard hashes to the root's table digest. A
 * mismatch is fetched again, every byte: which one is wrong is not known. */
static zt_status check_shard(pull *p, zt_error *err)
{
    const zt_file *root = p->shard->root;
    const char *name = zt_file_shard_name(root, p->shard->index);
    const char *want_text = zt_file_shard_digest(root, p->shard->index);
    zt_digest_kind kind;
    uint8_t want[32];
    if (zt_digest_parse(want_text, strlen(want_text), &kind, want))
        return ztr__fail(err, ZT_E_SHARD, p->rf->url, NULL, NULL, 0, 0,
                         "shard \"%s\": the root's digest %s cannot be read", name, want_text);
    zt_hasher *h = zt_hasher_new(kind);
    zt_status st = h ? hash_written(p, 0, p->size, h, NULL, err)
                     : ztr__fail(err, ZT_E_NOMEM, p->rf->url, NULL, NULL, 0, 0, "out of memory");
    char got[80];
    bool same = !st && digest_is(h, kind, want, 0, got);
    zt_hasher_free(h);
    if (st)
        return st;
    if (!same) {
        memset(p->done, 0, p->ncomp + p->nspans);
        p->spans_bad = true;
        unlinkat(p->dfd, ztr__leaf(p->state), 0); /* what it records is not: start over */
        return ztr__fail(err, ZT_E_DIGEST_MISMATCH, p->rf->url, NULL, NULL, 0, 0,
                         "shard \"%s\": the file received hashes to %s, the root's shard table "
                         "says %s",
                         name, got, want_text);
    }
    return check_shard_parts(p, err);
}

#define DONE_XATTR "user.ztensor.pull"

/* "VALIDATOR\nMTIME" of a file published from this version, mtime as
 * seconds.nanoseconds: a local write to the file changes it. */
static int done_mark(const pull *p, const struct stat *sb, char *out, size_t cap)
{
    const ztr_pin *pin = &p->rf->pin;
    return snprintf(out, cap, "%s\n%s\n%lld.%09ld", pin->etag, pin->lm,
                    (long long)sb->st_mtim.tv_sec, sb->st_mtim.tv_nsec);
}

/* PATH is this version already, complete (published by an earlier pull and
 * not written since)? 1 yes, 0 no, -1 PATH is a link or not a regular file
 * (in *err): the mark of a file elsewhere says nothing of PATH. */
static int already_done(pull *p, zt_error *err)
{
    struct stat sb;
    char want[400], got[400];
    int e, fd = ztr__open_regular(p->dfd, ztr__leaf(p->path), O_RDONLY, &e);
    if (fd < 0 && e != ENOENT)
        return file_fail(p, err, "cannot open", p->path, e), -1;
    bool done = fd >= 0 && fstat(fd, &sb) == 0 && (uint64_t)sb.st_size == p->size &&
                (p->rf->pin.etag[0] || p->rf->pin.lm[0]);
    int n = done ? done_mark(p, &sb, want, sizeof(want)) : 0;
    ssize_t g = done ? fgetxattr(fd, DONE_XATTR, got, sizeof(got)) : -1;
    if (fd >= 0)
        close(fd);
    return n > 0 && g == n && !memcmp(got, want, (size_t)n);
}

/* The partial file complete and durable, marked as this version; not yet
 * in place (place()). */
static zt_status seal(pull *p, zt_error *err)
{
    ztr__syncer_free(p->syncer);
    p->syncer = NULL;
    munmap(p->map, (size_t)p->size);
    p->map = NULL;
    if (fsync(p->fd) != 0)
        return sys_fail(p, err, "cannot write", p->part, errno);
    struct stat sb;
    char mark[400];
    int n = fstat(p->fd, &sb) == 0 ? done_mark(p, &sb, mark, sizeof(mark)) : -1;
    if (n > 0 && (size_t)n < sizeof(mark)) /* best effort: without it, a later pull fetches again */
        (void)fsetxattr(p->fd, DONE_XATTR, mark, (size_t)n, 0);
    ztr__content_mark(p->fd, p->key);
    return ZT_OK;
}

/* Within dfd: a link planted at PATH is replaced, never followed. */
static zt_status place(pull *p, zt_error *err)
{
    if (renameat(p->dfd, ztr__leaf(p->part), p->dfd, ztr__leaf(p->path)) != 0)
        return sys_fail(p, err, "cannot rename to", p->path, errno);
    zt_status st = fsync(p->dfd) != 0
                       ? sys_fail(p, err, "cannot sync the directory of", p->path, errno)
                       : ZT_OK;
    unlinkat(p->dfd, ztr__leaf(p->state), 0);
    return st;
}

static void pull_free(pull *p)
{
    ztr__syncer_free(p->syncer); /* first: it uses the map and both files */
    if (p->map)
        munmap(p->map, (size_t)p->size);
    if (p->fd >= 0)
        close(p->fd);
    if (p->sfd >= 0)
        close(p->sfd);
    free(p->part);
    free(p->state);
    free(p->comps);
    free(p->spans);
    free(p->done);
    free(p->prefix);
}

static char *suffixed(const char *path, const char *sfx)
{
    size_t n = strlen(path), m = strlen(sfx);
    char *s = malloc(n + m + 1);
    if (s) {
        memcpy(s, path, n);
        memcpy(s + n, sfx, m + 1);
    }
    return s;
}

zt_status ztr__pull_file(zt_remote_file *rf, int dfd, const char *path, const ztr_shard_of *shard,
                         bool hold, const zt_remote_pull_options *opt, zt_remote_pull_stats *stats,
                         bool *skipped, zt_error *err)
{
    *skipped = false;
    pull p = {.rf = rf, .opt = opt, .stats = stats, .path = path, .dfd = dfd, .fd = -1, .sfd = -1};
    p.shard = shard;
    zt_status st = ZT_OK;
    p.size = p.rf->pin.size;
    stats->size += p.size;
    if (!shard) {
        snprintf(stats->etag, sizeof(stats->etag), "%s",
                 p.rf->pin.etag[0] ? p.rf->pin.etag : p.rf->pin.lm);
        if (opt->expect_etag && strcmp(opt->expect_etag, p.rf->pin.etag))
            stats->changed = 1;
    }
    p.part = suffixed(path, ".ztpart");
    p.state = suffixed(path, ".ztpull");
    if (!p.part || !p.state)
        st = ztr__fail(err, ZT_E_NOMEM, rf->url, NULL, NULL, 0, 0, "out of memory");
    int done = st ? 0 : already_done(&p, err);
    if (done) {
        *skipped = done > 0;
        pull_free(&p);
        return done > 0 ? ZT_OK : err->code;
    }
    if (!st)
        st = layout(&p, err);
    if (!st)
        st = ends_digest(&p, err);
    /* Same bytes as a file published earlier, by the origin's digests: a
     * new identity at the origin (touch, another replica) fetches nothing. */
    if (!st &&
        ztr__content_key(zt_remote_file_zt(rf), shard, p.ends, p.size, p.key, sizeof(p.key)) > 0 &&
        ztr__content_done(dfd, ztr__leaf(path), p.key, p.size)) {
        *skipped = true; /* held or not: path is in place already */
        pull_free(&p);
        return ZT_OK;
    }
    if (!st)
        st = open_files(&p, load_state(&p), err);
    /* Spans found wrong by check_spans are fetched again, like a component. */
    for (unsigned attempt = 0; !st; attempt++) {
        st = fetch_all(&p, err);
        if (!st)
            st = check_spans(&p, err);
        if (!st && p.shard)
            st = check_shard(&p, err);
        if (st != ZT_E_DIGEST_MISMATCH || !p.spans_bad || attempt >= opt->digest_retries)
            break;
        stats->digest_retries++;
        st = ZT_OK;
    }
    if (!st) {
        for (size_t i = 0; i < p.ncomp; i++) {
            if (zt_component_digest_kind(p.comps[i].c) == ZT_DIGEST_NONE)
                stats->unverified++;
            else
                stats->verified++;
        }
        st = seal(&p, err);
    }
    if (!st && !hold)
        st = place(&p, err);
    pull_free(&p);
    return st;
}

zt_status ztr__pull_place(int dfd, const char *path, zt_error *err)
{
    pull p = {.path = path, .dfd = dfd, .fd = -1, .sfd = -1};
    p.part = suffixed(path, ".ztpart");
    p.state = suffixed(path, ".ztpull");
    zt_status st = p.part && p.state
                       ? place(&p, err)
                       : ztr__fail(err, ZT_E_NOMEM, NULL, NULL, NULL, 0, 0, "out of memory");
    pull_free(&p);
    return st;
}
