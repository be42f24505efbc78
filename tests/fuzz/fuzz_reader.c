/*
 * fuzz_reader.c: libFuzzer target for everything a reader does with a file
 * from a stranger: zt_open_memory() (footer, bounded CBOR decode, model,
 * validation), then, when it opens, every accessor, the manifest and object
 * JSON, digest verification, the frame check and decoding of every component
 * both ways (push stream and pull decoder in small chunks).
 *
 * The input is a whole .zt file, so the corpus is plain files that any other
 * tool can open. The same input is opened a second time with small limits
 * (max_manifest_size and max_uncompressed derived from its size) so the limit
 * paths are reached too.
 *
 * Invariants (a violation calls __builtin_trap): a failing call fills the
 * zt_error with its code and a message; an opened file's components lie inside
 * it (v2 parts in shards: they are not reachable from memory); find_object() returns the object
 * under its own name; the manifest JSON is valid JSON; the push stream and the pull decoder agree
 * on status, length and bytes; a successful decode yields exactly decoded_length bytes, and its
 * component passes zt_component_check_frames.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ztensor/ztensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

/* Decoding a zstd bomb is legal but slow: cap the work per input. */
#define MAX_DECODE (16u << 20)

typedef struct sink_state {
    uint64_t total;
    uint32_t crc;
} sink_state;

static int null_sink(void *ud, const void *p, size_t n)
{
    sink_state *s = ud;
    CHECK(n > 0);
    s->total += n;
    s->crc = zt_crc32c(s->crc, p, n);
    return 0;
}

static void check_error(zt_status st, const zt_error *err)
{
    CHECK(st != ZT_OK);
    CHECK(err->code == st);
    CHECK(err->message[0] != 0);
    CHECK(memchr(err->message, 0, sizeof(err->message)) != NULL);
    CHECK(memchr(err->object, 0, sizeof(err->object)) != NULL);
    CHECK(memchr(err->component, 0, sizeof(err->component)) != NULL);
    CHECK(zt_status_name(st) != NULL && zt_status_text(st) != NULL);
}

/* Touches every node of an attribute tree (depth is bounded by the decoder). */
static void walk_value(const zt_value *v, int depth)
{
    CHECK(depth <= ZT_MAX_DEPTH + 1);
    size_t len;
    switch (zt_value_get_kind(v)) {
    case ZT_VAL_TEXT:
    case ZT_VAL_BYTES: {
        const char *s = zt_value_data(v, &len);
        CHECK(s != NULL && s[len] == 0);
        break;
    }
    case ZT_VAL_ARRAY:
        for (size_t i = 0; i < zt_value_count(v); i++)
            walk_value(zt_value_item(v, i), depth + 1);
        CHECK(zt_value_item(v, zt_value_count(v)) == NULL);
        break;
    case ZT_VAL_MAP:
        for (size_t i = 0; i < zt_value_count(v); i++) {
            walk_value(zt_value_key(v, i), depth + 1);
            walk_value(zt_value_item(v, i), depth + 1);
        }
        (void)zt_value_get(v, "bits");
        break;
    case ZT_VAL_TAG:
        (void)zt_value_uint(v);
        walk_value(zt_value_item(v, 0), depth + 1);
        break;
    case ZT_VAL_FLOAT:
        (void)zt_value_float(v);
        break;
    default:
        (void)zt_value_uint(v);
        break;
    }
}

static void check_json(char *s)
{
    CHECK(s != NULL); /* libFuzzer never lets malloc fail, so NULL is a bug */
    json_error_t je;
    json_t *j = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    /* Valid JSON that jansson writes but will not read back: "\u0000" in a key. */
    CHECK(j != NULL || strstr(je.text, "NUL byte in object key") != NULL);
    json_decref(j);
    zt_free(s);
}

/* Decodes with the pull decoder in chunks of 1..4096 bytes. */
static zt_status pull_decode(const zt_file *f, const zt_component *c, size_t chunk, sink_state *out)
{
    zt_error err;
    zt_decoder *d;
    zt_status st = zt_decoder_new(f, c, &d, &err);
    if (st) {
        check_error(st, &err);
        return st;
    }
    uint8_t *buf = malloc(chunk);
    CHECK(buf != NULL);
    for (;;) {
        size_t n = 12345;
        st = zt_decoder_read(d, buf, chunk, &n, &err);
        if (st) {
            check_error(st, &err);
            break;
        }
        CHECK(n <= chunk);
        if (n == 0)
            break;
        out->total += n;
        out->crc = zt_crc32c(out->crc, buf, n);
        CHECK(out->total <= zt_component_decoded_length(c));
    }
    /* After the end (or an error) a read must not crash. */
    size_t n;
    (void)zt_decoder_read(d, buf, chunk, &n, NULL);
    free(buf);
    zt_decoder_free(d);
    return st;
}

