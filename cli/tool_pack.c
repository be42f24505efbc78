/* zt pack: build a .zt file of dense objects from raw little-endian buffers. */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char k_help[] =
    "NAME\n"
    "    zt pack - build a zTensor file from raw buffers\n"
    "\n"
    "SYNOPSIS\n"
    "    zt pack -o OUT.zt [--compress[=LEVEL]] [--digest sha256|crc32c|none]\n"
    "            NAME=DTYPE:SHAPE:RAWFILE...\n"
    "    zt pack --format v2 -o OUT.zt [--compress[=LEVEL]] [--digest xxh3|sha256|none]\n"
    "            [--align BYTES] NAME=DTYPE:SHAPE:RAWFILE...\n"
    "\n"
    "DESCRIPTION\n"
    "    Writes one dense object per NAME=DTYPE:SHAPE:RAWFILE argument, streaming\n"
    "    RAWFILE (\"-\" is standard input, usable once) into the object's data\n"
    "    component. NAME ends at the first '='; it may be any UTF-8 text without\n"
    "    '='. DTYPE is a storage type (f64 f32 f16 bf16 i64 i32 i16 i8 u64 u32 u16\n"
    "    u8 bool, or the long names float32 ...) or a logical type (f8_e4m3fn,\n"
    "    f8_e5m2, f8_e4m3fnuz, f8_e5m2fnuz, complex64, complex128). SHAPE is\n"
    "    dimensions joined by 'x' (1024x768); an empty SHAPE is a scalar.\n"
    "    RAWFILE must hold exactly product(SHAPE) elements. OUT.zt appears only\n"
    "    when complete (temporary file, fsync, rename, fsync of the directory).\n"
    "\n"
    "    With --format v2 it writes zTensor v2 (container version 2): objects\n"
    "    in name order, blobs at 64 KiB (--align), an xxh3 digest of every part\n"
    "    (over the decoded bytes), --compress as zt.zstd-seekable/1, identical\n"
    "    parts stored once. Without --compress and with the default digest and\n"
    "    alignment the file is in canonical form (v2 spec 6.3). v2 has no bool\n"
    "    dtype: bool is u8 with logical type bool; the logical types f4_e2m1\n"
    "    (two per byte) and f8_e8m0 are accepted too.\n"
    "\n"
    "OPTIONS\n"
    "    -o OUT.zt           output file (required)\n"
    "    --compress[=LEVEL]  zstd-compress every component (level 1-19, default 3)\n"
    "    --digest KIND       sha256 (default), crc32c or none; v2: xxh3 (default),\n"
    "                        sha256 or none\n"
    "    --format F          1.2 (default) or v2\n"
    "    --align BYTES       v2 blob placement, a multiple of 4096 (default 65536)\n"
    "\n"
    "EXIT STATUS\n"
    "    0 written; 1 a buffer does not match its shape; 2 usage error;\n"
    "    3 system error.\n";

static int g_v2;         /* --format v2 */
static uint64_t g_align; /* --align */
static int g_digest_set; /* --digest was given */

