/*
 * libztensor: read, validate and write zTensor (.zt) files.
 *
 * One public header. Every handle is opaque. Every function that can fail
 * returns a zt_status and, when given a zt_error, fills it with a message that
 * names the object, the component and the byte offset involved.
 *
 * Ownership, stated once for the whole API:
 *  - zt_file, zt_writer, zt_decoder are created by zt_*_open/new and released
 *    by the matching zt_*_close/free, which accept NULL.
 *  - const pointers returned by accessors (objects, components, values, names,
 *    shapes) are owned by the zt_file and live until zt_close().
 *  - char * returned by functions named *_json are malloc'ed: release them with
 *    zt_free().
 *
 * Thread safety: a zt_file is immutable after zt_open() and may be read from
 * any number of threads. A zt_writer or zt_decoder is used by one thread.
 */
#ifndef ZTENSOR_H
#define ZTENSOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ZT_BUILDING_LIBRARY)
#define ZT_API __attribute__((visibility("default")))
#else
#define ZT_API
#endif

#define ZT_VERSION_MAJOR 0
#define ZT_VERSION_MINOR 1
#define ZT_VERSION_PATCH 0
#define ZT_VERSION_STRING "0.1.0"
/* MAJOR * 10000 + MINOR * 100 + PATCH, as zstd's ZSTD_VERSION_NUMBER. */
#define ZT_VERSION_NUMBER (ZT_VERSION_MAJOR * 10000 + ZT_VERSION_MINOR * 100 + ZT_VERSION_PATCH)

/* The newest zTensor 1.x manifest version this library reads and writes. */
#define ZT_FORMAT_VERSION "1.2.0"
/* The zTensor container version 2 (spec Draft 4), read and written too. */
#define ZT_FORMAT_V2 2

/* Defaults of zt_open_options. */
#define ZT_DEFAULT_MAX_MANIFEST (64ull << 20)     /* 64 MiB */
#define ZT_SPEC_MAX_MANIFEST (1ull << 30)         /* the spec's "1 GB" ceiling, read as 1 GiB */
#define ZT_DEFAULT_MAX_UNCOMPRESSED (64ull << 30) /* 64 GiB per component */
#define ZT_MAX_DEPTH 64                           /* CBOR nesting */
#define ZT_MAX_NDIM 64
#define ZT_ALIGNMENT 64
/* The largest zstd window, as log2 of bytes, that the writer produces (at any
 * level) and zt_decoder accepts: 8 MiB, what zstd levels up to 19 use. A
 * decoder holds about its frame's window plus 560 KiB; frames asking for more
 * (zstd --ultra -20 to -22, --long) are refused with ZT_E_LIMIT. */
#define ZT_ZSTD_WINDOW_LOG_MAX 23

/* The version of the library actually loaded (ZT_VERSION_NUMBER and
 * ZT_VERSION_STRING of the build), which may differ from the header's a
 * program was compiled with. The string is static. */
ZT_API unsigned zt_version_number(void);
ZT_API const char *zt_version_string(void);

/* ---------------------------------------------------------------- errors */

/* Stable, explicitly numbered codes. Never renumber; only append. */
#define ZT_STATUS_LIST(X)                                                                          \
    X(ZT_OK, 0, "ok")                                                                              \
    X(ZT_E_NOMEM, 1, "out of memory")                                                              \
    X(ZT_E_IO, 2, "I/O error")                                                                     \
    X(ZT_E_ARG, 3, "invalid argument")                                                             \
    X(ZT_E_TRUNCATED, 10, "file truncated")                                                        \
    X(ZT_E_MAGIC, 11, "bad magic")                                                                 \
    X(ZT_E_MANIFEST_SIZE, 12, "bad manifest size")                                                 \
    X(ZT_E_CBOR, 13, "malformed CBOR")                                                             \
    X(ZT_E_DEPTH, 14, "nesting too deep")                                                          \
    X(ZT_E_LIMIT, 15, "limit exceeded")                                                            \
    X(ZT_E_VERSION, 20, "unsupported version")                                                     \
    X(ZT_E_SCHEMA, 21, "manifest schema violation")                                                \
    X(ZT_E_DUPLICATE, 22, "duplicate name")                                                        \
    X(ZT_E_DTYPE, 30, "bad dtype")                                                                 \
    X(ZT_E_TYPE, 31, "bad logical type")                                                           \
    X(ZT_E_ALIGN, 32, "misaligned offset")                                                         \
    X(ZT_E_BOUNDS, 33, "out of bounds")                                                            \
    X(ZT_E_SIZE, 34, "size mismatch")                                                              \
    X(ZT_E_ENCODING, 35, "bad encoding")                                                           \
    X(ZT_E_DIGEST_FORMAT, 36, "malformed digest")                                                  \
    X(ZT_E_COMPONENTS, 37, "missing or invalid component")                                         \
    X(ZT_E_DIGEST_MISMATCH, 40, "digest mismatch")                                                 \
    X(ZT_E_ZSTD, 41, "zstd error")                                                                 \
    X(ZT_E_NOT_FOUND, 42, "not found")                                                             \
    X(ZT_E_STATE, 43, "call out of order")                                                         \
    X(ZT_E_UNSUPPORTED, 44, "unsupported")                                                         \
    X(ZT_E_JSON, 45, "JSON error")                                                                 \
    X(ZT_E_OVERLAP, 46, "overlapping data")                                                        \
    X(ZT_E_NOSPACE, 47, "no space left on device")                                                 \
    X(ZT_E_CHANGED, 50, "file changed at the origin")                                              \
    X(ZT_E_HTTP, 51, "HTTP error")                                                                 \
    X(ZT_E_NETWORK, 52, "network error")                                                           \
    X(ZT_E_MANIFEST_HASH, 60, "manifest hash mismatch")                                            \
    X(ZT_E_NONCANONICAL, 61, "not deterministic CBOR")                                             \
    X(ZT_E_NAME, 62, "name rule violated")                                                         \
    X(ZT_E_LAYOUT, 63, "layout profile rule violated")                                             \
    X(ZT_E_SHARD, 64, "shard missing or wrong")

