/*
 * fuzz_sigv4.c: libFuzzer target for server/s3/sigv4.c and sigv4_canon.c: SigV4 verification
 * of a request from a stranger.
 *
 * This file defines LLVMFuzzerTestOneInput and nothing else: no main. Link it with
 * -fsanitize=fuzzer, or with a driver that replays a corpus through the same entry point.
 *
 * Input layout, '\n'-separated lines: the time (decimal Unix seconds; anything else means
 * 2013-05-24T00:00:00Z), the method, the raw path, the raw query, then headers "name:value"
 * (at most 300, so the header cap is reached). The keys table holds the AWS docs' example key
 * (write) and a read key.
 *
 * Invariants (a violation calls __builtin_trap): the verdict is one of the enum's values;
 * no message holds a secret the input did not; OK comes with a scope, a 64-digit seed signature and
 * a region, and with the signature's last digit changed the same request is SignatureDoesNotMatch;
 * the canonical request is a fixed point: fed its own canonical path and query as the raw path and
 * query, it comes out the same.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3/sigv4.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

#define SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define MAXH 300

static ztd_s3_keys *keys(void)
{
    static const char text[] = "write AKIAIOSFODNN7EXAMPLE " SECRET "\nread READKEY readsecret99\n";
    char err[128];
    return ztd_s3_keys_parse(text, sizeof(text) - 1, err, sizeof(err));
}

/* A message may echo what the request said (a header name, say), so a secret counts as leaked
 * only when the input did not hold it. */
static const uint8_t *g_in;
static size_t g_n;

static bool in_input(const char *s)
{
    return memmem(g_in, g_n, s, strlen(s)) != NULL;
}

static void no_secret(const ztd_s3_auth *a)
{
    CHECK(!strstr(a->msg, SECRET) || in_input(SECRET));
    CHECK(!strstr(a->msg, "readsecret99") || in_input("readsecret99"));
}

static char *sig_end(ztd_s3_header *h, size_t n, char *query)
{
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(h[i].name, "authorization")) {
            char *s = strstr(h[i].value, "Signature=");
            return s && strlen(s) >= 74 ? s + 73 : NULL;
        }
    char *s = query ? strstr(query, "X-Amz-Signature=") : NULL;
    return s && strlen(s) >= 80 ? s + 79 : NULL;
}

/* The canonical request is a fixed point of (decode, encode). */
static void fixed_point(const ztd_s3_request *r)
{
    ztd_s3_query q;
    char msg[256];
    ztd_s3err e = ztd_s3_query_parse(r->query, &q, msg, sizeof(msg));
    if (e) {
        ztd_s3_query_free(&q);
        return;
    }
    char *c1 =
        ztd_sigv4_canonical_request(r, &q, "host", "UNSIGNED-PAYLOAD", false, &e, msg, sizeof(msg));
    ztd_s3_query_free(&q);
    if (!c1)
        return;
    char *m = strchr(c1, '\n'), *p = m + 1, *pe = strchr(p, '\n'), *qe = strchr(pe + 1, '\n');
    *pe = '\0';
    *qe = '\0';
    ztd_s3_request r2 = *r;
    r2.path = p;
    r2.query = pe + 1;
    ztd_s3_query q2;
    e = ztd_s3_query_parse(r2.query, &q2, msg, sizeof(msg));
    CHECK(e == ZTD_S3E_OK || e == ZTD_S3E_INVALID_URI); /* the encoded query can be longer */
    char *c2 = e ? NULL
                 : ztd_sigv4_canonical_request(&r2, &q2, "host", "UNSIGNED-PAYLOAD", false, &e, msg,
                                               sizeof(msg));
    ztd_s3_query_free(&q2);
    if (c2) {
        *pe = '\n';
        *qe = '\n';
        CHECK(!strcmp(c1, c2));
    }
    free(c1);
    free(c2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    ztd_s3_header *h = calloc(MAXH, sizeof(*h));
    ztd_s3_keys *k = keys();
    if (!text || !h || !k)
        goto out;
    g_in = data;
    g_n = size;
    memcpy(text, data, size);
    text[size] = '\0';
    char *line[4] = {"", "", "", ""}, *s = text;
    size_t n = 0;
    for (int i = 0; i < 4 && s; i++) {
        line[i] = s;
        s = strchr(s, '\n');
        if (s)
            *s++ = '\0';
    }
    while (s && n < MAXH) {
        char *nl = strchr(s, '\n'), *colon;
        if (nl)
            *nl = '\0';
        if ((colon = strchr(s, ':'))) {
            *colon = '\0';
            h[n].name = s;
            h[n++].value = colon + 1;
        }
        s = nl ? nl + 1 : NULL;
    }
    char *end;
    long long now = strtoll(line[0], &end, 10);
    ztd_s3_request r = {line[1], line[2], line[3], h, n, *line[0] && !*end ? now : 1369353600};
    ztd_s3_auth a;
    ztd_s3err e = ztd_sigv4_verify(&r, k, &a);
    CHECK((unsigned)e < ZTD_S3E_COUNT_);
    no_secret(&a);
    if (e == ZTD_S3E_OK) {
        CHECK(a.scope != ZTD_S3_SCOPE_NONE && strlen(a.seed_signature) == 64 && a.region[0]);
        char *d = sig_end(h, n, line[3]);
        CHECK(d);
        char was = *d;
        *d = was == '0' ? '1' : '0';
        CHECK(ztd_sigv4_verify(&r, k, &a) == ZTD_S3E_SIGNATURE_DOES_NOT_MATCH);
        no_secret(&a);
        *d = was;
    }
    ztd_s3_auth_clear(&a);
    fixed_point(&r);
out:
    ztd_s3_keys_free(k);
    free(h);
    free(text);
    return 0;
}