static int pack_one(zt_writer *w, const tool_pack_spec *sp, const zt_component_spec *cs,
                    zt_error *err)
{
    int fd = strcmp(sp->path, "-") ? open(sp->path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
    if (fd < 0) {
        fprintf(stderr, "zt pack: %s: %s\n", sp->path, strerror(errno));
        return ZT_EXIT_SYSTEM;
    }
    zt_component_spec c = *cs;
    c.dtype = sp->dtype;
    c.type = sp->type;
    static char buf[1 << 20];
    zt_status st = zt_writer_begin(w, &c, err);
    while (!st) {
        ssize_t r = read(fd, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            fprintf(stderr, "zt pack: %s: %s\n", sp->path, strerror(errno));
            if (fd != STDIN_FILENO)
                close(fd);
            return ZT_EXIT_SYSTEM;
        }
        if (r == 0)
            break;
        st = zt_writer_write(w, buf, (size_t)r, err);
    }
    if (fd != STDIN_FILENO)
        close(fd);
    size_t id;
    const char *role = "data";
    if (!st)
        st = zt_writer_end(w, &id, err);
    if (!st)
        st = zt_writer_add_object(w, sp->name, "dense", sp->ndim, sp->shape, NULL, 1, &role, &id,
                                  err);
    return st ? tool_report("pack", sp->path, err) : ZT_EXIT_OK;
}

static int parse_args(int argc, char **argv, const char **out, zt_component_spec *cs,
                      tool_pack_spec *specs, int *nspecs)
{
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (tool_is_help(a)) {
            fputs(k_help, stdout);
            return -1;
        } else if (!strcmp(a, "-o") && i + 1 < argc) {
            *out = argv[++i];
        } else if (!strncmp(a, "--compress", 10) && (a[10] == 0 || a[10] == '=')) {
            cs->encoding = ZT_ENC_ZSTD;
            cs->zstd_level = a[10] ? atoi(a + 11) : 3;
            if (cs->zstd_level < 1 || cs->zstd_level > 19) {
                fprintf(stderr, "zt pack: compression level must be 1-19\n");
                return ZT_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--digest") && i + 1 < argc) {
            if (tool_parse_digest(argv[++i], &cs->digest)) {
                fprintf(stderr, "zt pack: --digest must be sha256, crc32c, xxh3 or none\n");
                return ZT_EXIT_USAGE;
            }
            g_digest_set = 1;
        } else if (!strcmp(a, "--format") && i + 1 < argc) {
            const char *f = argv[++i];
            if (strcmp(f, "v2") && strcmp(f, "1.2")) {
                fprintf(stderr, "zt pack: --format must be 1.2 or v2\n");
                return ZT_EXIT_USAGE;
            }
            g_v2 = !strcmp(f, "v2");
        } else if (!strcmp(a, "--align") && i + 1 < argc) {
            char *end;
            g_align = strtoull(argv[++i], &end, 10);
            if (*end || !g_align || g_align % 4096) {
                fprintf(stderr, "zt pack: --align must be a multiple of 4096\n");
                return ZT_EXIT_USAGE;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "zt pack: unknown option \"%s\"\n", a);
            return ZT_EXIT_USAGE;
        } else if (tool_pack_parse_spec(a, g_v2, &specs[(*nspecs)++]) != 0) {
            fprintf(stderr, "zt pack: bad argument \"%s\" (want NAME=DTYPE:SHAPE:RAWFILE)\n",
                    argv[i]);
            return ZT_EXIT_USAGE;
        }
    }
    if (!*out || !*nspecs) {
        fprintf(stderr, "zt pack: need -o OUT.zt and at least one NAME=DTYPE:SHAPE:RAWFILE\n");
        return ZT_EXIT_USAGE;
    }
    if (g_v2 && !g_digest_set)
        cs->digest = ZT_DIGEST_XXH3; /* v2's default: canonical form wants it */
    if (!g_v2 && (g_align || cs->digest == ZT_DIGEST_XXH3)) {
        fprintf(stderr, "zt pack: --align and xxh3 digests are for --format v2\n");
        return ZT_EXIT_USAGE;
    }
    if (g_v2 && cs->digest == ZT_DIGEST_CRC32C) {
        fprintf(stderr, "zt pack: v2 digests are xxh3 or sha256\n");
        return ZT_EXIT_USAGE;
    }
    return 0;
}

/* v2 canonical placement (§6.3): blobs in the byte order of the names. */
static int cmp_spec(const void *a, const void *b)
{
    return strcmp(((const tool_pack_spec *)a)->name, ((const tool_pack_spec *)b)->name);
}

int cmd_pack(int argc, char **argv)
{
    const char *out = NULL;
    zt_component_spec cs = {.encoding = ZT_ENC_RAW, .digest = ZT_DIGEST_SHA256};
    tool_pack_spec *specs = calloc((size_t)argc, sizeof(*specs));
    int nspecs = 0;
    if (!specs)
        return ZT_EXIT_SYSTEM;
    int rc = parse_args(argc, argv, &out, &cs, specs, &nspecs);
    if (rc) {
        free(specs);
        return rc < 0 ? ZT_EXIT_OK : rc;
    }
    zt_writer *w;
    zt_error err;
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    if (g_v2) {
        wo.format = ZT_FORMAT_V2;
        wo.alignment = g_align;
        qsort(specs, (size_t)nspecs, sizeof(*specs), cmp_spec);
    }
    if (zt_writer_open(out, &wo, &w, &err)) {
        free(specs);
        return tool_report("pack", out, &err);
    }
    for (int i = 0; i < nspecs && !rc; i++)
        rc = pack_one(w, &specs[i], &cs, &err);
    if (!rc && zt_writer_finish(w, &err))
        rc = tool_report("pack", out, &err);
    zt_writer_free(w);
    free(specs);
    return rc;
}
