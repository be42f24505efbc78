/*
 * range.c: Range, If-Range and the other conditional request headers turned into a plan.
 *
 * Every parser here walks a NUL-terminated string with a cursor and never reads past the
 * terminator; no allocation, no locale, no clock. The rules (and why) are in range.h.
 */
#include "http/range.h"
#include "core/dates.h"
#include "core/lex.h"
#include "store/validators.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Decimal digits into a uint64_t; -1 if there is no digit. A value above UINT64_MAX is
 * read as UINT64_MAX with *big set: past any representation's end (range.h). */
static int parse_u64(const char **pp, uint64_t *out, int *big)
{
    const char *p = *pp;
    uint64_t v = 0;
    *big = 0;
    if (!ztd_is_digit(*p))
        return -1;
    for (; ztd_is_digit(*p); p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (*big || v > (UINT64_MAX - d) / 10)
            *big = 1;
        else
            v = v * 10 + d;
    }
    *pp = p;
    *out = *big ? UINT64_MAX : v;
    return 0;
}

/* Digits [a, a_end) as a number below digits [b, b_end)? For two values both past
 * UINT64_MAX: leading zeros skipped, the shorter is smaller, else the first differing digit. */
static int digits_less(const char *a, const char *a_end, const char *b, const char *b_end)
{
    while (a < a_end && *a == '0')
        a++;
    while (b < b_end && *b == '0')
        b++;
    if (a_end - a != b_end - b)
        return a_end - a < b_end - b;
    return memcmp(a, b, (size_t)(a_end - a)) < 0;
}

/* ---- Range ---------------------------------------------------------------------------- */

/* One range-spec at *pp; sets *sat and the span if it overlaps [0, length). */
static int parse_spec(const char **pp, uint64_t length, int *sat, ztd_span *span)
{
    const char *p = *pp;
    uint64_t first, last;
    int first_big, last_big;

    *sat = 0;
    if (*p == '-') {
        p++;
        if (parse_u64(&p, &last, &last_big) != 0)
            return -1;
        if (last > 0 && length > 0) {
            uint64_t n = last < length ? last : length;
            span->start = length - n;
            span->len = n;
            *sat = 1;
        }
    } else {
        const char *f0 = p;
        if (parse_u64(&p, &first, &first_big) != 0 || *p != '-')
            return -1;
        const char *f1 = p++;
        if (ztd_is_digit(*p)) {
            const char *l0 = p;
            if (parse_u64(&p, &last, &last_big) != 0 || last < first ||
                (first_big && last_big && digits_less(l0, p, f0, f1)))
                return -1;
        } else {
            last = UINT64_MAX;
        }
        if (first < length && !first_big) {
            uint64_t end = last < length - 1 ? last : length - 1;
            span->start = first;
            span->len = end - first + 1;
            *sat = 1;
        }
    }
    *pp = p;
    return 0;
}

ztd_range_result ztd_parse_range(const char *value, uint64_t length, unsigned max_parts,
                                 ztd_span *spans, size_t *n)
{
    size_t cap = max_parts < ZTD_MAX_RANGES ? max_parts : ZTD_MAX_RANGES;
    size_t count = 0, nspec = 0;
    uint64_t sum = 0;
    int too_many = 0, too_large = 0;
    const char *p;

    *n = 0;
    if (value == NULL)
        return ZTD_RANGE_IGNORE_SYNTAX;
    p = ztd_skip_ows(value);
    if (!ztd_prefix_ci(p, "bytes="))
        return ZTD_RANGE_IGNORE_SYNTAX;
    p += 6;
    for (;;) {
        ztd_span span;
        int sat;

        p = ztd_skip_ows(p);
        if (*p == ',') { /* empty list element */
            p++;
            continue;
        }
        if (*p == '\0')
            break;
        if (parse_spec(&p, length, &sat, &span) != 0)
            return ZTD_RANGE_IGNORE_SYNTAX;
        nspec++;
        if (sat && !too_many) {
            if (count == cap) {
                too_many = 1;
            } else {
                spans[count++] = span;
                if (span.len > length - sum)
                    too_large = 1;
                else
                    sum += span.len;
            }
        }
        p = ztd_skip_ows(p);
        if (*p == ',')
            p++;
        else if (*p != '\0')
            return ZTD_RANGE_IGNORE_SYNTAX;
    }
    if (nspec == 0)
        return ZTD_RANGE_IGNORE_SYNTAX;
    if (too_many)
        return ZTD_RANGE_IGNORE_TOO_MANY;
    if (count == 0)
        return ZTD_RANGE_UNSATISFIABLE;
    if (too_large)
        return ZTD_RANGE_IGNORE_TOO_LARGE;
    *n = count;
    return ZTD_RANGE_OK;
}

/* ---- The plan ------------------------------------------------------------------------- */

/* RFC 9110 §13.1.5, narrowed as range.h says. */
static int if_range_holds(const char *value, const char *etag, int64_t last_modified)
{
    const char *p = ztd_skip_ows(value);

    if (*p == '"' || (p[0] == 'W' && p[1] == '/')) {
        return ztd_etag_strong_match(p, etag);
    } else {
        int64_t d;
        if (last_modified == ZTD_TIME_UNKNOWN || ztd_http_date_parse(p, &d) != 0)
            return 0;
        return d == last_modified;
    }
}