typedef enum zt_status {
#define ZT__ENUM(name, num, text) name = num,
    ZT_STATUS_LIST(ZT__ENUM)
#undef ZT__ENUM
} zt_status;

/* "ZT_E_BOUNDS" for ZT_E_BOUNDS; "ZT_E_UNKNOWN" for a number not in the list. */
ZT_API const char *zt_status_name(zt_status s);
/* "out of bounds" for ZT_E_BOUNDS. Static strings. */
ZT_API const char *zt_status_text(zt_status s);

/* Filled by failing calls. Caller-allocated; no ownership. `message` is the
 * complete human sentence and already names object, component and offset. */
typedef struct zt_error {
    zt_status code;
    int has_offset;      /* offset below is meaningful */
    uint64_t offset;     /* byte offset in the file (or in the input) */
    char object[256];    /* object name, "" if none */
    char component[128]; /* component role, "" if none */
    char message[768];
} zt_error;

/* --------------------------------------------------------------- memory */

/* Replace the allocator used by the library itself (not by zstd, OpenSSL or
 * jansson). Meant for tests that fail the Nth allocation. Not thread safe:
 * call before any other zt_ function. NULL arguments restore the default. */
ZT_API void zt_set_allocator(void *(*malloc_fn)(size_t), void *(*realloc_fn)(void *, size_t),
                             void (*free_fn)(void *));
/* Release memory that the API documented as "release with zt_free". */
ZT_API void zt_free(void *p);

/* ---------------------------------------------------------------- types */

typedef enum zt_dtype {
    ZT_DTYPE_INVALID = 0,
    ZT_DTYPE_F64,
    ZT_DTYPE_F32,
    ZT_DTYPE_F16,
    ZT_DTYPE_BF16,
    ZT_DTYPE_I64,
    ZT_DTYPE_I32,
    ZT_DTYPE_I16,
    ZT_DTYPE_I8,
    ZT_DTYPE_U64,
    ZT_DTYPE_U32,
    ZT_DTYPE_U16,
    ZT_DTYPE_U8,
    ZT_DTYPE_BOOL,
    ZT_DTYPE_COUNT
} zt_dtype;

/* "f32"; NULL for an invalid value. */
ZT_API const char *zt_dtype_name(zt_dtype d);
/* Accepts the 1.2 short names ("f32"); returns ZT_DTYPE_INVALID otherwise. */
ZT_API zt_dtype zt_dtype_parse(const char *name, size_t len);
/* Accepts the 1.0 long names ("float32", "bfloat16", "uint8", "bool"). */
ZT_API zt_dtype zt_dtype_parse_long(const char *name, size_t len);
/* Bytes per element: 8, 4, 2 or 1; 0 for an invalid value. */
ZT_API unsigned zt_dtype_width(zt_dtype d);

/* For a known logical type: its required storage dtype and ratio (storage
 * elements per logical element). Returns 0 for an unknown logical type. */
ZT_API int zt_logical_type_info(const char *type, zt_dtype *storage, unsigned *ratio);

/* ZT_ENC_ZSTD covers every zstd stream (v2's "zstd" and "zt.zstd-seekable/1"
 * too: zt_component_encoding_name() tells them apart). ZT_ENC_OTHER is a v2
 * encoding this library does not know: its stored bytes are readable with
 * zt_component_stored(), but decoding it fails with ZT_E_UNSUPPORTED. */
typedef enum zt_encoding { ZT_ENC_RAW = 0, ZT_ENC_ZSTD = 1, ZT_ENC_OTHER = 2 } zt_encoding;
typedef enum zt_digest_kind {
    ZT_DIGEST_NONE = 0,
    ZT_DIGEST_SHA256 = 1,
    ZT_DIGEST_CRC32C = 2,
    ZT_DIGEST_XXH3 = 3 /* XXH3-64, seed 0; 8 bytes, big-endian as printed */
} zt_digest_kind;

