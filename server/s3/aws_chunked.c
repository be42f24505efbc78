/*
 * The aws-chunked push decoder (see aws_chunked.h): a byte-driven state
 * machine over chunk header lines, chunk data with its CRLF, and trailer
 * lines; signatures are checked as each chunk ends, the checksum once the
 * trailers end.
 */
#include "s3/aws_chunked.h"

#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "core/lex.h"

#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define MAX_CHUNK (1ull << 62)

typedef enum st { ST_HDR, ST_DATA, ST_DATA_CR, ST_DATA_LF, ST_TRAILER, ST_DONE } st;

struct ztd_awsc {
    ztd_awsc_mode mode;
    ztd_awsc_sink sink;
    void *sink_ctx;
    uint8_t key[ZTD_SIGV4_KEY_LEN];
    char date[17], scope[160], prev[ZTD_SIGV4_SIG_HEX + 1];
    int64_t declared;
    uint64_t decoded, off, remaining;
    st state;
    ztd_s3err err;
    char msg[200];
    char line[ZTD_AWSC_MAX_LINE + 1];
    size_t ll;
    char chunk_sig[ZTD_SIGV4_SIG_HEX + 1];
    EVP_MD_CTX *sha;
    ztd_s3_ck ck;
    ztd_s3_ck_alg want;
    char tcanon[ZTD_AWSC_MAX_TRAILERS * (ZTD_AWSC_MAX_LINE + 1) + 1];
    size_t tcl;
    unsigned ntrailers;
    char tsig[ZTD_SIGV4_SIG_HEX + 1];
    char ck_b64[64];
    bool got_ck, ok_ck;
};

static bool is_signed(const ztd_awsc *d)
{
    return d->mode != ZTD_AWSC_UNSIGNED_TRAILER;
}

ztd_awsc *ztd_awsc_new(const ztd_awsc_config *cfg, ztd_s3err *err)
{
    *err = ZTD_S3E_INVALID_ARGUMENT;
    ztd_s3_ck_alg want = cfg->trailer ? ztd_s3_ck_from_name(cfg->trailer) : ZTD_S3_CK_NONE;
    if (cfg->trailer && want == ZTD_S3_CK_NONE)
        return NULL;
    bool sig = cfg->mode != ZTD_AWSC_UNSIGNED_TRAILER;
    if (sig && (!cfg->signing_key || !cfg->amz_date || strlen(cfg->amz_date) != 16 || !cfg->scope ||
                strlen(cfg->scope) >= 160 || !cfg->seed_signature ||
                strlen(cfg->seed_signature) != ZTD_SIGV4_SIG_HEX))
        return NULL;
    *err = ZTD_S3E_INTERNAL;
    ztd_awsc *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->mode = cfg->mode;
    d->sink = cfg->sink;
    d->sink_ctx = cfg->sink_ctx;
    d->declared = cfg->decoded_length;
    d->want = want;
    if (sig) {
        memcpy(d->key, cfg->signing_key, ZTD_SIGV4_KEY_LEN);
        memcpy(d->date, cfg->amz_date, 17);
        snprintf(d->scope, sizeof(d->scope), "%s", cfg->scope);
        memcpy(d->prev, cfg->seed_signature, ZTD_SIGV4_SIG_HEX + 1);
        d->sha = EVP_MD_CTX_new();
    }
    if ((sig && !d->sha) || ztd_s3_ck_init(&d->ck, want) != 0) {
        ztd_awsc_free(d);
        return NULL;
    }
    *err = ZTD_S3E_OK;
    return d;
}

void ztd_awsc_free(ztd_awsc *d)
{
    if (!d)
        return;
    EVP_MD_CTX_free(d->sha);
    ztd_s3_ck_free(&d->ck);
    ztd_sigv4_wipe(d, sizeof(*d));
    free(d);
}

static ztd_s3err fail(ztd_awsc *d, ztd_s3err e, const char *why)
{
    d->err = e;
    snprintf(d->msg, sizeof(d->msg), "aws-chunked body, byte %llu: %s", (unsigned long long)d->off,
             why);
    return e;
}

