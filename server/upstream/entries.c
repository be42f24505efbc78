/*
 * The upstream store's table (see upstream.h): set-up, the table of upstream
 * files (name -> entry), their opening and revalidation after upstream_ttl,
 * the names the upstream answered 404 for (kept upstream_negative_ttl), and
 * the mapping of libztensor-remote errors to ours. Each thread that opens
 * has its own libztensor-remote session (a session is used by one thread at
 * a time), so opens of different files run at once. A revalidation is a
 * HEAD with the pinned validator for the file and each of its v2 shards (no
 * body, whatever the answer): the manifest is read again only when one of
 * them changed, or when a fill saw the file change. Fills are in fill.c,
 * /raw's gaps in raw.c.
 */
#include "upstream/internal.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/dates.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/workq.h"
#include "store/catalog_v2.h"
#include "store/names.h"
#include "upstream/origin_listing.h"

#include <errno.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <openssl/evp.h>
#include <pthread.h>
#include <time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ztensor/ztensor_remote_experimental.h>

/* ---- set-up */

static char *read_token(const char *path, char *err, size_t cap)
{
    FILE *f = fopen(path, "re");
    char line[4096];
    if (!f || !fgets(line, sizeof(line), f)) {
        snprintf(err, cap, "upstream_token_file %s: %s", path, f ? "empty" : strerror(errno));
        if (f)
            fclose(f);
        return NULL;
    }
    fclose(f);
    line[strcspn(line, "\r\n")] = 0;
    return strdup(line);
}

static void free_session(void *p)
{
    zt_remote_free(p);
}

static void options_of(ztd_upstream *u, const ztd_config *cfg)
{
    zt_remote_options_init(&u->opt);
    u->opt.bearer_token = u->token;
    u->opt.connect_timeout = (double)cfg->upstream_connect_timeout_ms / 1000.0;
    u->opt.stall_timeout = (double)cfg->upstream_timeout_ms / 1000.0;
    u->opt.total_timeout = 0; /* a fill of 1 GiB takes as long as it takes; stalls are cut */
    u->open_timeout = (double)cfg->upstream_timeout_ms / 1000.0; /* an open: retries included */
    u->opt.min_rate = (double)cfg->upstream_min_rate; /* and so is an upstream that drips */
    u->opt.max_retries = cfg->upstream_retries;
    u->opt.max_backoff = 5.0;
    u->opt.open.max_manifest_size = cfg->max_manifest_size;
}

/* s3://BUCKET/PREFIX: the session's options made an S3 session's (from the
 * environment, as every AWS tool takes them), and base the URL of the
 * objects under PREFIX (ENDPOINT/BUCKET/PREFIX): files are then read by URL
 * as from a plain server, every request signed by libztensor-remote. */
static bool s3_upstream(ztd_upstream *u, const ztd_config *cfg, char *err, size_t cap)
{
    if (cfg->upstream_kind == ZTD_UPSTREAM_ZTENSORD) {
        snprintf(err, cap, "upstream %s is an S3 store: upstream_kind must be auto or plain",
                 cfg->upstream);
        return false;
    }
    zt_error ze;
    char bucket[64];
    const char *prefix;
    zt_remote *r = NULL;
    char *url = NULL;
    bool ok = zt_remote_s3_split(cfg->upstream, bucket, &prefix, &ze) == ZT_OK &&
              zt_remote_s3_configure(&u->opt, NULL, NULL, NULL, NULL, &ze) == ZT_OK &&
              zt_remote_new(&u->opt, &r, &ze) == ZT_OK &&
              zt_remote_s3_object_url(r, bucket, prefix, &url, &ze) == ZT_OK;
    zt_remote_free(r);
    if (!ok) {
        snprintf(err, cap, "upstream %s: %s", cfg->upstream, ze.message);
        return false;
    }
    for (size_t n = strlen(url); n > 0 && url[n - 1] == '/';)
        url[--n] = 0;
    free(u->base);
    u->base = url;
    u->kind = ZTD_UPSTREAM_PLAIN;
    ztd_log(ZTD_LOG_INFO, "upstream %s is an S3 store: objects at %s/NAME, requests %s",
            cfg->upstream, u->base, u->opt.s3_access_key_id ? "signed (SigV4)" : "unsigned");
    return true;
}

