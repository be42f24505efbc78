/* zt convert: .safetensors (plain, Ollama quantized, shards), .alt and .zt
 * (1.x and v2) into one .zt, 1.2 or v2, or a .zt back into .safetensors
 * (tool_export.c). What a target cannot express is refused by name. Streams:
 * memory depends on the number of objects, never on their size. */
#include "tool.h"

#include <jansson.h>
#include <ztensor/ztensor_experimental.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char k_help[] =
    "NAME\n"
    "    zt convert - convert safetensors and ALT files to zTensor, and back\n"
    "\n"
    "SYNOPSIS\n"
    "    zt convert IN... -o OUT.zt [--compress[=LEVEL]] [--digest sha256|crc32c|none]\n"
    "    zt convert IN... -o OUT.zt --format v2 [--compress[=LEVEL]] [--digest xxh3|sha256|none]\n"
    "               [--align BYTES]\n"
    "    zt convert IN.zt -o OUT.safetensors\n"
    "    zt convert DIR -o OUTDIR\n"
    "\n"
    "DESCRIPTION\n"
    "    The kind of each IN is detected from its bytes: .safetensors (including\n"
    "    Ollama's quantized blobs, whose {name}/{name}.scale/{name}.bias triples\n"
    "    become quantized_group objects), .alt, or .zt. Every tensor of every IN\n"
    "    becomes an object of OUT.zt, byte for byte, in the order of the data in\n"
    "    its file; several IN (the shards of one model) make one OUT.zt. File\n"
    "    attributes are merged (safetensors __metadata__, ALT parameters); when two\n"
    "    shards disagree on one, the first wins and a warning is printed. Two\n"
    "    tensors of the same name are an error.\n"
    "\n"
    "    When OUT ends in .safetensors, the single IN is written as safetensors:\n"
    "    dense objects, and quantized_group objects read from Ollama blobs (as\n"
    "    their original triples). Any other object (sparse, other quantizations,\n"
    "    logical types such as complex64) is refused with its name. zstd\n"
    "    components are decompressed. The header is padded with spaces to a\n"
    "    multiple of 8 bytes.\n"
    "\n"
    "    When IN is a directory (a model: config.json, tokenizer files and\n"
    "    tensor files), OUTDIR gets what an inference engine loads: each\n"
    "    STEM.zt or STEM.alt as STEM.safetensors (as above; byte-identical to\n"
    "    ztensord's view /v1/files/STEM.zt/safetensors; v2 shards inside their\n"
    "    root's), every other file copied as it is, and, when the tensor files\n"
    "    form one model (two or more, or a v2 root with shards),\n"
    "    model.safetensors.index.json as ztensord serves it (unless DIR has\n"
    "    one). A real STEM.safetensors beside STEM.zt wins the name (STEM.zt\n"
    "    is left out, with a warning). Dotfiles and subdirectories are left\n"
    "    out. A file that fails (an object safetensors cannot express) is\n"
    "    named and the others are still written; then no index is written\n"
    "    and the exit status is 1.\n"
    "\n"
    "    --format v2 writes zTensor v2 (the v2 spec, and docs/FORMAT-NOTES.md):\n"
    "    dense stays dense, sparse_csr and sparse_coo become zt.sparse_csr/1 and\n"
    "    zt.sparse_coo/1, bool becomes u8 with logical type bool; objects are\n"
    "    written in name order at 64 KiB with xxh3 digests of the decoded bytes,\n"
    "    identical parts stored once (canonical form unless --compress, --digest\n"
    "    or --align say otherwise). quantized_group is refused: zt.quant_group/1\n"
    "    needs its packing stated, which quantized_group does not. A v2 IN\n"
    "    (its shards are read from their files) written as 1.2 keeps dense and\n"
    "    the sparse layouts with u64 indices; anything else (f4_e2m1, u32\n"
    "    indices, zt.quant_group/1, zt.mx/1, gguf, unknown layouts or encodings)\n"
    "    is refused by name. Attributes of a v2 file, or written to one, are\n"
    "    copied value for value; a CBOR tag, which v2 forbids, is refused.\n"
    "\n"
    "    Data is copied in chunks of 4 MiB; memory does not depend on the size of\n"
    "    the model. OUT appears only when complete (temporary file, fsync, rename,\n"
    "    fsync of the directory). A progress bar is drawn on standard error when it\n"
    "    is a terminal. The mapping is described in docs/FOREIGN-FORMATS.md.\n"
    "\n"
    "OPTIONS\n"
    "    -o OUT              output file (required): .zt, or .safetensors; for a\n"
    "                        directory IN, the output directory\n"
    "    --compress[=LEVEL]  zstd-compress every component (level 1-19, default 3)\n"
    "    --digest KIND       sha256 (default), crc32c or none; v2: xxh3 (default),\n"
    "                        sha256 or none\n"
    "    --format F          1.2 (default) or v2 (for OUT.zt)\n"
    "    --align BYTES       v2 blob placement, a multiple of 4096 (default 65536)\n"
    "\n"
    "EXIT STATUS\n"
    "    0 converted; 1 an input is invalid or holds something OUT cannot express;\n"
    "    2 usage error; 3 system error.\n";

