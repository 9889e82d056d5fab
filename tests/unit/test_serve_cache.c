/* SPDX-License-Identifier: MIT */
/*
 * test_serve_cache: the stack cache of `symdb serve` (tools/serve_cache.c)
 * on its own: round trips, the key (which parts of a frame count, and that
 * different stacks never share a key), eviction by bytes, LRU order, hash
 * collisions forced through the test hook (a wrong answer would show),
 * uncacheable stacks, the hit/miss counts it reports, and threads hammering
 * one small cache (the ThreadSanitizer pass runs this test too).
 * serve_buf_put() and serve_metrics_cache() are this file's own: the test
 * needs no server, and counts what the cache reports.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "serve.h"
#include "serve_batch.h"
#include "serve_cache.h"

/* ---- the two server functions the cache calls -------------------------------- */

static atomic_ullong hits_seen, misses_seen;

void serve_metrics_cache(struct serve_metrics *m, uint64_t hits, uint64_t misses)
{
	(void)m;
	atomic_fetch_add(&hits_seen, hits);
	atomic_fetch_add(&misses_seen, misses);
}

static uint64_t frames_seen[4]; /* resolved, cache, earlier_stack, deadline */

void serve_metrics_stack_frames(struct serve_metrics *m, uint64_t resolved, uint64_t cached,
                                uint64_t earlier, uint64_t deadline)
{
	(void)m;
	frames_seen[0] += resolved;
	frames_seen[1] += cached;
	frames_seen[2] += earlier;
	frames_seen[3] += deadline;
}

