/*
 * test_validate.c: every rule of lib/src/validate.c, on hand-built model
 * objects (no CBOR involved): dtypes and logical types, alignment, bounds
 * and overflow, the header region, zstd's uncompressed_length and its
 * limit, and the per-format rules (dense sizes, sparse_csr, sparse_coo,
 * quantized_group, unknown formats). Errors name object, component, offset.
 */
#include "zt_test.h"

#include "internal.h"

static zt__validate_opts opts(void)
{
    zt__validate_opts o = {.data_end = 1 << 20,
                           .data_start = 8,
                           .max_uncompressed = 1 << 30,
                           .require_alignment = true};
    return o;
}

static struct zt_component comp(const char *role, zt_dtype d, uint64_t off, uint64_t len)
{
    struct zt_component c;
    memset(&c, 0, sizeof c);
    c.role = role;
    c.dtype = d;
    c.offset = off;
    c.length = len;
    c.encoding = ZT_ENC_RAW;
    return c;
}

static struct zt_object object(const char *name, const char *format, size_t ndim, uint64_t *shape,
                               size_t ncomp, struct zt_component *comps)
{
    struct zt_object o;
    memset(&o, 0, sizeof o);
    o.name = name;
    o.name_len = strlen(name);
    o.format = format;
    o.source_name = "";
    o.has_shape = true;
    o.ndim = ndim;
    o.shape = shape;
    o.ncomp = ncomp;
    o.comps = comps;
    return o;
}

static zt_error g_err;

static zt_status check(const struct zt_object *o, const zt__validate_opts *vo)
{
    memset(&g_err, 0, sizeof g_err);
    return zt__validate_object(o, vo, &g_err);
}

#define EXPECT(o, vo, code)                                                                        \
    do {                                                                                           \
        zt_status s__ = check((o), (vo));                                                          \
        if (s__ != (code))                                                                         \
            fail_msg("line %d: got %s (%s), want %s", __LINE__, zt_status_name(s__),               \
                     g_err.message, zt_status_name(code));                                         \
    } while (0)

/* ---- component rules */

static void dtype_must_be_valid(void **state)
{
    (void)state;
    zt__validate_opts vo = opts();
    uint64_t shape[1] = {4};
    struct zt_component c = comp("data", ZT_DTYPE_INVALID, 64, 4);
    struct zt_object o = object("t", "dense", 1, shape, 1, &c);
    EXPECT(&o, &vo, ZT_E_DTYPE);
    c.dtype = ZT_DTYPE_COUNT;
    EXPECT(&o, &vo, ZT_E_DTYPE);
    c.dtype = ZT_DTYPE_U8;
    EXPECT(&o, &vo, ZT_OK);
}

static void logical_type_storage(void **state)
{
    (void)state;
    zt__validate_opts vo = opts();
    uint64_t shape[1] = {4};
    static const struct {
        const char *type;
        zt_dtype storage;
        unsigned ratio;
    } known[] = {
        {"f8_e4m3fn", ZT_DTYPE_U8, 1},   {"f8_e5m2", ZT_DTYPE_U8, 1},
        {"f8_e4m3fnuz", ZT_DTYPE_U8, 1}, {"f8_e5m2fnuz", ZT_DTYPE_U8, 1},
        {"complex64", ZT_DTYPE_F32, 2},  {"complex128", ZT_DTYPE_F64, 2},
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        zt_dtype st;
        unsigned r;
        assert_true(zt_logical_type_info(known[i].type, &st, &r));
        assert_int_equal(st, known[i].storage);
        assert_int_equal(r, known[i].ratio);
        /* Right storage, size = shape x ratio x width. */
        uint64_t bytes = 4 * known[i].ratio * zt_dtype_width(known[i].storage);
        struct zt_component c = comp("data", known[i].storage, 64, bytes);
        c.type = known[i].type;
        struct zt_object o = object("t", "dense", 1, shape, 1, &c);
        EXPECT(&o, &vo, ZT_OK);
        /* Ratio ignored would be the wrong size. */
        if (known[i].ratio > 1) {
            c.length = 4 * zt_dtype_width(known[i].storage);
            EXPECT(&o, &vo, ZT_E_SIZE);
        }
        /* Every other storage dtype is refused for a known logical type. */
        for (int d = 1; d < ZT_DTYPE_COUNT; d++) {
            if ((zt_dtype)d == known[i].storage)
                continue;
            c = comp("data", (zt_dtype)d, 64, 4 * known[i].ratio * zt_dtype_width((zt_dtype)d));
            c.type = known[i].type;
            EXPECT(&o, &vo, ZT_E_TYPE);
            assert_string_equal(g_err.component, "data");
            assert_non_null(strstr(g_err.message, known[i].type));
        }
    }
    assert_false(zt_logical_type_info("int4", NULL, NULL));
    assert_false(zt_logical_type_info(NULL, NULL, NULL));
    assert_false(zt_logical_type_info("F8_E4M3FN", NULL, NULL));
    /* Unknown logical types are allowed (readers may fall back to dtype)
     * and sized by the dtype alone. */
    struct zt_component c = comp("data", ZT_DTYPE_U8, 64, 4);
    c.type = "int4_packed";
    struct zt_object o = object("t", "dense", 1, shape, 1, &c);
    EXPECT(&o, &vo, ZT_OK);
    c.length = 2;
    EXPECT(&o, &vo, ZT_E_SIZE);
}

