/*
 * A small XML writer for the S3 front's answers (listings, errors, upload
 * results): elements opened and closed in order, text escaped, into one
 * growing buffer. Pure: unit tests reach it without a socket.
 *
 * Text and attribute values are escaped (& < > " '); bytes that XML 1.0
 * cannot carry at all (controls other than tab, LF and CR, and invalid
 * UTF-8) are written as U+FFFD, so the document always parses. A caller that
 * must keep such names exact uses encoding-type=url (the listing does).
 * Out of memory is sticky: every later call does nothing and
 * ztd_xml_finish() returns NULL.
 */
#ifndef ZTD_S3_XML_H
#define ZTD_S3_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/text_buf.h"

/* The document being written (failed: sticky out of memory). */
typedef ztd_text ztd_xml;

/* Starts a document with the XML declaration. */
void ztd_xml_begin(ztd_xml *x);
/* <name> with, when ns is not NULL, xmlns="ns". */
void ztd_xml_open(ztd_xml *x, const char *name, const char *ns);
void ztd_xml_close(ztd_xml *x, const char *name);
/* <name>text</name>, text n bytes (escaped). */
void ztd_xml_elem(ztd_xml *x, const char *name, const char *text, size_t n);
/* The same for a NUL-terminated text, and for a number. */
void ztd_xml_elem_str(ztd_xml *x, const char *name, const char *text);
void ztd_xml_elem_u64(ztd_xml *x, const char *name, uint64_t v);
/* Escaped text of n bytes inside the current element. */
void ztd_xml_text(ztd_xml *x, const char *text, size_t n);
/* The document (malloc'ed, NUL-terminated, *len bytes; the caller frees), or
 * NULL when memory ran out. x holds nothing afterwards. */
char *ztd_xml_finish(ztd_xml *x, size_t *len);
/* Frees what x holds (after an error path that does not finish it). */
void ztd_xml_discard(ztd_xml *x);

#endif
