/*
 * The background digest verifier (see bg_verifier.h). It runs at the lowest CPU
 * priority (nice 19) and in the idle I/O class, so that hashing a large tree
 * after start-up takes only what requests leave. zt_component_verify() does
 * the hashing (for large components on a second thread, which inherits both
 * priorities). The thread looks for a newer snapshot between components, so
 * a file replaced meanwhile is not hashed to the end for nothing; a pass over
 * a new snapshot skips every component already decided. A plain file
 * (catalog.h) is hashed whole, 1 MiB at a time with the same checks between
 * reads; its sha256 counts only if the file was not written meanwhile. A
 * local tensor file without a v2 identity is hashed whole the same way after
 * its components (the page cache has it then): the Hub front names files by
 * that sha256, and one hasher keeps the fact (ztd_entry_file_sha256).
 */
#include "store/bg_verifier.h"
#include "core/clock.h"
#include "core/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* From linux/ioprio.h, which not every libc ships. */
#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_CLASS_SHIFT 13

struct ztd_verifier {
    ztd_catalog *c;
    pthread_t thread;
    bool stop; /* atomic */
    /* What the passes since the last summary line did. */
    uint64_t components, bytes, mismatches, unreadable;
    uint64_t t0_ms;
};

static void lower_priority(void)
{
    pid_t tid = gettid();
    if (setpriority(PRIO_PROCESS, (id_t)tid, 19) != 0)
        ztd_log(ZTD_LOG_DEBUG, "verify: cannot lower the CPU priority");
    if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, tid, IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT))
        ztd_log(ZTD_LOG_DEBUG, "verify: cannot use the idle I/O class");
}

static void check_one(ztd_verifier *v, ztd_entry *e, ztd_digest_check *k)
{
    if (!v->components && !v->mismatches && !v->unreadable)
        v->t0_ms = ztd_now_ms();
    zt_error err;
    int checked = 0;
    zt_status st = zt_component_verify(e->file, k->object, k->component, &checked, &err);
    const char *obj = zt_object_name(k->object), *role = zt_component_role(k->component);
    unsigned long long off = zt_component_offset(k->component),
                       len = zt_component_length(k->component);
    if (st == ZT_OK && checked) {
        ztd_digest_settle(&e->digests, k, ZTD_DIGEST_VERIFIED);
        v->components++;
        v->bytes += len;
    } else if (st == ZT_E_DIGEST_MISMATCH) {
        ztd_digest_settle(&e->digests, k, ZTD_DIGEST_MISMATCH);
        v->mismatches++;
        /* The message names the object, the component and the byte offset. */
        ztd_log(ZTD_LOG_WARN,
                "verify: %s: %s; served without digest claims, and its blob URL answers 500 "
                "digest_mismatch",
                e->name, err.message);
    } else if (st == ZT_E_NOMEM) {
        ztd_log(ZTD_LOG_WARN,
                "verify: %s: object \"%s\", component \"%s\": out of memory; "
                "tried again after the next scan",
                e->name, obj, role);
    } else {
        ztd_digest_settle(&e->digests, k, ZTD_DIGEST_UNREADABLE);
        v->unreadable++;
        ztd_log(ZTD_LOG_WARN,
                "verify: %s: object \"%s\", component \"%s\", bytes %llu..%llu: cannot be "
                "checked (%s); served without digest claims",
                e->name, obj, role, off, off + len, err.message);
    }
}

/* Every pending component of e; false when stopped or s is no longer current. */
static bool check_entry(ztd_verifier *v, const ztd_snapshot *s, ztd_entry *e)
{
    for (size_t j = 0; j < e->digests.n; j++) {
        ztd_digest_check *k = &e->digests.v[j];
        if (ztd_digest_check_state(k) != ZTD_DIGEST_PENDING)
            continue;
        if (__atomic_load_n(&v->stop, __ATOMIC_ACQUIRE) ||
            ztd_catalog_generation(v->c) != s->generation)
            return false;
        check_one(v, e, k);
    }
    return true;
}

#define PLAIN_CHUNK (1u << 20)

/* Hash file e whole (pinned by the caller); false when stopped or s is
 * no longer current (e stays pending). A file written meanwhile stays
 * pending too: the scan its change triggers makes a new entry. */