static void alignment(void **state)
{
    (void)state;
    zt__validate_opts vo = opts();
    uint64_t shape[1] = {4};
    struct zt_component c = comp("data", ZT_DTYPE_U8, 96, 4);
    struct zt_object o = object("t", "dense", 1, shape, 1, &c);
    EXPECT(&o, &vo, ZT_E_ALIGN);
    assert_true(g_err.has_offset);
    assert_int_equal(g_err.offset, 96);
    assert_string_equal(g_err.object, "t");
    assert_string_equal(g_err.component, "data");
    assert_non_null(strstr(g_err.message, "96"));
    for (uint64_t off = 65; off < 128; off++) {
        c.offset = off;
        EXPECT(&o, &vo, ZT_E_ALIGN);
    }
    c.offset = 128;
    EXPECT(&o, &vo, ZT_OK);
    /* When alignment is not required (foreign formats), 96 is fine. */
    vo.require_alignment = false;
    c.offset = 96;
    EXPECT(&o, &vo, ZT_OK);
}

static void bounds(void **state)
{
    (void)state;
    zt__validate_opts vo = opts();
    vo.data_end = 1024;
    uint64_t shape[1] = {64};
    struct zt_component c = comp("data", ZT_DTYPE_U8, 960, 64);
    struct zt_object o = object("t", "dense", 1, shape, 1, &c);
    EXPECT(&o, &vo, ZT_OK); /* ends exactly at data_end */
    vo.data_end = 1023;
    EXPECT(&o, &vo, ZT_E_BOUNDS);
    assert_int_equal(g_err.offset, 960);
    assert_non_null(strstr(g_err.message, "1023"));
    /* offset + length overflowing 64 bits is caught, not wrapped. */
    vo.data_end = UINT64_MAX;
    vo.require_alignment = false;
    shape[0] = 0;
    c = comp("data", ZT_DTYPE_U8, UINT64_MAX - 10, 20);
    struct zt_object u = object("u", "opaque", 1, shape, 1, &c);
    EXPECT(&u, &vo, ZT_E_BOUNDS);
    assert_non_null(strstr(g_err.message, "overflow"));
    c.offset = 64;
    c.length = UINT64_MAX;
    EXPECT(&u, &vo, ZT_E_BOUNDS);
    /* Starting past the end with length 0 still ends past the end. */
    vo = opts();
    vo.data_end = 1024;
    c = comp("data", ZT_DTYPE_U8, 2048, 0);
    shape[0] = 0;
    EXPECT(&o, &vo, ZT_E_BOUNDS);
}

static void header_is_not_data(void **state)
{
    (void)state;
    zt__validate_opts vo = opts();
    vo.require_alignment = false;
    uint64_t shape[1] = {4};
    struct zt_component c = comp("data", ZT_DTYPE_U8, 0, 4);
    struct zt_object o = object("t", "dense", 1, shape, 1, &c);
    EXPECT(&o, &vo, ZT_E_BOUNDS);
    c.offset = 7;
    EXPECT(&o, &vo, ZT_E_BOUNDS);
    c.offset = 8;
    EXPECT(&o, &vo, ZT_OK);
    /* An empty component at offset 0 covers no header byte. */
    vo.require_alignment = true;
    shape[0] = 0;
    c = comp("data", ZT_DTYPE_U8, 0, 0);
    EXPECT(&o, &vo, ZT_OK);
}

