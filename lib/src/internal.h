/*
 * Internal declarations shared by libztensor's modules: the allocator, the
 * arena, error helpers and the in-memory manifest model. Internal names are
 * zt__*; nothing here is exported.
 */
#ifndef ZT_INTERNAL_H
#define ZT_INTERNAL_H

#include "ztensor/ztensor.h"
#include "ztensor/ztensor_experimental.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- allocator (alloc.c) */
void *zt__malloc(size_t n);
void *zt__calloc(size_t n, size_t size);
void *zt__realloc(void *p, size_t n);
void zt__free(void *p);
char *zt__strndup(const char *s, size_t n);

/* ---- arena (arena.c): many small allocations freed at once */
typedef struct zt__arena_block zt__arena_block;
typedef struct zt__arena {
    zt__arena_block *head;
    size_t used, cap;
} zt__arena;
void zt__arena_init(zt__arena *a);
void *zt__arena_alloc(zt__arena *a, size_t n); /* 16-byte aligned, zeroed: no */
char *zt__arena_strndup(zt__arena *a, const char *s, size_t n);
void zt__arena_free(zt__arena *a);

/* ---- extensible options structs: the first member is `size_t size`, the
 * sizeof the caller compiled with (0 = the first layout, for callers that
 * filled the struct without its _init). The library reads only the fields
 * the caller's struct has; the rest keep their defaults. When a struct grows,
 * 0 must go on meaning its first size. */
#define ZT__OPTS_SIZE(opt, eff)                                                                    \
    ((opt)->size == 0 || (opt)->size > sizeof(eff) ? sizeof(eff) : (opt)->size)