/* Check the signature of the chunk whose data just ended (its SHA-256 in d->sha). */
static ztd_s3err chunk_signature(ztd_awsc *d)
{
    if (!is_signed(d))
        return ZTD_S3E_OK;
    uint8_t h[32];
    unsigned hl = 0;
    char hex[65], sts[512], mine[ZTD_SIGV4_SIG_HEX + 1];
    EVP_DigestFinal_ex(d->sha, h, &hl);
    ztd_hex_encode(h, 32, hex);
    int n = snprintf(sts, sizeof(sts), "AWS4-HMAC-SHA256-PAYLOAD\n%s\n%s\n%s\n" EMPTY_SHA256 "\n%s",
                     d->date, d->scope, d->prev, hex);
    ztd_sigv4_sign(d->key, sts, (size_t)n, mine);
    if (!ztd_sigv4_sig_equal(mine, d->chunk_sig, strlen(d->chunk_sig)))
        return fail(d, ZTD_S3E_SIGNATURE_DOES_NOT_MATCH, "a chunk signature does not match");
    memcpy(d->prev, mine, sizeof(mine));
    return ZTD_S3E_OK;
}

/* "HEX" or "HEX;chunk-signature=SIG" (signed modes). */
static ztd_s3err chunk_header(ztd_awsc *d, const char *s, size_t n)
{
    size_t i = 0;
    uint64_t size = 0;
    for (; i < n && ztd_hex_value(s[i]) >= 0; i++) {
        if (i == 16)
            return fail(d, ZTD_S3E_INVALID_CHUNK_SIZE, "a chunk size has more than 16 digits");
        size = size << 4 | (uint64_t)ztd_hex_value(s[i]);
    }
    if (i == 0)
        return fail(d, ZTD_S3E_INVALID_CHUNK_SIZE, "a chunk header does not start with a hex size");
    static const char ext[] = ";chunk-signature=";
    size_t el = sizeof(ext) - 1;
    if (is_signed(d)) {
        if (n - i != el + ZTD_SIGV4_SIG_HEX || memcmp(s + i, ext, el))
            return fail(d, ZTD_S3E_MALFORMED_CHUNK, "want HEX;chunk-signature=SIGNATURE");
        memcpy(d->chunk_sig, s + i + el, ZTD_SIGV4_SIG_HEX);
        d->chunk_sig[ZTD_SIGV4_SIG_HEX] = '\0';
    } else if (i != n) {
        return fail(d, ZTD_S3E_MALFORMED_CHUNK, "an unsigned chunk header must be only its size");
    }
    if (size > MAX_CHUNK || (d->declared >= 0 && size > (uint64_t)d->declared - d->decoded))
        return fail(d, ZTD_S3E_INVALID_CHUNK_SIZE,
                    "a chunk runs past x-amz-decoded-content-length");
    if (d->sha)
        EVP_DigestInit_ex(d->sha, EVP_sha256(), NULL);
    d->remaining = size;
    if (size > 0) {
        d->state = ST_DATA;
        return ZTD_S3E_OK;
    }
    d->state = ST_TRAILER;
    return chunk_signature(d);
}