static void zstd_rules(void **state)
{
    (void)state;
    zt__validate_opts vo = opts();
    vo.max_uncompressed = 4096;
    uint64_t shape[1] = {1024};
    struct zt_component c = comp("data", ZT_DTYPE_F32, 64, 100);
    c.encoding = ZT_ENC_ZSTD;
    struct zt_object o = object("t", "dense", 1, shape, 1, &c);
    EXPECT(&o, &vo, ZT_E_ENCODING); /* no uncompressed_length */
    assert_non_null(strstr(g_err.message, "uncompressed_length"));
    c.has_uncompressed = true;
    c.uncompressed_length = 4096;
    EXPECT(&o, &vo, ZT_OK); /* at the limit */
    vo.max_uncompressed = 4095;
    EXPECT(&o, &vo, ZT_E_LIMIT);
    vo.max_uncompressed = 1 << 30;
    /* For zstd, the size rule uses uncompressed_length, not length. */
    c.uncompressed_length = 4092;
    EXPECT(&o, &vo, ZT_E_SIZE);
    assert_non_null(strstr(g_err.message, "uncompressed_length"));
    c.uncompressed_length = 4096;
    c.length = 4096 * 3; /* compressed may exceed uncompressed */
    EXPECT(&o, &vo, ZT_OK);
    /* For raw, a stray uncompressed_length does not take part. */
    c = comp("data", ZT_DTYPE_F32, 64, 4096);
    c.has_uncompressed = true;
    c.uncompressed_length = 1;
    EXPECT(&o, &vo, ZT_OK);
}

/* ---- dense */

static void dense_sizes(void **state)
{
    (void)state;
    zt__validate_opts vo = opts();
    for (int d = 1; d < ZT_DTYPE_COUNT; d++) {
        uint64_t shape[3] = {2, 3, 5};
        unsigned w = zt_dtype_width((zt_dtype)d);
        struct zt_component c = comp("data", (zt_dtype)d, 64, 30 * w);
        struct zt_object o = object("t", "dense", 3, shape, 1, &c);
        EXPECT(&o, &vo, ZT_OK);
        c.length = 30 * w - 1;
        EXPECT(&o, &vo, ZT_E_SIZE);
        assert_string_equal(g_err.object, "t");
        assert_string_equal(g_err.component, "data");
        assert_true(g_err.has_offset);
        assert_int_equal(g_err.offset, 64);
        c.length = 30 * w + w;
        EXPECT(&o, &vo, ZT_E_SIZE);
    }
    /* A scalar holds one element; a zero dimension holds none. */
    struct zt_component c = comp("data", ZT_DTYPE_F64, 64, 8);
    struct zt_object o = object("s", "dense", 0, NULL, 1, &c);
    EXPECT(&o, &vo, ZT_OK);
    c.length = 0;
    EXPECT(&o, &vo, ZT_E_SIZE);
    uint64_t zshape[2] = {0, 1000};
    o = object("z", "dense", 2, zshape, 1, &c);
    EXPECT(&o, &vo, ZT_OK);
}

static void dense_needs_shape_and_data(void **state)
{
    (void)state;
    zt__validate_opts vo = opts();
    uint64_t shape[1] = {4};
    struct zt_component c = comp("data", ZT_DTYPE_U8, 64, 4);
    struct zt_object o = object("t", "dense", 1, shape, 1, &c);
    o.has_shape = false;
    o.ndim = 0;
    EXPECT(&o, &vo, ZT_E_SCHEMA);
    o = object("t", "dense", 1, shape, 1, &c);
    c.role = "values";
    EXPECT(&o, &vo, ZT_E_COMPONENTS);
    assert_non_null(strstr(g_err.message, "data"));
    o = object("t", "dense", 1, shape, 0, NULL);
    EXPECT(&o, &vo, ZT_E_COMPONENTS);
    /* Extra components beside data are allowed, but are still checked. */
    struct zt_component two[2] = {comp("data", ZT_DTYPE_U8, 64, 4),
                                  comp("extra", ZT_DTYPE_U8, 100, 4)};
    o = object("t", "dense", 1, shape, 2, two);
    EXPECT(&o, &vo, ZT_E_ALIGN);
    assert_string_equal(g_err.component, "extra");
    two[1].offset = 128;
    EXPECT(&o, &vo, ZT_OK);
}

