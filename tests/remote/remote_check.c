/*
 * remote_check: the remote tests' client. Opens URL with libztensor-remote
 * and LOCAL (the same file on disk) with libztensor, and compares every
 * component byte for byte: decoded and stored, whole (digest checked), in
 * ranges (first byte, a middle slice, the last byte), and all together with
 * zt_remote_read_many over N connections.
 *
 *   remote_check [OPTIONS] URL LOCAL
 *     --connections N --chunk BYTES --window BYTES --stall S --retries N
 *     --backoff S --max-backoff S --timeout S --token T --cacert FILE
 *     --insecure --plain
 *     --only OBJECT        read just this object's components
 *     --many-only          skip the one-by-one reads: zt_remote_read_many only
 *     --after-open CMD     run CMD (sh -c) between the open and the reads
 *     --expect CODE        the run must fail with this status name (ZT_E_…);
 *                          exit 0 when it does
 *     --spans              also zt_remote_read_stream over the whole file (its
 *                          bytes in order, against LOCAL's) and zt_remote_read_spans
 *                          of its first, middle and last bytes, in a session of
 *                          their own; a span past the end must be ZT_E_ARG
 * Prints "ok: N components, B bytes" on success; every error's message goes to
 * stderr. Exit 0 success, 1 mismatch or unexpected status, 2 usage.
 */
#include <ztensor/ztensor.h>
#include <ztensor/ztensor_remote.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_expect;
static int g_spans;
static unsigned g_conns;
static int g_many_only;

static int report(zt_status st, const zt_error *err)
{
    fprintf(stderr, "remote_check: %s\n", err->message);
    if (g_expect) {
        if (!strcmp(zt_status_name(st), g_expect)) {
            printf("expected: %s\n", zt_status_name(st));
            return 0;
        }
        fprintf(stderr, "remote_check: got %s, expected %s\n", zt_status_name(st), g_expect);
    }
    return 1;
}

static int mismatch(const char *what, const zt_object *o, const zt_component *c)
{
    fprintf(stderr, "remote_check: MISMATCH %s: object \"%s\" component \"%s\"\n", what,
            zt_object_name(o), zt_component_role(c));
    return 1;
}

/* Compares one component: whole decoded, whole stored, three ranges of each. */
static int check_component(zt_remote_file *rf, const zt_file *lf, const zt_object *o,
                           const zt_component *rc, const zt_component *lc, uint64_t *bytes,
                           zt_status *st, zt_error *err)
{
    size_t dl = (size_t)zt_component_decoded_length(lc), sl = (size_t)zt_component_length(lc);
    uint8_t *want = malloc(dl + 1), *got = malloc((dl > sl ? dl : sl) + 1);
    size_t n = 0;
    int bad = 0;
    if (!want || !got || (*st = zt_component_read(lf, lc, want, dl, &n, err))) {
        fprintf(stderr, "remote_check: local read failed\n");
        free(want);
        free(got);
        return 1;
    }
    if ((*st = zt_remote_read_component(rf, rc, ZT_REMOTE_DECODED, got, dl, &n, err)))
        goto out;
    if (n != dl || memcmp(got, want, dl))
        bad = mismatch("decoded", o, lc);
    const uint8_t *stored = zt_file_bytes(lf) + zt_component_offset(lc);
    if (!bad && (*st = zt_remote_read_component(rf, rc, ZT_REMOTE_STORED, got, sl, &n, err)))
        goto out;
    if (!bad && (n != sl || memcmp(got, stored, sl)))
        bad = mismatch("stored", o, lc);
    for (int k = 0; !bad && k < 2; k++) {
        size_t total = k ? sl : dl;
        const uint8_t *ref = k ? stored : want;
        size_t offs[3] = {0, total / 3, total ? total - 1 : 0}, lens[3] = {1, total / 3, 1};
        for (int i = 0; !bad && i < 3 && total; i++) {
            if (!lens[i])
                continue;
            *st = zt_remote_read_range(rf, rc, k ? ZT_REMOTE_STORED : ZT_REMOTE_DECODED, offs[i],
                                       got, lens[i], err);
            if (*st)
                goto out;
            if (memcmp(got, ref + offs[i], lens[i]))
                bad = mismatch(k ? "stored range" : "decoded range", o, lc);
        }
    }
    *bytes += dl;
out:
    free(want);
    free(got);
    return bad;
}

