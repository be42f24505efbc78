/*
 * Which options do nothing in the mode the others choose (see config_modes.h):
 * one row per option, with the test of that mode and the words that say why.
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

static const struct {
    const char *option;
    bool (*idle)(const ztd_config *c);
    const char *why;
} rules[] = {
    {"upstream_kind", no_upstream, "without upstream"},
    {"cache_dir", no_upstream, "without upstream"},
    {"cache_size", no_upstream, "without upstream"},
    {"upstream_token_file", no_upstream, "without upstream"},
    {"upstream_ttl", no_upstream, "without upstream"},
    {"upstream_connect_timeout", no_upstream, "without upstream"},
    {"upstream_timeout", no_upstream, "without upstream"},
    {"upstream_min_rate", no_upstream, "without upstream"},
    {"upstream_retries", no_upstream, "without upstream"},
    {"upstream_fills", no_upstream, "without upstream"},
    {"listen_mode", tcp_listen, "when listen is a TCP address (it is the mode of a unix: socket)"},
    {"max_connections_per_address", unix_listen,
     "on a unix socket (its clients have no address to count by)"},
    {"rescan_debounce", no_watch, "with watch off"},
    {"access_log_format", no_access_log, "with access_log off"},
    {"allow_anonymous_writes", has_tokens, "with a tokens_file (a write needs a write token)"},
    {"max_upload_size", no_uploads, "with uploads off (no tokens_file, no allow_anonymous_writes)"},
    {"max_uploads", no_uploads, "with uploads off (no tokens_file, no allow_anonymous_writes)"},
    {"disk_reserve", no_uploads, "with uploads off (no tokens_file, no allow_anonymous_writes)"},
    {"max_session_components", no_uploads,
     "with uploads off (no tokens_file, no allow_anonymous_writes)"},
    {"session_idle_timeout", no_uploads,
     "with uploads off (no tokens_file, no allow_anonymous_writes)"},
};

void ztd_config_modes_markdown(FILE *f)
{
    fprintf(f, "\n## Options that do nothing in some modes\n\n"
               "An option set to something other than its default where it can have no effect "
               "is harmless: ztensord starts, and logs one warning for it at start-up "
               "(`level=warn msg=\"option cache_size is set but does nothing without "
               "upstream; it is ignored\"`). An option left at its default is never "
               "mentioned.\n\n| Option | Does nothing |\n|---|---|\n");
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        fprintf(f, "| [`%s`](#%s) | %s |\n", rules[i].option, rules[i].option, rules[i].why);
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
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        if (!rules[i].idle(c) || ztd_config_is_default(c, rules[i].option))
            continue;
        snprintf(msg, sizeof msg, "option %s is set but does nothing %s; it is ignored",
                 rules[i].option, rules[i].why);
        fn(ud, msg);
        n++;
    }
    return n;
}
