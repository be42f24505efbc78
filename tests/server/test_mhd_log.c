/*
 * test_mhd_log.c: unit tests for server/http/mhd_log.c: the level given to each
 * kind of libmicrohttpd message, and the logger callback writing one
 * structured error-log line, prefixed "libmicrohttpd:", without MHD's
 * trailing newline, cut (and marked) when MHD's message is very long.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "http/mhd_log.h"

static void levels(void **state)
{
    (void)state;
    /* a client's doing */
    assert_int_equal(ztd_mhd_log_level("Error processing request (HTTP response code is 400 "
                                       "('x')). Closing connection.\n"),
                     ZTD_LOG_INFO);
    assert_int_equal(ztd_mhd_log_level("Failed to parse `Content-Length' header. Closing "
                                       "connection.\n"),
                     ZTD_LOG_INFO);
    assert_int_equal(ztd_mhd_log_level("Connection was closed by remote side with incomplete "
                                       "request.\n"),
                     ZTD_LOG_INFO);
    assert_int_equal(ztd_mhd_log_level("Failed to send the response body for the connection.\n"),
                     ZTD_LOG_INFO);
    /* the server's resources */
    assert_int_equal(ztd_mhd_log_level("Server reached connection limit. Closing inbound "
                                       "connection.\n"),
                     ZTD_LOG_WARN);
    assert_int_equal(ztd_mhd_log_level("Error accepting connection: Too many open files\n"),
                     ZTD_LOG_WARN);
    /* ztensord's own bug */
    assert_int_equal(ztd_mhd_log_level("Application used invalid status code for 'upgrade'.\n"),
                     ZTD_LOG_ERROR);
    /* anything unknown: warn */
    assert_int_equal(ztd_mhd_log_level("Some message of a later version\n"), ZTD_LOG_WARN);
    assert_int_equal(ztd_mhd_log_level(""), ZTD_LOG_WARN);
}

static void call_logger(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ztd_mhd_log(NULL, fmt, ap);
    va_end(ap);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static void logger_writes_structured_lines(void **state)
{
    (void)state;
    char path[] = "/tmp/test_mhd_log.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char err[256];
    assert_int_equal(ztd_log_open(path, ZTD_LOG_INFO, err, sizeof(err)), 0);

    call_logger("Failed to send data in request for %s.\n", "/v1/files/\"x\"\n");
    char *text = read_all(path);
    assert_non_null(strstr(text, " level=info msg=\"libmicrohttpd: Failed to send data in "
                                 "request for /v1/files/\\\"x\\\"\\n.\"\n"));
    assert_int_equal(strchr(text, '\n') - text + 1, (long)strlen(text)); /* one line */

    char big[3000];
    memset(big, 'h', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    call_logger("Error accepting connection: %s\n", big);
    text = read_all(path);
    char *second = strchr(text, '\n') + 1;
    assert_non_null(
        strstr(second, " level=warn msg=\"libmicrohttpd: Error accepting connection: hhh"));
    assert_non_null(strstr(second, "hhh...\"\n"));
    assert_true(strlen(second) < ZTD_LOG_LINE_MAX);

    /* below the level: nothing */
    ztd_log_set_level(ZTD_LOG_WARN);
    size_t before = strlen(read_all(path));
    call_logger("Socket has been disconnected when reading request.\n");
    assert_int_equal(strlen(read_all(path)), before);

    ztd_log_close();
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(levels),
        cmocka_unit_test(logger_writes_structured_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
