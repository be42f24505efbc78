/*
 * CompleteMultipartUpload's document (s3_mpu_xml.h), read with expat.
 */
#include "s3/s3_mpu_xml.h"

#include <expat.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS "http://s3.amazonaws.com/doc/2006-03-01/"
#define TEXT_MAX 64

typedef struct parse {
    XML_Parser p;
    ztd_s3_part_ref *parts;
    size_t n;
    int depth, in; /* in: 1 PartNumber, 2 ETag */
    bool in_part, has_num, has_etag;
    char text[TEXT_MAX + 1];
    size_t tlen;
    const char *error;
} parse;

static const char *local(const char *name)
{
    size_t k = strlen(NS);
    if (!strncmp(name, NS, k) && name[k] == '|')
        return name + k + 1;
    return strchr(name, '|') ? "" : name;
}

static void stop(parse *ps, const char *why)
{
    if (!ps->error)
        ps->error = why;
    XML_StopParser(ps->p, XML_FALSE);
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    parse *ps = ud;
    const char *n = local(name);
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
    if (ps->depth == 2 && ps->in_part && !strcmp(local(name), "Part")) {
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

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int internal)
{
    (void)name;
    (void)sysid;
    (void)pubid;
    (void)internal;
    stop(ud, "a DOCTYPE is not accepted");
}

ztd_s3_part_ref *ztd_s3_complete_parse(const char *xml, size_t len, size_t *n, char *why,
                                       size_t cap)
{
    parse ps = {0};
    if (!(ps.parts = malloc(ZTD_S3_MAX_PARTS * sizeof(*ps.parts))) ||
        !(ps.p = XML_ParserCreateNS(NULL, '|'))) {
        free(ps.parts);
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    XML_SetUserData(ps.p, &ps);
    XML_SetElementHandler(ps.p, on_start, on_end);
    XML_SetCharacterDataHandler(ps.p, on_text);
    XML_SetStartDoctypeDeclHandler(ps.p, on_doctype);
    enum XML_Status st =
        len > (size_t)INT32_MAX ? XML_STATUS_ERROR : XML_Parse(ps.p, xml, (int)len, XML_TRUE);
    if (st != XML_STATUS_OK || ps.error || ps.n == 0) {
        if (ps.error)
            snprintf(why, cap, "%s", ps.error);
        else if (st != XML_STATUS_OK)
            snprintf(why, cap, "line %lu, column %lu: %s",
                     (unsigned long)XML_GetCurrentLineNumber(ps.p),
                     (unsigned long)XML_GetCurrentColumnNumber(ps.p),
                     XML_ErrorString(XML_GetErrorCode(ps.p)));
        else
            snprintf(why, cap, "no <Part>");
        XML_ParserFree(ps.p);
        free(ps.parts);
        return NULL;
    }
    XML_ParserFree(ps.p);
    *n = ps.n;
    return ps.parts;
}