typedef struct conv {
    const char **in;
    int nin;
    const char *out;
    zt_component_spec cs;
    zt_file **files;
    tool_progress prog;
    int v2;         /* --format v2 */
    int digest_set; /* --digest given */
    uint64_t align; /* --align */
    int values;     /* copy attributes as values (v2 in or out) */
} conv;

static int has_suffix(const char *s, const char *sfx)
{
    size_t n = strlen(s), k = strlen(sfx);
    return n >= k && !strcmp(s + n - k, sfx);
}

/* 0: go on; -1: --help was printed; >0: exit code. */
static int parse_args(int argc, char **argv, conv *cv, int *opts)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (tool_is_help(a)) {
            fputs(k_help, stdout);
            return -1;
        } else if (!strcmp(a, "-o") && i + 1 < argc) {
            cv->out = argv[++i];
        } else if (!strncmp(a, "--compress", 10) && (a[10] == 0 || a[10] == '=')) {
            cv->cs.encoding = ZT_ENC_ZSTD;
            cv->cs.zstd_level = a[10] ? atoi(a + 11) : 3;
            *opts = 1;
            if (cv->cs.zstd_level < 1 || cv->cs.zstd_level > 19) {
                fprintf(stderr, "zt convert: compression level must be 1-19\n");
                return ZT_EXIT_USAGE;
            }
        } else if (!strncmp(a, "--digest", 8) && (a[8] == '=' || (!a[8] && i + 1 < argc))) {
            *opts = 1;
            cv->digest_set = 1;
            if (tool_parse_digest(a[8] ? a + 9 : argv[++i], &cv->cs.digest)) {
                fprintf(stderr, "zt convert: --digest must be sha256, crc32c, xxh3 or none\n");
                return ZT_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--format") && i + 1 < argc) {
            const char *f = argv[++i];
            if (strcmp(f, "v2") && strcmp(f, "1.2")) {
                fprintf(stderr, "zt convert: --format must be 1.2 or v2\n");
                return ZT_EXIT_USAGE;
            }
            cv->v2 = !strcmp(f, "v2");
            *opts = 1;
        } else if (!strcmp(a, "--align") && i + 1 < argc) {
            char *end;
            cv->align = strtoull(argv[++i], &end, 10);
            *opts = 1;
            if (*end || !cv->align || cv->align % 4096) {
                fprintf(stderr, "zt convert: --align must be a multiple of 4096\n");
                return ZT_EXIT_USAGE;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "zt convert: unknown option \"%s\"\n", a);
            return ZT_EXIT_USAGE;
        } else {
            cv->in[cv->nin++] = a;
        }
    }
    if (!cv->out || !cv->nin) {
        fprintf(stderr, "zt convert: need IN... and -o OUT (see zt convert --help)\n");
        return ZT_EXIT_USAGE;
    }
    if (cv->v2 && !cv->digest_set)
        cv->cs.digest = ZT_DIGEST_XXH3;
    if ((cv->v2 && cv->cs.digest == ZT_DIGEST_CRC32C) ||
        (!cv->v2 && (cv->cs.digest == ZT_DIGEST_XXH3 || cv->align))) {
        fprintf(stderr, "zt convert: v2 digests are xxh3, sha256 or none; xxh3 and --align "
                        "are for --format v2\n");
        return ZT_EXIT_USAGE;
    }
    return 0;
}

