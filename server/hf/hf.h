/*
 * The Hugging Face Hub front (docs/HF.md): the read API that huggingface_hub
 * and @huggingface/hub use, under /hf, over the same catalog, validators and
 * send path as /v1. A repository is a directory of the root ("org/name", or
 * a one-level "name"), a revision is "main" or the commit id of the
 * repository's file set. main.c puts this row in the route table.
 */
#ifndef ZTD_HF_H
#define ZTD_HF_H

#include "http/routes.h"

/* The row for ZTD_ROUTE_HF. Static storage. */
const ztd_route_def *ztd_hf_route(void);

#endif
