/* SPDX-License-Identifier: MIT */
/*
 * cli_query_cache.c - `symdb query`'s body cache (struct body_cache): the printed
 * bodies of earlier batches by address.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "cli_query.h"

/* ---- the body cache (struct body_cache) ------------------------------ */

static void cache_clear(struct body_cache *c)
{
	memset(c->slot, 0, CACHE_SLOTS * sizeof(*c->slot)); /* all CACHE_SLOT_EMPTY */
	c->used = 0;
}

/* Turn the cache on when the run's options allow it (once, at start). */
void cli_query_cache_init(struct query *q)
{
	if (q->kind != SYMDB_ADDR_VADDR || q->pr.style == CLI_STYLE_ATOS ||
	    !cli_code_body_apart(&q->pr) ||
	    (q->per_line && (q->pid || q->ksrc.on || q->pr.style == CLI_STYLE_JSON)))
		return;
	/* calloc, not malloc and a clear: empty slots are zeros, so a short
	 * run touches (and the kernel maps) only the pages of the slots it
	 * uses, not all 2 MiB at start; a long one moves the table to huge
	 * pages (cli_query_mem_batch). */
	q->cache.slot = calloc(CACHE_SLOTS, sizeof(*q->cache.slot));
}

void cli_query_cache_insert(struct query *q, uint64_t key, struct text_span body)
{
	struct body_cache *c = &q->cache;
	if (c->used >= CACHE_SLOTS / 2 || key == CACHE_EMPTY)
		return; /* full until the next batch clears it; or not to be cached */
	size_t h = cli_query_cache_hash(key);
	while (c->slot[h].key != CACHE_SLOT_EMPTY) {
		if (c->slot[h].key == ~key)
			return;
		h = (h + 1) & (CACHE_SLOTS - 1);
	}
	c->slot[h].key = ~key;
	c->slot[h].body = body;
	c->used++;
}

static int cache_full(const struct query *q)
{
	return q->cache.used >= CACHE_SLOTS / 2 || q->text.len > CACHE_TEXT_MAX;
}

/* A slot's body was hit since the cache was last compacted (top bit of
 * its length: bodies are far shorter than 2 GiB, see WINDOW_TEXT_MAX). */
#define CACHE_HOT 0x80000000u

/*
 * A full cache keeps the bodies hit since it was last full, up to half its
 * text and a quarter of its slots, and drops the rest: a profile's hot
 * addresses then stay cached when its distinct bodies are more than the
 * cache holds (a large C++ image's profile prints ~100 MB of them), where
 * clearing it all would resolve and format them again after every clear.
 * The kept bodies are copied out and back to the start of q->text (a few
 * MiB, once per few windows); without memory for that, it is cleared.
 * The room they are copied to is made once and kept (8.5 MiB, in huge
 * pages): made and freed at each call, its 8 MiB were 2,048 fresh page
 * faults a call, 83 % of a ceph-osd profile run's faults.
 */
static void cache_keep_hot(struct query *q)
{
	struct body_cache *c = &q->cache;
	size_t nkeep = 0, kept = 0;
	if (!c->keep)
		c->keep = cli_big_realloc(NULL, 0, CACHE_SLOTS / 4 * sizeof(*c->keep));
	if (!c->keep_text)
		c->keep_text = cli_big_realloc(NULL, 0, CACHE_TEXT_MAX / 2);
	struct cache_slot *keep = c->keep;
	char *tmp = c->keep_text;
	for (size_t h = 0; keep && tmp && h < CACHE_SLOTS && nkeep < CACHE_SLOTS / 4; h++) {
		struct cache_slot *sl = &c->slot[h];
		uint32_t len = sl->body.len & ~CACHE_HOT;
		if (sl->key == CACHE_SLOT_EMPTY || !(sl->body.len & CACHE_HOT) ||
		    len > CACHE_TEXT_MAX / 2 - kept)
			continue;
		memcpy(tmp + kept, q->text.buf + sl->body.off, len);
		/* keep[] holds the keys themselves, as insert takes them */
		keep[nkeep++] = (struct cache_slot){ ~sl->key, { (uint32_t)kept, len } };
		kept += len;
	}
	cache_clear(c);
	q->text.len = 0;
	if (keep && tmp) {
		memcpy(q->text.buf, tmp, kept);
		q->text.len = kept;
		for (size_t i = 0; i < nkeep; i++)
			cli_query_cache_insert(q, keep[i].key, keep[i].body);
	}
}

