/*
 * The line records of ztensord's secret files (the bearer tokens file, the S3
 * keys file): one record per line, its fields separated by blanks (space,
 * tab, CR); a line that is empty, blank, or whose first non-blank is '#'
 * holds none. Pure: no allocation, no I/O; the fields point into the text.
 */
#ifndef ZTD_RECORD_LINES_H
#define ZTD_RECORD_LINES_H

#include <stdbool.h>
#include <stddef.h>

#define ZTD_RECORD_FIELDS 4

typedef struct ztd_record {
    unsigned lineno; /* 1-based, for messages */
    size_t n;        /* fields on the line (only the first ZTD_RECORD_FIELDS are kept) */
    const char *f[ZTD_RECORD_FIELDS];
    size_t len[ZTD_RECORD_FIELDS];
} ztd_record;

typedef struct ztd_records {
    const char *text;
    size_t len, pos;
    unsigned lineno;
} ztd_records;

void ztd_records_init(ztd_records *it, const char *text, size_t len);
/* The next line that holds a record; false at the end of the text. */
bool ztd_records_next(ztd_records *it, ztd_record *r);
/* A scope field: "read" 1, "write" 2 (ztd_scope's values), anything else 0. */
int ztd_record_scope(const char *p, size_t n);

#endif
