/*
 * bench_remote: how fast libztensor-remote loads a file's components into
 * memory. Opens URL, then reads every component (decoded, digests checked)
 * with zt_remote_read_many over each connection count given, RUNS times,
 * and prints the median time and throughput per count. Buffers are touched
 * before the clock starts, so page faults are not counted.
 *   bench_remote URL RUNS CONNECTIONS...
 * Run by tests/bench/remote.sh; not a test.
 */
#include <ztensor/ztensor_remote.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_remote URL RUNS CONNECTIONS...\n");
        return 2;
    }
    int runs = atoi(argv[2]);
    zt_remote_file *rf;
    zt_error err;
    if (runs < 1 || zt_remote_open(argv[1], NULL, &rf, &err)) {
        fprintf(stderr, "%s\n", runs < 1 ? "RUNS must be >= 1" : err.message);
        return 1;
    }
    const zt_file *f = zt_remote_file_zt(rf);
    size_t n = 0;
    for (size_t i = 0; i < zt_file_object_count(f); i++)
        n += zt_object_component_count(zt_file_object_at(f, i));
    zt_remote_request *reqs = calloc(n ? n : 1, sizeof(*reqs));
    double *t = calloc((size_t)runs, sizeof(*t));
    unsigned long long bytes = 0;
    size_t k = 0;
    for (size_t i = 0; reqs && t && i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        for (size_t j = 0; j < zt_object_component_count(o); j++, k++) {
            reqs[k].component = zt_object_component_at(o, j);
            reqs[k].cap = (size_t)zt_component_decoded_length(reqs[k].component);
            reqs[k].buf = malloc(reqs[k].cap ? reqs[k].cap : 1);
            if (!reqs[k].buf)
                return 1;
            memset(reqs[k].buf, 0, reqs[k].cap);
            bytes += reqs[k].cap;
        }
    }
    if (!reqs || !t)
        return 1;
    printf("%s: %zu components, %llu bytes\n", argv[1], n, bytes);
    for (int a = 3; a < argc; a++) {
        unsigned conns = (unsigned)atoi(argv[a]);
        for (int r = 0; r < runs; r++) {
            double t0 = now();
            if (zt_remote_read_many(rf, reqs, n, conns, &err)) {
                fprintf(stderr, "%s\n", err.message);
                return 1;
            }
            t[r] = now() - t0;
        }
        qsort(t, (size_t)runs, sizeof(*t), cmp);
        double med = t[runs / 2];
        printf("connections %2u: median %.3f s (min %.3f, max %.3f) = %.2f GB/s\n", conns, med,
               t[0], t[runs - 1], (double)bytes / med / 1e9);
    }
    for (k = 0; k < n; k++)
        free(reqs[k].buf);
    free(reqs);
    free(t);
    zt_remote_close(rf);
    return 0;
}
