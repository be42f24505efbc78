/*
 * v2 §2.4: blob references into one file are pairwise identical or disjoint
 * (v2_validate.c, check_overlap). Random manifests of dense u8 objects whose
 * blobs often coincide, overlap or touch, checked against a reference: the
 * references sorted by (offset, length, then their order in the manifest),
 * scanned as the rule says. The first partial overlap in that order is the
 * one reported: its object and offset, and the blob it overlaps named in the
 * message; no overlap, no error. So the sort's order, ties included, is
 * pinned down whatever sort v2_validate.c uses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

typedef struct blob {
    uint64_t off, len;
    size_t obj;
} blob;

static int cmp_blob(const void *pa, const void *pb)
{
    const blob *a = pa, *b = pb;
    if (a->off != b->off)
        return a->off < b->off ? -1 : 1;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return (a->obj > b->obj) - (a->obj < b->obj);
}

/* The expected outcome: ZT_OK, or the overlapping blob b and the one it hits. */
static bool expect_overlap(blob *v, size_t n, blob *b, blob *a)
{
    qsort(v, n, sizeof(*v), cmp_blob);
    for (size_t i = 1, cur = 0; i < n; i++) {
        if (v[i].off == v[cur].off && v[i].len == v[cur].len)
            continue;
        if (v[i].off < v[cur].off + v[cur].len) {
            *b = v[i];
            *a = v[cur];
            return true;
        }
        cur = i;
    }
    return false;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* n objects "o00000"... (so the manifest keeps this order), blobs at
 * 4096 * [1, slots], lengths that fit, straddle and cover pages. */
static size_t g_overlaps, g_cases;

static void one_case(uint64_t *seed, size_t n, uint64_t slots)
{
    static const uint64_t lens[] = {0, 1, 100, 4096, 4097, 8192, 12288, 20000};
    struct zt_object *objs = calloc(n, sizeof(*objs));
    struct zt_component *comps = calloc(n, sizeof(*comps));
    const struct zt_object **ptrs = calloc(n, sizeof(*ptrs));
    uint64_t *shapes = calloc(n, sizeof(*shapes));
    char(*names)[24] = calloc(n, sizeof(*names));
    blob *refs = calloc(n, sizeof(*refs));
    size_t nref = 0;
    uint64_t end = 4096;
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof(names[i]), "o%05u", (unsigned)(i % 100000));
        struct zt_component *c = &comps[i];
        c->role = "data";
        c->dtype = ZT_DTYPE_U8;
        c->offset = 4096 * (1 + rnd(seed) % slots);
        c->length = lens[rnd(seed) % (sizeof(lens) / sizeof(lens[0]))];
        end = c->offset + c->length > end ? c->offset + c->length : end;
        shapes[i] = c->length;
        objs[i] = (struct zt_object){.name = names[i],
                                     .name_len = 6,
                                     .format = "dense",
                                     .ndim = 1,
                                     .shape = &shapes[i],
                                     .ncomp = 1,
                                     .comps = c};
        ptrs[i] = &objs[i];
        if (c->length)
            refs[nref++] = (blob){c->offset, c->length, i};
    }
    zt__buf mb = {0};
    zt__v2_encode_manifest(&mb, ptrs, n, NULL);
    assert_false(mb.oom);
    uint64_t moff = (end + 4095) / 4096 * 4096;
    zt__model m = {0};
    zt__arena_init(&m.arena);
    zt_error err;
    zt_status st =
        zt__v2_parse_manifest(&m, mb.p, mb.len, moff + mb.len + 40, moff, UINT64_MAX, &err);
    blob a, b;
    if (!expect_overlap(refs, nref, &b, &a)) {
        if (st)
            fail_msg("no overlap expected, got: %s", err.message);
    } else {
        g_overlaps++;
        char hit[64];
        snprintf(hit, sizeof(hit), "of object \"%s\" part \"data\"", names[a.obj]);
        assert_int_equal(st, ZT_E_OVERLAP);
        assert_string_equal(err.object, names[b.obj]);
        assert_int_equal(err.offset, b.off);
        if (!strstr(err.message, hit))
            fail_msg("expected \"%s\" in: %s", hit, err.message);
    }
    g_cases++;
    zt__arena_free(&m.arena);
    zt__buf_free(&mb);
    free(objs), free(comps), free(ptrs), free(shapes), free(names), free(refs);
}

static void test_random_overlaps(void **state)
{
    (void)state;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (int k = 0; k < 3000; k++)
        one_case(&seed, 2 + rnd(&seed) % 12, 1 + rnd(&seed) % 64);
    for (int k = 0; k < 20; k++) /* large: the radix passes over many offsets */
        one_case(&seed, 3000, k < 10 ? 3000 * 64 : 1u << 20);
    print_message("%zu manifests, %zu with an overlap\n", g_cases, g_overlaps);
    assert_true(g_overlaps > g_cases / 4 && g_overlaps < g_cases * 3 / 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_overlaps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
