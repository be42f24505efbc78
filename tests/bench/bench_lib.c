/*
 * bench_lib.c: libztensor's own figures (not a test; tests/bench/bench_lib.sh
 * builds it in Release and runs it). All timings are wall clock
 * (CLOCK_MONOTONIC); GB/s means 10^9 bytes per second.
 *
 *  1. open + validate: zt_open() + zt_close() of a file of N small dense
 *     objects (f32 [4,4], sha256 each), median of R runs, file in the page
 *     cache; zt_file_manifest_json() of the same file, median of R runs;
 *     zt_st_view_new() + zt_st_view_free() of it (its safetensors view: the
 *     header ztensord builds once per file version), median of R runs.
 *  2. digest verification: zt_component_verify() over one 1 GiB raw component,
 *     sha256 and crc32c, after a warm-up read so the bytes are page-cache
 *     resident (median of 3).
 *  3. writer: zt_writer_open() on a path, one component written in 1 MiB
 *     chunks from memory, zt_writer_add_object(), zt_writer_finish() (manifest,
 *     footer, fsync of the file, rename, fsync of the directory). Against it:
 *     `cp SRC DST && sync DST` run through system(), SRC being the file just
 *     written (page-cache resident); `sync FILE` fsyncs that one file. Printed
 *     ratio = writer seconds / cp seconds (below 1: the writer is faster).
 *     Variants: sha256, crc32c, no digest, and zstd level 1 on compressible data.
 *
 *   bench_lib DIR [--objects N] [--runs R] [--mib M] [--keep]
 *   bench_lib DIR --open FILE [--runs R]
 *   bench_lib DIR --make NAME [--objects N] [--digest sha256|none]
 * --open: only figure 1's zt_open + zt_close, of an existing FILE (any
 * format: a v2 file made by `zt convert --format v2`, say).
 * --make: only write figure 1's file of N objects as DIR/NAME, with the
 * given digest (default sha256), and exit (tests/bench/verify.sh).
 * DIR must be on a real disk (not tmpfs) with room for about 2 x M MiB.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "ztensor/ztensor.h"
#include "ztensor/ztensor_experimental.h"

#define CHUNK (1u << 20)
#define TMPFS_MAGIC_ 0x01021994

static const char *g_dir;
static int g_keep;                                 /* --keep: leave many-N.zt for profiling */
static zt_digest_kind g_digest = ZT_DIGEST_SHA256; /* figure 1's file; --digest */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const zt_error *err)
{
    fprintf(stderr, "bench_lib: %s: %s\n", what, err ? err->message : strerror(errno));
    exit(1);
}

/* user + system CPU seconds of this process */
static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static char *path_in(const char *name)
{
    static char buf[4][4096];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 4096, "%s/%s", g_dir, name);
    return p;
}

static uint64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* ---- 1. open + validate */

static void bench_open_file(const char *path, int runs)
{
    double *t = calloc((size_t)runs, sizeof(double));
    zt_error err;
    zt_file *f;
    size_t nobj = 0;
    if (!t)
        die("out of memory", NULL);
    for (int r = 0; r < runs; r++) {
        double t0 = now();
        if (zt_open(path, NULL, &f, &err))
            die(path, &err);
        nobj = zt_file_object_count(f);
        zt_close(f);
        t[r] = now() - t0;
    }
    printf("[1] open + validate %s (%zu objects, %.1f MB): zt_open + zt_close median %.1f ms "
           "over %d runs\n",
           path, nobj, file_size(path) / 1e6, median(t, runs) * 1e3, runs);
    free(t);
}

