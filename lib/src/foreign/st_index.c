/*
 * model.safetensors.index.json for the safetensors views of one model: the
 * file transformers and vLLM read to find which file holds which tensor. It
 * is written byte for byte as transformers writes it, with Python's
 * json.dumps(index, indent=2, sort_keys=True) and a newline: keys sorted by
 * code point (UTF-8 byte order), two-space indents, "," at line ends and ": "
 * after keys, every character outside printable ASCII escaped as \uXXXX
 * (lower-case hex, surrogate pairs above U+FFFF), as ensure_ascii does. The
 * JSON is written here, not by jansson, whose escaping differs.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ix_entry {
    const char *tensor, *file;
} ix_entry;

static void puts_(zt__buf *b, const char *s)
{
    zt__buf_put(b, s, strlen(s));
}

/* The code point at s (valid UTF-8); *k gets its length in bytes. */
static uint32_t next_cp(const uint8_t *s, size_t *k)
{
    if (s[0] < 0x80) {
        *k = 1;
        return s[0];
    }
    *k = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : 2;
    uint32_t cp = s[0] & (0x7F >> *k);
    for (size_t i = 1; i < *k; i++)
        cp = cp << 6 | (s[i] & 0x3F);
    return cp;
}

/* A JSON string as Python's json.dumps(ensure_ascii=True) writes it. */
static void put_str(zt__buf *b, const char *str)
{
    const uint8_t *s = (const uint8_t *)str;
    zt__buf_put(b, "\"", 1);
    for (size_t i = 0, k; s[i]; i += k) {
        uint32_t c = next_cp(s + i, &k);
        const char *t = c && c < 0x80 ? strchr("\"\\\b\f\n\r\t", (int)c) : NULL;
        char esc[16];
        if (c >= 0x20 && c <= 0x7E && c != '"' && c != '\\') {
            zt__buf_put(b, s + i, 1);
        } else if (t) {
            esc[0] = '\\';
            esc[1] = "\"\\bfnrt"[t - "\"\\\b\f\n\r\t"];
            zt__buf_put(b, esc, 2);
        } else if (c < 0x10000) {
            zt__buf_put(b, esc, (size_t)snprintf(esc, sizeof(esc), "\\u%04x", c));
        } else {
            c -= 0x10000;
            zt__buf_put(b, esc,
                        (size_t)snprintf(esc, sizeof(esc), "\\u%04x\\u%04x", 0xD800 + (c >> 10),
                                         0xDC00 + (c & 0x3FF)));
        }
    }
    zt__buf_put(b, "\"", 1);
}

static int cmp_ix(const void *pa, const void *pb)
{
    return strcmp(((const ix_entry *)pa)->tensor, ((const ix_entry *)pb)->tensor);
}

/* Every (tensor, file) pair, sorted by tensor; *total gets the tensor bytes. */
static ix_entry *gather(const char *const *names, const zt_st_view *const *views, size_t n,
                        size_t *count, uint64_t *total, zt_error *err)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || !views[i] ||
            !zt__utf8_valid((const uint8_t *)names[i], strlen(names[i]))) {
            ZT_FAIL(err, ZT_E_ARG,
                    "zt_st_index_json: view %zu has no name, or no view, or its "
                    "name is not UTF-8",
                    i);
            return NULL;
        }
        m += zt_st_view_count(views[i]);
    }
    ix_entry *e = zt__malloc((m ? m : 1) * sizeof(*e));
    if (!e) {
        ZT_FAIL(err, ZT_E_NOMEM, "out of memory building the index of %zu tensors", m);
        return NULL;
    }
    size_t k = 0;
    *total = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < zt_st_view_count(views[i]); j++) {
            zt_st_tensor t;
            zt_st_view_tensor(views[i], j, &t);
            e[k++] = (ix_entry){t.name, names[i]};
            *total += t.length;
        }
    qsort(e, m, sizeof(*e), cmp_ix);
    for (size_t i = 1; i < m; i++)
        if (!strcmp(e[i - 1].tensor, e[i].tensor)) {
            zt__fail(err, ZT_E_DUPLICATE, e[i].tensor, NULL, 0, 0,
                     "tensor \"%.200s\" is in two views: \"%.100s\" and \"%.100s\"", e[i].tensor,
                     e[i - 1].file, e[i].file);
            zt__free(e);
            return NULL;
        }
    *count = m;
    return e;
}

char *zt_st_index_json(const char *const *view_names, const zt_st_view *const *views, size_t n,
                       zt_error *err)
{
    if (!n || !view_names || !views) {
        ZT_FAIL(err, ZT_E_ARG, "zt_st_index_json: no views");
        return NULL;
    }
    size_t m = 0;
    uint64_t total = 0;
    ix_entry *e = gather(view_names, views, n, &m, &total, err);
    if (!e)
        return NULL;
    zt__buf b = {0};
    char num[24];
    puts_(&b, "{\n  \"metadata\": {\n    \"total_size\": ");
    zt__buf_put(&b, num, (size_t)snprintf(num, sizeof(num), "%llu", (unsigned long long)total));
    puts_(&b, m ? "\n  },\n  \"weight_map\": {\n" : "\n  },\n  \"weight_map\": {}");
    for (size_t i = 0; i < m; i++) {
        puts_(&b, "    ");
        put_str(&b, e[i].tensor);
        puts_(&b, ": ");
        put_str(&b, e[i].file);
        puts_(&b, i + 1 < m ? ",\n" : "\n  }");
    }
    puts_(&b, "\n}\n");
    zt__buf_put(&b, "", 1);
    zt__free(e);
    if (b.oom) {
        zt__buf_free(&b);
        ZT_FAIL(err, ZT_E_NOMEM, "out of memory writing the index");
        return NULL;
    }
    return (char *)b.p;
}
