/*
 * What the S3 front's operations share (s3_internal.h): the configured
 * buckets, query arguments, and the forms of ETags and dates S3 clients
 * see. Calls nothing else of the front, so no file of it calls in a circle.
 */
#include "core/dates.h"
#include "s3/s3_front.h"
#include "s3/s3_internal.h"
#include "store/validators.h"
#include "http/response.h"
#include "store/names.h"
#include "store/publish.h"

#include <strings.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ztd_buckets g_buckets;
static char *g_root;

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
    return 0;
}

void ztd_s3_unconfigure(void)
{
    ztd_buckets_free(&g_buckets);
    free(g_root);
    g_root = NULL;
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

void ztd_s3_etag(const ztd_entry *e, char out[96])
{
    char raw[96];
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
    return e->file || !e->error;
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

/* The payload's form. The one place the aws-chunked decoder plugs in: until
 * then such bodies are refused, before any byte is taken. */
const char *ztd_s3_payload_problem(struct MHD_Connection *c)
{
    const char *ce = ztd_header(c, "Content-Encoding");
    const char *cs = ztd_header(c, "x-amz-content-sha256");
    if ((ce && strcasestr(ce, "aws-chunked")) || (cs && !strncmp(cs, "STREAMING-", 10)))
        return "aws-chunked payloads (Content-Encoding: aws-chunked, x-amz-content-sha256: "
               "STREAMING-*) are not implemented yet; send a plain body (boto3: "
               "request_checksum_calculation=\"when_required\")";
    return NULL;
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
