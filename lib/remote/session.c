/*
 * The session (zt_remote): options checked and copied once, libcurl's multi
 * handle, whose connection cache keeps connections open from one call to the
 * next, a few idle easy handles for reuse, and the jitter of retries. Also
 * the clock every deadline is measured on.
 */
#include "remote_internal.h"
#include "ztensor/ztensor_remote_experimental.h" /* zt_remote_bytes_received */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IDLE 32

double ztr__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double zt_remote_clock(void)
{
    return ztr__now();
}

double ztr__deadline(const zt_remote *r)
{
    double t = r->opt.total_timeout > 0 ? ztr__now() + r->opt.total_timeout : 0;
    if (r->opt.deadline > 0 && (t == 0 || r->opt.deadline < t))
        t = r->opt.deadline;
    return t;
}

const char *ztr__deadline_name(const zt_remote *r, double deadline, char *buf, size_t cap)
{
    if (r->opt.deadline > 0 && deadline >= r->opt.deadline)
        snprintf(buf, cap, "the session's deadline (zt_remote_options.deadline)");
    else
        snprintf(buf, cap, "the total timeout (%.3g s)", r->opt.total_timeout);
    return buf;
}

/* ---- the session */

void zt_remote_options_init(zt_remote_options *o)
{
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
    o->connect_timeout = ZT_REMOTE_DEFAULT_CONNECT_TIMEOUT;
    o->stall_timeout = ZT_REMOTE_DEFAULT_STALL_TIMEOUT;
    o->max_retries = ZT_REMOTE_DEFAULT_RETRIES;
    o->backoff = ZT_REMOTE_DEFAULT_BACKOFF;
    o->max_backoff = ZT_REMOTE_DEFAULT_MAX_BACKOFF;
    o->connections = ZT_REMOTE_DEFAULT_CONNECTIONS;
    o->chunk_size = ZT_REMOTE_DEFAULT_CHUNK;
    o->open_window = ZT_REMOTE_DEFAULT_OPEN_WINDOW;
    o->list_max_entries = ZT_REMOTE_DEFAULT_LIST_MAX_ENTRIES;
    o->list_max_bytes = ZT_REMOTE_DEFAULT_LIST_MAX_BYTES;
}

/* A token goes into a header line: RFC 6750's b64token characters only. */
static bool token_ok(const char *t)
{
    if (!*t || strlen(t) > 4096)
        return false;
    for (; *t; t++)
        if (!((*t >= 'A' && *t <= 'Z') || (*t >= 'a' && *t <= 'z') || (*t >= '0' && *t <= '9') ||
              strchr("-._~+/=", *t)))
            return false;
    return true;
}

/* A region: what goes into "aws:amz:REGION:s3" and a host name. */
static bool s3_word_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (!n || n > max)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
            return false;
    return true;
}

/* A value that a header line (or libcurl's user:password) can carry. */
static bool header_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (!n || n > max)
        return false;
    for (; *s; s++)
        if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
            return false;
    return true;
}

