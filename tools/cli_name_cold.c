/* SPDX-License-Identifier: MIT */
/*
 * cli_name_cold.c - demangled names kept LZ4-compressed, so that a name is
 * demangled once per run even when an image has more of them than the
 * printer's two generations hold (cli_output.c).
 *
 * A large C++ image's distinct demangled names come to 60-72 MB (ceph-osd:
 * 109,087 names of 544 bytes on average); the generations hold 24-48 MB of
 * them, so on addresses spread over the whole image every name was
 * demangled 3.7 times on average (398,255 calls), a quarter of the run's
 * CPU.  Compressed one by one, such names take 3.5x less room (59.3 MB to
 * 16.7 MB), and decompressing one costs about 0.3 us against 3-10 us for
 * demangling it.  So the demangled names of a generation about to be
 * dropped are stored here (those the current generation does not hold),
 * and a name missing from both generations is looked up here before the
 * demangler is called.  A run whose names fit in the generations never
 * compresses one.  Names printed as themselves (C names) are not stored:
 * they cost no demangling.
 *
 * Memory is bounded: CLI_COLD_SLOTS slots (at most three quarters used)
 * and an arena of CLI_COLD_ARENA bytes, both touched only as far as they
 * are used.  When either is full, names are no longer added and the ones
 * stored stay: the first names of a run are as likely to come back as any.
 */
#include "cli_output.h"

#include <lz4.h>
#include <stdlib.h>
#include <string.h>

#ifndef CLI_COLD_ARENA /* a test build makes it small (tests/unit/test_cli_names.c) */
#define CLI_COLD_ARENA (24u << 20)
#endif
#define COLD_HEAD 4u /* a record: u32 shown length | CLI_NAME_PLAIN, then LZ4 bytes */

static size_t cold_hash(const char *name)
{
	return (size_t)(((uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15ull) >> 32) &
	       (CLI_COLD_SLOTS - 1);
}

/* The slot of name, or the empty slot where it would go. */
static struct cli_cold_slot *cold_probe(const struct cli_name_cold *c, const char *name)
{
	size_t h = cold_hash(name);
	while (c->slot[h].key && c->slot[h].key != name)
		h = (h + 1) & (CLI_COLD_SLOTS - 1);
	return &c->slot[h];
}

int cli_name_cold_get(const struct cli_name_cold *c, const char *name, char **buf,
                      size_t *cap, uint32_t *len)
{
	if (!c->slot)
		return 0;
	const struct cli_cold_slot *s = cold_probe(c, name);
	if (!s->key)
		return 0;
	uint32_t l;
	memcpy(&l, c->arena + s->off, sizeof l);
	size_t n = (l & ~CLI_NAME_PLAIN) + 1;
	if (*cap < n) {
		char *nb = realloc(*buf, n);
		if (!nb)
			return 0; /* (the caller demangles it instead) */
		*buf = nb;
		*cap = n;
	}
	int got = LZ4_decompress_safe(c->arena + s->off + COLD_HEAD, *buf, (int)s->clen,
	                              (int)(n - 1));
	if (got != (int)(n - 1))
		return 0; /* cannot happen: the bytes are our own */
	(*buf)[n - 1] = '\0';
	*len = l;
	return 1;
}

void cli_name_cold_put(struct cli_name_cold *c, const char *name, const char *text,
                       uint32_t len)
{
	size_t n = len & ~CLI_NAME_PLAIN;
	if (c->full || n > (size_t)LZ4_MAX_INPUT_SIZE)
		return;
	if (!c->slot) {
		/* calloc and malloc of these sizes map fresh pages: only the
		 * slots and bytes used are touched */
		c->slot = calloc(CLI_COLD_SLOTS, sizeof(*c->slot));
		c->arena = malloc(CLI_COLD_ARENA);
		if (!c->slot || !c->arena) {
			cli_name_cold_fini(c);
			c->full = 1;
			return;
		}
	}
	if (c->used + 1 > CLI_COLD_SLOTS / 4 * 3 || CLI_COLD_ARENA - c->alen <= COLD_HEAD) {
		c->full = 1;
		return;
	}
	struct cli_cold_slot *s = cold_probe(c, name);
	if (s->key)
		return; /* (stored already) */
	char *rec = c->arena + c->alen;
	size_t room = CLI_COLD_ARENA - c->alen - COLD_HEAD;
	int clen = LZ4_compress_default(text, rec + COLD_HEAD, (int)n,
	                                room > (size_t)INT32_MAX ? INT32_MAX : (int)room);
	if (clen <= 0) { /* does not fit: the arena is full */
		c->full = 1;
		return;
	}
	memcpy(rec, &len, sizeof len);
	s->key = name;
	s->off = (uint32_t)c->alen;
	s->clen = (uint32_t)clen;
	c->alen += COLD_HEAD + (size_t)clen;
	c->used++;
}

void cli_name_cold_clear(struct cli_name_cold *c)
{
	if (c->slot)
		memset(c->slot, 0, CLI_COLD_SLOTS * sizeof(*c->slot));
	c->used = c->alen = 0;
	c->full = 0;
}

void cli_name_cold_fini(struct cli_name_cold *c)
{
	free(c->slot);
	free(c->arena);
	memset(c, 0, sizeof(*c));
}
