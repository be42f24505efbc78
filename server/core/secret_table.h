/*
 * A table of fixed-size items that hold secrets (bearer tokens, S3 keys),
 * one read from each record of a secret file's text (record_lines.h). No copy
 * of a secret is left in freed memory: the old array is wiped when the table
 * grows, an item that failed to be read is wiped, and so is the whole table
 * when freed. Each file's module says what an item is and how a record
 * becomes one.
 */
#ifndef ZTD_SECRET_TABLE_H
#define ZTD_SECRET_TABLE_H

#include <stddef.h>

#include "core/record_lines.h"

typedef struct ztd_secret_table {
    void *v; /* n items of size bytes */
    size_t n, cap, size;
} ztd_secret_table;

/* Read record r into item (zeroed, the table's item size); the table's
 * items so far are t->v[0..t->n) (to refuse a repeated one). 0, or -1 with a
 * message in err that names r's line and never quotes a secret. */
typedef int ztd_secret_take(const ztd_record *r, void *item, const ztd_secret_table *t, char *err,
                            size_t errlen);

/* A table of items of size bytes, one from every record of text (len
 * bytes) through take, at most max. The caller's (ztd_secret_table_free);
 * NULL with a message: take's, "out of memory" (or "line N: out of
 * memory"), or "line N: " and too_many. */
ztd_secret_table *ztd_secret_table_parse(size_t size, size_t max, const char *too_many,
                                         const char *text, size_t len, ztd_secret_take *take,
                                         char *err, size_t errlen);
/* The count of items (0 for NULL). */
size_t ztd_secret_table_count(const ztd_secret_table *t);
/* Wipe the items and free the table; NULL is fine. */
void ztd_secret_table_free(ztd_secret_table *t);

#endif