/* The end of the trailers: the trailer signature, then the checksum. */
static ztd_s3err trailers_end(ztd_awsc *d)
{
    if (d->mode == ZTD_AWSC_SIGNED_TRAILER) {
        if (!d->tsig[0])
            return fail(d, ZTD_S3E_MALFORMED_TRAILER, "x-amz-trailer-signature is missing");
        char hex[65], sts[512], mine[ZTD_SIGV4_SIG_HEX + 1];
        ztd_sigv4_sha256_hex(d->tcanon, d->tcl, hex);
        int n = snprintf(sts, sizeof(sts), "AWS4-HMAC-SHA256-TRAILER\n%s\n%s\n%s\n%s", d->date,
                         d->scope, d->prev, hex);
        ztd_sigv4_sign(d->key, sts, (size_t)n, mine);
        if (!ztd_sigv4_sig_equal(mine, d->tsig, strlen(d->tsig)))
            return fail(d, ZTD_S3E_SIGNATURE_DOES_NOT_MATCH,
                        "the trailer signature does not match");
    }
    if (d->want != ZTD_S3_CK_NONE) {
        if (!d->got_ck)
            return fail(d, ZTD_S3E_MALFORMED_TRAILER, "the declared checksum trailer is missing");
        uint8_t got[ZTD_S3_CK_MAX], mine[ZTD_S3_CK_MAX];
        size_t gl = 0, ml = ztd_s3_ck_final(&d->ck, mine);
        if (ztd_s3_b64_decode(d->ck_b64, strlen(d->ck_b64), got, sizeof(got), &gl) != 0 || gl != ml)
            return fail(d, ZTD_S3E_INVALID_DIGEST,
                        "the checksum trailer is not base64 of its size");
        if (memcmp(got, mine, ml))
            return fail(d, ZTD_S3E_BAD_DIGEST,
                        "the checksum you specified did not match the calculated checksum");
        d->ok_ck = true;
    }
    d->state = ST_DONE;
    return ZTD_S3E_OK;
}

/* One trailer line "name:value" (without CRLF), or "" ending them. */
static ztd_s3err trailer_line(ztd_awsc *d, const char *s, size_t n)
{
    if (n == 0)
        return trailers_end(d);
    if (d->mode == ZTD_AWSC_SIGNED || d->tsig[0] || d->ntrailers == ZTD_AWSC_MAX_TRAILERS)
        return fail(d, ZTD_S3E_MALFORMED_TRAILER, "a trailer line where none may be");
    d->ntrailers++;
    const char *colon = memchr(s, ':', n);
    if (!colon || colon == s)
        return fail(d, ZTD_S3E_MALFORMED_TRAILER, "a trailer line is not name:value");
    char name[ZTD_AWSC_MAX_LINE + 1];
    size_t nl = (size_t)(colon - s);
    for (size_t i = 0; i < nl; i++)
        name[i] = ztd_ascii_lower(s[i]);
    name[nl] = '\0';
    const char *v = colon + 1;
    size_t vl = n - nl - 1;
    while (vl && ztd_is_ows(*v))
        v++, vl--;
    while (vl && ztd_is_ows(v[vl - 1]))
        vl--;
    if (!strcmp(name, "x-amz-trailer-signature")) {
        if (d->mode != ZTD_AWSC_SIGNED_TRAILER || vl != ZTD_SIGV4_SIG_HEX)
            return fail(d, ZTD_S3E_MALFORMED_TRAILER, "a bad x-amz-trailer-signature");
        memcpy(d->tsig, v, vl);
        d->tsig[vl] = '\0';
        return ZTD_S3E_OK;
    }
    ztd_s3_ck_alg a = ztd_s3_ck_from_name(name);
    if (a == ZTD_S3_CK_NONE || a != d->want || d->got_ck)
        return fail(d, ZTD_S3E_MALFORMED_TRAILER,
                    "a trailer that is not the checksum x-amz-trailer declared");
    if (vl >= sizeof(d->ck_b64))
        return fail(d, ZTD_S3E_INVALID_DIGEST, "the checksum trailer is too long");
    memcpy(d->ck_b64, v, vl);
    d->ck_b64[vl] = '\0';
    d->got_ck = true;
    d->tcl += (size_t)snprintf(d->tcanon + d->tcl, sizeof(d->tcanon) - d->tcl, "%s:%.*s\n", name,
                               (int)vl, v);
    return ZTD_S3E_OK;
}

/* Collect a CRLF-ended line; returns the bytes used, and *done when the line is whole. */
static size_t take_line(ztd_awsc *d, const uint8_t *p, size_t n, bool *done, ztd_s3err *e)
{
    *done = false;
    *e = ZTD_S3E_OK;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n') {
            if (d->ll == 0 || d->line[d->ll - 1] != '\r') {
                *e = fail(d, ZTD_S3E_MALFORMED_CHUNK, "a line ends in LF without CR");
                return i;
            }
            d->line[--d->ll] = '\0';
            *done = true;
            return i + 1;
        }
        if (d->ll == ZTD_AWSC_MAX_LINE || p[i] == '\0') {
            *e = fail(d, ZTD_S3E_MALFORMED_CHUNK,
                      p[i] ? "a chunk header or trailer line is longer than 256 bytes"
                           : "a NUL byte in a chunk header or trailer line");
            return i;
        }
        d->line[d->ll++] = (char)p[i];
    }
    return n;
}

