/* Helpers shared by the zt subcommands: error reporting and exit codes. */
#include "tool.h"

#include <errno.h>
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
