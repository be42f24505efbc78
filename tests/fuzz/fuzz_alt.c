/*
 * fuzz_alt.c: libFuzzer target for the ALT reader. Each input is opened as a
 * whole file, and again with its first four bytes forced to the "altc"
 * marker, so mutations of the marker do not hide the rest of the reader.
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
    if (size < 4)
        return 0;
    uint8_t *buf = malloc(size);
    CHECK(buf != NULL);
    memcpy(buf, data, size);
    memcpy(buf, "altc", 4);
    fc_open(buf, size, NULL);
    free(buf);
    return 0;
}
