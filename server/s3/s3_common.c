/*
 * What the S3 front's operations share (s3_internal.h): the configured
 * buckets, query arguments, and the forms of ETags and dates S3 clients
 * see. Calls nothing else of the front, so no file of it calls in a circle.
 */
#include "core/dates.h"
#include <ztensor/ztensor.h>
#include "s3/s3_front.h"
#include "s3/s3_internal.h"
#include "s3/s3_keys.h"
#include "store/validators.h"
#include "http/response.h"
#include "store/names.h"
#include "store/publish.h"

#include "s3/s3_error.h"

#include <errno.h>
#include <strings.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ztd_buckets g_buckets;
static char *g_root;
static ztd_s3_keys *g_keys; /* --s3-keys, or NULL */

int ztd_s3_configure(const ztd_config *cfg, char *err, size_t errlen)
{
    char why[256];
    ztd_buckets_free(&g_buckets);
    free(g_root);
    g_root = cfg->root ? strdup(cfg->root) : NULL;
    if (ztd_buckets_parse(cfg->s3_buckets, &g_buckets, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "option s3_buckets: %s", why);
        return -1;
    }
    ztd_s3_keys_free(g_keys);
    g_keys = NULL;
    if (cfg->s3_keys && cfg->s3_keys[0] &&
        !(g_keys = ztd_s3_keys_load(cfg->s3_keys, why, sizeof(why)))) {
        snprintf(err, errlen, "option s3_keys: %s", why); /* never quotes a secret */
        return -1;
    }
    return 0;
}

void ztd_s3_unconfigure(void)
{
    ztd_buckets_free(&g_buckets);
    free(g_root);
    g_root = NULL;
    ztd_s3_keys_free(g_keys);
    g_keys = NULL;
}

const ztd_s3_keys *ztd_s3_keys_table(void)
{
    return g_keys;
}

const char *ztd_s3_root(void)
{
    return g_root ? g_root : "";
}

const ztd_buckets *ztd_s3_buckets(void)
{
    return &g_buckets;
}

/* ---- query arguments (kept percent-encoded by the server: router.h) */

bool ztd_s3_has_arg(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value_n(c, MHD_GET_ARGUMENT_KIND, name, strlen(name), NULL,
                                         NULL) == MHD_YES;
}

long ztd_s3_arg(struct MHD_Connection *c, const char *name, char *out, size_t cap)
{
    const char *v = NULL;
    size_t n = 0;
    if (MHD_lookup_connection_value_n(c, MHD_GET_ARGUMENT_KIND, name, strlen(name), &v, &n) !=
        MHD_YES)
        return -1;
    if (!v) {
        out[0] = 0;
        return 0;
    }
    long len = ztd_url_decode(v, n, out, cap - 1, true);
    return len < 0 ? -2 : len;
}

/* ---- the forms S3 clients see */

void ztd_s3_view_etag(const ztd_entry *viewed, char out[96])
{
    char raw[96];
    uint8_t h[32] = {0};
    static const char tag[] = "safetensors view of ";
    ztd_raw_etag(viewed, raw);
    zt_hasher *hs = zt_hasher_new(ZT_DIGEST_SHA256);
    if (hs) {
        zt_hasher_update(hs, tag, sizeof(tag) - 1);
        zt_hasher_update(hs, raw, strnlen(raw, sizeof(raw)));
        zt_hasher_final(hs, h);
        zt_hasher_free(hs);
    }
    out[0] = '"';
    for (int i = 0; i < 16; i++)
        snprintf(out + 1 + 2 * i, 3, "%02x", h[i]);
    memcpy(out + 33, "-1\"", 4);
}

void ztd_s3_etag(const ztd_entry *e, char out[96])
{
    char raw[96];
    if (e->view_of) {
        ztd_s3_view_etag(e->view_of, out);
        return;
    }
    ztd_raw_etag(e, raw);
    size_t n = strnlen(raw, sizeof(raw));
    if (n < 2 || raw[n - 1] != '"' || memchr(raw, '-', n) || n + 2 >= 96) {
        memcpy(out, raw, sizeof(raw));
        return;
    }
    memcpy(out, raw, n - 1);
    memcpy(out + n - 1, "-1\"", 4);
}

void ztd_s3_etags_to_raw(char *list)
{
    char *o = list;
    for (const char *p = list; *p; p++) {
        if (p[0] == '-' && p[1] == '1' && p[2] == '"')
            p += 2; /* keep the quote */
        *o++ = *p;
    }
    *o = 0;
}

bool ztd_s3_entry_listed(const ztd_entry *e)
{
    return (e->file || !e->error) && !ztd_entry_view_refused(e);
}

void ztd_s3_iso_time(int64_t mtime_ns, char out[32])
{
    int64_t t = mtime_ns / 1000000000, ms = (mtime_ns / 1000000) % 1000;
    int64_t days = t / 86400, sec = t % 86400, y;
    unsigned m, d;
    if (sec < 0) {
        sec += 86400;
        days--;
    }
    if (ms < 0)
        ms += 1000;
    ztd_civil_from_days(days, &y, &m, &d);
    snprintf(out, 32, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ", (long long)y, m, d,
             (long long)(sec / 3600), (long long)(sec / 60 % 60), (long long)(sec % 60),
             (long long)ms);
}