static void dense_overflow(void **state)
{
    (void)state;
    zt__validate_opts vo = opts();
    /* The product of the shape overflows. */
    uint64_t shape[2] = {1ull << 32, 1ull << 32};
    struct zt_component c = comp("data", ZT_DTYPE_U8, 64, 0);
    struct zt_object o = object("t", "dense", 2, shape, 1, &c);
    EXPECT(&o, &vo, ZT_E_SIZE);
    assert_non_null(strstr(g_err.message, "overflow"));
    /* The product fits but times the element width does not. */
    uint64_t shape2[1] = {1ull << 62};
    c.dtype = ZT_DTYPE_F32;
    o = object("t", "dense", 1, shape2, 1, &c);
    EXPECT(&o, &vo, ZT_E_SIZE);
    assert_non_null(strstr(g_err.message, "overflow"));
    /* A zero dimension makes the product 0 whatever the others are. */
    uint64_t shape3[3] = {UINT64_MAX, 0, UINT64_MAX};
    o = object("t", "dense", 3, shape3, 1, &c);
    c.dtype = ZT_DTYPE_U8;
    EXPECT(&o, &vo, ZT_OK);
}

/* ---- sparse_csr: 3x4 matrix, 5 non-zeros */

static void csr(struct zt_component *c, zt_dtype vd)
{
    unsigned w = zt_dtype_width(vd);
    c[0] = comp("values", vd, 64, 5 * w);
    c[1] = comp("indices", ZT_DTYPE_U64, 128, 5 * 8);
    c[2] = comp("indptr", ZT_DTYPE_U64, 192, 4 * 8);
}

static void sparse_csr_rules(void **state)
{
    (void)state;
    zt__validate_opts vo = opts();
    uint64_t shape[2] = {3, 4};
    struct zt_component c[3];
    struct zt_object o = object("m", "sparse_csr", 2, shape, 3, c);
    for (int d = 1; d < ZT_DTYPE_COUNT; d++) {
        csr(c, (zt_dtype)d);
        EXPECT(&o, &vo, ZT_OK);
    }
    /* each required component */
    const char *roles[3] = {"values", "indices", "indptr"};
    for (int i = 0; i < 3; i++) {
        csr(c, ZT_DTYPE_F32);
        c[i].role = "other";
        EXPECT(&o, &vo, ZT_E_COMPONENTS);
        assert_string_equal(g_err.component, roles[i]);
    }
    /* values not a whole number of elements */
    csr(c, ZT_DTYPE_F32);
    c[0].length = 19;
    EXPECT(&o, &vo, ZT_E_SIZE);
    assert_string_equal(g_err.component, "values");
    /* index dtypes must be u64 */
    for (int i = 1; i < 3; i++) {
        for (int d = 1; d < ZT_DTYPE_COUNT; d++) {
            if (d == ZT_DTYPE_U64)
                continue;
            csr(c, ZT_DTYPE_F32);
            c[i].dtype = (zt_dtype)d;
            EXPECT(&o, &vo, ZT_E_DTYPE);
            assert_string_equal(g_err.component, roles[i]);
        }
    }
    /* one index per value */
    csr(c, ZT_DTYPE_F32);
    c[1].length = 4 * 8;
    EXPECT(&o, &vo, ZT_E_SIZE);
    assert_string_equal(g_err.component, "indices");
    /* rows + 1 row pointers */
    csr(c, ZT_DTYPE_F32);
    c[2].length = 3 * 8;
    EXPECT(&o, &vo, ZT_E_SIZE);
    assert_string_equal(g_err.component, "indptr");
    c[2].length = 5 * 8;
    EXPECT(&o, &vo, ZT_E_SIZE);
    /* complex values count logical elements: 5 complex64 = 40 bytes */
    csr(c, ZT_DTYPE_F32);
    c[0].type = "complex64";
    c[0].length = 40;
    EXPECT(&o, &vo, ZT_OK);
    c[0].length = 20; /* only 2.5 complex values */
    EXPECT(&o, &vo, ZT_E_SIZE);
    /* zstd index components are sized by uncompressed_length */
    csr(c, ZT_DTYPE_F32);
    c[1].encoding = ZT_ENC_ZSTD;
    c[1].has_uncompressed = true;
    c[1].uncompressed_length = 40;
    c[1].length = 9;
    EXPECT(&o, &vo, ZT_OK);
    c[1].uncompressed_length = 48;
    EXPECT(&o, &vo, ZT_E_SIZE);
    /* rows + 1 must not overflow when the row count is UINT64_MAX */
    uint64_t big[2] = {UINT64_MAX, 4};
    struct zt_object ob = object("m", "sparse_csr", 2, big, 3, c);
    csr(c, ZT_DTYPE_F32);
    EXPECT(&ob, &vo, ZT_E_SIZE);
    assert_string_equal(g_err.component, "indptr");
}

