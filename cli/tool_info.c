/* zt info: the manifest, human-readable or as the JSON the server serves. */
#include "tool.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "NAME\n"
    "    zt info - print the manifest of a zTensor file\n"
    "\n"
    "SYNOPSIS\n"
    "    zt info FILE|URL [--json]\n"
    "\n"
    "DESCRIPTION\n"
    "    Opens and validates FILE, then prints its version, attributes and one\n"
    "    line per object: name, format, shape and components (dtype, logical\n"
    "    type, encoding, stored bytes, offset, digest). For a zTensor v2 file\n"
    "    also its manifest hash, its generations (found by reading the bytes\n"
    "    outside the current blobs), its content digest and its shards.\n"
    "    A URL (http:// or https://) is read remotely: a ztensord file URL\n"
    "    (http://HOST:7070/v1/files/NAME) or a .zt or .safetensors file on any\n"
    "    server that answers Range requests; only the footer and the manifest\n"
    "    are fetched. ZT_TOKEN (a bearer token; ZT_REMOTE_TOKEN is an alias),\n"
    "    ZT_REMOTE_CA_FILE and ZT_REMOTE_TIMEOUT (seconds) are read from the\n"
    "    environment.\n"
    "\n"
    "OPTIONS\n"
    "    --json    print the manifest as JSON, exactly as ztensord serves it at\n"
    "              GET /v1/files/{file} (mapping in docs/JSON.md)\n"
    "\n"
    "EXIT STATUS\n"
    "    0 printed; 1 the file is invalid; 2 usage error; 3 system error.\n";

static void print_shape(const zt_object *o)
{
    if (!zt_object_has_shape(o)) {
        printf("-");
        return;
    }
    printf("[");
    for (size_t i = 0; i < zt_object_ndim(o); i++)
        printf("%s%" PRIu64, i ? "," : "", zt_object_shape(o)[i]);
    printf("]");
}

static void print_object(const zt_object *o)
{
    printf("  %s  %s  ", zt_object_name(o), zt_object_format(o));
    print_shape(o);
    printf("%s\n", zt_object_interpreted(o) ? "" : "  (not interpreted: structure only)");
    for (size_t i = 0; i < zt_object_component_count(o); i++) {
        const zt_component *c = zt_object_component_at(o, i);
        printf("    %-14s %-4s", zt_component_role(c), zt_dtype_name(zt_component_dtype(c)));
        if (zt_component_type(c))
            printf(" (%s)", zt_component_type(c));
        printf(" %s %" PRIu64 " B @%" PRIu64, zt_component_encoding_name(c), zt_component_length(c),
               zt_component_offset(c));
        if (zt_component_shard(c) >= 0)
            printf(" in shard %d", zt_component_shard(c));
        if (zt_component_encoding(c))
            printf(" -> %" PRIu64 " B", zt_component_decoded_length(c));
        if (zt_component_digest(c))
            printf(" %s", zt_component_digest(c));
        printf("\n");
    }
}

/* v2: footer, generations (a scan of the padding, which a remote file has
 * not fetched), content digest, shards. */
static void print_v2(const zt_file *f, bool remote)
{
    zt_error err;
    printf("  manifest: %" PRIu64 " B @%" PRIu64 ", xxh3:%016" PRIx64 "%s\n",
           zt_file_manifest_length(f), zt_file_manifest_offset(f), zt_file_manifest_hash(f),
           zt_file_is_data_shard(f) ? " (data shard: no manifest)" : "");
    zt_generation g[16];
    size_t n = 0;
    if (remote) {
        printf("  generations: not scanned (a remote file: the scan reads the bytes between "
               "blobs)\n");
    } else if (zt_file_generations(f, g, 16, &n, &err) != ZT_OK) {
        printf("  generations: unknown (%s)\n", err.message);
    } else {
        printf("  generations: %zu\n", n);
        for (size_t i = 0; n > 1 && i < n && i < 16; i++)
            printf("    %zu: footer @%" PRIu64 ", manifest %" PRIu64 " B @%" PRIu64
                   ", %zu objects, %s\n",
                   i + 1, g[i].footer_offset, g[i].manifest_length, g[i].manifest_offset,
                   g[i].objects, g[i].status ? zt_status_name(g[i].status) : "ok");
    }
    char cd[80];
    if (zt_file_content_digest(f, ZT_DIGEST_SHA256, cd, &err) == ZT_OK)
        printf("  content digest: %s\n", cd);
    else
        printf("  content digest: undefined (%s)\n", err.message);
    for (size_t i = 0; i < zt_file_shard_count(f); i++) {
        zt_status st = zt_file_shard_status(f, i, &err);
        printf("  shard %zu: %s  %" PRIu64 " B  %s  %s: %s\n", i, zt_file_shard_name(f, i),
               zt_file_shard_size(f, i), zt_file_shard_digest(f, i),
               zt_file_shard_path(f, i) ? zt_file_shard_path(f, i) : "(not located)",
               st ? err.message : "ok");
    }
}

int cmd_info(int argc, char **argv)
{
    const char *file = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (tool_is_help(argv[i])) {
            fputs(k_help, stdout);
            return ZT_EXIT_OK;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!file && argv[i][0] != '-') {
            file = argv[i];
        } else {
            fprintf(stderr, "zt info: %s \"%s\" (see zt info --help)\n",
                    argv[i][0] == '-' ? "unknown option" : "unexpected argument", argv[i]);
            return ZT_EXIT_USAGE;
        }
    }
    if (!file) {
        fputs(k_help, stderr);
        return ZT_EXIT_USAGE;
    }
    zt_file *lf = NULL;
    zt_remote_file *rf = NULL;
    zt_error err;
    if (tool_is_url(file) ? tool_remote_open(file, NULL, &rf, &err)
                          : zt_open(file, NULL, &lf, &err))
        return tool_report("info", file, &err);
    const zt_file *f = rf ? zt_remote_file_zt(rf) : lf;
    if (zt_file_warning(f))
        fprintf(stderr, "zt info: %s: warning: %s\n", file, zt_file_warning(f));
    int rc = ZT_EXIT_OK;
    if (json) {
        char *s = zt_file_manifest_json(f, ZT_JSON_PRETTY, &err);
        if (!s) {
            rc = tool_report("info", file, &err);
        } else {
            puts(s);
            zt_free(s);
        }
    } else {
        printf("%s: %s, version %s, %" PRIu64 " bytes, %zu objects\n", file,
               zt_file_kind_name(zt_file_get_kind(f)), zt_file_version(f), zt_file_size(f),
               zt_file_object_count(f));
        if (zt_file_get_kind(f) == ZT_KIND_ZT_2)
            print_v2(f, rf != NULL);
        for (size_t i = 0; i < zt_file_object_count(f); i++)
            print_object(zt_file_object_at(f, i));
    }
    zt_close(lf);
    zt_remote_close(rf);
    if (fflush(stdout) != 0)
        rc = ZT_EXIT_SYSTEM;
    return rc;
}
