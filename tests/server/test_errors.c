/*
 * test_errors.c: the error table (server/core/errors.c) against the one in
 * docs/API.md, section "Errors": the same (status, code) pairs both ways, and
 * Retry-After documented exactly on the rows that send it. Also the two
 * mappings onto the table: libztensor statuses by operation, and errno.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "core/log.h"

#define MAX_ROWS 256

typedef struct doc_row {
    unsigned status;
    char code[64];
    int retry_after; /* the row mentions "Retry-After: N": N, else 0 */
} doc_row;

static doc_row g_doc[MAX_ROWS];
static size_t g_ndoc;

/* "| 503 | `code` | ... |" */
static void parse_row(const char *line)
{
    unsigned status;
    char code[64];
    if (sscanf(line, "| %u | `%63[a-z_0-9]` |", &status, code) != 2)
        return;
    assert_true(g_ndoc < MAX_ROWS);
    doc_row *d = &g_doc[g_ndoc++];
    d->status = status;
    snprintf(d->code, sizeof(d->code), "%s", code);
    const char *ra = strstr(line, "Retry-After: ");
    d->retry_after = ra ? atoi(ra + 13) : 0;
}

/* The rows of the table under "## Errors" (up to the next "## "). */
static int load_doc(void **state)
{
    (void)state;
    FILE *f = fopen(ZT_SOURCE_DIR "/docs/API.md", "r");
    assert_non_null(f);
    char line[8192];
    int in = 0;
    while (fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "## ", 3))
            in = !strcmp(line, "## Errors\n");
        else if (in && line[0] == '|')
            parse_row(line);
    }
    fclose(f);
    return g_ndoc > 20 ? 0 : -1;
}

static void every_error_is_documented(void **state)
{
    (void)state;
    for (int e = 1; e < ZTD_ERR_COUNT; e++) {
        bool found = false;
        for (size_t i = 0; i < g_ndoc; i++)
            found |=
                g_doc[i].status == ztd_err_status(e) && !strcmp(g_doc[i].code, ztd_err_code(e));
        if (!found)
            fail_msg("%u %s is not in docs/API.md's error table", ztd_err_status(e),
                     ztd_err_code(e));
    }
}

static void every_documented_error_exists(void **state)
{
    (void)state;
    for (size_t i = 0; i < g_ndoc; i++) {
        bool found = false;
        for (int e = 1; e < ZTD_ERR_COUNT; e++)
            found |=
                g_doc[i].status == ztd_err_status(e) && !strcmp(g_doc[i].code, ztd_err_code(e));
        if (!found)
            fail_msg("docs/API.md lists %u %s, which the server never sends", g_doc[i].status,
                     g_doc[i].code);
    }
}

/* A pair sends Retry-After (from the table) if and only if its rows say so. */
static void retry_after_is_documented(void **state)
{
    (void)state;
    for (size_t i = 0; i < g_ndoc; i++) {
        unsigned want = 0;
        for (int e = 1; e < ZTD_ERR_COUNT; e++)
            if (g_doc[i].status == ztd_err_status(e) && !strcmp(g_doc[i].code, ztd_err_code(e)))
                want |= ztd_err_retry_after(e);
        if ((unsigned)g_doc[i].retry_after != want)
            fail_msg("docs/API.md: %u %s says Retry-After %d, the server sends %u", g_doc[i].status,
                     g_doc[i].code, g_doc[i].retry_after, want);
    }
}

/* docs/openapi.yaml's Error schema: its code enum holds every code, and no other. */
static void openapi_lists_every_code(void **state)
{
    (void)state;
    FILE *f = fopen(ZT_SOURCE_DIR "/docs/openapi.yaml", "r");
    assert_non_null(f);
    char line[1024], codes[MAX_ROWS][64];
    size_t n = 0;
    bool in = false;
    while (fgets(line, sizeof(line), f) && n < MAX_ROWS) {
        char code[64];
        if (strstr(line, "- bad_request\n"))
            in = true;
        if (in && sscanf(line, " - %63[a-z_]", code) == 1)
            snprintf(codes[n++], 64, "%s", code);
        else if (in)
            break;
    }
    fclose(f);
    for (int e = 1; e < ZTD_ERR_COUNT; e++) {
        bool found = false;
        for (size_t i = 0; i < n; i++)
            found |= !strcmp(codes[i], ztd_err_code(e));
        if (!found)
            fail_msg("docs/openapi.yaml's Error code enum lacks %s", ztd_err_code(e));
    }
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        for (int e = 1; e < ZTD_ERR_COUNT; e++)
            found |= !strcmp(codes[i], ztd_err_code(e));
        if (!found)
            fail_msg("docs/openapi.yaml lists code %s, which the server never sends", codes[i]);
    }
}

static void rows_are_well_formed(void **state)
{
    (void)state;
    assert_int_equal(ztd_err_status(ZTD_ERR_NONE), 0);
    assert_string_equal(ztd_err_code(ZTD_ERR_COUNT), "");
    for (int e = 1; e < ZTD_ERR_COUNT; e++) {
        assert_in_range(ztd_err_status(e), 400, 599);
        assert_true(strlen(ztd_err_message(e)) > 0);
        for (const char *p = ztd_err_code(e); *p; p++)
            assert_true((*p >= 'a' && *p <= 'z') || *p == '_');
    }
}

