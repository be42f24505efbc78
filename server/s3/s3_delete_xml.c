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

static const ztd_s3_field fields[] = {{"Key", 3, IN_KEY}, {"Quiet", 2, IN_QUIET}, {NULL, 0, 0}};

typedef struct parse {
    ztd_s3_expat x; /* first: the handlers get it */
    ztd_s3_delete_list *l;
    bool has_key;
    char text[KEY_MAX + 1];
} parse;

static void object_open(ztd_s3_expat *x)
{
    parse *ps = (parse *)x;
    if (ps->l->n == ZTD_S3_DELETE_MAX)
        return ztd_s3_expat_stop(x, "more than 1000 objects");
    ps->has_key = false;
}

static void object_close(ztd_s3_expat *x)
{
    parse *ps = (parse *)x;
    if (!ps->has_key)
        return ztd_s3_expat_stop(x, "an <Object> without a <Key>");
    ps->l->n++;
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

static void field(ztd_s3_expat *x, int code)
{
    parse *ps = (parse *)x;
    if (code == IN_KEY)
        take_key(ps);
    else
        ps->l->quiet = x->tlen == 4 && !memcmp(ps->text, "true", 4);
}

ztd_s3_delete_list *ztd_s3_delete_parse(const char *xml, size_t n, char *why, size_t cap)
{
    parse ps = {.x = {.root = "Delete",
                      .not_root = "the document is not a <Delete>",
                      .item = "Object",
                      .no_item = "no <Object> to delete",
                      .fields = fields,
                      .item_open = object_open,
                      .item_close = object_close,
                      .field = field,
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
    if (!ztd_s3_expat_parse(&ps.x, xml, n, why, cap)) {
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
