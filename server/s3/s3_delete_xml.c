/*
 * DeleteObjects' documents (s3_delete_xml.h), read with expat: a small
 * state machine over element depth; text is collected only inside
 * Delete/Object/Key and Delete/Quiet.
 */
#include "s3/s3_delete_xml.h"

#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 1024
#define NS "http://s3.amazonaws.com/doc/2006-03-01/"

typedef struct parse {
    XML_Parser p;
    ztd_s3_delete_list *l;
    int depth;
    int in; /* 0 none, 1 Key, 2 Quiet */
    bool in_object, has_key;
    char text[KEY_MAX + 1];
    size_t tlen;
    const char *error;
} parse;

/* The local name of an element, namespace (NS only) stripped. */
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
    if (ps->depth == 1 && strcmp(n, "Delete"))
        return stop(ps, "the document is not a <Delete>");
    if (ps->depth == 2 && !strcmp(n, "Object")) {
        if (ps->l->n == ZTD_S3_DELETE_MAX)
            return stop(ps, "more than 1000 objects");
        ps->in_object = true;
        ps->has_key = false;
    } else if (ps->depth == 2 && !strcmp(n, "Quiet")) {
        ps->in = 2;
        ps->tlen = 0;
    } else if (ps->depth == 3 && ps->in_object && !strcmp(n, "Key")) {
        ps->in = 1;
        ps->tlen = 0;
    }
}

static void take_key(parse *ps)
{
    ztd_s3_delete_list *l = ps->l;
    if (ps->tlen == 0 || memchr(ps->text, 0, ps->tlen))
        return stop(ps, "an empty key, or one holding a NUL");
    if (ps->has_key)
        return stop(ps, "an <Object> with two <Key>s");
    ztd_s3_delete_item *it = &l->items[l->n];
    if (!(it->key = malloc(ps->tlen + 1)))
        return stop(ps, "out of memory");
    memcpy(it->key, ps->text, ps->tlen);
    it->key[ps->tlen] = 0;
    it->key_len = ps->tlen;
    ps->has_key = true;
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    parse *ps = ud;
    const char *n = local(name);
    if (ps->in == 1 && ps->depth == 3)
        take_key(ps);
    else if (ps->in == 2 && ps->depth == 2)
        ps->l->quiet = ps->tlen == 4 && !memcmp(ps->text, "true", 4);
    if (ps->depth == 2 && ps->in_object && !strcmp(n, "Object")) {
        if (!ps->has_key)
            return stop(ps, "an <Object> without a <Key>");
        ps->l->n++;
        ps->in_object = false;
    }
    ps->in = 0;
    ps->depth--;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    parse *ps = ud;
    if (!ps->in)
        return;
    if (ps->tlen + (size_t)len > KEY_MAX)
        return stop(ps, "a key longer than 1024 bytes");
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

ztd_s3_delete_list *ztd_s3_delete_parse(const char *xml, size_t n, char *why, size_t cap)
{
    parse ps = {0};
    ps.l = calloc(1, sizeof(*ps.l));
    if (ps.l)
        ps.l->items = calloc(ZTD_S3_DELETE_MAX, sizeof(*ps.l->items));
    if (!ps.l || !ps.l->items || !(ps.p = XML_ParserCreateNS(NULL, '|'))) {
        snprintf(why, cap, "out of memory");
        ztd_s3_delete_list_free(ps.l);
        return NULL;
    }
    XML_SetUserData(ps.p, &ps);
    XML_SetElementHandler(ps.p, on_start, on_end);
    XML_SetCharacterDataHandler(ps.p, on_text);
    XML_SetStartDoctypeDeclHandler(ps.p, on_doctype);
    enum XML_Status st =
        n > (size_t)INT32_MAX ? XML_STATUS_ERROR : XML_Parse(ps.p, xml, (int)n, XML_TRUE);
    if (st != XML_STATUS_OK || ps.error || ps.l->n == 0) {
        if (ps.error)
            snprintf(why, cap, "%s", ps.error);
        else if (st != XML_STATUS_OK)
            snprintf(why, cap, "line %lu, column %lu: %s",
                     (unsigned long)XML_GetCurrentLineNumber(ps.p),
                     (unsigned long)XML_GetCurrentColumnNumber(ps.p),
                     XML_ErrorString(XML_GetErrorCode(ps.p)));
        else
            snprintf(why, cap, "no <Object> to delete");
        XML_ParserFree(ps.p);
        ztd_s3_delete_list_free(ps.l);
        return NULL;
    }
    XML_ParserFree(ps.p);
    return ps.l;
}

void ztd_s3_delete_list_free(ztd_s3_delete_list *l)
{
    if (!l)
        return;
    if (l->items)
        for (size_t i = 0; i < ZTD_S3_DELETE_MAX; i++)
            free(l->items[i].key);
    free(l->items);
    free(l);
}

void ztd_s3_delete_result(ztd_xml *x, const ztd_s3_delete_list *l)
{
    ztd_xml_open(x, "DeleteResult", "http://s3.amazonaws.com/doc/2006-03-01/");
    for (size_t i = 0; i < l->n; i++) {
        const ztd_s3_delete_item *it = &l->items[i];
        if (it->code) {
            ztd_xml_open(x, "Error", NULL);
            ztd_xml_elem(x, "Key", it->key, it->key_len);
            ztd_xml_elem_str(x, "Code", it->code);
            ztd_xml_elem_str(x, "Message", it->message);
            ztd_xml_close(x, "Error");
        } else if (!l->quiet) {
            ztd_xml_open(x, "Deleted", NULL);
            ztd_xml_elem(x, "Key", it->key, it->key_len);
            ztd_xml_close(x, "Deleted");
        }
    }
    ztd_xml_close(x, "DeleteResult");
}