/* ---- names: two tensors of one name in the inputs are refused up front */
typedef struct nref {
    const char *name;
    size_t len;
    int file;
} nref;

static int cmp_nref(const void *pa, const void *pb)
{
    const nref *a = pa, *b = pb;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->name, b->name, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

static int check_names(conv *cv)
{
    size_t total = 0, k = 0;
    for (int i = 0; i < cv->nin; i++)
        total += zt_file_object_count(cv->files[i]);
    nref *v = malloc((total ? total : 1) * sizeof(*v));
    if (!v)
        return ZT_EXIT_SYSTEM;
    for (int i = 0; i < cv->nin; i++)
        for (size_t j = 0; j < zt_file_object_count(cv->files[i]); j++) {
            const zt_object *o = zt_file_object_at(cv->files[i], j);
            v[k++] = (nref){zt_object_name(o), zt_object_name_len(o), i};
        }
    qsort(v, total, sizeof(*v), cmp_nref);
    int rc = ZT_EXIT_OK;
    for (size_t i = 1; i < total && !rc; i++)
        if (!cmp_nref(&v[i - 1], &v[i])) {
            fprintf(stderr, "zt convert: tensor \"%s\" is in both %s and %s\n", v[i].name,
                    cv->in[v[i - 1].file], cv->in[v[i].file]);
            rc = ZT_EXIT_INVALID;
        }
    free(v);
    return rc;
}

/* ---- attributes, through the manifest JSON */
static char *attributes_of(const zt_object *o, zt_error *err)
{
    char *s = zt_object_json(o, ZT_JSON_COMPACT, err);
    json_t *j = s ? json_loads(s, 0, NULL) : NULL;
    zt_free(s);
    json_t *a = json_object_get(j, "attributes");
    char *r = a ? json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    return r;
}

static void merge_attrs(json_t *dst, json_t *src, const char *file)
{
    const char *k;
    json_t *v;
    json_object_foreach(src, k, v)
    {
        json_t *old = json_object_get(dst, k);
        if (!old)
            json_object_set(dst, k, v);
        else if (!json_equal(old, v))
            fprintf(stderr,
                    "zt convert: warning: %s: attribute \"%s\" differs from an earlier "
                    "input's; keeping the first\n",
                    file, k);
    }
}

static int file_attributes(conv *cv, zt_writer *w, zt_error *err)
{
    if (cv->values && cv->nin == 1) { /* value for value (v2 in or out) */
        zt_status st = zt_writer_set_attribute_values(w, zt_file_attributes(cv->files[0]), err);
        return st ? tool_report("convert", cv->out, err) : ZT_EXIT_OK;
    }
    json_t *all = json_object();
    for (int i = 0; all && i < cv->nin; i++) {
        char *s = zt_file_manifest_json(cv->files[i], ZT_JSON_COMPACT, err);
        json_t *j = s ? json_loads(s, 0, NULL) : NULL;
        zt_free(s);
        json_t *a = json_object_get(j, "attributes");
        if (a)
            merge_attrs(all, a, cv->in[i]);
        json_decref(j);
    }
    char *text = all && json_object_size(all) ? json_dumps(all, JSON_COMPACT) : NULL;
    json_decref(all);
    zt_status st = text ? zt_writer_set_attributes(w, text, err) : ZT_OK;
    free(text);
    return st ? tool_report("convert", cv->out, err) : ZT_EXIT_OK;
}

/* ---- the copy */
static zt_status to_writer(void *ud, const void *p, size_t n, zt_error *err)
{
    return zt_writer_write(ud, p, n, err);
}

/* The index of the component not yet done that comes next: the lowest
 * offset, or (v2, canonical placement) the first role in byte order. */
static size_t lowest(const zt_object *o, const int *done, int by_role)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < zt_object_component_count(o); i++) {
        const zt_component *c = zt_object_component_at(o, i), *b;
        if (done[i])
            continue;
        b = best == SIZE_MAX ? NULL : zt_object_component_at(o, best);
        if (!b || (by_role ? strcmp(zt_component_role(c), zt_component_role(b)) < 0
                           : zt_component_offset(c) < zt_component_offset(b)))
            best = i;
    }
    return best;
}

