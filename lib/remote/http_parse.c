/*
 * Pure parsers of what a remote server sends back (Content-Range,
 * Retry-After, ETag, status lines, header lines, error bodies) and of the URL
 * a caller gives. No allocation beyond jansson's for an error body and no
 * I/O, so the unit tests and fuzz_remote reach every branch without a socket.
 * Every number is overflow-checked; every length is the caller's.
 */
#include "remote_internal.h"

#include <jansson.h>
#include <string.h>
#include <strings.h>

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static void trim(const char **s, size_t *n)
{
    while (*n && (is_blank(**s) || (*s)[*n - 1] == '\r' || (*s)[*n - 1] == '\n' ||
                  is_blank((*s)[*n - 1]))) {
        if (is_blank(**s)) {
            (*s)++;
            (*n)--;
        } else {
            (*n)--;
        }
    }
}

/* Decimal digits at s[*i]; at least one, no overflow. */
static int parse_u64(const char *s, size_t n, size_t *i, uint64_t *out)
{
    uint64_t v = 0;
    size_t start = *i;
    while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
        unsigned d = (unsigned)(s[*i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
        (*i)++;
    }
    if (*i == start)
        return -1;
    *out = v;
    return 0;
}

int ztr__parse_content_range(const char *s, size_t n, ztr_content_range *out)
{
    memset(out, 0, sizeof(*out));
    trim(&s, &n);
    if (n < 6 || strncasecmp(s, "bytes", 5) != 0 || !is_blank(s[5]))
        return -1;
    size_t i = 6;
    while (i < n && is_blank(s[i]))
        i++;
    if (i < n && s[i] == '*') {
        out->unsatisfied = true;
        i++;
    } else {
        if (parse_u64(s, n, &i, &out->first) || i >= n || s[i++] != '-' ||
            parse_u64(s, n, &i, &out->last) || out->last < out->first)
            return -1;
    }
    if (i >= n || s[i++] != '/')
        return -1;
    if (i < n && s[i] == '*' && !out->unsatisfied) {
        i++;
    } else {
        if (parse_u64(s, n, &i, &out->total))
            return -1;
        out->total_known = true;
        if (!out->unsatisfied && out->last >= out->total)
            return -1;
    }
    return i == n ? 0 : -1;
}

int ztr__parse_retry_after(const char *s, size_t n, time_t now, double *seconds)
{
    trim(&s, &n);
    if (n && s[0] >= '0' && s[0] <= '9') {
        size_t i = 0;
        uint64_t v;
        if (parse_u64(s, n, &i, &v) || i != n)
            return -1;
        *seconds = v > 1000000000ull ? 1e9 : (double)v;
        return 0;
    }
    /* An HTTP-date (IMF-fixdate, RFC 850 or asctime): curl_getdate reads all three. */
    char buf[64];
    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    time_t t = curl_getdate(buf, NULL);
    if (t == (time_t)-1)
        return -1;
    *seconds = t > now ? (double)(t - now) : 0.0;
    return 0;
}

int ztr__etag_kind(const char *s, size_t n)
{
    int kind = 1;
    if (n >= 2 && s[0] == 'W' && s[1] == '/') {
        kind = 2;
        s += 2;
        n -= 2;
    }
    if (n < 2 || s[0] != '"' || s[n - 1] != '"')
        return 0;
    for (size_t i = 1; i + 1 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        /* etagc = %x21 / %x23-7E / obs-text */
        if (c == '"' || c < 0x21 || c == 0x7f)
            return 0;
    }
    return kind;
}

int ztr__parse_status_line(const char *s, size_t n, int *code)
{
    if (n < 5 || memcmp(s, "HTTP/", 5) != 0)
        return -1;
    size_t i = 5;
    while (i < n && !is_blank(s[i]))
        i++;
    while (i < n && is_blank(s[i]))
        i++;
    if (n - i < 3)
        return -1;
    int v = 0;
    for (int k = 0; k < 3; k++) {
        if (s[i + k] < '0' || s[i + k] > '9')
            return -1;
        v = v * 10 + (s[i + k] - '0');
    }
    if (n - i > 3 && !is_blank(s[i + 3]) && s[i + 3] != '\r' && s[i + 3] != '\n')
        return -1;
    if (v < 100)
        return -1;
    *code = v;
    return 0;
}

bool ztr__header_is(const char *line, size_t n, const char *name, const char **val, size_t *vlen)
{
    size_t k = strlen(name);
    if (n <= k || line[k] != ':' || strncasecmp(line, name, k) != 0)
        return false;
    const char *v = line + k + 1;
    size_t m = n - k - 1;
    trim(&v, &m);
    *val = v;
    *vlen = m;
    return true;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

int ztr__data_url(const char *url, unsigned flags, char *out, size_t cap, bool *safetensors,
                  const char **why)
{
    size_t n = strlen(url), scheme;
    *safetensors = false;
    if (n >= 7 && !strncasecmp(url, "http://", 7))
        scheme = 7;
    else if (n >= 8 && !strncasecmp(url, "https://", 8))
        scheme = 8;
    else
        return *why = "only http:// and https:// URLs are supported", -1;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f)
            return *why = "a URL may not hold spaces or control characters", -1;
    size_t host_end = scheme + strcspn(url + scheme, "/?#");
    if (host_end == scheme)
        return *why = "the URL has no host", -1;
    /* The path ends at the query or the fragment; a fragment is never sent. */
    size_t path_end = host_end + strcspn(url + host_end, "?#");
    size_t frag = host_end + strcspn(url + host_end, "#");
    const char *p = url + host_end;
    size_t plen = path_end - host_end;
    if (ends_with(p, plen, ".safetensors") || ends_with(p, plen, ".safetensors/raw"))
        *safetensors = true;
    bool add_raw = false;
    if (!(flags & ZT_REMOTE_PLAIN_URL)) {
        const char *v1 = NULL;
        for (const char *q = p; q && q < p + plen; q++) {
            q = memchr(q, '/', (size_t)(p + plen - q));
            if (!q)
                break;
            if ((size_t)(p + plen - q) > 10 && !memcmp(q, "/v1/files/", 10)) {
                v1 = q;
                break;
            }
        }
        if (v1 && (ends_with(p, plen, ".zt") || ends_with(p, plen, ".safetensors") ||
                   ends_with(p, plen, ".alt")))
            add_raw = true;
    }
    size_t need = frag + (add_raw ? 4 : 0) + 1;
    if (need > cap)
        return *why = "the URL is too long", -1;
    memcpy(out, url, path_end);
    size_t o = path_end;
    if (add_raw) {
        memcpy(out + o, "/raw", 4);
        o += 4;
    }
    memcpy(out + o, url + path_end, frag - path_end);
    out[o + frag - path_end] = 0;
    return 0;
}

static void printable(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        out[o++] = c >= 0x20 && c < 0x7f                   ? (char)c
                   : (c == '\n' || c == '\r' || c == '\t') ? ' '
                                                           : '?';
    }
    while (o && out[o - 1] == ' ')
        o--;
    out[o] = 0;
}

