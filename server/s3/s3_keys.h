/*
 * S3 access keys from the --s3-keys file: one "SCOPE ACCESS_KEY_ID SECRET"
 * per line, SCOPE "read" or "write" (write implies read, as for bearer
 * tokens), '#' comments and blank lines allowed. The file must be mode 0600
 * (core/secret_file.h). Secrets never leave this module: callers get the
 * SigV4 signing key derived from one, for a date and region.
 */
#ifndef ZTD_S3_KEYS_H
#define ZTD_S3_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3/sigv4_key.h"

/* Same values as http/auth.h's ztd_scope, so the front can compare them. */
typedef enum ztd_s3_scope {
    ZTD_S3_SCOPE_NONE = 0,
    ZTD_S3_SCOPE_READ = 1,
    ZTD_S3_SCOPE_WRITE = 2
} ztd_s3_scope;

#define ZTD_S3_MAX_KEY_ID 128 /* access key ids: 3 to 128 of A-Z a-z 0-9 - _ . */
#define ZTD_S3_MAX_SECRET 128 /* secrets: 8 to 128 printable ASCII characters, no spaces */
#define ZTD_S3_KEYS_MAX 4096

/* The keys: a table of secrets (core/secret_table.h). */
typedef struct ztd_secret_table ztd_s3_keys;

/* Parse keys-file text (len bytes, NULs included). The result is the caller's (free with
 * ztd_s3_keys_free); NULL and a message naming the line on error ("line 3: ..."), which never
 * quotes a secret. A key id given twice is an error. */
ztd_s3_keys *ztd_s3_keys_parse(const char *text, size_t len, char *err, size_t errlen);
/* Read (mode checked, at most 1 MiB) and parse a keys file; messages start with the path. */
ztd_s3_keys *ztd_s3_keys_load(const char *path, char *err, size_t errlen);
/* Wipes the secrets and frees; NULL is fine. */
void ztd_s3_keys_free(ztd_s3_keys *k);
size_t ztd_s3_keys_count(const ztd_s3_keys *k);

/*
 * The SigV4 signing key of access key id ak (NUL-terminated) for date (YYYYMMDD) and region.
 * True and out, *scope set when ak is known; false (out zeroed, *scope NONE) otherwise. The key
 * id is looked up by plain comparison (it is not secret); out is secret-derived: wipe it.
 */
bool ztd_s3_keys_signing_key(const ztd_s3_keys *k, const char *ak, const char *date,
                             const char *region, uint8_t out[ZTD_SIGV4_KEY_LEN],
                             ztd_s3_scope *scope);

#endif
