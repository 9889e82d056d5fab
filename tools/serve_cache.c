/* SPDX-License-Identifier: MIT */
/*
 * The stack cache of `symdb serve` (serve_cache.h says what it keeps and
 * why): a byte-bounded LRU map from a stack's key bytes to its rendered
 * answer, split into shards by hash so that pool threads rarely share a
 * lock.  Each shard is a chained hash table plus a doubly linked LRU list,
 * both threaded through the entries; an entry is one allocation holding
 * its key and value after the header.
 */
#include "serve_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "serve.h"
#include "serve_batch.h"

#define CACHE_MAX_SHARDS 64u
/* Below this share a shard could hold only a few large stacks. */
#define CACHE_MIN_SHARD_BYTES (256u * 1024u)
/* A key longer than this (tens of thousands of frames) is not worth keeping. */
#define CACHE_MAX_KEY (1u << 20)
/* The hash bucket's share of an entry's charge: the table keeps at most two
 * buckets of 8 bytes per entry (it doubles when entries outnumber buckets). */
#define CACHE_BUCKET_CHARGE 16u
/* Key tags (serve_cache_key_frame): a new image, else a back-reference. */
#define KEY_NEW_IMAGE 0xffu

struct cache_entry {
	struct cache_entry *chain;            /* next in the bucket */
	struct cache_entry *prev, *next;      /* LRU list; the shard's head is newest */
	uint64_t h[2];
	uint32_t key_len;
	uint32_t val_len;
	unsigned char data[];                 /* key, then value */
};

/* Aligned to a cache line so that two shards' locks never share one. */
struct cache_shard {
	_Alignas(64) pthread_mutex_t mu;
	struct cache_entry **buckets;
	size_t nbuckets;                      /* a power of two */
	size_t count;
	uint64_t bytes, budget;
	struct cache_entry lru;               /* sentinel: lru.next newest, lru.prev oldest */
};

struct serve_cache {
	struct cache_shard *shards;
	unsigned nshards;                     /* a power of two */
	struct serve_metrics *metrics;
	void (*hash)(const void *p, size_t n, uint64_t h[2]);
};

static void hash_xxh3(const void *p, size_t n, uint64_t h[2])
{
	XXH128_hash_t x = XXH3_128bits(p, n);

	h[0] = x.low64;
	h[1] = x.high64;
}

/* ---- keys ----------------------------------------------------------------- */

/* Room for n more bytes; false (and the key uncacheable) when there is none. */
static bool key_reserve(struct serve_cache_key *k, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (k->uncacheable)
		return false;
	if (n <= k->cap - k->len)
		return true;
	if (n > CACHE_MAX_KEY - k->len) {
		k->uncacheable = true;
		return false;
	}
	cap = k->cap * 2 > k->len + n ? k->cap * 2 : k->len + n;
	p = k->p == k->inline_buf ? malloc(cap) : realloc(k->p, cap);
	if (!p) {
		/* A key we cannot build is a stack we do not cache. */
		k->uncacheable = true;
		return false;
	}
	if (k->p == k->inline_buf)
		memcpy(p, k->inline_buf, k->len);
	k->p = p;
	k->cap = cap;
	return true;
}

/* Appends n bytes after key_reserve() made room. */
static inline void key_write(struct serve_cache_key *k, const void *data, size_t n)
{
	memcpy(k->p + k->len, data, n);
	k->len += n;
}

void serve_cache_key_init(struct serve_cache_key *k, enum serve_cache_format format,
                          uint64_t options)
{
	uint8_t f = (uint8_t)format;

	k->p = k->inline_buf;
	k->len = 0;
	k->cap = sizeof k->inline_buf;
	k->hashed = false;
	k->uncacheable = false;
	k->nimages = 0;
	key_write(k, &f, 1);
	key_write(k, &options, sizeof options);
}

