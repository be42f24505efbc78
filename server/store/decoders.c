/*
 * Decoded zstd responses, what outlives one response (see decoders.h): the
 * decoder count against max_decode_streams, memory given back after a burst,
 * and per-entry marks of components checked or found bad.
 *
 * Memory: a decoder holds its frame's window (2 MiB at the writer's default
 * level) plus about 560 KiB of zstd and read buffers (and libmicrohttpd 256 KiB for
 * the response), allocated per stream.
 * After 500 streams glibc kept over half of their peak resident once every
 * client had gone (freed chunks stay in the per-thread arenas);
 * malloc_trim(0) when the last decoder of a burst ends gives them back. A
 * pool of reused zstd contexts was measured no faster than a fresh context
 * per stream (glibc hands the same freed buffers back) and would keep memory
 * that the trim is there to return, so there is none.
 */
#include "store/decoders.h"
#include "core/clock.h"
#include "core/log.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Bursts of fewer decoders leave their memory to malloc for the next ones. */
#define TRIM_AFTER 8

static unsigned g_active; /* atomic: decoders running */
static unsigned g_burst;  /* atomic: the most at once since the last trim */

bool ztd_decode_acquire(unsigned max)
{
    unsigned n = __atomic_load_n(&g_active, __ATOMIC_RELAXED);
    do {
        if (n >= max)
            return false;
    } while (!__atomic_compare_exchange_n(&g_active, &n, n + 1, true, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED));
    unsigned b = __atomic_load_n(&g_burst, __ATOMIC_RELAXED);
    while (n + 1 > b && !__atomic_compare_exchange_n(&g_burst, &b, n + 1, true, __ATOMIC_RELAXED,
                                                     __ATOMIC_RELAXED))
        ;
    return true;
}

void ztd_decode_release(void)
{
    if (__atomic_sub_fetch(&g_active, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    unsigned burst = __atomic_exchange_n(&g_burst, 0, __ATOMIC_RELAXED);
    if (burst < TRIM_AFTER)
        return;
    uint64_t t0 = ztd_now_us();
    malloc_trim(0);
    ztd_log(ZTD_LOG_DEBUG, "decoders: a burst of %u ended; malloc_trim took %.1f ms", burst,
            (double)(ztd_now_us() - t0) / 1e3);
}

unsigned ztd_decode_active(void)
{
    return __atomic_load_n(&g_active, __ATOMIC_RELAXED);
}

/* ---- marks: open addressing on the component's address, filled once with
 * every zstd component of the file, so lookups take no lock. */

typedef struct mark {
    const zt_component *c;
    int state;      /* atomic ztd_decode_state */
    zt_status code; /* written once, before state becomes BAD */
    char *why;      /* atomic: set once */
} mark;

struct ztd_decode_marks {
    size_t mask;
    mark slots[];
};

static size_t slot_of(const struct ztd_decode_marks *m, const zt_component *c)
{
    uint64_t h = (uint64_t)(uintptr_t)c * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & m->mask;
}

static struct ztd_decode_marks *marks_new(const zt_file *f)
{
    size_t n = 0, cap = 8;
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        for (size_t k = 0; k < zt_object_component_count(o); k++)
            n += zt_component_encoding(zt_object_component_at(o, k)) == ZT_ENC_ZSTD;
    }
    while (cap < 2 * n)
        cap *= 2;
    struct ztd_decode_marks *m = calloc(1, sizeof(*m) + cap * sizeof(mark));
    if (!m)
        return NULL;
    m->mask = cap - 1;
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        for (size_t k = 0; k < zt_object_component_count(o); k++) {
            const zt_component *c = zt_object_component_at(o, k);
            if (zt_component_encoding(c) != ZT_ENC_ZSTD)
                continue;
            size_t s = slot_of(m, c);
            while (m->slots[s].c)
                s = (s + 1) & m->mask;
            m->slots[s].c = c;
        }
    }
    return m;
}

void ztd_decode_marks_free(struct ztd_decode_marks *m)
{
    if (!m)
        return;
    for (size_t i = 0; i <= m->mask; i++)
        free(m->slots[i].why);
    free(m);
}

/* The file's marks, made by the first caller; NULL when out of memory. */
static struct ztd_decode_marks *marks_of(ztd_decode_marks **slot, const zt_file *f)
{
    struct ztd_decode_marks *m = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (m || !f)
        return m;
    struct ztd_decode_marks *mine = marks_new(f);
    if (!mine)
        return NULL;
    if (__atomic_compare_exchange_n(slot, &m, mine, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return mine;
    ztd_decode_marks_free(mine); /* another thread made them first: m holds theirs */
    return m;
}

static mark *find(ztd_decode_marks **slot, const zt_file *f, const zt_component *c)
{
    struct ztd_decode_marks *m = marks_of(slot, f);
    if (!m)
        return NULL;
    for (size_t s = slot_of(m, c);; s = (s + 1) & m->mask) { /* ends: half the slots are empty */
        if (m->slots[s].c == c)
            return &m->slots[s];
        if (!m->slots[s].c)
            return NULL;
    }
}

ztd_decode_state ztd_decode_get(ztd_decode_marks **slot, const zt_file *f, const zt_component *c)
{
    mark *k = find(slot, f, c);
    return k ? (ztd_decode_state)__atomic_load_n(&k->state, __ATOMIC_ACQUIRE)
             : ZTD_DECODE_UNCHECKED;
}

const char *ztd_decode_why(ztd_decode_marks **slot, const zt_file *f, const zt_component *c,
                           zt_status *code)
{
    mark *k = find(slot, f, c);
    if (!k || __atomic_load_n(&k->state, __ATOMIC_ACQUIRE) != ZTD_DECODE_BAD)
        return NULL;
    *code = k->code;
    return k->why;
}

void ztd_decode_mark_ok(ztd_decode_marks **slot, const zt_file *f, const zt_component *c)
{
    mark *k = find(slot, f, c);
    int unchecked = ZTD_DECODE_UNCHECKED;
    if (k)
        __atomic_compare_exchange_n(&k->state, &unchecked, ZTD_DECODE_FRAMES_OK, false,
                                    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

bool ztd_decode_is_data_error(zt_status code)
{
    return code == ZT_E_ZSTD || code == ZT_E_SIZE || code == ZT_E_LIMIT;
}

void ztd_decode_mark_bad(ztd_decode_marks **slot, const zt_file *f, const zt_component *c,
                         const zt_error *err)
{
    mark *k = ztd_decode_is_data_error(err->code) ? find(slot, f, c) : NULL;
    char *why = k ? strdup(err->message) : NULL, *none = NULL;
    if (!why)
        return;
    if (!__atomic_compare_exchange_n(&k->why, &none, why, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED)) {
        free(why); /* an earlier failure is kept */
        return;
    }
    k->code = err->code;
    __atomic_store_n(&k->state, ZTD_DECODE_BAD, __ATOMIC_RELEASE);
}
