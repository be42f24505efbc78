/* The S3 front's XML writer (server/s3/s3_xml.h): structure, escaping, and
 * U+FFFD for bytes XML cannot carry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "s3/s3_xml.h"

#define DECL "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"

static char *doc_of(ztd_xml *x)
{
    size_t n = 0;
    char *d = ztd_xml_finish(x, &n);
    assert_non_null(d);
    assert_int_equal(n, strlen(d));
    return d;
}

static void test_structure(void **state)
{
    (void)state;
    ztd_xml x;
    ztd_xml_begin(&x);
    ztd_xml_open(&x, "R", "urn:x");
    ztd_xml_elem_str(&x, "A", "1");
    ztd_xml_elem_u64(&x, "N", 18446744073709551615ull);
    ztd_xml_elem(&x, "E", "", 0);
    ztd_xml_close(&x, "R");
    char *d = doc_of(&x);
    assert_string_equal(d,
                        DECL "<R xmlns=\"urn:x\"><A>1</A><N>18446744073709551615</N><E></E></R>");
    free(d);
}

static void test_escaping(void **state)
{
    (void)state;
    ztd_xml x;
    ztd_xml_begin(&x);
    ztd_xml_elem_str(&x, "K", "a&b<c>d\"e'f\rg\th\ni");
    char *d = doc_of(&x);
    assert_string_equal(d, DECL "<K>a&amp;b&lt;c&gt;d&quot;e&apos;f&#13;g\th\ni</K>");
    free(d);
}

static void test_bad_bytes(void **state)
{
    (void)state;
    ztd_xml x;
    ztd_xml_begin(&x);
    /* a control byte, a lone continuation byte, a truncated sequence, an
     * overlong form; valid multi-byte text stays as it is */
    static const char in[] = "\x01|\x80|\xE2\x82|\xC0\xAF|\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";
    ztd_xml_elem(&x, "K", in, sizeof(in) - 1);
    char *d = doc_of(&x);
    assert_string_equal(d,
                        DECL "<K>\xEF\xBF\xBD|\xEF\xBF\xBD|\xEF\xBF\xBD\xEF\xBF\xBD|"
                             "\xEF\xBF\xBD\xEF\xBF\xBD|\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80</K>");
    free(d);
}

static void test_nul_in_text(void **state)
{
    (void)state;
    ztd_xml x;
    ztd_xml_begin(&x);
    ztd_xml_elem(&x, "K", "a\0b", 3);
    char *d = doc_of(&x);
    assert_string_equal(d, DECL "<K>a\xEF\xBF\xBD"
                                "b</K>");
    free(d);
}

static void test_large(void **state)
{
    (void)state;
    ztd_xml x;
    ztd_xml_begin(&x);
    for (int i = 0; i < 100000; i++)
        ztd_xml_elem_str(&x, "Key", "<&>");
    size_t n = 0;
    char *d = ztd_xml_finish(&x, &n);
    assert_non_null(d);
    assert_int_equal(n, strlen(DECL) + 100000 * strlen("<Key>&lt;&amp;&gt;</Key>"));
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_structure), cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_bad_bytes), cmocka_unit_test(test_nul_in_text),
        cmocka_unit_test(test_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
