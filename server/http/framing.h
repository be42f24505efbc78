/*
 * framing.h: RFC 9112 message framing of a request's head, checked before any body is read.
 *
 * libmicrohttpd 0.9.75 frames bodies leniently (see docs/API.md, "Request framing"): it takes
 * the first of several Content-Length values, lets Transfer-Encoding win over Content-Length
 * and keeps the connection open, keeps a header named "Content-Length " (space before the
 * colon) as an unknown header, reads an unknown transfer coding as a body that ends only
 * when the connection does, and cuts the request target at a NUL byte. Behind a proxy that
 * frames the same bytes differently, each of these lets a client smuggle a request. This
 * module decides, from what libmicrohttpd hands the access handler on its first call,
 * whether the request is framed unambiguously; the server refuses it otherwise and closes
 * the connection (RFC 9112 §6.1, §6.3; RFC 9110 §8.6).
 *
 * It is a pure, incremental function over strings, so unit tests and a fuzzer drive it
 * without a socket: ztd_framing_begin() with the request line, ztd_framing_header() once per
 * header line in the order received (duplicates included), ztd_framing_end() for the verdict.
 * Nothing is allocated; the struct holds everything.
 *
 * Rules, each a 400 `bad_request` unless said otherwise (the first one broken is reported):
 *   - The version is HTTP/1.0 or HTTP/1.x (libmicrohttpd answers other versions itself).
 *   - The target holds no NUL byte (target's length differs from its length on the wire).
 *   - Absolute-form (RFC 9112 §3.2.2), "http://" or "https://" (scheme in any case): the
 *     authority must be a non-empty host[:port] (no userinfo); the route is taken from the
 *     path after it ("/" when there is none). Other forms are left to the router.
 *   - Header names are tokens (RFC 9110 §5.1): no whitespace (so "Content-Length : 5" is
 *     refused), no separators, not empty. Header values hold no NUL byte (RFC 9110 §5.5; the
 *     caller passes a value's length on the wire, see head_wire.h) and no other control
 *     character but HTAB (a bare CR, for one).
 *   - Host: exactly one in HTTP/1.1, at most one in HTTP/1.0; its value is empty or
 *     host[:port] characters (RFC 9112 §3.2).
 *   - Content-Length: at most one header, 1 to 19 digits (a list, a sign or a second header,
 *     even with the same value, is refused, as nginx does).
 *   - Transfer-Encoding and Content-Length together: refused (RFC 9112 §6.3 point 3).
 *   - Transfer-Encoding: one header whose value is exactly "chunked" (any case), in HTTP/1.1.
 *     In HTTP/1.0 it is refused (§6.1: faulty framing). When chunked is not the final coding
 *     (e.g. "identity", "chunked, gzip"), the length is unknown: 400 (§6.3 point 4). When it
 *     is final but other codings come before it ("gzip, chunked"): 501 `not_implemented`
 *     (§6.1: a coding the server does not understand). Anything else that is not exactly
 *     "chunked" ("chunked" twice, parameters, trailing whitespace, empty list members, which
 *     libmicrohttpd would not read as chunked either): 400.
 * On success it also reports what the rest of the request needs: whether a body follows and
 * how it is framed, whether the client waits for 100 Continue, and where the path starts.
 */
#ifndef ZTD_FRAMING_H
#define ZTD_FRAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ztd_framing {
    /* Verdict, final after ztd_framing_end(). status 0 = acceptable; otherwise 400 or 501 with
     * an error code ("bad_request", "not_implemented") and a static message. */
    unsigned status;
    const char *code;
    const char *message;

    /* What the request says, valid when status is 0. */
    bool chunked;            /* Transfer-Encoding: chunked */
    bool has_length;         /* a Content-Length header */
    uint64_t content_length; /* its value */
    bool has_body;           /* chunked, or Content-Length > 0 */
    bool expect_continue;    /* HTTP/1.1 and Expect: 100-continue: the body waits for 100 */
    /* The origin-form path to route: the target itself, a pointer into it after an
     * absolute-form authority, or a static "/" when the absolute form has no path. It still
     * carries the query, if any. Borrowed from the target given to ztd_framing_begin(). */
    const char *path;

    /* Internal state. */
    int minor; /* HTTP/1.minor; -1 when the version is not HTTP/1.x */
    unsigned hosts, lengths, encodings;
    bool te_exact;       /* the only Transfer-Encoding value is exactly "chunked" */
    bool te_last_chunk;  /* the last coding seen so far is chunked */
    bool te_other;       /* a coding other than chunked was seen */
    unsigned te_chunked; /* chunked codings seen */
} ztd_framing;

/* Start a request. version: as sent ("HTTP/1.1"). target: the request target as a C string
 * (libmicrohttpd cuts it at a NUL byte); sent_len: its length on the wire, bytes after a NUL
 * included (pass strlen(target) when it is not known). Both strings are borrowed and must
 * outlive f (f->path points into target). */
void ztd_framing_begin(ztd_framing *f, const char *version, const char *target, size_t sent_len);

/* One header line, in the order received. name and value are not NUL-terminated; the value is
 * as libmicrohttpd gives it (leading whitespace removed, trailing whitespace kept), value_len
 * its length on the wire: NUL bytes in it, which cut libmicrohttpd's C string, included. */
void ztd_framing_header(ztd_framing *f, const char *name, size_t name_len, const char *value,
                        size_t value_len);

/* The verdict: f->status (0, 400 or 501), also returned. */
unsigned ztd_framing_end(ztd_framing *f);

#ifdef __cplusplus
}
#endif

#endif /* ZTD_FRAMING_H */
