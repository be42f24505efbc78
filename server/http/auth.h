/*
 * Bearer tokens from a token file: one "<scope> <token>" per line, scope
 * "read" or "write" (write implies read), '#' comments and blank lines
 * allowed. Tokens are compared in constant time and never logged.
 */
#ifndef ZTD_AUTH_H
#define ZTD_AUTH_H

#include <stdbool.h>
#include <stddef.h>

typedef enum ztd_scope { ZTD_SCOPE_NONE = 0, ZTD_SCOPE_READ = 1, ZTD_SCOPE_WRITE = 2 } ztd_scope;

/* The tokens: a table of secrets (core/secret_table.h). */
typedef struct ztd_secret_table ztd_tokens;

/* Parse token-file text. NULL and a message naming the line on error. */
ztd_tokens *ztd_tokens_parse(const char *text, size_t len, char *err, size_t errlen);
/* Read and parse a token file. */
ztd_tokens *ztd_tokens_load(const char *path, char *err, size_t errlen);
void ztd_tokens_free(ztd_tokens *t);
size_t ztd_tokens_count(const ztd_tokens *t);

typedef enum ztd_auth_result {
    ZTD_AUTH_OK = 0,
    ZTD_AUTH_MISSING = 401,   /* no or malformed credentials: 401 + WWW-Authenticate */
    ZTD_AUTH_INVALID = 4010,  /* unknown token: 401 + WWW-Authenticate error="invalid_token" */
    ZTD_AUTH_FORBIDDEN = 403, /* known token, scope too small */
    ZTD_AUTH_WRITES_DISABLED = 4030 /* a write, no tokens file, anonymous writes off */
} ztd_auth_result;

/* Check an Authorization header value (may be NULL) against the needed scope. */
ztd_auth_result ztd_auth_check(const ztd_tokens *t, const char *authorization, ztd_scope need);

/* The bearer-token rule of every front (docs/API.md, "Authentication"): a
 * request that needs no scope, or reads while require_read_token is off,
 * passes; a write with no tokens file passes only if anonymous writes are
 * allowed (else ZTD_AUTH_WRITES_DISABLED); otherwise ztd_auth_check(). Each
 * front words the refusal its clients understand. */
ztd_auth_result ztd_auth_rule(const ztd_tokens *t, bool require_read_token,
                              bool allow_anonymous_writes, const char *authorization,
                              ztd_scope need);

#endif