/* ---- sparse_coo: 3x4 matrix, 5 non-zeros, coords are ndim * nnz */

static void sparse_coo_rules(void **state)
{
    (void)state;
    zt__validate_opts vo = opts();
    uint64_t shape[2] = {3, 4};
    struct zt_component c[2] = {comp("values", ZT_DTYPE_F16, 64, 10),
                                comp("coords", ZT_DTYPE_U64, 128, 2 * 5 * 8)};
    struct zt_object o = object("m", "sparse_coo", 2, shape, 2, c);
    EXPECT(&o, &vo, ZT_OK);
    c[1].length = 5 * 8;
    EXPECT(&o, &vo, ZT_E_SIZE);
    assert_string_equal(g_err.component, "coords");
    c[1].length = 2 * 5 * 8;
    c[1].dtype = ZT_DTYPE_I64;
    EXPECT(&o, &vo, ZT_E_DTYPE);
    c[1].dtype = ZT_DTYPE_U64;
    c[1].role = "indices";
    EXPECT(&o, &vo, ZT_E_COMPONENTS);
    assert_string_equal(g_err.component, "coords");
    c[1].role = "coords";
    c[0].role = "data";
    EXPECT(&o, &vo, ZT_E_COMPONENTS);
    assert_string_equal(g_err.component, "values");
    c[0].role = "values";
    /* 3-D: three rows of coordinates */
    uint64_t s3[3] = {3, 4, 5};
    o = object("m", "sparse_coo", 3, s3, 2, c);
    EXPECT(&o, &vo, ZT_E_SIZE);
    c[1].length = 3 * 5 * 8;
    EXPECT(&o, &vo, ZT_OK);
    c[0].length = 9; /* half an f16 */
    EXPECT(&o, &vo, ZT_E_SIZE);
    assert_string_equal(g_err.component, "values");
}

static void quantized_group_rules(void **state)
{
    (void)state;
    zt__validate_opts vo = opts();
    uint64_t shape[2] = {64, 64};
    struct zt_component c[3] = {comp("packed_weight", ZT_DTYPE_I32, 64, 2048),
                                comp("scales", ZT_DTYPE_F16, 2112, 64),
                                comp("zeros", ZT_DTYPE_F16, 2176, 64)};
    struct zt_object o = object("q", "quantized_group", 2, shape, 3, c);
    EXPECT(&o, &vo, ZT_OK);
    const char *roles[3] = {"packed_weight", "scales", "zeros"};
    for (int i = 0; i < 3; i++) {
        c[i].role = "bias";
        EXPECT(&o, &vo, ZT_E_COMPONENTS);
        assert_string_equal(g_err.component, roles[i]);
        assert_string_equal(g_err.object, "q");
        c[i].role = roles[i];
    }
    /* component rules still apply */
    c[2].offset = 2177;
    EXPECT(&o, &vo, ZT_E_ALIGN);
}

static void unknown_format_structure_only(void **state)
{
    (void)state;
    zt__validate_opts vo = opts();
    uint64_t shape[1] = {12345};
    struct zt_component c = comp("anything", ZT_DTYPE_U8, 64, 3);
    struct zt_object o = object("x", "ragged_v2", 1, shape, 1, &c);
    EXPECT(&o, &vo, ZT_OK);
    o.has_shape = false;
    EXPECT(&o, &vo, ZT_OK);
    o = object("x", "ragged_v2", 0, NULL, 0, NULL);
    EXPECT(&o, &vo, ZT_OK);
    /* The format name is case-sensitive: "Dense" is an unknown format. */
    o = object("x", "Dense", 1, shape, 1, &c);
    EXPECT(&o, &vo, ZT_OK);
    o = object("x", "dense", 1, shape, 1, &c);
    EXPECT(&o, &vo, ZT_E_COMPONENTS);
    /* Component rules apply to unknown formats. */
    c.offset = 65;
    o = object("x", "ragged_v2", 1, shape, 1, &c);
    EXPECT(&o, &vo, ZT_E_ALIGN);
    c.offset = 64;
    c.dtype = ZT_DTYPE_INVALID;
    EXPECT(&o, &vo, ZT_E_DTYPE);
}

