/*
 * test_s3_listing.c: S3's XML answers (lib/remote/s3_listing.c) without a
 * socket: pages moto answered (captured from moto_server 5.2, the same
 * documents as tests/fuzz/corpus/s3_listing/moto-*) give their keys, sizes,
 * ETags, LastModified, IsTruncated and NextContinuationToken; hostile
 * documents (billion laughs, a DOCTYPE, entities, a cut document, a key over
 * 1024 bytes, more keys than max-keys, a truncated page without a token, a
 * bad size) are refused with the byte offset named; an error document gives
 * S3's code and message; keys are escaped as SigV4 wants them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote_internal.h"

static const char k_moto_page[] =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<ListBucketResult "
    "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><IsTruncated>true</"
    "IsTruncated><Contents><Key>"
    "m/config.json</Key><LastModified>2026-11-27T18:15:16.000Z</LastModified><ETag>"
    "\"bb6cb5c68df4652941caf652a366f2d8\"</ETag><ChecksumAlgorithm>SHA256</"
    "ChecksumAlgorithm><Size>7"
    "</Size><StorageClass>STANDARD</StorageClass></Contents><Contents><Key>m/tok.json</"
    "Key><LastModified>"
    "2026-11-27T18:15:16.000Z</LastModified><ETag>\"1cabf324ea0a5d083f50f4dbb392fe2e\"</ETag>"
    "<ChecksumAlgorithm>CRC32</ChecksumAlgorithm><Size>7</Size><StorageClass>STANDARD</"
    "StorageClass>"
    "</Contents><Name>bkt</Name><Prefix>m/</Prefix><MaxKeys>2</MaxKeys><KeyCount>2</KeyCount>"
    "<NextContinuationToken>7308e657912f07a1d16135d4fd933b79</NextContinuationToken></"
    "ListBucketResult>";

static const char k_moto_last[] =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<ListBucketResult "
    "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><IsTruncated>false</"
    "IsTruncated><Contents><Key>"
    "m/x &amp; &lt;y&gt;.json</Key><LastModified>2026-11-27T18:15:16.000Z</LastModified><ETag>"
    "&quot;25ed1bcb423b0b7200f485fc5ff71c8e&quot;</ETag><Size>2</Size></Contents><Name>bkt</Name>"
    "<Prefix>m/x</Prefix><MaxKeys>1000</MaxKeys><KeyCount>1</KeyCount></ListBucketResult>";

typedef struct got {
    ztr_s3_object o[4];
    unsigned n;
} got;

static int keep(void *ud, const ztr_s3_object *o)
{
    got *g = ud;
    if (g->n < 4)
        g->o[g->n] = *o;
    g->n++;
    return 0;
}

static ztr_s3_page *page_new(unsigned max)
{
    ztr_s3_page *p = calloc(1, sizeof(*p));
    assert_non_null(p);
    p->max_keys = max;
    return p;
}

static void moto_pages(void **state)
{
    (void)state;
    ztr_s3_page *p = page_new(1000);
    got g = {0};
    char why[300];
    assert_int_equal(
        ztr__s3_parse_listing(k_moto_page, strlen(k_moto_page), p, keep, &g, why, sizeof why), 0);
    assert_int_equal(g.n, 2);
    assert_int_equal(p->keys, 2);
    assert_string_equal(g.o[0].key, "m/config.json");
    assert_int_equal(g.o[0].size, 7);
    assert_string_equal(g.o[0].etag, "\"bb6cb5c68df4652941caf652a366f2d8\"");
    assert_string_equal(g.o[0].last_modified, "2026-11-27T18:15:16.000Z");
    assert_string_equal(g.o[1].key, "m/tok.json");
    assert_true(p->truncated);
    assert_string_equal(p->next_token, "7308e657912f07a1d16135d4fd933b79");
    g.n = 0;
    assert_int_equal(
        ztr__s3_parse_listing(k_moto_last, strlen(k_moto_last), p, keep, &g, why, sizeof why), 0);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.o[0].key, "m/x & <y>.json"); /* entities of XML itself only */
    assert_string_equal(g.o[0].etag, "\"25ed1bcb423b0b7200f485fc5ff71c8e\"");
    assert_false(p->truncated);
    assert_string_equal(p->next_token, "");
    free(p);
}

