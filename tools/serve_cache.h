/* SPDX-License-Identifier: MIT */
/*
 * The stack cache of `symdb serve`: the rendered answer of a whole stack,
 * kept by the stack's frames, so that the hot stacks a profiler sends all
 * day are resolved once.  A hit is a hash, one key comparison and a copy.
 *
 * The key is the stack as bytes: the output format, the request options
 * that change the answer, and per frame the image identity (build-id /
 * LC_UUID / fallback id bytes, plus anything else that picks the image,
 * such as a Mach-O arch), the address kind, the load address (runtime
 * addresses only) and the address.  It holds no request-local numbering
 * (no module index), so the same stack in another request, with its
 * modules listed in another order, is the same key: a writer whose stack
 * output names request-local indices must not cache through this.
 * Lookups hash the key (XXH3-128) and then compare the WHOLE key, so a
 * hash collision costs a miss, never a wrong answer.
 *
 * The value is whatever the writer produced for that stack (JSON text or
 * binary records); the cache never looks into it.
 *
 * Path-named modules are not cacheable: a binary rebuilt at the same path
 * would be served its old answer.  A writer marks such a stack with
 * serve_cache_key_uncacheable(); lookups of it miss without counting.
 *
 * Memory: bounded by the byte budget given at creation (serve_limits
 * .cache_bytes), split evenly over the shards; each shard evicts its least
 * recently used entries to stay in its share.  The charge of an entry is
 * its allocation (header, key, value) plus 16 bytes for its hash bucket.
 * A value larger than an eighth of a shard's share is not kept (one huge
 * stack would otherwise flush the shard).
 *
 * Threads: every function on a struct serve_cache is thread-safe.  The
 * entries are split over up to 64 shards by hash, each with its own mutex
 * held for the lookup and the copy only, so the pool threads rarely wait
 * on each other.  A struct serve_cache_key belongs to one thread.
 *
 * Use, in a writer, per stack (serve_cache_stack_key() builds the key of a
 * stack of a struct serve_batch with serve_cache_key_init/_frame):
 *
 *	struct serve_cache_key k;
 *	serve_cache_key_init(&k, SERVE_CACHE_JSON, options);
 *	for each frame: serve_cache_key_frame(&k, id, id_len, kind, load, addr);
 *	size_t at = out->len;
 *	if (!serve_cache_get(cache, &k, out)) {
 *		render the stack into out;
 *		if (!out->oom && its results are keepable)
 *			serve_cache_put(cache, &k, out->p + at, out->len - at);
 *	}
 *	serve_cache_key_release(&k);
 *
 * The cached bytes must not depend on the request either: no module index,
 * no offset into a per-response string table.
 *
 * An image re-indexed (symdb reindex) while the server runs keeps the
 * answers cached from its old index until they are evicted.
 *
 * serve_cache_get and serve_cache_put take a NULL cache (no cache
 * configured): get then misses without counting and put does nothing.
 */
#ifndef SYMDB_SERVE_CACHE_H
#define SYMDB_SERVE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct serve_buf;
struct serve_metrics;
struct serve_cache;
struct serve_batch;
struct serve_stack;
struct serve_result;
struct serve_frame;

/* The output format is part of the key: one stack has a JSON and a
 * binary answer. */
enum serve_cache_format {
	SERVE_CACHE_JSON = 1,
	SERVE_CACHE_BINARY = 2
};

/* A stack's key as it is built.  Small keys live in the struct itself
 * (64 frames of one or two images fit), larger ones on the heap. */
struct serve_cache_key {
	uint8_t *p;
	size_t len, cap;
	uint64_t h[2];                /* XXH3-128 of p[0..len), once hashed */
	bool hashed;
	bool uncacheable;             /* a path module, an OOM, too many frames */
	uint8_t nimages;              /* images named so far, for back-references */
	uint32_t image_off[8];        /* where their identity bytes are in p */
	uint8_t image_len[8];
	uint8_t inline_buf[1536];
};

/* A cache of at most max_bytes (> 0) with `shards` shards (a power of two
 * up to 64; 0 = chosen from max_bytes).  metrics (may be NULL) receives
 * every counted hit and miss through serve_metrics_cache().
 * Returns 0, -EINVAL (max_bytes 0, bad shards) or -ENOMEM. */
int serve_cache_create(uint64_t max_bytes, unsigned shards, struct serve_metrics *metrics,
                       struct serve_cache **out);
/* NULL-safe; no other call on c may run. */
void serve_cache_free(struct serve_cache *c);

/* The key of stack st of batch b, after serve_batch_open(): each frame's
 * module uuid, addr_kind, load address and address, b's options and the
 * format.  Returns false, the key marked uncacheable, when a frame's module
 * is a path or was not found (SERVE_OK): an image uploaded later must not
 * find "unknown_image" in the cache.  Release k either way. */
bool serve_cache_stack_key(struct serve_cache_key *k, const struct serve_batch *b,
                           const struct serve_stack *st, enum serve_cache_format format);