/* What kind of file a zt_file was read from. */
typedef enum zt_file_kind {
    ZT_KIND_ZT_1_2 = 1, /* footer magic; "objects" manifest */
    ZT_KIND_ZT_1_0 = 2, /* no footer magic; "tensors" manifest */
    ZT_KIND_SAFETENSORS = 3,
    ZT_KIND_ALT = 4,
    ZT_KIND_ZT_2 = 5 /* container version 2: magic "\x89ZT2\r\n\x1a\n", 40-byte footer */
} zt_file_kind;
/* "zt-1.2", "zt-1.0", "safetensors", "alt", "zt-2". */
ZT_API const char *zt_file_kind_name(zt_file_kind k);

/* --------------------------------------------------------------- values */

/* A CBOR (or JSON) value from a manifest's attributes, read-only. */
typedef struct zt_value zt_value;
typedef enum zt_value_kind {
    ZT_VAL_UINT = 0, /* zt_value_uint() */
    ZT_VAL_NEGINT,   /* value is -1 - zt_value_uint() */
    ZT_VAL_BYTES,    /* zt_value_data() */
    ZT_VAL_TEXT,     /* zt_value_data(); valid UTF-8; NUL-terminated */
    ZT_VAL_ARRAY,    /* zt_value_count(), zt_value_item() */
    ZT_VAL_MAP,      /* zt_value_count(), zt_value_key(), zt_value_item() */
    ZT_VAL_TAG,      /* zt_value_uint() is the tag, zt_value_item(v, 0) the content */
    ZT_VAL_FALSE,
    ZT_VAL_TRUE,
    ZT_VAL_NULL,
    ZT_VAL_UNDEFINED,
    ZT_VAL_SIMPLE, /* other simple value: zt_value_uint() */
    ZT_VAL_FLOAT   /* zt_value_float() */
} zt_value_kind;

ZT_API zt_value_kind zt_value_get_kind(const zt_value *v);
ZT_API uint64_t zt_value_uint(const zt_value *v);
ZT_API double zt_value_float(const zt_value *v);
ZT_API const char *zt_value_data(const zt_value *v, size_t *len);
ZT_API size_t zt_value_count(const zt_value *v);
ZT_API const zt_value *zt_value_item(const zt_value *v, size_t i);
ZT_API const zt_value *zt_value_key(const zt_value *v, size_t i);
/* For a map: the value under a text key, or NULL. */
ZT_API const zt_value *zt_value_get(const zt_value *map, const char *key);

/* --------------------------------------------------------------- reader */

typedef struct zt_file zt_file;
typedef struct zt_object zt_object;
typedef struct zt_component zt_component;

/* Options structs begin with their size, so fields can be added without
 * breaking programs built against an older header: set it with the _init
 * function (or to sizeof the struct); 0 means the first layout. */
typedef struct zt_open_options {
    size_t size;                /* sizeof(zt_open_options); zt_open_options_init sets it */
    uint64_t max_manifest_size; /* 0 = ZT_DEFAULT_MAX_MANIFEST; capped at ZT_SPEC_MAX_MANIFEST */
    uint64_t max_uncompressed;  /* 0 = ZT_DEFAULT_MAX_UNCOMPRESSED */
    unsigned flags;             /* ZT_OPEN_* */
} zt_open_options;

/* Zeroes *o (every default) and sets its size. */
ZT_API void zt_open_options_init(zt_open_options *o);

/* Do not mmap; read the whole file into memory (for filesystems without mmap). */
#define ZT_OPEN_NO_MMAP 1u
/* For .zt, .safetensors and .alt files, the kind is detected from the bytes. */

/* Open and validate `path`. On success *out owns the mapping and an fd. */
ZT_API zt_status zt_open(const char *path, const zt_open_options *opt, zt_file **out,
                         zt_error *err);
/* Same over an fd the caller keeps: the library dup()s it. */
ZT_API zt_status zt_open_fd(int fd, const zt_open_options *opt, zt_file **out, zt_error *err);
/* Same over bytes in memory, which must outlive the zt_file (no copy).
 * This is the pure entry point the fuzzers use. zt_file_fd() returns -1. */
ZT_API zt_status zt_open_memory(const void *data, size_t len, const zt_open_options *opt,
                                zt_file **out, zt_error *err);
ZT_API void zt_close(zt_file *f);

/* Let go of an open file's fd and mapping (or read buffer), keeping all that
 * was parsed from its manifest: a server holding many files open this way
 * needs no fd for the ones not in use. Until zt_file_attach_fd(), the file
 * behaves as one from zt_open_manifest(): accessors work, zt_file_fd() is -1
 * and the calls that read data return ZT_E_UNSUPPORTED. ZT_E_UNSUPPORTED for
 * a file opened from memory or whose data lies in shards (v2 Appendix B);
 * detaching a detached file does nothing. Not thread-safe: no other call on
 * f may run meanwhile. */
