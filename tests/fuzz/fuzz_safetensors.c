/*
 * fuzz_safetensors.c: libFuzzer target for the safetensors header parser and
 * the Ollama grouping. Each input is used twice: as a whole file, and as the
 * JSON header of a file built around it ([u64 size][input][256 data bytes]),
 * so the fuzzer works on the JSON directly and the size prefix always fits.
 * Invariants: foreign_check.h.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "foreign_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fc_open(data, size, NULL);
    size_t total = 8 + size + 256;
    uint8_t *buf = malloc(total);
    CHECK(buf != NULL);
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)((uint64_t)size >> (8 * i));
    if (size)
        memcpy(buf + 8, data, size);
    for (size_t i = 0; i < 256; i++)
        buf[8 + size + i] = (uint8_t)(i * 37);
    fc_open(buf, total, NULL);
    zt_open_options small = {.max_manifest_size = 1 + size % 256};
    fc_open(buf, total, &small);
    free(buf);
    return 0;
}
