/*
 * cli_test.h: what every tests/cli test includes: cmocka (in the order it
 * needs) and the zt tool's declarations (cli/tool.h).
 */
#ifndef CLI_TEST_H
#define CLI_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "tool.h"

#endif
