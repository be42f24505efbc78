/*
 * tmpfiles.h: what the store's unit tests share: a fresh directory under
 * ZT_TEST_TMP and small valid .zt files written with libztensor's writer.
 * Header-only (static inline functions), like tests/lib/zt_test.h.
 */
#ifndef ZTD_TEST_TMPFILES_H
#define ZTD_TEST_TMPFILES_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ztensor/ztensor.h>

/* A fresh directory (static storage, overwritten by the next call). */
static inline const char *tmp_dir(const char *tag)
{
    static char p[512];
    const char *t = getenv("ZT_TEST_TMP");
    snprintf(p, sizeof(p), "%s/%s.XXXXXX", t && t[0] ? t : "/tmp", tag);
    assert_non_null(mkdtemp(p));
    return p;
}

/* A valid .zt at path with one u8 object "w" of n bytes, each `fill`. */
static inline void write_zt(const char *path, size_t n, unsigned char fill)
{
    zt_writer_options o;
    zt_writer_options_init(&o);
    o.fsync = 0;
    zt_writer *w;
    zt_error err;
    assert_int_equal(zt_writer_open(path, &o, &w, &err), ZT_OK);
    zt_component_spec spec = {.dtype = ZT_DTYPE_U8, .digest = ZT_DIGEST_SHA256};
    unsigned char *buf = malloc(n ? n : 1);
    assert_non_null(buf);
    memset(buf, fill, n);
    size_t id;
    assert_int_equal(zt_writer_begin(w, &spec, &err), ZT_OK);
    assert_int_equal(zt_writer_write(w, buf, n, &err), ZT_OK);
    assert_int_equal(zt_writer_end(w, &id, &err), ZT_OK);
    free(buf);
    uint64_t shape[1] = {n};
    const char *roles[1] = {"data"};
    assert_int_equal(zt_writer_add_object(w, "w", "dense", 1, shape, NULL, 1, roles, &id, &err),
                     ZT_OK);
    assert_int_equal(zt_writer_finish(w, &err), ZT_OK);
    zt_writer_free(w);
}

static inline int rm_one(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb, (void)type, (void)ftw;
    return remove(p);
}

/* Remove dir and everything under it. */
static inline void rm_tree(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static inline char *join(const char *dir, const char *rel)
{
    static char p[4][1024];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof(p[i]), "%s/%s", dir, rel);
    return p[i];
}

#endif
