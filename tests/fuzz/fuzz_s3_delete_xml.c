/*
 * fuzz_s3_delete_xml.c: libFuzzer target for server/s3/s3_delete_xml.c, the
 * S3 front's DeleteObjects document (expat). Invariants (a broken one
 * traps): a parsed list holds 1 to 1000 keys, each 1 to 1024 bytes with no
 * NUL; refusals say why; the result document is made for any list.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "s3/s3_delete_xml.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            __builtin_trap();                                                                      \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256] = "";
    ztd_s3_delete_list *l = ztd_s3_delete_parse((const char *)data, size, why, sizeof(why));
    if (!l) {
        CHECK(why[0] != 0);
        return 0;
    }
    CHECK(l->n >= 1 && l->n <= ZTD_S3_DELETE_MAX);
    for (size_t i = 0; i < l->n; i++) {
        CHECK(l->items[i].key_len >= 1 && l->items[i].key_len <= 1024);
        CHECK(strlen(l->items[i].key) == l->items[i].key_len);
    }
    ztd_xml x;
    ztd_xml_begin(&x);
    ztd_s3_delete_result(&x, l);
    size_t n = 0;
    free(ztd_xml_finish(&x, &n));
    ztd_s3_delete_list_free(l);
    return 0;
}