/* All components of the file (or of one object) in one zt_remote_read_many. */
static int check_many(zt_remote_file *rf, const zt_file *lf, const char *only, size_t *comps,
                      uint64_t *bytes, zt_status *st, zt_error *err)
{
    const zt_file *zf = zt_remote_file_zt(rf);
    size_t n = 0;
    for (size_t i = 0; i < zt_file_object_count(zf); i++)
        n += zt_object_component_count(zt_file_object_at(zf, i));
    zt_remote_request *reqs = calloc(n ? n : 1, sizeof(*reqs));
    const zt_component **local = calloc(n ? n : 1, sizeof(*local));
    size_t k = 0;
    for (size_t i = 0; i < zt_file_object_count(zf); i++) {
        const zt_object *o = zt_file_object_at(zf, i), *lo = zt_file_object_at(lf, i);
        if (only && strcmp(zt_object_name(o), only))
            continue;
        for (size_t j = 0; j < zt_object_component_count(o); j++, k++) {
            reqs[k].component = zt_object_component_at(o, j);
            reqs[k].cap = (size_t)zt_component_decoded_length(reqs[k].component);
            reqs[k].buf = malloc(reqs[k].cap + 1);
            local[k] = zt_object_component_at(lo, j);
        }
    }
    int bad = 0;
    *st = zt_remote_read_many(rf, reqs, k, g_conns, err);
    if (g_many_only) {
        *comps = k;
        for (size_t i = 0; i < k; i++)
            *bytes += reqs[i].len;
    }
    for (size_t i = 0; !*st && i < k; i++) {
        uint8_t *want = malloc(reqs[i].cap + 1);
        size_t wl = 0;
        if (zt_component_read(lf, local[i], want, reqs[i].cap, &wl, err) || wl != reqs[i].len ||
            reqs[i].status != ZT_OK || memcmp(want, reqs[i].buf, wl)) {
            fprintf(stderr, "remote_check: MISMATCH read_many: component %zu (%s)\n", i,
                    zt_component_role(local[i]));
            bad = 1;
        }
        free(want);
    }
    for (size_t i = 0; i < k; i++)
        free(reqs[i].buf);
    free(reqs);
    free(local);
    return bad;
}

/* ---- --spans: the byte-span reads a caching server uses */

typedef struct stream_check {
    const uint8_t *want;
    uint64_t next, size;
    int bad;
} stream_check;

static int on_stream(void *ud, uint64_t pos, const uint8_t *p, size_t n)
{
    stream_check *c = ud;
    if (pos != c->next || pos + n > c->size || memcmp(c->want + pos, p, n) != 0)
        c->bad = 1;
    c->next = pos + n;
    return c->bad;
}

static uint8_t *slurp(const char *path, uint64_t *size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *p = NULL;
    long n;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (p = malloc((size_t)n + 1)) && fread(p, 1, (size_t)n, f) == (size_t)n)
        *size = (uint64_t)n;
    else {
        free(p);
        p = NULL;
    }
    if (f)
        fclose(f);
    return p;
}

static int check_spans(zt_remote_file *rf, const char *local, const zt_remote_options *opt,
                       zt_status *st, zt_error *err)
{
    uint64_t size = 0;
    uint8_t *want = slurp(local, &size);
    zt_remote *s = NULL;
    int bad = 0;
    if (!want || (*st = zt_remote_new(opt, &s, err))) {
        free(want);
        return want ? 0 : 1;
    }
    stream_check c = {want, 0, size, 0};
    if (!(*st = zt_remote_read_stream(s, rf, 0, size, on_stream, &c, err)) &&
        (c.bad || c.next != size)) {
        fprintf(stderr, "remote_check: MISMATCH stream (%llu of %llu bytes in order)\n",
                (unsigned long long)c.next, (unsigned long long)size);
        bad = 1;
    }
    uint64_t mid = size / 2, tail = size > 7 ? size - 7 : 0;
    uint8_t a[16], b[100], t[7];
    zt_remote_span sp[3] = {
        {0, sizeof(a), a}, {mid, size - mid < 100 ? size - mid : 100, b}, {tail, size - tail, t}};
    if (!bad && !*st && !(*st = zt_remote_read_spans(s, rf, sp, 3, 2, err)))
        for (int i = 0; i < 3; i++)
            if (memcmp(sp[i].buf, want + sp[i].offset, (size_t)sp[i].len)) {
                fprintf(stderr, "remote_check: MISMATCH span %d\n", i);
                bad = 1;
            }
    zt_error e2;
    zt_remote_span past = {size - 1, 2, b};
    if (!bad && !*st && zt_remote_read_spans(s, rf, &past, 1, 1, &e2) != ZT_E_ARG) {
        fprintf(stderr, "remote_check: a span past the end was not ZT_E_ARG\n");
        bad = 1;
    }
    if (!bad && !*st && zt_remote_file_size(rf) != size) {
        fprintf(stderr, "remote_check: MISMATCH zt_remote_file_size\n");
        bad = 1;
    }
    zt_remote_free(s);
    free(want);
    return bad;
}

