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
    void *v; /* n items of the table's item size */
    size_t n, cap;
} ztd_secret_table;

/* Read record r into item (zeroed, the table's item size); the table's
 * items so far are t->v[0..t->n) (to refuse a repeated one). 0, or -1 with a
 * message in err that names r's line and never quotes a secret. */
typedef int ztd_secret_take(const ztd_record *r, void *item, const ztd_secret_table *t, char *err,
                            size_t errlen);

/* Fill t (zeroed) from every record of text (len bytes) with take: at most
 * max items, items of size bytes. 0, or -1 with a message (t then holds
 * nothing): take's, "line N: out of memory", or "line N: " and too_many. */
int ztd_secret_table_read(ztd_secret_table *t, size_t size, size_t max, const char *too_many,
                          const char *text, size_t len, ztd_secret_take *take, char *err,
                          size_t errlen);
/* Wipe and free t's items (items of size bytes); t holds nothing afterwards. */
void ztd_secret_table_free(ztd_secret_table *t, size_t size);

#endif
