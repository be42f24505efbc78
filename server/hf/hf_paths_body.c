/* paths-info bodies, form or JSON (see hf_paths_body.h). */
#include "hf/hf_paths_body.h"
#include "core/utf8.h"
#include "http/router.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void ztd_hf_paths_free(ztd_hf_paths *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->paths[i]);
    free(p->paths);
    memset(p, 0, sizeof(*p));
}

static int add(ztd_hf_paths *p, const char *s, size_t n, const char **msg)
{
    if (p->n == ZTD_HF_PATHS_MAX)
        return *msg = "more than 10000 paths", -1;
    if (n > ZTD_PATH_MAX || memchr(s, 0, n) || !ztd_utf8_valid(s, n))
        return *msg = "a path is longer than 4096 bytes, has a NUL byte or is not UTF-8", -1;
    if (!p->paths && !(p->paths = calloc(ZTD_HF_PATHS_MAX, sizeof(char *))))
        return *msg = "out of memory", -1;
    if (!(p->paths[p->n] = malloc(n + 1)))
        return *msg = "out of memory", -1;
    memcpy(p->paths[p->n], s, n);
    p->paths[p->n++][n] = 0;
    return 0;
}

static bool truthy(const char *s, size_t n)
{
    return (n == 4 && !strncasecmp(s, "true", 4)) || (n == 1 && s[0] == '1');
}

static int parse_json(const char *body, size_t len, ztd_hf_paths *p, const char **msg)
{
    json_error_t je;
    json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    json_t *paths = json_object_get(doc, "paths"), *ex = json_object_get(doc, "expand");
    int rc = 0;
    if (!json_is_object(doc))
        rc = -1, *msg = "the body is not a JSON object";
    else if (json_is_string(paths))
        rc = add(p, json_string_value(paths), json_string_length(paths), msg);
    else if (!json_is_array(paths))
        rc = -1, *msg = "\"paths\" is not an array of strings";
    for (size_t i = 0; rc == 0 && json_is_array(paths) && i < json_array_size(paths); i++) {
        json_t *v = json_array_get(paths, i);
        if (!json_is_string(v))
            rc = -1, *msg = "\"paths\" is not an array of strings";
        else
            rc = add(p, json_string_value(v), json_string_length(v), msg);
    }
    if (rc == 0)
        p->expand = json_is_true(ex) ||
                    (json_is_string(ex) && truthy(json_string_value(ex), json_string_length(ex)));
    json_decref(doc);
    return rc;
}

static int parse_form(const char *body, size_t len, ztd_hf_paths *p, const char **msg)
{
    const char *q = body, *end = body + len;
    char *val = malloc(ZTD_PATH_MAX + 1);
    if (!val)
        return *msg = "out of memory", -1;
    int rc = 0;
    while (rc == 0 && q < end) {
        const char *amp = memchr(q, '&', (size_t)(end - q));
        if (!amp)
            amp = end;
        const char *eq = memchr(q, '=', (size_t)(amp - q));
        const char *k = q, *v = eq ? eq + 1 : amp;
        size_t kn = (size_t)((eq ? eq : amp) - q);
        long vn = ztd_url_decode(v, (size_t)(amp - v), val, ZTD_PATH_MAX, true);
        if (vn < 0)
            rc = -1, *msg = "bad percent-encoding in the form, or a value too long";
        else if ((kn == 5 && !memcmp(k, "paths", 5)) || (kn == 11 && !memcmp(k, "paths%5B%5D", 11)))
            rc = add(p, val, (size_t)vn, msg);
        else if (kn == 6 && !memcmp(k, "expand", 6))
            p->expand = truthy(val, (size_t)vn);
        q = amp + 1;
    }
    free(val);
    return rc;
}

int ztd_hf_paths_parse(const char *content_type, const char *body, size_t len, ztd_hf_paths *out,
                       const char **msg)
{
    memset(out, 0, sizeof(*out));
    *msg = NULL;
    if (len > ZTD_HF_PATHS_BODY_MAX)
        return *msg = "body too large", -1;
    bool json = content_type && strstr(content_type, "json");
    int rc = !body ? 0 : json ? parse_json(body, len, out, msg) : parse_form(body, len, out, msg);
    if (rc)
        ztd_hf_paths_free(out);
    return rc;
}
