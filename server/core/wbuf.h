/*
 * Writing a file through a memory buffer: fill the buffer from what arrives,
 * and write it out whole when it is full (write(2) and pwrite(2) may take
 * less than they are given, or be interrupted).
 */
#ifndef ZTD_WBUF_H
#define ZTD_WBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Copy from *data (*n bytes) into buf (*blen bytes used of cap) as much as
 * fits, advancing *data and *n. True when buf is then full. */
bool ztd_wbuf_fill(uint8_t *buf, size_t *blen, size_t cap, const uint8_t **data, size_t *n);

/* All n bytes of p to fd (at its offset / at off): 0, or -1 with errno. */
int ztd_write_all(int fd, const void *p, size_t n);
int ztd_pwrite_all(int fd, const void *p, size_t n, uint64_t off);

#endif
