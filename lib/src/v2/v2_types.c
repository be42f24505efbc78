/*
 * zTensor v2's type system (§4): the 12 storage dtypes (no bool: it is a
 * logical type over u8), the registered logical types of Appendix A with
 * their required dtype, and their size functions. A size function is kept as
 * bits per logical element, which states every registered one exactly:
 * size(n) = ceil(n x bits / 8) bytes (f4_e2m1: 4 bits, so ceil(n / 2);
 * complex64: 64 bits, so 8n).
 */
#include "internal.h"

#include <string.h>

static const zt__v2_type k_types[] = {
    {"bool", ZT_DTYPE_U8, 8},          {"f8_e4m3fn", ZT_DTYPE_U8, 8},
    {"f8_e5m2", ZT_DTYPE_U8, 8},       {"f8_e4m3fnuz", ZT_DTYPE_U8, 8},
    {"f8_e5m2fnuz", ZT_DTYPE_U8, 8},   {"f8_e8m0", ZT_DTYPE_U8, 8},
    {"f4_e2m1", ZT_DTYPE_U8, 4},       {"complex64", ZT_DTYPE_F32, 64},
    {"complex128", ZT_DTYPE_F64, 128},
};

const zt__v2_type *zt__v2_type_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof(k_types) / sizeof(k_types[0]); i++)
        if (!strcmp(k_types[i].name, name))
            return &k_types[i];
    return NULL;
}

unsigned zt__v2_elem_bits(const struct zt_component *c)
{
    if (!c->type)
        return 8 * zt_dtype_width(c->dtype);
    const zt__v2_type *t = zt__v2_type_find(c->type);
    return t ? t->bits : 0;
}

/* ceil(n x bits / 8) as (n / 8) x bits + ceil((n % 8) x bits / 8), so that
 * an n near 2^64 with 4-bit elements does not overflow on the way. */
bool zt__v2_size(unsigned bits, uint64_t n, uint64_t *out)
{
    uint64_t whole;
    if (!zt__mul_ok(n / 8, bits, &whole))
        return false;
    return zt__add_ok(whole, ((n % 8) * bits + 7) / 8, out);
}

uint64_t zt__v2_decoded_size(const struct zt_component *c)
{
    return c->encoding != ZT_ENC_RAW ? c->uncompressed_length : c->length;
}
