/*
 * A bump allocator for the manifest model: a file's thousands of objects,
 * names and values are freed together by zt_close(). Blocks grow
 * geometrically, so a model costs O(log n) calls to the allocator.
 */
#include "internal.h"

#include <string.h>

struct zt_arena_block {
    zt_arena_block *next;
    size_t cap;
    max_align_t data[];
};

void zt__arena_init(zt_arena *a)
{
    a->head = NULL;
    a->used = a->cap = 0;
}

void *zt__arena_alloc(zt_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n == 0)
        n = 16;
    if (!a->head || a->cap - a->used < n) {
        size_t want = a->head ? a->head->cap * 2 : 4096;
        if (want > (64u << 20))
            want = 64u << 20;
        if (want < n)
            want = n;
        zt_arena_block *b = zt__malloc(sizeof(*b) + want);
        if (!b)
            return NULL;
        b->next = a->head;
        b->cap = want;
        a->head = b;
        a->cap = want;
        a->used = 0;
    }
    void *p = (char *)a->head->data + a->used;
    a->used += n;
    return p;
}

char *zt__arena_strndup(zt_arena *a, const char *s, size_t n)
{
    char *d = zt__arena_alloc(a, n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

void zt__arena_free(zt_arena *a)
{
    zt_arena_block *b = a->head;
    while (b) {
        zt_arena_block *next = b->next;
        zt__free(b);
        b = next;
    }
    zt__arena_init(a);
}