/* The slot of an identity already in the key, or -1.  Repeating an image's
 * bytes in every frame would make a 64-frame key of one library 2.4 KB
 * instead of 0.7 KB; the slots keep the encoding injective because a
 * back-reference can only name an image the same key introduced. */
static int key_find_image(const struct serve_cache_key *k, const void *id, size_t id_len)
{
	for (unsigned i = 0; i < k->nimages; i++)
		if (k->image_len[i] == id_len && !memcmp(k->p + k->image_off[i], id, id_len))
			return (int)i;
	return -1;
}

/* One frame; slot is the identity's back-reference, or -1 for an identity
 * the key has not named yet.  Fixed-size copies: this runs 64 times per
 * stack on the cache's hit path. */
static void key_frame_slot(struct serve_cache_key *k, int slot, const void *id, uint8_t id_len,
                           uint8_t kind, uint64_t load_address, uint64_t addr)
{
	uint8_t tag = slot >= 0 ? (uint8_t)slot : KEY_NEW_IMAGE;

	if (!key_reserve(k, 2u + id_len + 1u + 2 * sizeof(uint64_t)))
		return;
	key_write(k, &tag, 1);
	if (slot < 0) {
		key_write(k, &id_len, 1);
		/* Past 8 images a new identity is written out each time it
		 * occurs: longer, still unambiguous. */
		if (k->nimages < 8) {
			k->image_off[k->nimages] = (uint32_t)k->len;
			k->image_len[k->nimages] = id_len;
			k->nimages++;
		}
		key_write(k, id, id_len);
	}
	key_write(k, &kind, 1);
	key_write(k, &addr, sizeof addr);
	if (kind == SYMDB_ADDR_RUNTIME)
		key_write(k, &load_address, sizeof load_address);
}

void serve_cache_key_frame(struct serve_cache_key *k, const void *id, size_t id_len,
                           unsigned addr_kind, uint64_t load_address, uint64_t addr)
{
	if (id_len == 0 || id_len > 255 || addr_kind > 255) {
		k->uncacheable = true;
		return;
	}
	key_frame_slot(k, key_find_image(k, id, id_len), id, (uint8_t)id_len, (uint8_t)addr_kind,
	               load_address, addr);
}

void serve_cache_key_uncacheable(struct serve_cache_key *k)
{
	k->uncacheable = true;
}

void serve_cache_key_release(struct serve_cache_key *k)
{
	if (k->p != k->inline_buf)
		free(k->p);
	k->p = k->inline_buf;
	k->len = 0;
	k->cap = sizeof k->inline_buf;
}

bool serve_cache_stack_key(struct serve_cache_key *k, const struct serve_batch *b,
                           const struct serve_stack *st, enum serve_cache_format format)
{
	uint64_t options = (uint64_t)b->opt.demangle | (uint64_t)b->opt.inlines << 1 |
	                   (uint64_t)b->opt.functions << 2;
	uint32_t last_module = UINT32_MAX;
	unsigned nimages;
	int slot = -1;

	serve_cache_key_init(k, format, options);
	for (uint32_t i = 0; i < st->count && !k->uncacheable; i++) {
		const struct serve_stack_frame *f = &b->frames[st->first + i];
		const struct serve_module *m = &b->modules[f->module];

		if (m->ref == SERVE_REF_PATH || m->status != SERVE_OK || !m->key_len) {
			k->uncacheable = true;
			break;
		}
		/* Stacks run through one module for many frames: its slot is
		 * looked up by bytes once per run of frames. */
		if (f->module != last_module) {
			slot = key_find_image(k, m->key_id, m->key_len);
			last_module = f->module;
		}
		nimages = k->nimages;
		key_frame_slot(k, slot, m->key_id, m->key_len, (uint8_t)m->addr_kind,
		               m->load_address, f->addr);
		if (slot < 0 && k->nimages > nimages)
			slot = k->nimages - 1; /* named now: the next frames refer back */
	}
	return !k->uncacheable;
}