static bool hash_plain(ztd_verifier *v, const ztd_snapshot *s, ztd_entry *e)
{
    int fd = ztd_entry_fd(e);
    zt_hasher *h = fd >= 0 ? zt_hasher_new(ZT_DIGEST_SHA256) : NULL;
    uint8_t *buf = h ? malloc(PLAIN_CHUNK) : NULL;
    bool go = true, failed = false;
    uint64_t off = 0;
    if (!buf) {
        zt_hasher_free(h);
        return true; /* no fd now, or no memory: the next pass tries again */
    }
    if (!v->components && !v->mismatches && !v->unreadable)
        v->t0_ms = ztd_now_ms();
    while (off < e->size) {
        if (__atomic_load_n(&v->stop, __ATOMIC_ACQUIRE) ||
            ztd_catalog_generation(v->c) != s->generation) {
            go = false;
            break;
        }
        size_t want = e->size - off < PLAIN_CHUNK ? (size_t)(e->size - off) : PLAIN_CHUNK;
        ssize_t n = pread(fd, buf, want, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            failed = true; /* a read error, or the file shrank */
            break;
        }
        zt_hasher_update(h, buf, (size_t)n);
        off += (uint64_t)n;
    }
    uint8_t sha[32];
    zt_hasher_final(h, sha);
    zt_hasher_free(h);
    free(buf);
    bool same = go && ztd_entry_unchanged(e);
    if (go && !same) {
        ztd_entry_changed(e); /* marks it stale when so */
        ztd_log(ZTD_LOG_INFO, "verify: %s changed while it was hashed; hashed once rescanned",
                e->name);
    } else if (failed) {
        ztd_entry_plain_hashed(e, NULL);
        v->unreadable++;
        ztd_log(ZTD_LOG_WARN, "verify: %s: cannot be read at byte %llu; served without a sha256",
                e->name, (unsigned long long)off);
    } else if (go) {
        ztd_entry_plain_hashed(e, sha);
        v->components++;
        v->bytes += e->size;
    }
    return go;
}

static bool any_pending(const ztd_entry *e)
{
    if (ztd_entry_wants_file_hash(e))
        return true;
    if (ztd_entry_is_plain(e))
        return false;
    for (size_t j = 0; j < e->digests.n; j++)
        if (ztd_digest_check_state(&e->digests.v[j]) == ZTD_DIGEST_PENDING)
            return true;
    return false;
}

/* Every pending component of s; false when stopped or s is no longer current.
 * Each file is pinned open while it is hashed (catalog.h); one that cannot be
 * opened now (no fd left) stays pending for the next pass. */
static bool check_snapshot(ztd_verifier *v, const ztd_snapshot *s)
{
    for (size_t i = 0; i < s->n; i++) {
        ztd_entry *e = s->entries[i];
        if (!any_pending(e))
            continue;
        ztd_entry_retain(e);
        bool go = ztd_entry_is_plain(e) || zt_file_fd(e->file) < 0 || check_entry(v, s, e);
        if (go && ztd_entry_wants_file_hash(e))
            go = hash_plain(v, s, e);
        ztd_entry_release(e);
        if (!go)
            return false;
    }
    return true;
}

static void summary(ztd_verifier *v)
{
    if (!v->components && !v->mismatches && !v->unreadable)
        return;
    double t = (double)(ztd_now_ms() - v->t0_ms) / 1e3;
    ztd_log(ZTD_LOG_INFO,
            "verify: %llu components verified (%.1f MiB in %.2f s), %llu mismatches, %llu "
            "unreadable",
            (unsigned long long)v->components, (double)v->bytes / 1048576.0, t,
            (unsigned long long)v->mismatches, (unsigned long long)v->unreadable);
    v->components = v->bytes = v->mismatches = v->unreadable = 0;
}

static void *run(void *arg)
{
    ztd_verifier *v = arg;
    lower_priority();
    uint64_t seen = 0;
    for (;;) {
        ztd_catalog_wait_change(v->c, seen, &v->stop);
        if (__atomic_load_n(&v->stop, __ATOMIC_ACQUIRE))
            break;
        ztd_snapshot *s = ztd_catalog_acquire(v->c);
        if (!s)
            continue;
        seen = s->generation;
        if (check_snapshot(v, s))
            summary(v);
        ztd_snapshot_release(s);
    }
    return NULL;
}

ztd_verifier *ztd_verifier_start(ztd_catalog *c)
{
    ztd_verifier *v = calloc(1, sizeof(*v));
    if (v)
        v->c = c;
    if (!v || pthread_create(&v->thread, NULL, run, v) != 0) {
        ztd_log(ZTD_LOG_ERROR, "verify: cannot start the digest verifier; no digest is claimed");
        free(v);
        return NULL;
    }
    pthread_setname_np(v->thread, "ztd-verify");
    return v;
}

bool ztd_verifier_stop(ztd_verifier *v, unsigned wait_ms)
{
    if (!v)
        return true;
    __atomic_store_n(&v->stop, true, __ATOMIC_RELEASE);
    ztd_catalog_wake(v->c);
    struct timespec t = ztd_deadline(CLOCK_REALTIME, wait_ms);
    if (pthread_timedjoin_np(v->thread, NULL, &t) != 0) {
        ztd_log(ZTD_LOG_WARN, "verify: still hashing a component after %u ms; exiting anyway",
                wait_ms);
        return false;
    }
    free(v);
    return true;
}