ztd_upstream *ztd_upstream_new(const ztd_config *cfg, const struct ztd_source_ops *src, char *err,
                               size_t cap)
{
    ztd_upstream *u = calloc(1, sizeof(*u));
    if (!u || !(u->base = strdup(cfg->upstream))) {
        free(u);
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    size_t bl = strlen(u->base);
    while (bl > 0 && u->base[bl - 1] == '/') /* BASE/NAME: one slash between */
        u->base[--bl] = 0;
    u->kind = (int)cfg->upstream_kind;
    u->ttl_ms = cfg->upstream_ttl_ms;
    u->src = src;
    u->stale_ms = cfg->upstream_stale_ms;
    u->negative_ttl_ms = cfg->upstream_negative_ttl_ms;
    u->mem_budget = (size_t)cfg->upstream_entries_memory;
    u->timeout_ms = cfg->upstream_timeout_ms;
    u->verify_first = cfg->upstream_verify_first;
    u->cache_size = cfg->cache_size;
    u->retries = cfg->upstream_retries;
    pthread_mutex_init(&u->mu, NULL);
    pthread_cond_init(&u->cv, NULL);
    pthread_key_create(&u->open_session, free_session);
    pthread_key_create(&u->fill_session, free_session);
    if (!(u->slots = calloc(MAX_ENTRIES, sizeof(*u->slots))))
        goto fail;
    if (cfg->upstream_token_file[0] && !(u->token = read_token(cfg->upstream_token_file, err, cap)))
        goto fail_quiet;
    options_of(u, cfg);
    if (!strncmp(cfg->upstream, "s3://", 5) && !s3_upstream(u, cfg, err, cap))
        goto fail_quiet;
    zt_error ze;
    zt_remote *probe; /* the options are checked now, the session made at the first open */
    if (zt_remote_new(&u->opt, &probe, &ze)) {
        snprintf(err, cap, "upstream %s: %s", u->base, ze.message);
        goto fail_quiet;
    }
    zt_remote_free(probe);
    if (!(u->cache = ztd_cache_open(cfg->cache_dir, cfg->cache_size, err, cap)))
        goto fail_quiet;
    if (!(u->fills = ztd_workq_new(cfg->upstream_fills, "ztd-fill")) ||
        !(u->list = ztd_uplist_new(u->base, u->token, u->opt.connect_timeout, u->opt.stall_timeout,
                                   u->ttl_ms)))
        goto fail;
    if (!strncmp(cfg->upstream, "s3://", 5) &&
        !(u->store_list = ztd_uplist_new_store(&u->opt, cfg->upstream, u->ttl_ms)))
        goto fail;
    ztd_upstream_tell_kind(u); /* an upstream down now is asked again at the first open */
    return u;
fail:
    snprintf(err, cap, "upstream %s: out of memory or threads", u->base);
fail_quiet:
    ztd_upstream_free(u);
    return NULL;
}

void ztd_upstream_free(ztd_upstream *u)
{
    if (!u)
        return;
    ztd_workq_free(u->fills); /* fills end first: they hold entries and items */
    for (size_t i = 0; u->slots && i < u->n; i++) {
        ztd_entry_release(u->slots[i].e);
        free(u->slots[i].name);
    }
    free(u->slots);
    ztd_cache_close(u->cache);
    pthread_key_delete(u->open_session);
    pthread_key_delete(u->fill_session);
    if (u->made_free)
        u->made_free(u->made_ctx);
    ztd_uplist_free(u->list);
    ztd_uplist_free(u->store_list);
    pthread_mutex_destroy(&u->mu);
    pthread_cond_destroy(&u->cv);
    free(u->token);
    free(u->base);
    free(u);
}

const char *ztd_upstream_url(const ztd_upstream *u)
{
    return u->base;
}

ztd_cache *ztd_upstream_cache(ztd_upstream *u)
{
    return u->cache;
}

ztd_uplist *ztd_upstream_listing(ztd_upstream *u)
{
    return ztd_upstream_is_ztensord(u) ? u->list : NULL;
}

ztd_uplist *ztd_upstream_store_listing(ztd_upstream *u)
{
    return u->store_list;
}

ztd_uplist *ztd_upstream_file_listing(ztd_upstream *u)
{
    return u->store_list ? u->store_list : ztd_upstream_listing(u);
}

void ztd_upstream_set_made(ztd_upstream *u, ztd_upstream_made_fn *fn, void *ctx,
                           void (*ctx_free)(void *))
{
    u->made = fn;
    u->made_ctx = ctx;
    u->made_free = ctx_free;
}

void *ztd_upstream_made_ctx(const ztd_upstream *u, ztd_upstream_made_fn *fn)
{
    return u->made == fn ? u->made_ctx : NULL;
}

bool ztd_upstream_kind_known(const ztd_upstream *u)
{
    return __atomic_load_n(&u->kind, __ATOMIC_ACQUIRE) != ZTD_UPSTREAM_AUTO;
}

void ztd_upstream_get_stats(ztd_upstream *u, ztd_upstream_stats *out)
{
    pthread_mutex_lock(&u->mu);
    __atomic_store_n(&u->st.entries, (uint64_t)u->n, __ATOMIC_RELAXED);
    __atomic_store_n(&u->st.entries_bytes, (uint64_t)u->mem_used, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&u->mu);
    const uint64_t *from = (const uint64_t *)&u->st; /* a struct of uint64_t counters */
    uint64_t *to = (uint64_t *)out;
    for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
        to[i] = __atomic_load_n(&from[i], __ATOMIC_RELAXED);
}

/* The kind, probed once it is needed (an upstream down at start-up is
 * probed again at the next open). */
void ztd_upstream_tell_kind(ztd_upstream *u)
{
    if (__atomic_load_n(&u->kind, __ATOMIC_ACQUIRE) != ZTD_UPSTREAM_AUTO)
        return;
    int k = ztd_upstream_probe(u->base, u->token, u->opt.connect_timeout, u->opt.stall_timeout);
    if (k == ZTD_UPSTREAM_AUTO)
        return;
    ztd_log(ZTD_LOG_INFO, "upstream %s is %s", u->base,
            k == ZTD_UPSTREAM_ZTENSORD ? "a ztensord" : "a plain HTTP server");
    __atomic_store_n(&u->kind, k, __ATOMIC_RELEASE);
}

/* ---- errors */

/* What a libztensor-remote failure is to a client, with a message naming
 * the upstream. */
ztd_err ztd_up_err_of_remote(const ztd_upstream *u, const char *what, const zt_error *ze, char *msg,
                             size_t cap)
{
    ztd_err e;
    switch (ze->code) {
    case ZT_E_NOT_FOUND:
        e = ZTD_ERR_FILE_NOT_FOUND;
        break;
    case ZT_E_NETWORK:
        e = strstr(ze->message, "timeout") || strstr(ze->message, "timed out") ||
                    strstr(ze->message, "stall")
                ? ZTD_ERR_UPSTREAM_TIMEOUT
                : ZTD_ERR_UPSTREAM_FAILED;
        break;
    case ZT_E_HTTP:
    case ZT_E_CHANGED:
        e = ZTD_ERR_UPSTREAM_FAILED;
        break;
    case ZT_E_NOMEM:
        e = ZTD_ERR_INTERNAL;
        break;
    default: /* the bytes came, and are not a file the server would serve */
        e = ZTD_ERR_FILE_INVALID;
    }
    /* A message cut to cap says so (and gcc's -Wformat-truncation, an error in
     * Release builds, sees the length checked). */
    if (snprintf(msg, cap, "upstream %s: %s: %s", u->base, what, ze->message) >= (int)cap &&
        cap > 4)
        memcpy(msg + cap - 4, "...", 4);
    return e;
}

/* ---- entries */

static void up_free(struct ztd_upstream_entry *up)
{
    ztd_up_shards_free(up);
    zt_remote_close(up->rf); /* the entry's file is its model */
    free(up->url);
    free(up->segs);
    free(up->gaps);
    pthread_mutex_destroy(&up->mu);
    free(up);
}

/* "\"<32 hex>\"" for the entry: the upstream's ETag when it has that shape
 * (every ztensord's does, so tiers and zt pull pin one validator end to
 * end), else 128 bits of the sha256 of the validator (entries' validators
 * are 32 hex digits, read.c derives JSON validators from them). */
void ztd_upstream_file_etag_of(const char *validator, char out[40])
{
    size_t n = strlen(validator);
    bool hex = n == 34 && validator[0] == '"' && validator[33] == '"';
    for (size_t i = 1; hex && i < 33; i++)
        hex = strchr("0123456789abcdef", validator[i]) != NULL;
    if (hex) {
        memcpy(out, validator, 35);
        return;
    }
    unsigned char md[32];
    unsigned int ml = 0;
    EVP_Digest(validator, n, md, &ml, EVP_sha256(), NULL);
    out[0] = '"';
    for (int i = 0; i < 16; i++)
        snprintf(out + 1 + 2 * i, 3, "%02x", md[i]);
    out[33] = '"';
    out[34] = 0;
}

static ztd_entry *entry_new(ztd_upstream *u, const char *name, const char *url, zt_remote_file *rf,
                            char *msg, size_t cap)
{
    ztd_entry *e = calloc(1, sizeof(*e));
    struct ztd_upstream_entry *up = calloc(1, sizeof(*up));
    zt_error ze;
    if (!e || !up || !(e->name = strdup(name)) || !(up->url = strdup(url))) {
        snprintf(msg, cap, "out of memory");
        goto fail;
    }
    pthread_mutex_init(&up->mu, NULL);
    up->u = u;
    up->rf = rf;
    up->e = e;
    e->up = up;
    e->up_free = up_free;
    e->src = u->src;
    e->refs = 1;
    e->name_len = strlen(name);
    e->file = (zt_file *)zt_remote_file_zt(rf);             /* owned by rf; read-only here */
    e->kind = e->file ? ZTD_ENTRY_TENSOR : ZTD_ENTRY_PLAIN; /* opened as bytes: plain */
    e->size = zt_remote_file_size(rf);
    e->mode = 0100444;
    const char *etag = zt_remote_file_etag(rf), *lm = zt_remote_file_last_modified(rf);
    snprintf(up->validator, sizeof(up->validator), "%s", etag[0] ? etag : lm);
    ztd_upstream_file_etag_of(up->validator, e->file_etag);
    if (e->file && zt_file_get_kind(e->file) == ZT_KIND_ZT_2) {
        if (!(e->v2 = ztd_v2_entry_upstream(e->file, up->validator))) {
            snprintf(msg, cap, "out of memory");
            goto fail;
        }
    }
    int64_t t = 0;
    if (lm[0] && ztd_http_date_parse(lm, &t) == 0)
        e->mtime_ns = t * 1000000000;
    ztd_http_date_format(t, e->last_modified);
    if (!e->file)
        return e; /* a plain file: no manifest */
    if (!(e->manifest_json = ztd_manifest_json_line(e->file, &e->manifest_json_len, &ze))) {
        snprintf(msg, cap, "%s", ze.message);
        goto fail;
    }
    return e;
fail:
    if (e && e->up) {
        ztd_entry_release(e); /* closes rf */
        return NULL;
    }
    zt_remote_close(rf);
    if (up)
        free(up->url);
    free(up);
    if (e)
        free(e->name);
    free(e);
    return NULL;
}

/* The 404 of a name the upstream does not have. */
/* A request that finds its file being revalidated waits this long for the
 * revalidation before it takes the version opened before. */
#define STALE_AFTER_MS 1000

/* pthread_cond_timedwait for ms milliseconds (the cv's clock is realtime). */
static void cond_wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, uint64_t ms)
{
    struct timespec t = ztd_deadline(CLOCK_REALTIME, (int64_t)ms);
    pthread_cond_timedwait(cv, mu, &t);
}

