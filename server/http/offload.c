/* Blocking work off libmicrohttpd's threads (see offload.h). */
#include "http/offload.h"

#include <stddef.h>

static void run(ztd_job *job)
{
    ztd_offload *o = (ztd_offload *)((char *)job - offsetof(ztd_offload, job));
    struct MHD_Connection *c = o->c;
    o->fn(o);
    __atomic_store_n(&o->done, 1, __ATOMIC_RELEASE);
    /* o may be freed once the connection runs again: not touched after this. */
    MHD_resume_connection(c);
}

static bool start_on(struct ztd_workq *q, struct MHD_Connection *c, ztd_offload *o,
                     void (*fn)(ztd_offload *o))
{
    o->fn = fn;
    o->c = c;
    o->started = true;
    if (!q) {
        fn(o);
        __atomic_store_n(&o->done, 1, __ATOMIC_RELEASE);
        return true;
    }
    o->job.run = run;
    MHD_suspend_connection(c); /* before the job exists: it may resume at once */
    ztd_workq_submit(q, &o->job);
    return false;
}

bool ztd_offload_start(ztd_server *s, struct MHD_Connection *c, ztd_offload *o,
                       void (*fn)(ztd_offload *o))
{
    return start_on(s->workq, c, o, fn);
}

bool ztd_offload_wait(ztd_server *s, struct MHD_Connection *c, ztd_offload *o,
                      void (*fn)(ztd_offload *o))
{
    return start_on(s->waitq ? s->waitq : s->workq, c, o, fn);
}

bool ztd_offload_done(const ztd_offload *o)
{
    return __atomic_load_n(&o->done, __ATOMIC_ACQUIRE) != 0;
}
