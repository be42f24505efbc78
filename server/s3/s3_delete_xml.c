/*
 * DeleteObjects' documents (s3_delete_xml.h), read with expat
 * (s3_expat.h): a small state machine over element depth; text is collected
 * only inside Delete/Object/Key and Delete/Quiet.
 */
#include "s3/s3_delete_xml.h"
#include "s3/s3_expat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 1024

enum { IN_KEY = 1, IN_QUIET = 2 };

typedef struct parse {
    ztd_s3_expat x; /* first: the handlers get it */
    ztd_s3_delete_list *l;
    bool in_object, has_key;
    char text[KEY_MAX + 1];
} parse;

static void on_start(ztd_s3_expat *x, const char *n)
{
    parse *ps = (parse *)x;
    if (x->depth == 2 && !strcmp(n, "Object")) {
        if (ps->l->n == ZTD_S3_DELETE_MAX)
            return ztd_s3_expat_stop(&ps->x, "more than 1000 objects");
        ps->in_object = true;
        ps->has_key = false;
    } else if (x->depth == 2 && !strcmp(n, "Quiet")) {
        ztd_s3_expat_collect(x, IN_QUIET);
    } else if (x->depth == 3 && ps->in_object && !strcmp(n, "Key")) {
        ztd_s3_expat_collect(x, IN_KEY);
    }
}

static void take_key(parse *ps)
{
    ztd_s3_delete_list *l = ps->l;
    size_t tlen = ps->x.tlen;
    if (tlen == 0 || memchr(ps->text, 0, tlen))
        return ztd_s3_expat_stop(&ps->x, "an empty key, or one holding a NUL");
    if (ps->has_key)
        return ztd_s3_expat_stop(&ps->x, "an <Object> with two <Key>s");
    ztd_s3_delete_item *it = &l->items[l->n];
    if (!(it->key = malloc(tlen + 1)))
        return ztd_s3_expat_stop(&ps->x, "out of memory");
    memcpy(it->key, ps->text, tlen);
    it->key[tlen] = 0;
    it->key_len = tlen;
    ps->has_key = true;
}

static void on_end(ztd_s3_expat *x, const char *n)
{
    parse *ps = (parse *)x;
    if (x->in == IN_KEY && x->depth == 3)
        take_key(ps);
    else if (x->in == IN_QUIET && x->depth == 2)
        ps->l->quiet = x->tlen == 4 && !memcmp(ps->text, "true", 4);
    if (x->depth == 2 && ps->in_object && !strcmp(n, "Object")) {
        if (!ps->has_key)
            return ztd_s3_expat_stop(&ps->x, "an <Object> without a <Key>");
        ps->l->n++;
        ps->in_object = false;
    }
}

ztd_s3_delete_list *ztd_s3_delete_parse(const char *xml, size_t n, char *why, size_t cap)
{
    parse ps = {.x = {.root = "Delete",
                      .not_root = "the document is not a <Delete>",
                      .start = on_start,
                      .end = on_end,
                      .text = ps.text,
                      .cap = KEY_MAX,
                      .too_long = "a key longer than 1024 bytes"}};
    ps.l = calloc(1, sizeof(*ps.l));
    if (ps.l)
        ps.l->items = calloc(ZTD_S3_DELETE_MAX, sizeof(*ps.l->items));
    if (!ps.l || !ps.l->items) {
        snprintf(why, cap, "out of memory");
        ztd_s3_delete_list_free(ps.l);
        return NULL;
    }
    bool ok = ztd_s3_expat_parse(&ps.x, xml, n, why, cap);
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
