/*
 * The expat scaffolding of the S3 request documents (s3_expat.h).
 */
#include "s3/s3_expat.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NS "http://s3.amazonaws.com/doc/2006-03-01/"

const char *ztd_s3_xml_local(const char *name)
{
    size_t k = strlen(NS);
    if (!strncmp(name, NS, k) && name[k] == '|')
        return name + k + 1;
    return strchr(name, '|') ? "" : name;
}

void ztd_s3_expat_stop(ztd_s3_expat *x, const char *why)
{
    if (!x->error)
        x->error = why;
    XML_StopParser(x->p, XML_FALSE);
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int internal)
{
    (void)name;
    (void)sysid;
    (void)pubid;
    (void)internal;
    ztd_s3_expat_stop(ud, "a DOCTYPE is not accepted");
}

/* The field named n at x's depth, if any: under the root, or inside an item. */
static const ztd_s3_field *field_of(const ztd_s3_expat *x, const char *n)
{
    for (const ztd_s3_field *f = x->fields; f->name; f++)
        if (f->depth == x->depth && (f->depth == 2 || x->in_item) && !strcmp(n, f->name))
            return f;
    return NULL;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    ztd_s3_expat *x = ud;
    const char *n = ztd_s3_xml_local(name);
    (void)atts;
    x->depth++;
    if (x->depth == 1 && strcmp(n, x->root))
        return ztd_s3_expat_stop(x, x->not_root);
    const ztd_s3_field *f;
    if (x->depth == 2 && !strcmp(n, x->item)) {
        x->item_open(x);
        x->in_item = !x->error;
    } else if ((f = field_of(x, n))) {
        x->in = f->code;
        x->in_depth = f->depth;
        x->tlen = 0;
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    ztd_s3_expat *x = ud;
    if (x->in && x->depth == x->in_depth && !x->error) /* the field ends, not a child */
        x->field(x, x->in);
    if (x->depth == 2 && x->in_item && !x->error && !strcmp(ztd_s3_xml_local(name), x->item)) {
        x->item_close(x);
        x->in_item = false;
        x->items += !x->error;
    }
    x->in = 0;
    x->depth--;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    ztd_s3_expat *x = ud;
    if (!x->in)
        return;
    if (x->tlen + (size_t)len > x->cap)
        return ztd_s3_expat_stop(x, x->too_long);
    memcpy(x->text + x->tlen, s, (size_t)len);
    x->tlen += (size_t)len;
}

bool ztd_s3_expat_parse(ztd_s3_expat *x, const char *xml, size_t len, char *why, size_t cap)
{
    if (!(x->p = XML_ParserCreateNS(NULL, '|'))) {
        snprintf(why, cap, "out of memory");
        return false;
    }
    XML_SetUserData(x->p, x);
    XML_SetElementHandler(x->p, on_start, on_end);
    XML_SetCharacterDataHandler(x->p, on_text);
    XML_SetStartDoctypeDeclHandler(x->p, on_doctype);
    enum XML_Status st =
        len > (size_t)INT32_MAX ? XML_STATUS_ERROR : XML_Parse(x->p, xml, (int)len, XML_TRUE);
    if (x->error)
        snprintf(why, cap, "%s", x->error);
    else if (st != XML_STATUS_OK)
        snprintf(why, cap, "line %lu, column %lu: %s",
                 (unsigned long)XML_GetCurrentLineNumber(x->p),
                 (unsigned long)XML_GetCurrentColumnNumber(x->p),
                 XML_ErrorString(XML_GetErrorCode(x->p)));
    bool ok = st == XML_STATUS_OK && !x->error;
    if (ok && x->items == 0)
        snprintf(why, cap, "%s", x->no_item);
    XML_ParserFree(x->p);
    x->p = NULL;
    return ok && x->items > 0;
}