static ztd_plan_status finish(ztd_plan *out, ztd_plan_status st)
{
    out->status = st;
    if (st != ZTD_PLAN_PARTIAL)
        out->nspans = 0;
    return st;
}

ztd_plan_status ztd_plan_request(const ztd_request_headers *h, const ztd_validators *v,
                                 uint64_t length, unsigned max_parts, ztd_plan *out)
{
    const int exists = v != NULL;
    const char *etag = v ? v->etag : NULL;
    const int64_t lm = v ? v->last_modified : ZTD_TIME_UNKNOWN;
    int64_t date;
    ztd_range_result r;

    out->range = ZTD_RANGE_ABSENT;
    out->nspans = 0;
    if (h == NULL)
        return finish(out, ZTD_PLAN_FULL);

    if (h->if_match != NULL) {
        if (!ztd_etag_condition(h->if_match, etag, exists, 0))
            return finish(out, ZTD_PLAN_PRECONDITION_FAILED);
    } else if (h->if_unmodified_since != NULL && lm != ZTD_TIME_UNKNOWN &&
               ztd_http_date_parse(h->if_unmodified_since, &date) == 0 && lm > date) {
        return finish(out, ZTD_PLAN_PRECONDITION_FAILED);
    }

    if (h->if_none_match != NULL) {
        if (ztd_etag_condition(h->if_none_match, etag, exists, 1))
            return finish(out,
                          h->is_get_or_head ? ZTD_PLAN_NOT_MODIFIED : ZTD_PLAN_PRECONDITION_FAILED);
    } else if (h->is_get_or_head && h->if_modified_since != NULL && lm != ZTD_TIME_UNKNOWN &&
               ztd_http_date_parse(h->if_modified_since, &date) == 0 && lm <= date) {
        return finish(out, ZTD_PLAN_NOT_MODIFIED);
    }

    if (!h->is_get_or_head || h->range == NULL || !exists || length == 0)
        return finish(out, ZTD_PLAN_FULL);
    if (h->if_range != NULL && !if_range_holds(h->if_range, etag, lm)) {
        out->range = ZTD_RANGE_IGNORE_IF_RANGE;
        return finish(out, ZTD_PLAN_FULL);
    }
    r = ztd_parse_range(h->range, length, max_parts, out->spans, &out->nspans);
    out->range = r;
    if (r == ZTD_RANGE_OK)
        return finish(out, ZTD_PLAN_PARTIAL);
    if (r == ZTD_RANGE_UNSATISFIABLE)
        return finish(out, ZTD_PLAN_UNSATISFIABLE);
    return finish(out, ZTD_PLAN_FULL);
}

/* ---- Response pieces ------------------------------------------------------------------ */

static size_t snprintf_len(int n)
{
    return n < 0 ? 0 : (size_t)n;
}

size_t ztd_content_range(char *buf, size_t cap, const ztd_span *span, uint64_t total)
{
    if (span == NULL)
        return snprintf_len(snprintf(buf, cap, "bytes */%" PRIu64, total));
    return snprintf_len(snprintf(buf, cap, "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, span->start,
                                 span->start + span->len - 1, total));
}

/* splitmix64 finaliser: spreads a counter or a timestamp over all 64 bits. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

void ztd_multipart_boundary(char out[40], uint64_t seed)
{
    snprintf(out, 40, "ztensord-%016" PRIx64, mix64(seed));
}

size_t ztd_multipart_part_header(char *buf, size_t cap, const char *boundary,
                                 const char *content_type, uint64_t start, uint64_t end_incl,
                                 uint64_t total)
{
    if (content_type != NULL)
        return snprintf_len(snprintf(buf, cap,
                                     "\r\n--%s\r\nContent-Type: %s\r\nContent-Range: bytes %" PRIu64
                                     "-%" PRIu64 "/%" PRIu64 "\r\n\r\n",
                                     boundary, content_type, start, end_incl, total));
    return snprintf_len(snprintf(
        buf, cap, "\r\n--%s\r\nContent-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64 "\r\n\r\n",
        boundary, start, end_incl, total));
}

size_t ztd_multipart_trailer(char *buf, size_t cap, const char *boundary)
{
    return snprintf_len(snprintf(buf, cap, "\r\n--%s--\r\n", boundary));
}

uint64_t ztd_multipart_length(const ztd_plan *plan, const char *boundary, const char *content_type,
                              uint64_t total)
{
    uint64_t len = 0;

    if (plan->nspans == 0)
        return 0;
    for (size_t i = 0; i < plan->nspans; i++) {
        const ztd_span *s = &plan->spans[i];
        len += ztd_multipart_part_header(NULL, 0, boundary, content_type, s->start,
                                         s->start + s->len - 1, total);
        len += s->len;
    }
    return len + ztd_multipart_trailer(NULL, 0, boundary);
}
