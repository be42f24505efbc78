/*
 * The 13 storage dtypes (short 1.2 names and long 1.0 names), their widths,
 * and the known logical types with their storage dtype and ratio.
 */
#include "internal.h"

#include <string.h>

static const struct {
    const char *name, *long_name;
    unsigned width;
} k_dtypes[ZT_DTYPE_COUNT] = {
    [ZT_DTYPE_F64] = {"f64", "float64", 8}, [ZT_DTYPE_F32] = {"f32", "float32", 4},
    [ZT_DTYPE_F16] = {"f16", "float16", 2}, [ZT_DTYPE_BF16] = {"bf16", "bfloat16", 2},
    [ZT_DTYPE_I64] = {"i64", "int64", 8},   [ZT_DTYPE_I32] = {"i32", "int32", 4},
    [ZT_DTYPE_I16] = {"i16", "int16", 2},   [ZT_DTYPE_I8] = {"i8", "int8", 1},
    [ZT_DTYPE_U64] = {"u64", "uint64", 8},  [ZT_DTYPE_U32] = {"u32", "uint32", 4},
    [ZT_DTYPE_U16] = {"u16", "uint16", 2},  [ZT_DTYPE_U8] = {"u8", "uint8", 1},
    [ZT_DTYPE_BOOL] = {"bool", "bool", 1},
};

const char *zt_dtype_name(zt_dtype d)
{
    return (d > ZT_DTYPE_INVALID && d < ZT_DTYPE_COUNT) ? k_dtypes[d].name : NULL;
}

unsigned zt_dtype_width(zt_dtype d)
{
    return (d > ZT_DTYPE_INVALID && d < ZT_DTYPE_COUNT) ? k_dtypes[d].width : 0;
}

static zt_dtype parse(const char *s, size_t n, int use_long)
{
    for (int d = 1; d < ZT_DTYPE_COUNT; d++) {
        const char *name = use_long ? k_dtypes[d].long_name : k_dtypes[d].name;
        if (strlen(name) == n && memcmp(name, s, n) == 0)
            return (zt_dtype)d;
    }
    return ZT_DTYPE_INVALID;
}

zt_dtype zt_dtype_parse(const char *s, size_t n)
{
    return s ? parse(s, n, 0) : ZT_DTYPE_INVALID;
}

zt_dtype zt_dtype_parse_long(const char *s, size_t n)
{
    return s ? parse(s, n, 1) : ZT_DTYPE_INVALID;
}

int zt_logical_type_info(const char *type, zt_dtype *storage, unsigned *ratio)
{
    static const struct {
        const char *name;
        zt_dtype storage;
        unsigned ratio;
    } k_types[] = {
        {"f8_e4m3fn", ZT_DTYPE_U8, 1},   {"f8_e5m2", ZT_DTYPE_U8, 1},
        {"f8_e4m3fnuz", ZT_DTYPE_U8, 1}, {"f8_e5m2fnuz", ZT_DTYPE_U8, 1},
        {"complex64", ZT_DTYPE_F32, 2},  {"complex128", ZT_DTYPE_F64, 2},
    };
    if (!type)
        return 0;
    for (size_t i = 0; i < sizeof(k_types) / sizeof(k_types[0]); i++) {
        if (strcmp(type, k_types[i].name) == 0) {
            if (storage)
                *storage = k_types[i].storage;
            if (ratio)
                *ratio = k_types[i].ratio;
            return 1;
        }
    }
    return 0;
}

const char *zt_file_kind_name(zt_file_kind k)
{
    switch (k) {
    case ZT_KIND_ZT_1_2:
        return "zt-1.2";
    case ZT_KIND_ZT_1_0:
        return "zt-1.0";
    case ZT_KIND_SAFETENSORS:
        return "safetensors";
    case ZT_KIND_ALT:
        return "alt";
    case ZT_KIND_ZT_2:
        return "zt-2";
    }
    return "unknown";
}
