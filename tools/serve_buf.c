/* SPDX-License-Identifier: MIT */
/*
 * serve_buf.c - the server's growable output buffer (serve.h): responses
 * are written into it by hand, field by field, and JSON strings escaped on
 * the way.  An allocation failure or the caller's size limit sets `oom` and
 * drops everything after it, so a writer formats a whole response and
 * checks once at the end instead of after every field.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"
#include "serve_batch.h"

/* Room for n more bytes; false (and oom set) when there can be none. */
static bool buf_reserve(struct serve_buf *b, size_t n)
{
	if (b->oom)
		return false;
	if (n > SIZE_MAX / 2 - b->len || (b->limit && b->len + n > b->limit)) {
		b->oom = true;
		return false;
	}
	if (b->len + n <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void serve_buf_put(struct serve_buf *b, const void *data, size_t n)
{
	if (n && buf_reserve(b, n)) {
		memcpy(b->p + b->len, data, n);
		b->len += n;
	}
}

void serve_buf_str(struct serve_buf *b, const char *s)
{
	serve_buf_put(b, s, strlen(s));
}

void serve_buf_printf(struct serve_buf *b, const char *fmt, ...)
{
	char small[128];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		serve_buf_put(b, small, (size_t)n);
		return;
	}
	if (!buf_reserve(b, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when the
 * bytes there are not one (RFC 3629: no overlong forms, no surrogates, no
 * code point past U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned min;
	if (c < 0xc2 || c > 0xf4)
		return 0;
	if (c < 0xe0)
		len = 2, min = 0x80;
	else if (c < 0xf0)
		len = 3, min = 0x800;
	else
		len = 4, min = 0x10000;
	if (len > n)
		return 0;
	unsigned cp = c & (0x7fu >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* 1 for the bytes that pass through unchanged: printable ASCII but '"' and
 * '\'.  A table: this test runs once per byte of every name and path. */
#define P16 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
#define Z16 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
static const unsigned char plain[256] = {
	Z16, Z16,
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x20: '"' */
	P16, P16,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x50: '\' */
	P16,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, /* 0x70: DEL */
	Z16, Z16, Z16, Z16, Z16, Z16, Z16, Z16,
};

char *serve_buf_json_raw(char *d, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	*d++ = '"';
	size_t i = 0;
	while (i < n) {
		size_t run = i;
		while (run < n && plain[u[run]])
			run++;
		memcpy(d, u + i, run - i);
		d += run - i;
		if (run == n)
			break;
		i = run;
		unsigned char c = u[i];
		size_t len = c >= 0x80 ? utf8_len(u + i, n - i) : 0;
		if (len) {
			memcpy(d, u + i, len);
			d += len;
			i += len;
			continue;
		}
		*d++ = '\\';
		if (c == '"' || c == '\\') {
			*d++ = (char)c;
		} else if (c == '\n' || c == '\t' || c == '\r') {
			*d++ = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		} else { /* a control character or a stray byte */
			memcpy(d, "u00", 3);
			d[3] = hex[c >> 4];
			d[4] = hex[c & 15];
			d += 5;
		}
		i++;
	}
	*d++ = '"';
	return d;
}

void serve_buf_json_str(struct serve_buf *b, const char *s, size_t n)
{
	if (n > (SIZE_MAX - 2) / 6) {
		b->oom = true;
		return;
	}
	if (buf_reserve(b, 6 * n + 2))
		b->len = (size_t)(serve_buf_json_raw(b->p + b->len, s, n) - b->p);
}

char *serve_buf_take(struct serve_buf *b, size_t *len)
{
	char *p = b->p;
	*len = b->len;
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = false;
	return p;
}

void serve_buf_free(struct serve_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = false;
}
