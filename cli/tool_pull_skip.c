/*
 * zt pull --tensors: a finished selection is skipped on a re-run with the
 * same selection. The published file is marked (extended attribute
 * user.ztensor.content, as libztensor-remote marks whole files) with a key
 * of what it holds, "sel:<sha256>", and its mtime. The sha256 is of the
 * output format, the file's attributes and the chosen objects' descriptions
 * in the source's manifest (names, shapes, components with their digests), so another
 * replica or a `touch` at the origin keeps the key, a changed tensor or
 * another selection does not. A selection with a component without digest
 * has no key (it is written again every time), and a local write to the
 * file changes its mtime (it is written again too).
 */
#include "tool.h"

#include <ztensor/ztensor_remote_experimental.h>

#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void hash_text(zt_hasher *h, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    zt_hasher_update(h, &n, sizeof(n)); /* a length first: no two lists hash alike */
    if (s)
        zt_hasher_update(h, s, n);
}

int tool_sel_key(const zt_file *f, int (*selected)(const char *object, const tool_globs *g),
                 const tool_globs *g, const char *format, char *out, size_t cap)
{
    zt_hasher *h = zt_hasher_new(ZT_DIGEST_SHA256);
    zt_error err;
    if (!h)
        return 0;
    hash_text(h, format);
    char *m = zt_file_manifest_json(f, ZT_JSON_COMPACT, &err);
    json_t *man = m ? json_loads(m, 0, NULL) : NULL;
    zt_free(m);
    json_t *a = json_object_get(man, "attributes"); /* the file's: the selection keeps them */
    char *at = a ? json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    hash_text(h, at);
    free(at);
    json_decref(man);
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        if (!selected(zt_object_name(o), g))
            continue;
        for (size_t j = 0; j < zt_object_component_count(o); j++)
            if (zt_component_digest_kind(zt_object_component_at(o, j)) == ZT_DIGEST_NONE) {
                zt_hasher_free(h);
                return 0; /* its bytes are named by nothing */
            }
        char *oj = zt_object_json(o, ZT_JSON_COMPACT, &err); /* name, shape, digests */
        hash_text(h, oj);
        zt_free(oj);
    }
    uint8_t d[32];
    zt_hasher_final(h, d);
    zt_hasher_free(h);
    int n = snprintf(out, cap, "sel:");
    for (int i = 0; i < 32 && n > 0 && (size_t)n + 3 <= cap; i++)
        n += snprintf(out + n, cap - (size_t)n, "%02x", d[i]);
    return n == 68 ? n : 0;
}

void tool_sel_mark(int fd, const char *key)
{
    zt_remote_content_mark(fd, key); /* best effort: without it, a re-run writes it again */
}

int tool_sel_done(int dfd, const char *name, const char *key)
{
    return zt_remote_content_done(dfd, name, key, UINT64_MAX);
}