static ztd_err missing_err(const ztd_upstream *u, const char *name, char *msg, size_t cap)
{
    snprintf(msg, cap, "no file \"%s\" in the catalog or at upstream %s", name, u->base);
    return ZTD_ERR_FILE_NOT_FOUND;
}

/* A plain file (every name that is not a tensor file's, store/names.h):
 * opened as bytes, by one HEAD of its bytes' URL (a ztensord's /raw). */
static zt_status open_plain(ztd_upstream *u, zt_remote *session, char *url, size_t cap,
                            zt_remote_file **rf, zt_error *ze)
{
    size_t n = strlen(url);
    if (ztd_upstream_is_ztensord(u)) {
        if (n + 5 > cap) {
            ze->code = ZT_E_ARG;
            snprintf(ze->message, sizeof(ze->message), "the URL is too long");
            return ZT_E_ARG;
        }
        memcpy(url + n, "/raw", 5);
    }
    return zt_remote_open_bytes_in(session, url, rf, ze);
}

/* The sha256 of a plain file's bytes as the origin says it, kept with the
 * entry: what its fill checks the bytes against, and (the cache holding back
 * the last byte until they matched) what its ETag and Repr-Digest claim.
 * From the Repr-Digest of the open's HEAD, else from a ztensord origin's
 * listing ("sha256", once its verifier hashed the file). None (an origin that
 * has not hashed it yet, a plain HTTP server): the bytes are cached by the
 * file's URL and validator, and no digest is claimed. */
