/*
 * What a listing's walk holds against a server that lies (issue 27,
 * finding 3 and "names outside the prefix"): every cursor seen (by its
 * sha256, so a cursor of any length that comes back, A B A B as well as A A,
 * ends the walk), the last name (ztensord lists in byte order after the
 * cursor's name: a name not after the one before is a repeat or a loop),
 * the prefix every name must start with, and the caps on entries and on
 * name bytes that bound what a caller keeps of a listing. No I/O: listing.c
 * feeds it pages.
 */
#include "remote_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The prefix as the server reads it: the URL's %XX decoded. */
static char *decode(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    for (; out && *s; s++) {
        int hi = s[0] == '%' ? hexval(s[1]) : -1, lo = hi >= 0 ? hexval(s[2]) : -1;
        if (lo >= 0) {
            *o++ = (char)(hi * 16 + lo);
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    if (out)
        *o = 0;
    return out;
}

int ztr__walk_init(ztr_walk *w, const char *prefix, uint64_t max_entries, uint64_t max_bytes)
{
    memset(w, 0, sizeof(*w));
    w->prefix = decode(prefix);
    w->prefix_len = w->prefix ? strlen(w->prefix) : 0;
    w->max_entries = max_entries;
    w->max_bytes = max_bytes;
    return w->prefix ? 0 : -1;
}

void ztr__walk_free(ztr_walk *w)
{
    free(w->prefix);
    free(w->last);
    free(w->seen);
    memset(w, 0, sizeof(*w));
}

static const uint8_t zero[32]; /* an empty slot: no sha256 of a cursor is all zeros */

static uint64_t slot_of(const uint8_t d[32], size_t cap)
{
    uint64_t k;
    memcpy(&k, d, sizeof(k));
    return k & (cap - 1);
}

/* Adds d to the set; 1 when it was there already, -1 out of memory. */
static int seen_add(ztr_walk *w, const uint8_t d[32])
{
    if (2 * (w->nseen + 1) > w->cap) { /* at most half full: probes stay short */
        size_t cap = w->cap ? 2 * w->cap : 64;
        uint8_t(*t)[32] = calloc(cap, 32);
        if (!t)
            return -1;
        for (size_t i = 0; i < w->cap; i++) {
            if (!memcmp(w->seen[i], zero, 32))
                continue;
            size_t j = slot_of(w->seen[i], cap);
            while (memcmp(t[j], zero, 32))
                j = (j + 1) & (cap - 1);
            memcpy(t[j], w->seen[i], 32);
        }
        free(w->seen);
        w->seen = t;
        w->cap = cap;
    }
    size_t j = slot_of(d, w->cap);
    for (; memcmp(w->seen[j], zero, 32); j = (j + 1) & (w->cap - 1))
        if (!memcmp(w->seen[j], d, 32))
            return 1;
    memcpy(w->seen[j], d, 32);
    w->nseen++;
    return 0;
}

int ztr__walk_cursor(ztr_walk *w, const char *cursor, char *why, size_t cap)
{
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    uint8_t d[32];
    if (!h)
        return snprintf(why, cap, "out of memory"), -1;
    zt_hasher_update(h, cursor, strlen(cursor));
    zt_hasher_final(h, d);
    zt_hasher_free(h);
    int r = seen_add(w, d);
    if (r < 0)
        snprintf(why, cap, "out of memory");
    else if (r > 0)
        snprintf(why, cap,
                 "the listing's pages do not end: page %zu gives a cursor an earlier page gave "
                 "(%.40s%s)",
                 w->nseen + 1, cursor, strlen(cursor) > 40 ? "..." : "");
    return r;
}

int ztr__walk_entry(ztr_walk *w, const char *name, char *why, size_t cap)
{
    size_t n = strlen(name);
    if (strncmp(name, w->prefix, w->prefix_len)) {
        snprintf(why, cap, "the server listed \"%.200s\", which is outside the prefix \"%.200s\"",
                 name, w->prefix);
        return -1;
    }
    if (w->last && strcmp(name, w->last) <= 0) {
        snprintf(why, cap,
                 "the server listed \"%.200s\" %s (a listing is in byte order, each name once)",
                 name, strcmp(name, w->last) ? "after a name that sorts later" : "twice");
        return -1;
    }
    if (++w->entries > w->max_entries) {
        snprintf(why, cap, "the listing is over its cap of %llu files (list_max_entries)",
                 (unsigned long long)w->max_entries);
        return -2;
    }
    if (n > w->max_bytes - w->bytes) {
        snprintf(why, cap, "the listing is over its cap of %llu bytes of names (list_max_bytes)",
                 (unsigned long long)w->max_bytes);
        return -2;
    }
    w->bytes += n;
    if (n + 1 > w->last_cap) {
        char *p = realloc(w->last, n + 1);
        if (!p)
            return snprintf(why, cap, "out of memory"), -3;
        w->last = p;
        w->last_cap = n + 1;
    }
    memcpy(w->last, name, n + 1);
    return 0;
}