ZT_API zt_status zt_file_detach(zt_file *f, zt_error *err);
/* Give a detached file its bytes again, from fd (taken on success, left to
 * the caller on failure). fd must be the same file version (the caller
 * checks identity: device, inode, mtime); a size other than the one opened is
 * ZT_E_IO. The mapping follows opt's ZT_OPEN_NO_MMAP as zt_open() does.
 * Attaching an attached file is ZT_E_ARG. Not thread-safe, as detach. */
ZT_API zt_status zt_file_attach_fd(zt_file *f, int fd, const zt_open_options *opt, zt_error *err);

/* A file known only by its manifest, for a reader whose data bytes are
 * elsewhere (libztensor-remote reads them over HTTP).
 *
 * zt_manifest_locate: where the manifest lies, from the file's first and last
 * bytes. head holds the first head_len bytes of a file of file_size bytes (at
 * least min(file_size, 16)); tail the last tail_len bytes (at least
 * min(file_size, 16), for zTensor v2 min(file_size, 40); unused, and may be
 * NULL, for safetensors). The header magic, footer, sizes and limits are
 * checked as zt_open() checks them. *offset and *length get the manifest's
 * byte range: for .zt the CBOR manifest (the footer follows it to the end of
 * the file); for safetensors the JSON header (after the 8-byte size); for a
 * v2 data shard (§7.2, no manifest) the empty range at its footer. ZT_E_UNSUPPORTED for ALT files,
 * whose tensor table is not in one place. *kind (may be NULL) is set from
 * the head alone before anything else is checked, so a caller that gave no
 * tail learns whether it needs one (not for safetensors; ZT_E_ARG for .zt).
 *
 * zt_open_manifest: open and validate such a file from its bytes at both
 * ends: head and tail as above, but together they must hold the manifest: for
 * .zt the tail from the manifest's first byte to the end of the file, for
 * safetensors the head up to the header's end. Every check of zt_open() runs,
 * component bounds against file_size included. The bytes are read during the
 * call only (the caller keeps them). Accessors and zt_decoder_new/push work;
 * zt_file_bytes() and zt_component_stored() return NULL, zt_file_fd() -1, and
 * the calls that read data (zt_component_read/stream/verify, zt_decoder_read)
 * return ZT_E_UNSUPPORTED. A v2 root's shards are not located (its parts in
 * shards keep their offsets in those files); a zt.zstd-seekable/1 part's
 * seek table, which needs the data bytes, is not checked by zt_decoder_new.
 * Release with zt_close(). */
ZT_API zt_status zt_manifest_locate(const void *head, size_t head_len, const void *tail,
                                    size_t tail_len, uint64_t file_size, const zt_open_options *opt,
                                    zt_file_kind *kind, uint64_t *offset, uint64_t *length,
                                    zt_error *err);
ZT_API zt_status zt_open_manifest(const void *head, size_t head_len, const void *tail,
                                  size_t tail_len, uint64_t file_size, const zt_open_options *opt,
                                  zt_file **out, zt_error *err);

ZT_API zt_file_kind zt_file_get_kind(const zt_file *f);
/* The manifest's version string ("1.2.0", "1.0"); "" for foreign formats. */
ZT_API const char *zt_file_version(const zt_file *f);
/* A warning from opening (e.g. a newer minor version), or NULL. */
ZT_API const char *zt_file_warning(const zt_file *f);
ZT_API uint64_t zt_file_size(const zt_file *f);
/* Start of the mapped bytes, and the fd (-1 for zt_open_memory). */
ZT_API const uint8_t *zt_file_bytes(const zt_file *f);
ZT_API int zt_file_fd(const zt_file *f);
/* Byte range of the manifest (CBOR or JSON header) inside the file. */
ZT_API uint64_t zt_file_manifest_offset(const zt_file *f);
ZT_API uint64_t zt_file_manifest_length(const zt_file *f);
/* File attributes as a map, or NULL when the file has none. */
ZT_API const zt_value *zt_file_attributes(const zt_file *f);

/* Objects in manifest order. */
ZT_API size_t zt_file_object_count(const zt_file *f);
ZT_API const zt_object *zt_file_object_at(const zt_file *f, size_t i);
/* Exact-name lookup (hash table); NULL when absent. */
ZT_API const zt_object *zt_file_find_object(const zt_file *f, const char *name, size_t len);

