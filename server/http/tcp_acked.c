/*
 * Bytes a cut-short response delivered (see tcp_acked.h). Acknowledged, not
 * sent: bytes still in the server's send buffer when the client went away
 * never reached it, while bytes in the client's receive buffer did reach its
 * host, whether or not the client program read them.
 */
#include "http/tcp_acked.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>

uint64_t ztd_tcp_acked(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return ZTD_ACKED_UNKNOWN;
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    if (getsockopt(ci->connect_fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
        return ZTD_ACKED_UNKNOWN; /* e.g. a Unix socket from socket activation */
    if (len < offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof(ti.tcpi_bytes_acked))
        return ZTD_ACKED_UNKNOWN; /* a kernel older than 4.1 */
    return ti.tcpi_bytes_acked;
}

uint64_t ztd_tcp_delivered(uint64_t acked_at_start, uint64_t acked_at_end, uint64_t body_len)
{
    if (acked_at_start == ZTD_ACKED_UNKNOWN || acked_at_end == ZTD_ACKED_UNKNOWN ||
        acked_at_end < acked_at_start)
        return 0;
    uint64_t d = acked_at_end - acked_at_start;
    return d < body_len ? d : body_len;
}
