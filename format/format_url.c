/* SPDX-License-Identifier: MIT */
/*
 * format_url.c - passwords out of printed text (symdb_url.h): the one
 * masking code of libsymdb (fetch errors), the CLI (usage errors) and
 * symdb-fetch (its status line, which may repeat a proxy's value).
 */
#define _GNU_SOURCE /* memmem */
#include "symdb_url.h"

#include <string.h>

/* Replace s[0..n) (inside line, a string in a buffer of sz) by with,
 * cutting the line at sz; returns where the text after with starts. */
static char *url_splice(char *line, size_t sz, char *s, size_t n, const char *with)
{
	size_t wl = strlen(with), off = (size_t)(s - line), tail = strlen(s + n) + 1;

	if (off + wl >= sz) {
		*s = 0; /* no room for with: the line ends here */
		return s;
	}
	if (off + wl + tail > sz)
		tail = sz - off - wl; /* cut at the end: the tail */
	memmove(s + wl, s + n, tail);
	s[wl + tail - 1] = 0;
	memcpy(s, with, wl);
	return s + wl;
}

void symdb_url_mask_after(char *line, size_t sz, const char *key, size_t kl, const char *pw,
                          size_t pl)
{
	char *p = line;

	while (kl && (p = memmem(p, strlen(p), key, kl)) != NULL) {
		char *s = p + kl;
		size_t rest = strlen(s);
		if (!strncmp(s, "***", 3)) { /* masked already (two values alike) */
			p = s + 3;
			continue;
		}
		p = url_splice(line, sz, s, rest >= pl && !memcmp(s, pw, pl) ? pl : rest, "***");
	}
}

int symdb_url_mask(char *line, size_t sz)
{
	char *p = line;
	int n = 0;

	while ((p = strstr(p, "://")) != NULL) {
		char *u = p + 3, *at = NULL, *colon;
		size_t alen = strcspn(u, "/?# \t\r\n'\"");

		for (char *c = u; c < u + alen; c++) /* the authority's last '@' */
			if (*c == '@')
				at = c;
		colon = at ? memchr(u, ':', (size_t)(at - u)) : NULL;
		p = u;
		if (!colon || at == colon + 1 || (at - colon == 4 && !strncmp(colon + 1, "***", 3)))
			continue; /* no password, or masked already */
		p = url_splice(line, sz, colon + 1, (size_t)(at - colon - 1), "***");
		n++;
	}
	return n;
}