static void model_reports_first_failure(void **state)
{
    (void)state;
    zt__model m;
    memset(&m, 0, sizeof m);
    uint64_t shape[1] = {4};
    struct zt_component c[3] = {comp("data", ZT_DTYPE_U8, 64, 4), comp("data", ZT_DTYPE_U8, 128, 5),
                                comp("data", ZT_DTYPE_U8, 192, 3)};
    struct zt_object objs[3] = {object("a", "dense", 1, shape, 1, &c[0]),
                                object("b", "dense", 1, shape, 1, &c[1]),
                                object("c", "dense", 1, shape, 1, &c[2])};
    m.nobj = 3;
    m.objs = objs;
    zt__validate_opts vo = opts();
    zt_error err;
    ASSERT_ST(zt__validate_model(&m, &vo, &err), ZT_E_SIZE);
    assert_string_equal(err.object, "b");
    c[1].length = 4;
    ASSERT_ST(zt__validate_model(&m, &vo, &err), ZT_E_SIZE);
    assert_string_equal(err.object, "c");
    c[2].length = 4;
    ASSERT_OK(zt__validate_model(&m, &vo, &err), &err);
    m.nobj = 0;
    ASSERT_OK(zt__validate_model(&m, &vo, &err), &err);
    /* zt__validate_component alone, and a NULL err */
    c[0].offset = 1;
    ASSERT_ST(zt__validate_component(&objs[0], &c[0], &vo, NULL), ZT_E_ALIGN);
}

static void rules_apply_when_opening(void **state)
{
    (void)state;
    /* The reader validates before handing out the file: data must end
     * before the manifest starts, not merely before the end of the file. */
    tb m = {0};
    tb_map(&m, 2);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "objects");
    tb_map(&m, 1);
    tb_text(&m, "t");
    uint64_t shape[1] = {8};
    tb_dense(&m, 1, shape, &(tcomp){"u8", 64, 8, NULL, UINT64_MAX, NULL, NULL});
    uint8_t data[72] = {0};
    size_t n;
    uint8_t *file = zt_test_assemble(data, 72, &m, 1, &n);
    zt_file *f;
    zt_error err;
    ASSERT_OK(zt_open_memory(file, n, NULL, &f, &err), &err);
    zt_close(f);
    free(file);
    file = zt_test_assemble(data, 71, &m, 1, &n); /* the component overlaps the manifest */
    ASSERT_ST(zt_open_memory(file, n, NULL, &f, &err), ZT_E_BOUNDS);
    assert_string_equal(err.object, "t");
    assert_string_equal(err.component, "data");
    free(file);
    tb_free(&m);
    /* The uncompressed limit comes from the open options. */
    tb_map(&m, 2);
    tb_text(&m, "version");
    tb_text(&m, "1.2.0");
    tb_text(&m, "objects");
    tb_map(&m, 1);
    tb_text(&m, "z");
    uint64_t zs[1] = {1000};
    tb_dense(&m, 1, zs, &(tcomp){"u64", 64, 8, "zstd", 8000, NULL, NULL});
    file = zt_test_assemble(data, 72, &m, 1, &n);
    zt_open_options o = {.max_uncompressed = 8000};
    ASSERT_OK(zt_open_memory(file, n, &o, &f, &err), &err);
    zt_close(f);
    o.max_uncompressed = 7999;
    ASSERT_ST(zt_open_memory(file, n, &o, &f, &err), ZT_E_LIMIT);
    free(file);
    tb_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dtype_must_be_valid),
        cmocka_unit_test(logical_type_storage),
        cmocka_unit_test(alignment),
        cmocka_unit_test(bounds),
        cmocka_unit_test(header_is_not_data),
        cmocka_unit_test(zstd_rules),
        cmocka_unit_test(dense_sizes),
        cmocka_unit_test(dense_needs_shape_and_data),
        cmocka_unit_test(dense_overflow),
        cmocka_unit_test(sparse_csr_rules),
        cmocka_unit_test(sparse_coo_rules),
        cmocka_unit_test(quantized_group_rules),
        cmocka_unit_test(unknown_format_structure_only),
        cmocka_unit_test(model_reports_first_failure),
        cmocka_unit_test(rules_apply_when_opening),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
