/*
 * One HEAD of a URL (ztr__head, remote_internal.h): the size, ETag,
 * Last-Modified and what the server says the bytes hash to (Repr-Digest's
 * sha-256, or S3's x-amz-checksum-sha256 when asked for), retried with the
 * session's backoff like a listing page. Used by zt_remote_pull_object and by
 * zt_remote_open_bytes_in (files that are not tensor files).
 */
#include "remote_internal.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static size_t head_header(char *p, size_t size, size_t nmemb, void *ud)
{
    ztr_head *h = ud;
    size_t n = size * nmemb, vl;
    const char *v;
    int code;
    if (ztr__parse_status_line(p, n, &code) == 0) {
        memset(h, 0, sizeof(*h));
        h->size = -1;
    } else if (ztr__header_is(p, n, "content-length", &v, &vl)) {
        int64_t x = 0;
        size_t i = 0;
        for (; i < vl && i < 18 && v[i] >= '0' && v[i] <= '9'; i++)
            x = x * 10 + (v[i] - '0');
        h->size = i == vl && vl ? x : -1;
    } else if (ztr__header_is(p, n, "etag", &v, &vl) && vl < sizeof(h->etag)) {
        memcpy(h->etag, v, vl);
        h->etag[vl] = 0;
    } else if (ztr__header_is(p, n, "last-modified", &v, &vl) && vl < sizeof(h->lm)) {
        memcpy(h->lm, v, vl);
        h->lm[vl] = 0;
    } else if (ztr__header_is(p, n, "x-amz-checksum-sha256", &v, &vl) && vl < sizeof(h->sha256)) {
        memcpy(h->sha256, v, vl);
        h->sha256[vl] = 0;
    } else if (ztr__header_is(p, n, "repr-digest", &v, &vl)) {
        ztr__repr_digest_sha256(v, vl, h->repr_sha256, &h->has_repr_sha256);
    }
    return n;
}

void ztr__repr_digest_sha256(const char *v, size_t vl, uint8_t out[32], bool *found)
{
    /* sha-256=:BASE64:, possibly among other algorithms, comma-separated */
    static const char key[] = "sha-256=:";
    for (size_t i = 0; i + sizeof(key) - 1 + 45 <= vl; i++) {
        if ((i && v[i - 1] != ' ' && v[i - 1] != ',') ||
            strncasecmp(v + i, key, sizeof(key) - 1) != 0)
            continue;
        const char *b = v + i + sizeof(key) - 1;
        uint8_t buf[48];
        if (b[44] == ':' && EVP_DecodeBlock(buf, (const unsigned char *)b, 44) == 33) {
            memcpy(out, buf, 32);
            *found = true;
        }
        return;
    }
}

static size_t head_body(char *p, size_t size, size_t nmemb, void *ud)
{
    (void)p;
    (void)ud;
    return size * nmemb; /* a HEAD has none; a broken server's is dropped */
}

static void head_setopt(zt_remote *r, CURL *e, const char *url, struct curl_slist *hd,
                        double deadline, ztr_head *h, char *eb)
{
    double left = deadline > 0 ? deadline - ztr__now() : 0;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, head_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, h);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, head_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, h);
    ztr__easy_base(r, e, eb);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                     deadline > 0 ? (long)(left > 0 ? left * 1000 : 1) + 1
                                  : (long)(r->opt.stall_timeout * 1000));
    ztr__auth_setopt(r, e);
}

zt_status ztr__head(zt_remote *r, const char *url, double deadline, ztr_head *h, zt_error *err)
{
    struct curl_slist *hd = NULL;
    if (ztr__auth_headers(r, &hd))
        return ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
    struct curl_slist *t = curl_slist_append(hd, "x-amz-checksum-mode: ENABLED");
    if (t)
        hd = t;
    if (t && (t = curl_slist_append(hd, "Want-Repr-Digest: sha-256=1")))
        hd = t;
    if (!t) {
        curl_slist_free_all(hd);
        return ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
    }
    zt_status st = ZT_OK;
    double wait = r->opt.backoff;
    for (unsigned attempt = 0;; attempt++) {
        CURL *e = ztr__easy_get(r);
        if (!e) {
            st = ztr__fail(err, ZT_E_NOMEM, url, NULL, NULL, 0, 0, "out of memory");
            break;
        }
        char eb[CURL_ERROR_SIZE] = "";
        memset(h, 0, sizeof(*h));
        h->size = -1;
        head_setopt(r, e, url, hd, deadline, h, eb);
        CURLcode cc = curl_easy_perform(e);
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &h->status);
        ztr__easy_put(r, e);
        bool transient = cc != CURLE_OK || h->status == 429 || h->status >= 500;
        if (!transient)
            break;
        if (attempt >= r->opt.max_retries || (deadline > 0 && ztr__now() + wait >= deadline)) {
            st = cc ? ztr__fail(err, ZT_E_NETWORK, url, NULL, NULL, 0, 0, "HEAD: %s",
                                eb[0] ? eb : curl_easy_strerror(cc))
                    : ztr__fail(err, ZT_E_HTTP, url, NULL, NULL, 0, 0, "HEAD: HTTP %ld", h->status);
            break;
        }
        usleep((useconds_t)(wait * (0.5 + ztr__rand01(r)) * 1e6));
        wait = wait * 2 < r->opt.max_backoff ? wait * 2 : r->opt.max_backoff;
    }
    curl_slist_free_all(hd);
    if (st)
        return st;
    if (h->status == 200 && h->size >= 0)
        return ZT_OK;
    if (h->status == 200)
        return ztr__fail(err, ZT_E_HTTP, url, NULL, NULL, 0, 0, "HEAD: no Content-Length");
    return ztr__fail(err, h->status == 404 ? ZT_E_NOT_FOUND : ZT_E_HTTP, url, NULL, NULL, 0, 0,
                     "HEAD: HTTP %ld%s", h->status,
                     h->status == 403 ? " (access denied: check the credentials and the "
                                        "bucket's policy)"
                                      : "");
}
