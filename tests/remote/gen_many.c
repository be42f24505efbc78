/*
 * gen_many.c: a .zt file of N small objects for t_pull.sh's request bound
 * (too many for zt pack's command line):
 *     gen_many OUT N BYTES
 * writes objects o000000…, each u8 [BYTES] of varied bytes with a sha256.
 */
#include <stdio.h>
#include <stdlib.h>
#include <ztensor/ztensor.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: gen_many OUT N BYTES\n");
        return 2;
    }
    long n = atol(argv[2]), bytes = atol(argv[3]);
    unsigned char *buf = malloc(bytes > 0 ? (size_t)bytes : 1);
    zt_writer *w;
    zt_error err;
    zt_writer_options wo;
    zt_writer_options_init(&wo);
    wo.fsync = 0;
    if (!buf || n < 1 || bytes < 1 || zt_writer_open(argv[1], &wo, &w, &err)) {
        fprintf(stderr, "gen_many: cannot start\n");
        return 1;
    }
    zt_component_spec cs = {
        .dtype = ZT_DTYPE_U8, .encoding = ZT_ENC_RAW, .digest = ZT_DIGEST_SHA256};
    zt_status st = ZT_OK;
    for (long i = 0; i < n && !st; i++) {
        for (long k = 0; k < bytes; k++)
            buf[k] = (unsigned char)(i * 131 + k * 7);
        char name[32];
        snprintf(name, sizeof(name), "o%06ld", i);
        size_t id;
        uint64_t shape = (uint64_t)bytes;
        const char *role = "data";
        st = zt_writer_begin(w, &cs, &err);
        if (!st)
            st = zt_writer_write(w, buf, (size_t)bytes, &err);
        if (!st)
            st = zt_writer_end(w, &id, &err);
        if (!st)
            st = zt_writer_add_object(w, name, "dense", 1, &shape, NULL, 1, &role, &id, &err);
    }
    if (!st)
        st = zt_writer_finish(w, &err);
    zt_writer_free(w);
    free(buf);
    if (st)
        fprintf(stderr, "gen_many: %s\n", err.message);
    return st ? 1 : 0;
}
