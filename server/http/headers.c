/*
 * Pure parsers of request headers (see headers.h). No allocation; each reads
 * its NUL-terminated value and nothing past it.
 */
#include "http/headers.h"
#include "core/lex.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The q parameter of one Accept-Encoding member, from p (after the token) up to
 * the next ',' or the end; 1.0 when there is none. */
static double member_q(const char **pp)
{
    const char *p = *pp;
    double q = 1.0;
    while (*p && *p != ',') {
        if (*p != ';') {
            p++;
            continue;
        }
        p = ztd_skip_ows(p + 1);
        if ((p[0] == 'q' || p[0] == 'Q') && p[1] == '=')
            q = strtod(p + 2, NULL);
    }
    *pp = p;
    return q;
}

double ztd_accept_q(const char *ae, const char *coding)
{
    size_t len = strlen(coding);
    double named = 0, star = 0;
    bool has_named = false;
    for (const char *p = ae; p && *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        const char *tok = p;
        while (*p && *p != ',' && *p != ';' && *p != ' ' && *p != '\t')
            p++;
        size_t n = (size_t)(p - tok);
        double q = member_q(&p);
        if (n == len && !strncasecmp(tok, coding, len))
            named = q, has_named = true;
        else if (n == 1 && *tok == '*')
            star = q;
    }
    double q = has_named ? named : star;
    return q > 0 ? q : 0; /* also NaN */
}

bool ztd_accepts_zstd(const char *ae)
{
    return ztd_accept_q(ae, "zstd") > 0;
}

/* One "sha-256=:<44 base64 characters>:" member value at b, ending before end. */
static int sha256_member(const char *b, const char *end, uint8_t out[32])
{
    b = ztd_skip_ows(b);
    const char *colon = b < end && b[0] == ':' ? memchr(b + 1, ':', (size_t)(end - b - 1)) : NULL;
    if (!colon || colon - b - 1 != 44)
        return -1;
    unsigned char dec[48];
    /* 44 base64 characters with one '=' decode to 33 bytes, the last one padding */
    if (EVP_DecodeBlock(dec, (const unsigned char *)b + 1, 44) != 33)
        return -1;
    memcpy(out, dec, 32);
    return 0;
}

int ztd_parse_digest_header(const char *v, ztd_digest_want *out)
{
    out->present = false;
    for (const char *p = v; p && *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (!eq)
            return *p ? -1 : 0;
        if (eq - p == 7 && !strncasecmp(p, "sha-256", 7)) {
            if (sha256_member(eq + 1, end, out->sha256) != 0)
                return -1;
            out->present = true;
        }
        p = end;
    }
    return 0;
}

bool ztd_request_id_valid(const char *v)
{
    size_t n = v ? strnlen(v, ZTD_REQUEST_ID_MAX + 1) : 0;
    if (n == 0 || n > ZTD_REQUEST_ID_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'z') ||
              (v[i] >= 'A' && v[i] <= 'Z') || strchr("-_.:", v[i])))
            return false;
    return true;
}
