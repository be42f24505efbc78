/*
 * The validator rules, in one place: which ETag names a representation,
 * which Repr-Digest it carries, and whether a year of immutability applies.
 * A digest names bytes only once the server has checked it against them
 * (the background verifier for a local file, the fill for a cache item),
 * and only the representation it covers: the stored bytes (zTensor 1.x, a
 * raw part), or the decoded ones (v2's digests of decoded bytes). xxh3 names
 * a representation as well as sha256 does; crc32c names nothing.
 * Representations no digest names get the file's identity (and
 * ".identity" for decoded bytes).
 * Also the conditional request headers' matching of entity-tags: every
 * layer that answers a condition (the range plan, a publication's
 * preconditions) asks here.
 */
#ifndef ZTD_VALIDATORS_H
#define ZTD_VALIDATORS_H

#include <stdbool.h>
#include <stdint.h>
#include <ztensor/ztensor.h>

struct ztd_entry;

typedef struct ztd_repr_validators {
    char etag[96];         /* with quotes */
    const uint8_t *sha256; /* Repr-Digest of the representation, or NULL */
    bool digest_named;     /* the ETag is a checked digest of these bytes */
    bool immutable;        /* a blob URL's verified bytes: never change */
} ztd_repr_validators;

/* The validators of component c of e, stored or decoded; verified: its digest
 * was checked against its bytes (the entry's source says); blob: asked by its
 * digest (/v1/blobs). */
void ztd_component_validators(const struct ztd_entry *e, const zt_component *c, bool decoded,
                              bool verified, bool blob, ztd_repr_validators *out);

/* "\"x\"" into W/"x" in place (cap: etag's room); a weak tag, or one with no
 * room, stays as it is. */
void ztd_etag_weaken(char *etag, size_t cap);

/* The ETag of the whole file's bytes (/raw): a v2 file's identity when it
 * has one (the same on every copy and every tier), else the file's. */
void ztd_raw_etag(const struct ztd_entry *e, char out[96]);
/* The same as /raw sends it once a plain file is hashed: "sha256:<hex>" for
 * a plain file whose sha256 is known (the verifier's, or an upstream's), else
 * ztd_raw_etag. What the Hugging Face front lists as a file's rawEtag and what
 * a sidecar compares its pinned upstream version with. */
void ztd_raw_etag_listed(const struct ztd_entry *e, char out[96]);
/* "\"<tag>-<32 hex>\"" into out: the validator of a JSON representation
 * about e (its manifest, an object, a plain file's document), from the
 * file's (from a v2 file's identity when it has one: the same on every copy
 * and every tier). */
void ztd_tagged_etag(char out[96], const char *tag, const struct ztd_entry *e);
/* "\"sha256:<64 hex>\"": the strong ETag of bytes whose sha256 is verified
 * (a plain file's, a blob's). out holds at least 75 bytes. */
void ztd_sha256_etag(const uint8_t sha[32], char *out);

/* Cache-Control for v: immutable ones get a year, others the configured one
 * (private when reads need a token). */
const char *ztd_validators_cache_control(const ztd_repr_validators *v, bool private_reads,
                                         const char *configured);

/*
 * Does an If-Match / If-None-Match value match etag? weak == 0 uses the strong comparison
 * (both tags strong and identical, for If-Match), weak != 0 the weak comparison (opaque tags
 * identical, W/ ignored, for If-None-Match). The value is "*" or a comma-separated list of
 * entity-tags with optional whitespace and empty elements. "*" matches whenever etag != NULL.
 * A malformed value (unquoted tag, "*" inside a list, a bad character) never matches, and a
 * NULL header or NULL etag never matches. Returns 1 on match, 0 otherwise.
 */
int ztd_etag_list_match(const char *header, const char *etag, int weak);

/* The same, for a representation that exists (exists: "*" matches) whose etag
 * may still be NULL (it then matches nothing but "*"). */
int ztd_etag_condition(const char *header, const char *etag, bool exists, int weak);

/* If-Range's entity-tag form: is value (with optional whitespace) exactly one
 * strong entity-tag that equals etag by the strong comparison? 1 or 0. */
int ztd_etag_strong_match(const char *value, const char *etag);

/* If-None-Match: is it "*" (with optional whitespace), which makes a write
 * create-only? A list of entity-tags is not. */
bool ztd_if_none_match_star(const char *value);

#endif
