/*
 * A file version's safetensors view as the server keeps it: libztensor's
 * layout (zt_st_view, the one zt convert writes) built once per catalog
 * entry, on the first request for it, and kept with the entry until the
 * entry is freed; or the refusal, naming the object safetensors cannot
 * express; or, for a file that is safetensors already, the note that it is
 * its own view. Its validators are made here once: an ETag from the header
 * and every tensor's digest (the same on every replica and tier), and one
 * from the file's identity for views whose digests are missing or not yet
 * checked. Immutable once built but for `verified`, which only grows (the
 * handler's note of how far the digests were seen checked); read from any
 * thread.
 */
#ifndef ZTD_ST_VIEWS_H
#define ZTD_ST_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ztensor/ztensor.h>
#include <ztensor/ztensor_experimental.h>

#include "core/errors.h"

typedef struct ztd_st_view {
    zt_st_view *v; /* NULL: own view, or refused */
    bool own;      /* the file is safetensors: its view is its bytes (/raw) */
    ztd_err err;   /* refused: VIEW_UNSUPPORTED, with msg naming the object */
    char msg[800];
    bool digested;        /* every tensor's component has a sha256 or xxh3 digest */
    char digest_etag[48]; /* "\"st-<32 hex>\"" of the header and those digests */
    char file_etag[48];   /* "\"st-file-<32 hex>\"" of the header and the file's identity */
    size_t verified;      /* atomic: tensors [0, verified) were seen verified */
} ztd_st_view;

/* The view of f kept at *slot (an atomic pointer, NULL until the first call),
 * built by the first caller (two racing callers both build; one keeps its
 * own). f must outlive the view; identity is the file's raw ETag. NULL only
 * when out of memory (nothing is kept: the next call tries again). */
ztd_st_view *ztd_st_view_get(ztd_st_view **slot, const zt_file *f, const char *identity);
/* Frees a view (the entry's, when the entry is freed); accepts NULL. */
void ztd_st_view_free(ztd_st_view *v);

#endif
