/*
 * fuzz_head_wire.c: libFuzzer target for server/http/head_wire.c, the length
 * of a header value on the wire when libmicrohttpd 0.9 reports it cut at a
 * NUL. The target lays out a request head as libmicrohttpd leaves it after
 * its in-place parse: "H: VALUE" EOL, then either another header line or
 * (last) the blank line, with every CR and LF of the line ends made NUL.
 * Input: byte 0 picks the line ends (bit 0: the value's line ends CRLF, else
 * LF; bit 1: the value's header is the last; bit 2: the blank line is CRLF)
 * and bits 3-7 move `next` off its place to try pointers that are not the
 * next line; the rest is the value (CR and LF in it become 'x': a value has
 * none). The reported length is strnlen, as libmicrohttpd's.
 * Invariants (a broken one traps): the answer is never less than the
 * reported length, never more than the value's real length, exact when the
 * value does not end with NUL or every line end is CRLF, and at most the
 * documented ambiguity short otherwise (a bare LF's one NUL, two for the
 * last header); pointers that cannot be the next line give the reported
 * length.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/head_wire.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            __builtin_trap();                                                                      \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned flags = data[0];
    bool crlf = flags & 1, last = flags & 2, blank_crlf = flags & 4;
    unsigned shift = flags >> 3;
    size_t vlen = size - 1;
    size_t cap = 3 + vlen + 4 + 8;
    char *head = malloc(cap);
    if (!head)
        return 0;
    size_t o = 0;
    memcpy(head + o, "H: ", 3);
    o += 3;
    char *value = head + o;
    for (size_t i = 0; i < vlen; i++) {
        char c = (char)data[1 + i];
        head[o++] = c == '\r' || c == '\n' ? 'x' : c;
    }
    size_t eol = crlf ? 2 : 1, blank = last ? (blank_crlf ? 2 : 1) : 0;
    memset(head + o, 0, eol + blank); /* the line ends, made NUL in place */
    o += eol + blank;
    const char *next = head + o; /* the next line, or the end of the head */
    if (!last) {
        memcpy(head + o, "N: v", 4);
        o += 4;
    }
    size_t reported = strnlen(value, vlen);
    size_t got = ztd_value_wire_len(value, reported, next, last);
    size_t budget = last ? 4 : 2, nuls = eol + blank;
    CHECK(got >= reported && got <= vlen);
    if (vlen == 0 || value[vlen - 1] != '\0' || nuls == budget)
        CHECK(got == vlen);
    else
        CHECK(vlen - got <= budget - nuls);
    /* pointers that are not the next line */
    CHECK(ztd_value_wire_len(value, reported, NULL, last) == reported);
    CHECK(ztd_value_wire_len(NULL, reported, next, last) == reported);
    if (shift && reported > 0) {
        const char *before = value + (shift % reported); /* inside the reported value */
        CHECK(ztd_value_wire_len(value, reported, before, last) == reported);
    }
    free(head);
    return 0;
}
