/*
 * fuzz_v2_manifest.c: libFuzzer target for the zTensor v2 manifest: the
 * deterministic-CBOR decoder, the schema, names, attributes, the shard table,
 * blob references and every layout's rules, reached past the footer's hash
 * because the target computes it.
 *
 * Input: a u32 LE manifest length m, then m bytes of manifest, then the bytes
 * of the blob area. The file is: magic, zeros up to 4096, the blob area,
 * zeros up to the next multiple of 4096, the manifest, and a footer with the
 * manifest's true XXH3-64. A file of the v2 corpus maps to an input that
 * rebuilds it byte for byte (its blob area is the bytes from 4096 to its
 * manifest), which is how the seeds were made. Invariants: v2_check.h, and
 * the fast manifest path (lib/src/v2/v2_fast.c) agrees with the general one:
 * the same status, error message and offset, or the same manifest JSON.
 */
#include <stdio.h>
#include <xxhash.h>

#include "v2_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* lib/src/reader.c: 1 makes every open take the general path (internal.h). */
extern int zt__fast_path_disabled;

/* What an open makes of the file, one way or the other, as a string. */
static char *outcome(const uint8_t *p, size_t n, int slow)
{
    zt__fast_path_disabled = slow;
    zt_file *f = NULL;
    zt_error e;
    zt_status st = zt_open_memory(p, n, NULL, &f, &e);
    zt__fast_path_disabled = 0;
    char *out = NULL;
    if (st) {
        size_t len = strlen(e.message) + strlen(e.object) + strlen(e.component) + 64;
        CHECK((out = malloc(len)) != NULL);
        snprintf(out, len, "%d %d %llu %s/%s %s", (int)st, e.has_offset,
                 (unsigned long long)e.offset, e.object, e.component, e.message);
        return out;
    }
    char *js = zt_file_manifest_json(f, ZT_JSON_COMPACT, &e);
    CHECK(js != NULL);
    CHECK((out = strdup(js)) != NULL);
    zt_free(js);
    zt_close(f);
    return out;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t magic[8] = {0x89, 'Z', 'T', '2', 0x0D, 0x0A, 0x1A, 0x0A};
    if (size < 4)
        return 0;
    uint32_t m = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
                 (uint32_t)data[3] << 24;
    size -= 4;
    data += 4;
    if (m > size)
        m = (uint32_t)size;
    size_t blobs = size - m, moff = 4096 + (blobs + 4095) / 4096 * 4096;
    size_t total = moff + m + 40;
    uint8_t *p = calloc(1, total);
    CHECK(p != NULL);
    memcpy(p, magic, 8);
    memcpy(p + 4096, data + m, blobs);
    memcpy(p + moff, data, m);
    uint8_t *ft = p + moff + m;
    put_le(ft, m ? moff : 0, 8);
    put_le(ft + 8, m, 8);
    put_le(ft + 16, m ? XXH3_64bits(data, m) : 0, 8);
    put_le(ft + 24, 2, 4);
    memcpy(ft + 32, magic, 8);
    v2_open(p, total);
    char *fast = outcome(p, total, 0), *slow = outcome(p, total, 1);
    CHECK(!strcmp(fast, slow));
    free(fast);
    free(slow);
    free(p);
    return 0;
}