ZT_API const char *zt_object_name(const zt_object *o);
ZT_API size_t zt_object_name_len(const zt_object *o);
/* "dense", "sparse_csr", ... or an unknown format string as stored. */
ZT_API const char *zt_object_format(const zt_object *o);
ZT_API size_t zt_object_ndim(const zt_object *o);
ZT_API const uint64_t *zt_object_shape(const zt_object *o);
/* 1 when the object carries a shape. */
ZT_API int zt_object_has_shape(const zt_object *o);
ZT_API const zt_value *zt_object_attributes(const zt_object *o);
ZT_API size_t zt_object_component_count(const zt_object *o);
ZT_API const zt_component *zt_object_component_at(const zt_object *o, size_t i);
ZT_API const zt_component *zt_object_find_component(const zt_object *o, const char *role);
/* For foreign formats: the tensor name in the original file ("" if none). */
ZT_API const char *zt_object_source_name(const zt_object *o);
/* Where a tensor of the original file lives: an object's own name gives its
 * "data" component ("packed_weight" for quantized_group); for an Ollama
 * quantized triple read from safetensors, "{name}.scale" and "{name}.bias" give
 * the "scales" and "zeros" components of object "{name}" (the mapping is in
 * docs/FOREIGN-FORMATS.md). *obj and *comp point into f. ZT_E_NOT_FOUND when
 * no tensor has that name. */
ZT_API zt_status zt_file_find_tensor(const zt_file *f, const char *name, size_t len,
                                     const zt_object **obj, const zt_component **comp);
/* The safetensors dtype ("F32", "F8_E4M3") of a storage dtype with a logical
 * type (NULL for none); NULL when safetensors cannot express the pair. Static. */
ZT_API const char *zt_safetensors_dtype(zt_dtype dtype, const char *type);

ZT_API const char *zt_component_role(const zt_component *c);
ZT_API zt_dtype zt_component_dtype(const zt_component *c);
/* Logical type as stored, or NULL when absent. */
ZT_API const char *zt_component_type(const zt_component *c);
ZT_API uint64_t zt_component_offset(const zt_component *c);
ZT_API uint64_t zt_component_length(const zt_component *c);
ZT_API zt_encoding zt_component_encoding(const zt_component *c);
/* uncompressed_length for zstd; equals length for raw. */
ZT_API uint64_t zt_component_decoded_length(const zt_component *c);
ZT_API zt_digest_kind zt_component_digest_kind(const zt_component *c);
/* The digest string as stored ("sha256:ab..."), or NULL. */
ZT_API const char *zt_component_digest(const zt_component *c);
/* Binary digest: 32 bytes for sha256, 4 (big-endian value) for crc32c. */
ZT_API const uint8_t *zt_component_digest_bytes(const zt_component *c, size_t *len);

/* Zero-copy pointer to the stored bytes (any encoding); valid until zt_close().
 * NULL for a v2 part in a shard that is not available (zt_file_shard_status). */
ZT_API const uint8_t *zt_component_stored(const zt_file *f, const zt_component *c);

/* Decoded bytes into buf (cap >= zt_component_decoded_length). *out_len gets
 * the number of bytes written. zstd output is capped at uncompressed_length and
 * must equal it. */
ZT_API zt_status zt_component_read(const zt_file *f, const zt_component *c, void *buf, size_t cap,
                                   size_t *out_len, zt_error *err);

/* Decoded bytes pushed to a callback. A non-zero return from sink stops with ZT_E_IO. */
typedef int (*zt_sink_fn)(void *ud, const void *data, size_t len);
ZT_API zt_status zt_component_stream(const zt_file *f, const zt_component *c, zt_sink_fn sink,
                                     void *ud, zt_error *err);

/* Check a zstd component's frames without decoding them: each frame header
 * (magic, no dictionary, window within ZT_ZSTD_WINDOW_LOG_MAX), each block
 * header (type, size), frames that end exactly at the component's end, and the
 * declared sizes (frame content sizes, when every frame has one, add up to
 * uncompressed_length; the blocks can hold that many bytes). Reads the 3-byte
 * header of every block (one per 128 KiB decoded at most) and nothing else, so
 * corrupt data inside a block is found only by decoding. ZT_OK for raw
 * components. ZT_E_ZSTD for a broken or cut-off frame, ZT_E_SIZE when the
 * sizes disagree, ZT_E_LIMIT for a window too large; the message names the
 * object, the component and the byte of the file. */
ZT_API zt_status zt_component_check_frames(const zt_file *f, const zt_component *c, zt_error *err);

/* Pull decoder: fills buf with the next decoded bytes; *out_len == 0 at the end.
 * A frame whose window exceeds ZT_ZSTD_WINDOW_LOG_MAX is ZT_E_LIMIT. */
typedef struct zt_decoder zt_decoder;
ZT_API zt_status zt_decoder_new(const zt_file *f, const zt_component *c, zt_decoder **out,
                                zt_error *err);
ZT_API zt_status zt_decoder_read(zt_decoder *d, void *buf, size_t cap, size_t *out_len,
                                 zt_error *err);
