/* The Hugging Face front's URL grammar (see hf_path.h). */
#include "hf/hf_path.h"
#include "core/utf8.h"

#include <string.h>

#define LEAD 8 /* segments looked at for keywords; the rest is a path */

typedef struct seg {
    const char *p;
    size_t n;
} seg;

static int fail(ztd_hf_target *t, int status, const char *message)
{
    t->status = status;
    t->message = message;
    t->op = ZTD_HF_NONE;
    return status;
}

static bool is(seg s, const char *lit)
{
    return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

static bool api_keyword(seg s)
{
    return is(s, "revision") || is(s, "tree") || is(s, "paths-info");
}

/* Up to LEAD segments of rest (split on '/'); *tail: where segment LEAD
 * starts, or NULL. Returns the count. */
static size_t split(const char *rest, seg *out, const char **tail)
{
    size_t k = 0;
    const char *p = rest;
    *tail = NULL;
    for (;;) {
        if (k == LEAD) {
            *tail = p;
            return k;
        }
        const char *q = strchr(p, '/');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        out[k++] = (seg){p, n};
        if (!q)
            return k;
        p = q + 1;
    }
}

static bool repo_part_ok(const char *p, size_t n)
{
    if (n == 0 || n > ZTD_HF_REPO_PART_MAX || p[0] == '.' || p[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
        if (!ok || (i && (ch == '.' || ch == '-') && p[i - 1] == ch))
            return false;
    }
    return true;
}

/* The repository id of k segments (literal characters only: no escapes). */
static int take_repo(ztd_hf_target *t, const seg *s, size_t k)
{
    for (size_t i = 0; i < k; i++)
        if (!repo_part_ok(s[i].p, s[i].n))
            return fail(t, 400,
                        "invalid repository id: parts are 1 to 96 characters of "
                        "[A-Za-z0-9._-], not starting with '.' or '-', without '..' "
                        "or '--'");
    memcpy(t->repo, s[0].p, s[0].n);
    t->repo_len = s[0].n;
    if (k == 2) {
        t->repo[t->repo_len++] = '/';
        memcpy(t->repo + t->repo_len, s[1].p, s[1].n);
        t->repo_len += s[1].n;
    }
    t->repo[t->repo_len] = 0;
    return 0;
}

static int take_rev(ztd_hf_target *t, seg s)
{
    long n = ztd_url_decode(s.p, s.n, t->rev, ZTD_HF_REV_MAX, false);
    if (n < 0)
        return fail(t, 400, "invalid revision: bad percent-encoding or longer than 255 bytes");
    t->rev_len = (size_t)n;
    if (n == 0)
        return fail(t, 400, "empty revision");
    for (long i = 0; i < n; i++)
        if ((unsigned char)t->rev[i] < 0x20 || t->rev[i] == 0x7f)
            return fail(t, 400, "invalid revision: control character");
    if (t->rev[0] == '.' || t->rev[0] == '/' || strstr(t->rev, ".."))
        return fail(t, 400, "invalid revision: '..' or a leading '.' or '/'");
    if (!ztd_utf8_valid(t->rev, t->rev_len))
        return fail(t, 400, "invalid revision: not UTF-8");
    return 0;
}

/* The path in the repository: raw text from p to the end, decoded (an
 * encoded '/' separates as a literal one does), then checked. */
static int take_path(ztd_hf_target *t, const char *p, bool required)
{
    size_t raw = p ? strlen(p) : 0;
    long n = p ? ztd_url_decode(p, raw, t->path, ZTD_PATH_MAX, false) : 0;
    if (n < 0)
        return fail(t, 400, "invalid path: bad percent-encoding or too long");
    t->path_len = (size_t)n;
    t->path[n] = 0;
    if (n == 0)
        return required ? fail(t, 404, "no file named") : 0;
    if (memchr(t->path, 0, t->path_len))
        return fail(t, 400, "invalid path: NUL byte");
    if (!ztd_utf8_valid(t->path, t->path_len))
        return fail(t, 400, "invalid path: not UTF-8");
    const char *q = t->path, *end = t->path + t->path_len;
    while (q <= end) {
        const char *e = memchr(q, '/', (size_t)(end - q));
        if (!e)
            e = end;
        if (e == q)
            return fail(t, 400, "invalid path: empty segment");
        if (*q == '.')
            return fail(t, 400, "invalid path: a segment starts with '.' ('.', '..', hidden)");
        q = e + 1;
    }
    return 0;
}

/* What follows "/hf/api/": models only. */
static int parse_api(ztd_hf_target *t, const char *method, const seg *s, size_t k, const char *tail)
{
    if (k < 3 || !is(s[1], "models")) {
        t->repo_missing = k >= 2 && (is(s[1], "datasets") || is(s[1], "spaces"));
        return fail(t, 404, t->repo_missing ? "only model repositories are served" : "no such API");
    }
    const seg *r = s + 2;
    size_t nr = k - 2, rk;
    if (nr >= 2 && api_keyword(r[1]))
        rk = 1;
    else if (nr >= 3 && api_keyword(r[2]))
        rk = 2;
    else if (nr <= 2 && !tail)
        rk = nr;
    else {
        for (size_t i = 3; i < nr; i++)
            if (api_keyword(r[i]))
                return fail(t, 400, "repository ids have at most two parts (org/name)");
        return fail(t, 404, "no such API");
    }
    if (take_repo(t, r, rk))
        return t->status;
    bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    if (rk == nr) { /* /api/models/{repo} */
        memcpy(t->rev, "main", 5);
        t->rev_len = 4;
        t->op = ZTD_HF_INFO;
        return get ? 0 : fail(t, 405, "GET, HEAD");
    }
    seg kw = r[rk];
    size_t left = nr - rk - 1; /* segments after the keyword (the lead ones) */
    if (left == 0)
        return fail(t, 404, "no revision named");
    if (take_rev(t, r[rk + 1]))
        return t->status;
    if (is(kw, "tree")) {
        t->op = ZTD_HF_TREE;
        const char *path = left > 1 ? r[rk + 2].p : tail;
        if (take_path(t, path, false))
            return t->status;
        return get ? 0 : fail(t, 405, "GET, HEAD");
    }
    if (left > 1 || tail)
        return fail(t, 404, "no such API");
    if (is(kw, "revision")) {
        t->op = ZTD_HF_INFO;
        return get ? 0 : fail(t, 405, "GET, HEAD");
    }
    t->op = ZTD_HF_PATHS_INFO;
    return !strcmp(method, "POST") ? 0 : fail(t, 405, "POST");
}

/* resolve, or raw (@huggingface/hub's fileExists): the same bytes here */
static bool file_keyword(seg s)
{
    return is(s, "resolve") || is(s, "raw");
}

/* "/hf/{repo}/resolve/{rev}/{path}" */
static int parse_resolve(ztd_hf_target *t, const char *method, const seg *s, size_t k,
                         const char *tail)
{
    size_t rk;
    if (k >= 2 && file_keyword(s[1]))
        rk = 1;
    else if (k >= 3 && file_keyword(s[2]))
        rk = 2;
    else {
        for (size_t i = 3; i < k; i++)
            if (file_keyword(s[i]))
                return fail(t, 400, "repository ids have at most two parts (org/name)");
        t->repo_missing = k >= 1 && (is(s[0], "datasets") || is(s[0], "spaces"));
        return fail(t, 404,
                    t->repo_missing ? "only model repositories are served"
                                    : "not a Hugging Face Hub URL");
    }
    if (take_repo(t, s, rk))
        return t->status;
    if (k < rk + 2)
        return fail(t, 404, "no revision named");
    if (take_rev(t, s[rk + 1]))
        return t->status;
    const char *path = k > rk + 2 ? s[rk + 2].p : tail;
    if (take_path(t, path, true))
        return t->status;
    t->op = ZTD_HF_RESOLVE;
    return !strcmp(method, "GET") || !strcmp(method, "HEAD") ? 0 : fail(t, 405, "GET, HEAD");
}

int ztd_hf_parse(const char *method, const char *raw_path, ztd_hf_target *t)
{
    memset(t, 0, offsetof(ztd_hf_target, repo));
    t->repo[0] = t->rev[0] = t->path[0] = 0;
    t->repo_len = t->rev_len = t->path_len = 0;
    if (!method || !raw_path || strncmp(raw_path, "/hf", 3) != 0)
        return fail(t, 400, "not an /hf path");
    if (strlen(raw_path) > ZTD_PATH_MAX)
        return fail(t, 400, "path too long");
    if (raw_path[3] != '/' || !raw_path[4])
        return fail(t, 404, "not a Hugging Face Hub URL");
    seg s[LEAD];
    const char *tail;
    size_t k = split(raw_path + 4, s, &tail);
    if (is(s[0], "api"))
        return parse_api(t, method, s, k, tail);
    return parse_resolve(t, method, s, k, tail);
}

bool ztd_hf_is_commit(const char *rev, size_t len)
{
    if (len != 40)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((rev[i] >= '0' && rev[i] <= '9') || (rev[i] >= 'a' && rev[i] <= 'f')))
            return false;
    return true;
}
