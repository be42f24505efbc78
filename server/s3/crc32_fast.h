/*
 * CRC-32 (the zlib / x-amz-checksum-crc32 one: reflected 0x04C11DB7, init
 * and xorout all ones) at memory speed: 128-bit carry-less multiplication
 * folding (PCLMULQDQ, Intel's "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ") where the CPU has it, zlib's crc32() otherwise and for
 * the last few bytes. zlib 1.2.13 is table-driven, about 3 GB/s here;
 * folding runs at several times that.
 */
#ifndef ZTD_CRC32_FAST_H
#define ZTD_CRC32_FAST_H

#include <stddef.h>
#include <stdint.h>

/* Exactly zlib's crc32(crc, p, n), chainable the same way (start from 0). */
uint32_t ztd_crc32(uint32_t crc, const void *p, size_t n);
/* The same with the folding switched off: zlib only (for the tests). */
uint32_t ztd_crc32_portable(uint32_t crc, const void *p, size_t n);
/* Does this CPU take the folding path? */
int ztd_crc32_folds(void);

#endif
