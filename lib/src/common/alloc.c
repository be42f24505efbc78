/*
 * The allocator the library uses for its own memory. Tests replace it with
 * one that fails the Nth call, so every out-of-memory path is exercised.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static void *(*g_malloc)(size_t) = malloc;
static void *(*g_realloc)(void *, size_t) = realloc;
static void (*g_free)(void *) = free;

void zt_set_allocator(void *(*m)(size_t), void *(*r)(void *, size_t), void (*f)(void *))
{
    g_malloc = m ? m : malloc;
    g_realloc = r ? r : realloc;
    g_free = f ? f : free;
}

void *zt__malloc(size_t n)
{
    return g_malloc(n ? n : 1);
}

void *zt__calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return NULL;
    void *p = zt__malloc(total);
    if (p)
        memset(p, 0, total);
    return p;
}

void *zt__realloc(void *p, size_t n)
{
    return g_realloc(p, n ? n : 1);
}

void zt__free(void *p)
{
    if (p)
        g_free(p);
}

void zt_free(void *p)
{
    zt__free(p);
}

char *zt__strndup(const char *s, size_t n)
{
    char *d = zt__malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}
