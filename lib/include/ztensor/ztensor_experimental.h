/*
 * libztensor's experimental API: hooks that ztensord's upload paths and
 * libztensor-remote need and that are not part of the stable interface in
 * ztensor.h. They may change or go away in any release, like zstd's
 * ZSTD_STATIC_LINKING_ONLY section; a program that wants a stable ABI uses
 * ztensor.h alone.
 *
 * Ownership and errors follow ztensor.h.
 */
#ifndef ZTENSOR_EXPERIMENTAL_H
#define ZTENSOR_EXPERIMENTAL_H

#include "ztensor.h"

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A hasher on a thread of its own, for a caller that fills buffers (from a
 * socket, a file) about as fast as one core hashes them. new() returns the
 * first buffer to fill (bufsize bytes) in *first; submit() hands a filled
 * buffer over and returns the next one to fill, waiting while three are
 * queued; final() waits for the queue and writes the digest (as
 * zt_hasher_final). free() takes back the buffer the caller holds. new()
 * returns NULL when no thread or memory can be had: hash inline instead. */
typedef struct zt_hash_thread zt_hash_thread;
ZT_API zt_hash_thread *zt_hash_thread_new(zt_digest_kind kind, size_t bufsize, uint8_t **first);
ZT_API uint8_t *zt_hash_thread_submit(zt_hash_thread *t, uint8_t *buf, size_t len);
ZT_API size_t zt_hash_thread_final(zt_hash_thread *t, uint8_t out[32]);
ZT_API void zt_hash_thread_free(zt_hash_thread *t, uint8_t *held);
/* Copy src's state into dst (of the same kind): a checkpoint in a running hash. */
ZT_API zt_status zt_hasher_copy(zt_hasher *dst, const zt_hasher *src);

/* The digest (spec.digest) of the open component's stored bytes written so far,
 * without ending it: for a raw component, of every byte given to
 * zt_writer_write, so a caller can compare it with a digest it was sent and
 * cancel on a mismatch. (A zstd stream holds bytes back until the end.) */
ZT_API zt_status zt_writer_digest_so_far(zt_writer *w, uint8_t out[32], size_t *len, zt_error *err);

/* Set the dtype and logical type (NULL for none) of a finished component, for
 * protocols where they are known only after the bytes (ztensord's upload sessions). */
ZT_API zt_status zt_writer_set_component_type(zt_writer *w, size_t id, zt_dtype dtype,
                                              const char *type, zt_error *err);
/* Objects added so far, and dropping the ones added after the first `keep`
 * (to undo a partly failed batch of zt_writer_add_object calls). */
ZT_API size_t zt_writer_object_count(const zt_writer *w);
ZT_API void zt_writer_drop_objects(zt_writer *w, size_t keep);

/* Attributes given as values (a map, e.g. zt_object_attributes() of an open
 * file) instead of JSON text, so that every CBOR value is copied as it is
 * (zt convert). The values are not copied: they must stay valid until
 * zt_writer_finish() or zt_writer_free(). */
ZT_API zt_status zt_writer_add_object_values(zt_writer *w, const char *name, const char *format,
                                             size_t ndim, const uint64_t *shape,
                                             const zt_value *attributes, size_t ncomp,
                                             const char *const *roles, const size_t *ids,
                                             zt_error *err);
ZT_API zt_status zt_writer_set_attribute_values(zt_writer *w, const zt_value *map, zt_error *err);

/* Durable files, shared by the writer and ztensord's uploads.
 *
 * Write-back: a file that will be fsynced when complete starts the kernel
 * writing it back as it grows (sync_file_range(SYNC_FILE_RANGE_WRITE), which
 * does not wait), so that the fsync at the end waits for the last few MiB
 * only. Call zt_writeback_note() after each write with the bytes written so
 * far; every ZT_WRITEBACK_EVERY bytes it starts write-back of what is new.
 * After a truncation back to `written`, call it with the new length. */
#define ZT_WRITEBACK_EVERY (8u << 20)
typedef struct zt_writeback {
    int fd;
    uint64_t started; /* write-back was started up to here */
} zt_writeback;
ZT_API void zt_writeback_init(zt_writeback *wb, int fd);
ZT_API void zt_writeback_note(zt_writeback *wb, uint64_t written);

/* Atomic publication of a complete (and fsynced) file: rename src in the
 * directory src_dir onto dst in dst_dir, then fsync dst_dir, so that after a
 * crash the name holds the old file or the new one, whole. Directory fds may
 * be AT_FDCWD. Flags: ZT_PUBLISH_NOREPLACE keeps a file already at dst
 * (RENAME_NOREPLACE, or a check before the rename on a file system without
 * it); ZT_PUBLISH_NOSYNC skips the directory's fsync. *replaced (may be NULL)
 * says whether a file was at dst. On failure: ZT_E_IO (ZT_E_NOSPACE for a full
 * disk or quota) with errno as the failing call left it (EEXIST for an
 * existing dst under ZT_PUBLISH_NOREPLACE; a failed fsync of the directory
 * comes after the rename: the file is then in place). */
#define ZT_PUBLISH_NOREPLACE 1u
#define ZT_PUBLISH_NOSYNC 2u
ZT_API zt_status zt_publish_rename(int src_dir, const char *src, int dst_dir, const char *dst,
                                   unsigned flags, int *replaced, zt_error *err);

