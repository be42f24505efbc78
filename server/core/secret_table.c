/*
 * Tables of secrets read from a secret file's records (secret_table.h).
 */
#include "core/secret_table.h"
#include "core/secret_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ztd_secret_table_free(ztd_secret_table *t)
{
    if (!t)
        return;
    if (t->v)
        ztd_secret_wipe(t->v, t->n * t->size);
    free(t->v);
    free(t);
}

size_t ztd_secret_table_count(const ztd_secret_table *t)
{
    return t ? t->n : 0;
}

/* Room for one more item: a new array, the old one wiped. */
static int grow(ztd_secret_table *t)
{
    size_t size = t->size;
    if (t->n < t->cap)
        return 0;
    size_t cap = t->cap ? t->cap * 2 : 8;
    char *v = calloc(cap, size);
    if (!v)
        return -1;
    if (t->n)
        memcpy(v, t->v, t->n * size);
    if (t->v)
        ztd_secret_wipe(t->v, t->n * size);
    free(t->v);
    t->v = v;
    t->cap = cap;
    return 0;
}

static int add(ztd_secret_table *t, size_t max, const char *too_many, const ztd_record *r,
               ztd_secret_take *take, char *err, size_t errlen)
{
    if (t->n == max) {
        snprintf(err, errlen, "line %u: %s", r->lineno, too_many);
        return -1;
    }
    if (grow(t) != 0) {
        snprintf(err, errlen, "line %u: out of memory", r->lineno);
        return -1;
    }
    char *item = (char *)t->v + t->n * t->size;
    memset(item, 0, t->size);
    if (take(r, item, t, err, errlen) != 0) {
        ztd_secret_wipe(item, t->size);
        return -1;
    }
    t->n++;
    return 0;
}

ztd_secret_table *ztd_secret_table_parse(size_t size, size_t max, const char *too_many,
                                         const char *text, size_t len, ztd_secret_take *take,
                                         char *err, size_t errlen)
{
    ztd_secret_table *t = calloc(1, sizeof(*t));
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->size = size;
    ztd_records it;
    ztd_record r;
    ztd_records_init(&it, text, len);
    while (ztd_records_next(&it, &r)) {
        if (add(t, max, too_many, &r, take, err, errlen) != 0) {
            ztd_secret_table_free(t);
            return NULL;
        }
    }
    return t;
}
