/*
 * zt on remote files: a FILE argument that is an http:// or https:// URL is
 * opened with libztensor-remote (a ztensord file URL, or a .zt/.safetensors
 * file on any server that answers Range requests). Options come from the
 * environment, so every subcommand takes URLs the same way:
 *   ZT_REMOTE_TOKEN     bearer token sent with every request
 *   ZT_REMOTE_CA_FILE   PEM bundle to trust instead of the system's
 *   ZT_REMOTE_TIMEOUT   seconds for the whole command's reads (default none)
 */
#include "tool.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int tool_is_url(const char *s)
{
    return !strncasecmp(s, "http://", 7) || !strncasecmp(s, "https://", 8);
}

zt_status tool_remote_open(const char *url, zt_remote_file **rf, zt_error *err)
{
    zt_remote_options o;
    zt_remote_options_init(&o);
    const char *v;
    if ((v = getenv("ZT_REMOTE_TOKEN")) && *v)
        o.bearer_token = v;
    if ((v = getenv("ZT_REMOTE_CA_FILE")) && *v)
        o.ca_file = v;
    if ((v = getenv("ZT_REMOTE_TIMEOUT")) && *v)
        o.total_timeout = atof(v);
    return zt_remote_open(url, &o, rf, err);
}