void serve_buf_put(struct serve_buf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = (b->len + n) * 2;
		char *p = realloc(b->p, cap);

		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

/* A fake metrics object: only its address is passed around. */
static struct serve_metrics *fake_metrics = (struct serve_metrics *)&hits_seen;

/* ---- helpers ------------------------------------------------------------------- */

static const uint8_t id_a[20] = { 0xaa, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 };
static const uint8_t id_b[20] = { 0xbb, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 };

/* A key of nframes frames of image id at base, base+1, ... */
static void key_stack(struct serve_cache_key *k, const uint8_t *id, uint64_t base, unsigned nframes)
{
	serve_cache_key_init(k, SERVE_CACHE_JSON, 0);
	for (unsigned i = 0; i < nframes; i++)
		serve_cache_key_frame(k, id, 20, SYMDB_ADDR_VADDR, 0, base + i);
}

static void put_str(struct serve_cache *c, struct serve_cache_key *k, const char *v)
{
	serve_cache_put(c, k, v, strlen(v));
}

/* 1 when k hits with exactly the bytes v (appended after what out held). */
static int get_is(struct serve_cache *c, struct serve_cache_key *k, const char *v)
{
	struct serve_buf out = { 0 };
	int ok;

	serve_buf_put(&out, "<", 1);
	ok = serve_cache_get(c, k, &out) && out.len == 1 + strlen(v) && !memcmp(out.p + 1, v, strlen(v));
	free(out.p);
	return ok;
}

static int misses(struct serve_cache *c, struct serve_cache_key *k)
{
	struct serve_buf out = { 0 };
	int miss = !serve_cache_get(c, k, &out) && out.len == 0;

	free(out.p);
	return miss;
}

static void hash_constant(const void *p, size_t n, uint64_t h[2])
{
	(void)p;
	(void)n;
	h[0] = 0x1234;
	h[1] = 0x5678;
}

/* ---- tests ------------------------------------------------------------------- */

static void test_round_trip(void)
{
	struct serve_cache *c;
	struct serve_cache_key k;
	unsigned long long h0 = hits_seen, m0 = misses_seen;

	CHECK(serve_cache_create(0, 0, NULL, &c) == -EINVAL);
	CHECK(serve_cache_create(1 << 20, 3, NULL, &c) == -EINVAL);
	CHECK_RC(serve_cache_create(1 << 20, 0, fake_metrics, &c));
	key_stack(&k, id_a, 0x1000, 64);
	CHECK(misses(c, &k));
	put_str(c, &k, "stack one");
	CHECK(get_is(c, &k, "stack one"));
	serve_cache_key_release(&k);
	key_stack(&k, id_a, 0x1000, 64); /* built again: equal bytes, equal key */
	CHECK(get_is(c, &k, "stack one"));
	serve_cache_key_release(&k);
	key_stack(&k, id_a, 0x1000, 63); /* a prefix of the stack is another stack */
	CHECK(misses(c, &k));
	serve_cache_key_release(&k);
	CHECK(hits_seen - h0 == 2 && misses_seen - m0 == 2);
	/* No cache configured: always a miss, nothing counted. */
	key_stack(&k, id_a, 0x1000, 64);
	CHECK(misses(NULL, &k));
	serve_cache_put(NULL, &k, "x", 1);
	serve_cache_key_release(&k);
	CHECK(hits_seen - h0 == 2 && misses_seen - m0 == 2);
	serve_cache_free(c);
}

/* Keys that must differ, each put with its own value into a cache whose
 * hash says they are all equal: every lookup must still find its own. */
static void build_variant(struct serve_cache_key *k, int v)
{
	serve_cache_key_init(k, v == 1 ? SERVE_CACHE_BINARY : SERVE_CACHE_JSON, v == 2 ? 1 : 0);
	switch (v) {
	case 3: /* another image, same address */
		serve_cache_key_frame(k, id_b, 20, SYMDB_ADDR_VADDR, 0, 0x10);
		break;
	case 4: /* another address kind */
		serve_cache_key_frame(k, id_a, 20, SYMDB_ADDR_OFFSET, 0, 0x10);
		break;
	case 5: /* runtime, load address 0x1000 */
	case 6: /* runtime, load address 0x2000 */
		serve_cache_key_frame(k, id_a, 20, SYMDB_ADDR_RUNTIME, v == 5 ? 0x1000 : 0x2000, 0x10);
		break;
	case 7: /* the same identity bytes, shorter: a prefix is another image */
		serve_cache_key_frame(k, id_a, 19, SYMDB_ADDR_VADDR, 0, 0x10);
		break;
	case 8: /* A B A: the third frame refers back to A */
	case 9: /* A B B */
		serve_cache_key_frame(k, id_a, 20, SYMDB_ADDR_VADDR, 0, 0x10);
		serve_cache_key_frame(k, id_b, 20, SYMDB_ADDR_VADDR, 0, 0x10);
		serve_cache_key_frame(k, v == 8 ? id_a : id_b, 20, SYMDB_ADDR_VADDR, 0, 0x10);
		break;
	case 10: /* nine images: past the back-reference slots */
	case 11: /* the same, but the ninth is the first again */
		for (int i = 0; i < 9; i++) {
			uint8_t id[4] = { 9, 9, 9, (uint8_t)(i == 8 && v == 11 ? 0 : i) };

			serve_cache_key_frame(k, id, 4, SYMDB_ADDR_VADDR, 0, 0x10);
		}
		break;
	default: /* 0, 1, 2: one frame of A at 0x10 */
		serve_cache_key_frame(k, id_a, 20, SYMDB_ADDR_VADDR, 0, 0x10);
	}
}

static void test_key_parts(void)
{
	struct serve_cache *c;
	struct serve_cache_key k;
	char val[16];
	enum { NV = 12 };

	CHECK_RC(serve_cache_create(1 << 20, 1, NULL, &c));
	serve_cache_set_hash(c, hash_constant);
	for (int v = 0; v < NV; v++) {
		build_variant(&k, v);
		snprintf(val, sizeof val, "variant %d", v);
		CHECK(misses(c, &k));
		put_str(c, &k, val);
		serve_cache_key_release(&k);
	}
	for (int v = 0; v < NV; v++) {
		build_variant(&k, v);
		snprintf(val, sizeof val, "variant %d", v);
		if (!get_is(c, &k, val)) {
			fprintf(stderr, "variant %d: wrong answer or a miss\n", v);
			CHECK(0);
		}
		serve_cache_key_release(&k);
	}
	/* Not a runtime address: the load address does not count. */
	serve_cache_key_init(&k, SERVE_CACHE_JSON, 0);
	serve_cache_key_frame(&k, id_a, 20, SYMDB_ADDR_VADDR, 0x9999, 0x10);
	CHECK(get_is(c, &k, "variant 0"));
	serve_cache_key_release(&k);
	serve_cache_free(c);
}

/* A key that spills onto the heap (many images, long identities). */
static void test_long_key(void)
{
	struct serve_cache *c;
	struct serve_cache_key k;
	uint8_t id[255];

	CHECK_RC(serve_cache_create(1 << 20, 1, NULL, &c));
	for (int round = 0; round < 2; round++) {
		serve_cache_key_init(&k, SERVE_CACHE_BINARY, 7);
		for (int i = 0; i < 40; i++) {
			memset(id, i, sizeof id);
			serve_cache_key_frame(&k, id, sizeof id, SYMDB_ADDR_VADDR, 0, (uint64_t)i);
		}
		CHECK(k.len > sizeof k.inline_buf);
		if (round == 0) {
			CHECK(misses(c, &k));
			put_str(c, &k, "long");
		} else {
			CHECK(get_is(c, &k, "long"));
		}
		serve_cache_key_release(&k);
	}
	serve_cache_free(c);
}

static void test_collision(void)
{
	struct serve_cache *c;
	struct serve_cache_key a, b;

	CHECK_RC(serve_cache_create(1 << 20, 1, NULL, &c));
	serve_cache_set_hash(c, hash_constant);
	key_stack(&a, id_a, 0x1000, 64);
	key_stack(&b, id_a, 0x2000, 64);
	put_str(c, &a, "answer of a");
	CHECK(misses(c, &b)); /* same hash, other key: no wrong answer */
	put_str(c, &b, "answer of b");
	CHECK(get_is(c, &a, "answer of a"));
	CHECK(get_is(c, &b, "answer of b"));
	serve_cache_key_release(&a);
	serve_cache_key_release(&b);
	serve_cache_free(c);
}

/* One shard of 64 KiB: values of 1 KiB; the charge never exceeds the
 * budget and the oldest go first. */
static void test_eviction(void)
{
	struct serve_cache *c;
	struct serve_cache_key k;
	uint64_t entries, bytes, max_entries = 0;
	char val[1024];
	const uint64_t budget = 64 * 1024;
	int n = 200;

	CHECK_RC(serve_cache_create(budget, 1, NULL, &c));
	for (int i = 0; i < n; i++) {
		memset(val, 'a' + i % 26, sizeof val);
		key_stack(&k, id_a, (uint64_t)i << 8, 8);
		serve_cache_put(c, &k, val, sizeof val);
		serve_cache_key_release(&k);
		serve_cache_usage(c, &entries, &bytes);
		CHECK(bytes <= budget);
		if (entries > max_entries)
			max_entries = entries;
	}
	/* Full, not nearly empty: about 64 KiB / (1 KiB + key + header). */
	CHECK(max_entries >= 50 && max_entries < 64);
	serve_cache_usage(c, &entries, &bytes);
	CHECK(bytes > budget - 2 * 1200);
	/* Exactly the newest `entries` are left, each with its own bytes. */
	for (int i = 0; i < n; i++) {
		struct serve_buf out = { 0 };
		bool hit;

		key_stack(&k, id_a, (uint64_t)i << 8, 8);
		hit = serve_cache_get(c, &k, &out);
		memset(val, 'a' + i % 26, sizeof val);
		if (i < n - (int)entries)
			CHECK(!hit);
		else
			CHECK(hit && out.len == sizeof val && !memcmp(out.p, val, sizeof val));
		free(out.p);
		serve_cache_key_release(&k);
	}
	/* A value over an eighth of the shard is not kept. */
	{
		char *big = calloc(1, budget / 8);

		key_stack(&k, id_b, 0, 1);
		serve_cache_put(c, &k, big, budget / 8);
		CHECK(misses(c, &k));
		serve_cache_key_release(&k);
		free(big);
	}
	serve_cache_free(c);
}

/* A shard that holds 8 entries of 7000 bytes (a value may be up to an eighth
 * of it): after touching the oldest entry, the next insert evicts the
 * second oldest instead. */
static void lru_key(struct serve_cache_key *k, int i)
{
	key_stack(k, id_a, 0x100 * (uint64_t)i, 4);
}

static void test_lru_order(void)
{
	struct serve_cache *c;
	struct serve_cache_key k;
	uint64_t entries, bytes;
	char val[7000];

	CHECK_RC(serve_cache_create(8 * 7300, 1, NULL, &c));
	memset(val, '.', sizeof val);
	for (int i = 0; i < 10; i++) {
		if (i == 8 || i == 9) {
			/* touch 0 before 8 is put, 2 before 9 */
			lru_key(&k, i == 8 ? 0 : 2);
			CHECK(!misses(c, &k));
			serve_cache_key_release(&k);
		}
		lru_key(&k, i);
		val[0] = (char)('0' + i);
		serve_cache_put(c, &k, val, sizeof val);
		serve_cache_key_release(&k);
		serve_cache_usage(c, &entries, &bytes);
		CHECK(entries == (i < 8 ? (uint64_t)i + 1 : 8));
	}
	for (int i = 0; i < 10; i++) {
		struct serve_buf out = { 0 };
		bool hit;

		lru_key(&k, i);
		hit = serve_cache_get(c, &k, &out);
		if (i == 1 || i == 3) {
			CHECK(!hit); /* the least recently used when 8 and 9 came */
		} else {
			CHECK(hit && out.len == sizeof val && out.p[0] == '0' + i);
		}
		free(out.p);
		serve_cache_key_release(&k);
	}
	serve_cache_free(c);
}

static void test_uncacheable(void)
{
	struct serve_cache *c;
	struct serve_cache_key k;
	unsigned long long h0 = hits_seen, m0 = misses_seen;

	CHECK_RC(serve_cache_create(1 << 20, 0, fake_metrics, &c));
	key_stack(&k, id_a, 0x1000, 4);
	serve_cache_key_uncacheable(&k);
	put_str(c, &k, "stale");
	CHECK(misses(c, &k));
	serve_cache_key_release(&k);
	/* The same frames, cacheable: nothing was kept. */
	key_stack(&k, id_a, 0x1000, 4);
	CHECK(misses(c, &k));
	serve_cache_key_release(&k);
	/* An identity of 0 or 256 bytes cannot be keyed. */
	serve_cache_key_init(&k, SERVE_CACHE_JSON, 0);
	serve_cache_key_frame(&k, id_a, 0, SYMDB_ADDR_VADDR, 0, 1);
	put_str(c, &k, "x");
	CHECK(misses(c, &k));
	serve_cache_key_release(&k);
	CHECK(hits_seen - h0 == 0 && misses_seen - m0 == 1);
	serve_cache_free(c);
}

/* Keys of a batch's stacks: request-local module numbers do not count,
 * modules that are paths or not found make a stack uncacheable, options
 * count. */
static void set_module(struct serve_module *m, const uint8_t *id, enum serve_ref ref,
                       enum serve_status st)
{
	memset(m, 0, sizeof *m);
	m->ref = ref;
	m->id = "x";
	m->addr_kind = SYMDB_ADDR_VADDR;
	m->status = st;
	memcpy(m->uuid.bytes, id, 20);
	m->uuid.len = 20;
	m->uuid.kind = SYMDB_UUID_GNU_BUILD_ID;
	/* the cache key's identity, as serve_batch.c's module_found makes it
	 * (the build-id, then 8 bytes of the index's version: zeros here) */
	memcpy(m->key_id, id, 20);
	m->key_len = 28;
}

static void test_batch_keys(void)
{
	struct serve_module mods[4];
	/* stack 0: A@1 B@2; stack 1 the same with the modules numbered the
	 * other way; stack 2: an unknown image; stack 3: a path module */
	const struct serve_stack_frame frames[] = {
		{ .module = 0, .addr = 1 }, { .module = 1, .addr = 2 },
		{ .module = 1, .addr = 1 }, { .module = 0, .addr = 2 },
		{ .module = 0, .addr = 1 }, { .module = 2, .addr = 2 },
		{ .module = 3, .addr = 1 },
	};
	struct serve_stack stacks[] = { { 0, 2, false }, { 2, 2, false }, { 4, 2, false }, { 6, 1, false } };
	struct serve_batch b = { .modules = mods, .nmodules = 4, .frames = frames, .nframes = 7,
	                         .stacks = stacks, .nstacks = 4,
	                         .opt = { .demangle = true, .inlines = true } };
	struct serve_cache *c;
	struct serve_cache_key k;
	struct serve_result res[3] = { { .status = SERVE_OK }, { .status = SERVE_NO_SYMBOL },
	                               { .status = SERVE_OUT_OF_RANGE } };

	CHECK_RC(serve_cache_create(1 << 20, 0, NULL, &c));
	set_module(&mods[0], id_a, SERVE_REF_BUILD_ID, SERVE_OK);
	set_module(&mods[1], id_b, SERVE_REF_BUILD_ID, SERVE_OK);
	set_module(&mods[2], id_b, SERVE_REF_BUILD_ID, SERVE_UNKNOWN_IMAGE);
	set_module(&mods[3], id_a, SERVE_REF_PATH, SERVE_OK);
	CHECK(serve_cache_stack_key(&k, &b, &stacks[0], SERVE_CACHE_JSON));
	put_str(c, &k, "A1 B2");
	serve_cache_key_release(&k);
	/* stack 1 in a request whose modules are listed B, A */
	set_module(&mods[0], id_b, SERVE_REF_BUILD_ID, SERVE_OK);
	set_module(&mods[1], id_a, SERVE_REF_BUILD_ID, SERVE_OK);
	CHECK(serve_cache_stack_key(&k, &b, &stacks[1], SERVE_CACHE_JSON));
	CHECK(get_is(c, &k, "A1 B2"));
	serve_cache_key_release(&k);
	CHECK(serve_cache_stack_key(&k, &b, &stacks[1], SERVE_CACHE_BINARY));
	CHECK(misses(c, &k));
	serve_cache_key_release(&k);
	b.opt.functions = SERVE_FN_SHORT;
	CHECK(serve_cache_stack_key(&k, &b, &stacks[1], SERVE_CACHE_JSON));
	CHECK(misses(c, &k));
	serve_cache_key_release(&k);
	CHECK(!serve_cache_stack_key(&k, &b, &stacks[2], SERVE_CACHE_JSON));
	put_str(c, &k, "unknown");
	CHECK(misses(c, &k));
	serve_cache_key_release(&k);
	CHECK(!serve_cache_stack_key(&k, &b, &stacks[3], SERVE_CACHE_JSON));
	serve_cache_key_release(&k);
	CHECK(serve_cache_results_keepable(res, 3));
	res[1].status = SERVE_DEADLINE;
	CHECK(!serve_cache_results_keepable(res, 3));
	res[1].status = SERVE_DAMAGED;
	CHECK(!serve_cache_results_keepable(res, 3));
	serve_cache_free(c);
}

/* Equal stacks within a request: by image, not module number; other
 * addresses, lengths or images are not equal; an unknown image's stack
 * equals only a stack of the same module. */
static void test_dups(void)
{
	struct serve_module mods[4];
	const struct serve_stack_frame frames[] = {
		{ .module = 0, .addr = 1 }, { .module = 0, .addr = 2 }, /* 0: A1 A2 */
		{ .module = 1, .addr = 1 }, { .module = 1, .addr = 2 }, /* 1: A'1 A'2 (same image) */
		{ .module = 0, .addr = 1 },                             /* 2: A1 */
		{ .module = 0, .addr = 2 }, { .module = 0, .addr = 1 }, /* 3: A2 A1 */
		{ .module = 2, .addr = 1 },                             /* 4: U1 (unknown) */
		{ .module = 3, .addr = 1 },                             /* 5: U'1 (another unknown) */
		{ .module = 2, .addr = 1 },                             /* 6: U1 */
		{ .module = 0, .addr = 1 }, { .module = 0, .addr = 2 }, /* 7: A1 A2 */
	};
	struct serve_stack stacks[] = { { 0, 2, false }, { 2, 2, false }, { 4, 1, false },
	                                { 5, 2, false }, { 7, 1, false }, { 8, 1, false },
	                                { 9, 1, false }, { 10, 2, false } };
	struct serve_batch b = { .modules = mods, .nmodules = 4, .frames = frames, .nframes = 12,
	                         .stacks = stacks, .nstacks = 8 };
	const uint32_t want[8] = { 0, 0, 2, 3, 4, 5, 4, 0 };
	uint32_t dup[8];

	set_module(&mods[0], id_a, SERVE_REF_BUILD_ID, SERVE_OK);
	set_module(&mods[1], id_a, SERVE_REF_BUILD_ID, SERVE_OK);
	set_module(&mods[2], id_b, SERVE_REF_BUILD_ID, SERVE_UNKNOWN_IMAGE);
	set_module(&mods[3], id_b, SERVE_REF_BUILD_ID, SERVE_UNKNOWN_IMAGE);
	CHECK_RC(serve_cache_stack_dups(&b, dup));
	for (int i = 0; i < 8; i++)
		if (dup[i] != want[i]) {
			fprintf(stderr, "stack %d: dup %u, expected %u\n", i, dup[i], want[i]);
			CHECK(0);
		}
	/* The same image found at another load address is another image. */
	mods[1].addr_kind = mods[0].addr_kind = SYMDB_ADDR_RUNTIME;
	mods[1].load_address = 0x1000;
	CHECK_RC(serve_cache_stack_dups(&b, dup));
	CHECK(dup[1] == 1 && dup[7] == 0);
}

/* What both front ends run before resolving: a copy of an earlier stack
 * is marked cached without a cache lookup (and points at that stack), a
 * stack the cache holds is a hit with its value in hits, the others are
 * resolved; frames are counted by source. */
static void test_lookup_stacks(void)
{
	struct serve_module mods[1];
	const struct serve_stack_frame frames[] = {
		{ .module = 0, .addr = 1 }, { .module = 0, .addr = 2 }, /* 0: A1 A2 (cached) */
		{ .module = 0, .addr = 1 }, { .module = 0, .addr = 2 }, /* 1: copy of 0 */
		{ .module = 0, .addr = 3 },                             /* 2: A3 (not cached) */
		{ .module = 0, .addr = 3 },                             /* 3: copy of 2 */
	};
	struct serve_stack stacks[] = { { 0, 2, false }, { 2, 2, false }, { 4, 1, false },
	                                { 5, 1, false } };
	struct serve_batch b = { .modules = mods, .nmodules = 1, .frames = frames, .nframes = 6,
	                         .stacks = stacks, .nstacks = 4 };
	struct serve_cache *c;
	struct serve_cache_key k;
	struct serve_buf hits = { 0 };
	uint32_t dup[4];
	size_t off[4], len[4];
	unsigned long long h0, m0;

	CHECK_RC(serve_cache_create(1 << 20, 0, fake_metrics, &c));
	set_module(&mods[0], id_a, SERVE_REF_BUILD_ID, SERVE_OK);
	CHECK(serve_cache_stack_key(&k, &b, &stacks[0], SERVE_CACHE_JSON));
	put_str(c, &k, "A1A2");
	serve_cache_key_release(&k);
	h0 = atomic_load(&hits_seen);
	m0 = atomic_load(&misses_seen);
	memset(frames_seen, 0, sizeof frames_seen);
	CHECK_RC(serve_cache_lookup_stacks(c, fake_metrics, &b, SERVE_CACHE_JSON, dup, &hits, off,
	                                   len));
	CHECK(dup[0] == 0 && dup[1] == 0 && dup[2] == 2 && dup[3] == 2);
	CHECK(stacks[0].cached && stacks[1].cached && !stacks[2].cached && stacks[3].cached);
	CHECK(len[0] == 4 && !memcmp(hits.p + off[0], "A1A2", 4) && len[1] == 0 && len[3] == 0);
	CHECK(atomic_load(&hits_seen) - h0 == 1 && atomic_load(&misses_seen) - m0 == 1);
	/* the stack left to resolve is counted when resolved (serve_batch.c) */
	CHECK(frames_seen[0] == 0 && frames_seen[1] == 2 && frames_seen[2] == 3 &&
	      frames_seen[3] == 0);
	/* no cache: only the copies are spared */
	for (int i = 0; i < 4; i++)
		stacks[i].cached = false;
	hits.len = 0;
	memset(frames_seen, 0, sizeof frames_seen);
	CHECK_RC(serve_cache_lookup_stacks(NULL, fake_metrics, &b, SERVE_CACHE_BINARY, dup, &hits,
	                                   off, len));
	CHECK(!stacks[0].cached && stacks[1].cached && !stacks[2].cached && stacks[3].cached);
	CHECK(frames_seen[0] == 0 && frames_seen[1] == 0 && frames_seen[2] == 3 &&
	      frames_seen[3] == 0);
	free(hits.p);
	serve_cache_free(c);
}

/* Packed results survive a trip through the cache unchanged, symbol and
 * NULL strings included; a cut value is refused, never read past. */
static void test_packed(void)
{
	const struct serve_frame in[2] = {
		{ .function = "inner", .file = "/src/a.c", .start_file = NULL, .line = 10, .column = 3,
		  .discriminator = 2, .start_line = 0, .has_start = false, .inlined = true },
		{ .function = NULL, .file = "", .start_file = "/src/b.h", .line = 0, .column = 0,
		  .discriminator = 0, .start_line = 7, .has_start = true, .inlined = false,
		  .start = 0x1234 },
	};
	struct serve_buf v = { 0 }, out = { 0 };
	struct serve_cache *c;
	struct serve_cache_key k;
	struct serve_cache_reader rd;
	struct serve_frame f;
	const struct serve_result ok = { .status = SERVE_OK, .vaddr = 0x1240, .sym_name = "outer",
	                                 .sym_addr = 0x1200, .sym_size = 0x80 };
	const struct serve_result none = { .status = SERVE_NO_SYMBOL, .vaddr = 0x99 };
	struct serve_result res;
	uint32_t n;

	serve_cache_pack_result(&v, &ok, in, 2);
	serve_cache_pack_result(&v, &none, NULL, 0);
	CHECK_RC(serve_cache_create(1 << 20, 0, NULL, &c));
	key_stack(&k, id_a, 0x1240, 2);
	serve_cache_put(c, &k, v.p, v.len);
	CHECK(serve_cache_get(c, &k, &out) && out.len == v.len);
	rd = (struct serve_cache_reader){ (const unsigned char *)out.p,
	                                  (const unsigned char *)out.p + out.len };
	CHECK(!serve_cache_unpack_result(&rd, &res, &n) && res.status == SERVE_OK &&
	      res.vaddr == 0x1240 && res.sym_addr == 0x1200 && res.sym_size == 0x80 && n == 2);
	CHECK(res.sym_name && !strcmp(res.sym_name, "outer"));
	for (int i = 0; i < 2; i++) {
		CHECK(!serve_cache_unpack_frame(&rd, &f));
		CHECK(f.line == in[i].line && f.column == in[i].column &&
		      f.discriminator == in[i].discriminator && f.start_line == in[i].start_line &&
		      f.has_start == in[i].has_start && f.inlined == in[i].inlined &&
		      f.start == in[i].start);
		CHECK(!f.function == !in[i].function && !f.file == !in[i].file &&
		      !f.start_file == !in[i].start_file);
		CHECK(!f.function || !strcmp(f.function, in[i].function));
		CHECK(!f.file || !strcmp(f.file, in[i].file));
		CHECK(!f.start_file || !strcmp(f.start_file, in[i].start_file));
	}
	CHECK(!serve_cache_unpack_result(&rd, &res, &n) && res.status == SERVE_NO_SYMBOL &&
	      res.vaddr == 0x99 && !res.sym_name && n == 0);
	CHECK(serve_cache_unpack_result(&rd, &res, &n) == -1); /* the end */
	/* Every cut of the value fails somewhere before its end. */
	for (size_t cut = 1; cut < v.len; cut++) {
		int bad = 0;

		rd = (struct serve_cache_reader){ (const unsigned char *)v.p,
		                                  (const unsigned char *)v.p + v.len - cut };
		for (int r = 0; r < 2 && !bad; r++) {
			bad = serve_cache_unpack_result(&rd, &res, &n);
			for (uint32_t i = 0; i < n && !bad; i++)
				bad = serve_cache_unpack_frame(&rd, &f);
		}
		CHECK(bad);
	}
	serve_cache_key_release(&k);
	serve_cache_free(c);
	free(v.p);
	free(out.p);
}

/* ---- threads ----------------------------------------------------------------- */

#define MT_THREADS 4
#define MT_KEYS 2000
#define MT_OPS 40000

static struct serve_cache *mt_cache;
static atomic_int mt_wrong;

/* The value of key i: its number, repeated to a length that depends on i. */
static size_t mt_value(unsigned i, char *buf)
{
	size_t n = 16 + (i * 37) % 700;

	for (size_t j = 0; j < n; j++)
		buf[j] = (char)('0' + (i + j) % 10);
	return n;
}

static void *mt_worker(void *arg)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);
	struct serve_buf out = { 0 };
	char want[800];

	for (int op = 0; op < MT_OPS; op++) {
		struct serve_cache_key k;
		unsigned i;
		size_t n;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64, seeded per thread */
		/* Skewed: half the operations on 1/16 of the keys. */
		i = (unsigned)(x % (x & 1 ? MT_KEYS : MT_KEYS / 16));
		key_stack(&k, (x >> 8) & 1 ? id_a : id_b, i, 1 + i % 64);
		n = mt_value(i, want);
		out.len = 0;
		if (serve_cache_get(mt_cache, &k, &out)) {
			if (out.len != n || memcmp(out.p, want, n))
				atomic_fetch_add(&mt_wrong, 1);
		} else {
			serve_cache_put(mt_cache, &k, want, n);
		}
		serve_cache_key_release(&k);
	}
	free(out.p);
	return NULL;
}

