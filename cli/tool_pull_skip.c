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

#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define CONTENT_XATTR "user.ztensor.content"

static void hash_text(zt_hasher *h, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    zt_hasher_update(h, &n, sizeof(n)); /* a length first: no two lists hash alike */
    if (s)
        zt_hasher_update(h, s, n);
}

int tool_sel_key(const zt_file *f, const tool_globs *g, const char *format, char *out, size_t cap)
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
        if (!tool_pull_selected(zt_object_name(o), g))
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

static int mark_of(const char *key, const struct stat *sb, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s\n%lld.%09ld", key, (long long)sb->st_mtim.tv_sec,
                     sb->st_mtim.tv_nsec);
    return n > 0 && (size_t)n < cap ? n : -1;
}

void tool_sel_mark(int fd, const char *key)
{
    struct stat sb;
    char mark[256];
    int n = *key && fstat(fd, &sb) == 0 ? mark_of(key, &sb, mark, sizeof(mark)) : -1;
    if (n > 0) /* best effort: without it, a re-run writes the selection again */
        (void)fsetxattr(fd, CONTENT_XATTR, mark, (size_t)n, 0);
}

int tool_sel_done(int dfd, const char *name, const char *key)
{
    if (!*key)
        return 0;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    char want[256], got[256];
    int n = fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)
                ? mark_of(key, &sb, want, sizeof(want))
                : -1;
    ssize_t g = n > 0 ? fgetxattr(fd, CONTENT_XATTR, got, sizeof(got)) : -1;
    if (fd >= 0)
        close(fd);
    return n > 0 && g == n && !memcmp(got, want, (size_t)n);
}
