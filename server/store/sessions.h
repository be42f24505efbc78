/*
 * Upload sessions, the store's side: each session is a staging file with a
 * libztensor writer on it and the components written so far, in a table by
 * id. One request uses a session at a time (acquire/release, under the
 * table's lock), so the writer needs no lock of its own; expiry and abort
 * skip or refuse busy sessions. Each open session holds an upload slot
 * (uploads.h), given back when it ends. The HTTP side is handlers/session.c.
 */
#ifndef ZTD_SESSIONS_H
#define ZTD_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ztensor/ztensor.h>

#include "store/staging.h"
#include "store/uploads.h"

typedef struct ztd_session_key {
    char *key;
    size_t id; /* the writer's component id */
    zt_written_component info;
} ztd_session_key;

typedef struct ztd_session {
    char id[33]; /* 32 random hex digits */
    char *file;  /* the name it will be published as */
    ztd_staging *st;
    char name[ZTD_STAGING_NAME_MAX]; /* its staging file; "" once handed to publication */
    int fd;
    zt_writer *w;
    ztd_session_key *keys;
    size_t nkeys, capkeys;
    /* The table's: */
    bool busy;
    uint64_t last_used;
    struct ztd_session *next;
} ztd_session;

typedef struct ztd_sessions ztd_sessions;

/* An empty table whose sessions take their slots from u. NULL: out of memory. */
ztd_sessions *ztd_sessions_new(ztd_uploads *u);
/* Abort every session (shutdown). Accepts NULL. */
void ztd_sessions_free(ztd_sessions *t);
size_t ztd_sessions_count(ztd_sessions *t);

/* A new session for `file` with its staging file and writer (file attributes
 * as JSON text, or NULL), added to the table with a slot it took. NULL with
 * *errnum (ENOSPC, ...) or, when no slot is free, EBUSY. */
ztd_session *ztd_sessions_open(ztd_sessions *t, ztd_staging *st, const char *file,
                               const char *attributes, int *errnum, zt_error *err);
/* Find a session and mark it busy; NULL with *busy set when another request has it. */
ztd_session *ztd_sessions_acquire(ztd_sessions *t, const char *id, bool *busy);
/* The request is done with it: idle from now. */
void ztd_sessions_release(ztd_sessions *t, ztd_session *x);
/* End a session this request holds: out of the table, its staging file
 * removed (unless handed to publication), its slot given back. */
void ztd_sessions_end(ztd_sessions *t, ztd_session *x);
/* Expire the sessions idle for longer than idle_ms; returns how many. */
size_t ztd_sessions_sweep(ztd_sessions *t, uint64_t idle_ms);
/* Whether a session last used at last_used (monotonic ms) has been idle for
 * longer than idle_ms at now. Pure. */
bool ztd_session_idle(uint64_t now, uint64_t last_used, uint64_t idle_ms);

/* The component uploaded under key, or NULL. */
const ztd_session_key *ztd_session_find_key(const ztd_session *x, const char *key);
/* Room for one more component and a copy of its key (*copy): 0, or -1 (memory).
 * Called before the writer ends the component, so that recording it cannot fail. */
int ztd_session_prepare_key(ztd_session *x, const char *key, char **copy);
/* Record the component the writer just finished (id) under the prepared copy. */
void ztd_session_add_key(ztd_session *x, char *copy, size_t id);
/* Is the session's staging file still the one it writes? false: something
 * removed or replaced it, and its components are lost. */
bool ztd_session_intact(const ztd_session *x);

#endif
