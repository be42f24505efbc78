/*
 * CompleteMultipartUpload's document (s3_mpu_xml.h), read with expat
 * (s3_expat.h).
 */
#include "s3/s3_mpu_xml.h"
#include "s3/s3_expat.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_MAX 64

enum { IN_NUMBER = 1, IN_ETAG = 2 };

static const ztd_s3_field fields[] = {
    {"PartNumber", 3, IN_NUMBER}, {"ETag", 3, IN_ETAG}, {NULL, 0, 0}};

typedef struct parse {
    ztd_s3_expat x; /* first: the handlers get it */
    ztd_s3_part_ref *parts;
    size_t n;
    bool has_num, has_etag;
    char text[TEXT_MAX + 1];
} parse;

static void part_open(ztd_s3_expat *x)
{
    parse *ps = (parse *)x;
    if (ps->n == ZTD_S3_MAX_PARTS)
        return ztd_s3_expat_stop(x, "more than 10000 parts");
    ps->has_num = ps->has_etag = false;
    memset(&ps->parts[ps->n], 0, sizeof(ps->parts[0]));
}

static void part_close(ztd_s3_expat *x)
{
    parse *ps = (parse *)x;
    if (!ps->has_num || !ps->has_etag)
        return ztd_s3_expat_stop(x, "a <Part> without a <PartNumber> or an <ETag>");
    ps->n++;
}

static void take_number(parse *ps)
{
    int v = 0;
    size_t tlen = ps->x.tlen;
    if (tlen == 0 || tlen > 5)
        return ztd_s3_expat_stop(&ps->x, "a PartNumber that is not 1 to 10000");
    for (size_t i = 0; i < tlen; i++) {
        if (ps->text[i] < '0' || ps->text[i] > '9')
            return ztd_s3_expat_stop(&ps->x, "a PartNumber that is not 1 to 10000");
        v = v * 10 + (ps->text[i] - '0');
    }
    if (v < 1 || v > ZTD_S3_MAX_PARTS)
        return ztd_s3_expat_stop(&ps->x, "a PartNumber that is not 1 to 10000");
    ps->parts[ps->n].number = v;
    ps->has_num = true;
}

static void take_etag(parse *ps)
{
    const char *t = ps->text;
    size_t k = ps->x.tlen;
    if (k >= 2 && t[0] == '"' && t[k - 1] == '"') {
        t++;
        k -= 2;
    }
    if (k == 0 || k >= sizeof(ps->parts[0].etag))
        return ztd_s3_expat_stop(&ps->x, "an ETag of the wrong length");
    memcpy(ps->parts[ps->n].etag, t, k);
    ps->parts[ps->n].etag[k] = 0;
    ps->has_etag = true;
}

static void field(ztd_s3_expat *x, int code)
{
    if (code == IN_NUMBER)
        take_number((parse *)x);
    else
        take_etag((parse *)x);
}

ztd_s3_part_ref *ztd_s3_complete_parse(const char *xml, size_t len, size_t *n, char *why,
                                       size_t cap)
{
    parse ps = {.x = {.root = "CompleteMultipartUpload",
                      .not_root = "the document is not a <CompleteMultipartUpload>",
                      .item = "Part",
                      .no_item = "no <Part>",
                      .fields = fields,
                      .item_open = part_open,
                      .item_close = part_close,
                      .field = field,
                      .text = ps.text,
                      .cap = TEXT_MAX,
                      .too_long = "a PartNumber or ETag that is too long"}};
    if (!(ps.parts = malloc(ZTD_S3_MAX_PARTS * sizeof(*ps.parts)))) {
        snprintf(why, cap, "out of memory");
        return NULL;
    }
    if (!ztd_s3_expat_parse(&ps.x, xml, len, why, cap)) {
        free(ps.parts);
        return NULL;
    }
    *n = ps.n;
    return ps.parts;
}
