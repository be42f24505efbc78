/* zt verify: structure, every digest, and every zstd stream's true length. */
#include "tool.h"

#include <string.h>

static const char k_help[] =
    "NAME\n"
    "    zt verify - check the structure and every digest of zTensor files\n"
    "\n"
    "SYNOPSIS\n"
    "    zt verify FILE...\n"
    "\n"
    "DESCRIPTION\n"
    "    Validates each FILE against the spec (layout, manifest, every\n"
    "    component's bounds, alignment, sizes and required components), then\n"
    "    recomputes every sha256 and crc32c digest over the stored bytes and\n"
    "    decodes every zstd component to check its uncompressed_length.\n"
    "    Prints \"FILE: ok\" for a good file, and one line per problem otherwise,\n"
    "    naming the object, component and byte offset.\n"
    "\n"
    "EXIT STATUS\n"
    "    0 every file is good; 1 a problem was found; 2 usage error;\n"
    "    3 system error (a file could not be read).\n";

static int null_sink(void *ud, const void *p, size_t n)
{
    (void)ud;
    (void)p;
    (void)n;
    return 0;
}

static int verify_one(const char *file)
{
    zt_file *f;
    zt_error err;
    if (zt_open(file, NULL, &f, &err)) {
        printf("%s: %s\n", file, err.message);
        return tool_exit_for(err.code);
    }
    size_t problems = 0, digests = 0;
    for (size_t i = 0; i < zt_file_object_count(f); i++) {
        const zt_object *o = zt_file_object_at(f, i);
        for (size_t j = 0; j < zt_object_component_count(o); j++) {
            const zt_component *c = zt_object_component_at(o, j);
            int checked = 0;
            if (zt_component_verify(f, o, c, &checked, &err)) {
                printf("%s: %s\n", file, err.message);
                problems++;
                continue;
            }
            digests += (size_t)checked;
            if (zt_component_encoding(c) == ZT_ENC_ZSTD &&
                zt_component_stream(f, c, null_sink, NULL, &err)) {
                printf("%s: object \"%s\": %s\n", file, zt_object_name(o), err.message);
                problems++;
            }
        }
    }
    if (!problems)
        printf("%s: ok (%zu objects, %zu digests checked)\n", file, zt_file_object_count(f),
               digests);
    zt_close(f);
    return problems ? ZT_EXIT_INVALID : ZT_EXIT_OK;
}

int zt_cmd_verify(int argc, char **argv)
{
    int nfiles = 0, rc = ZT_EXIT_OK;
    for (int i = 1; i < argc; i++)
        if (tool_is_help(argv[i])) {
            fputs(k_help, stdout);
            return ZT_EXIT_OK;
        }
    for (int i = 1; i < argc; i++) {
        int r = verify_one(argv[i]);
        if (r > rc)
            rc = r;
        nfiles++;
    }
    if (!nfiles) {
        fputs(k_help, stderr);
        return ZT_EXIT_USAGE;
    }
    return rc;
}