static void full_disk_is_507(void **state)
{
    (void)state;
    assert_int_equal(ztd_err_of_errno(ENOSPC, ZTD_ERR_WRITE_FAILED), ZTD_ERR_INSUFFICIENT_STORAGE);
    assert_int_equal(ztd_err_of_errno(EDQUOT, ZTD_ERR_STAGING_FAILED),
                     ZTD_ERR_INSUFFICIENT_STORAGE);
    assert_int_equal(ztd_err_of_errno(EIO, ZTD_ERR_WRITE_FAILED), ZTD_ERR_WRITE_FAILED);
    assert_int_equal(ztd_err_status(ZTD_ERR_INSUFFICIENT_STORAGE), 507);
    for (int op = ZTD_OP_READ; op <= ZTD_OP_CHECK_UPLOAD; op++) {
        assert_int_equal(ztd_err_of_zt(ZT_E_NOSPACE, op), ZTD_ERR_INSUFFICIENT_STORAGE);
        assert_int_equal(ztd_err_of_zt(ZT_E_NOMEM, op), ZTD_ERR_INTERNAL);
    }
}

static void library_statuses_by_operation(void **state)
{
    (void)state;
    /* an upload that does not validate is the client's; one that cannot be read back, ours */
    assert_int_equal(ztd_err_of_zt(ZT_E_SCHEMA, ZTD_OP_CHECK_UPLOAD), ZTD_ERR_INVALID_FILE);
    assert_int_equal(ztd_err_of_zt(ZT_E_TRUNCATED, ZTD_OP_CHECK_UPLOAD), ZTD_ERR_INVALID_FILE);
    assert_int_equal(ztd_err_of_zt(ZT_E_DIGEST_MISMATCH, ZTD_OP_CHECK_UPLOAD),
                     ZTD_ERR_FILE_DIGEST_MISMATCH);
    assert_int_equal(ztd_err_of_zt(ZT_E_IO, ZTD_OP_CHECK_UPLOAD), ZTD_ERR_STAGING_LOST);
    /* a served file that ends early changed under us; one that does not decode is corrupt */
    assert_int_equal(ztd_err_of_zt(ZT_E_TRUNCATED, ZTD_OP_DECODE), ZTD_ERR_FILE_CHANGED);
    assert_int_equal(ztd_err_of_zt(ZT_E_IO, ZTD_OP_DECODE), ZTD_ERR_FILE_CHANGED);
    assert_int_equal(ztd_err_of_zt(ZT_E_ZSTD, ZTD_OP_DECODE), ZTD_ERR_COMPONENT_CORRUPT);
    assert_int_equal(ztd_err_of_zt(ZT_E_SIZE, ZTD_OP_DECODE), ZTD_ERR_COMPONENT_CORRUPT);
    assert_int_equal(ztd_err_of_zt(ZT_E_LIMIT, ZTD_OP_DECODE), ZTD_ERR_COMPONENT_WINDOW_TOO_LARGE);
    /* objects that do not fit are the client's; a writer that failed earlier, ours */
    assert_int_equal(ztd_err_of_zt(ZT_E_SCHEMA, ZTD_OP_OBJECTS), ZTD_ERR_INVALID_OBJECTS);
    assert_int_equal(ztd_err_of_zt(ZT_OK, ZTD_OP_OBJECTS), ZTD_ERR_INVALID_OBJECTS);
    assert_int_equal(ztd_err_of_zt(ZT_E_STATE, ZTD_OP_OBJECTS), ZTD_ERR_WRITE_FAILED);
    assert_int_equal(ztd_err_of_zt(ZT_E_IO, ZTD_OP_WRITE), ZTD_ERR_WRITE_FAILED);
    assert_int_equal(ztd_err_of_zt(ZT_E_JSON, ZTD_OP_READ), ZTD_ERR_INTERNAL);
}

/* Refusals by design are quiet (a readiness probe loop, load shedding); faults are
 * errors; a client's mistake is info. */
static void log_levels(void **state)
{
    (void)state;
    static const ztd_err quiet[] = {ZTD_ERR_NOT_READY,        ZTD_ERR_DRAINING,
                                    ZTD_ERR_OVERLOADED,       ZTD_ERR_TOO_MANY_DECODERS,
                                    ZTD_ERR_TOO_MANY_UPLOADS, ZTD_ERR_PUBLISH_BUSY};
    for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++)
        assert_int_equal(ztd_err_log_level(quiet[i]), ZTD_LOG_DEBUG);
    static const ztd_err faults[] = {ZTD_ERR_INTERNAL,         ZTD_ERR_COMPONENT_CORRUPT,
                                     ZTD_ERR_WRITE_FAILED,     ZTD_ERR_PUBLISH_FAILED,
                                     ZTD_ERR_UPSTREAM_FAILED,  ZTD_ERR_UPSTREAM_TIMEOUT,
                                     ZTD_ERR_FILE_UNAVAILABLE, ZTD_ERR_BLOB_DIGEST_MISMATCH};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        assert_int_equal(ztd_err_log_level(faults[i]), ZTD_LOG_ERROR);
    for (int e = 1; e < ZTD_ERR_COUNT; e++)
        if (ztd_err_status((ztd_err)e) < 500)
            assert_int_equal(ztd_err_log_level((ztd_err)e), ZTD_LOG_INFO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_error_is_documented),
        cmocka_unit_test(every_documented_error_exists),
        cmocka_unit_test(retry_after_is_documented),
        cmocka_unit_test(openapi_lists_every_code),
        cmocka_unit_test(rows_are_well_formed),
        cmocka_unit_test(full_disk_is_507),
        cmocka_unit_test(library_statuses_by_operation),
        cmocka_unit_test(log_levels),
    };
    return cmocka_run_group_tests(tests, load_doc, NULL);
}
