/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_cursor.h - a bounds-checked reader over one DWARF section's bytes,
 * shared by symdb's own line-program and range-list parsers.
 *
 * A read past `end` sets `bad` and returns 0; callers check `bad` once after
 * a group of reads instead of after every field.  Integers are in the
 * object's byte order (`little`); LEB128 is DWARF 5 §7.6.
 */
#ifndef SYMDB_IX_DWARF_CURSOR_H
#define SYMDB_IX_DWARF_CURSOR_H

#include <stddef.h>
#include <stdint.h>

typedef struct ix_cursor {
	const uint8_t *p, *end;
	int little, bad;
} ix_cursor;

/* An n-byte (1..8) unsigned integer. */
static inline uint64_t ix_cursor_n(ix_cursor *c, unsigned n)
{
	uint64_t v = 0;

	if (c->bad || n > 8 || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * (c->little ? i : n - 1 - i));
	c->p += n;
	return v;
}

/* ULEB128; bits past 64 are dropped, as LLVM's decoder does. */
static inline uint64_t ix_cursor_uleb(ix_cursor *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0;; shift += 7) {
		uint8_t b;
		if (c->bad || c->p >= c->end) {
			c->bad = 1;
			return 0;
		}
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

/* SLEB128. */
static inline int64_t ix_cursor_sleb(ix_cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (c->bad || c->p >= c->end) {
			c->bad = 1;
			return 0;
		}
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A NUL-terminated string inside the section, or NULL (and bad). */
static inline const char *ix_cursor_cstr(ix_cursor *c)
{
	const uint8_t *s = c->p;

	while (c->p < c->end && *c->p)
		c->p++;
	if (c->p >= c->end) {
		c->bad = 1;
		return NULL;
	}
	c->p++;
	return (const char *)s;
}

#endif /* SYMDB_IX_DWARF_CURSOR_H */