/* The message builder of every libztensor error, for a library layered on it
 * (libztensor-remote) whose errors take the same shape: fills err (when not
 * NULL) with code, object, component and offset (has_offset: whether offset
 * counts), and the message "ZT_E_X: detail (object "o", component "c", byte
 * N)" where detail is fmt formatted with ap; a message too long for
 * err->message is cut and ends in "...". Returns code. */
ZT_API zt_status zt_error_vset(zt_error *err, zt_status code, const char *object,
                               const char *component, int has_offset, uint64_t offset,
                               const char *fmt, va_list ap);

/* ---- safetensors views (st_view.c; mapping in docs/FOREIGN-FORMATS.md)
 *
 * The safetensors file a zt_file reads as, defined once for `zt convert` and
 * ztensord: the header bytes, then each tensor's decoded bytes in the order
 * of their components in the file (by offset, then length, then name), with
 * no gaps. A server serves it as a segment list: the header from memory, then
 * per tensor either a span of a file (raw) or a decoded stream (zstd).
 *
 * zt_st_view_new: NULL, with err, when safetensors cannot express an object
 * (a format other than dense, a quantized_group without the source_tensors /
 * source_shapes of an Ollama blob, a dtype or logical type safetensors has no
 * name for, an encoding this library does not decode: ZT_E_UNSUPPORTED;
 * bytes that do not match the shape: ZT_E_SIZE; a tensor name given twice or
 * "__metadata__": ZT_E_DUPLICATE; a name that is not UTF-8 or holds a NUL:
 * ZT_E_NAME; a dimension or offset above 2^63 - 1: ZT_E_LIMIT). The message
 * says `object "NAME" cannot be written as safetensors: WHY`; err->object and
 * err->component name them too. Only the manifest is read: the view of a file
 * from zt_open_manifest() or of a detached one is the same.
 *
 * The view borrows f, which must outlive it: the names, objects and
 * components it returns are owned by f; the header and notes by the view,
 * valid until zt_st_view_free(), which accepts NULL. A view is immutable and
 * may be read from any number of threads. */
typedef struct zt_st_view zt_st_view;
typedef struct zt_st_tensor {
    const char *name;              /* the tensor's name in the header */
    const char *dtype;             /* its safetensors dtype ("F32"); static */
    const zt_object *object;       /* the object it comes from */
    const zt_component *component; /* the component whose decoded bytes it is */
    uint64_t offset;               /* its first byte in the view (after the header) */
    uint64_t length;               /* its bytes: zt_component_decoded_length() */
    int decode;                    /* 1: the decoded stream (zstd); 0: a span of stored bytes */
    int shard;              /* a span's file: zt_component_shard() (-1 the file itself); the fd is
                               zt_component_fd() */
    uint64_t source_offset; /* a span's first byte in that file: zt_component_offset() */
} zt_st_tensor;
ZT_API zt_st_view *zt_st_view_new(const zt_file *f, zt_error *err);
ZT_API void zt_st_view_free(zt_st_view *v);
/* The view's first bytes: the 8-byte little-endian header length and the
 * compact JSON header, padded with spaces to a multiple of 8 bytes. */
ZT_API const void *zt_st_view_header(const zt_st_view *v, size_t *len);
/* Bytes of the whole view: the header and every tensor. */
ZT_API uint64_t zt_st_view_size(const zt_st_view *v);
/* Tensors, in the order of their bytes in the view. */
ZT_API size_t zt_st_view_count(const zt_st_view *v);
/* Tensor i into *out; ZT_E_ARG when i >= zt_st_view_count(). */
ZT_API zt_status zt_st_view_tensor(const zt_st_view *v, size_t i, zt_st_tensor *out);
/* Where a read from byte pos of the view starts: the first tensor whose bytes
 * end after pos (0 for a pos inside the header); zt_st_view_count() when pos
 * is at or past the end. */
ZT_API size_t zt_st_view_locate(const zt_st_view *v, uint64_t pos);
/* Things a caller may want to warn about, as sentences: a file attribute that
 * is not text, written to __metadata__ as its compact JSON text. */
ZT_API size_t zt_st_view_note_count(const zt_st_view *v);
ZT_API const char *zt_st_view_note(const zt_st_view *v, size_t i);

/* model.safetensors.index.json for the n views of one model, views[i] to be
 * served or written as view_names[i]: {"metadata": {"total_size": the bytes
 * of every tensor}, "weight_map": {tensor: view name}}, as transformers writes
 * it (Python's json.dumps(index, indent=2, sort_keys=True) and a newline).
 * ZT_E_DUPLICATE naming a tensor that two views hold; ZT_E_ARG for n == 0 or
 * a NULL name or view. Release with zt_free(). */
ZT_API char *zt_st_index_json(const char *const *view_names, const zt_st_view *const *views,
                              size_t n, zt_error *err);

/* n bytes of a file at off into dst, from wherever the caller keeps them: 0,
 * or nonzero when they cannot be had. */
typedef int zt_bytes_at_fn(void *ctx, uint64_t off, size_t n, uint8_t *dst);
/* zt_file_identity() of a file whose bytes outside the blobs are not all in
 * hand (a remote file opened by its footer and manifest): read gives those
 * bytes and the footer (never a blob's) and is called only for them; NULL
 * reads the file.
 * The same result, errors and ZT_E_NOT_FOUND as zt_file_identity(); a failed
 * read is ZT_E_IO. */
ZT_API zt_status zt_file_identity_with(const zt_file *f, zt_bytes_at_fn *read, void *ctx,
                                       char out[80], zt_error *err);

#ifdef __cplusplus
}
#endif
#endif /* ZTENSOR_EXPERIMENTAL_H */
