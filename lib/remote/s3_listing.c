/*
 * S3's XML answers, parsed by expat as pure functions over a buffer: one page
 * of ListObjectsV2 (ztr__s3_parse_listing) and an error document
 * (ztr__s3_parse_error). The documents come from a stranger: a DOCTYPE is
 * refused before any entity can be declared (so no entity expansion, billion
 * laughs included), parameter entities are never parsed, every text is
 * capped (a key at 1024 bytes, as S3's own limit), and a page holds at most
 * max_keys keys. Every error names the byte offset where the parser stopped.
 * No I/O: s3_list.c feeds it pages, tests/fuzz/fuzz_s3_listing.c anything.
 */
#include "remote_internal.h"

#include <expat.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Where inside the document an element is (a path of the few names we keep). */
enum {
    AT_NONE = 0,
    AT_ROOT,     /* <ListBucketResult> */
    AT_CONTENTS, /* <ListBucketResult><Contents> */
};
/* S3 nests a listing 4 deep (Contents/Owner/ID); deeper is not a listing. */
#define MAX_DEPTH 8

typedef struct parse {
    XML_Parser p;
    ztr_s3_page *page;
    ztr_s3_key_fn fn;
    void *ud;
    unsigned depth; /* elements open */
    int at;
    char *text; /* the text of the leaf being read, or NULL when not kept */
    size_t cap, len;
    char field[32];
    ztr_s3_object obj;
    bool have_key, have_size;
    bool stopped; /* by us: why says why */
    bool by_fn;   /* the caller's fn stopped the walk */
    char *why;
    size_t why_cap;
} parse;