/* The x-amz-content-sha256 forms of aws-chunked bodies. */
static bool streaming_mode(const char *cs, ztd_awsc_mode *mode)
{
    if (!strcmp(cs, "STREAMING-UNSIGNED-PAYLOAD-TRAILER"))
        *mode = ZTD_AWSC_UNSIGNED_TRAILER;
    else if (!strcmp(cs, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"))
        *mode = ZTD_AWSC_SIGNED;
    else if (!strcmp(cs, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"))
        *mode = ZTD_AWSC_SIGNED_TRAILER;
    else
        return false;
    return true;
}

#define PAYLOAD_FAIL(e, ...)                                                                       \
    do {                                                                                           \
        *err = (int)(e);                                                                           \
        snprintf(msg, cap, __VA_ARGS__);                                                           \
        return false;                                                                              \
    } while (0)

bool ztd_s3_payload_open(struct MHD_Connection *c, const ztd_s3_auth *auth, ztd_awsc_sink sink,
                         void *ctx, ztd_awsc **dec, int64_t *decoded_len, int *err, char *msg,
                         size_t cap)
{
    const char *ce = ztd_header(c, "Content-Encoding");
    const char *cs = ztd_header(c, "x-amz-content-sha256");
    const char *dl = ztd_header(c, "x-amz-decoded-content-length");
    bool chunked_ce = ce && strcasestr(ce, "aws-chunked");
    ztd_awsc_mode mode;
    if (dec)
        *dec = NULL;
    *decoded_len = -1;
    if (!cs || strncmp(cs, "STREAMING-", 10) != 0) {
        if (chunked_ce)
            PAYLOAD_FAIL(ZTD_S3_INVALID_ARGUMENT, "Content-Encoding: aws-chunked needs "
                                                  "x-amz-content-sha256: STREAMING-...");
        return true; /* a plain body */
    }
    if (!streaming_mode(cs, &mode))
        PAYLOAD_FAIL(ZTD_S3_NOT_IMPLEMENTED, "x-amz-content-sha256: %.80s is not implemented", cs);
    bool is_signed = mode != ZTD_AWSC_UNSIGNED_TRAILER;
    if (is_signed && auth->scope == ZTD_S3_SCOPE_NONE)
        PAYLOAD_FAIL(ZTD_S3_NOT_IMPLEMENTED,
                     "signed streaming payloads (%s) are verified only with --s3-keys and a "
                     "request signed with one of them",
                     cs);
    if (dl) {
        char *end;
        errno = 0;
        long long v = strtoll(dl, &end, 10);
        if (errno || end == dl || *end || v < 0)
            PAYLOAD_FAIL(ZTD_S3_INVALID_ARGUMENT,
                         "x-amz-decoded-content-length is not a byte count");
        *decoded_len = v;
    }
    if (!dec)
        return true; /* the headers only */
    ztd_awsc_config cfg = {.mode = mode,
                           .signing_key = is_signed ? auth->signing_key : NULL,
                           .amz_date = is_signed ? auth->amz_date : NULL,
                           .scope = is_signed ? auth->scope_str : NULL,
                           .seed_signature = is_signed ? auth->seed_signature : NULL,
                           .decoded_length = *decoded_len,
                           .trailer = ztd_header(c, "x-amz-trailer"),
                           .sink = sink,
                           .sink_ctx = ctx};
    ztd_s3err e = ZTD_S3E_OK;
    if (!(*dec = ztd_awsc_new(&cfg, &e)))
        PAYLOAD_FAIL(ztd_s3_err_from(e), "%s",
                     e == ZTD_S3E_INTERNAL
                         ? "out of memory"
                         : "x-amz-trailer must name one checksum header (x-amz-checksum-ALG)");
    return true;
}

enum MHD_Result ztd_s3_feed(struct MHD_Connection *c, ztd_req *r, ztd_awsc *dec, ztd_awsc_sink sink,
                            void *ctx, const ztd_s3_sink_fail *f, const char *data, size_t n)
{
    if (dec) {
        ztd_s3err e = ztd_awsc_push(dec, (const uint8_t *)data, n);
        if (e == ZTD_S3E_OK)
            return MHD_YES;
        if (f->failed)
            return ztd_s3_error(c, r, (ztd_s3_err)f->err, "%s", f->msg);
        return ztd_s3_error(c, r, ztd_s3_err_from(e), "%s", ztd_awsc_message(dec));
    }
    if (sink(ctx, (const uint8_t *)data, n) != 0)
        return ztd_s3_error(c, r, (ztd_s3_err)f->err, "%s", f->msg);
    return MHD_YES;
}

/* The key names a file this server can publish: a served name, a safe path. */
const char *ztd_s3_key_problem(const ztd_s3_req *q)
{
    const char *why = ztd_file_path_problem(q->name, q->name_len);
    if (why)
        return why;
    if (!ztd_publish_name_fits(ztd_s3_root(), q->name))
        return "too long for the file system (a segment over 255 bytes, or the whole path with "
               "the root's over 4095)";
    const char *base = strrchr(q->name, '/');
    if (!ztd_catalog_is_served_name(base ? base + 1 : q->name))
        return "only keys ending in .zt, .safetensors or .alt can be written";
    return NULL;
}
