/*
 * CompleteMultipartUpload's document (s3_mpu_xml.h), read with expat.
 */
#include "s3/s3_mpu_xml.h"
#include "s3/s3_expat.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_MAX 64

typedef struct parse {
    ztd_s3_expat x; /* first: the handlers' user data */
    ztd_s3_part_ref *parts;
    size_t n;
    int depth, in; /* in: 1 PartNumber, 2 ETag */
    bool in_part, has_num, has_etag;
    char text[TEXT_MAX + 1];
    size_t tlen;
} parse;

static void stop(parse *ps, const char *why)
{
    ztd_s3_expat_stop(&ps->x, why);
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    parse *ps = ud;
    const char *n = ztd_s3_xml_local(name);
    (void)atts;
    ps->depth++;
    if (ps->depth == 1 && strcmp(n, "CompleteMultipartUpload"))
        return stop(ps, "the document is not a <CompleteMultipartUpload>");
    if (ps->depth == 2 && !strcmp(n, "Part")) {
        if (ps->n == ZTD_S3_MAX_PARTS)
            return stop(ps, "more than 10000 parts");
        ps->in_part = true;
        ps->has_num = ps->has_etag = false;
        memset(&ps->parts[ps->n], 0, sizeof(ps->parts[0]));
    } else if (ps->depth == 3 && ps->in_part && !strcmp(n, "PartNumber")) {
        ps->in = 1;
        ps->tlen = 0;
    } else if (ps->depth == 3 && ps->in_part && !strcmp(n, "ETag")) {
        ps->in = 2;
        ps->tlen = 0;
    }
}

static void take_number(parse *ps)
{
    int v = 0;
    if (ps->tlen == 0 || ps->tlen > 5)
        return stop(ps, "a PartNumber that is not 1 to 10000");
    for (size_t i = 0; i < ps->tlen; i++) {
        if (ps->text[i] < '0' || ps->text[i] > '9')
            return stop(ps, "a PartNumber that is not 1 to 10000");
        v = v * 10 + (ps->text[i] - '0');
    }
    if (v < 1 || v > ZTD_S3_MAX_PARTS)
        return stop(ps, "a PartNumber that is not 1 to 10000");
    ps->parts[ps->n].number = v;
    ps->has_num = true;
}

static void take_etag(parse *ps)
{
    const char *t = ps->text;
    size_t k = ps->tlen;
    if (k >= 2 && t[0] == '"' && t[k - 1] == '"') {
        t++;
        k -= 2;
    }
    if (k == 0 || k >= sizeof(ps->parts[0].etag))
        return stop(ps, "an ETag of the wrong length");
    memcpy(ps->parts[ps->n].etag, t, k);
    ps->parts[ps->n].etag[k] = 0;
    ps->has_etag = true;
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    parse *ps = ud;
    if (ps->in == 1 && ps->depth == 3)
        take_number(ps);
    else if (ps->in == 2 && ps->depth == 3)
        take_etag(ps);
    if (ps->depth == 2 && ps->in_part && !strcmp(ztd_s3_xml_local(name), "Part")) {
        if (!ps->has_num || !ps->has_etag)
            return stop(ps, "a <Part> without a <PartNumber> or an <ETag>");
        ps->n++;
        ps->in_part = false;
    }
    ps->in = 0;
    ps->depth--;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    parse *ps = ud;
    if (!ps->in)
        return;
    if (ps->tlen + (size_t)len > TEXT_MAX)
        return stop(ps, "a PartNumber or ETag that is too long");
    memcpy(ps->text + ps->tlen, s, (size_t)len);
    ps->tlen += (size_t)len;
}

ztd_s3_part_ref *ztd_s3_complete_parse(const char *xml, size_t len, size_t *n, char *why,
                                       size_t cap)
{
    parse ps = {0};
    if (!(ps.parts = malloc(ZTD_S3_MAX_PARTS * sizeof(*ps.parts)))) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    bool ok = ztd_s3_expat_parse(&ps.x, &ps, xml, len, on_start, on_end, on_text, why, cap);
    if (ok && ps.n == 0)
        snprintf(why, cap, "no <Part>");
    if (!ok || ps.n == 0) {
        free(ps.parts);
        return NULL;
    }
    *n = ps.n;
    return ps.parts;
}
