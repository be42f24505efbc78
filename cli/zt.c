/* zt: inspect, verify, extract and pack zTensor files. Dispatches to tool_*.c. */
#include "tool.h"

#include <string.h>

static const char k_usage[] =
    "NAME\n"
    "    zt - inspect, verify, extract, pack and convert zTensor (.zt) files\n"
    "\n"
    "SYNOPSIS\n"
    "    zt info FILE|URL [--json]\n"
    "    zt verify FILE...\n"
    "    zt get FILE|URL OBJECT [COMPONENT] [-o OUT] [--token TOKEN]\n"
    "    zt pack -o OUT.zt [--format 1.2|v2] [--compress[=LEVEL]] [--digest KIND] "
    "[--align BYTES]\n"
    "            NAME=DTYPE:SHAPE:RAWFILE...\n"
    "    zt convert IN... -o OUT.zt [--format 1.2|v2] [--compress[=LEVEL]] [--digest KIND]\n"
    "            [--align BYTES]\n"
    "    zt convert IN.zt -o OUT.safetensors\n"
    "    zt convert DIR -o OUTDIR\n"
    "    zt pull URL... [-o DIR] [--connections N] [--chunk-size BYTES] [--jobs N]\n"
    "            [--token TOKEN] [--include GLOB]... [--exclude GLOB]... [--quiet] [--json]\n"
    "            [--tensors GLOB]... [--exclude-tensors GLOB]...\n"
    "            [--max-files N] [--max-listing-bytes BYTES] [--timeout SECONDS]\n"
    "            [--min-rate BYTES] [--stall-timeout SECONDS] [--offline]\n"
    "            [--progress] [--format safetensors]\n"
    "    zt pull s3://BUCKET/PREFIX... [-o DIR] [--s3-endpoint URL] [--s3-region R]\n"
    "            [--s3-credentials FILE] [--s3-max-keys N] [the options above]\n"
    "    zt --version\n"
    "\n"
    "DESCRIPTION\n"
    "    Every command has its own --help (for example: zt pack --help).\n"
    "    Files in zTensor v2 (container version 2), 1.2 and 1.0 layouts are read;\n"
    "    1.2 is written, and v2 with --format v2.\n"
    "    .safetensors (with Ollama's quantized blobs) and .alt files are read too.\n"
    "    info and get also read remote files: an http(s) URL of ztensord or of any\n"
    "    server that answers Range requests (docs/PULL.md).\n"
    "\n"
    "EXIT STATUS\n"
    "    0  success\n"
    "    1  the file is invalid, or a check failed\n"
    "    2  usage error\n"
    "    3  system error (I/O, missing file, out of memory, network, HTTP, or a\n"
    "       remote file that changed while being read)\n"
    "    4  zt pull: no space left on the device\n";

int main(int argc, char **argv)
{
    if (argc < 2 || tool_is_help(argv[1]) || !strcmp(argv[1], "help")) {
        fputs(k_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? ZT_EXIT_USAGE : ZT_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("zt %s (zTensor format %s and container version %d)\n", ZT_VERSION_STRING,
               ZT_FORMAT_VERSION, ZT_FORMAT_V2);
        return ZT_EXIT_OK;
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {{"info", cmd_info}, {"verify", cmd_verify},   {"get", cmd_get},
                {"pack", cmd_pack}, {"convert", cmd_convert}, {"pull", cmd_pull}};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (!strcmp(argv[1], cmds[i].name))
            return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "zt: unknown command \"%s\" (see zt --help)\n", argv[1]);
    return ZT_EXIT_USAGE;
}