static void plain_sha256(ztd_upstream *u, ztd_entry *e)
{
    uint8_t sha[32];
    bool have = zt_remote_file_sha256(e->up->rf, sha);
    ztd_uplist *l = have ? NULL : ztd_upstream_listing(u);
    json_t *files = NULL;
    char msg[300];
    if (l && ztd_uplist_get(l, &files, msg, sizeof(msg)) == ZTD_ERR_NONE) {
        for (size_t i = 0; !have && i < json_array_size(files); i++) {
            json_t *f = json_array_get(files, i);
            const char *hex = json_string_value(json_object_get(f, "sha256"));
            json_t *size = json_object_get(f, "size");
            const char *name = json_string_value(json_object_get(f, "name"));
            have = hex && strlen(hex) == 64 && name && !strcmp(name, e->name) &&
                   json_is_integer(size) && (uint64_t)json_integer_value(size) == e->size &&
                   ztd_hex_decode(hex, 32, sha) == 0;
        }
    }
    json_decref(files);
    if (have) {
        memcpy(e->plain_sha256, sha, 32);
        __atomic_store_n(&e->plain_state, ZTD_PLAIN_HASHED, __ATOMIC_RELEASE);
    }
}

/* Open name at upstream: a new entry, or the error. */
static ztd_err open_entry(ztd_upstream *u, const char *name, ztd_entry **out, char *msg, size_t cap)
{
    ztd_upstream_tell_kind(u);
    if (__atomic_load_n(&u->kind, __ATOMIC_ACQUIRE) == ZTD_UPSTREAM_AUTO) {
        COUNT(u, errors, 1);
        snprintf(msg, cap,
                 "upstream %s cannot be reached (upstream_kind auto could not tell "
                 "what it is)",
                 u->base);
        return ZTD_ERR_UPSTREAM_FAILED;
    }
    char url[NAME_URL_MAX];
    if (!ztd_up_file_url(u, name, url, sizeof(url))) {
        snprintf(msg, cap, "the URL of \"%.200s...\" at upstream %s is too long", name, u->base);
        return ZTD_ERR_URI_TOO_LONG;
    }
    zt_remote_file *rf = NULL;
    zt_error ze;
    zt_remote *session = ztd_up_open_session(u, &ze);
    bool plain = !ztd_file_ext_served(name, strlen(name));
    zt_status st = !session ? ze.code
                   : plain  ? open_plain(u, session, url, sizeof(url), &rf, &ze)
                            : zt_remote_open_in(session, url, &rf, &ze);
    /* The file changed while it was opened (a tier answering some requests
     * from the version before): opened again, a few times, never mixed. */
    for (int i = 0; session && !plain && st == ZT_E_CHANGED && i < 3; i++)
        st = zt_remote_open_in(session, url, &rf, &ze);
    COUNT(u, opens, 1);
    if (st) {
        COUNT(u, open_failures, 1);
        if (st != ZT_E_NOT_FOUND)
            COUNT(u, errors, 1);
        ztd_err e = ztd_up_err_of_remote(u, name, &ze, msg, cap);
        return e == ZTD_ERR_FILE_NOT_FOUND ? missing_err(u, name, msg, cap) : e;
    }
    if (!zt_remote_file_etag(rf)[0] && !zt_remote_file_last_modified(rf)[0]) {
        zt_remote_close(rf); /* nothing to pin: a replaced file could mix two versions */
        snprintf(msg, cap,
                 "\"%s\" at upstream %s comes with no ETag and no Last-Modified: no version of "
                 "it can be pinned, so it is not served through the cache",
                 name, u->base);
        return ZTD_ERR_UPSTREAM_FAILED;
    }
    if (!(*out = entry_new(u, name, url, rf, msg, cap)))
        return ZTD_ERR_INTERNAL;
    if (plain) {
        plain_sha256(u, *out);
        return ZTD_ERR_NONE;
    }
    ztd_err err = ztd_up_open_shards(u, *out, msg, cap); /* a v2 root's */
    if (err) {
        ztd_entry_release(*out);
        *out = NULL;
    }
    return err;
}

