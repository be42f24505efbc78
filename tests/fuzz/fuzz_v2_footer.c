/*
 * fuzz_v2_footer.c: libFuzzer target for the zTensor v2 container: the
 * magic, the 40-byte footer and what it points at (bounds, 1 GiB cap, XXH3-64
 * of the manifest, data shards), and the generations scan, which looks for
 * earlier footers in the bytes outside the current blobs.
 *
 * The input is a v2 file without its first 8 bytes: the magic is put back in
 * front, so every input reaches the v2 reader. Seeds: small files of the v2
 * corpus (tests/corpus/gen_corpus_v2) with their magic taken off.
 * Invariants: v2_check.h.
 */
#include "v2_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t magic[8] = {0x89, 'Z', 'T', '2', 0x0D, 0x0A, 0x1A, 0x0A};
    uint8_t *p = malloc(size + 8);
    CHECK(p != NULL);
    memcpy(p, magic, 8);
    if (size)
        memcpy(p + 8, data, size);
    v2_open(p, size + 8);
    free(p);
    return 0;
}
