/*
 * zt_file_identity_with(): the identity of a file whose bytes outside the
 * blobs come from the caller (ztensord's cache of an S3 store's .zt, opened
 * from its footer and manifest). Over every file of the v2 corpus: with a
 * reader of the file's own bytes it gives exactly zt_file_identity(), and the
 * reader is never asked for a byte of a blob of this file; a reader that
 * fails makes a defined identity ZT_E_IO, never a different identity.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "internal.h"

typedef struct reader {
    int fd;
    const zt_file *f;
    bool fail;
    size_t calls;
    char blob_read[200]; /* the first blob asked for, or "" */
} reader;

/* Does [off, off+n) meet a blob of r->f (a part stored in the file itself)? */
static bool meets_blob(const reader *r, uint64_t off, size_t n)
{
    for (size_t i = 0; i < zt_file_object_count(r->f); i++) {
        const zt_object *o = zt_file_object_at(r->f, i);
        for (size_t j = 0; j < zt_object_component_count(o); j++) {
            const zt_component *c = zt_object_component_at(o, j);
            uint64_t a = zt_component_offset(c), len = zt_component_length(c);
            if (!c->shard && len && off < a + len && a < off + n)
                return true;
        }
    }
    return false;
}

static int read_at(void *ctx, uint64_t off, size_t n, uint8_t *dst)
{
    reader *r = ctx;
    r->calls++;
    if (meets_blob(r, off, n) && !r->blob_read[0])
        snprintf(r->blob_read, sizeof(r->blob_read), "bytes %llu+%zu", (unsigned long long)off, n);
    if (r->fail)
        return -1;
    return pread(r->fd, dst, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

static void one(const char *path, size_t *defined)
{
    zt_file *f = NULL;
    zt_error err;
    if (zt_open(path, NULL, &f, &err) != ZT_OK)
        return;
    char want[80], got[80];
    zt_status ws = zt_file_identity(f, want, &err);
    reader r = {open(path, O_RDONLY | O_CLOEXEC), f, false, 0, ""};
    assert_true(r.fd >= 0);
    zt_status gs = zt_file_identity_with(f, read_at, &r, got, &err);
    if (gs != ws || (ws == ZT_OK && strcmp(want, got) != 0))
        fail_msg("%s: zt_file_identity %d %s, with a reader %d %s", path, ws, want, gs, got);
    if (r.blob_read[0])
        fail_msg("%s: the reader was asked for a blob's %s", path, r.blob_read);
    if (ws == ZT_OK) {
        (*defined)++;
        assert_true(r.calls > 0); /* the footer at least */
        r.fail = true;
        assert_int_equal(zt_file_identity_with(f, read_at, &r, got, &err), ZT_E_IO);
    }
    close(r.fd);
    zt_close(f);
}

static void corpus(void **state)
{
    (void)state;
    const char *dir = getenv("ZT_CORPUS_V2_DIR");
    if (!dir)
        skip();
    char sub[4096];
    snprintf(sub, sizeof(sub), "%s/accept", dir);
    DIR *d = opendir(sub);
    assert_non_null(d);
    size_t defined = 0;
    for (struct dirent *de; (de = readdir(d));) {
        size_t len = strlen(de->d_name);
        if (len < 4 || strcmp(de->d_name + len - 3, ".zt"))
            continue;
        char path[8192];
        snprintf(path, sizeof(path), "%s/%s", sub, de->d_name);
        one(path, &defined);
    }
    closedir(d);
    assert_true(defined > 20); /* most of the corpus has an identity */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(corpus)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
