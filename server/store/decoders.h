/*
 * Decoded zstd responses, the parts that outlive one response: how many
 * decoders may run at once (max_decode_streams), giving their memory back
 * after a burst, and what is known of each component of a catalog entry (its
 * frames checked, or found not to decode), so that a component that failed
 * once is refused up front with a clear error instead of another 200 that
 * dies midway. The marks belong to the entry: a replaced file starts clean.
 */
#ifndef ZTD_DECODERS_H
#define ZTD_DECODERS_H

#include <stdbool.h>

#include <ztensor/ztensor.h>

/* A decoder slot: false when `max` decoders are already running. */
bool ztd_decode_acquire(unsigned max);
/* Gives the slot back. The last decoder of a burst (8 or more at once) to end
 * returns the freed heap memory to the system (malloc_trim). */
void ztd_decode_release(void);
/* Decoders running now. */
unsigned ztd_decode_active(void);

/* What is known of a component of a file. The marks of one file version live
 * in a slot its catalog entry holds (ztd_entry.decode_marks), made by the
 * first call that needs them; f is the entry's file. */
typedef enum ztd_decode_state {
    ZTD_DECODE_UNCHECKED = 0,
    ZTD_DECODE_FRAMES_OK, /* zt_component_check_frames passed */
    ZTD_DECODE_BAD        /* does not decode: see ztd_decode_why */
} ztd_decode_state;

typedef struct ztd_decode_marks ztd_decode_marks;

ztd_decode_state ztd_decode_get(ztd_decode_marks **slot, const zt_file *f, const zt_component *c);
/* For a BAD component: the library's status and message of its first failure. */
const char *ztd_decode_why(ztd_decode_marks **slot, const zt_file *f, const zt_component *c,
                           zt_status *code);
void ztd_decode_mark_ok(ztd_decode_marks **slot, const zt_file *f, const zt_component *c);
/* Remembers the first failure; later ones keep it. Ignores failures that say
 * nothing about the bytes (out of memory, a read error, a file shrunk in place). */
void ztd_decode_mark_bad(ztd_decode_marks **slot, const zt_file *f, const zt_component *c,
                         const zt_error *err);
/* Does this failure say the component's bytes do not decode? */
bool ztd_decode_is_data_error(zt_status code);

/* Called by ztd_entry_release. */
void ztd_decode_marks_free(ztd_decode_marks *m);

#endif