/* ---- what the target can express */

static int is_u64_index(const zt_object *o, const char *role)
{
    const zt_component *c = zt_object_find_component(o, role);
    return c && zt_component_dtype(c) == ZT_DTYPE_U64;
}

/* The format (1.2) or layout (v2) OUT gives object o; NULL when OUT cannot
 * express it, with the reason in why. */
static const char *target_format(const conv *cv, const zt_file *f, const zt_object *o, char *why,
                                 size_t cap)
{
    const char *fmt = zt_object_format(o);
    int from_v2 = zt_file_get_kind(f) == ZT_KIND_ZT_2;
    for (size_t i = 0; i < zt_object_component_count(o); i++) {
        const zt_component *c = zt_object_component_at(o, i);
        if (zt_component_encoding(c) == ZT_ENC_OTHER) {
            snprintf(why, cap, "part \"%s\" is stored in encoding \"%s\", which cannot be decoded",
                     zt_component_role(c), zt_component_encoding_name(c));
            return NULL;
        }
        if (!cv->v2 && from_v2 && zt_component_type(c) &&
            !strcmp(zt_component_type(c), "f4_e2m1")) {
            snprintf(why, cap,
                     "part \"%s\" is f4_e2m1, two elements per byte, which 1.2's "
                     "size rules cannot express",
                     zt_component_role(c));
            return NULL;
        }
    }
    if (cv->v2 == from_v2 || (!cv->v2 && !from_v2))
        return fmt; /* same family: as it is */
    if (cv->v2) {
        if (!strcmp(fmt, "dense"))
            return "dense";
        if (!strcmp(fmt, "sparse_csr"))
            return "zt.sparse_csr/1";
        if (!strcmp(fmt, "sparse_coo"))
            return "zt.sparse_coo/1";
        snprintf(why, cap, "%s",
                 !strcmp(fmt, "quantized_group")
                     ? "quantized_group does not state its bits, packing, scale form and zero "
                       "point, which zt.quant_group/1 requires"
                     : "its format has no v2 layout");
        return NULL;
    }
    if (!zt_object_interpreted(o)) {
        snprintf(why, cap, "its layout \"%.60s\" or a logical type is not one this library knows",
                 fmt);
        return NULL;
    }
    if (!strcmp(fmt, "dense"))
        return "dense";
    int csr = !strcmp(fmt, "zt.sparse_csr/1"), coo = !strcmp(fmt, "zt.sparse_coo/1");
    if ((csr && is_u64_index(o, "indices") && is_u64_index(o, "indptr")) ||
        (coo && is_u64_index(o, "coords")))
        return csr ? "sparse_csr" : "sparse_coo";
    snprintf(why, cap, "%s",
             csr || coo ? "its indices are u32; 1.2 sparse indices must be u64"
                        : "its layout has no 1.2 format");
    return NULL;
}

/* bool is a dtype in 1.x and a logical type over u8 in v2. */
static void target_type(const conv *cv, int from_v2, const zt_component *c, zt_component_spec *cs)
{
    cs->dtype = zt_component_dtype(c);
    cs->type = zt_component_type(c);
    if (cv->v2 && !from_v2 && cs->dtype == ZT_DTYPE_BOOL) {
        cs->dtype = ZT_DTYPE_U8;
        cs->type = "bool";
    } else if (!cv->v2 && from_v2 && cs->type && !strcmp(cs->type, "bool")) {
        cs->dtype = ZT_DTYPE_BOOL;
        cs->type = NULL;
    }
}

