/*
 * An S3 session's settings from where AWS's own tools take them: the
 * endpoint from AWS_ENDPOINT_URL, the region from AWS_REGION or
 * AWS_DEFAULT_REGION (us-east-1 when neither), the keys from
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, or from a
 * credentials file (the [default] section of AWS's shared credentials
 * format), kept like every secret file of the project: a regular file that
 * group and others can neither read nor write. Arguments override the
 * environment (zt pull's --s3-endpoint, --s3-region, --s3-credentials).
 */
#include "remote_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CRED_MAX (64u << 10)

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* Blanks off both ends of [*s, *s + *n). */
static void trim(const char **s, size_t *n)
{
    while (*n && isspace((unsigned char)**s))
        (*s)++, (*n)--;
    while (*n && isspace((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

static zt_status line_fail(zt_error *err, const char *path, unsigned line, const char *why)
{
    return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0, "S3 credentials file %s, line %u: %s",
                     path, line, why);
}

/* One "key = value" line into c. */
static zt_status take(zt_remote_s3_credentials *c, const char *path, unsigned lineno, const char *k,
                      size_t kn, const char *v, size_t vn, zt_error *err)
{
    char *dst = NULL;
    size_t cap = 0;
    if (kn == 17 && !memcmp(k, "aws_access_key_id", 17))
        dst = c->access_key_id, cap = sizeof(c->access_key_id);
    else if (kn == 21 && !memcmp(k, "aws_secret_access_key", 21))
        dst = c->secret_access_key, cap = sizeof(c->secret_access_key);
    else if (kn == 17 && !memcmp(k, "aws_session_token", 17))
        dst = c->session_token, cap = sizeof(c->session_token);
    else
        return line_fail(err, path, lineno,
                         "unknown key (aws_access_key_id, aws_secret_access_key, "
                         "aws_session_token)");
    if (dst[0])
        return line_fail(err, path, lineno, "a key given twice");
    if (!vn || vn >= cap)
        return line_fail(err, path, lineno, "an empty or overlong value");
    for (size_t i = 0; i < vn; i++)
        if ((unsigned char)v[i] < 0x21 || (unsigned char)v[i] > 0x7e)
            return line_fail(err, path, lineno, "a value with a blank or control character");
    memcpy(dst, v, vn);
    dst[vn] = 0;
    return ZT_OK;
}

static zt_status parse_creds(const char *text, size_t len, const char *path,
                             zt_remote_s3_credentials *c, zt_error *err)
{
    unsigned lineno = 0;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos), *s = text + pos;
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        pos += n + (nl != NULL);
        lineno++;
        trim(&s, &n);
        if (!n || s[0] == '#' || s[0] == ';')
            continue;
        if (s[0] == '[') {
            if (n == 9 && !memcmp(s, "[default]", 9))
                continue;
            return line_fail(err, path, lineno, "a section other than [default]");
        }
        const char *eq = memchr(s, '=', n);
        if (!eq)
            return line_fail(err, path, lineno, "not \"key = value\"");
        const char *k = s, *v = eq + 1;
        size_t kn = (size_t)(eq - s), vn = n - kn - 1;
        trim(&k, &kn);
        trim(&v, &vn);
        zt_status st = take(c, path, lineno, k, kn, v, vn, err);
        if (st)
            return st;
    }
    if (!c->access_key_id[0] || !c->secret_access_key[0])
        return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0,
                         "S3 credentials file %s: aws_access_key_id and aws_secret_access_key "
                         "are both needed",
                         path);
    return ZT_OK;
}

zt_status zt_remote_s3_credentials_load(const char *path, zt_remote_s3_credentials *out,
                                        zt_error *err)
{
    if (!path || !out)
        return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0, "NULL argument");
    memset(out, 0, sizeof(*out));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return ztr__fail(err, ZT_E_IO, NULL, NULL, NULL, 0, 0, "S3 credentials file %s: %s", path,
                         strerror(e));
    }
    const char *bad = !S_ISREG(sb.st_mode)           ? "not a regular file"
                      : (sb.st_mode & 077) != 0      ? "readable or writable by group or others"
                      : sb.st_size > (off_t)CRED_MAX ? "larger than 64 KiB"
                                                     : NULL;
    if (bad) {
        close(fd);
        return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0,
                         "S3 credentials file %s: %s (mode %04o; it must be 0600 or 0400)", path,
                         bad, (unsigned)(sb.st_mode & 07777));
    }
    char *buf = malloc(CRED_MAX);
    ssize_t n = buf ? read(fd, buf, CRED_MAX) : -1;
    int e = errno;
    close(fd);
    zt_status st;
    if (!buf)
        st = ztr__fail(err, ZT_E_NOMEM, NULL, NULL, NULL, 0, 0, "out of memory");
    else if (n < 0)
        st = ztr__fail(err, ZT_E_IO, NULL, NULL, NULL, 0, 0, "S3 credentials file %s: %s", path,
                       strerror(e));
    else
        st = parse_creds(buf, (size_t)n, path, out, err);
    if (buf)
        memset(buf, 0, CRED_MAX);
    free(buf);
    if (st)
        memset(out, 0, sizeof(*out));
    return st;
}

zt_status zt_remote_s3_configure(zt_remote_options *o, const char *endpoint, const char *region,
                                 const char *credentials_file, zt_remote_s3_credentials *store,
                                 zt_error *err)
{
    if (!o)
        return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0, "NULL argument");
    o->s3_endpoint = endpoint && *endpoint ? endpoint : env("AWS_ENDPOINT_URL");
    o->s3_region = region && *region           ? region
                   : env("AWS_REGION")         ? env("AWS_REGION")
                   : env("AWS_DEFAULT_REGION") ? env("AWS_DEFAULT_REGION")
                                               : "us-east-1";
    o->s3_access_key_id = o->s3_secret_access_key = o->s3_session_token = NULL;
    if (credentials_file && *credentials_file) {
        if (!store)
            return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0, "NULL argument");
        zt_status st = zt_remote_s3_credentials_load(credentials_file, store, err);
        if (st)
            return st;
        o->s3_access_key_id = store->access_key_id;
        o->s3_secret_access_key = store->secret_access_key;
        o->s3_session_token = store->session_token[0] ? store->session_token : NULL;
        return ZT_OK;
    }
    const char *k = env("AWS_ACCESS_KEY_ID"), *s = env("AWS_SECRET_ACCESS_KEY");
    if (!k != !s)
        return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0,
                         "%s is set but %s is not: set both, or neither for a public bucket",
                         k ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                         k ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
    o->s3_access_key_id = k;
    o->s3_secret_access_key = s;
    o->s3_session_token = k ? env("AWS_SESSION_TOKEN") : NULL;
    return ZT_OK;
}