/* Whether frames a and b name the same address of the same image. */
static bool frames_equal(const struct serve_batch *b, const struct serve_stack_frame *x,
                         const struct serve_stack_frame *y)
{
	const struct serve_module *m = &b->modules[x->module], *n = &b->modules[y->module];

	if (x->addr != y->addr)
		return false;
	if (x->module == y->module)
		return true;
	return m->status == SERVE_OK && n->status == SERVE_OK && m->ref != SERVE_REF_PATH &&
	       n->ref != SERVE_REF_PATH && m->uuid.len == n->uuid.len &&
	       !memcmp(m->uuid.bytes, n->uuid.bytes, m->uuid.len) && m->addr_kind == n->addr_kind &&
	       (m->addr_kind != SYMDB_ADDR_RUNTIME || m->load_address == n->load_address);
}

static bool stacks_equal(const struct serve_batch *b, const struct serve_stack *s,
                         const struct serve_stack *t)
{
	if (s->count != t->count)
		return false;
	for (uint32_t i = 0; i < s->count; i++)
		if (!frames_equal(b, &b->frames[s->first + i], &b->frames[t->first + i]))
			return false;
	return true;
}

/* A hash that equal stacks share: a frame's module counts by its image
 * when it found one (two modules may name the same build-id), else by its
 * number. */
static uint64_t stack_hash(const struct serve_batch *b, const struct serve_stack *st)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ st->count;

	for (uint32_t i = 0; i < st->count; i++) {
		const struct serve_stack_frame *f = &b->frames[st->first + i];
		const struct serve_module *m = &b->modules[f->module];
		uint64_t id = m->status == SERVE_OK && m->ref != SERVE_REF_PATH
		                      ? XXH3_64bits(m->uuid.bytes, m->uuid.len)
		                      : f->module;

		h = XXH3_64bits_withSeed(&f->addr, sizeof f->addr, h ^ id);
	}
	return h;
}

int serve_cache_stack_dups(const struct serve_batch *b, uint32_t *dup)
{
	size_t cap = 16;
	uint32_t *slot;
	uint64_t *hash;

	while (cap < (size_t)b->nstacks * 2)
		cap *= 2;
	slot = malloc(cap * sizeof *slot);
	hash = malloc((b->nstacks + 1) * sizeof *hash);
	if (!slot || !hash) {
		free(slot);
		free(hash);
		return -ENOMEM;
	}
	memset(slot, 0xff, cap * sizeof *slot);
	for (uint32_t i = 0; i < b->nstacks; i++) {
		size_t at;

		hash[i] = stack_hash(b, &b->stacks[i]);
		dup[i] = i;
		/* Open addressing, linear probing: the table is at most half full. */
		for (at = hash[i] & (cap - 1); slot[at] != UINT32_MAX; at = (at + 1) & (cap - 1)) {
			uint32_t j = slot[at];

			if (hash[j] == hash[i] && stacks_equal(b, &b->stacks[j], &b->stacks[i])) {
				dup[i] = j;
				break;
			}
		}
		if (dup[i] == i)
			slot[at] = i;
	}
	free(slot);
	free(hash);
	return 0;
}

int serve_cache_lookup_stacks(struct serve_cache *c, struct serve_metrics *m,
                              struct serve_batch *b, enum serve_cache_format format, uint32_t *dup,
                              struct serve_buf *hits, size_t *hit_off, size_t *hit_len)
{
	uint64_t cached = 0, earlier = 0;

	if (serve_cache_stack_dups(b, dup))
		return -ENOMEM;
	for (uint32_t i = 0; i < b->nstacks; i++) {
		struct serve_stack *st = &b->stacks[i];
		struct serve_cache_key k;

		hit_off[i] = hits->len;
		hit_len[i] = 0;
		if (dup[i] != i) {
			st->cached = true;
			earlier += st->count;
			continue;
		}
		if (serve_cache_stack_key(&k, b, st, format) && serve_cache_get(c, &k, hits)) {
			st->cached = true;
			hit_len[i] = hits->len - hit_off[i];
			cached += st->count;
		}
		serve_cache_key_release(&k);
	}
	if (hits->oom)
		return -ENOMEM;
	if (m)
		serve_metrics_stack_frames(m, 0, cached, earlier, 0); /* the others: serve_batch_resolve */
	return 0;
}

