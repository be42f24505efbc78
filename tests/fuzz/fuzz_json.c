/*
 * fuzz_json.c: libFuzzer target for the writer's JSON attributes: JSON text ->
 * values (zt_writer_set_attributes, zt_writer_add_object) -> canonical CBOR
 * manifest -> a file -> zt_open_fd -> manifest JSON.
 *
 * The input is JSON text (used up to its first NUL byte). The same text is
 * given as the file attributes and as the attributes of one small object.
 *
 * Invariants (a violation calls __builtin_trap): a failing call fills the
 * zt_error; shallow JSON objects that jansson accepts are accepted; whatever
 * the writer accepts it can finish, the reader opens, and the attributes come
 * back equal under the mapping of docs/JSON.md (integers beyond 2^53 as
 * decimal strings, reals exactly).
 */
#include <inttypes.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ztensor/ztensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

#define SAFE_INT (1ll << 53)

static void check_error(zt_status st, const zt_error *err)
{
    CHECK(st != ZT_OK);
    CHECK(err->code == st);
    CHECK(err->message[0] != 0);
}

static size_t json_depth(const json_t *j)
{
    size_t d = 0;
    if (json_is_object(j)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)j, k, v)
        {
            size_t c = json_depth(v);
            d = c > d ? c : d;
        }
        return d + 1;
    }
    if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++) {
            size_t c = json_depth(json_array_get(j, i));
            d = c > d ? c : d;
        }
        return d + 1;
    }
    return 0;
}

/* Is `back` (read from the file) what `orig` (the input) maps to? */
static int same(const json_t *orig, const json_t *back)
{
    switch (json_typeof(orig)) {
    case JSON_OBJECT: {
        if (!json_is_object(back) || json_object_size(orig) != json_object_size(back))
            return 0;
        const char *k;
        size_t klen;
        json_t *v;
        void *tmp;
        json_object_keylen_foreach_safe((json_t *)orig, tmp, k, klen, v)
        {
            const json_t *b = json_object_getn(back, k, klen);
            if (!b || !same(v, b))
                return 0;
        }
        return 1;
    }
    case JSON_ARRAY:
        if (!json_is_array(back) || json_array_size(orig) != json_array_size(back))
            return 0;
        for (size_t i = 0; i < json_array_size(orig); i++)
            if (!same(json_array_get(orig, i), json_array_get(back, i)))
                return 0;
        return 1;
    case JSON_INTEGER: {
        json_int_t v = json_integer_value(orig);
        if (v >= -SAFE_INT && v <= SAFE_INT)
            return json_is_integer(back) && json_integer_value(back) == v;
        char want[32];
        snprintf(want, sizeof(want), "%" PRId64, (int64_t)v);
        return json_is_string(back) && !strcmp(json_string_value(back), want);
    }
    case JSON_REAL:
        return json_is_real(back) && json_real_value(back) == json_real_value(orig);
    case JSON_STRING:
        return json_is_string(back) && json_string_length(back) == json_string_length(orig) &&
               !memcmp(json_string_value(back), json_string_value(orig), json_string_length(orig));
    default:
        return json_typeof(back) == json_typeof(orig);
    }
}

static int g_fd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    CHECK(text != NULL);
    if (size)
        memcpy(text, data, size);
    text[size] = 0;

    json_error_t je;
    json_t *ref = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    int shallow_object = ref && json_is_object(ref) && json_depth(ref) <= 16;

    if (g_fd < 0) {
        g_fd = memfd_create("fuzz_json", MFD_CLOEXEC);
        CHECK(g_fd >= 0);
    }
    CHECK(ftruncate(g_fd, 0) == 0 && lseek(g_fd, 0, SEEK_SET) == 0);

    zt_writer_options wo;
    zt_writer_options_init(&wo);
    wo.fsync = 0;
    zt_writer *w = NULL;
    zt_error err;
    CHECK(zt_writer_open_fd(g_fd, &wo, &w, &err) == ZT_OK);

    zt_status st = zt_writer_set_attributes(w, text, &err);
    if (st) {
        check_error(st, &err);
        CHECK(!shallow_object);
        goto out;
    }
    zt_component_spec spec = {.dtype = ZT_DTYPE_U8, .digest = ZT_DIGEST_CRC32C};
    size_t id;
    CHECK(zt_writer_begin(w, &spec, &err) == ZT_OK);
    CHECK(zt_writer_write(w, "x", 1, &err) == ZT_OK);
    CHECK(zt_writer_end(w, &id, &err) == ZT_OK);
    const char *role = "data";
    uint64_t shape = 1;
    st = zt_writer_add_object(w, "o", "dense", 1, &shape, text, 1, &role, &id, &err);
    if (st) {
        check_error(st, &err);
        CHECK(!shallow_object);
        goto out;
    }
    st = zt_writer_finish(w, &err);
    CHECK(st == ZT_OK);

    zt_file *f = NULL;
    st = zt_open_fd(g_fd, NULL, &f, &err);
    CHECK(st == ZT_OK);
    char *js = zt_file_manifest_json(f, ZT_JSON_COMPACT, &err);
    CHECK(js != NULL);
    json_t *back = json_loads(js, JSON_DECODE_ANY, &je);
    CHECK(back != NULL);
    CHECK(ref != NULL);
    CHECK(same(ref, json_object_get(back, "attributes")));
    const json_t *obj = json_object_get(json_object_get(back, "objects"), "o");
    CHECK(same(ref, json_object_get(obj, "attributes")));
    json_decref(back);
    zt_free(js);
    zt_close(f);
out:
    zt_writer_free(w);
    json_decref(ref);
    free(text);
    return 0;
}