static int usage(void)
{
    fprintf(stderr, "usage: remote_check [OPTIONS] URL LOCAL (see the source)\n");
    return 2;
}

int main(int argc, char **argv)
{
    zt_remote_options opt;
    zt_remote_options_init(&opt);
    const char *only = NULL, *after = NULL, *pos[2] = {0};
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--insecure"))
            opt.insecure = 1;
        else if (!strcmp(a, "--plain"))
            opt.flags |= ZT_REMOTE_PLAIN_URL;
        else if (!strcmp(a, "--many-only"))
            g_many_only = 1;
        else if (!strcmp(a, "--spans"))
            g_spans = 1;
        else if (a[0] == '-' && a[1] == '-' && !v)
            return usage();
        else if (!strcmp(a, "--connections") && ++i)
            g_conns = opt.connections = (unsigned)atoi(v);
        else if (!strcmp(a, "--chunk") && ++i)
            opt.chunk_size = (size_t)atoll(v);
        else if (!strcmp(a, "--window") && ++i)
            opt.open_window = (size_t)atoll(v);
        else if (!strcmp(a, "--stall") && ++i)
            opt.stall_timeout = atof(v);
        else if (!strcmp(a, "--retries") && ++i)
            opt.max_retries = (unsigned)atoi(v);
        else if (!strcmp(a, "--backoff") && ++i)
            opt.backoff = atof(v);
        else if (!strcmp(a, "--max-backoff") && ++i)
            opt.max_backoff = atof(v);
        else if (!strcmp(a, "--timeout") && ++i)
            opt.total_timeout = atof(v);
        else if (!strcmp(a, "--token") && ++i)
            opt.bearer_token = v;
        else if (!strcmp(a, "--cacert") && ++i)
            opt.ca_file = v;
        else if (!strcmp(a, "--only") && ++i)
            only = v;
        else if (!strcmp(a, "--after-open") && ++i)
            after = v;
        else if (!strcmp(a, "--expect") && ++i)
            g_expect = v;
        else if (a[0] != '-' && npos < 2)
            pos[npos++] = a;
        else
            return usage();
    }
    if (npos != 2)
        return usage();
    zt_error err;
    zt_file *lf;
    if (zt_open(pos[1], NULL, &lf, &err)) {
        fprintf(stderr, "remote_check: %s: %s\n", pos[1], err.message);
        return 2;
    }
    zt_remote_file *rf = NULL;
    zt_status st = zt_remote_open(pos[0], &opt, &rf, &err);
    int rc = 0;
    if (st) {
        rc = report(st, &err);
        zt_close(lf);
        return rc;
    }
    if (after && system(after) != 0)
        fprintf(stderr, "remote_check: --after-open command failed\n");
    const zt_file *zf = zt_remote_file_zt(rf);
    uint64_t bytes = 0;
    size_t comps = 0;
    if (zt_file_object_count(zf) != zt_file_object_count(lf)) {
        fprintf(stderr, "remote_check: MISMATCH object count\n");
        rc = 1;
    }
    for (size_t i = 0; !rc && !st && i < zt_file_object_count(zf); i++) {
        const zt_object *o = zt_file_object_at(zf, i), *lo = zt_file_object_at(lf, i);
        if (strcmp(zt_object_name(o), zt_object_name(lo)))
            rc = mismatch("object name", lo, zt_object_component_at(lo, 0));
        if ((only && strcmp(zt_object_name(o), only)) || g_many_only)
            continue;
        for (size_t j = 0; !rc && !st && j < zt_object_component_count(o); j++, comps++)
            rc = check_component(rf, lf, lo, zt_object_component_at(o, j),
                                 zt_object_component_at(lo, j), &bytes, &st, &err);
    }
    if (!rc && !st)
        rc = check_many(rf, lf, only, &comps, &bytes, &st, &err);
    if (!rc && !st && g_spans)
        rc = check_spans(rf, pos[1], &opt, &st, &err);
    if (st)
        rc = report(st, &err);
    else if (!rc && g_expect) {
        fprintf(stderr, "remote_check: succeeded, expected %s\n", g_expect);
        rc = 1;
    } else if (!rc)
        printf("ok: %zu components, %llu bytes\n", comps, (unsigned long long)bytes);
    zt_remote_close(rf);
    zt_close(lf);
    return rc;
}