bool serve_cache_results_keepable(const struct serve_result *res, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (res[i].status != SERVE_OK && res[i].status != SERVE_NO_SYMBOL &&
		    res[i].status != SERVE_OUT_OF_RANGE)
			return false;
	return true;
}

/* ---- packed results ----------------------------------------------------------- */

#define PACK_NULL UINT32_MAX
#define PACK_HAS_START 1u
#define PACK_INLINED 2u

static void pack_str(struct serve_buf *v, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : PACK_NULL;

	serve_buf_put(v, &n, sizeof n);
	if (s)
		serve_buf_put(v, s, (size_t)n + 1);
}

void serve_cache_pack_result(struct serve_buf *v, const struct serve_result *res,
                             const struct serve_frame *frames, size_t nframes)
{
	/* (the top bit: serve_result.top, a vaddr asked as one less) */
	uint32_t head[2] = { (uint32_t)res->status | (res->top ? 0x80000000u : 0), (uint32_t)nframes };
	uint64_t nums[3] = { res->vaddr, res->sym_addr, res->sym_size };

	serve_buf_put(v, head, sizeof head);
	serve_buf_put(v, nums, sizeof nums);
	pack_str(v, res->sym_name);
	for (size_t i = 0; i < nframes; i++) {
		const struct serve_frame *f = &frames[i];
		uint32_t fnums[5] = { f->line, f->column, f->discriminator, f->start_line,
		                      (f->has_start ? PACK_HAS_START : 0) | (f->inlined ? PACK_INLINED : 0) };

		serve_buf_put(v, fnums, sizeof fnums);
		serve_buf_put(v, &f->start, sizeof f->start);
		pack_str(v, f->function);
		pack_str(v, f->file);
		pack_str(v, f->start_file);
	}
}

static int unpack(struct serve_cache_reader *rd, void *out, size_t n)
{
	if ((size_t)(rd->end - rd->p) < n)
		return -1;
	memcpy(out, rd->p, n);
	rd->p += n;
	return 0;
}

static int unpack_str(struct serve_cache_reader *rd, const char **s)
{
	uint32_t n;

	if (unpack(rd, &n, sizeof n))
		return -1;
	*s = NULL;
	if (n == PACK_NULL)
		return 0;
	if ((size_t)(rd->end - rd->p) <= n || rd->p[n])
		return -1;
	*s = (const char *)rd->p;
	rd->p += (size_t)n + 1;
	return 0;
}

int serve_cache_unpack_result(struct serve_cache_reader *rd, struct serve_result *res,
                              uint32_t *nframes)
{
	uint32_t head[2];
	uint64_t nums[3];
	const char *sym_name;

	if (unpack(rd, head, sizeof head) || unpack(rd, nums, sizeof nums) ||
	    unpack_str(rd, &sym_name))
		return -1;
	*res = (struct serve_result){ .status = (enum serve_status)(head[0] & 0x7fffffffu),
	                              .top = (head[0] >> 31) != 0, .vaddr = nums[0],
	                              .sym_addr = nums[1], .sym_size = nums[2], .sym_name = sym_name };
	*nframes = head[1];
	return 0;
}

int serve_cache_unpack_frame(struct serve_cache_reader *rd, struct serve_frame *f)
{
	uint32_t nums[5];

	if (unpack(rd, nums, sizeof nums) || unpack(rd, &f->start, sizeof f->start) ||
	    unpack_str(rd, &f->function) || unpack_str(rd, &f->file) || unpack_str(rd, &f->start_file))
		return -1;
	f->line = nums[0];
	f->column = nums[1];
	f->discriminator = nums[2];
	f->start_line = nums[3];
	f->has_start = nums[4] & PACK_HAS_START;
	f->inlined = nums[4] & PACK_INLINED;
	return 0;
}