static void make_many(const char *path, int nobj)
{
    zt_writer_options o;
    zt_writer_options_init(&o);
    o.fsync = 0;
    zt_writer *w;
    zt_error err;
    if (zt_writer_open(path, &o, &w, &err))
        die(path, &err);
    float data[16];
    uint64_t shape[2] = {4, 4};
    const char *role = "data";
    zt_component_spec spec = {ZT_DTYPE_F32, NULL, ZT_ENC_RAW, 0, g_digest};
    for (int i = 0; i < nobj; i++) {
        for (int k = 0; k < 16; k++)
            data[k] = (float)(i * 16 + k);
        size_t id;
        char name[64];
        snprintf(name, sizeof(name), "model.layers.%d.mlp.w%d.weight", i / 8, i % 8);
        if (zt_writer_begin(w, &spec, &err) || zt_writer_write(w, data, sizeof(data), &err) ||
            zt_writer_end(w, &id, &err) ||
            zt_writer_add_object(w, name, "dense", 2, shape, NULL, 1, &role, &id, &err))
            die("writing the many-object file", &err);
    }
    if (zt_writer_finish(w, &err))
        die("finish", &err);
    zt_writer_free(w);
}

static void bench_open(int nobj, int runs)
{
    char name[64];
    snprintf(name, sizeof(name), "many-%d.zt", nobj);
    const char *path = path_in(name);
    double t0 = now();
    make_many(path, nobj);
    double tw = now() - t0;

    double *t = calloc((size_t)runs, sizeof(double)), *tj = calloc((size_t)runs, sizeof(double));
    double *tc = calloc((size_t)runs, sizeof(double)), *tv = calloc((size_t)runs, sizeof(double));
    zt_error err;
    zt_file *f;
    size_t jlen = 0, hlen = 0;
    uint64_t mlen = 0;
    for (int r = 0; r < runs; r++) {
        double c0 = cpu_now();
        t0 = now();
        if (zt_open(path, NULL, &f, &err))
            die(path, &err);
        mlen = zt_file_manifest_length(f);
        if (zt_file_object_count(f) != (size_t)nobj)
            die("object count", NULL);
        zt_close(f);
        t[r] = now() - t0;
        tc[r] = cpu_now() - c0;
    }
    if (zt_open(path, NULL, &f, &err))
        die(path, &err);
    for (int r = 0; r < runs; r++) {
        t0 = now();
        char *js = zt_file_manifest_json(f, ZT_JSON_COMPACT, &err);
        tj[r] = now() - t0;
        if (!js)
            die("manifest json", &err);
        jlen = strlen(js);
        zt_free(js);
    }
    for (int r = 0; r < runs; r++) {
        t0 = now();
        zt_st_view *v = zt_st_view_new(f, &err);
        if (!v)
            die("safetensors view", &err);
        zt_st_view_header(v, &hlen);
        zt_st_view_free(v);
        tv[r] = now() - t0;
    }
    zt_close(f);
    double tmin = t[0], tmax = t[0];
    for (int r = 1; r < runs; r++) {
        tmin = t[r] < tmin ? t[r] : tmin;
        tmax = t[r] > tmax ? t[r] : tmax;
    }
    printf("[1] open + validate, %d objects (file %.1f MB, CBOR manifest %.1f MB; written in "
           "%.2f s)\n",
           nobj, file_size(path) / 1e6, mlen / 1e6, tw);
    printf("    zt_open + zt_close:     median %.1f ms over %d runs (min %.1f, max %.1f); "
           "CPU (user+sys) median %.1f ms\n",
           median(t, runs) * 1e3, runs, tmin * 1e3, tmax * 1e3, median(tc, runs) * 1e3);
    printf("    zt_file_manifest_json:  median %.1f ms over %d runs (%.1f MB of compact JSON)\n",
           median(tj, runs) * 1e3, runs, jlen / 1e6);
    printf("    zt_st_view_new + free:  median %.1f ms over %d runs (%.1f MB safetensors header)\n",
           median(tv, runs) * 1e3, runs, hlen / 1e6);
    free(tv);
    free(t);
    free(tj);
    free(tc);
    if (!g_keep)
        unlink(path);
}

/* ---- 3. writer (and the files 2 verifies) */

typedef struct wresult {
    double secs;
    uint64_t stored, input;
} wresult;