/* The version held (old), revalidated after upstream_ttl: ZTD_ERR_NONE with
 * *out a new reference to old when the upstream says the file and its shards
 * are unchanged; the error when the upstream could not be asked (the caller
 * keeps old served within upstream_stale); else (changed, gone, or an answer
 * that cannot tell) what opening the file again gives. */
static ztd_err revalidate_entry(ztd_upstream *u, const char *name, ztd_entry *old, ztd_entry **out,
                                char *msg, size_t cap)
{
    zt_error ze = {0};
    zt_remote *session = ztd_up_open_session(u, &ze);
    zt_status st = session ? ZT_OK : ze.code;
    if (session) {
        COUNT(u, revalidations, 1);
        if (!(st = zt_remote_revalidate(session, old->up->rf, &ze))) {
            COUNT(u, revalidations_unchanged, 1);
            st = ztd_up_revalidate_shards(u, old, &ze);
        }
    }
    if (st == ZT_OK) {
        ztd_entry_retain(old);
        *out = old;
        return ZTD_ERR_NONE;
    }
    if (st == ZT_E_NETWORK || st == ZT_E_HTTP || st == ZT_E_NOMEM) {
        COUNT(u, errors, 1);
        return ztd_up_err_of_remote(u, name, &ze, msg, cap);
    }
    ztd_log(ZTD_LOG_DEBUG, "upstream: revalidating %s: %s: opening it again", name, ze.message);
    return open_entry(u, name, out, msg, cap);
}

