/*
 * zt on remote files: a FILE argument that is an http:// or https:// URL is
 * opened with libztensor-remote (a ztensord file URL, or a .zt/.safetensors
 * file on any server that answers Range requests). Options come from the
 * environment, so every subcommand takes URLs the same way:
 *   ZT_TOKEN            bearer token sent with every request (every
 *                       subcommand; ZT_REMOTE_TOKEN is an older alias, used
 *                       when ZT_TOKEN is unset; --token overrides both)
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

const char *tool_token(void)
{
    const char *v = getenv("ZT_TOKEN");
    if (!v || !*v)
        v = getenv("ZT_REMOTE_TOKEN");
    return v && *v ? v : NULL;
}

zt_status tool_remote_open(const char *url, const char *token, zt_remote_file **rf, zt_error *err)
{
    zt_remote_options o;
    zt_remote_options_init(&o);
    const char *v;
    o.bearer_token = token && *token ? token : tool_token();
    if ((v = getenv("ZT_REMOTE_CA_FILE")) && *v)
        o.ca_file = v;
    if ((v = getenv("ZT_REMOTE_TIMEOUT")) && *v)
        o.total_timeout = atof(v);
    return zt_remote_open(url, &o, rf, err);
}