/* What the library is asked for (resolve_batch, resolve_module with
 * SYMDB_ADDR_VADDR), and on a per-line stream of which image (tag: the
 * modules' tags, cli_query_cache_key_tagged): equal keys resolve, and so
 * print, alike.  The options come as arguments, kept in the caller's
 * locals: its loop stores ints, which may alias q's fields. */
static inline uint64_t key_of(const struct request *rq, uint64_t adjust, const uint32_t *tag)
{
	uint64_t k = rq->addr - adjust;
	k = k == SYMDB_ADDR_INVALID ? SYMDB_ADDR_INVALID - 1 : k;
	return tag ? cli_query_cache_key_tagged(tag[rq->mod], k) : k;
}

/*
 * The lookups of req[0..n): CODE requests whose body is cached become
 * REQ_CACHED; returns the hits, *lookups the CODE requests.  On a profile
 * nearly every line comes here and hits: each key is computed once, when
 * its slot is prefetched (key[], by request modulo PREFETCH_AHEAD), and
 * inlined twice, with and without tags, so that the common case has no
 * tag to look up.
 */
static inline __attribute__((always_inline)) size_t
lookup_range(struct cache_slot *slot, struct request *req, size_t n, uint64_t adjust,
             const uint32_t *tag, size_t *lookups)
{
	size_t hits = 0, codes = 0;
	uint64_t key[PREFETCH_AHEAD];
	for (size_t i = 0; i < n && i < PREFETCH_AHEAD; i++)
		key[i] = key_of(&req[i], adjust, tag);
	for (size_t i = 0; i < n; i++) {
		const uint64_t k = key[i % PREFETCH_AHEAD];
		if (i + PREFETCH_AHEAD < n) {
			uint64_t ka = key_of(&req[i + PREFETCH_AHEAD], adjust, tag);
			key[i % PREFETCH_AHEAD] = ka;
			__builtin_prefetch(&slot[cli_query_cache_hash(ka)]);
		}
		struct request *rq = &req[i];
		if (rq->kind != REQ_CODE)
			continue;
		codes++;
		for (size_t h = cli_query_cache_hash(k);; h = (h + 1) & (CACHE_SLOTS - 1)) {
			uint64_t sk = slot[h].key;
			if (sk == CACHE_SLOT_EMPTY) /* (first: a key may be CACHE_EMPTY) */
				break;
			if (sk == ~k) { /* (slots hold keys complemented) */
				rq->kind = REQ_CACHED;
				rq->body = slot[h].body;
				rq->body.len &= ~CACHE_HOT;
				slot[h].body.len |= CACHE_HOT;
				hits++;
				break;
			}
		}
	}
	*lookups = codes;
	return hits;
}

/* Mark the batch's CODE requests whose body is cached as REQ_CACHED. */
void cli_query_cache_lookup(struct query *q)
{
	struct body_cache *c = &q->cache;
	c->lookups = c->hits = 0;
	if (cache_full(q))
		cache_keep_hot(q);
	c->cold = c->used == 0;
	if (c->cold)
		return;
	if (q->per_line)
		c->hits = lookup_range(c->slot, q->req, q->nreq, q->adjust_vma, q->mod_tag,
		                       &c->lookups);
	else
		c->hits = lookup_range(c->slot, q->req, q->nreq, q->adjust_vma, NULL, &c->lookups);
}

/* After a batch: a cache that mostly misses costs more than it saves, and
 * one that a single batch filled from empty would be cleared by the next.
 * On a per-line stream, whose pairs of image and address come back more
 * slowly (a 5,000-path profile over four images: a twentieth of its
 * second window hits, two thirds of the next ones), only once it has been
 * full: a stream that does not repeat fills it within a window or two all
 * the same. */
void cli_query_cache_review(struct query *q)
{
	struct body_cache *c = &q->cache;
	if ((c->cold && cache_full(q)) ||
	    (!c->cold && c->lookups >= 1024 && c->hits < c->lookups / 4 &&
	     (!q->per_line || cache_full(q)))) {
		free(c->slot);
		c->slot = NULL;
		c->used = 0;
	}
}
