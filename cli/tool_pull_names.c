/*
 * zt pull's local names: which names from a server's listing may be written
 * under the destination directory, how a directory and a name are joined,
 * which names may be the shards of a v2 root in the same listing, and what a
 * listed name is below the prefix asked for (a name outside it is refused,
 * never cut blindly). Apart from tool_pull.c so that tests reach them
 * (tests/cli/test_pull_names.c).
 */
#include "tool.h"

#include <stdlib.h>
#include <string.h>

int tool_pull_safe_rel(const char *rel)
{
    if (!*rel || *rel == '/' || strchr(rel, '\\'))
        return 0;
    for (const char *p = rel; *p;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.') ||
            n > TOOL_PULL_SEGMENT_MAX)
            return 0;
        p += n + (e != NULL);
        if (e && !*p)
            return 0;
    }
    return 1;
}

char *tool_path_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%s", a, *a && a[strlen(a) - 1] != '/' ? "/" : "", b);
    return s;
}

int tool_pull_shard_of(const char *name, const char *root)
{
    size_t rn = strlen(root), nn = strlen(name);
    if (rn < 4 || strcmp(root + rn - 3, ".zt") || nn < rn + 2 || strcmp(name + nn - 3, ".zt"))
        return 0;
    size_t stem = rn - 3; /* "<dir>/<stem>", then "-<label>.zt" without a '/' */
    if (memcmp(name, root, stem) || name[stem] != '-')
        return 0;
    const char *label = name + stem + 1;
    return label < name + nn - 3 && !memchr(label, '/', (size_t)(name + nn - 3 - label));
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

char *tool_url_unescape(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    for (; out && *s; s++) {
        int hi = s[0] == '%' ? hexval(s[1]) : -1, lo = hi >= 0 ? hexval(s[2]) : -1;
        if (lo >= 0) {
            *o++ = (char)(hi * 16 + lo);
            s += 2;
        } else {
            *o++ = *s;
        }
    }
    if (out)
        *o = 0;
    return out;
}

const char *tool_pull_rel(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) || !tool_pull_safe_rel(name + n))
        return NULL;
    return name + n;
}