/* ---- errors (error.c) */
/* Fill err (may be NULL) and return code. obj/comp may be NULL. */
zt_status zt__fail(zt_error *err, zt_status code, const char *obj, const char *comp, int has_off,
                   uint64_t off, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
#define ZT_FAIL(err, code, ...) zt__fail((err), (code), NULL, NULL, 0, 0, __VA_ARGS__)

/* ---- component decoding (codec_zstd.c) */
/* The name of the object that holds c, for error messages; NULL if none. */
const char *zt__component_object(const zt_file *f, const struct zt_component *c);

/* ---- overflow-checked arithmetic */
static inline bool zt__mul_ok(uint64_t a, uint64_t b, uint64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}
static inline bool zt__add_ok(uint64_t a, uint64_t b, uint64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}

static inline uint64_t zt__le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline void zt__put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- generic values (value.c, cbor_decode.c) */
struct zt_value {
    uint8_t kind; /* zt_value_kind */
    uint32_t n;   /* items (array/tag=1), pairs (map), bytes (text/bytes) */
    union {
        uint64_t u;
        double f;
        const char *s;          /* text/bytes: arena copy, NUL-terminated */
        struct zt_value *items; /* array: n; map: 2n (k,v,k,v...); tag: 1 */
    } v;
    union {
        uint64_t tag; /* tag number for ZT_VAL_TAG (a value_build.c map: its capacity) */
        uint64_t at;  /* any other item of a deterministic (v2) decode: its file offset */
    };
};

typedef struct zt__cbor_limits {
    size_t max_depth;
    uint64_t base_offset; /* added to offsets in error messages */
    /* RFC 8949 §4.2.1 core deterministic encoding, as v2 §3.1 requires:
     * shortest heads, definite lengths, map keys in bytewise order without
     * duplicates, shortest floats and the one NaN (ZT_E_NONCANONICAL). */
    bool deterministic;
} zt__cbor_limits;

/* Decode exactly one CBOR item that spans all of [buf, buf+len). Allocation is
 * bounded by the bytes present; nesting by max_depth; no recursion. */
zt_status zt__cbor_decode(const uint8_t *buf, size_t len, const zt__cbor_limits *lim,
                          zt__arena *arena, zt_value **out, zt_error *err);

/* Decode the one CBOR item at the start of buf (bytes may follow); *used gets its size. */
zt_status zt__cbor_decode_prefix(const uint8_t *buf, size_t len, const zt__cbor_limits *lim,
                                 zt__arena *arena, zt_value **out, size_t *used, zt_error *err);

bool zt__value_text_eq(const zt_value *v, const char *s);

/* ---- the model (manifest.c) */
struct zt_component { /* widest fields first: one per component, 100,000s in a model */
    const char *role;
    const char *type;   /* NULL when absent */
    const char *digest; /* as stored */
    uint64_t offset, length, uncompressed_length;
    uint8_t digest_bin[32];
    zt_dtype dtype;
    zt_encoding encoding;
    zt_digest_kind digest_kind;
    bool has_uncompressed;
    /* v2 only (zero for 1.x): */
    bool digest_decoded;       /* the digest covers the decoded bytes */
    bool seekable;             /* zt.zstd-seekable/1 */
    bool type_unknown;         /* a logical type this library does not know */
    uint32_t shard;            /* shard index + 1; 0 = the file itself */
    const char *encoding_name; /* the id as stored, NULL when raw */
    const char *shard_name;    /* its name, or NULL */
};

struct zt_object {
    const char *name;
    size_t name_len;
    const char *format;
    const char *source_name;
    bool has_shape;
    size_t ndim;
    uint64_t *shape;
    const zt_value *attributes;
    size_t ncomp;
    struct zt_component *comps;
    bool uninterpreted; /* v2: unknown layout or logical type; structure only */
    uint64_t at;        /* v2: file offset of the object's map in the manifest */
};

typedef struct zt__model {
    zt__arena arena;
    zt_file_kind kind;
    const char *version;
    const zt_value *attributes;
    size_t nobj;
    struct zt_object *objs;
    /* open-addressing hash of object indices + 1 (0 = empty) */
    uint32_t *index;
    size_t index_cap;
    char warning[256];
    struct zt__v2_info *v2; /* v2 only: footer and shards (v2_reader.c) */
} zt__model;

zt_status zt__model_build_index(zt__model *m, zt_error *err);
const struct zt_object *zt__model_find(const zt__model *m, const char *name, size_t len);
uint64_t zt__hash(const char *s, size_t n);

/* Build the model from a decoded manifest (1.2 or 1.0 schema). */
zt_status zt__model_from_cbor(zt__model *m, const zt_value *root, zt_error *err);
/* The fast path for the common manifest shape (manifest_fast.c): builds the
 * model straight from the CBOR bytes. ZT_E_UNSUPPORTED means "not sure": the
 * caller starts over with zt__cbor_decode + zt__model_from_cbor, which also
 * produces every error message. */
zt_status zt__model_fast(zt__model *m, const uint8_t *buf, size_t len, uint64_t base_offset);
extern int zt__fast_path_disabled;
zt_status zt__model_version(zt__model *m, const zt_value *v, zt_error *err);
zt_status zt__check_duplicate_roles(const struct zt_object *o, zt_error *err);

/* ---- validation (validate.c): pure over (model, data region end) */
typedef struct zt__validate_opts {
    uint64_t data_end;   /* components must end at or before this */
    uint64_t data_start; /* components must start at or after this */
    uint64_t max_uncompressed;
    bool require_alignment;
} zt__validate_opts;
zt_status zt__validate_model(const zt__model *m, const zt__validate_opts *o, zt_error *err);
zt_status zt__validate_object(const struct zt_object *ob, const zt__validate_opts *o,
                              zt_error *err);
zt_status zt__validate_component(const struct zt_object *ob, const struct zt_component *c,
                                 const zt__validate_opts *o, zt_error *err);

/* ---- footer (footer.c) */
typedef struct zt__layout {
    zt_file_kind kind;
    uint64_t manifest_offset, manifest_length;
} zt__layout;
/* head: the first min(size, 8) bytes; tail: the last min(size, 16) bytes. */
zt_status zt__footer_locate(const uint8_t *head, const uint8_t *tail, uint64_t size,
                            uint64_t max_manifest, zt__layout *out, zt_error *err);

/* ---- file (reader.c) */
struct zt_file {
    const uint8_t *data; /* NULL for a file opened from its manifest alone */
    uint64_t size;
    int fd;
    bool mapped, owned_buf;
    bool no_data; /* zt_open_manifest: the data bytes are elsewhere */
    /* zt_open_manifest, during the call only: the caller's first and last bytes */
    const uint8_t *win_head, *win_tail;
    size_t win_head_len, win_tail_len;
    uint64_t manifest_offset, manifest_length;
    uint64_t max_uncompressed;
    zt__model model;
    char *path; /* as given to zt_open(), for v2 shards; NULL otherwise */
};
/* Parse and validate f (data, or windows, already set up); frees f on failure. */
zt_status zt__open_finish(zt_file *f, const zt_open_options *opt, zt_file **out, zt_error *err);

/* ---- digests */
/* The digest of what h has seen plus `more`, leaving h as it is; 0 if out of memory. */
size_t zt__hasher_peek(const zt_hasher *h, const void *more, size_t len, uint8_t out[32]);
bool zt__digest_parse_into(struct zt_component *c, const char *s, size_t len);

/* ---- background hashing for the writer (hash_pipe.c)
 * new() starts a thread and three spare buffers of bufsize bytes (NULL on
 * failure: hash inline instead). start() hands over a hasher, which may have
 * digested bytes already; submit() queues a written buffer for it and returns
 * a free one (waiting for one if all are queued); finish() waits for the queue
 * and returns the hasher to the caller. free() stops the thread, frees the
 * pipe's buffers (not the one the caller holds) and a hasher not finished. */
typedef struct zt__hash_pipe zt__hash_pipe;
zt__hash_pipe *zt__hash_pipe_new(size_t bufsize);
void zt__hash_pipe_start(zt__hash_pipe *p, zt_hasher *h);
uint8_t *zt__hash_pipe_submit(zt__hash_pipe *p, uint8_t *buf, size_t len);
zt_hasher *zt__hash_pipe_finish(zt__hash_pipe *p);
void zt__hash_pipe_free(zt__hash_pipe *p);

/* ---- JSON text → values, for the writer's attributes (manifest_json.c) */
zt_status zt__json_to_value(const char *text, zt__arena *arena, const zt_value **out,
                            zt_error *err);

/* ---- canonical CBOR encoding (cbor_encode.c) */
typedef struct zt__buf {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} zt__buf;
void zt__buf_free(zt__buf *b);
/* Appends n bytes (sets oom instead when memory runs out; then appends nothing more). */
void zt__buf_put(zt__buf *b, const void *p, size_t n);
void zt__cbor_head(zt__buf *b, unsigned major, uint64_t v);
void zt__cbor_text(zt__buf *b, const char *s, size_t n);
void zt__cbor_uint(zt__buf *b, uint64_t v);
void zt__cbor_value(zt__buf *b, const zt_value *v); /* maps sorted canonically */
/* Sort the index array idx[0..n) of text keys canonically (length first, then bytes). */
void zt__cbor_sort_keys(const char **keys, const size_t *lens, size_t *idx, size_t n);

/* ---- building values in an arena (value_build.c), for the foreign readers */
/* A map with room for `cap` pairs and none set yet. */
zt_value *zt__map_new(zt__arena *a, size_t cap);
/* Appends key (text) to map and returns its value slot, or NULL (out of memory
 * or the map is full). The slot is zeroed: set it with zt__val_*. */
zt_value *zt__map_put(zt__arena *a, zt_value *map, const char *key);
bool zt__val_text(zt__arena *a, zt_value *v, const char *s, size_t n);
void zt__val_uint(zt_value *v, uint64_t u);
void zt__val_int(zt_value *v, int64_t i);
void zt__val_float(zt_value *v, double d);
/* An array of n zeroed items. */
bool zt__val_array(zt__arena *a, zt_value *v, size_t n);
bool zt__utf8_valid(const uint8_t *s, size_t n);

/* ---- JSON tree -> value (manifest_json.c), for safetensors __metadata__ */
struct json_t;
zt_status zt__json_tree_to_value(const struct json_t *j, zt__arena *a, zt_value *out,
                                 zt_error *err);
/* A value as a new JSON tree (docs/JSON.md's mapping), or NULL when out of
 * memory; release with json_decref (st_view.c's __metadata__). */
struct json_t *zt__value_json(const zt_value *v);

/* ---- foreign formats */
/* Structural bytes of an open file, read with pread() when mapped (file_io.c). */
zt_status zt__read_at(const zt_file *f, uint64_t off, size_t len, uint8_t *dst, zt_error *err);
const uint8_t *zt__window_span(const zt_file *f, uint64_t off, size_t len);

/* Which reader a file's first bytes call for (safetensors.c). head holds the
 * first min(size, 9) bytes. */
zt_file_kind zt__detect_kind(const uint8_t *head, size_t n);

/* safetensors.c. The pure parser: the JSON header (n bytes, which sat at file
 * offset 8) of a file of file_size bytes -> dense objects in header order, with
 * absolute offsets, and __metadata__ as file attributes. Checks dtypes,
 * shapes, sizes, order, overlap and bounds. Does not group Ollama triples. */
zt_status zt__st_parse_header(zt__model *m, const uint8_t *json, size_t n, uint64_t file_size,
                              zt_error *err);
/* The JSON header's size from a safetensors file's first 8 bytes, checked
 * against max_header (capped at ZT_SPEC_MAX_MANIFEST) and the file size. */
zt_status zt__st_header_size(const uint8_t head[8], uint64_t file_size, uint64_t max_header,
                             uint64_t *n, zt_error *err);
/* The header cap when the caller sets none: Hugging Face's own reader's (100 MB). */
#define ZT__ST_DEFAULT_MAX_HEADER 100000000ull
/* Open a mapped or in-memory file as safetensors: header (at most max_header
 * bytes), Ollama grouping, index, validation. */
zt_status zt__open_safetensors(zt_file *f, uint64_t max_header, zt_error *err);

/* ollama.c: turn each {name} (U32) + {name}.scale [+ {name}.bias] triple of a
 * parsed safetensors model into one quantized_group object. */
zt_status zt__ollama_group(zt__model *m, zt_error *err);

/* alt.c. The pure reader: structure through rd (which must fail for bytes past
 * size); tensor data is never read, only located. */
typedef zt_status (*zt__read_fn)(void *ud, uint64_t off, size_t len, uint8_t *dst, zt_error *err);
zt_status zt__alt_parse(zt__model *m, uint64_t size, zt__read_fn rd, void *ud, zt_error *err);
zt_status zt__open_alt(zt_file *f, zt_error *err);

/* ---- zTensor v2 (v2_*.c). Messages name the spec rule ("v2 §2.4: ..."). */
#define ZT_V2_FOOTER 40
#define ZT_V2_ALIGN 4096
#define ZT_V2_MAX_DEPTH 32  /* §3.1: nesting measured from the manifest root */
#define ZT_V2_MAX_NAME 1024 /* §3.5 */
#define ZT_V2_MAX_MANIFEST (1ull << 30)
#define ZT_V2_FAIL(err, code, obj, part, has_off, off, rule, ...)                                  \
    zt__fail((err), (code), (obj), (part), (has_off), (off), "v2 " rule ": " __VA_ARGS__)
extern const uint8_t zt__v2_magic[8];

/* v2_footer.c: the pure footer parser. tail = the last 40 bytes of a file of
 * `size` bytes (>= 48). Checks magic, version, the data-shard zeros, the size
 * caps (max_manifest: the caller's, at most 1 GiB) and the manifest bounds. */
typedef struct zt__v2_footer {
    uint64_t manifest_offset, manifest_length, manifest_hash;
    uint32_t version;
} zt__v2_footer;
zt_status zt__v2_footer_parse(const uint8_t *tail, uint64_t size, uint64_t max_manifest,
                              zt__v2_footer *out, zt_error *err);
uint64_t zt__xxh3(const void *p, size_t n);

/* A shard of the root manifest (v2_shards.c). */
typedef struct zt__shard {
    const char *name;
    uint64_t size;
    const char *digest;
    zt_digest_kind kind;
    uint8_t bin[32];
    char *path;          /* malloc'ed, or NULL */
    int fd;              /* -1 when not open */
    const uint8_t *data; /* its mapping */
    zt_status status;    /* ZT_OK when usable */
    char message[256];
} zt__shard;

typedef struct zt__v2_info {
    zt__v2_footer footer;
    bool data_shard;
    size_t nshards;
    zt__shard *shards; /* sorted as in the table (canonical order) */
} zt__v2_info;

/* v2_reader.c */
zt_status zt__open_v2(zt_file *f, uint64_t max_manifest, zt_error *err);
void zt__v2_close(zt_file *f);
/* Builds and validates a v2 model from manifest bytes: the pure core shared
 * by the reader, the generations scan and the fuzzers. file_size is the size
 * of the containing file; blobs must end before file_size - 40. */
zt_status zt__v2_parse_manifest(zt__model *m, const uint8_t *buf, size_t len, uint64_t file_size,
                                uint64_t manifest_offset, uint64_t max_uncompressed, zt_error *err);

/* v2_manifest.c: the v2 schema -> model (names, types of fields, shapes). */
zt_status zt__v2_model_from_cbor(zt__model *m, const zt_value *root, zt_error *err);
/* Its checks that the fast path (v2_fast.c) shares: root or object
 * attributes, a digest string, the shard table, a shard by name (index + 1). */
zt_status zt__v2_attributes(const zt_value *v, const char *obj, const zt_value **out,
                            zt_error *err);
bool zt__v2_digest_parse(const zt_value *v, zt_digest_kind *kind, uint8_t bin[32], bool any_alg);
zt_status zt__v2_parse_shards(zt__model *m, const zt_value *v, zt_error *err);
uint32_t zt__v2_find_shard(const zt__v2_info *vi, const char *s, size_t n);
/* v2_fast.c: the model straight from the manifest's CBOR bytes when it has
 * the usual shape; ZT_E_UNSUPPORTED means "not sure" (the caller starts over
 * with zt__cbor_decode + zt__v2_model_from_cbor, which words every error).
 * The CBOR is checked to be deterministic as the general decoder checks it.
 * zt__fast_path_disabled turns it off too (the tests compare the two). */
zt_status zt__v2_model_fast(zt__model *m, const uint8_t *buf, size_t len, uint64_t base_offset);
/* v2_validate.c: §3.6 items 3-6 and the layouts' metadata rules. */
zt_status zt__v2_validate(zt__model *m, uint64_t file_size, uint64_t manifest_offset,
                          uint64_t manifest_length, uint64_t max_uncompressed, zt_error *err);
/* The type and layout rules of one object, without its blobs (the writer's). */
zt_status zt__v2_check_object(struct zt_object *o, zt_error *err);
/* v2_manifest.c: §3.1's attribute values (no tags, no other simple values).
 * at: the offset of v's container in a decoded manifest, or UINT64_MAX for
 * values that were not decoded from one (the writer's). */
zt_status zt__v2_attr_value_ok(const zt_value *v, const char *obj, uint64_t at, zt_error *err);
/* v2/v2_writer.c: what the writer needs to write v2. */
bool zt__v2_name_ok(const char *s, size_t n);
zt_status zt__v2_writer_check(struct zt_object *o, zt_error *err);
zt_status zt__v2_attrs_check(const zt_value *attributes, zt_error *err);
void zt__v2_encode_manifest(zt__buf *b, const struct zt_object *const *objs, size_t n,
                            const zt_value *attributes);
void zt__v2_footer_bytes(uint8_t out[40], uint64_t off, uint64_t len, uint64_t hash);
void zt__v2_seek_table(zt__buf *b, const uint32_t *csize, const uint32_t *dsize, size_t frames);
#define ZT_V2_FRAME (1u << 20) /* content of each zt.zstd-seekable/1 frame the writer makes */
/* v2_types.c: the registered logical types (Appendix A) and size functions. */
typedef struct zt__v2_type {
    const char *name;
    zt_dtype dtype;
    unsigned bits; /* per logical element */
} zt__v2_type;
const zt__v2_type *zt__v2_type_find(const char *name);
/* Bits per logical element of a part (its type's, else 8 x width); 0 when unknown. */
unsigned zt__v2_elem_bits(const struct zt_component *c);
/* size(n) = ceil(n x bits / 8); false on overflow. */
bool zt__v2_size(unsigned bits, uint64_t n, uint64_t *out);
uint64_t zt__v2_decoded_size(const struct zt_component *c);
/* v2_profiles.c: metadata rules of the registered layouts at open. */
zt_status zt__v2_check_layout(struct zt_object *o, zt_error *err);
/* v2_data.c: the layouts' data rules. */
zt_status zt__v2_check_data(const zt_file *f, const struct zt_object *o, zt_error *err);
/* v2_shards.c */
zt_status zt__v2_open_shards(zt_file *f);
zt_status zt__v2_component_verify(const zt_file *f, const struct zt_object *o,
                                  const struct zt_component *c, int *checked, zt_error *err);
/* file_io.c: where a component's stored bytes are: the file's own mapping or
 * a shard's. */
typedef struct zt__source {
    const uint8_t *data;
    int fd;      /* for pread, or -1 (memory) */
    bool mapped; /* read through fd with pread (truncation-safe) */
} zt__source;
zt_status zt__component_source(const zt_file *f, const struct zt_component *c, zt__source *out,
                               zt_error *err);
/* v2_generations.c: calls fn on each [a, b) of the file outside the magic,
 * the footer, the manifest and every blob of this file, in order. */
typedef zt_status (*zt__gap_fn)(void *ud, uint64_t a, uint64_t b);
zt_status zt__v2_walk_gaps(const zt_file *f, zt__gap_fn fn, void *ud, zt_error *err);
/* v2_seekable.c: the zt.zstd-seekable/1 rules that the seek table and frame
 * headers show, checked before decoding. */
zt_status zt__seekable_check(const zt_file *f, const char *obj, const struct zt_component *c,
                             zt_error *err);
/* cbor_encode.c: deterministic (RFC 8949 §4.2.1) encoding of a value whose
 * maps are already in order (a decoded v2 manifest's), shortest floats. */
void zt__cbor_value_det(zt__buf *b, const zt_value *v);
/* The same for any value (maps sorted here; quadratic in a map's size). */
void zt__cbor_value_det_sorted(zt__buf *b, const zt_value *v);
void zt__cbor_raw(zt__buf *b, const void *p, size_t n);
void zt__cbor_float_det(zt__buf *b, double f);
/* Is x exactly a value of a binary float with `sig` significand bits, the
 * smallest subnormal 2^min_exp and the largest exponent max_e as frexp()
 * counts (half: 11, -24, 16; single: 24, -149, 128)? */
bool zt__float_fits(double x, int sig, int min_exp, int max_e);

#endif