/* ---- creation -------------------------------------------------------------- */

static unsigned default_shards(uint64_t max_bytes)
{
	unsigned n = 1;

	while (n < CACHE_MAX_SHARDS && max_bytes / (n * 2u) >= CACHE_MIN_SHARD_BYTES)
		n *= 2;
	return n;
}

static int shard_init(struct cache_shard *s, uint64_t budget)
{
	s->nbuckets = 64;
	s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
	if (!s->buckets)
		return -ENOMEM;
	if (pthread_mutex_init(&s->mu, NULL)) {
		free(s->buckets);
		return -ENOMEM;
	}
	s->count = 0;
	s->bytes = 0;
	s->budget = budget;
	s->lru.next = s->lru.prev = &s->lru;
	return 0;
}

static void shard_destroy(struct cache_shard *s)
{
	struct cache_entry *e = s->lru.next;

	while (e != &s->lru) {
		struct cache_entry *next = e->next;

		free(e);
		e = next;
	}
	free(s->buckets);
	pthread_mutex_destroy(&s->mu);
}

int serve_cache_create(uint64_t max_bytes, unsigned shards, struct serve_metrics *metrics,
                       struct serve_cache **out)
{
	struct serve_cache *c;

	*out = NULL;
	if (!max_bytes || shards > CACHE_MAX_SHARDS || (shards & (shards - 1)))
		return -EINVAL;
	c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	c->nshards = shards ? shards : default_shards(max_bytes);
	c->metrics = metrics;
	c->hash = hash_xxh3;
	c->shards = aligned_alloc(_Alignof(struct cache_shard), c->nshards * sizeof *c->shards);
	if (!c->shards) {
		free(c);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < c->nshards; i++) {
		if (shard_init(&c->shards[i], max_bytes / c->nshards)) {
			c->nshards = i;
			serve_cache_free(c);
			return -ENOMEM;
		}
	}
	*out = c;
	return 0;
}

void serve_cache_free(struct serve_cache *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->nshards; i++)
		shard_destroy(&c->shards[i]);
	free(c->shards);
	free(c);
}

void serve_cache_set_hash(struct serve_cache *c, void (*fn)(const void *p, size_t n, uint64_t h[2]))
{
	c->hash = fn;
}

/* ---- the shard's table and LRU list (called with the shard's lock held) ---- */

static uint64_t entry_charge(size_t key_len, size_t val_len)
{
	return sizeof(struct cache_entry) + key_len + val_len + CACHE_BUCKET_CHARGE;
}

static struct cache_entry **bucket_of(struct cache_shard *s, const uint64_t h[2])
{
	/* The low bits picked the shard; the high word picks the bucket. */
	return &s->buckets[h[1] & (s->nbuckets - 1)];
}

static struct cache_entry *shard_find(struct cache_shard *s, const struct serve_cache_key *k)
{
	struct cache_entry *e = *bucket_of(s, k->h);

	for (; e; e = e->chain)
		if (e->h[0] == k->h[0] && e->h[1] == k->h[1] && e->key_len == k->len &&
		    !memcmp(e->data, k->p, k->len))
			return e;
	return NULL;
}

static void lru_unlink(struct cache_entry *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}

static void lru_push_front(struct cache_shard *s, struct cache_entry *e)
{
	e->prev = &s->lru;
	e->next = s->lru.next;
	s->lru.next->prev = e;
	s->lru.next = e;
}

static void shard_remove(struct cache_shard *s, struct cache_entry *e)
{
	struct cache_entry **pp = bucket_of(s, e->h);

	while (*pp != e)
		pp = &(*pp)->chain;
	*pp = e->chain;
	lru_unlink(e);
	s->count--;
	s->bytes -= entry_charge(e->key_len, e->val_len);
	free(e);
}

