/*
 * The zTensor v2 container's fixed parts (spec §2.1-2.3): the 8-byte magic
 * at offset 0 and the 40-byte footer at EOF, which points at the manifest
 * blob and carries its XXH3-64. A pure function over the last 40 bytes and
 * the file size, so the fuzzers and the remote reader reach it without a
 * file. Everything it checks precedes any read of the manifest (§8.1).
 */
#include "internal.h"

#include <string.h>

const uint8_t zt__v2_magic[8] = {0x89, 'Z', 'T', '2', 0x0D, 0x0A, 0x1A, 0x0A};

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* §2.3 fields; the data-shard zeros of §7.2. */
static zt_status parse_fields(const uint8_t *tail, uint64_t size, zt__v2_footer *out, zt_error *err)
{
    uint64_t at = size - ZT_V2_FOOTER;
    if (memcmp(tail + 32, zt__v2_magic, 8) != 0)
        return ZT_V2_FAIL(err, ZT_E_MAGIC, NULL, NULL, 1, size - 8, "§2.3",
                          "no footer magic at the end of the file: truncated, or not ending "
                          "in a footer after a crashed append (§2.5)");
    out->manifest_offset = zt__le64(tail);
    out->manifest_length = zt__le64(tail + 8);
    out->manifest_hash = zt__le64(tail + 16);
    out->version = le32(tail + 24);
    /* tail + 28: reserved, which readers MUST ignore */
    if (out->version != ZT_FORMAT_V2)
        return ZT_V2_FAIL(err, ZT_E_VERSION, NULL, NULL, 1, at + 24, "§2.3",
                          "footer version %u; this reader supports version 2", out->version);
    if (out->manifest_length == 0 && (out->manifest_offset || out->manifest_hash))
        return ZT_V2_FAIL(err, ZT_E_MANIFEST_SIZE, NULL, NULL, 1, at, "§2.3",
                          "manifest_length is 0 (a data shard) but manifest_offset is %llu and "
                          "manifest_hash %016llx: both must be 0",
                          (unsigned long long)out->manifest_offset,
                          (unsigned long long)out->manifest_hash);
    return ZT_OK;
}

zt_status zt__v2_footer_parse(const uint8_t *tail, uint64_t size, uint64_t max_manifest,
                              zt__v2_footer *out, zt_error *err)
{
    if (size < 8 + ZT_V2_FOOTER)
        return ZT_V2_FAIL(err, ZT_E_TRUNCATED, NULL, NULL, 1, size, "§2.1",
                          "file is %llu bytes; the magic and the footer alone are 48",
                          (unsigned long long)size);
    zt_status st = parse_fields(tail, size, out, err);
    if (st || out->manifest_length == 0)
        return st;
    uint64_t at = size - ZT_V2_FOOTER, off = out->manifest_offset, len = out->manifest_length;
    if (len > ZT_V2_MAX_MANIFEST)
        return ZT_V2_FAIL(err, ZT_E_LIMIT, NULL, NULL, 1, at + 8, "§3.1",
                          "manifest_length %llu exceeds 1 GiB", (unsigned long long)len);
    if (max_manifest && len > max_manifest)
        return ZT_V2_FAIL(err, ZT_E_LIMIT, NULL, NULL, 1, at + 8, "§3.1",
                          "manifest_length %llu exceeds the limit of %llu bytes",
                          (unsigned long long)len, (unsigned long long)max_manifest);
    if (off % ZT_V2_ALIGN || off < ZT_V2_ALIGN)
        return ZT_V2_FAIL(err, ZT_E_ALIGN, NULL, NULL, 1, at, "§2.4",
                          "manifest_offset %llu is not a multiple of 4096 at or after 4096",
                          (unsigned long long)off);
    uint64_t end;
    if (!zt__add_ok(off, len, &end) || end > at)
        return ZT_V2_FAIL(err, ZT_E_BOUNDS, NULL, NULL, 1, at, "§2.4",
                          "manifest blob [%llu, +%llu) runs into the footer at %llu",
                          (unsigned long long)off, (unsigned long long)len, (unsigned long long)at);
    return ZT_OK;
}
