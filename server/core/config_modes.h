/*
 * Options that do nothing in the mode the other options choose: cache_size
 * without upstream, listen_mode on a TCP address, upload limits with uploads
 * off... Such an option is harmless, so it is a warning, not a refusal (options
 * that contradict each other are refused by ztd_config_load). One table in
 * config_modes.c names each option and the mode in which it does nothing;
 * docs/CONFIG.md lists it.
 */
#ifndef ZTD_CONFIG_MODES_H
#define ZTD_CONFIG_MODES_H

#include <stddef.h>
#include <stdio.h>

#include "core/config.h"

/* Called once per unused option with a one-line message naming it and why. */
typedef void (*ztd_config_unused_fn)(void *ud, const char *msg);

/* For each option set (to other than its default) that does nothing with the
 * rest of *c, calls fn. Returns how many there were. Pure: reads only *c. */
size_t ztd_config_unused(const ztd_config *c, ztd_config_unused_fn fn, void *ud);

/* The section of docs/CONFIG.md that lists them, after ztd_config_markdown(). */
void ztd_config_modes_markdown(FILE *f);

#endif