static wresult write_one(const char *path, const uint8_t *src, size_t src_len, uint64_t total,
                         zt_encoding enc, zt_digest_kind dig)
{
    zt_writer_options o;
    zt_writer_options_init(&o); /* fsync on */
    zt_writer *w;
    zt_error err;
    double t0 = now();
    if (zt_writer_open(path, &o, &w, &err))
        die(path, &err);
    zt_component_spec spec = {ZT_DTYPE_U8, NULL, enc, 1, dig};
    if (zt_writer_begin(w, &spec, &err))
        die("begin", &err);
    for (uint64_t done = 0; done < total; done += CHUNK)
        if (zt_writer_write(w, src + (done % src_len), CHUNK, &err))
            die("write", &err);
    size_t id;
    if (zt_writer_end(w, &id, &err))
        die("end", &err);
    const char *role = "data";
    if (zt_writer_add_object(w, "blob", "dense", 1, &total, NULL, 1, &role, &id, &err) ||
        zt_writer_finish(w, &err))
        die("finish", &err);
    zt_written_component info;
    zt_writer_component_info(w, id, &info);
    zt_writer_free(w);
    wresult r = {now() - t0, info.length, total};
    return r;
}

static double run_cp(const char *src, const char *dst)
{
    char cmd[9000];
    unlink(dst);
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && sync '%s'", src, dst, dst);
    double t0 = now();
    if (system(cmd) != 0)
        die("cp", NULL);
    double t = now() - t0;
    unlink(dst);
    return t;
}

static void warm(const char *path)
{
    FILE *f = fopen(path, "rb");
    static uint8_t buf[CHUNK];
    if (!f)
        die(path, NULL);
    while (fread(buf, 1, sizeof(buf), f) > 0) {
    }
    fclose(f);
}

static void bench_verify(const char *path, const char *label)
{
    warm(path);
    zt_error err;
    zt_file *f;
    if (zt_open(path, NULL, &f, &err))
        die(path, &err);
    const zt_object *o = zt_file_find_object(f, "blob", 4);
    const zt_component *c = zt_object_find_component(o, "data");
    double t[3];
    for (int r = 0; r < 3; r++) {
        int checked = 0;
        double t0 = now();
        if (zt_component_verify(f, o, c, &checked, &err) || !checked)
            die("verify", &err);
        t[r] = now() - t0;
    }
    double m = median(t, 3);
    printf("[2] zt_component_verify %-7s %.2f GiB: median %.3f s = %.2f GB/s\n", label,
           zt_component_length(c) / (double)(1u << 30), m, zt_component_length(c) / m / 1e9);
    zt_close(f);
}

static void fill_random(uint8_t *p, size_t n)
{
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(p + i, &x, n - i < 8 ? n - i : 8);
    }
}

/* Compressible, like real weights: f32, roughly normal (sum of four uniforms,
 * sd 0.02), at bf16 precision (low 16 bits zero); about 2:1 for zstd -1. */
static void fill_compressible(uint8_t *p, size_t n)
{
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        double s = 0;
        for (int k = 0; k < 4; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s += (double)(x >> 11) * 0x1.0p-53;
        }
        float v = (float)((s - 2.0) * 0.02 * 1.7320508);
        uint32_t b;
        memcpy(&b, &v, 4);
        b &= 0xFFFF0000u;
        memcpy(p + i, &b, 4);
    }
}

/* zstd's own speed on the same bytes, one shot, for scale. */
static double zstd_reference(const uint8_t *src, size_t n, int level)
{
    size_t cap = ZSTD_compressBound(n);
    void *dst = malloc(cap);
    if (!dst)
        die("malloc", NULL);
    double t0 = now();
    size_t r = ZSTD_compress(dst, cap, src, n, level);
    double t = now() - t0;
    free(dst);
    if (ZSTD_isError(r))
        die("ZSTD_compress", NULL);
    return n / t / 1e9;
}

