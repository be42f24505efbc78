/*
 * gen_foreign DIR: writes the fixtures of test_convert.sh with fixtures.h,
 * independently of libztensor: plain and sharded safetensors, Ollama int4,
 * nvfp4 and expert-group blobs, and an ALT model.
 */
#include "fixtures.h"

static const char *g_dir;

static void save(const char *name, fx_buf *b)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    if (fx_save(path, b->p, b->len) != 0) {
        perror(path);
        exit(3);
    }
    fx_free(b);
}

static void plain(void)
{
    static const struct {
        const char *name, *dtype, *shape;
        size_t n;
    } t[] = {
        {"model.embed.weight", "F32", "[16,8]", 512},
        {"f64", "F64", "[3]", 24},
        {"f16", "F16", "[5,2]", 20},
        {"bf16", "BF16", "[7]", 14},
        {"i64", "I64", "[2]", 16},
        {"i32", "I32", "[3]", 12},
        {"i16", "I16", "[3]", 6},
        {"i8", "I8", "[5]", 5},
        {"u64", "U64", "[1]", 8},
        {"u32", "U32", "[2,2]", 16},
        {"u16", "U16", "[3]", 6},
        {"u8", "U8", "[9]", 9},
        {"bool", "BOOL", "[4]", 4},
        {"fp8.e4m3", "F8_E4M3", "[6]", 6},
        {"fp8.e5m2", "F8_E5M2", "[2,3]", 6},
        {"scalar", "F32", "[]", 4},
        {"ünïcode/ß", "F16", "[1]", 2},
        {"empty", "F32", "[0,4]", 0},
    };
    fx_st s;
    fx_buf b;
    fx_st_begin(&s, "\"format\":\"pt\"");
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        fx_st_fill(&s, t[i].name, t[i].dtype, t[i].shape, t[i].n, (unsigned)i);
    fx_st_finish(&s, &b);
    save("plain.safetensors", &b);
}

static void shards(void)
{
    fx_st s;
    fx_buf b;
    for (int k = 0; k < 3; k++) {
        char name[64], file[64];
        fx_st_begin(&s, "\"format\":\"pt\"");
        for (int i = 0; i < 4; i++) {
            snprintf(name, sizeof(name), "model.layers.%d.weight", k * 4 + i);
            fx_st_fill(&s, name, "BF16", "[32,16]", 1024, (unsigned)(100 + k * 4 + i));
        }
        fx_st_finish(&s, &b);
        snprintf(file, sizeof(file), "model-%05d-of-00003.safetensors", k + 1);
        save(file, &b);
    }
}

/* {name} U32 [rows, cols*bits/32], .scale [rows, cols/group], .bias likewise. */
static void triple(fx_st *s, const char *name, int rows, int cols, int bits, int group,
                   const char *sdtype, int bias, unsigned seed)
{
    char n[256], shape[64];
    int pc = cols * bits / 32, sc = cols / group, sw = strcmp(sdtype, "BF16") ? 1 : 2;
    snprintf(shape, sizeof(shape), "[%d,%d]", rows, pc);
    fx_st_fill(s, name, "U32", shape, (size_t)rows * (size_t)pc * 4, seed);
    snprintf(n, sizeof(n), "%s.scale", name);
    snprintf(shape, sizeof(shape), "[%d,%d]", rows, sc);
    fx_st_fill(s, n, sdtype, shape, (size_t)rows * (size_t)sc * (size_t)sw, seed + 1);
    if (bias) {
        snprintf(n, sizeof(n), "%s.bias", name);
        fx_st_fill(s, n, sdtype, shape, (size_t)rows * (size_t)sc * (size_t)sw, seed + 2);
    }
}

static void ollama(void)
{
    fx_st s;
    fx_buf b;
    fx_st_begin(&s, "\"group_size\":\"32\",\"quant_type\":\"int4\"");
    triple(&s, "model.layers.0.mlp.up_proj.weight", 64, 256, 4, 32, "BF16", 1, 1);
    fx_st_finish(&s, &b);
    save("ollama-int4.safetensors", &b);

    fx_st_begin(&s, "\"group_size\":\"16\",\"quant_type\":\"nvfp4\"");
    triple(&s, "model.layers.0.self_attn.q_proj.weight", 32, 128, 4, 16, "F8_E4M3", 0, 7);
    fx_st_finish(&s, &b);
    save("ollama-nvfp4.safetensors", &b);

    /* An expert group as the spec shows it: no __metadata__; mxfp8 by shape. */
    fx_st_begin(&s, NULL);
    for (int e = 0; e < 4; e++) {
        char n[128];
        snprintf(n, sizeof(n), "model.layers.1.mlp.experts.%d.down_proj.weight", e);
        triple(&s, n, 16, 128, 8, 32, "U8", 0, (unsigned)(20 + 4 * e));
        snprintf(n, sizeof(n), "model.layers.1.mlp.experts.%d.gate_proj.weight", e);
        triple(&s, n, 32, 64, 8, 32, "U8", 0, (unsigned)(40 + 4 * e));
    }
    fx_st_fill(&s, "model.layers.1.mlp.gate.weight", "BF16", "[4,16]", 128, 99);
    fx_st_finish(&s, &b);
    save("ollama-experts.safetensors", &b);
}

static void alt(void)
{
    static const char *const tok[] = {"<unk>", "<s>",           "</s>",         "",
                                      "hello", " w\xc3\xb6rld", "\xff\xfe raw", "\x00nul"};
    static const size_t len[] = {5, 3, 4, 0, 5, 7, 6, 4};
    fx_alt a = {0};
    fx_alt_begin(&a, "altc", "mistral");
    fx_alt_tokens(&a, tok, len, 8);
    const int32_t d1[2] = {8, 4}, d2[1] = {6}, d3[3] = {2, 3, 4};
    uint8_t buf[256];
    fx_alt_tensors_begin(&a, 3, 6);
    fx_fill(buf, 128, 1);
    fx_alt_tensor(&a, "model.embed_tokens.weight", 0, 2, d1, buf, 128);
    fx_fill(buf, 12, 2);
    fx_alt_tensor(&a, "model.norm.weight", 1, 1, d2, buf, 12);
    fx_fill(buf, 24, 3);
    fx_alt_tensor(&a, "lm_head.qweight", 2, 3, d3, buf, 24);
    fx_alt_finish(&a, 0x0FFFFFFF);
    save("model.alt", &a.b);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_foreign DIR\n");
        return 2;
    }
    g_dir = argv[1];
    plain();
    shards();
    ollama();
    alt();
    return 0;
}