/* Equal stacks within one request (they are resolved once too): dup[i]
 * (caller-owned, b->nstacks entries) becomes the first stack j <= i with
 * the same frames as stack i: the same addresses of the same module, or of
 * modules that found the same image (uuid, addr_kind, load address).
 * A front end resolves only the stacks with dup[i] == i and answers the
 * others with stack dup[i]'s text.  Needs no cache; after
 * serve_batch_open().  Returns 0 or -ENOMEM. */
int serve_cache_stack_dups(const struct serve_batch *b, uint32_t *dup);
/*
 * What both front ends do before resolving, so that they do it alike:
 * marks cached (serve_batch.h: its frames are not resolved) every stack
 * whose answer is known already, and says where each answer comes from.
 *   - dup[i] != i: stack i equals the earlier stack dup[i] of this request
 *     (serve_cache_stack_dups()); the front end answers it with the bytes
 *     it wrote for stack dup[i].  No cache lookup is made for it.
 *   - dup[i] == i and cached: the cache held it; its value was appended to
 *     hits at hit_off[i], hit_len[i] bytes.
 *   - otherwise it is resolved.
 * dup, hit_off and hit_len are caller-owned, b->nstacks entries each.  c
 * may be NULL (no cache: only equal stacks are spared).  m (may be NULL)
 * counts the stack frames of each kind (serve_metrics_stack_frames()).
 * Returns 0 or -ENOMEM.  Thread-safe as serve_cache_get(); b belongs to
 * the calling thread.
 */
int serve_cache_lookup_stacks(struct serve_cache *c, struct serve_metrics *m,
                              struct serve_batch *b, enum serve_cache_format format, uint32_t *dup,
                              struct serve_buf *hits, size_t *hit_off, size_t *hit_len);
/* Whether a stack's n results may be kept: each ok, no_symbol or
 * out_of_range (answers of an immutable index), never damaged or deadline. */
bool serve_cache_results_keepable(const struct serve_result *res, size_t n);

/* Starts a key: format and options (the request's demangle / inlines /
 * functions bits, anything that changes the rendered bytes). */
void serve_cache_key_init(struct serve_cache_key *k, enum serve_cache_format format,
                          uint64_t options);
/* Appends one frame, outermost or innermost first as the writer renders
 * them (the order is part of the key).  id/id_len: the image identity
 * (1..255 bytes; the same identity must always be given the same bytes);
 * load_address counts only for SYMDB_ADDR_RUNTIME. */
void serve_cache_key_frame(struct serve_cache_key *k, const void *id, size_t id_len,
                           unsigned addr_kind, uint64_t load_address, uint64_t addr);
/* The stack must not be cached (a path module). */
void serve_cache_key_uncacheable(struct serve_cache_key *k);
/* Frees a heap-grown key; k may be initialised again afterwards. */
void serve_cache_key_release(struct serve_cache_key *k);

/* On a hit appends the cached bytes to out and returns true; on a miss
 * returns false and out is unchanged.  Counts the hit or miss, unless the
 * key is uncacheable or c is NULL. */
bool serve_cache_get(struct serve_cache *c, struct serve_cache_key *k, struct serve_buf *out);
/* Keeps a copy of the n bytes as k's answer, evicting least recently used
 * entries of the shard to make room.  Does nothing for an uncacheable key,
 * a value too large, or when memory runs out.  If another thread put the
 * same key meanwhile, its entry stays. */
void serve_cache_put(struct serve_cache *c, struct serve_cache_key *k, const void *bytes,
                     size_t n);

/*
 * A self-contained form of a stack's results, for a front end whose output
 * cannot be cached as it is because it refers to per-response tables (the
 * binary format's string table): on a miss it packs each result (status,
 * vaddr, symbol, the frames serve_result_frames() chose, strings inline and
 * NUL-terminated, so a hit reads them in place) into a value and puts that;
 * on a hit it walks the value with the reader and encodes the results as
 * if they had been resolved.  Native byte order: the bytes never leave the
 * process.
 */
void serve_cache_pack_result(struct serve_buf *v, const struct serve_result *res,
                             const struct serve_frame *frames, size_t nframes);
struct serve_cache_reader {
	const unsigned char *p, *end;
};
/* The next result: res gets its status, vaddr and symbol (name, start,
 * size; the rest zero), nframes its number of frames, which the next
 * nframes serve_cache_unpack_frame() calls give.  Strings point into the
 * value, NUL-terminated.  Both return 0, or -1 at the end of the value or
 * on a value that was not packed so. */
int serve_cache_unpack_result(struct serve_cache_reader *rd, struct serve_result *res,
                              uint32_t *nframes);
int serve_cache_unpack_frame(struct serve_cache_reader *rd, struct serve_frame *f);

/* Observability for /metrics and tests: entries and charged bytes now. */
void serve_cache_usage(struct serve_cache *c, uint64_t *entries, uint64_t *bytes);

/* Tests only: replaces the key hash of c (before any use), so that a test
 * can force collisions.  fn writes two 64-bit words. */
void serve_cache_set_hash(struct serve_cache *c, void (*fn)(const void *p, size_t n, uint64_t h[2]));

#endif /* SYMDB_SERVE_CACHE_H */