/* Refused, with why naming `want` and a byte offset. */
static void refused(const char *doc, size_t n, unsigned max, const char *want)
{
    ztr_s3_page *p = page_new(max);
    got g = {0};
    char why[300];
    int rc = ztr__s3_parse_listing(doc, n, p, keep, &g, why, sizeof why);
    if (rc != -1 || !strstr(why, want) || !strstr(why, "byte"))
        fail_msg("rc %d, why \"%s\", wanted \"%s\"", rc, why, want);
    free(p);
}

static void hostile(void **state)
{
    (void)state;
    const char *laughs =
        "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b "
        "\"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]>"
        "<ListBucketResult><Contents><Key>&c;</Key><Size>1</Size></Contents></ListBucketResult>";
    refused(laughs, strlen(laughs), 1000, "DOCTYPE");
    const char *sys = "<!DOCTYPE x SYSTEM \"file:///etc/passwd\"><ListBucketResult/>";
    refused(sys, strlen(sys), 1000, "DOCTYPE");
    const char *undeclared = "<ListBucketResult><Contents><Key>&x;</Key><Size>1</Size></Contents>"
                             "</ListBucketResult>";
    refused(undeclared, strlen(undeclared), 1000, "undefined entity");
    refused(k_moto_page, 300, 1000, "not XML"); /* cut: no end */
    refused(k_moto_page, strlen(k_moto_page), 1, "more than 1 keys");
    refused("<Foo/>", 6, 1000, "root element is <Foo>");
    const char *notoken = "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>";
    refused(notoken, strlen(notoken), 1000, "without a <NextContinuationToken>");
    const char *badsize = "<ListBucketResult><Contents><Key>a</Key><Size>-1</Size></Contents>"
                          "</ListBucketResult>";
    refused(badsize, strlen(badsize), 1000, "<Size> that is not a number");
    const char *nokey = "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>";
    refused(nokey, strlen(nokey), 1000, "without its <Key>");
    const char *nul = "<ListBucketResult><Contents><Key>a&#0;b</Key><Size>1</Size></Contents>"
                      "</ListBucketResult>";
    refused(nul, strlen(nul), 1000, "not XML");
    /* A key of 1024 bytes is S3's longest; 1025 is refused. */
    size_t cap = 2200;
    char *doc = malloc(cap);
    assert_non_null(doc);
    for (int len = 1024; len <= 1025; len++) {
        int n = snprintf(doc, cap,
                         "<ListBucketResult><Contents><Key>%0*d</Key><Size>1</Size>"
                         "</Contents></ListBucketResult>",
                         len, 0);
        if (len == 1024) {
            ztr_s3_page *p = page_new(1000);
            got g = {0};
            char why[300];
            assert_int_equal(ztr__s3_parse_listing(doc, (size_t)n, p, keep, &g, why, sizeof why),
                             0);
            assert_int_equal(strlen(g.o[0].key), 1024);
            free(p);
        } else {
            refused(doc, (size_t)n, 1000, "<Key> longer than its cap");
        }
    }
    free(doc);
}

static void errors(void **state)
{
    (void)state;
    const char *e = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Error><Code>NoSuchBucket</Code>"
                    "<Message>The specified bucket does not exist</Message><BucketName>nob"
                    "</BucketName></Error>";
    char code[64], msg[200];
    assert_int_equal(ztr__s3_parse_error(e, strlen(e), code, sizeof code, msg, sizeof msg), 0);
    assert_string_equal(code, "NoSuchBucket");
    assert_string_equal(msg, "The specified bucket does not exist");
    assert_int_equal(
        ztr__s3_parse_error(k_moto_page, strlen(k_moto_page), code, sizeof code, msg, sizeof msg),
        -1);
    const char *d = "<!DOCTYPE e [<!ENTITY x \"y\">]><Error><Code>&x;</Code></Error>";
    assert_int_equal(ztr__s3_parse_error(d, strlen(d), code, sizeof code, msg, sizeof msg), -1);
}

static void escapes(void **state)
{
    (void)state;
    char out[64];
    assert_true(ztr__s3_escape("m/x & <y>.json", true, out, sizeof out));
    assert_string_equal(out, "m/x%20%26%20%3Cy%3E.json");
    assert_true(ztr__s3_escape("a/b~c-d_e.f", false, out, sizeof out));
    assert_string_equal(out, "a%2Fb~c-d_e.f");
    assert_true(ztr__s3_escape("\xc3\xa9", true, out, sizeof out));
    assert_string_equal(out, "%C3%A9");
    assert_false(ztr__s3_escape("abcdef", true, out, 4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(moto_pages),
        cmocka_unit_test(hostile),
        cmocka_unit_test(errors),
        cmocka_unit_test(escapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
