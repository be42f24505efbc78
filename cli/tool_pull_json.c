/*
 * zt pull --json: JSON Lines on stdout, one event a line, flushed as it is
 * written, so that a program reading the pipe sees each file as it ends:
 *
 *     {"event":"file","file":"DIR/m.zt","url":"http://…","outcome":"pulled",
 *      "bytes":N,"fetched":N,"resumed":N,"changed":false}
 *     {"event":"file",…,"outcome":"failed","error":{"code":"ZT_E_NETWORK",
 *      "message":"…","url":"http://…"}}
 *     {"event":"listing","url":"…","outcome":"failed","error":{…}}
 *     {"event":"summary",…}           (last; see tool_pull.c)
 *
 * outcome: pulled, skipped (complete already), failed, interrupted (by
 * SIGINT or SIGTERM while it ran) or not_started (the signal came first).
 * error.url is the request the message names (its "[URL]" tail) when it
 * names one, else the file's URL. Errors are also written to stderr as
 * text, as without --json.
 */
#include "tool.h"

#include <stdio.h>
#include <string.h>

void tool_json_str(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* {"code":…,"message":…,"url":…}: the message without its "[URL]" tail,
 * which becomes url (else fallback_url). */
void tool_json_error(const zt_error *err, const char *fallback_url)
{
    const char *m = err->message, *open = strrchr(m, '[');
    size_t n = strlen(m), keep = n;
    char url[768] = "";
    if (open && n && m[n - 1] == ']' && strstr(open, "://")) {
        snprintf(url, sizeof(url), "%.*s", (int)(m + n - 1 - open - 1), open + 1);
        keep = (size_t)(open - m);
        while (keep && m[keep - 1] == ' ')
            keep--;
    }
    char msg[768];
    snprintf(msg, sizeof(msg), "%.*s", (int)keep, m);
    printf("{\"code\":");
    tool_json_str(zt_status_name(err->code));
    printf(",\"message\":");
    tool_json_str(msg);
    printf(",\"url\":");
    tool_json_str(url[0] ? url : fallback_url);
    putchar('}');
}

void tool_pull_json_file(const char *file, const char *url, const char *outcome,
                         const zt_remote_pull_stats *s, const zt_error *err)
{
    printf("{\"event\":\"file\",\"file\":");
    tool_json_str(file);
    printf(",\"url\":");
    tool_json_str(url);
    printf(",\"outcome\":\"%s\"", outcome);
    if (s)
        printf(",\"bytes\":%llu,\"fetched\":%llu,\"resumed\":%llu,\"changed\":%s",
               (unsigned long long)s->size, (unsigned long long)s->fetched,
               (unsigned long long)s->resumed, s->changed ? "true" : "false");
    if (err) {
        printf(",\"error\":");
        tool_json_error(err, url);
    }
    printf("}\n");
    fflush(stdout);
}

void tool_pull_json_listing(const char *url, const zt_error *err)
{
    printf("{\"event\":\"listing\",\"url\":");
    tool_json_str(url);
    printf(",\"outcome\":\"failed\",\"error\":");
    tool_json_error(err, url);
    printf("}\n");
    fflush(stdout);
}
