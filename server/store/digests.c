/*
 * Per-file digest check states (see digests.h). The checks are sorted by the
 * component's address so that a request finds its component's state with a
 * binary search, without an index the library does not expose.
 */
#include "store/digests.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

static const char *const k_names[ZTD_DIGEST_STATES] = {"pending", "verified", "mismatch",
                                                       "unreadable"};

const char *ztd_digest_state_name(ztd_digest_state s)
{
    return (unsigned)s < ZTD_DIGEST_STATES ? k_names[s] : "unknown";
}

/* A digest that names bytes, and so could become an ETag or a blob address
 * once checked: sha256, and the xxh3 of a zTensor v2 part. (crc32c detects
 * damage; it does not name content.) */
static bool claimable(const zt_component *c)
{
    zt_digest_kind k = zt_component_digest_kind(c);
    return k == ZT_DIGEST_SHA256 || k == ZT_DIGEST_XXH3;
}

static int cmp_check(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const ztd_digest_check *)a)->component;
    uintptr_t y = (uintptr_t)((const ztd_digest_check *)b)->component;
    return x < y ? -1 : x > y;
}

int ztd_digest_checks_init(ztd_digest_checks *d, const zt_file *f)
{
    *d = (ztd_digest_checks){0};
    size_t n = 0;
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        for (size_t j = 0; j < zt_object_component_count(o); j++)
            n += claimable(zt_object_component_at(o, j));
    }
    if (!n)
        return 0;
    if (!(d->v = calloc(n, sizeof(*d->v))))
        return -1;
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        for (size_t j = 0; j < zt_object_component_count(o); j++) {
            const zt_component *c = zt_object_component_at(o, j);
            if (claimable(c))
                d->v[d->n++] = (ztd_digest_check){o, c, ZTD_DIGEST_PENDING};
        }
    }
    qsort(d->v, d->n, sizeof(*d->v), cmp_check);
    d->count[ZTD_DIGEST_PENDING] = d->n;
    return 0;
}

void ztd_digest_checks_free(ztd_digest_checks *d)
{
    free(d->v);
    *d = (ztd_digest_checks){0};
}

ztd_digest_check *ztd_digest_find(const ztd_digest_checks *d, const zt_component *c)
{
    ztd_digest_check key = {.component = c};
    return d->n ? bsearch(&key, d->v, d->n, sizeof(*d->v), cmp_check) : NULL;
}

ztd_digest_state ztd_digest_state_of(const ztd_digest_checks *d, const zt_component *c)
{
    const ztd_digest_check *k = ztd_digest_find(d, c);
    return k ? ztd_digest_check_state(k) : ZTD_DIGEST_PENDING;
}

static unsigned long g_mismatches; /* atomic */

unsigned long ztd_digest_mismatches_seen(void)
{
    return __atomic_load_n(&g_mismatches, __ATOMIC_ACQUIRE);
}

bool ztd_digest_settle(ztd_digest_checks *d, ztd_digest_check *k, ztd_digest_state to)
{
    int from = ZTD_DIGEST_PENDING;
    if (to == ZTD_DIGEST_PENDING || (unsigned)to >= ZTD_DIGEST_STATES ||
        !__atomic_compare_exchange_n(&k->state, &from, (int)to, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return false;
    __atomic_sub_fetch(&d->count[ZTD_DIGEST_PENDING], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&d->count[to], 1, __ATOMIC_RELAXED);
    if (to == ZTD_DIGEST_MISMATCH)
        __atomic_add_fetch(&g_mismatches, 1, __ATOMIC_RELEASE);
    return true;
}

void ztd_digest_settle_all_verified(ztd_digest_checks *d)
{
    for (size_t i = 0; i < d->n; i++)
        ztd_digest_settle(d, &d->v[i], ZTD_DIGEST_VERIFIED);
}
