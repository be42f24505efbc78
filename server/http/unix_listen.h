/*
 * The Unix socket that `--listen unix:PATH` serves on, for clients on the
 * same host (a sidecar's pods, `curl --unix-socket`). Binding it is more than
 * bind(): the file has an owner-chosen mode, a file left by a server that
 * died must not stop a restart, and a file that is not a socket, or a socket
 * another server still answers on, must never be removed.
 */
#ifndef ZTD_UNIX_LISTEN_H
#define ZTD_UNIX_LISTEN_H

#include <stdbool.h>

/* Which socket file this process made: removal checks it is still that one. */
typedef struct ztd_unix_id {
    bool made;
    unsigned long long dev, ino;
} ztd_unix_id;

/* Listens on a new Unix stream socket at path with permissions mode. A
 * socket file already at path is removed first when connecting to it is
 * refused (its server is gone); a socket that answers, or any other kind of
 * file, makes it fail. Returns the listening fd (close-on-exec) and fills
 * *id, or returns -1 having logged why. */
int ztd_unix_listen(const char *path, unsigned mode, ztd_unix_id *id);

/* Removes the socket file at path if it is still the one *id names (another
 * server may have replaced it since), and clears *id. Accepts a cleared id. */
void ztd_unix_unlink(const char *path, ztd_unix_id *id);

#endif