/* Doubles the table once entries outnumber buckets; a failed allocation
 * only leaves the chains longer. */
static void shard_grow(struct cache_shard *s)
{
	size_t n = s->nbuckets * 2;
	struct cache_entry **b = calloc(n, sizeof *b);

	if (!b)
		return;
	for (size_t i = 0; i < s->nbuckets; i++) {
		struct cache_entry *e = s->buckets[i], *next;

		for (; e; e = next) {
			next = e->chain;
			e->chain = b[e->h[1] & (n - 1)];
			b[e->h[1] & (n - 1)] = e;
		}
	}
	free(s->buckets);
	s->buckets = b;
	s->nbuckets = n;
}

static void shard_insert(struct cache_shard *s, struct cache_entry *e)
{
	struct cache_entry **b;

	while (s->count && s->bytes + entry_charge(e->key_len, e->val_len) > s->budget)
		shard_remove(s, s->lru.prev);
	if (s->count >= s->nbuckets)
		shard_grow(s);
	b = bucket_of(s, e->h);
	e->chain = *b;
	*b = e;
	lru_push_front(s, e);
	s->count++;
	s->bytes += entry_charge(e->key_len, e->val_len);
}

/* ---- lookups and inserts ----------------------------------------------------- */

static struct cache_shard *shard_of(struct serve_cache *c, struct serve_cache_key *k)
{
	if (!k->hashed) {
		c->hash(k->p, k->len, k->h);
		k->hashed = true;
	}
	return &c->shards[k->h[0] & (c->nshards - 1)];
}

bool serve_cache_get(struct serve_cache *c, struct serve_cache_key *k, struct serve_buf *out)
{
	struct cache_shard *s;
	struct cache_entry *e;

	if (!c || k->uncacheable)
		return false;
	s = shard_of(c, k);
	pthread_mutex_lock(&s->mu);
	e = shard_find(s, k);
	if (e) {
		lru_unlink(e);
		lru_push_front(s, e);
		/* Copied under the lock: the entry may be evicted once it is
		 * released.  A few KB, well under a microsecond. */
		serve_buf_put(out, e->data + e->key_len, e->val_len);
	}
	pthread_mutex_unlock(&s->mu);
	if (c->metrics)
		serve_metrics_cache(c->metrics, e != NULL, e == NULL);
	return e != NULL;
}

void serve_cache_put(struct serve_cache *c, struct serve_cache_key *k, const void *bytes,
                     size_t n)
{
	struct cache_shard *s;
	struct cache_entry *e;

	if (!c || k->uncacheable || n > UINT32_MAX)
		return;
	s = shard_of(c, k);
	if (entry_charge(k->len, n) > s->budget / 8)
		return;
	/* Built before taking the lock: malloc and the copy need no lock. */
	e = malloc(sizeof *e + k->len + n);
	if (!e)
		return;
	e->h[0] = k->h[0];
	e->h[1] = k->h[1];
	e->key_len = (uint32_t)k->len;
	e->val_len = (uint32_t)n;
	memcpy(e->data, k->p, k->len);
	memcpy(e->data + k->len, bytes, n);
	pthread_mutex_lock(&s->mu);
	if (shard_find(s, k)) {
		pthread_mutex_unlock(&s->mu);
		free(e);
		return;
	}
	shard_insert(s, e);
	pthread_mutex_unlock(&s->mu);
}

void serve_cache_usage(struct serve_cache *c, uint64_t *entries, uint64_t *bytes)
{
	*entries = 0;
	*bytes = 0;
	for (unsigned i = 0; c && i < c->nshards; i++) {
		pthread_mutex_lock(&c->shards[i].mu);
		*entries += c->shards[i].count;
		*bytes += c->shards[i].bytes;
		pthread_mutex_unlock(&c->shards[i].mu);
	}
}
