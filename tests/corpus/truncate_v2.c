/*
 * truncate_v2: every truncation point of every accepted v2 file.
 *
 * For each accept/NAME.zt that gen_corpus_v2 wrote, every prefix of every
 * length is opened from memory (a buffer of exactly that size, so an
 * over-read is an ASan report). A v2 file has no reader-side recovery (§2.5,
 * §10): a prefix must be refused with ZT_E_TRUNCATED or ZT_E_MAGIC, unless it
 * ends in a footer, which makes it an earlier generation of the file (then it
 * must open). Prints one line per failure and a count; exit 1 on any failure.
 *
 * Usage: truncate_v2 CORPUS_DIR
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ztensor/ztensor.h>

static const unsigned char k_magic[8] = {0x89, 'Z', 'T', '2', 0x0D, 0x0A, 0x1A, 0x0A};

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(len > 0 ? (size_t)len : 1);
    if (p && len > 0 && fread(p, 1, (size_t)len, f) != (size_t)len) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return p;
}

/* Returns the number of failing prefixes of one file. */
static unsigned cut_file(const char *path)
{
    size_t n;
    unsigned char *all = slurp(path, &n);
    if (!all) {
        printf("FAIL: cannot read %s\n", path);
        return 1;
    }
    unsigned fails = 0;
    for (size_t len = 0; len < n; len++) {
        unsigned char *p = malloc(len ? len : 1);
        memcpy(p, all, len);
        zt_file *f = NULL;
        zt_error err;
        memset(&err, 0, sizeof(err));
        zt_status st = zt_open_memory(p, len, NULL, &f, &err);
        int ends_in_footer = len >= 48 && !memcmp(p + len - 8, k_magic, 8);
        if (ends_in_footer ? st != ZT_OK : st != ZT_E_TRUNCATED && st != ZT_E_MAGIC) {
            if (fails++ < 5)
                printf("FAIL: %s cut at %zu: %s\n", path, len,
                       st ? err.message : "opened although it does not end in a footer");
        }
        zt_close(f);
        free(p);
    }
    free(all);
    return fails;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: truncate_v2 CORPUS_DIR\n");
        return 2;
    }
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/accept", argv[1]);
    DIR *d = opendir(dir);
    if (!d) {
        printf("FAIL: no %s (run gen_corpus_v2 first)\n", dir);
        return 1;
    }
    unsigned files = 0, fails = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".zt"))
            continue;
        char path[8192];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        fails += cut_file(path);
        files++;
    }
    closedir(d);
    printf("truncate_v2: %u files cut at every length, %u failures\n", files, fails);
    return fails || !files;
}