/* Components in the order of their bytes in the input. */
static int copy_object(conv *cv, zt_writer *w, int fi, const zt_object *o, zt_error *err)
{
    size_t n = zt_object_component_count(o);
    const char *roles[64];
    size_t ids[64];
    int done[64] = {0};
    if (n > 64) {
        fprintf(stderr, "zt convert: %s: object \"%s\" has %zu components (max 64)\n", cv->in[fi],
                zt_object_name(o), n);
        return ZT_EXIT_INVALID;
    }
    char why[256];
    const char *fmt = target_format(cv, cv->files[fi], o, why, sizeof(why));
    if (!fmt) {
        fprintf(stderr, "zt convert: %s: object \"%s\" cannot be written as %s: %s\n", cv->in[fi],
                zt_object_name(o), cv->v2 ? "zTensor v2" : "zTensor 1.2", why);
        return ZT_EXIT_INVALID;
    }
    int from_v2 = zt_file_get_kind(cv->files[fi]) == ZT_KIND_ZT_2;
    zt_status st = ZT_OK;
    for (size_t k = 0; k < n && !st; k++) {
        size_t ci = lowest(o, done, cv->v2);
        const zt_component *c = zt_object_component_at(o, ci);
        done[ci] = 1;
        zt_component_spec cs = cv->cs;
        target_type(cv, from_v2, c, &cs);
        roles[k] = zt_component_role(c);
        st = zt_writer_begin(w, &cs, err);
        if (!st)
            st = tool_copy_component(cv->files[fi], c, to_writer, w, &cv->prog, err);
        if (!st)
            st = zt_writer_end(w, &ids[k], err);
    }
    char *attrs = st || cv->values ? NULL : attributes_of(o, err);
    if (!st && cv->values)
        st = zt_writer_add_object_values(w, zt_object_name(o), fmt, zt_object_ndim(o),
                                         zt_object_shape(o), zt_object_attributes(o), n, roles, ids,
                                         err);
    else if (!st)
        st = zt_writer_add_object(w, zt_object_name(o), fmt, zt_object_ndim(o), zt_object_shape(o),
                                  attrs, n, roles, ids, err);
    free(attrs);
    return st ? tool_report("convert", cv->in[fi], err) : ZT_EXIT_OK;
}

static uint64_t first_offset(const zt_object *o)
{
    uint64_t m = UINT64_MAX;
    for (size_t i = 0; i < zt_object_component_count(o); i++)
        if (zt_component_offset(zt_object_component_at(o, i)) < m)
            m = zt_component_offset(zt_object_component_at(o, i));
    return m;
}

/* By first byte; empty objects before the one that starts where they sit;
 * then by name, so the order never depends on qsort. */
static int cmp_obj(const void *pa, const void *pb)
{
    const zt_object *x = *(const zt_object *const *)pa, *y = *(const zt_object *const *)pb;
    uint64_t a = first_offset(x), b = first_offset(y);
    if (a != b)
        return (a > b) - (a < b);
    a = zt_object_component_count(x) ? zt_component_length(zt_object_component_at(x, 0)) : 0;
    b = zt_object_component_count(y) ? zt_component_length(zt_object_component_at(y, 0)) : 0;
    if (a != b)
        return (a > b) - (a < b);
    return strcmp(zt_object_name(x), zt_object_name(y));
}

/* v2 canonical placement (§6.3): every object of every input, by name. */
typedef struct fobj {
    int fi;
    const zt_object *o;
} fobj;

static int cmp_fobj(const void *pa, const void *pb)
{
    const fobj *a = pa, *b = pb;
    size_t n = zt_object_name_len(a->o) < zt_object_name_len(b->o) ? zt_object_name_len(a->o)
                                                                   : zt_object_name_len(b->o);
    int c = memcmp(zt_object_name(a->o), zt_object_name(b->o), n);
    return c ? c : (zt_object_name_len(a->o) > n) - (zt_object_name_len(b->o) > n);
}

static int copy_by_name(conv *cv, zt_writer *w, zt_error *err)
{
    size_t total = 0, k = 0;
    for (int i = 0; i < cv->nin; i++)
        total += zt_file_object_count(cv->files[i]);
    fobj *v = malloc((total ? total : 1) * sizeof(*v));
    if (!v)
        return ZT_EXIT_SYSTEM;
    for (int i = 0; i < cv->nin; i++)
        for (size_t j = 0; j < zt_file_object_count(cv->files[i]); j++)
            v[k++] = (fobj){i, zt_file_object_at(cv->files[i], j)};
    qsort(v, total, sizeof(*v), cmp_fobj);
    int rc = ZT_EXIT_OK;
    for (size_t i = 0; i < total && !rc; i++)
        rc = copy_object(cv, w, v[i].fi, v[i].o, err);
    free(v);
    return rc;
}

