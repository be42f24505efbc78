/*
 * Reading a file that holds secrets (the S3 keys file): it must be a regular
 * file that neither group nor others may read or write (mode 0600 or 0400),
 * and it is read whole, up to a cap, into memory the caller wipes.
 */
#ifndef ZTD_SECRET_FILE_H
#define ZTD_SECRET_FILE_H

#include <stddef.h>

/*
 * Read path whole. what names the file in messages ("S3 keys file"). Returns a malloc'd
 * buffer of *len bytes plus a NUL, which the caller wipes (ztd_secret_file_free) and frees; or
 * NULL and a message naming the file and the reason: cannot open, not a regular file, a mode
 * that lets group or others in (the message gives the mode and says to chmod 600), larger
 * than max bytes.
 */
char *ztd_secret_file_read(const char *path, const char *what, size_t max, size_t *len, char *err,
                           size_t errlen);
/* Zero len bytes at p, in a way the compiler does not drop. */
void ztd_secret_wipe(void *p, size_t len);
/* Zero and free what ztd_secret_file_read returned (NULL is fine). */
void ztd_secret_file_free(char *buf, size_t len);

#endif
