/*
 * Content-Disposition: attachment with a file name (RFC 6266), so that
 * `curl -OJ` and `wget --content-disposition` save a useful name. A name of
 * printable ASCII goes in filename="..." (quotes and backslashes escaped); any
 * other byte (UTF-8, controls) is percent-encoded in filename*=UTF-8''...
 * (RFC 8187), with filename="..." beside it for older clients, those bytes
 * replaced by '_'. A pure function: unit-tested without a socket.
 */
#ifndef ZTD_DISPOSITION_H
#define ZTD_DISPOSITION_H

#include <stdbool.h>
#include <stddef.h>

/* The header's value for name into out (cap bytes, always terminated when
 * cap > 0). false when it did not fit. */
bool ztd_content_disposition(const char *name, char *out, size_t cap);

#endif