/* Push decoding, for stored bytes that arrive in pieces (from a socket) or
 * for a file opened with zt_open_manifest: push() takes the next `len` stored
 * bytes of the component, in order, and hands the decoded bytes to sink;
 * end() checks that the stored bytes are complete and decoded to exactly
 * zt_component_decoded_length() bytes. The same checks as zt_decoder_read:
 * more stored or decoded bytes than the manifest says is ZT_E_SIZE, a bad
 * zstd stream ZT_E_ZSTD; a non-zero return from sink stops with ZT_E_IO. A
 * decoder is either pulled (zt_decoder_read) or pushed, not both (ZT_E_STATE). */
ZT_API zt_status zt_decoder_push(zt_decoder *d, const void *stored, size_t len, zt_sink_fn sink,
                                 void *ud, zt_error *err);
ZT_API zt_status zt_decoder_push_end(zt_decoder *d, zt_sink_fn sink, void *ud, zt_error *err);
ZT_API void zt_decoder_free(zt_decoder *d);
/* zt_decoder_new and zt_component_check_frames over a copy of the
 * component's stored bytes kept elsewhere (a cache of a file opened with
 * zt_open_manifest): its zt_component_length() bytes at offset `at` of fd,
 * read with pread. fd stays the caller's, open while the decoder lives. The
 * same checks, but not a v2 seekable part's seek table; messages give the
 * component's offsets in its own file. */
ZT_API zt_status zt_decoder_new_at(const zt_file *f, const zt_component *c, int fd, uint64_t at,
                                   zt_decoder **out, zt_error *err);
ZT_API zt_status zt_component_check_frames_at(const zt_file *f, const zt_component *c, int fd,
                                              uint64_t at, zt_error *err);

/* Recompute the component's digest over its stored bytes. ZT_OK when it
 * matches or when there is no digest (*checked = 0 then). */
ZT_API zt_status zt_component_verify(const zt_file *f, const zt_object *o, const zt_component *c,
                                     int *checked, zt_error *err);

/* Verify a whole file: every component's digest recomputed over its stored
 * bytes and every zstd stream decoded in full (its uncompressed_length
 * checked), on several threads. A v2 file: every part decoded and its digest
 * checked over the decoded bytes, the layouts' data rules, and every shard
 * (§7.3; those of a root opened from an fd or memory cannot be located and
 * are not checked, nor are their parts). Options may be NULL (defaults). Returns ZT_OK
 * when every component is good, else the first problem in manifest order
 * (also in *err); on_problem, when set, is called once per problem in
 * manifest order, on the calling thread, after all components are checked
 * (with stop_at_first, only the problems found before the workers stopped). */
typedef struct zt_verify_options {
    size_t size;       /* sizeof(zt_verify_options) as compiled; zt_verify_options_init sets it */
    unsigned threads;  /* 0 = one per core; at most 8 are used */
    int stop_at_first; /* stop at the first problem instead of checking every component */
    /* Called for each problem (see above); err is valid during the call only. */
    void (*on_problem)(void *ud, const zt_error *err);
    /* Called on the calling thread while the workers run (e.g. to fsync). */
    void (*meanwhile)(void *ud);
    void *ud;
    /* Optional, for a caller that hashed the bytes as it wrote them (ztensord's
     * uploads): called on a worker for each SHA-256 component of a 1.x file; it
     * returns 1 with the SHA-256 of bytes [offset, offset + length) in out, or 0
     * to have them read and hashed here. The result is compared with the
     * manifest exactly as a digest computed here. */
    int (*known_sha256)(void *known_ud, uint64_t offset, uint64_t length, uint8_t out[32]);
    void *known_ud;
} zt_verify_options;
ZT_API void zt_verify_options_init(zt_verify_options *o);

typedef struct zt_verify_result {
    uint64_t components; /* components in the file */
    uint64_t digests;    /* of them, with a digest that was recomputed */
    uint64_t problems;   /* problems found */
} zt_verify_result;
/* res may be NULL. */
ZT_API zt_status zt_file_verify(const zt_file *f, const zt_verify_options *opt,
                                zt_verify_result *res, zt_error *err);

/* ----------------------------------------------------------- zTensor v2
 * A v2 file fills the same model: objects with a shape, "format" is the
 * layout id ("dense", "zt.sparse_csr/1", ...), components are its parts, and
 * offset/length are the part's blob. The accessors below say what v2 adds;
 * on other kinds they return the neutral value. Mapping: docs/FORMAT-NOTES.md. */

/* The footer's manifest_hash (XXH3-64 of the manifest bytes); 0 otherwise. */
ZT_API uint64_t zt_file_manifest_hash(const zt_file *f);
/* 1 for a v2 data shard (§7.2): a footer without a manifest, no objects. */
ZT_API int zt_file_is_data_shard(const zt_file *f);
/* The encoding as stored: "raw", "zstd", "zt.zstd-seekable/1" or an id this
 * library does not know (ZT_ENC_OTHER). Static or owned by the zt_file. */
ZT_API const char *zt_component_encoding_name(const zt_component *c);
/* Which bytes a component's digest covers: 1.x digests cover the stored
 * bytes, v2 digests the decoded bytes. For a raw component they are the same
 * bytes; for an encoded one a digest names only that representation. */
