/*
 * Bearer-token authentication (see auth.h). Every known token is compared
 * against the presented one, in constant time, so timing reveals neither
 * which token matched nor how much of one did.
 */
#include "http/auth.h"
#include "core/secret_file.h"
#include "core/secret_table.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKEN 512
#define MAX_FILE (1u << 20)

typedef struct token {
    ztd_scope scope;
    size_t len;
    unsigned char v[MAX_TOKEN];
} token;

void ztd_tokens_free(ztd_tokens *t)
{
    ztd_secret_table_free(t);
}

size_t ztd_tokens_count(const ztd_tokens *t)
{
    return ztd_secret_table_count(t);
}

static bool token_char(unsigned char c)
{
    /* RFC 6750 b64token: ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" then "=" padding */
    return isalnum(c) || (c && strchr("-._~+/=", c)); /* strchr finds the terminator too */
}

static int parse_record(const ztd_record *rec, void *item, const ztd_secret_table *t, char *err,
                        size_t errlen)
{
    token *out = item;
    (void)t; /* a token given twice does no harm */
    unsigned lineno = rec->lineno;
    out->scope = (ztd_scope)ztd_record_scope(rec->f[0], rec->len[0]);
    if (out->scope == ZTD_SCOPE_NONE) {
        snprintf(err, errlen, "line %u: scope must be \"read\" or \"write\"", lineno);
        return -1;
    }
    if (rec->n != 2) {
        snprintf(err, errlen, "line %u: want \"<scope> <token>\"", lineno);
        return -1;
    }
    const char *p = rec->f[1];
    size_t tlen = rec->len[1];
    if (tlen < 16 || tlen > MAX_TOKEN) {
        snprintf(err, errlen, "line %u: a token must be 16 to %d characters", lineno, MAX_TOKEN);
        return -1;
    }
    for (size_t k = 0; k < tlen; k++)
        if (!token_char((unsigned char)p[k])) {
            snprintf(err, errlen,
                     "line %u: a token may only hold A-Z a-z 0-9 - . _ ~ + / =", lineno);
            return -1;
        }
    out->len = tlen;
    memcpy(out->v, p, tlen);
    return 0;
}

ztd_tokens *ztd_tokens_parse(const char *text, size_t len, char *err, size_t errlen)
{
    return ztd_secret_table_parse(sizeof(token), SIZE_MAX, "", text, len, parse_record, err,
                                  errlen);
}

ztd_tokens *ztd_tokens_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "tokens file %s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(MAX_FILE);
    size_t n = buf ? fread(buf, 1, MAX_FILE, f) : 0;
    bool too_big = buf && n == MAX_FILE;
    fclose(f);
    if (!buf || too_big) {
        free(buf);
        snprintf(err, errlen, "tokens file %s: %s", path,
                 buf ? "larger than 1 MiB" : "out of memory");
        return NULL;
    }
    char sub[256];
    ztd_tokens *t = ztd_tokens_parse(buf, n, sub, sizeof(sub));
    ztd_secret_wipe(buf, n);
    free(buf);
    if (!t)
        snprintf(err, errlen, "tokens file %s: %s", path, sub);
    return t;
}

/* Constant time in the presented token's length and the stored tokens. */
static bool ct_equal(const token *k, const unsigned char *p, size_t n)
{
    unsigned char diff = (unsigned char)(k->len != n);
    for (size_t i = 0; i < MAX_TOKEN; i++) {
        unsigned char a = i < k->len ? k->v[i] : 0;
        unsigned char b = i < n ? p[i] : 0;
        diff |= a ^ b;
    }
    return diff == 0;
}

ztd_auth_result ztd_auth_check(const ztd_tokens *t, const char *authz, ztd_scope need)
{
    if (!authz)
        return ZTD_AUTH_MISSING;
    while (*authz == ' ')
        authz++;
    if (strncasecmp(authz, "Bearer ", 7) != 0)
        return ZTD_AUTH_MISSING;
    const char *v = authz + 7;
    while (*v == ' ')
        v++;
    size_t n = strlen(v);
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    if (n == 0 || n > MAX_TOKEN)
        return ZTD_AUTH_INVALID;
    ztd_scope found = ZTD_SCOPE_NONE;
    const token *known = t ? t->v : NULL;
    for (size_t i = 0; i < ztd_secret_table_count(t); i++) {
        bool eq = ct_equal(&known[i], (const unsigned char *)v, n);
        /* branch-free select keeps the loop's timing independent of the match */
        found = (ztd_scope)((int)found | (eq ? (int)known[i].scope : 0));
    }
    if (found == ZTD_SCOPE_NONE)
        return ZTD_AUTH_INVALID;
    return found >= need ? ZTD_AUTH_OK : ZTD_AUTH_FORBIDDEN;
}

ztd_auth_result ztd_auth_rule(const ztd_tokens *t, bool require_read_token,
                              bool allow_anonymous_writes, const char *authorization,
                              ztd_scope need)
{
    if (need == ZTD_SCOPE_NONE || (need == ZTD_SCOPE_READ && !require_read_token))
        return ZTD_AUTH_OK;
    if (need == ZTD_SCOPE_WRITE && !t)
        return allow_anonymous_writes ? ZTD_AUTH_OK : ZTD_AUTH_WRITES_DISABLED;
    return ztd_auth_check(t, authorization, need);
}
