/* The S3 front's request documents: DeleteObjects' (server/s3/s3_delete_xml.h:
 * keys, Quiet, the limits, hostile documents, and the result) and
 * CompleteMultipartUpload's (server/s3/s3_mpu_xml.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "s3/s3_delete_xml.h"
#include "s3/s3_mpu_xml.h"

static ztd_s3_delete_list *parse_ok(const char *doc)
{
    char why[256] = "";
    ztd_s3_delete_list *l = ztd_s3_delete_parse(doc, strlen(doc), why, sizeof(why));
    if (!l)
        fail_msg("refused: %s", why);
    return l;
}

static void refused(const char *doc, const char *want)
{
    char why[256] = "";
    ztd_s3_delete_list *l = ztd_s3_delete_parse(doc, strlen(doc), why, sizeof(why));
    assert_null(l);
    if (!strstr(why, want))
        fail_msg("\"%s\" lacks \"%s\"", why, want);
}

static void test_keys(void **state)
{
    (void)state;
    ztd_s3_delete_list *l =
        parse_ok("<?xml version=\"1.0\"?><Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                 "<Object><Key>a/b.zt</Key><VersionId>x</VersionId></Object>"
                 "<Object><Key>c &amp; d.zt</Key></Object><Quiet>true</Quiet></Delete>");
    assert_int_equal(l->n, 2);
    assert_string_equal(l->items[0].key, "a/b.zt");
    assert_string_equal(l->items[1].key, "c & d.zt");
    assert_true(l->quiet);
    l->items[1].code = "AccessDenied";
    snprintf(l->items[1].message, sizeof(l->items[1].message), "no");
    ztd_xml x;
    ztd_xml_begin(&x);
    ztd_s3_delete_result(&x, l);
    size_t n;
    char *doc = ztd_xml_finish(&x, &n);
    assert_non_null(doc);
    /* quiet: only the error */
    assert_null(strstr(doc, "<Deleted>"));
    assert_non_null(strstr(doc, "<Error><Key>c &amp; d.zt</Key><Code>AccessDenied</Code>"));
    free(doc);
    ztd_s3_delete_list_free(l);
}

static void test_refused(void **state)
{
    (void)state;
    refused("<Delete><Object><Key>a</Key>", "line");
    refused("<Other><Object><Key>a</Key></Object></Other>", "not a <Delete>");
    refused("<Delete><Object></Object></Delete>", "without a <Key>");
    /* An element inside <Key> ends its text: the key is not taken. */
    refused("<Delete><Object><Key>a<b/>c</Key></Object></Delete>", "without a <Key>");
    /* <Key> counts only inside an <Object>, <Quiet> only under the root. */
    refused("<Delete><Key>a</Key></Delete>", "no <Object>");
    ztd_s3_delete_list *q =
        parse_ok("<Delete><Object><Key>a</Key><Quiet>true</Quiet></Object></Delete>");
    assert_false(q->quiet);
    ztd_s3_delete_list_free(q);
    refused("<Delete><Object><Key></Key></Object></Delete>", "empty key");
    refused("<Delete><Object><Key>a</Key><Key>b</Key></Object></Delete>", "two <Key>s");
    refused("<Delete></Delete>", "no <Object>");
    refused("<!DOCTYPE d [<!ENTITY e \"x\">]><Delete><Object><Key>&e;</Key></Object></Delete>",
            "DOCTYPE");
    refused("", "line");
    char big[1100];
    memset(big, 'k', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    char *doc = malloc(2000);
    snprintf(doc, 2000, "<Delete><Object><Key>%s</Key></Object></Delete>", big);
    refused(doc, "longer than 1024");
    free(doc);
    /* 1001 objects */
    size_t cap = 1001 * 40 + 64, o = 0;
    doc = malloc(cap);
    o += (size_t)snprintf(doc + o, cap - o, "<Delete>");
    for (int i = 0; i < 1001; i++)
        o += (size_t)snprintf(doc + o, cap - o, "<Object><Key>k%d</Key></Object>", i);
    snprintf(doc + o, cap - o, "</Delete>");
    refused(doc, "more than 1000");
    free(doc);
}

static void test_complete_doc(void **state)
{
    (void)state;
    char why[256] = "";
    size_t n = 0;
    const char *doc = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                      "<Part><PartNumber>1</PartNumber><ETag>\"0123456789abcdef0123456789abcdef\""
                      "</ETag></Part><Part><ETag>ffffffffffffffffffffffffffffffff</ETag>"
                      "<PartNumber>10000</PartNumber></Part></CompleteMultipartUpload>";
    ztd_s3_part_ref *p = ztd_s3_complete_parse(doc, strlen(doc), &n, why, sizeof(why));
    assert_non_null(p);
    assert_int_equal(n, 2);
    assert_int_equal(p[0].number, 1);
    assert_string_equal(p[0].etag, "0123456789abcdef0123456789abcdef");
    assert_int_equal(p[1].number, 10000);
    free(p);
    static const char *const bad[][2] = {
        {"<CompleteMultipartUpload><Part><PartNumber>0</PartNumber><ETag>a</ETag></Part>"
         "</CompleteMultipartUpload>",
         "1 to 10000"},
        {"<CompleteMultipartUpload><Part><PartNumber>10001</PartNumber><ETag>a</ETag></Part>"
         "</CompleteMultipartUpload>",
         "1 to 10000"},
        {"<CompleteMultipartUpload><Part><PartNumber>1x</PartNumber><ETag>a</ETag></Part>"
         "</CompleteMultipartUpload>",
         "1 to 10000"},
        {"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber></Part>"
         "</CompleteMultipartUpload>",
         "without"},
        {"<CompleteMultipartUpload><Part><PartNumber>1<x/></PartNumber><ETag>a</ETag></Part>"
         "</CompleteMultipartUpload>",
         "without"},
        {"<CompleteMultipartUpload><PartNumber>1</PartNumber><ETag>a</ETag>"
         "</CompleteMultipartUpload>",
         "no <Part>"},
        {"<CompleteMultipartUpload></CompleteMultipartUpload>", "no <Part>"},
        {"<Delete/>", "not a <CompleteMultipartUpload>"},
        {"<CompleteMultipartUpload><Part>", "line"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_null(ztd_s3_complete_parse(bad[i][0], strlen(bad[i][0]), &n, why, sizeof(why)));
        if (!strstr(why, bad[i][1]))
            fail_msg("\"%s\" lacks \"%s\"", why, bad[i][1]);
    }
    /* 10,001 parts */
    size_t cap = 10001 * 80 + 64, o = 0;
    char *big = malloc(cap);
    o += (size_t)snprintf(big + o, cap - o, "<CompleteMultipartUpload>");
    for (int i = 1; i <= 10001; i++)
        o += (size_t)snprintf(big + o, cap - o,
                              "<Part><PartNumber>%d</PartNumber><ETag>e</ETag></Part>",
                              i > 10000 ? 1 : i);
    snprintf(big + o, cap - o, "</CompleteMultipartUpload>");
    assert_null(ztd_s3_complete_parse(big, strlen(big), &n, why, sizeof(why)));
    assert_non_null(strstr(why, "more than 10000"));
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_complete_doc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
