/*
 * Which options do nothing in the mode the others choose (see config_modes.h):
 * one row per mode, with its test, the words that say why, and its options.
 */
#include "core/config_modes.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool no_upstream(const ztd_config *c)
{
    return !c->upstream || !c->upstream[0];
}

static bool tcp_listen(const ztd_config *c)
{
    return !ztd_listen_unix_path(c->listen);
}

static bool unix_listen(const ztd_config *c)
{
    return ztd_listen_unix_path(c->listen) != NULL;
}

static bool no_watch(const ztd_config *c)
{
    return !c->watch;
}

static bool no_access_log(const ztd_config *c)
{
    return strcmp(c->access_log, "off") == 0;
}

static bool has_tokens(const ztd_config *c)
{
    return c->tokens_file && c->tokens_file[0];
}

/* No token can allow a write (main.c: "uploads disabled"). */
static bool no_uploads(const ztd_config *c)
{
    return !has_tokens(c) && !c->allow_anonymous_writes && !(c->s3_keys && c->s3_keys[0]);
}

#define MODE_OPTIONS_MAX 10

/* A mode, the words that say why, and the options that do nothing in it
 * (NULL after the last one), in the order the docs list them. */
static const struct mode {
    bool (*idle)(const ztd_config *c);
    const char *why;
    const char *options[MODE_OPTIONS_MAX + 1];
} modes[] = {
    {no_upstream,
     "without upstream",
     {"upstream_kind", "cache_dir", "cache_size", "upstream_token_file", "upstream_ttl",
      "upstream_connect_timeout", "upstream_timeout", "upstream_min_rate", "upstream_retries",
      "upstream_fills"}},
    {tcp_listen,
     "when listen is a TCP address (it is the mode of a unix: socket)",
     {"listen_mode"}},
    {unix_listen,
     "on a unix socket (its clients have no address to count by)",
     {"max_connections_per_address"}},
    {no_watch, "with watch off", {"rescan_debounce"}},
    {no_access_log, "with access_log off", {"access_log_format"}},
    {has_tokens, "with a tokens_file (a write needs a write token)", {"allow_anonymous_writes"}},
    {no_uploads,
     "with uploads off (no tokens_file, no allow_anonymous_writes)",
     {"max_upload_size", "max_uploads", "disk_reserve", "max_session_components",
      "session_idle_timeout"}},
};

#define N_MODES (sizeof modes / sizeof modes[0])

void ztd_config_modes_markdown(FILE *f)
{
    fprintf(f, "\n## Options that do nothing in some modes\n\n"
               "An option set to something other than its default where it can have no effect "
               "is harmless: ztensord starts, and logs one warning for it at start-up "
               "(`level=warn msg=\"option cache_size is set but does nothing without "
               "upstream; it is ignored\"`). An option left at its default is never "
               "mentioned.\n\n| Option | Does nothing |\n|---|---|\n");
    for (const struct mode *m = modes; m < modes + N_MODES; m++)
        for (const char *const *o = m->options; *o; o++)
            fprintf(f, "| [`%s`](#%s) | %s |\n", *o, *o, m->why);
    fprintf(f, "\nOptions that contradict each other are refused instead (exit status 2, with "
               "a message naming them): `prefetch` without `upstream`; `upstream` without "
               "`cache_dir`; an `upstream` that is this server's own `listen` address (it "
               "would ask itself for every file); `require_read_token` without "
               "`tokens_file`; `tls_cert` without `tls_key` or the other way round.\n");
}

size_t ztd_config_unused(const ztd_config *c, ztd_config_unused_fn fn, void *ud)
{
    size_t n = 0;
    char msg[256];
    for (const struct mode *m = modes; m < modes + N_MODES; m++) {
        if (!m->idle(c))
            continue;
        for (const char *const *o = m->options; *o; o++) {
            if (ztd_config_is_default(c, *o))
                continue;
            snprintf(msg, sizeof msg, "option %s is set but does nothing %s; it is ignored", *o,
                     m->why);
            fn(ud, msg);
            n++;
        }
    }
    return n;
}
