/*
 * zt pack's NAME=DTYPE:SHAPE:RAWFILE arguments, parsed without touching a
 * file: the name, the storage dtype and logical type (v2's extra ones under
 * --format v2), and the shape. Apart from cmd_pack's loop so that tests reach
 * it (tests/cli/test_pack_spec.c).
 */
#include "tool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Logical types v2 registers beyond zt_logical_type_info()'s, and v2's bool. */
static int parse_v2_type(const char *s, tool_pack_spec *sp)
{
    static const char *const u8_types[] = {"bool", "f8_e8m0", "f4_e2m1"};
    for (size_t i = 0; i < sizeof(u8_types) / sizeof(u8_types[0]); i++)
        if (!strcmp(s, u8_types[i])) {
            sp->dtype = ZT_DTYPE_U8;
            sp->type = u8_types[i];
            return 0;
        }
    return -1;
}

static int parse_dtype(const char *s, int v2, tool_pack_spec *sp)
{
    sp->type = NULL;
    if (v2 && parse_v2_type(s, sp) == 0)
        return 0;
    sp->dtype = zt_dtype_parse(s, strlen(s));
    if (!sp->dtype)
        sp->dtype = zt_dtype_parse_long(s, strlen(s));
    if (sp->dtype)
        return 0;
    unsigned ratio;
    if (zt_logical_type_info(s, &sp->dtype, &ratio)) {
        sp->type = s;
        return 0;
    }
    return -1;
}

static int parse_shape(char *s, tool_pack_spec *sp)
{
    sp->ndim = 0;
    if (!*s)
        return 0;
    for (char *tok = strtok(s, "x"); tok; tok = strtok(NULL, "x")) {
        char *end;
        errno = 0;
        if (sp->ndim == ZT_MAX_NDIM || *tok < '0' || *tok > '9')
            return -1;
        unsigned long long v = strtoull(tok, &end, 10);
        if (*end || errno)
            return -1;
        sp->shape[sp->ndim++] = v;
    }
    return 0;
}

int tool_pack_parse_spec(char *arg, int v2, tool_pack_spec *sp)
{
    char *eq = strchr(arg, '=');
    if (!eq)
        return -1;
    *eq = 0;
    sp->name = arg;
    char *dt = eq + 1, *c1 = strchr(dt, ':');
    if (!c1)
        return -1;
    *c1 = 0;
    char *sh = c1 + 1, *c2 = strchr(sh, ':');
    if (!c2 || !c2[1])
        return -1;
    *c2 = 0;
    sp->path = c2 + 1;
    if (parse_dtype(dt, v2, sp) != 0) {
        fprintf(stderr, "zt pack: \"%s\": unknown dtype \"%s\"\n", sp->name, dt);
        return -1;
    }
    if (parse_shape(sh, sp) != 0) {
        fprintf(stderr, "zt pack: \"%s\": bad shape (write it like 1024x768)\n", sp->name);
        return -1;
    }
    return 0;
}