static void stop(parse *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void stop(parse *s, const char *fmt, ...)
{
    if (s->stopped)
        return;
    s->stopped = true;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(s->why, s->why_cap, "%s at byte %llu", msg,
             (unsigned long long)XML_GetCurrentByteIndex(s->p));
    XML_StopParser(s->p, XML_FALSE);
}

/* The local name of an element: S3 puts its elements in the
 * http://s3.amazonaws.com/doc/2006-03-01/ namespace; without namespace
 * processing the name arrives as written, and a prefix is cut off here. */
static const char *local(const XML_Char *name)
{
    const char *c = strrchr(name, ':');
    return c ? c + 1 : name;
}

/* The leaves we keep, with the bytes their text may have. */
static size_t leaf_cap(int at, const char *name)
{
    if (at == AT_CONTENTS) {
        if (!strcmp(name, "Key"))
            return ZTR_S3_KEY_MAX;
        if (!strcmp(name, "Size"))
            return 20;
        if (!strcmp(name, "ETag"))
            return sizeof(((ztr_s3_object *)0)->etag) - 1;
        if (!strcmp(name, "LastModified"))
            return sizeof(((ztr_s3_object *)0)->last_modified) - 1;
        return 0;
    }
    if (at == AT_ROOT) {
        if (!strcmp(name, "IsTruncated"))
            return 5;
        if (!strcmp(name, "NextContinuationToken"))
            return ZTR_S3_TOKEN_MAX;
        if (!strcmp(name, "KeyCount") || !strcmp(name, "MaxKeys"))
            return 20;
    }
    return 0;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    parse *s = ud;
    (void)attrs;
    const char *n = local(name);
    if (s->stopped)
        return;
    s->depth++;
    s->text = NULL;
    if (s->depth > MAX_DEPTH) {
        stop(s, "elements nested deeper than a listing's (<%s>)", n);
        return;
    }
    if (s->depth == 1) {
        if (strcmp(n, "ListBucketResult"))
            stop(s, "the root element is <%s>, not <ListBucketResult>", n);
        s->at = AT_ROOT;
        return;
    }
    if (s->depth == 2 && !strcmp(n, "Contents")) {
        if (s->page->keys >= s->page->max_keys) {
            stop(s, "more than %u keys in one page (max-keys)", s->page->max_keys);
            return;
        }
        s->at = AT_CONTENTS;
        memset(&s->obj, 0, sizeof(s->obj));
        s->have_key = s->have_size = false;
        return;
    }
    bool leaf = (s->at == AT_CONTENTS && s->depth == 3) || (s->at == AT_ROOT && s->depth == 2);
    size_t cap = leaf ? leaf_cap(s->at, n) : 0;
    if (!cap)
        return; /* an element we do not read (StorageClass, Owner, Prefix...) */
    snprintf(s->field, sizeof(s->field), "%s", n);
    s->cap = cap;
    s->len = 0;
    s->text = s->page->scratch;
}

static void XMLCALL on_text(void *ud, const XML_Char *t, int n)
{
    parse *s = ud;
    if (!s->text || s->stopped)
        return;
    if ((size_t)n > s->cap - s->len) {
        stop(s, "<%s> longer than its cap", s->field);
        return;
    }
    memcpy(s->text + s->len, t, (size_t)n);
    s->len += (size_t)n;
}

/* A decimal number of at most 19 digits (no sign, no blank). */
static bool number(const char *t, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (!n || n > 19)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (t[i] < '0' || t[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(t[i] - '0');
    }
    *out = v;
    return true;
}

static void end_leaf(parse *s)
{
    const char *f = s->field, *t = s->text;
    size_t n = s->len;
    if (s->at == AT_CONTENTS && !strcmp(f, "Key")) {
        if (!n || memchr(t, 0, n))
            return stop(s, "%s", !n ? "an empty <Key>" : "a <Key> holding a NUL");
        memcpy(s->obj.key, t, n);
        s->obj.key[n] = 0;
        s->have_key = true;
    } else if (s->at == AT_CONTENTS && !strcmp(f, "Size")) {
        if (!number(t, n, &s->obj.size))
            return stop(s, "%s", "a <Size> that is not a number");
        s->have_size = true;
    } else if (s->at == AT_CONTENTS && !strcmp(f, "ETag")) {
        memcpy(s->obj.etag, t, n);
        s->obj.etag[n] = 0;
    } else if (s->at == AT_CONTENTS && !strcmp(f, "LastModified")) {
        memcpy(s->obj.last_modified, t, n);
        s->obj.last_modified[n] = 0;
    } else if (!strcmp(f, "IsTruncated")) {
        if (n == 4 && !memcmp(t, "true", 4))
            s->page->truncated = true;
        else if (!(n == 5 && !memcmp(t, "false", 5)))
            return stop(s, "%s", "an <IsTruncated> that is not true or false");
    } else if (!strcmp(f, "NextContinuationToken")) {
        if (!n || memchr(t, 0, n))
            return stop(s, "%s", "an empty <NextContinuationToken>");
        memcpy(s->page->next_token, t, n);
        s->page->next_token[n] = 0;
    } else if (!strcmp(f, "KeyCount") || !strcmp(f, "MaxKeys")) {
        uint64_t v;
        if (!number(t, n, &v))
            return stop(s, "a <%s> that is not a number", f);
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    parse *s = ud;
    (void)name;
    if (s->stopped)
        return;
    if (s->text) {
        end_leaf(s);
        s->text = NULL;
    } else if (s->depth == 2 && s->at == AT_CONTENTS) {
        s->at = AT_ROOT;
        if (!s->have_key || !s->have_size)
            return stop(s, "%s", "a <Contents> without its <Key> or <Size>");
        s->page->keys++;
        if (s->fn(s->ud, &s->obj)) {
            s->by_fn = true;
            s->stopped = true;
            XML_StopParser(s->p, XML_FALSE);
        }
    }
    s->depth--;
}

/* A DOCTYPE is where entities are declared: none is read at all. */
static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sys,
                               const XML_Char *pub, int internal)
{
    (void)name, (void)sys, (void)pub, (void)internal;
    stop(ud, "%s", "a DOCTYPE (refused: S3 sends none)");
}

static void XMLCALL on_entity(void *ud, const XML_Char *name, int param, const XML_Char *value,
                              int len, const XML_Char *base, const XML_Char *sys,
                              const XML_Char *pub, const XML_Char *notation)
{
    (void)param, (void)value, (void)len, (void)base, (void)sys, (void)pub, (void)notation;
    stop(ud, "an entity declaration (%s)", name);
}

/* A parser set up against hostile documents. */
static XML_Parser hardened(void *ud)
{
    XML_Parser p = XML_ParserCreate("UTF-8");
    if (!p)
        return NULL;
    XML_SetUserData(p, ud);
    XML_SetParamEntityParsing(p, XML_PARAM_ENTITY_PARSING_NEVER);
    XML_SetStartDoctypeDeclHandler(p, on_doctype);
    XML_SetEntityDeclHandler(p, on_entity);
    return p;
}

int ztr__s3_parse_listing(const char *buf, size_t n, ztr_s3_page *page, ztr_s3_key_fn fn, void *ud,
                          char *why, size_t cap)
{
    parse s = {.page = page, .fn = fn, .ud = ud, .why = why, .why_cap = cap};
    page->keys = 0;
    page->truncated = false;
    page->next_token[0] = 0;
    why[0] = 0;
    if (n > INT32_MAX)
        return snprintf(why, cap, "a page of %zu bytes", n), -1;
    if (!(s.p = hardened(&s)))
        return snprintf(why, cap, "out of memory"), -1;
    XML_SetElementHandler(s.p, on_start, on_end);
    XML_SetCharacterDataHandler(s.p, on_text);
    enum XML_Status st = XML_Parse(s.p, buf, (int)n, XML_TRUE);
    int rc = 0;
    if (s.by_fn)
        rc = 1;
    else if (s.stopped)
        rc = -1;
    else if (st != XML_STATUS_OK) {
        snprintf(why, cap, "not XML: %s at byte %llu", XML_ErrorString(XML_GetErrorCode(s.p)),
                 (unsigned long long)XML_GetCurrentByteIndex(s.p));
        rc = -1;
    } else if (page->truncated && !page->next_token[0]) {
        snprintf(why, cap, "a truncated page without a <NextContinuationToken> (byte %zu)", n);
        rc = -1;
    }
    XML_ParserFree(s.p);
    return rc;
}

/* ---- an S3 error document: <Error><Code>…</Code><Message>…</Message> */

typedef struct eparse {
    XML_Parser p;
    unsigned depth;
    char *dst;
    size_t cap, len;
    char *code, *msg;
    size_t code_cap, msg_cap;
    bool root_ok, refused;
} eparse;

static void XMLCALL e_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    eparse *s = ud;
    (void)attrs;
    const char *n = local(name);
    s->depth++;
    s->dst = NULL;
    if (s->depth == 1)
        s->root_ok = !strcmp(n, "Error");
    else if (s->depth == 2 && s->root_ok && !strcmp(n, "Code"))
        s->dst = s->code, s->cap = s->code_cap, s->len = 0;
    else if (s->depth == 2 && s->root_ok && !strcmp(n, "Message"))
        s->dst = s->msg, s->cap = s->msg_cap, s->len = 0;
}

static void XMLCALL e_text(void *ud, const XML_Char *t, int n)
{
    eparse *s = ud;
    for (int i = 0; s->dst && i < n && s->len + 1 < s->cap; i++)
        if ((unsigned char)t[i] >= 0x20) /* printable on one line */
            s->dst[s->len++] = t[i];
    if (s->dst)
        s->dst[s->len] = 0;
}

static void XMLCALL e_end(void *ud, const XML_Char *name)
{
    eparse *s = ud;
    (void)name;
    s->dst = NULL;
    s->depth--;
}

/* A DOCTYPE or an entity declaration in an error document: not S3's. */
static void XMLCALL e_doctype(void *ud, const XML_Char *name, const XML_Char *sys,
                              const XML_Char *pub, int internal)
{
    eparse *s = ud;
    (void)name, (void)sys, (void)pub, (void)internal;
    s->root_ok = false;
    s->refused = true;
    XML_StopParser(s->p, XML_FALSE);
}

int ztr__s3_parse_error(const char *buf, size_t n, char *code, size_t code_cap, char *msg,
                        size_t msg_cap)
{
    eparse s = {.code = code, .msg = msg, .code_cap = code_cap, .msg_cap = msg_cap};
    if (!code_cap || !msg_cap)
        return -1;
    code[0] = msg[0] = 0;
    if (n > INT32_MAX || !(s.p = XML_ParserCreate("UTF-8")))
        return -1;
    XML_SetUserData(s.p, &s);
    XML_SetParamEntityParsing(s.p, XML_PARAM_ENTITY_PARSING_NEVER);
    XML_SetStartDoctypeDeclHandler(s.p, e_doctype);
    XML_SetElementHandler(s.p, e_start, e_end);
    XML_SetCharacterDataHandler(s.p, e_text);
    enum XML_Status st = XML_Parse(s.p, buf, (int)n, XML_TRUE);
    XML_ParserFree(s.p);
    if (st != XML_STATUS_OK || s.refused || !s.root_ok || !code[0]) {
        code[0] = msg[0] = 0;
        return -1;
    }
    return 0;
}