typedef enum zt_digest_scope { ZT_DIGEST_OF_STORED = 0, ZT_DIGEST_OF_DECODED = 1 } zt_digest_scope;
ZT_API zt_digest_scope zt_component_digest_scope(const zt_component *c);
/* 0 when the object is exposed structurally only (v2 §4.2, §5.2): its layout,
 * or a part's logical type, is one this library does not know, so its layout
 * rules were not checked; 1 otherwise. */
ZT_API int zt_object_interpreted(const zt_object *o);
/* The data rules of the object's layout (v2: CSR structure, COO bounds and
 * uniqueness, bool bytes, the f4_e2m1 trailing nibble), which need its bytes;
 * ZT_OK for objects without such rules. zt_file_verify() runs it. */
ZT_API zt_status zt_object_check_data(const zt_file *f, const zt_object *o, zt_error *err);

/* Shards (§7): the root manifest's shard table, in table order. Names and
 * digests are owned by f. */
ZT_API size_t zt_file_shard_count(const zt_file *f);
ZT_API const char *zt_file_shard_name(const zt_file *f, size_t i);
ZT_API uint64_t zt_file_shard_size(const zt_file *f, size_t i);
ZT_API const char *zt_file_shard_digest(const zt_file *f, size_t i);
/* Where shard i was looked for: "<stem>-<name>.zt" beside a root opened by
 * path (Appendix B); NULL for a root opened from an fd or memory. Owned by f. */
ZT_API const char *zt_file_shard_path(const zt_file *f, size_t i);
/* ZT_OK when shard i is open and passed §7.3 steps 1-2 (magic, version, exact
 * size); else the reason, also in *err. */
ZT_API zt_status zt_file_shard_status(const zt_file *f, size_t i, zt_error *err);
/* §7.3 step 3: the whole-file digest of shard i (reads the whole shard). */
ZT_API zt_status zt_file_shard_verify(const zt_file *f, size_t i, zt_error *err);
/* The shard holding a component's blob, or -1 for the file itself. */
ZT_API int zt_component_shard(const zt_component *c);
/* The fd of the file holding a component's stored bytes at its offset (the
 * file's own or its shard's), or -1 (memory file, shard not available). The
 * fd is owned by f: dup() it to keep it. */
ZT_API int zt_component_fd(const zt_file *f, const zt_component *c);

/* The content digest (§6.4) with `kind` (ZT_DIGEST_SHA256 or ZT_DIGEST_XXH3)
 * into out as "<algo>:<hex>". ZT_E_NOT_FOUND when it is undefined (a part
 * without a digest, or a data shard); ZT_E_UNSUPPORTED for other kinds. */
ZT_API zt_status zt_file_content_digest(const zt_file *f, zt_digest_kind kind, char out[80],
                                        zt_error *err);

/* A name for these exact bytes, computed without reading the blobs: defined
 * for a v2 file whose every byte is the magic, a raw blob of a part that has
 * a digest, zero padding, the manifest or the footer (the bytes outside the
 * blobs are read once to check they are zero, at most 64 MiB of them). It is
 * "sha256:<hex>" of the content digest, the footer and the size, so every
 * copy of the file gets the same one (ztensord's /raw ETag). ZT_E_NOT_FOUND
 * when undefined; ZT_E_UNSUPPORTED for other kinds. */
ZT_API zt_status zt_file_identity(const zt_file *f, char out[80], zt_error *err);

/* Generations (§2.5), oldest first, the last being the footer at EOF. Earlier
 * ones are found by their footers, which an append leaves in place; each is
 * checked (magic, version, bounds, manifest hash, deterministic CBOR, every
 * rule against the file as it was then): status is ZT_OK or why not. Scans
 * the bytes outside the current blobs once: a read of the padding. Writes at
 * most cap entries; *count gets how many there are. */
typedef struct zt_generation {
    uint64_t footer_offset; /* where its 40-byte footer starts */
    uint64_t manifest_offset, manifest_length, manifest_hash;
    size_t objects;
    zt_status status;
} zt_generation;
ZT_API zt_status zt_file_generations(const zt_file *f, zt_generation *out, size_t cap,
                                     size_t *count, zt_error *err);

/* ----------------------------------------------------------------- JSON */

#define ZT_JSON_COMPACT 0u
#define ZT_JSON_PRETTY 1u

/* The whole manifest as JSON (see docs/JSON.md for the mapping). Release with zt_free(). */
ZT_API char *zt_file_manifest_json(const zt_file *f, unsigned flags, zt_error *err);
/* One object as JSON. Release with zt_free(). */
ZT_API char *zt_object_json(const zt_object *o, unsigned flags, zt_error *err);

/* --------------------------------------------------------------- digest */

