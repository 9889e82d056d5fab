/* SPDX-License-Identifier: MIT */
/**
 * @file symdb_url.h
 * @brief Passwords out of printed text: a URL's "user:password@" is shown
 *        as "user:***@" wherever symdb prints a fetch source's or a
 *        proxy's URL (SPEC §12.9), by libsymdb, the CLI and symdb-fetch
 *        alike, through these functions.
 *
 * Each works in place on a NUL-terminated line held in a buffer of sz
 * bytes and never writes past it: a line that grows ("***" is longer than
 * a short password) is cut at the end.
 *
 * This header is part of libsymdb's public API and depends on nothing but
 * libc (format_url.c; symdb-fetch compiles that file too, as it links no
 * symdb library).
 */
#ifndef SYMDB_URL_H
#define SYMDB_URL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef SYMDB_API
#if defined(__GNUC__)
#define SYMDB_API __attribute__((visibility("default")))
#else
#define SYMDB_API
#endif
#endif

/**
 * @brief symdb_url_mask() replaces the password of every URL in line
 *        ("scheme://user:password@host...") by "***".
 * @return the number of passwords masked.
 * @note The password is what lies between the user part's first ':' and
 *       the authority's last '@' (the authority ending at '/', '?', '#',
 *       a space or a quote), as URL parsers split it.  Thread-safe.
 */
SYMDB_API int symdb_url_mask(char *line, size_t sz);

/**
 * @brief symdb_url_mask_after() replaces, after each occurrence of
 *        key[0..kl) in line, the password pw[0..pl) by "***"; when
 *        something else follows there (a value cut inside its password),
 *        all of the rest of the line.  For a value known to hold a
 *        password (a proxy variable's) that text may repeat cut.
 * @note Thread-safe.
 */
SYMDB_API void symdb_url_mask_after(char *line, size_t sz, const char *key, size_t kl,
                                    const char *pw, size_t pl);

#ifdef __cplusplus
}
#endif
#endif /* SYMDB_URL_H */
