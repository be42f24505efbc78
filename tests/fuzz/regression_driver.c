/*
 * regression_driver.c: replays a fuzz corpus through a fuzz target without
 * libFuzzer, as zstd's tests/fuzz/regression_driver.c does. Linked with one
 * fuzz_<target>.c, it calls LLVMFuzzerTestOneInput() once with an empty input
 * and once per regular file under each argument (files, or directories walked
 * recursively, in sorted order). ctest runs it on tests/fuzz/corpus/<target>/,
 * so every test run (and every sanitizer build) replays every crash ever found.
 *
 * Each input is copied into a buffer of exactly its size, so an over-read is
 * caught by AddressSanitizer. Exit status: 0 when every input ran, 1 when a
 * path cannot be read; a failed invariant aborts.
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t g_runs;

static int run_file(const char *path, const struct stat *sb)
{
    size_t size = (size_t)sb->st_size;
    uint8_t *buf = malloc(size ? size : 1);
    FILE *fp = fopen(path, "rb");
    if (!buf || !fp || (size && fread(buf, 1, size, fp) != size)) {
        fprintf(stderr, "regression_driver: cannot read %s: %s\n", path, strerror(errno));
        free(buf);
        if (fp)
            fclose(fp);
        return 1;
    }
    fclose(fp);
    LLVMFuzzerTestOneInput(buf, size);
    free(buf);
    g_runs++;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "regression_driver: %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (S_ISREG(sb.st_mode))
        return run_file(path, &sb);
    if (!S_ISDIR(sb.st_mode))
        return 0;
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "regression_driver: %s: %s\n", path, strerror(errno));
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue; /* ".", "..", and hidden files such as .gitkeep */
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, cap * sizeof(*nn));
            if (!nn) {
                rc = 1;
                break;
            }
            names = nn;
        }
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(len))) {
            rc = 1;
            break;
        }
        snprintf(names[n++], len, "%s/%s", path, e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(*names), cmp_names);
    for (size_t i = 0; i < n; i++) {
        if (!rc)
            rc = run_path(names[i]);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    static const uint8_t empty[1];
    LLVMFuzzerTestOneInput(empty, 0);
    g_runs++;
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++)
        rc = run_path(argv[i]);
    fprintf(stderr, "regression_driver: %zu inputs, %s\n", g_runs, rc ? "FAILED" : "ok");
    return rc;
}