/* Incremental sha256 / crc32c. */
typedef struct zt_hasher zt_hasher;
ZT_API zt_hasher *zt_hasher_new(zt_digest_kind kind);
ZT_API void zt_hasher_update(zt_hasher *h, const void *data, size_t len);
/* Writes 32 bytes (sha256) or 4 bytes (crc32c, big-endian); returns the count. */
ZT_API size_t zt_hasher_final(zt_hasher *h, uint8_t out[32]);
ZT_API void zt_hasher_free(zt_hasher *h);
ZT_API uint32_t zt_crc32c(uint32_t crc, const void *data, size_t len);

/* "sha256:<64 hex>" or "crc32c:0x<8 HEX>" into out (>= 72 bytes). */
ZT_API void zt_digest_format(zt_digest_kind kind, const uint8_t *bin, char out[80]);
/* Parse a digest string; returns ZT_OK and fills kind/bin (32 bytes room). */
ZT_API zt_status zt_digest_parse(const char *s, size_t len, zt_digest_kind *kind, uint8_t bin[32]);

/* --------------------------------------------------------------- writer */

typedef struct zt_writer zt_writer;

typedef struct zt_writer_options {
    size_t size;        /* sizeof(zt_writer_options); zt_writer_options_init sets it */
    int fsync;          /* fsync the file (and, for a path, its directory). Default 1 via
                           zt_writer_options_init */
    int mode;           /* file mode for a path; 0 = 0644 */
    int digest_inline;  /* 1: hash in the calling thread. 0 (default): a component larger
                           than 1 MiB is hashed on a background thread, beside the writes */
    unsigned format;    /* 0: zTensor 1.2; ZT_FORMAT_V2: container version 2 */
    uint64_t alignment; /* v2 blob placement: 0 = 65536 (canonical), else a multiple of 4096 */
} zt_writer_options;
ZT_API void zt_writer_options_init(zt_writer_options *o);

/* Write to `path`: bytes go to a temporary file beside it, and zt_writer_finish()
 * fsyncs, renames it over `path` and fsyncs the directory. */
ZT_API zt_status zt_writer_open(const char *path, const zt_writer_options *opt, zt_writer **out,
                                zt_error *err);
/* Write to an fd the caller keeps, from its current position (expected 0). No rename. */
ZT_API zt_status zt_writer_open_fd(int fd, const zt_writer_options *opt, zt_writer **out,
                                   zt_error *err);

typedef struct zt_component_spec {
    zt_dtype dtype;
    const char *type;      /* logical type or NULL */
    zt_encoding encoding;  /* ZT_ENC_ZSTD compresses on the fly */
    int zstd_level;        /* 0 = default (3) */
    zt_digest_kind digest; /* 1.2: over the stored bytes; v2: over the bytes given (decoded) */
} zt_component_spec;

/* Start a component; the writer pads to 64 bytes first. */
ZT_API zt_status zt_writer_begin(zt_writer *w, const zt_component_spec *spec, zt_error *err);
ZT_API zt_status zt_writer_write(zt_writer *w, const void *data, size_t len, zt_error *err);
/* Finish the component; *id (may be NULL) identifies it for zt_writer_add_object. */
ZT_API zt_status zt_writer_end(zt_writer *w, size_t *id, zt_error *err);
/* Abandon the component being written: its bytes are cut back out of the file. */
ZT_API zt_status zt_writer_cancel(zt_writer *w, zt_error *err);

/* Facts about a finished component. */
typedef struct zt_written_component {
    uint64_t offset, length, uncompressed_length;
    zt_encoding encoding;
    zt_digest_kind digest_kind;
    char digest[80];
    uint8_t sha256[32]; /* always computed over the stored bytes when digest is sha256 */
} zt_written_component;
ZT_API zt_status zt_writer_component_info(const zt_writer *w, size_t id, zt_written_component *out);

/* Add an object made of finished components. roles[i] names components ids[i].
 * attributes_json is a JSON object text or NULL. The object is validated like a
 * read one (sizes against shape, required components). */
ZT_API zt_status zt_writer_add_object(zt_writer *w, const char *name, const char *format,
                                      size_t ndim, const uint64_t *shape,
                                      const char *attributes_json, size_t ncomp,
                                      const char *const *roles, const size_t *ids, zt_error *err);
/* File attributes as a JSON object text. */
ZT_API zt_status zt_writer_set_attributes(zt_writer *w, const char *attributes_json, zt_error *err);
/* Write manifest, size and footer; publish when opened on a path. A failure before the
 * file is published (a full disk) cuts the manifest back out and leaves the writer as it
 * was: objects may be changed and finish called again. */
ZT_API zt_status zt_writer_finish(zt_writer *w, zt_error *err);
/* Bytes written so far. */
ZT_API uint64_t zt_writer_position(const zt_writer *w);
/* Free; a writer that was not finished removes its temporary file. */
ZT_API void zt_writer_free(zt_writer *w);

#ifdef __cplusplus
}
#endif
#endif /* ZTENSOR_H */