static zt_status check_options(const zt_remote_options *o, zt_error *err)
{
    const char *bad = NULL;
    if (o->size < sizeof(*o))
        bad = "size is not sizeof(zt_remote_options): call zt_remote_options_init";
    else if (!(o->connect_timeout > 0 && o->connect_timeout <= 3600))
        bad = "connect_timeout must be in (0, 3600] seconds";
    else if (!(o->total_timeout >= 0 && o->total_timeout <= 1e7))
        bad = "total_timeout must be in [0, 1e7] seconds";
    else if (!(o->deadline >= 0))
        bad = "deadline must be 0 or a time on zt_remote_clock()";
    else if (!(o->stall_timeout >= 1 && o->stall_timeout <= 3600))
        bad = "stall_timeout must be in [1, 3600] seconds";
    else if (!(o->min_rate >= 0 && o->min_rate <= 1e12))
        bad = "min_rate must be in [0, 1e12] bytes per second";
    else if (o->max_retries > 100)
        bad = "max_retries must be at most 100";
    else if (!(o->backoff >= 0 && o->backoff <= 3600 && o->max_backoff >= o->backoff &&
               o->max_backoff <= 86400))
        bad = "backoff must be in [0, 3600] and max_backoff in [backoff, 86400] seconds";
    else if (o->connections < 1 || o->connections > 256)
        bad = "connections must be in [1, 256]";
    else if (o->chunk_size < (64u << 10))
        bad = "chunk_size must be at least 64 KiB";
    else if (o->open_window < 64 || o->open_window > (64u << 20))
        bad = "open_window must be in [64 B, 64 MiB]";
    else if (o->list_max_entries < 1 || o->list_max_bytes < 1)
        bad = "list_max_entries and list_max_bytes must be at least 1";
    else if (o->bearer_token && !token_ok(o->bearer_token))
        bad = "bearer_token holds characters a bearer token may not (RFC 6750)";
    else if (o->s3_max_keys > 1000)
        bad = "s3_max_keys must be at most 1000 (S3's own cap)";
    else if (o->s3_region && !s3_word_ok(o->s3_region, 64))
        bad = "s3_region must be 1 to 64 of a-z 0-9 -";
    else if (o->s3_region && (!o->s3_access_key_id != !o->s3_secret_access_key))
        bad = "s3_access_key_id and s3_secret_access_key go together";
    else if (o->s3_region && o->s3_access_key_id &&
             (!header_ok(o->s3_access_key_id, 255) || !header_ok(o->s3_secret_access_key, 255)))
        bad = "the S3 keys must be 1 to 255 printable characters";
    else if (o->s3_region && o->s3_session_token && !header_ok(o->s3_session_token, 4095))
        bad = "s3_session_token must be 1 to 4095 printable characters";
    else if (o->s3_region && o->s3_endpoint && strncmp(o->s3_endpoint, "http://", 7) &&
             strncmp(o->s3_endpoint, "https://", 8))
        bad = "s3_endpoint must be an http:// or https:// URL";
    return bad ? ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0, "options: %s", bad) : ZT_OK;
}

static char *dup_or_null(const char *s, bool *oom)
{
    char *d = s ? strdup(s) : NULL;
    *oom |= s && !d;
    return d;
}

/* The S3 fields copied; the endpoint without its trailing '/'. -1: out of memory. */
static int copy_s3(zt_remote *r, const zt_remote_options *o)
{
    bool oom = false;
    r->s3_region = dup_or_null(o->s3_region, &oom);
    r->s3_endpoint = dup_or_null(o->s3_endpoint, &oom);
    r->s3_key = dup_or_null(o->s3_access_key_id, &oom);
    r->s3_secret = dup_or_null(o->s3_secret_access_key, &oom);
    r->s3_token = dup_or_null(o->s3_session_token, &oom);
    size_t n = strlen(o->s3_region) + 16;
    if ((r->sigv4 = malloc(n)))
        snprintf(r->sigv4, n, "aws:amz:%s:s3", o->s3_region);
    oom |= !r->sigv4;
    for (size_t k = r->s3_endpoint ? strlen(r->s3_endpoint) : 0; k && r->s3_endpoint[k - 1] == '/';)
        r->s3_endpoint[--k] = 0;
    r->opt.s3_region = r->s3_region;
    r->opt.s3_endpoint = r->s3_endpoint;
    r->opt.s3_access_key_id = r->s3_key;
    r->opt.s3_secret_access_key = r->s3_secret;
    r->opt.s3_session_token = r->s3_token;
    r->opt.flags |= ZT_REMOTE_PLAIN_URL; /* an object's URL is never ztensord's */
    r->opt.bearer_token = NULL;
    if (!r->opt.s3_max_keys)
        r->opt.s3_max_keys = 1000;
    return oom ? -1 : 0;
}

