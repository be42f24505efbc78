/*
 * foreign_check.h: the invariants fuzz_safetensors and fuzz_alt check on
 * every file that opens (a failed open must fill its zt_error). Header-only,
 * included by exactly one fuzz target each.
 */
#ifndef ZT_FOREIGN_CHECK_H
#define ZT_FOREIGN_CHECK_H

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "ztensor/ztensor.h"

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

static int fc_sink(void *ud, const void *p, size_t n)
{
    *(uint32_t *)ud = zt_crc32c(*(uint32_t *)ud, p, n);
    return 0;
}

static void fc_json(char *s)
{
    CHECK(s != NULL);
    json_error_t je;
    json_t *j = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    CHECK(j != NULL || strstr(je.text, "NUL byte in object key") != NULL);
    json_decref(j);
    zt_free(s);
}

static void fc_tensor_names(const zt_file *f, const zt_object *o)
{
    const zt_object *fo = NULL;
    const zt_component *fc = NULL;
    CHECK(zt_file_find_tensor(f, zt_object_name(o), zt_object_name_len(o), &fo, &fc) == ZT_OK);
    CHECK(fo == o && fc != NULL);
    size_t n = zt_object_name_len(o);
    char *s = malloc(n + 7);
    CHECK(s != NULL);
    memcpy(s, zt_object_name(o), n);
    memcpy(s + n, ".scale", 6);
    if (zt_file_find_tensor(f, s, n + 6, &fo, &fc) == ZT_OK)
        CHECK(fo != NULL && fc != NULL);
    free(s);
}

static void fc_object(const zt_file *f, const zt_object *o)
{
    CHECK(zt_file_find_object(f, zt_object_name(o), zt_object_name_len(o)) == o);
    fc_tensor_names(f, o);
    fc_json(zt_object_json(o, ZT_JSON_COMPACT, NULL));
    for (size_t i = 0; i < zt_object_component_count(o); i++) {
        const zt_component *c = zt_object_component_at(o, i);
        uint64_t off = zt_component_offset(c), len = zt_component_length(c);
        CHECK(off <= zt_file_size(f) && len <= zt_file_size(f) - off);
        CHECK(zt_dtype_width(zt_component_dtype(c)) > 0);
        uint32_t crc = 0;
        zt_error err;
        CHECK(zt_component_stream(f, c, fc_sink, &crc, &err) == ZT_OK);
        CHECK(crc == zt_crc32c(0, zt_component_stored(f, c), (size_t)len));
    }
}

static void fc_open(const uint8_t *data, size_t size, const zt_open_options *opt)
{
    zt_file *f = NULL;
    zt_error err;
    memset(&err, 0, sizeof(err));
    zt_status st = zt_open_memory(data, size, opt, &f, &err);
    if (st) {
        CHECK(f == NULL && err.code == st && err.message[0]);
        CHECK(memchr(err.message, 0, sizeof(err.message)) != NULL);
        return;
    }
    zt_file_kind k = zt_file_get_kind(f);
    if (k != ZT_KIND_SAFETENSORS && k != ZT_KIND_ALT) { /* fuzz_reader's business */
        zt_close(f);
        return;
    }
    fc_json(zt_file_manifest_json(f, ZT_JSON_COMPACT, &err));
    for (size_t i = 0; i < zt_file_object_count(f); i++)
        fc_object(f, zt_file_object_at(f, i));
    zt_close(f);
}

#endif