/* checked 0 is "expired" (ztd_up_expire): the monotonic clock counts from boot,
 * so now - 0 alone stays under a TTL longer than the uptime. */
static bool fresh(const ztd_upstream *u, const slot *s, uint64_t now)
{
    return s->e && s->checked && now - s->checked < u->ttl_ms;
}

/* Answered 404 within upstream_negative_ttl: 404 again, upstream not asked. */
static bool known_missing(const ztd_upstream *u, const slot *s, uint64_t now)
{
    return !s->e && s->missing && now - s->checked < u->negative_ttl_ms;
}

/* Past its TTL, but within the stale window: served while revalidated. */
static bool stale_ok(const ztd_upstream *u, const slot *s, uint64_t now)
{
    return s->e && s->checked && now - s->checked < u->ttl_ms + u->stale_ms;
}

ztd_entry *ztd_upstream_peek(ztd_upstream *u, const char *name)
{
    ztd_entry *made = u->made ? u->made(u->made_ctx, name, false) : NULL;
    if (made)
        return made;
    uint64_t now = ztd_now_ms();
    pthread_mutex_lock(&u->mu);
    slot *s = ztd_up_find_slot(u, name);
    ztd_entry *e = NULL;
    /* fresh; or stale after a revalidation that failed (stale-if-error) */
    if (s && (fresh(u, s, now) || (now < s->failed_until && stale_ok(u, s, now))))
        e = s->e;
    if (e) {
        ztd_entry_retain(e);
        s->used = now;
    }
    pthread_mutex_unlock(&u->mu);
    return e;
}

ztd_err ztd_upstream_known_missing(ztd_upstream *u, const char *name, char *msg, size_t cap)
{
    pthread_mutex_lock(&u->mu);
    slot *s = ztd_up_find_slot(u, name);
    bool missing = s && !s->opening && known_missing(u, s, ztd_now_ms());
    pthread_mutex_unlock(&u->mu);
    return missing ? missing_err(u, name, msg, cap) : ZTD_ERR_NONE;
}

/* Same version? The validator and size pin it. */
static bool same_version(const ztd_entry *a, const ztd_entry *b)
{
    return a->size == b->size && !strcmp(a->up->validator, b->up->validator) &&
           a->up->validator[0] && ztd_up_same_shards(a, b);
}

/* Room in upstream_entries_memory for e, a new version in slot name: false
 * (a message in msg) when every other entry is in use. */
static bool room_for(ztd_upstream *u, const char *name, const ztd_entry *e, char *msg, size_t cap)
{
    slot *s = ztd_up_find_slot(u, name);
    size_t need = ztd_up_entry_bytes(name, e), have = s->bytes;
    if (need <= have || ztd_up_make_room(u, need - have, name))
        return true;
    /* One file larger than the whole budget is still served, alone: the
     * bound is then that one file. */
    if (need > u->mem_budget) {
        ztd_up_make_room(u, u->mem_budget, name); /* everything else that can go */
        if (u->mem_used == have)
            return true;
    }
    snprintf(msg, cap,
             "\"%s\" at upstream %s needs about %zu bytes of upstream_entries_memory (%zu), "
             "and the other upstream files opened here are in use: retry",
             name, u->base, need, u->mem_budget);
    return false;
}

