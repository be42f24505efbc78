/*
 * How much of a response reached the client when it was cut short.
 * libmicrohttpd reports only that a response did not complete, not how far
 * it got; the kernel knows how many bytes of the connection the peer's TCP
 * acknowledged (Linux TCP_INFO, tcpi_bytes_acked). The difference between a
 * reading at a request's arrival and one at its completion is what that
 * request's response delivered.
 */
#ifndef ZTD_TCP_ACKED_H
#define ZTD_TCP_ACKED_H

#include <microhttpd.h>
#include <stdint.h>

/* Returned when the count is unknown: not a TCP socket, not Linux >= 4.1. */
#define ZTD_ACKED_UNKNOWN UINT64_MAX

/* Bytes of the connection's output the peer has acknowledged so far (with
 * TLS, ciphertext and record headers). One getsockopt(); about 0.15 us here. */
uint64_t ztd_tcp_acked(struct MHD_Connection *c);

/* Body bytes of a response that was cut short: the acknowledged bytes
 * between the two readings, at most body_len. That reading counts the
 * response's headers (a few hundred bytes) as body, and with TLS the record
 * overhead: both are small against the transfers where this matters and are
 * capped by body_len. 0 when either reading is unknown. Pure. */
uint64_t ztd_tcp_delivered(uint64_t acked_at_start, uint64_t acked_at_end, uint64_t body_len);

#endif
