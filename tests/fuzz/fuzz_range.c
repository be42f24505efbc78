/*
 * fuzz_range.c: libFuzzer target for server/http/range.c.
 *
 * This file defines LLVMFuzzerTestOneInput and nothing else: no main. Link it with
 * -fsanitize=fuzzer, or with a driver that replays a corpus through the same entry point.
 *
 * Input layout: 8 bytes representation length (little-endian), 1 byte max_parts, 2 bytes of
 * flags, 8 bytes last_modified, then up to 7 fields separated by '\n': Range, If-Range,
 * If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, current ETag. Flag bit i
 * (0-6) says field i is present; bit 7 is GET/HEAD; bit 8 means "no representation"
 * (validators NULL); bit 9 shrinks the length to 0-4095 so small files get explored.
 *
 * Invariants (a violation calls __builtin_trap): the status is one of the five, spans lie
 * inside the representation and add up to at most its length, no more spans than max_parts,
 * spans only for 206, 206/416 only for a GET with Range, 304 only for GET/HEAD; the multipart
 * length equals the sum of its pieces; a parsed HTTP-date survives format + parse; a strong
 * entity-tag match implies a weak one.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/range.h"
#include "store/validators.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) __builtin_trap();                                                             \
    } while (0)

enum { NFIELDS = 7 };

static uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static void check_spans(const ztd_span *spans, size_t n, uint64_t length, unsigned max_parts)
{
    uint64_t sum = 0;
    size_t cap = max_parts < ZTD_MAX_RANGES ? max_parts : ZTD_MAX_RANGES;

    CHECK(n <= cap);
    for (size_t i = 0; i < n; i++) {
        CHECK(spans[i].len > 0);
        CHECK(spans[i].start < length);
        CHECK(spans[i].len <= length - spans[i].start);
        CHECK(spans[i].len <= length - sum);
        sum += spans[i].len;
    }
}

static void check_multipart(const ztd_plan *p, uint64_t length, uint64_t seed)
{
    char boundary[40];
    uint64_t want;

    ztd_multipart_boundary(boundary, seed);
    CHECK(strlen(boundary) < 40);
    want = ztd_multipart_trailer(NULL, 0, boundary);
    for (size_t i = 0; i < p->nspans; i++) {
        const ztd_span *s = &p->spans[i];
        char buf[256];
        size_t n = ztd_multipart_part_header(buf, sizeof buf, boundary, "application/x-zt",
                                             s->start, s->start + s->len - 1, length);
        CHECK(n < sizeof buf && strlen(buf) == n);
        want += n + s->len;
    }
    CHECK(ztd_multipart_length(p, boundary, "application/x-zt", length) == want);
}

static void check_date(const char *s)
{
    int64_t t, back;
    char buf[32];

    if (s == NULL || ztd_http_date_parse(s, &t) != 0) return;
    ztd_http_date_format(t, buf);
    CHECK(strlen(buf) == 29);
    CHECK(ztd_http_date_parse(buf, &back) == 0);
    CHECK(back == t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *field[NFIELDS] = {0};
    char *copy;
    uint64_t length;
    unsigned max_parts, flags;
    int64_t last_modified;
    ztd_request_headers h;
    ztd_validators v;
    ztd_plan p;
    ztd_plan_status st;
    ztd_span spans[ZTD_MAX_RANGES];
    size_t n;
    const int hdr = 8 + 1 + 2 + 8;

    if (size < (size_t)hdr) return 0;
    length = load_le64(data);
    max_parts = data[8];
    flags = (unsigned)data[9] | (unsigned)data[10] << 8;
    last_modified = (int64_t)load_le64(data + 11);
    if (flags & 0x200) length %= 4096;

    /* Split the rest into fields, each its own exact-size allocation for ASan. */
    {
        const uint8_t *q = data + hdr, *end = data + size;
        for (int i = 0; i < NFIELDS && q <= end; i++) {
            const uint8_t *nl = memchr(q, '\n', (size_t)(end - q));
            const uint8_t *stop = nl ? nl : end;
            size_t len = (size_t)(stop - q);
            copy = malloc(len + 1);
            if (copy == NULL) goto out;
            memcpy(copy, q, len);
            copy[len] = '\0';
            field[i] = copy;
            if (nl == NULL) break;
            q = nl + 1;
        }
    }

    memset(&h, 0, sizeof h);
    h.range = (flags & 1) ? field[0] : NULL;
    h.if_range = (flags & 2) ? field[1] : NULL;
    h.if_match = (flags & 4) ? field[2] : NULL;
    h.if_none_match = (flags & 8) ? field[3] : NULL;
    h.if_modified_since = (flags & 16) ? field[4] : NULL;
    h.if_unmodified_since = (flags & 32) ? field[5] : NULL;
    v.etag = (flags & 64) ? field[6] : NULL;
    v.last_modified = last_modified;
    h.is_get_or_head = (flags & 128) != 0;

    st = ztd_plan_request(&h, (flags & 0x100) ? NULL : &v, length, max_parts, &p);
    CHECK(st == p.status);
    CHECK(st == ZTD_PLAN_FULL || st == ZTD_PLAN_PARTIAL || st == ZTD_PLAN_NOT_MODIFIED ||
          st == ZTD_PLAN_PRECONDITION_FAILED || st == ZTD_PLAN_UNSATISFIABLE);
    CHECK((p.nspans > 0) == (st == ZTD_PLAN_PARTIAL));
    CHECK((st == ZTD_PLAN_PARTIAL) == (p.range == ZTD_RANGE_OK));
    CHECK((st == ZTD_PLAN_UNSATISFIABLE) == (p.range == ZTD_RANGE_UNSATISFIABLE));
    if (st == ZTD_PLAN_PARTIAL || st == ZTD_PLAN_UNSATISFIABLE)
        CHECK(h.is_get_or_head && h.range != NULL && !(flags & 0x100) && length > 0);
    if (st == ZTD_PLAN_NOT_MODIFIED) CHECK(h.is_get_or_head);
    check_spans(p.spans, p.nspans, length, max_parts);
    if (p.nspans > 0) check_multipart(&p, length, last_modified);

    /* The parser on its own, with the same field. */
    n = 12345;
    {
        ztd_range_result r = ztd_parse_range(field[0], length, max_parts, spans, &n);
        CHECK(r != ZTD_RANGE_ABSENT && r != ZTD_RANGE_IGNORE_IF_RANGE);
        CHECK((r == ZTD_RANGE_OK) == (n > 0));
        check_spans(spans, n, length, max_parts);
    }

    for (int i = 0; i < NFIELDS; i++) {
        check_date(field[i]);
        if (field[i] != NULL && field[6] != NULL) {
            int strong = ztd_etag_list_match(field[i], field[6], 0);
            int weak = ztd_etag_list_match(field[i], field[6], 1);
            CHECK(strong == 0 || strong == 1);
            CHECK(weak == 0 || weak == 1);
            CHECK(!strong || weak);
        }
    }
    {
        char buf[ZTD_CONTENT_RANGE_MAX];
        for (size_t i = 0; i < p.nspans; i++)
            CHECK(ztd_content_range(buf, sizeof buf, &p.spans[i], length) < sizeof buf);
        CHECK(ztd_content_range(buf, sizeof buf, NULL, length) < sizeof buf);
    }

out:
    for (int i = 0; i < NFIELDS; i++)
        free(field[i]);
    return 0;
}