static void check_component(const zt_file *f, const zt_object *o, const zt_component *c,
                            size_t chunk)
{
    const char *role = zt_component_role(c);
    CHECK(role != NULL);
    CHECK(zt_dtype_width(zt_component_dtype(c)) > 0);
    (void)zt_component_type(c);
    (void)zt_component_digest(c);
    uint64_t off = zt_component_offset(c), len = zt_component_length(c);
    if (zt_component_shard(c) < 0) {
        CHECK(off <= zt_file_size(f) && len <= zt_file_size(f) - off);
        CHECK(zt_component_stored(f, c) == zt_file_bytes(f) + off);
    } else { /* a v2 part in another file, which a file in memory cannot locate */
        CHECK(zt_component_stored(f, c) == NULL && zt_component_fd(f, c) == -1);
    }
    size_t dlen;
    const uint8_t *dig = zt_component_digest_bytes(c, &dlen);
    CHECK((dig != NULL) == (zt_component_digest_kind(c) != ZT_DIGEST_NONE));
    if (zt_component_digest_kind(c) == ZT_DIGEST_SHA256)
        CHECK(dlen == 32);

    zt_error err;
    int checked = -1;
    zt_status st = zt_component_verify(f, o, c, &checked, &err);
    if (st)
        check_error(st, &err);
    CHECK(checked == 0 || checked == 1);

    /* The frame check reads headers only: cheap whatever the size. */
    zt_status sc = zt_component_check_frames(f, c, &err);
    if (sc)
        check_error(sc, &err);

    uint64_t want = zt_component_decoded_length(c);
    if (want > MAX_DECODE)
        return;
    sink_state push = {0, 0}, pull = {0, 0};
    zt_status sp = zt_component_stream(f, c, null_sink, &push, &err);
    if (sp)
        check_error(sp, &err);
    else
        CHECK(push.total == want && sc == ZT_OK); /* the check never refuses what decodes */
    zt_status sl = pull_decode(f, c, chunk, &pull);
    CHECK((sp == ZT_OK) == (sl == ZT_OK));
    if (sp == ZT_OK)
        CHECK(pull.total == push.total && pull.crc == push.crc);

    if (want <= (1u << 20)) {
        size_t cap = (size_t)want, got = 0;
        uint8_t *buf = malloc(cap ? cap : 1);
        CHECK(buf != NULL);
        zt_status sr = zt_component_read(f, c, buf, cap, &got, &err);
        CHECK((sr == ZT_OK) == (sp == ZT_OK));
        if (sr == ZT_OK)
            CHECK(got == want && zt_crc32c(0, buf, got) == push.crc);
        else
            check_error(sr, &err);
        if (want > 0) /* a buffer one byte short is refused up front */
            CHECK(zt_component_read(f, c, buf, cap - 1, &got, NULL) == ZT_E_ARG);
        free(buf);
    }
}

static void check_object(const zt_file *f, const zt_object *o, size_t chunk)
{
    const char *name = zt_object_name(o);
    size_t nlen = zt_object_name_len(o);
    CHECK(name != NULL && name[nlen] == 0);
    CHECK(zt_file_find_object(f, name, nlen) == o);
    CHECK(zt_object_format(o) != NULL);
    (void)zt_object_source_name(o);
    if (zt_object_has_shape(o)) {
        CHECK(zt_object_ndim(o) <= ZT_MAX_NDIM);
        const uint64_t *shape = zt_object_shape(o);
        uint64_t acc = 0;
        for (size_t i = 0; i < zt_object_ndim(o); i++)
            acc ^= shape[i];
        (void)acc;
    }
    if (zt_object_attributes(o))
        walk_value(zt_object_attributes(o), 0);
    check_json(zt_object_json(o, ZT_JSON_COMPACT, NULL));
    size_t nc = zt_object_component_count(o);
    CHECK(zt_object_component_at(o, nc) == NULL);
    for (size_t i = 0; i < nc; i++) {
        const zt_component *c = zt_object_component_at(o, i);
        CHECK(c != NULL);
        CHECK(zt_object_find_component(o, zt_component_role(c)) != NULL);
        check_component(f, o, c, chunk);
    }
}

static void check_file(const zt_file *f, size_t chunk)
{
    CHECK(zt_file_kind_name(zt_file_get_kind(f)) != NULL);
    CHECK(zt_file_version(f) != NULL);
    (void)zt_file_warning(f);
    CHECK(zt_file_fd(f) == -1);
    uint64_t mo = zt_file_manifest_offset(f), ml = zt_file_manifest_length(f);
    CHECK(mo <= zt_file_size(f) && ml <= zt_file_size(f) - mo);
    if (zt_file_attributes(f))
        walk_value(zt_file_attributes(f), 0);
    zt_error err;
    check_json(zt_file_manifest_json(f, chunk & 1 ? ZT_JSON_PRETTY : ZT_JSON_COMPACT, &err));
    size_t n = zt_file_object_count(f);
    CHECK(zt_file_object_at(f, n) == NULL);
    for (size_t i = 0; i < n; i++)
        check_object(f, zt_file_object_at(f, i), chunk);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    zt_error err;
    zt_file *f = NULL;
    /* Chunk size for the pull decoder: 1..4096, from the input's size. */
    size_t chunk = 1 + (size * 2654435761u) % 4096;

    zt_status st = zt_open_memory(data, size, NULL, &f, &err);
    if (st == ZT_OK) {
        CHECK(f != NULL);
        check_file(f, chunk);
        zt_close(f);
    } else {
        check_error(st, &err);
    }

    /* Small limits: the manifest-size and decompression caps must refuse cleanly. */
    zt_open_options small = {.max_manifest_size = 1 + size % 512,
                             .max_uncompressed = 1 + size % 8192};
    f = NULL;
    st = zt_open_memory(data, size, &small, &f, &err);
    if (st == ZT_OK) {
        CHECK(zt_file_manifest_length(f) <= small.max_manifest_size);
        zt_close(f);
    } else {
        check_error(st, &err);
    }
    return 0;
}
