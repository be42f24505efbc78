/*
 * s3_vectors_check DIR: checks what botocore_vectors.py wrote in DIR against
 * server/s3/. Each vector (a request botocore signed, or one boto3 sent to
 * a recording server) must verify with its key's scope, and must fail with
 * SignatureDoesNotMatch once its signature, its path or its method is changed
 * by one character. A vector with a body is then decoded or checked as its
 * x-amz-content-sha256 says (aws-chunked with its CRC32 trailer, or a signed
 * payload with an x-amz-checksum-crc32 header), must give the data, and must
 * fail (BadDigest / XAmzContentSHA256Mismatch) once one body byte is flipped.
 * Prints one line per failure; exits 1 if there is one.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3/aws_chunked.h"
#include "s3/body_check.h"
#include "s3/sigv4.h"

#define MAXH 64

typedef struct vec {
    char name[64], method[16], *path, *query, *body_file, *data_file;
    ztd_s3_header h[MAXH];
    size_t nh;
    long long now;
    ztd_s3_scope scope;
} vec;

static int failures;

static void bad(const vec *v, const char *what, ztd_s3err got, const char *msg)
{
    printf("FAIL %s: %s (got %s: %s)\n", v->name, what, ztd_s3err_name(got), msg ? msg : "");
    failures++;
}

static uint8_t *slurp(const char *dir, const char *name, size_t *n)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
    *n = b ? fread(b, 1, (size_t)len, f) : 0;
    fclose(f);
    return b;
}

static ztd_s3err verify(const vec *v, const ztd_s3_keys *k, ztd_s3_auth *a)
{
    ztd_s3_request r = {v->method, v->path, v->query, v->h, v->nh, v->now};
    return ztd_sigv4_verify(&r, k, a);
}

/* The signature's last digit: in Authorization, or in X-Amz-Signature. */
static char *signature_end(vec *v)
{
    for (size_t i = 0; i < v->nh; i++)
        if (!strcasecmp(v->h[i].name, "authorization"))
            return (char *)v->h[i].value + strlen(v->h[i].value) - 1;
    char *s = strstr(v->query, "X-Amz-Signature=");
    return s ? s + strlen("X-Amz-Signature=") + 63 : NULL;
}

static void mutations(vec *v, const ztd_s3_keys *k)
{
    ztd_s3_auth a;
    char *e = signature_end(v);
    if (!e) {
        bad(v, "no signature in the vector", ZTD_S3E_OK, "");
        return;
    }
    char was = *e;
    *e = was == '0' ? '1' : '0';
    ztd_s3err got = verify(v, k, &a);
    if (got != ZTD_S3E_SIGNATURE_DOES_NOT_MATCH)
        bad(v, "a changed signature digit must not verify", got, a.msg);
    *e = was;
    size_t pl = strlen(v->path);
    char *p2 = malloc(pl + 2), *old = v->path;
    memcpy(p2, v->path, pl);
    memcpy(p2 + pl, "x", 2);
    v->path = p2;
    if ((got = verify(v, k, &a)) != ZTD_S3E_SIGNATURE_DOES_NOT_MATCH)
        bad(v, "a changed path must not verify", got, a.msg);
    v->path = old;
    free(p2);
    char m[16];
    memcpy(m, v->method, sizeof(m));
    snprintf(v->method, sizeof(v->method), "%s", strcmp(m, "GET") ? "GET" : "HEAD");
    if ((got = verify(v, k, &a)) != ZTD_S3E_SIGNATURE_DOES_NOT_MATCH)
        bad(v, "a changed method must not verify", got, a.msg);
    memcpy(v->method, m, sizeof(m));
}

static const char *header(const vec *v, const char *name)
{
    for (size_t i = 0; i < v->nh; i++)
        if (!strcasecmp(v->h[i].name, name))
            return v->h[i].value;
    return NULL;
}

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static int sink(void *ctx, const uint8_t *p, size_t n)
{
    buf *b = ctx;
    if (b->n + n > b->cap)
        return -1;
    memcpy(b->p + b->n, p, n);
    b->n += n;
    return 0;
}

/* The body's verdict: decoded (aws-chunked) or checked whole; out gets the data. */
static ztd_s3err body_verdict(const vec *v, const ztd_s3_auth *a, const uint8_t *b, size_t n,
                              buf *out, char *msg, size_t cap)
{
    ztd_s3_request r = {v->method, v->path, v->query, v->h, v->nh, v->now};
    if (a->payload == ZTD_S3_PAYLOAD_STREAMING_UNSIGNED_TRAILER) {
        const char *dl = header(v, "x-amz-decoded-content-length");
        ztd_awsc_config c = {
            ZTD_AWSC_UNSIGNED_TRAILER,  NULL, NULL, NULL, NULL, dl ? atoll(dl) : -1,
            header(v, "x-amz-trailer"), sink, out};
        ztd_s3err e;
        ztd_awsc *d = ztd_awsc_new(&c, &e);
        if (!d)
            return e;
        for (size_t i = 0; i < n && !e; i += 1000) /* in pieces, as MHD hands them over */
            e = ztd_awsc_push(d, b + i, n - i < 1000 ? n - i : 1000);
        if (!e)
            e = ztd_awsc_finish(d);
        const char *b64 = "";
        if (!e && ztd_awsc_checksum(d, &b64) != ZTD_S3_CK_CRC32)
            e = ZTD_S3E_INTERNAL;
        snprintf(msg, cap, "%s", ztd_awsc_message(d));
        ztd_awsc_free(d);
        return e;
    }
    ztd_s3_body_check bc;
    ztd_s3err e = ztd_s3_body_check_init(
        &bc, &r, a->payload == ZTD_S3_PAYLOAD_SHA256 ? a->payload_sha256 : NULL);
    if (!e && !bc.has_alg)
        e = ZTD_S3E_INTERNAL; /* boto3 sends x-amz-checksum-crc32: it must be checked */
    if (!e) {
        ztd_s3_body_check_update(&bc, b, n);
        e = ztd_s3_body_check_finish(&bc);
    }
    snprintf(msg, cap, "%s", bc.msg);
    ztd_s3_body_check_free(&bc);
    sink(out, b, e ? 0 : n);
    return e;
}

