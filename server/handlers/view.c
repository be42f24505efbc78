/*
 * GET|HEAD /v1/files/{file}/safetensors: the file's safetensors view
 * (http/view_answer.h) for the file the route names.
 */
#include "handlers/handlers.h"
#include "http/view_answer.h"

enum MHD_Result ztd_read_view(ztd_server *s, struct MHD_Connection *c, ztd_req *r)
{
    return ztd_answer_file(s, c, r, ztd_answer_view);
}
