/*
 * DeleteObjects' documents (s3_delete_xml.h), read with expat: a small
 * state machine over element depth; text is collected only inside
 * Delete/Object/Key and Delete/Quiet.
 */
#include "s3/s3_delete_xml.h"
#include "s3/s3_expat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 1024

typedef struct parse {
    ztd_s3_expat x; /* first: the handlers' user data */
    ztd_s3_delete_list *l;
    int depth;
    int in; /* 0 none, 1 Key, 2 Quiet */
    bool in_object, has_key;
    char text[KEY_MAX + 1];
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
    const char *n = ztd_s3_xml_local(name);
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

ztd_s3_delete_list *ztd_s3_delete_parse(const char *xml, size_t n, char *why, size_t cap)
{
    parse ps = {0};
    ps.l = calloc(1, sizeof(*ps.l));
    if (ps.l)
        ps.l->items = calloc(ZTD_S3_DELETE_MAX, sizeof(*ps.l->items));
    if (!ps.l || !ps.l->items) {
        snprintf(why, cap, "out of memory");
        ztd_s3_delete_list_free(ps.l);
        return NULL;
    }
    bool ok = ztd_s3_expat_parse(&ps.x, &ps, xml, n, on_start, on_end, on_text, why, cap);
    if (ok && ps.l->n == 0)
        snprintf(why, cap, "no <Object> to delete");
    if (!ok || ps.l->n == 0) {
        ztd_s3_delete_list_free(ps.l);
        return NULL;
    }
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
