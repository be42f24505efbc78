/*
 * Which sha256 digests of one opened file have been checked against its
 * stored bytes. A manifest's digest is only a claim: the server names bytes
 * by it (blob URLs, "sha256:" ETags, Repr-Digest) only once the claim has
 * been checked, so that a file whose manifest lies cannot make caches keep
 * the wrong bytes under a content address.
 *
 * One ztd_digest_checks per catalog entry (one file version), built when the
 * file is opened. States only move forward, from PENDING to one of the
 * others, with a compare-and-swap: readers on request threads need no lock.
 */
#ifndef ZTD_DIGESTS_H
#define ZTD_DIGESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <ztensor/ztensor.h>

typedef enum ztd_digest_state {
    ZTD_DIGEST_PENDING = 0, /* not checked (yet) */
    ZTD_DIGEST_VERIFIED,    /* the stored bytes hash to the manifest's digest */
    ZTD_DIGEST_MISMATCH,    /* they hash to something else */
    ZTD_DIGEST_UNREADABLE,  /* reading them failed: never claimed */
    ZTD_DIGEST_STATES
} ztd_digest_state;

/* The metrics label of a state: "pending", "verified", ... */
const char *ztd_digest_state_name(ztd_digest_state s);

typedef struct ztd_digest_check {
    const zt_object *object;
    const zt_component *component;
    int state; /* atomic ztd_digest_state */
} ztd_digest_check;

typedef struct ztd_digest_checks {
    ztd_digest_check *v; /* the sha256 components, sorted by address */
    size_t n;
    size_t count[ZTD_DIGEST_STATES]; /* atomic: components in each state */
} ztd_digest_checks;

/* One PENDING check per sha256 component of f (which must outlive d).
 * 0, or -1 when out of memory (d is then empty). */
int ztd_digest_checks_init(ztd_digest_checks *d, const zt_file *f);
void ztd_digest_checks_free(ztd_digest_checks *d);

/* The check of component c, or NULL when c has no sha256 digest. */
ztd_digest_check *ztd_digest_find(const ztd_digest_checks *d, const zt_component *c);
/* The state of c's check: PENDING when c has none (nothing to claim). */
ztd_digest_state ztd_digest_state_of(const ztd_digest_checks *d, const zt_component *c);
static inline ztd_digest_state ztd_digest_check_state(const ztd_digest_check *k)
{
    return (ztd_digest_state)__atomic_load_n(&k->state, __ATOMIC_ACQUIRE);
}

/* How many checks of any file, in this process, have become MISMATCH: a
 * cached view that shows mismatches (the listing) is rebuilt when it grew. */
unsigned long ztd_digest_mismatches_seen(void);

/* PENDING -> to. False when k had already left PENDING (someone else decided). */
bool ztd_digest_settle(ztd_digest_checks *d, ztd_digest_check *k, ztd_digest_state to);
/* Every PENDING check becomes VERIFIED: for a file whose digests the server
 * itself checked (an upload it verified before publishing). */
void ztd_digest_settle_all_verified(ztd_digest_checks *d);

#endif
