/* Helpers shared by the zt subcommands: error reporting and exit codes, and
 * the parsers of option values that more than one takes. */
#include "tool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tool_exit_for(zt_status st)
{
    switch (st) {
    case ZT_OK:
        return ZT_EXIT_OK;
    case ZT_E_NOMEM:
    case ZT_E_IO:
    case ZT_E_NOSPACE:
    case ZT_E_NOT_FOUND:
    case ZT_E_NETWORK:
    case ZT_E_HTTP:
    case ZT_E_CHANGED:
        return ZT_EXIT_SYSTEM;
    case ZT_E_ARG:
        return ZT_EXIT_USAGE;
    default:
        return ZT_EXIT_INVALID;
    }
}

int tool_report(const char *cmd, const char *file, const zt_error *err)
{
    fprintf(stderr, "zt %s: %s: %s\n", cmd, file, err->message);
    return tool_exit_for(err->code);
}

int tool_is_help(const char *arg)
{
    return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

int tool_write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t r = write(fd, s, n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        s += r;
        n -= (size_t)r;
    }
    return 0;
}

int tool_parse_digest(const char *s, zt_digest_kind *out)
{
    if (!strcmp(s, "sha256"))
        *out = ZT_DIGEST_SHA256;
    else if (!strcmp(s, "crc32c"))
        *out = ZT_DIGEST_CRC32C;
    else if (!strcmp(s, "xxh3"))
        *out = ZT_DIGEST_XXH3;
    else if (!strcmp(s, "none"))
        *out = ZT_DIGEST_NONE;
    else
        return -1;
    return 0;
}

int tool_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = *end == 'K' || *end == 'k'   ? 10
                     : *end == 'M' || *end == 'm' ? 20
                     : *end == 'G' || *end == 'g' ? 30
                                                  : 0;
    if (shift)
        end++;
    if (errno || end == s || *end || v == 0 || v > (1ull << 40) >> shift)
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}