/* The slot's new state after an open (or a revalidation) that gave (got, e):
 * the answer's error (got, or OVERLOADED when e does not fit). */
static ztd_err settle_slot(ztd_upstream *u, const char *name, ztd_err got, ztd_entry *e,
                           ztd_entry **out, char *msg, size_t cap)
{
    slot *s = ztd_up_find_slot(u, name);
    s->opening = false;
    uint64_t now = ztd_now_ms();
    if (got == ZTD_ERR_NONE && s->e && same_version(s->e, e)) {
        ztd_entry_release(e); /* keep the entry, and what it learnt */
    } else if (got == ZTD_ERR_NONE && !room_for(u, name, e, msg, cap)) {
        ztd_entry_release(e);
        got = ZTD_ERR_OVERLOADED;
        s = ztd_up_find_slot(u, name);
    } else if (got == ZTD_ERR_NONE) {
        s = ztd_up_find_slot(u, name); /* room was made: the table moved */
        if (s->e)
            ztd_log(ZTD_LOG_INFO, "upstream: %s changed (%s -> %s)", s->name, s->e->up->validator,
                    e->up->validator);
        ztd_up_slot_set(u, s, e);
    }
    if (got == ZTD_ERR_NONE) {
        s->missing = false;
        s->reopen = false;
        s->checked = s->used = now;
        s->failed_until = 0;
        ztd_entry_retain(s->e);
        *out = s->e;
    } else if (s->e && got != ZTD_ERR_FILE_NOT_FOUND && got != ZTD_ERR_FILE_INVALID) {
        /* Upstream unreachable (or no room for its new version): what was
         * opened stays served within the stale window (stale-if-error),
         * checked again by the next request; past it, the error. */
        if (stale_ok(u, s, now)) {
            ztd_entry_retain(s->e);
            *out = s->e;
            s->failed_until = now + u->ttl_ms; /* asked again after a TTL, not by every request */
        }
    } else if (got == ZTD_ERR_FILE_NOT_FOUND && u->negative_ttl_ms) {
        ztd_up_slot_set(u, s, NULL); /* remembered as missing, for upstream_negative_ttl */
        s->missing = true;
        s->checked = now;
    } else {
        ztd_up_drop_slot(u, s);
    }
    return *out ? ZTD_ERR_NONE : got;
}

/* Entries were dropped: give their memory back. A parsed manifest is many
 * small allocations made on the thread that opened it, in that thread's
 * malloc arena, and glibc returns free pages inside an arena only when asked
 * (measured: 100 opens of 4 MB manifests within a 64 MiB budget left 920 MB
 * of RSS without this, 180 MB with it). */
static void give_back(ztd_upstream *u, uint64_t evictions_before)
{
#ifdef __GLIBC__
    if (__atomic_load_n(&u->st.entry_evictions, __ATOMIC_RELAXED) != evictions_before)
        malloc_trim(0);
#else
    (void)u, (void)evictions_before;
#endif
}

