/*
 * fuzz_s3_mpu_xml.c: libFuzzer target for server/s3/s3_mpu_xml.c, the S3
 * front's CompleteMultipartUpload document (expat). Invariants: a parsed
 * list holds 1 to 10,000 parts, each numbered 1 to 10,000, with a
 * non-empty ETag shorter than 40 bytes; refusals say why.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "s3/s3_mpu_xml.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            __builtin_trap();                                                                      \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256] = "";
    size_t n = 0;
    ztd_s3_part_ref *p = ztd_s3_complete_parse((const char *)data, size, &n, why, sizeof(why));
    if (!p) {
        CHECK(why[0] != 0);
        return 0;
    }
    CHECK(n >= 1 && n <= ZTD_S3_MAX_PARTS);
    for (size_t i = 0; i < n; i++) {
        CHECK(p[i].number >= 1 && p[i].number <= ZTD_S3_MAX_PARTS);
        CHECK(strlen(p[i].etag) >= 1 && strlen(p[i].etag) < sizeof(p[i].etag));
    }
    free(p);
    return 0;
}