static size_t data(ztd_awsc *d, const uint8_t *p, size_t n, ztd_s3err *e)
{
    size_t k = n < d->remaining ? n : (size_t)d->remaining;
    *e = ZTD_S3E_OK;
    if (d->sha)
        EVP_DigestUpdate(d->sha, p, k);
    ztd_s3_ck_update(&d->ck, p, k);
    if (d->sink && d->sink(d->sink_ctx, p, k) != 0)
        *e = fail(d, ZTD_S3E_INTERNAL, "the consumer of the decoded body stopped");
    d->remaining -= k;
    d->decoded += k;
    if (d->remaining == 0)
        d->state = ST_DATA_CR;
    return k;
}

static size_t step(ztd_awsc *d, const uint8_t *p, size_t n, ztd_s3err *e)
{
    bool done = false;
    size_t used;
    switch (d->state) {
    case ST_DATA:
        return data(d, p, n, e);
    case ST_DATA_CR:
    case ST_DATA_LF:
        if (*p != (d->state == ST_DATA_CR ? '\r' : '\n')) {
            *e = fail(d, ZTD_S3E_MALFORMED_CHUNK, "a chunk's data is not followed by CRLF");
            return 0;
        }
        *e = ZTD_S3E_OK;
        if (d->state == ST_DATA_CR) {
            d->state = ST_DATA_LF;
            return 1;
        }
        d->state = ST_HDR;
        *e = chunk_signature(d);
        return 1;
    case ST_HDR:
    case ST_TRAILER:
        used = take_line(d, p, n, &done, e);
        if (*e || !done)
            return used;
        d->ll = 0;
        *e = d->state == ST_HDR ? chunk_header(d, d->line, strlen(d->line))
                                : trailer_line(d, d->line, strlen(d->line));
        return used;
    case ST_DONE:
    default:
        *e = fail(d, ZTD_S3E_MALFORMED_CHUNK, "bytes after the end of the aws-chunked body");
        return 0;
    }
}

ztd_s3err ztd_awsc_push(ztd_awsc *d, const uint8_t *p, size_t n)
{
    while (d->err == ZTD_S3E_OK && n > 0) { /* bounded: every step uses a byte or fails */
        ztd_s3err e = ZTD_S3E_OK;
        size_t used = step(d, p, n, &e);
        d->off += used;
        p += used;
        n -= used;
        if (e)
            return d->err = e;
        if (used == 0)
            return fail(d, ZTD_S3E_INTERNAL, "the decoder made no progress");
    }
    return d->err;
}

ztd_s3err ztd_awsc_finish(ztd_awsc *d)
{
    if (d->err)
        return d->err;
    if (d->state != ST_DONE)
        return fail(d, ZTD_S3E_INCOMPLETE_BODY,
                    "the body ended before its final chunk and "
                    "trailers were complete");
    if (d->declared >= 0 && d->decoded != (uint64_t)d->declared)
        return fail(d, ZTD_S3E_INCOMPLETE_BODY,
                    "the decoded length is not x-amz-decoded-content-length");
    return ZTD_S3E_OK;
}

const char *ztd_awsc_message(const ztd_awsc *d)
{
    return d->err ? d->msg : "";
}

uint64_t ztd_awsc_decoded(const ztd_awsc *d)
{
    return d->decoded;
}

ztd_s3_ck_alg ztd_awsc_checksum(const ztd_awsc *d, const char **b64)
{
    *b64 = d->ok_ck ? d->ck_b64 : "";
    return d->ok_ck ? d->want : ZTD_S3_CK_NONE;
}