ztd_err ztd_upstream_get(ztd_upstream *u, const char *name, ztd_entry **out, char *msg, size_t cap)
{
    if ((*out = u->made ? u->made(u->made_ctx, name, true) : NULL))
        return ZTD_ERR_NONE;
    uint64_t evictions = __atomic_load_n(&u->st.entry_evictions, __ATOMIC_RELAXED);
    pthread_mutex_lock(&u->mu);
    slot *s;
    uint64_t until = ztd_now_ms() + STALE_AFTER_MS;
    for (;;) {
        s = ztd_up_find_slot(u, name);
        if (!s || !s->opening)
            break;
        /* Being revalidated: wait for it (single flight), but when it takes
         * longer than STALE_AFTER_MS, the version we have (stale-while-
         * revalidate). A revalidation that answers at once is seen by every
         * request, as a tier's nodes need: a node that opened a file from a
         * tier in the middle of the tier's revalidation would mix versions. */
        if (stale_ok(u, s, ztd_now_ms()) && ztd_now_ms() >= until) {
            *out = s->e;
            ztd_entry_retain(*out);
            pthread_mutex_unlock(&u->mu);
            return ZTD_ERR_NONE;
        }
        if (stale_ok(u, s, ztd_now_ms()))
            cond_wait_ms(&u->cv, &u->mu, until - ztd_now_ms());
        else
            pthread_cond_wait(&u->cv, &u->mu); /* single flight: one open per name */
    }
    if (s && fresh(u, s, ztd_now_ms())) {
        *out = s->e;
        ztd_entry_retain(*out);
        s->used = ztd_now_ms();
        pthread_mutex_unlock(&u->mu);
        return ZTD_ERR_NONE;
    }
    if (s && known_missing(u, s, ztd_now_ms())) {
        pthread_mutex_unlock(&u->mu);
        return missing_err(u, name, msg, cap);
    }
    if (!s && !(s = ztd_up_new_slot(u, name, ztd_now_ms()))) {
        pthread_mutex_unlock(&u->mu);
        snprintf(msg, cap,
                 "too many upstream files are in use at once (%d files, upstream_entries_memory "
                 "%zu bytes): retry",
                 MAX_ENTRIES, u->mem_budget);
        return ZTD_ERR_OVERLOADED;
    }
    s->opening = true;
    ztd_entry *old = s->reopen ? NULL : s->e; /* revalidated, not read again */
    if (old)
        ztd_entry_retain(old);
    pthread_mutex_unlock(&u->mu);
    ztd_entry *e = NULL;
    ztd_err got =
        old ? revalidate_entry(u, name, old, &e, msg, cap) : open_entry(u, name, &e, msg, cap);
    ztd_entry_release(old);
    pthread_mutex_lock(&u->mu);
    ztd_err err = settle_slot(u, name, got, e, out, msg, cap);
    pthread_cond_broadcast(&u->cv);
    pthread_mutex_unlock(&u->mu);
    if (*out && got != ZTD_ERR_NONE)
        ztd_log(ZTD_LOG_WARN, "%s; serving the version opened before", msg);
    give_back(u, evictions);
    return err;
}

/* A fill saw the file change upstream: the next request opens it again, all
 * of it (an upstream whose HEAD says 304 while its ranges say 412 is not
 * asked its HEAD again: the fill's answer is the one that pins the bytes). */
void ztd_up_expire(ztd_upstream *u, const ztd_entry *e)
{
    pthread_mutex_lock(&u->mu);
    slot *s = ztd_up_find_slot(u, e->name);
    if (s && s->e == e) {
        s->checked = 0;
        s->reopen = true;
    }
    pthread_mutex_unlock(&u->mu);
}

bool ztd_upstream_find_blob_in(const ztd_entry *e, const uint8_t sha256[32],
                               const zt_component **comp)
{
    for (size_t k = 0; e->file && k < zt_file_object_count(e->file); k++) {
        const zt_object *o = zt_file_object_at(e->file, k);
        for (size_t j = 0; j < zt_object_component_count(o); j++) {
            const zt_component *c = zt_object_component_at(o, j);
            size_t n;
            const uint8_t *d = zt_component_digest_bytes(c, &n);
            if (zt_component_digest_kind(c) == ZT_DIGEST_SHA256 && d && n == 32 &&
                ztd_upstream_part_servable(e, c) && !memcmp(d, sha256, 32)) {
                *comp = c;
                return true;
            }
        }
    }
    return false;
}

ztd_entry *ztd_upstream_find_blob(ztd_upstream *u, const uint8_t sha256[32],
                                  const zt_component **comp)
{
    ztd_entry *found = NULL;
    pthread_mutex_lock(&u->mu);
    for (size_t i = 0; i < u->n && !found; i++)
        if (u->slots[i].e && ztd_upstream_find_blob_in(u->slots[i].e, sha256, comp))
            found = u->slots[i].e;
    if (found)
        ztd_entry_retain(found);
    pthread_mutex_unlock(&u->mu);
    return found;
}

void ztd_upstream_span_etag(const ztd_entry *e, uint64_t off, uint64_t len, char out[40])
{
    char text[128];
    int n = snprintf(text, sizeof(text), "%s@%" PRIu64 "+%" PRIu64, e->file_etag, off, len);
    unsigned char md[32];
    unsigned int ml = 0;
    EVP_Digest(text, (size_t)n, md, &ml, EVP_sha256(), NULL);
    out[0] = '"';
    for (int i = 0; i < 16; i++)
        snprintf(out + 1 + 2 * i, 3, "%02x", md[i]);
    out[33] = '"';
    out[34] = 0;
}
