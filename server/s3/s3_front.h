/*
 * The S3-compatible front (docs/S3.md): path-style requests /{bucket}/{key}
 * on the same listener, for every path whose first segment is not one of
 * ztensord's own (http/router.h gives them all to ZTD_ROUTE_S3). main.c
 * configures it once (its buckets) and adds its row to the route table.
 */
#ifndef ZTD_S3_FRONT_H
#define ZTD_S3_FRONT_H

#include <stddef.h>

#include "core/config.h"
#include "http/routes.h"

/* The buckets from cfg->s3_buckets (checked when the configuration was
 * loaded). 0, or -1 with the reason in err. Call before serving. */
int ztd_s3_configure(const ztd_config *cfg, char *err, size_t errlen);
/* Releases what ztd_s3_configure made. */
void ztd_s3_unconfigure(void);
/* The front's row (ZTD_ROUTE_S3) of the route table. */
const ztd_route_def *ztd_s3_route(void);

#endif