static void bench_write(uint64_t mib)
{
    uint64_t total = mib << 20;
    size_t src_len = 64u << 20;
    uint8_t *src = malloc(src_len);
    if (!src)
        die("malloc", NULL);
    fill_random(src, src_len);
    const char *file = path_in("big.zt"), *copy = path_in("big-copy.zt");

    struct {
        const char *label;
        zt_encoding enc;
        zt_digest_kind dig;
        int compressible;
    } v[] = {{"raw, sha256", ZT_ENC_RAW, ZT_DIGEST_SHA256, 0},
             {"raw, crc32c", ZT_ENC_RAW, ZT_DIGEST_CRC32C, 0},
             {"raw, no digest", ZT_ENC_RAW, ZT_DIGEST_NONE, 0},
             {"zstd -1, sha256, compressible data", ZT_ENC_ZSTD, ZT_DIGEST_SHA256, 1}};
    printf("[3] writer, %llu MiB in 1 MiB chunks from memory, zt_writer_open on a path "
           "through zt_writer_finish (fsync file + rename + fsync dir);\n"
           "    cp = `cp SRC DST && sync DST` via system(), SRC = the file just written, "
           "page-cache resident\n",
           (unsigned long long)mib);
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        if (v[i].compressible)
            fill_compressible(src, src_len);
        wresult w = write_one(file, src, src_len, total, v[i].enc, v[i].dig);
        if (v[i].dig == ZT_DIGEST_SHA256 && v[i].enc == ZT_ENC_RAW)
            bench_verify(file, "sha256");
        if (v[i].dig == ZT_DIGEST_CRC32C)
            bench_verify(file, "crc32c");
        warm(file);
        double c = run_cp(file, copy);
        uint64_t fsz = file_size(file);
        printf("    %-36s writer %.3f s = %.2f GB/s of input (%.1f MB stored)  |  cp of the "
               "%.1f MB result %.3f s = %.2f GB/s  |  writer/cp time ratio %.2f\n",
               v[i].label, w.secs, w.input / w.secs / 1e9, w.stored / 1e6, fsz / 1e6, c,
               fsz / c / 1e9, w.secs / c);
        if (v[i].enc == ZT_ENC_ZSTD)
            printf("    %-36s (ZSTD_compress level 1, one shot, on the 64 MiB source buffer: "
                   "%.2f GB/s)\n",
                   "", zstd_reference(src, src_len, 1));
        fflush(stdout);
        unlink(file);
    }
    free(src);
}

int main(int argc, char **argv)
{
    int nobj = 100000, runs = 7;
    uint64_t mib = 1024;
    const char *open_only = NULL, *make_only = NULL;
    if (argc < 2) {
        fprintf(stderr, "usage: bench_lib DIR [--objects N] [--runs R] [--mib M] [--keep]\n");
        return 2;
    }
    g_dir = argv[1];
    for (int i = 2; i < argc; i += 2) {
        if (!strcmp(argv[i], "--keep")) {
            g_keep = 1;
            i--;
        } else if (i + 1 == argc) {
            return 2;
        } else if (!strcmp(argv[i], "--objects"))
            nobj = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--runs"))
            runs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--mib"))
            mib = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--open"))
            open_only = argv[i + 1];
        else if (!strcmp(argv[i], "--make"))
            make_only = argv[i + 1];
        else if (!strcmp(argv[i], "--digest") && !strcmp(argv[i + 1], "none"))
            g_digest = ZT_DIGEST_NONE;
        else if (strcmp(argv[i], "--digest") || strcmp(argv[i + 1], "sha256"))
            return 2;
    }
    if (nobj < 1 || runs < 1 || mib < 1)
        return 2;
    if (open_only) {
        bench_open_file(open_only, runs);
        return 0;
    }
    if (make_only) {
        make_many(path_in(make_only), nobj);
        return 0;
    }
    struct statfs sf;
    if (statfs(g_dir, &sf) != 0)
        die(g_dir, NULL);
    if (sf.f_type == TMPFS_MAGIC_)
        fprintf(stderr, "bench_lib: warning: %s is on tmpfs, fsync figures mean nothing\n", g_dir);
    printf("libztensor %s bench, dir %s\n", ZT_VERSION_STRING, g_dir);
    bench_open(nobj, runs);
    bench_write(mib);
    return 0;
}
