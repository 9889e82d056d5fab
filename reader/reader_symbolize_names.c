/* SPDX-License-Identifier: MIT */
/*
 * reader_symbolize_names.c - the demangled-name cache of a symbolize context
 * (struct rd_names): open addressing over a fixed table keyed by name
 * pointer, results copied into blocks that are reused from call to call.
 * A block is never moved once it holds a name of the current call, so every
 * pointer handed out stays valid until the next rd_names_begin().
 */
#include <stdlib.h>
#include <string.h>

#include "reader_symbolize.h"

#define RD_NAME_SLOTS 16384u         /* power of two */
#define RD_NAME_BLOCK (64u * 1024)   /* arena block size (bigger for a long name) */
#define RD_NAME_BYTES_MAX (8u << 20) /* demangled bytes kept at most across calls */

static size_t name_hash(const char *name)
{
	return (size_t)(((uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15ull) >> 32) &
	       (RD_NAME_SLOTS - 1);
}

void rd_names_begin(struct rd_names *c)
{
	if (c->used < RD_NAME_SLOTS / 2 && c->bytes <= RD_NAME_BYTES_MAX)
		return;
	rd_names_clear(c);
}

void rd_names_clear(struct rd_names *c)
{
	if (c->slot)
		memset(c->slot, 0, RD_NAME_SLOTS * sizeof(*c->slot));
	c->used = 0;
	c->cur = c->off = c->bytes = 0;
}

/* len bytes of arena that stay put until the next clear, or NULL. */
static char *arena_take(struct rd_names *c, size_t len)
{
	if (c->cur < c->nblk && len <= c->blk[c->cur].cap - c->off) {
		char *p = c->blk[c->cur].p + c->off;
		c->off += len;
		c->bytes += len;
		return p;
	}
	/* The next block: unused in this call, so it may be replaced. */
	size_t next = c->cur < c->nblk ? c->cur + 1 : c->nblk;
	if (c->nblk > 0 && c->off == 0 && c->cur < c->nblk)
		next = c->cur; /* the current block is still empty (too small) */
	if (next == c->nblk) {
		if (c->nblk == c->blk_cap) {
			size_t nc = c->blk_cap ? 2 * c->blk_cap : 8;
			struct rd_name_block *nb = realloc(c->blk, nc * sizeof(*nb));
			if (!nb)
				return NULL;
			c->blk = nb;
			c->blk_cap = nc;
		}
		c->blk[c->nblk].p = NULL;
		c->blk[c->nblk].cap = 0;
		c->nblk++;
	}
	struct rd_name_block *b = &c->blk[next];
	if (b->cap < len) {
		size_t cap = len > RD_NAME_BLOCK ? len : RD_NAME_BLOCK;
		char *np = realloc(b->p, cap);
		if (!np)
			return NULL;
		b->p = np;
		b->cap = cap;
	}
	c->cur = next;
	c->off = len;
	c->bytes += len;
	return b->p;
}

/* Demangle into the arena: name itself when it does not demangle. */
static const char *demangle_copy(struct rd_names *c, const char *name)
{
	int rc = symdb_demangle(name, &c->dm, &c->dm_cap);
	if (rc < 0)
		return NULL;
	if (rc == 0)
		return name;
	size_t len = strlen(c->dm) + 1;
	char *p = arena_take(c, len);
	if (p)
		memcpy(p, c->dm, len);
	return p;
}

const char *rd_names_demangle(struct rd_names *c, const char *name)
{
	/* Only '_' and '?' names can demangle: C names skip the cache. */
	if (name[0] != '_' && name[0] != '?')
		return name;
	if (!c->slot && !(c->slot = calloc(RD_NAME_SLOTS, sizeof(*c->slot))))
		return NULL;
	size_t h = name_hash(name);
	for (; c->slot[h].key; h = (h + 1) & (RD_NAME_SLOTS - 1))
		if (c->slot[h].key == name)
			return c->slot[h].value;
	const char *d = demangle_copy(c, name);
	/* A call that fills the table goes on uncached until the next begin. */
	if (d && c->used < RD_NAME_SLOTS * 3 / 4) {
		c->slot[h].key = name;
		c->slot[h].value = d;
		c->used++;
	}
	return d;
}

void rd_names_fini(struct rd_names *c)
{
	for (size_t i = 0; i < c->nblk; i++)
		free(c->blk[i].p);
	free(c->blk);
	free(c->slot);
	free(c->dm);
	memset(c, 0, sizeof(*c));
}
