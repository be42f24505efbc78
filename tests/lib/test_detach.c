/*
 * test_detach.c: zt_file_detach and zt_file_attach_fd (reader.c), which let a
 * server keep many files parsed with only some of them open. A detached file
 * keeps its model (accessors answer as before) and refuses every call that
 * reads data; attached again to the same file it reads and verifies the same
 * bytes; a wrong fd is refused and leaves it detached, the fd the caller's.
 */
#include "zt_test.h"

#include <fcntl.h>
#include <unistd.h>

static uint8_t data[256]; /* a count from 1; the first 16 bytes are read back */

static void write_file(const char *path, size_t len)
{
    zt_writer_options o;
    zt_writer_options_init(&o);
    o.fsync = 0;
    zt_writer *w;
    zt_error err;
    uint64_t shape[1] = {len};
    const char *role = "data";
    zt_component_spec spec = {ZT_DTYPE_U8, NULL, ZT_ENC_RAW, 0, ZT_DIGEST_SHA256};
    size_t id;
    assert_int_equal(zt_writer_open(path, &o, &w, &err), ZT_OK);
    assert_int_equal(zt_writer_begin(w, &spec, &err), ZT_OK);
    assert_int_equal(zt_writer_write(w, data, len, &err), ZT_OK);
    assert_int_equal(zt_writer_end(w, &id, &err), ZT_OK);
    assert_int_equal(zt_writer_add_object(w, "w", "dense", 1, shape, NULL, 1, &role, &id, &err),
                     ZT_OK);
    assert_int_equal(zt_writer_finish(w, &err), ZT_OK);
    zt_writer_free(w);
}

static void reads_back(const zt_file *f)
{
    const zt_object *o = zt_file_find_object(f, "w", 1);
    assert_non_null(o);
    const zt_component *c = zt_object_component_at(o, 0);
    uint8_t buf[16];
    size_t n = 0;
    zt_error err;
    int checked = 0;
    assert_int_equal(zt_component_read(f, c, buf, sizeof(buf), &n, &err), ZT_OK);
    assert_int_equal(n, 16);
    assert_memory_equal(buf, data, 16);
    assert_int_equal(zt_component_verify(f, o, c, &checked, &err), ZT_OK);
    assert_int_equal(checked, 1);
    assert_non_null(zt_component_stored(f, c));
}

static void test_detach_attach(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i + 1);
    char *dir = zt_test_mkdtemp("zt-detach");
    char path[4096], other[4096];
    snprintf(path, sizeof(path), "%s/a.zt", dir);
    snprintf(other, sizeof(other), "%s/b.zt", dir);
    write_file(path, 16);
    write_file(other, 200); /* another size, even with the data aligned */
    zt_file *f;
    zt_error err;
    assert_int_equal(zt_open(path, NULL, &f, &err), ZT_OK);
    uint64_t size = zt_file_size(f);
    reads_back(f);

    assert_int_equal(zt_file_detach(f, &err), ZT_OK);
    assert_int_equal(zt_file_detach(f, &err), ZT_OK); /* again: nothing to do */
    assert_int_equal(zt_file_fd(f), -1);
    assert_null(zt_file_bytes(f));
    assert_int_equal(zt_file_object_count(f), 1); /* the model stays */
    assert_int_equal(zt_file_size(f), size);
    const zt_object *o = zt_file_find_object(f, "w", 1);
    assert_non_null(o);
    const zt_component *c = zt_object_component_at(o, 0);
    uint8_t buf[16];
    size_t n;
    int checked;
    assert_int_equal(zt_component_read(f, c, buf, sizeof(buf), &n, &err), ZT_E_UNSUPPORTED);
    assert_int_equal(zt_component_verify(f, o, c, &checked, &err), ZT_E_UNSUPPORTED);
    assert_null(zt_component_stored(f, c));
    char *json = zt_file_manifest_json(f, ZT_JSON_COMPACT, &err);
    assert_non_null(json);
    zt_free(json);

    /* Another file (another size): refused, still detached, the fd the caller's. */
    int wrong = open(other, O_RDONLY | O_CLOEXEC);
    assert_true(wrong >= 0);
    assert_int_equal(zt_file_attach_fd(f, wrong, NULL, &err), ZT_E_IO);
    assert_int_equal(fcntl(wrong, F_GETFD), FD_CLOEXEC);
    close(wrong);
    assert_int_equal(zt_file_fd(f), -1);
    assert_int_equal(zt_file_size(f), size);

    /* The same file: reads and verifies as before; the library owns the fd. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(zt_file_attach_fd(f, fd, NULL, &err), ZT_OK);
    assert_int_equal(zt_file_fd(f), fd);
    reads_back(f);
    int again = open(path, O_RDONLY | O_CLOEXEC);
    assert_int_equal(zt_file_attach_fd(f, again, NULL, &err), ZT_E_ARG); /* attached already */
    close(again);

    /* Read into memory rather than mapped, as ZT_OPEN_NO_MMAP asks. */
    zt_open_options opt;
    zt_open_options_init(&opt);
    opt.flags = ZT_OPEN_NO_MMAP;
    assert_int_equal(zt_file_detach(f, &err), ZT_OK);
    assert_int_equal(zt_file_attach_fd(f, open(path, O_RDONLY | O_CLOEXEC), &opt, &err), ZT_OK);
    reads_back(f);
    zt_close(f);
    zt_test_rmtree(dir);
    free(dir);
}

static void test_memory_cannot_detach(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i + 1);
    zt_file *f = NULL;
    zt_error err;
    char *dir = zt_test_mkdtemp("zt-detach");
    char path[4096];
    snprintf(path, sizeof(path), "%s/a.zt", dir);
    write_file(path, 16);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    uint8_t bytes[4096];
    ssize_t n = read(fd, bytes, sizeof(bytes));
    close(fd);
    assert_true(n > 0);
    assert_int_equal(zt_open_memory(bytes, (size_t)n, NULL, &f, &err), ZT_OK);
    assert_int_equal(zt_file_detach(f, &err), ZT_E_UNSUPPORTED);
    reads_back(f); /* untouched */
    zt_close(f);
    assert_int_equal(zt_file_detach(NULL, &err), ZT_E_ARG);
    zt_test_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detach_attach),
        cmocka_unit_test(test_memory_cannot_detach),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
