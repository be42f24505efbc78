/*
 * head_wire.h: how long a request header's value was on the wire, when libmicrohttpd
 * reports less.
 *
 * libmicrohttpd 0.9.75 parses the request head in place in its read buffer: each line's
 * CRLF (or bare LF) becomes NUL bytes, the colon a NUL, and a header's value is handed on
 * as a C string whose length is strlen() (connection.c, process_broken_line). A NUL byte
 * inside a value therefore cuts it silently ("X: a\0b" arrives as "a"), which RFC 9110 §5.5
 * forbids and a proxy in front may read differently. The value's real extent is still in
 * the buffer: it runs up to the start of the next header line (that header's name), or,
 * for the last header, up to the end of the head (the method plus
 * MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE), less the NULs that replaced the line ends.
 * ztd_value_wire_len() measures it from those pointers, so framing.c can refuse the NUL.
 *
 * Limits: NULs at the very end of a value whose line ends in a bare LF (one; two for the
 * last header, when the blank line is a bare LF too) cannot be told from a CR: "a\0" LF is
 * taken as "a", which is what RFC 9110 §5.5's other remedy (each NUL replaced by a space,
 * trailing whitespace not part of the value) gives too. libmicrohttpd
 * 1.0 refuses a NUL in the head itself and lays the buffer out differently, so there
 * (MHD_VERSION >= 0x01000000) http.c passes the lengths it is given.
 */
#ifndef ZTD_HEAD_WIRE_H
#define ZTD_HEAD_WIRE_H

#include <stdbool.h>
#include <stddef.h>

/* value (value_len bytes as reported) was followed on the wire by its line end, then the
 * line starting at next; last: next is the end of the head, after the blank line too.
 * Returns the value's length on the wire, at least value_len; value_len when next is not
 * where a following line can be (NULL, before the value's end, or over 64 KiB past it). */
size_t ztd_value_wire_len(const char *value, size_t value_len, const char *next, bool last);

#endif