static void body(const char *dir, const vec *v, const ztd_s3_auth *a)
{
    size_t bn = 0, dn = 0;
    uint8_t *b = slurp(dir, v->body_file, &bn), *want = slurp(dir, v->data_file, &dn);
    buf out = {malloc(bn + 1), 0, bn + 1};
    char msg[256] = "";
    ztd_s3err e = b && want ? body_verdict(v, a, b, bn, &out, msg, sizeof(msg)) : ZTD_S3E_INTERNAL;
    if (e != ZTD_S3E_OK)
        bad(v, "the body must check", e, msg);
    else if (out.n != dn || memcmp(out.p, want, dn))
        bad(v, "the body must give the data", e, "");
    if (b && bn > 200) {
        b[bn / 2] ^= 0x20; /* a data byte, well inside the first chunk */
        out.n = 0;
        e = body_verdict(v, a, b, bn, &out, msg, sizeof(msg));
        if (e != ZTD_S3E_BAD_DIGEST && e != ZTD_S3E_CONTENT_SHA256_MISMATCH)
            bad(v, "a flipped body byte must fail its checksum", e, msg);
    }
    printf("ok   %s body: %zu bytes, %s\n", v->name, dn,
           a->payload == ZTD_S3_PAYLOAD_STREAMING_UNSIGNED_TRAILER
               ? "aws-chunked, crc32 trailer"
               : "signed payload, crc32 header");
    free(b);
    free(want);
    free(out.p);
}

static void check(const char *dir, vec *v, const ztd_s3_keys *k)
{
    ztd_s3_auth a;
    ztd_s3err got = verify(v, k, &a);
    if (got != ZTD_S3E_OK) {
        bad(v, "must verify", got, a.msg);
        return;
    }
    if (a.scope != v->scope)
        bad(v, "wrong scope", got, "");
    if (v->body_file)
        body(dir, v, &a);
    ztd_s3_auth_clear(&a);
    mutations(v, k);
}

static char *dup_rest(const char *s)
{
    char *d = strdup(s);
    d[strcspn(d, "\n")] = '\0';
    return d;
}

static void clear(vec *v)
{
    for (size_t i = 0; i < v->nh; i++) {
        free((char *)v->h[i].name);
    }
    free(v->path);
    free(v->query);
    free(v->body_file);
    free(v->data_file);
    memset(v, 0, sizeof(*v));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: s3_vectors_check DIR\n");
        return 2;
    }
    char p[4096], err[512];
    snprintf(p, sizeof(p), "%s/keys", argv[1]);
    ztd_s3_keys *k = ztd_s3_keys_load(p, err, sizeof(err));
    snprintf(p, sizeof(p), "%s/vectors.txt", argv[1]);
    FILE *f = fopen(p, "r");
    if (!k || !f) {
        fprintf(stderr, "s3_vectors_check: %s\n", k ? "no vectors.txt" : err);
        return 2;
    }
    static char line[1 << 16];
    vec v = {0};
    int n = 0;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "vector ", 7)) {
            snprintf(v.name, sizeof(v.name), "%.63s", line + 7);
        } else if (!strncmp(line, "now ", 4)) {
            v.now = atoll(line + 4);
        } else if (!strncmp(line, "method ", 7)) {
            snprintf(v.method, sizeof(v.method), "%.15s", line + 7);
        } else if (!strncmp(line, "path ", 5)) {
            v.path = dup_rest(line + 5);
        } else if (!strncmp(line, "query ", 6)) {
            v.query = dup_rest(line + 6);
        } else if (!strncmp(line, "header ", 7) && v.nh < MAXH) {
            char *name = dup_rest(line + 7), *tab = strchr(name, '\t');
            if (!tab)
                return 2;
            *tab = '\0';
            v.h[v.nh].name = name;
            v.h[v.nh++].value = tab + 1;
        } else if (!strncmp(line, "body ", 5)) {
            v.body_file = dup_rest(line + 5);
        } else if (!strncmp(line, "data ", 5)) {
            v.data_file = dup_rest(line + 5);
        } else if (!strncmp(line, "scope ", 6)) {
            v.scope = strcmp(line + 6, "write") ? ZTD_S3_SCOPE_READ : ZTD_S3_SCOPE_WRITE;
        } else if (!strcmp(line, "end")) {
            check(argv[1], &v, k);
            clear(&v);
            n++;
        }
    }
    fclose(f);
    ztd_s3_keys_free(k);
    printf("%d vectors, %d failures\n", n, failures);
    return failures || n < 80 ? 1 : 0;
}
