/*
 * Precompressed bytes: a document that many requests ask for (a catalog
 * entry's manifest JSON) compressed once, in zstd and in gzip, for clients
 * that accept either. A 1,000-object manifest of 140-230 KB compresses about
 * tenfold, and on loopback the bytes the client receives are what bounds how
 * many manifests per second it gets (docs/PERFORMANCE.md). Compression runs
 * off libmicrohttpd's threads, on the work queue, started by the first
 * request that accepts the coding; that request and those that arrive
 * meanwhile get the identity bytes. The set belongs to its owner (the entry),
 * so a replaced file starts over.
 */
#ifndef ZTD_PRECOMPRESSED_H
#define ZTD_PRECOMPRESSED_H

#include <stddef.h>

#include "core/workq.h"

typedef enum ztd_coding { ZTD_CODING_ZSTD, ZTD_CODING_GZIP } ztd_coding;
#define ZTD_CODINGS 2

typedef struct ztd_coded {
    size_t len; /* 0: not coded (compression failed or gained nothing) */
    char bytes[];
} ztd_coded;

/* One document's coded copies; zeroed at first. */
typedef struct ztd_coded_set {
    ztd_coded *coded[ZTD_CODINGS]; /* atomic */
} ztd_coded_set;

/* Who holds the set and the source bytes: kept (retain) while a queued job
 * compresses them, released after. */
typedef struct ztd_coded_owner {
    void *p;
    void (*retain)(void *p);
    void (*release)(void *p);
} ztd_coded_owner;

/* The Content-Encoding token of k: "zstd" or "gzip". */
const char *ztd_coding_name(ztd_coding k);

/* src[0..n) compressed in coding k, as one zstd frame or one gzip member;
 * NULL when out of memory. Free with free(). */
ztd_coded *ztd_code(const char *src, size_t n, ztd_coding k);

/* src[0..n) in coding k if made and smaller, else NULL. The first caller that
 * finds it missing queues its making on q (here at once when q is NULL). The
 * result lives as long as the set. */
const ztd_coded *ztd_coded_get(ztd_coded_set *set, ztd_coding k, const char *src, size_t n,
                               ztd_workq *q, const ztd_coded_owner *owner);

/* Frees the copies (the owner's last reference; no job is running then). */
void ztd_coded_set_free(ztd_coded_set *set);

#endif
