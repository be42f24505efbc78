/*
 * The S3 keys file (see s3_keys.h). Parsing names the line of every error
 * and never echoes a secret.
 */
#include "s3/s3_keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/secret_file.h"
#include "core/secret_table.h"

#define MAX_FILE (1u << 20)

typedef struct key {
    ztd_s3_scope scope;
    size_t slen;
    char id[ZTD_S3_MAX_KEY_ID + 1];
    char secret[ZTD_S3_MAX_SECRET + 1];
} key;

void ztd_s3_keys_free(ztd_s3_keys *k)
{
    ztd_secret_table_free(k);
}

size_t ztd_s3_keys_count(const ztd_s3_keys *k)
{
    return ztd_secret_table_count(k);
}

static bool id_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
}

static int fail(char *err, size_t errlen, unsigned lineno, const char *why)
{
    snprintf(err, errlen, "line %u: %s", lineno, why);
    return -1;
}

static int parse_record(const ztd_record *r, key *out, char *err, size_t errlen)
{
    unsigned ln = r->lineno;
    int scope = ztd_record_scope(r->f[0], r->len[0]);
    if (scope == 1)
        out->scope = ZTD_S3_SCOPE_READ;
    else if (scope == 2)
        out->scope = ZTD_S3_SCOPE_WRITE;
    else
        return fail(err, errlen, ln, "scope must be \"read\" or \"write\"");
    if (r->n != 3)
        return fail(err, errlen, ln, "want \"SCOPE ACCESS_KEY_ID SECRET_ACCESS_KEY\"");
    const char *ak = r->f[1], *sk = r->f[2];
    size_t al = r->len[1], kl = r->len[2];
    if (al < 3 || al > ZTD_S3_MAX_KEY_ID)
        return fail(err, errlen, ln, "an access key id must be 3 to 128 characters");
    for (size_t j = 0; j < al; j++)
        if (!id_char(ak[j]))
            return fail(err, errlen, ln, "an access key id may only hold A-Z a-z 0-9 - _ .");
    if (kl < 8 || kl > ZTD_S3_MAX_SECRET)
        return fail(err, errlen, ln, "a secret access key must be 8 to 128 characters");
    for (size_t j = 0; j < kl; j++)
        if ((unsigned char)sk[j] < 0x21 || (unsigned char)sk[j] > 0x7e)
            return fail(err, errlen, ln, "a secret access key must be printable ASCII");
    memcpy(out->id, ak, al);
    out->id[al] = '\0';
    memcpy(out->secret, sk, kl);
    out->secret[kl] = '\0';
    out->slen = kl;
    return 0;
}

static const key *find(const ztd_secret_table *t, const char *ak)
{
    const key *v = t->v;
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(v[i].id, ak))
            return &v[i];
    return NULL;
}

static int take(const ztd_record *r, void *item, const ztd_secret_table *t, char *err,
                size_t errlen)
{
    key *e = item;
    if (parse_record(r, e, err, errlen) != 0)
        return -1;
    if (find(t, e->id))
        return fail(err, errlen, r->lineno, "this access key id was given on an earlier line");
    return 0;
}

ztd_s3_keys *ztd_s3_keys_parse(const char *text, size_t len, char *err, size_t errlen)
{
    return ztd_secret_table_parse(sizeof(key), ZTD_S3_KEYS_MAX, "more than 4096 keys", text, len,
                                  take, err, errlen);
}

ztd_s3_keys *ztd_s3_keys_load(const char *path, char *err, size_t errlen)
{
    size_t n = 0;
    char *buf = ztd_secret_file_read(path, "S3 keys file", MAX_FILE, &n, err, errlen);
    if (!buf)
        return NULL;
    char sub[256];
    ztd_s3_keys *k = ztd_s3_keys_parse(buf, n, sub, sizeof(sub));
    ztd_secret_file_free(buf, n);
    if (!k)
        snprintf(err, errlen, "S3 keys file %s: %s", path, sub);
    return k;
}

bool ztd_s3_keys_signing_key(const ztd_s3_keys *k, const char *ak, const char *date,
                             const char *region, uint8_t out[ZTD_SIGV4_KEY_LEN],
                             ztd_s3_scope *scope)
{
    const key *e = k ? find(k, ak) : NULL;
    *scope = e ? e->scope : ZTD_S3_SCOPE_NONE;
    if (!e) {
        memset(out, 0, ZTD_SIGV4_KEY_LEN);
        return false;
    }
    ztd_sigv4_signing_key(e->secret, e->slen, date, region, out);
    return true;
}
