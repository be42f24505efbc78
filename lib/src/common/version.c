/*
 * The version of the loaded library, for programs that link it dynamically
 * and want to know what they got rather than what they were compiled with.
 */
#include "internal.h"

unsigned zt_version_number(void)
{
    return ZT_VERSION_NUMBER;
}

const char *zt_version_string(void)
{
    return ZT_VERSION_STRING;
}
