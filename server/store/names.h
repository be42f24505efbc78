/*
 * The name rules of the served tree, in one place below every layer that
 * takes names: which files are tensor files (by extension; every other file
 * is a plain file, store/catalog.h), and which paths a client may ask for
 * (the traversal rules). The router applies them to URLs,
 * the catalog to the files it finds, and the upstream layer to an origin's
 * listing. Pure functions.
 */
#ifndef ZTD_NAMES_H
#define ZTD_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* Why the decoded name s[0..n) is not a name (a NUL byte, invalid UTF-8), or NULL. */
const char *ztd_name_problem(const char *s, size_t n);

/* Does the decoded name s[0..n) end in one of the tensor extensions (.zt, .safetensors, .alt;
 * case-sensitive)? The rule that ends a tensor file's {file} in a URL, and the catalog's rule
 * for which files are tensor files (the others are plain files). */
bool ztd_file_ext_served(const char *s, size_t n);

/* Why the decoded file path s[0..n) could not be asked for in a URL (NUL, invalid
 * UTF-8, absolute, an empty segment, a segment starting with '.'), or NULL when it
 * can. Names from elsewhere (an upstream's listing) go through it before they are
 * listed or fetched. */
const char *ztd_file_path_problem(const char *s, size_t n);

#endif
