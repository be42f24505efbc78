/*
 * fuzz_framing.c: libFuzzer target for server/http/framing.c.
 *
 * This file defines LLVMFuzzerTestOneInput and nothing else: no main. Link it with
 * -fsanitize=fuzzer, or with a driver that replays a corpus through the same entry point.
 *
 * Input layout: the first byte picks the version (low two bits: HTTP/1.0, HTTP/1.1, HTTP/1.2,
 * or the second line of the input as the version). The rest is split on '\n': the first line
 * is the request target (a NUL byte in it cuts the C string, as libmicrohttpd does, while its
 * whole length is passed as the length sent), each further line a header, name up to the
 * first ':' and value after it (no ':' gives an empty value). Each piece gets its own
 * exact-size allocation, so an over-read is caught by AddressSanitizer.
 *
 * Invariants (a violation calls __builtin_trap): the status is 0, 400 or 501, with a code and
 * a message exactly when it is not 0, and 501 only for a Transfer-Encoding; a NUL in the
 * target, a header name that is not a token, a value with a control character, a
 * Content-Length together with a Transfer-Encoding, two Content-Lengths, two Hosts, or an
 * HTTP/1.1 request without one are never accepted; an accepted request is chunked or has a
 * length but not both, has_body agrees with them, expect_continue only for HTTP/1.1, and the
 * path is "/" or a suffix of the target that starts with '/' unless it is the whole target.
 * The same input gives the same verdict twice.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/framing.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

enum { MAX_LINES = 64 };

typedef struct piece {
    char *s;
    size_t n;
} piece;

static char *dup_n(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

static int is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int named(const piece *name, const char *want)
{
    return name->n == strlen(want) && strncasecmp(name->s, want, name->n) == 0;
}

typedef struct facts {
    int bad_name, bad_value, hosts, lengths, encodings;
} facts;

static void feed(ztd_framing *f, const piece *names, const piece *values, size_t nh, facts *k)
{
    for (size_t i = 0; i < nh; i++) {
        int token = names[i].n > 0;
        for (size_t j = 0; j < names[i].n; j++)
            token &= is_tchar((unsigned char)names[i].s[j]);
        k->bad_name |= !token;
        for (size_t j = 0; j < values[i].n; j++) {
            unsigned char c = (unsigned char)values[i].s[j];
            k->bad_value |= (c < 0x20 && c != '\t') || c == 0x7f;
        }
        k->hosts += named(&names[i], "Host");
        k->lengths += named(&names[i], "Content-Length");
        k->encodings += named(&names[i], "Transfer-Encoding");
        ztd_framing_header(f, names[i].s, names[i].n, values[i].s, values[i].n);
    }
}

static void check_verdict(const ztd_framing *f, const char *target, size_t sent, const facts *k,
                          int minor)
{
    unsigned st = f->status;
    CHECK(st == 0 || st == 400 || st == 501);
    CHECK((st != 0) == (f->message != NULL));
    CHECK((st != 0) == (f->code != NULL));
    if (st == 501)
        CHECK(k->encodings > 0 && strcmp(f->code, "not_implemented") == 0);
    if (strlen(target) < sent || k->bad_name || k->bad_value || k->lengths > 1 || k->hosts > 1 ||
        (k->lengths && k->encodings) || (minor >= 1 && k->hosts == 0) || minor < 0)
        CHECK(st != 0);
    if (st) {
        CHECK(!f->has_body && !f->chunked && !f->has_length && !f->expect_continue);
        return;
    }
    CHECK(!(f->chunked && f->has_length));
    CHECK(f->chunked == (k->encodings > 0));
    CHECK(f->has_length == (k->lengths > 0));
    CHECK(f->has_body == (f->chunked || f->content_length > 0));
    CHECK(!f->expect_continue || minor >= 1);
    CHECK(f->path != NULL);
    if (f->path != target && strcmp(f->path, "/") != 0) {
        size_t tl = strlen(target), pl = strlen(f->path);
        CHECK(f->path > target && f->path + pl == target + tl && f->path[0] == '/');
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const versions[] = {"HTTP/1.0", "HTTP/1.1", "HTTP/1.2"};
    piece lines[MAX_LINES];
    size_t nl = 0;
    if (size < 1)
        return 0;
    unsigned sel = data[0] & 3;
    const uint8_t *q = data + 1, *end = data + size;
    while (nl < MAX_LINES && q <= end) {
        const uint8_t *nlp = memchr(q, '\n', (size_t)(end - q));
        const uint8_t *stop = nlp ? nlp : end;
        lines[nl].n = (size_t)(stop - q);
        if (!(lines[nl].s = dup_n(q, lines[nl].n)))
            goto out;
        nl++;
        if (!nlp)
            break;
        q = nlp + 1;
    }
    if (nl == 0)
        return 0;
    const char *version = sel < 3 ? versions[sel] : (nl > 1 ? lines[1].s : "");
    size_t first_header = sel < 3 ? 1 : 2;
    int minor = -1;
    if (strncmp(version, "HTTP/1.", 7) == 0 && version[7] >= '0' && version[7] <= '9' &&
        version[8] == '\0')
        minor = version[7] - '0';

    piece names[MAX_LINES], values[MAX_LINES];
    size_t nh = 0;
    for (size_t i = first_header; i < nl; i++, nh++) {
        char *colon = memchr(lines[i].s, ':', lines[i].n);
        names[nh].s = lines[i].s;
        names[nh].n = colon ? (size_t)(colon - lines[i].s) : lines[i].n;
        values[nh].s = colon ? colon + 1 : lines[i].s + lines[i].n;
        values[nh].n = colon ? lines[i].n - names[nh].n - 1 : 0;
    }

    ztd_framing f, g;
    facts k = {0}, k2 = {0};
    ztd_framing_begin(&f, version, lines[0].s, lines[0].n);
    feed(&f, names, values, nh, &k);
    ztd_framing_end(&f);
    check_verdict(&f, lines[0].s, lines[0].n, &k, minor);

    ztd_framing_begin(&g, version, lines[0].s, lines[0].n);
    feed(&g, names, values, nh, &k2);
    ztd_framing_end(&g);
    CHECK(g.status == f.status && g.message == f.message && g.path == f.path);
    CHECK(g.chunked == f.chunked && g.content_length == f.content_length);
    CHECK(g.expect_continue == f.expect_continue && g.has_body == f.has_body);

out:
    for (size_t i = 0; i < nl; i++)
        free(lines[i].s);
    return 0;
}