zt_status zt_remote_new(const zt_remote_options *opt, zt_remote **out, zt_error *err)
{
    zt_remote_options defaults;
    zt_remote_options_init(&defaults);
    if (!out)
        return ztr__fail(err, ZT_E_ARG, NULL, NULL, NULL, 0, 0, "NULL argument");
    *out = NULL;
    if (!opt)
        opt = &defaults;
    zt_status st = check_options(opt, err);
    if (st)
        return st;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return ztr__fail(err, ZT_E_NETWORK, NULL, NULL, NULL, 0, 0, "libcurl failed to start");
    zt_remote *r = calloc(1, sizeof(*r));
    if (!r) {
        curl_global_cleanup();
        return ztr__fail(err, ZT_E_NOMEM, NULL, NULL, NULL, 0, 0, "out of memory");
    }
    r->opt = *opt;
    r->opt.size = sizeof(r->opt);
    r->token = opt->bearer_token ? strdup(opt->bearer_token) : NULL;
    r->ca_file = opt->ca_file ? strdup(opt->ca_file) : NULL;
    r->opt.bearer_token = r->token;
    r->opt.ca_file = r->ca_file;
    if (opt->s3_region && copy_s3(r, opt)) {
        zt_remote_free(r);
        return ztr__fail(err, ZT_E_NOMEM, NULL, NULL, NULL, 0, 0, "out of memory");
    }
    r->multi = curl_multi_init();
    r->idle = calloc(MAX_IDLE, sizeof(*r->idle));
    r->rng = (uint64_t)(ztr__now() * 1e9) ^ (uint64_t)(uintptr_t)r;
    if (!r->multi || !r->idle || (opt->bearer_token && !r->token) ||
        (opt->ca_file && !r->ca_file)) {
        zt_remote_free(r);
        return ztr__fail(err, ZT_E_NOMEM, NULL, NULL, NULL, 0, 0, "out of memory");
    }
    curl_multi_setopt(r->multi, CURLMOPT_MAXCONNECTS, (long)(2 * r->opt.connections + 8));
    *out = r;
    return ZT_OK;
}

uint64_t zt_remote_bytes_received(const zt_remote *r)
{
    return r ? __atomic_load_n(&r->received, __ATOMIC_RELAXED) : 0;
}

void zt_remote_free(zt_remote *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nidle; i++)
        curl_easy_cleanup(r->idle[i]);
    free(r->idle);
    if (r->multi)
        curl_multi_cleanup(r->multi);
    free(r->token);
    free(r->ca_file);
    free(r->s3_region);
    free(r->s3_endpoint);
    free(r->s3_key);
    if (r->s3_secret)
        memset(r->s3_secret, 0, strlen(r->s3_secret));
    free(r->s3_secret);
    free(r->s3_token);
    free(r->sigv4);
    free(r);
    curl_global_cleanup();
}

double ztr__rand01(zt_remote *r)
{
    r->rng ^= r->rng << 13;
    r->rng ^= r->rng >> 7;
    r->rng ^= r->rng << 17;
    return (double)(r->rng >> 11) / 9007199254740992.0;
}

CURL *ztr__easy_get(zt_remote *r)
{
    if (r->nidle) {
        CURL *e = r->idle[--r->nidle];
        curl_easy_reset(e);
        return e;
    }
    return curl_easy_init();
}

void ztr__easy_base(const zt_remote *r, CURL *e, char *errbuf)
{
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(r->opt.connect_timeout * 1000));
    if (r->ca_file)
        curl_easy_setopt(e, CURLOPT_CAINFO, r->ca_file);
    if (r->opt.insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
}

void ztr__easy_put(zt_remote *r, CURL *e)
{
    if (r->nidle < MAX_IDLE)
        r->idle[r->nidle++] = e;
    else
        curl_easy_cleanup(e);
}
