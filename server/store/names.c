/*
 * The name rules of the served tree (see names.h). They are the security
 * boundary between URLs and the served directory, so they are pure functions
 * that the router's unit tests and fuzzer drive directly.
 */
#include "store/names.h"
#include "core/utf8.h"

#include <string.h>

static const char *const file_exts[] = {".zt", ".safetensors", ".alt"};

const char *ztd_name_problem(const char *s, size_t n)
{
    if (memchr(s, '\0', n) != NULL)
        return "name contains a NUL byte";
    if (!ztd_utf8_valid(s, n))
        return "name is not valid UTF-8";
    return NULL;
}

bool ztd_file_ext_served(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof(file_exts) / sizeof(file_exts[0]); i++) {
        size_t e = strlen(file_exts[i]);
        if (n >= e && memcmp(s + n - e, file_exts[i], e) == 0)
            return true;
    }
    return false;
}

const char *ztd_file_path_problem(const char *s, size_t n)
{
    const char *why = ztd_name_problem(s, n);
    size_t start = 0;

    if (why != NULL)
        return why;
    if (n > 0 && s[0] == '/')
        return "file path must be relative";
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '/')
            continue;
        if (i == start)
            return "file path has an empty segment";
        if (s[start] == '.')
            return "file path segment starts with '.'";
        start = i + 1;
    }
    return NULL;
}