static int copy_file(conv *cv, zt_writer *w, int fi, zt_error *err)
{
    zt_file *f = cv->files[fi];
    size_t n = zt_file_object_count(f);
    const zt_object **v = malloc((n ? n : 1) * sizeof(*v));
    if (!v)
        return ZT_EXIT_SYSTEM;
    for (size_t i = 0; i < n; i++)
        v[i] = zt_file_object_at(f, i);
    qsort(v, n, sizeof(*v), cmp_obj);
    int rc = ZT_EXIT_OK;
    for (size_t i = 0; i < n && !rc; i++)
        rc = copy_object(cv, w, fi, v[i], err);
    free(v);
    return rc;
}

static int open_inputs(conv *cv, zt_error *err)
{
    uint64_t total = 0;
    for (int i = 0; i < cv->nin; i++) {
        if (zt_open(cv->in[i], NULL, &cv->files[i], err))
            return tool_report("convert", cv->in[i], err);
        if (zt_file_get_kind(cv->files[i]) == ZT_KIND_ZT_2)
            cv->values = 1;
        for (size_t j = 0; j < zt_file_object_count(cv->files[i]); j++) {
            const zt_object *o = zt_file_object_at(cv->files[i], j);
            for (size_t k = 0; k < zt_object_component_count(o); k++)
                total += zt_component_decoded_length(zt_object_component_at(o, k));
        }
    }
    tool_progress_init(&cv->prog, total);
    return ZT_EXIT_OK;
}

static int import(conv *cv)
{
    zt_error err;
    int rc = open_inputs(cv, &err);
    if (!rc)
        rc = check_names(cv);
    if (rc)
        return rc;
    zt_writer *w;
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    if (cv->v2) {
        wo.format = ZT_FORMAT_V2;
        wo.alignment = cv->align;
        cv->values = 1;
    }
    if (zt_writer_open(cv->out, &wo, &w, &err))
        return tool_report("convert", cv->out, &err);
    rc = file_attributes(cv, w, &err);
    if (!rc && cv->v2)
        rc = copy_by_name(cv, w, &err);
    for (int i = 0; i < cv->nin && !rc && !cv->v2; i++)
        rc = copy_file(cv, w, i, &err);
    tool_progress_end(&cv->prog);
    if (!rc && zt_writer_finish(w, &err))
        rc = tool_report("convert", cv->out, &err);
    zt_writer_free(w);
    return rc;
}

int cmd_convert(int argc, char **argv)
{
    conv cv = {.cs = {.encoding = ZT_ENC_RAW, .digest = ZT_DIGEST_SHA256}};
    cv.in = calloc((size_t)argc, sizeof(*cv.in));
    cv.files = calloc((size_t)argc, sizeof(*cv.files));
    int opts = 0, rc = cv.in && cv.files ? parse_args(argc, argv, &cv, &opts) : ZT_EXIT_SYSTEM;
    struct stat sb;
    if (!rc && cv.nin == 1 && stat(cv.in[0], &sb) == 0 && S_ISDIR(sb.st_mode)) {
        rc = opts ? ZT_EXIT_USAGE : tool_convert_dir(cv.in[0], cv.out);
        if (opts)
            fprintf(stderr, "zt convert: converting a directory takes no --compress, --digest, "
                            "--format or --align\n");
    } else if (!rc && has_suffix(cv.out, ".safetensors")) {
        if (cv.nin != 1 || opts) {
            fprintf(stderr, "zt convert: writing .safetensors takes one IN and no --compress or "
                            "--digest\n");
            rc = ZT_EXIT_USAGE;
        } else {
            rc = tool_export_safetensors(cv.in[0], cv.out);
        }
    } else if (!rc) {
        rc = import(&cv);
    }
    for (int i = 0; cv.files && i < cv.nin; i++)
        zt_close(cv.files[i]);
    free(cv.in);
    free(cv.files);
    return rc < 0 ? ZT_EXIT_OK : rc;
}