/* The first occurrence of tag (lower case) in s[0, n), any case; NULL when none. */
static const char *find_tag(const char *s, size_t n, const char *tag)
{
    size_t t = strlen(tag);
    for (size_t i = 0; i + t <= n; i++)
        if (!strncasecmp(s + i, tag, t))
            return s + i;
    return NULL;
}

/* An HTML error page (a plain server's): the text of its <title>, or of the
 * page without its tags when it has none (at most 200 bytes of it), spaces
 * collapsed. 0 when the body is not HTML. */
static int html_title(const char *body, size_t n, char *out, size_t cap)
{
    size_t i = 0;
    while (i < n && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
        i++;
    if (i == n || body[i] != '<' ||
        !(find_tag(body + i, n - i, "<html") || find_tag(body + i, n - i, "<!doctype html") ||
          find_tag(body + i, n - i, "<title")))
        return 0;
    const char *t = find_tag(body + i, n - i, "<title");
    const char *gt = t ? memchr(t, '>', (size_t)(body + n - t)) : NULL;
    const char *end = gt ? find_tag(gt, (size_t)(body + n - gt), "</title") : NULL;
    const char *p = gt ? gt + 1 : NULL;
    int strip = !end; /* no whole title: the page's text, tags left out */
    if (strip)
        p = body + i, end = body + n;
    size_t o = 0, limit = strip && cap > 201 ? 201 : cap;
    for (int in_tag = 0; p < end && o + 1 < limit; p++) {
        unsigned char c = (unsigned char)*p;
        int space = c == ' ' || c == '\t' || c == '\r' || c == '\n';
        if (strip && (c == '<' || c == '>' || in_tag)) {
            in_tag = c == '<' || (in_tag && c != '>');
            space = 1;
        }
        if (space && (!o || out[o - 1] == ' '))
            continue;
        out[o++] = space ? ' ' : c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    while (o && out[o - 1] == ' ')
        o--;
    out[o] = 0;
    if (!o)
        snprintf(out, cap, "an HTML page");
    return 1;
}

void ztr__error_summary(const char *body, size_t n, char *out, size_t cap)
{
    if (!cap)
        return;
    out[0] = 0;
    json_t *j = n ? json_loadb(body, n, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
    json_t *e = json_is_object(j) ? json_object_get(j, "error") : NULL;
    const char *code = json_string_value(json_object_get(e, "code"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    if (code && msg) {
        char tmp[600];
        snprintf(tmp, sizeof(tmp), "%.100s: %.400s", code, msg);
        printable(tmp, strlen(tmp), out, cap);
    } else if (!html_title(body, n, out, cap)) {
        printable(body, n < 200 ? n : 200, out, cap);
    }
    json_decref(j);
}
