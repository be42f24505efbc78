/*
 * The table of upstream files (see internal.h): slots by name, what each one
 * costs in memory, and room within upstream_entries_memory, made by dropping
 * the least recently used slots that nothing holds. A parsed manifest of a
 * catch-all upstream's file can take tens of MB, so the table is bounded by
 * bytes as well as by count (MAX_ENTRIES). Every function here is called with
 * u->mu held; a slot pointer is valid until the next call that drops or adds
 * a slot (the array is kept packed).
 */
#include "upstream/internal.h"

#include <stdlib.h>
#include <string.h>

/* What an entry costs beyond its manifest JSON: the manifest's CBOR kept by
 * the remote file, the parsed model (objects, components, their strings) and
 * the shared manifest answers built from it. Measured here: a file of 20,000
 * one-byte objects (4.1 MB of manifest JSON) took 20-58 MB of RSS an entry;
 * one of 10,000 objects (2.05 MB) took 27 MB: 13 entries held 363 MB of RSS
 * when the estimate said 133 MB, so 5 x the JSON let the default budget's
 * sidecar peak at 412 MiB. 14 x is what was measured, and the budget then
 * bounds RSS as CONFIG.md says (docs/PERFORMANCE.md). */
#define MODEL_FACTOR 14

size_t ztd_up_entry_bytes(const char *name, const ztd_entry *e)
{
    size_t n = sizeof(slot) + strlen(name) + 1;
    if (e) {
        n += sizeof(*e) + sizeof(*e->up) + MODEL_FACTOR * e->manifest_json_len;
        if (e->up->json)
            n += strlen(e->up->json);
    }
    return n;
}

slot *ztd_up_find_slot(ztd_upstream *u, const char *name)
{
    for (size_t i = 0; i < u->n; i++)
        if (!strcmp(u->slots[i].name, name))
            return &u->slots[i];
    return NULL;
}

/* Held by a request, a fill, or an open or revalidation in progress? */
static bool in_use(const slot *s)
{
    return s->opening ||
           (s->e && __atomic_load_n(&s->e->refs, __ATOMIC_ACQUIRE) > 1);
}

void ztd_up_drop_slot(ztd_upstream *u, slot *s)
{
    u->mem_used -= s->bytes;
    ztd_entry_release(s->e);
    free(s->name);
    *s = u->slots[--u->n];
}

/* The least recently used slot nothing holds, other than keep; NULL if none. */
static slot *victim(ztd_upstream *u, const char *keep)
{
    slot *old = NULL;
    for (size_t i = 0; i < u->n; i++) {
        slot *s = &u->slots[i];
        if (in_use(s) || (keep && !strcmp(s->name, keep)))
            continue;
        if (!old || s->used < old->used)
            old = s;
    }
    return old;
}

bool ztd_up_make_room(ztd_upstream *u, size_t need, const char *keep)
{
    while (u->mem_used + need > u->mem_budget) {
        slot *s = victim(u, keep);
        if (!s)
            return false;
        COUNT(u, entry_evictions, 1);
        ztd_up_drop_slot(u, s);
    }
    return true;
}

slot *ztd_up_new_slot(ztd_upstream *u, const char *name, uint64_t now)
{
    size_t bytes = ztd_up_entry_bytes(name, NULL);
    if (u->n == MAX_ENTRIES || u->mem_used + bytes > u->mem_budget) {
        slot *s = victim(u, NULL);
        if (!s)
            return NULL;
        COUNT(u, entry_evictions, 1);
        ztd_up_drop_slot(u, s);
    }
    char *copy = strdup(name);
    if (!copy)
        return NULL;
    slot *s = &u->slots[u->n++];
    *s = (slot){.name = copy, .bytes = bytes, .used = now};
    u->mem_used += bytes;
    return s;
}

void ztd_up_slot_set(ztd_upstream *u, slot *s, ztd_entry *e)
{
    if (s->e != e) {
        ztd_entry_release(s->e);
        s->e = e;
    }
    size_t bytes = ztd_up_entry_bytes(s->name, e);
    u->mem_used = u->mem_used - s->bytes + bytes;
    s->bytes = bytes;
}
