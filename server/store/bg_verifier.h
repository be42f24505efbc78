/*
 * The background digest verifier: one low-priority thread that, after every
 * catalog scan, hashes each sha256 component not checked yet and records the
 * result on its entry (see digests.h). Entries carried into a new snapshot
 * keep their results, so a file version is hashed once.
 */
#ifndef ZTD_BG_VERIFIER_H
#define ZTD_BG_VERIFIER_H

#include <stdbool.h>

#include "store/catalog.h"

typedef struct ztd_verifier ztd_verifier;

/* Start the thread; NULL (logged) if it cannot be started. c must outlive it. */
ztd_verifier *ztd_verifier_start(ztd_catalog *c);
/* Ask the thread to stop and wait up to wait_ms for it (a component being
 * hashed is finished first). True when it stopped and everything is freed;
 * false when it is still hashing: the caller must then leave c alone, and the
 * thread ends with the process. Accepts NULL (true). */
bool ztd_verifier_stop(ztd_verifier *v, unsigned wait_ms);

#endif
