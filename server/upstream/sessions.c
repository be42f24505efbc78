/*
 * The upstream's libztensor-remote sessions (see internal.h): one per thread,
 * made on first use and freed when the thread ends, so that no lock is held
 * across the network: opens (footer and manifest, bounded by
 * upstream_timeout with retries included) and fills (bounded by stalls and
 * the minimum rate, not by a total).
 */
#include "upstream/internal.h"

zt_remote *ztd_up_thread_session(ztd_upstream *u)
{
    zt_remote *s = pthread_getspecific(u->fill_session);
    if (!s && zt_remote_new(&u->opt, &s, NULL) == ZT_OK) /* reads only: flags do not matter */
        pthread_setspecific(u->fill_session, s);
    return s;
}

zt_remote *ztd_up_open_session(ztd_upstream *u, zt_error *ze)
{
    zt_remote *s = pthread_getspecific(u->open_session);
    if (s)
        return s;
    /* made once the kind is known: it says how URLs are read */
    zt_remote_options o = u->opt;
    o.flags = ztd_upstream_is_ztensord(u) ? 0 : ZT_REMOTE_PLAIN_URL;
    o.total_timeout = u->open_timeout;
    if (zt_remote_new(&o, &s, ze) != ZT_OK)
        return NULL;
    pthread_setspecific(u->open_session, s);
    return s;
}
