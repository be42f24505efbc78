/*
 * Header magic, footer, and where the manifest is. Decides between the 1.2
 * layout (… manifest, u64 size, "ZTEN1000") and the 1.0 layout (… manifest,
 * u64 size). The two cannot be confused: read as a little-endian u64, the
 * footer magic is 0x303030314E45545A (~3.5e18), larger than any file, so a
 * file ending in the magic is never a valid 1.0 file.
 */
#include "internal.h"

#include <string.h>

static const char k_magic[8] = {'Z', 'T', 'E', 'N', '1', '0', '0', '0'};

zt_status zt__footer_locate(const uint8_t *head, const uint8_t *tail, uint64_t size,
                            uint64_t max_manifest, zt__layout *out, zt_error *err)
{
    /* tail holds the last min(size, 16) bytes of the file */
    const uint8_t *end = tail + (size < 16 ? size : 16);
    if (size < 8)
        return zt__fail(err, ZT_E_TRUNCATED, NULL, NULL, 1, size,
                        "file is %llu bytes, too short for the 8-byte header magic",
                        (unsigned long long)size);
    if (memcmp(head, k_magic, 8) != 0)
        return zt__fail(err, ZT_E_MAGIC, NULL, NULL, 1, 0, "header magic is not \"ZTEN1000\"");
    if (size < 16)
        return zt__fail(err, ZT_E_TRUNCATED, NULL, NULL, 1, size,
                        "file is %llu bytes, too short for a manifest size",
                        (unsigned long long)size);
    if (max_manifest == 0 || max_manifest > ZT_SPEC_MAX_MANIFEST)
        max_manifest = ZT_SPEC_MAX_MANIFEST;

    uint64_t msize, mend;
    if (size >= 24 && memcmp(end - 8, k_magic, 8) == 0) {
        out->kind = ZT_KIND_ZT_1_2;
        msize = zt__le64(end - 16);
        mend = size - 16;
    } else {
        out->kind = ZT_KIND_ZT_1_0;
        msize = zt__le64(end - 8);
        mend = size - 8;
        /* A 1.2 file cut short loses its footer magic: say so rather than
         * reporting a nonsense 1.0 size. */
        if (msize > size) {
            return zt__fail(err, ZT_E_TRUNCATED, NULL, NULL, 1, size - 8,
                            "no footer magic \"ZTEN1000\" at the end and the last 8 bytes are "
                            "not a plausible manifest size (%llu): file truncated or not .zt",
                            (unsigned long long)msize);
        }
    }
    if (msize == 0)
        return zt__fail(err, ZT_E_MANIFEST_SIZE, NULL, NULL, 1, mend, "manifest size is 0");
    if (msize > max_manifest)
        return zt__fail(err, ZT_E_LIMIT, NULL, NULL, 1, mend,
                        "manifest size %llu exceeds the limit of %llu bytes",
                        (unsigned long long)msize, (unsigned long long)max_manifest);
    if (msize > mend - 8)
        return zt__fail(err, ZT_E_MANIFEST_SIZE, NULL, NULL, 1, mend,
                        "manifest size %llu does not fit in a file of %llu bytes",
                        (unsigned long long)msize, (unsigned long long)size);
    out->manifest_offset = mend - msize;
    out->manifest_length = msize;
    return ZT_OK;
}
