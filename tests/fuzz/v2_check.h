/*
 * v2_check.h: what the v2 fuzz targets do with every file that opens, and
 * the invariants they check. Header-only, included by exactly one target
 * each (fuzz_v2_footer, fuzz_v2_manifest, fuzz_v2_profiles).
 *
 * Invariants (a violation calls __builtin_trap): a failed call fills its
 * zt_error (code, message); the file is v2; parts lie inside the file unless
 * they are in a shard; a digest's scope is "decoded"; a part with an unknown
 * encoding never decodes; a successful decode is exactly decoded_length
 * bytes and agrees with verify; zt_file_verify's first problem is one of the
 * problems it reports; the content digest is defined exactly when every part
 * has a digest, and is the same for sha256 twice; the last generation is the
 * footer at EOF; the manifest JSON is valid JSON.
 */
#ifndef ZT_V2_CHECK_H
#define ZT_V2_CHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ztensor/ztensor.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

#define V2_MAX_DECODE (4u << 20)

static void v2_error(zt_status st, const zt_error *e)
{
    CHECK(st != ZT_OK && e->code == st && e->message[0]);
    CHECK(memchr(e->message, 0, sizeof(e->message)) != NULL);
}

static int v2_sink(void *ud, const void *p, size_t n)
{
    (void)p;
    *(uint64_t *)ud += n;
    return 0;
}

static void v2_part(const zt_file *f, const zt_object *o, const zt_component *c)
{
    zt_error e;
    uint64_t off = zt_component_offset(c), len = zt_component_length(c);
    if (zt_component_shard(c) < 0)
        CHECK(off >= 4096 && off % 4096 == 0 && len <= zt_file_size(f) - 40 - off);
    if (zt_component_digest(c))
        CHECK(zt_component_digest_scope(c) == ZT_DIGEST_OF_DECODED);
    CHECK(zt_component_encoding_name(c) != NULL);
    int checked = -1;
    zt_status vs = zt_component_verify(f, o, c, &checked, &e);
    if (vs)
        v2_error(vs, &e);
    if (zt_component_decoded_length(c) > V2_MAX_DECODE)
        return;
    uint64_t got = 0;
    zt_status st = zt_component_stream(f, c, v2_sink, &got, &e);
    if (zt_component_encoding(c) == ZT_ENC_OTHER && zt_component_shard(c) < 0)
        CHECK(st == ZT_E_UNSUPPORTED);
    if (st)
        v2_error(st, &e);
    else
        CHECK(got == zt_component_decoded_length(c));
    if (vs == ZT_OK && checked == 1)
        CHECK(st == ZT_OK); /* a checked digest means the part decoded */
}

static void v2_file(const zt_file *f)
{
    zt_error e;
    CHECK(zt_file_get_kind(f) == ZT_KIND_ZT_2);
    size_t nparts = 0, ndig = 0;
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        CHECK(zt_file_find_object(f, zt_object_name(o), zt_object_name_len(o)) == o);
        for (size_t j = 0; j < zt_object_component_count(o); j++) {
            const zt_component *c = zt_object_component_at(o, j);
            nparts++;
            ndig += zt_component_digest(c) != NULL;
            v2_part(f, o, c);
        }
        zt_status st = zt_object_check_data(f, o, &e);
        if (st)
            v2_error(st, &e);
    }
    char a[80], b[80];
    zt_status st = zt_file_content_digest(f, ZT_DIGEST_SHA256, a, &e);
    CHECK((st == ZT_OK) == (ndig == nparts && !zt_file_is_data_shard(f)));
    if (st == ZT_OK) {
        CHECK(zt_file_content_digest(f, ZT_DIGEST_SHA256, b, NULL) == ZT_OK && !strcmp(a, b));
        CHECK(zt_file_content_digest(f, ZT_DIGEST_XXH3, b, NULL) == ZT_OK);
    } else {
        v2_error(st, &e);
    }
    zt_generation g[4];
    size_t n = 0;
    st = zt_file_generations(f, g, 4, &n, &e);
    if (st)
        v2_error(st, &e);
    else
        CHECK(n >= 1 && (n > 4 || g[n - 1].footer_offset == zt_file_size(f) - 40));
    zt_verify_result res;
    zt_verify_options vo;
    zt_verify_options_init(&vo);
    vo.threads = 1; /* libFuzzer runs many inputs a second: no threads per input */
    st = zt_file_verify(f, &vo, &res, &e);
    if (st)
        v2_error(st, &e);
    CHECK((st == ZT_OK) == (res.problems == 0));
    char *js = zt_file_manifest_json(f, ZT_JSON_COMPACT, &e);
    CHECK(js != NULL);
    json_error_t je;
    json_t *j = json_loads(js, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    CHECK(j != NULL || strstr(je.text, "NUL byte in object key") != NULL);
    json_decref(j);
    zt_free(js);
}

/* Opens bytes as a file and runs v2_file() on it when it opens. */
static void v2_open(const uint8_t *p, size_t n)
{
    zt_file *f = NULL;
    zt_error e;
    zt_status st = zt_open_memory(p, n, NULL, &f, &e);
    if (st == ZT_OK)
        v2_file(f);
    else
        v2_error(st, &e);
    zt_close(f);
}

#endif