static void test_threads(void)
{
	pthread_t t[MT_THREADS];
	uint64_t entries, bytes;
	unsigned long long h0 = hits_seen, m0 = misses_seen;

	/* Small: about 600 of the 4000 (key, image) pairs fit, so threads
	 * evict each other's entries all the time. */
	CHECK_RC(serve_cache_create(512 * 1024, 4, fake_metrics, &mt_cache));
	for (uintptr_t i = 0; i < MT_THREADS; i++)
		CHECK(pthread_create(&t[i], NULL, mt_worker, (void *)i) == 0);
	for (int i = 0; i < MT_THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK(mt_wrong == 0);
	serve_cache_usage(mt_cache, &entries, &bytes);
	CHECK(bytes <= 512 * 1024 && entries > 100);
	CHECK(hits_seen - h0 + misses_seen - m0 == (unsigned long long)MT_THREADS * MT_OPS);
	CHECK(hits_seen - h0 > 0 && misses_seen - m0 > 0);
	fprintf(stderr, "threads: %llu hits, %llu misses, %llu entries, %llu bytes\n",
	        hits_seen - h0, misses_seen - m0, (unsigned long long)entries,
	        (unsigned long long)bytes);
	serve_cache_free(mt_cache);
}

int main(void)
{
	test_round_trip();
	test_key_parts();
	test_long_key();
	test_collision();
	test_eviction();
	test_lru_order();
	test_uncacheable();
	test_batch_keys();
	test_packed();
	test_dups();
	test_lookup_stacks();
	test_threads();
	return check_exit();
}
