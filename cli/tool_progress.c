/* Shared by zt convert: a progress bar on stderr (only when it is a
 * terminal) and the chunked, streaming copy of one component's bytes. */
#include "tool.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (4u << 20)

void tool_progress_init(tool_progress *p, uint64_t total)
{
    p->total = total;
    p->done = 0;
    p->last_ns = 0;
    p->shown = 0;
    p->on = isatty(STDERR_FILENO);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tool_progress_format(char *buf, size_t cap, uint64_t done, uint64_t total)
{
    unsigned pct = total ? (unsigned)(done * 100 / total) : 100;
    char bar[41];
    unsigned fill = pct * 40 / 100;
    for (unsigned i = 0; i < 40; i++)
        bar[i] = i < fill ? '#' : ' ';
    bar[40] = 0;
    snprintf(buf, cap, "[%s] %3u%% %.1f / %.1f MiB", bar, pct, (double)done / 1048576.0,
             (double)total / 1048576.0);
}

static void draw(tool_progress *p)
{
    char line[TOOL_PROGRESS_LINE];
    tool_progress_format(line, sizeof line, p->done, p->total);
    fprintf(stderr, "\r%s", line);
    p->shown = 1;
}

void tool_progress_add(tool_progress *p, uint64_t n)
{
    p->done += n;
    if (!p->on)
        return;
    uint64_t t = now_ns();
    if (t - p->last_ns >= 100000000u || p->done == p->total) {
        p->last_ns = t;
        draw(p);
    }
}

void tool_progress_end(tool_progress *p)
{
    if (p->on && p->shown) {
        draw(p);
        fputc('\n', stderr);
    }
}

/* Decoded bytes of c, CHUNK at a time: pread for raw components of a mapped
 * file, streaming zstd for compressed ones. Never the whole component. */
zt_status tool_copy_component(const zt_file *f, const zt_component *c, tool_chunk_fn fn, void *ud,
                              tool_progress *p, zt_error *err)
{
    static uint8_t *buf;
    if (!buf && !(buf = malloc(CHUNK))) {
        err->code = ZT_E_NOMEM;
        snprintf(err->message, sizeof(err->message), "out of memory");
        return ZT_E_NOMEM;
    }
    zt_decoder *d = NULL;
    zt_status st = zt_decoder_new(f, c, &d, err);
    uint64_t total = 0;
    while (!st) {
        size_t n = 0;
        if ((st = zt_decoder_read(d, buf, CHUNK, &n, err)) || n == 0)
            break;
        total += n;
        st = fn(ud, buf, n, err);
        if (p)
            tool_progress_add(p, n);
    }
    zt_decoder_free(d);
    if (!st && total != zt_component_decoded_length(c)) {
        err->code = st = ZT_E_TRUNCATED;
        snprintf(err->message, sizeof(err->message), "component \"%s\" gave %llu of its %llu bytes",
                 zt_component_role(c), (unsigned long long)total,
                 (unsigned long long)zt_component_decoded_length(c));
    }
    return st;
}
