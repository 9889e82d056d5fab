/* SPDX-License-Identifier: MIT */
/*
 * cli_query_input.c - `symdb query`'s requests: from the arguments, or from stdin
 * read with read(2) and parsed as llvm-symbolizer parses its input
 * (cmd_query.c describes the rules), a batch per read.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "cli_query.h"

/* ---- request parsing (llvm-symbolizer.cpp parseCommand) -------------- */

static int is_delim(char c)
{
	return c == ' ' || c == '\n' || c == '\r';
}

/*
 * Modules by name: open addressing over 8-byte slots, each 32 bits of the
 * name's hash and where the module's key is (its full hash, length, index
 * and name, one after another in query.mod_keys), doubled at half full.  A
 * stream that names thousands of images (a fleet's crash reports, a
 * whole-system profile) then costs one hash and one comparison per line,
 * where a scan of every module seen so far made such a stream quadratic;
 * and what a line reads is its slot and its key, one line of each, out of
 * tables small enough to stay in the cache (5,000 modules: 128 KiB of
 * slots, 320 KiB of keys) while the input and the requests stream past.
 */
#define HASH_SEED 0x9E3779B97F4A7C15ull

/* Two operations a word: multiplying by an odd constant loses no
 * difference (it is a bijection mod 2^64), and hash_end mixes every bit of
 * the state into the ones a slot index uses.  Names that collide only cost
 * probes: every match is checked byte for byte. */
static inline uint64_t hash_word(uint64_t h, uint64_t w)
{
	return (h + w) * 0xbf58476d1ce4e5b9ull;
}

/* The last 0 to 7 bytes (zero-padded, first byte lowest) and the length. */
static inline uint64_t hash_end(uint64_t h, uint64_t tail, size_t len)
{
	h = hash_word(h, tail) ^ (uint64_t)len;
	h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
	h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* A word at a time (paths are long); add_module_line computes the same
 * value while it looks for the module's end. */
static uint64_t module_hash(const char *name, size_t len)
{
	uint64_t h = HASH_SEED, w, tail = 0;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, name + i, 8);
		h = hash_word(h, w);
	}
	for (size_t j = i; j < len; j++)
		tail |= (uint64_t)(unsigned char)name[j] << (8 * (j - i));
	return hash_end(h, tail, len);
}

/* A module's key in query.mod_keys (8-byte aligned), its name after it. */
struct module_key {
	uint64_t hash;
	uint32_t len, idx;
};

static inline const struct module_key *module_key_at(const struct query *q, uint32_t ref)
{
	return (const struct module_key *)(const void *)(q->mod_keys + 8 * (size_t)ref);
}

#ifdef __SSE2__
static inline __m128i xor16(const char *a, const char *b)
{
	return _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)a),
	                     _mm_loadu_si128((const __m128i *)(const void *)b));
}
#endif

/*
 * Whether a[0..n) and b[0..n) are equal, inline: a call to memcmp per line
 * costs more than the comparison of a path.  Pieces overlap rather than
 * step byte by byte at the end; nothing outside the two ranges is read.
 */
static inline int names_equal(const char *a, const char *b, size_t n)
{
#ifdef __SSE2__
	if (n >= 16) {
		__m128i d = _mm_setzero_si128();
		size_t i = 0;
		for (; i + 32 < n; i += 32) /* (two pieces a step: paths are long) */
			d = _mm_or_si128(d, _mm_or_si128(xor16(a + i, b + i), xor16(a + i + 16, b + i + 16)));
		if (i + 16 < n)
			d = _mm_or_si128(d, xor16(a + i, b + i));
		d = _mm_or_si128(d, xor16(a + n - 16, b + n - 16));
		return _mm_movemask_epi8(_mm_cmpeq_epi8(d, _mm_setzero_si128())) == 0xffff;
	}
#endif
	if (n >= 8) {
		uint64_t x, y, d = 0;
		size_t i = 0;
		for (; i + 8 < n; i += 8) {
			memcpy(&x, a + i, 8);
			memcpy(&y, b + i, 8);
			d |= x ^ y;
		}
		memcpy(&x, a + n - 8, 8);
		memcpy(&y, b + n - 8, 8);
		return (d | (x ^ y)) == 0;
	}
	if (n >= 4) {
		uint32_t x, y, x2, y2;
		memcpy(&x, a, 4);
		memcpy(&y, b, 4);
		memcpy(&x2, a + n - 4, 4);
		memcpy(&y2, b + n - 4, 4);
		return ((x ^ y) | (x2 ^ y2)) == 0;
	}
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static void *module_alloc(void *p, size_t size)
{
	void *np = realloc(p, size);
	if (!np) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	return np;
}

static void module_slots_grow(struct query *q)
{
	size_t cap = q->mod_slots ? 2 * q->mod_slots : 64;
	struct module_slot *slot = calloc(cap, sizeof(*slot));
	if (!slot) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	for (size_t i = 0; i < q->mod_slots; i++) {
		struct module_slot v = q->mod_slot[i];
		if (!v.ref)
			continue;
		size_t h = (size_t)module_key_at(q, v.ref)->hash & (cap - 1);
		while (slot[h].ref)
			h = (h + 1) & (cap - 1);
		slot[h] = v;
	}
	free(q->mod_slot);
	q->mod_slot = slot;
	q->mod_slots = cap;
}

/* Append module nmods's key (name[0..len), hash: its module_hash()); its
 * ref.  A key of up to a cache line never straddles two (a line's lookup
 * then reads one line of keys, not two): the table is 64-byte aligned, and
 * a key that would cross a line starts the next. */
static uint32_t module_key_add(struct query *q, const char *name, size_t len, uint64_t hash)
{
	size_t size = (sizeof(struct module_key) + len + 7) & ~(size_t)7;
	size_t at = q->mod_keys_len ? q->mod_keys_len : 8; /* (ref 0 is an empty slot) */
	if (size <= 64 && at / 64 != (at + size - 1) / 64)
		at = (at + 63) & ~(size_t)63;
	if (at + size > q->mod_keys_cap) {
		size_t cap = q->mod_keys_cap ? 2 * q->mod_keys_cap : 4096;
		while (cap < at + size)
			cap *= 2;
		void *keys = NULL;
		if (cap / 8 > UINT32_MAX || posix_memalign(&keys, 64, cap) != 0) {
			fputs("symdb: out of memory\n", stderr);
			exit(CLI_EXIT_FAILED);
		}
		if (q->mod_keys_len)
			memcpy(keys, q->mod_keys, q->mod_keys_len);
		free(q->mod_keys);
		q->mod_keys = keys;
		q->mod_keys_cap = cap;
	}
	struct module_key key = { hash, (uint32_t)len, (uint32_t)q->nmods };
	memcpy(q->mod_keys + at, &key, sizeof key);
	memcpy(q->mod_keys + at + sizeof key, name, len);
	q->mod_keys_len = at + size;
	return (uint32_t)(at / 8);
}

/* Add module name[0..len) (hash: its module_hash()); its index.  A name
 * that starts with a NUL is a build-id's key (build_id_key()): no path can
 * have it, as a request's text ends at its first NUL. */
static __attribute__((noinline)) uint32_t add_module(struct query *q, const char *name,
                                                     size_t len, uint64_t hash)
{
	int build_id = len && name[0] == '\0';
	if (len > UINT32_MAX || q->nmods >= UINT32_MAX - 1) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	if (2 * (q->nmods + 1) > q->mod_slots)
		module_slots_grow(q);
	size_t mask = q->mod_slots - 1, h = (size_t)hash & mask;
	while (q->mod_slot[h].ref)
		h = (h + 1) & mask;
	q->mods = cli_query_grow(q->mods, &q->mods_cap, q->nmods + 1, sizeof(*q->mods));
	cli_query_set_tag(q, q->nmods, 0);
	struct module *m = &q->mods[q->nmods];
	memset(m, 0, sizeof(*m));
	m->name = module_alloc(NULL, len + 1);
	memcpy(m->name, name + build_id, len - (size_t)build_id);
	m->name[len - (size_t)build_id] = '\0';
	m->len = len - (size_t)build_id;
	m->build_id = build_id;
	q->mod_slot[h] = (struct module_slot){ (uint32_t)(hash >> 32),
		                               module_key_add(q, name, len, hash) };
	return (uint32_t)(q->last_mod = q->nmods++);
}

/* The index of module name[0..len), whose module_hash() is hash (inline:
 * once per line of a per-line stream). */
static inline uint32_t intern_hashed(struct query *q, const char *name, size_t len,
                                     uint64_t hash)
{
	uint32_t tag = (uint32_t)(hash >> 32);
	const struct module_slot *slot = q->mod_slot; /* (in registers: q may alias) */
	size_t mask = q->mod_slots - 1, h = (size_t)hash & mask;
	for (; slot && slot[h].ref; h = (h + 1) & mask) {
		if (slot[h].tag != tag)
			continue;
		const struct module_key *k = module_key_at(q, slot[h].ref);
		if (k->len == len && names_equal((const char *)(k + 1), name, len))
			return (uint32_t)(q->last_mod = k->idx);
	}
	return add_module(q, name, len, hash);
}

uint32_t cli_query_intern_module(struct query *q, const char *name, size_t len)
{
	if (q->last_mod < q->nmods && q->mods[q->last_mod].len == len &&
	    !q->mods[q->last_mod].build_id && memcmp(q->mods[q->last_mod].name, name, len) == 0)
		return (uint32_t)q->last_mod;
	return intern_hashed(q, name, len, module_hash(name, len));
}

/* Hex digit values plus one; 0 for every other byte. */
#define HX(c, v) [c] = (v) + 1
static const unsigned char hex_value1[256] = {
	HX('0', 0), HX('1', 1), HX('2', 2), HX('3', 3), HX('4', 4), HX('5', 5), HX('6', 6),
	HX('7', 7), HX('8', 8), HX('9', 9), HX('a', 10), HX('b', 11), HX('c', 12),
	HX('d', 13), HX('e', 14), HX('f', 15), HX('A', 10), HX('B', 11), HX('C', 12),
	HX('D', 13), HX('E', 14), HX('F', 15),
};
#undef HX

/*
 * A build-id's module key: a NUL (no path has one, add_module), then the
 * hex digits of hex[0..n) in upper case, a 0 in front of an odd count:
 * llvm's parseBuildID and the name its JSON prints ("BUILDID:abc" is
 * '0ABC').  Written to buf (bufsz bytes), or, for a key longer than any
 * stdin line (only an argument can be), to the heap (the caller frees it
 * when it is not buf).  Returns the key and its length, or NULL when hex
 * is empty or has a byte that is not a hex digit.
 */
static char *build_id_key(const char *hex, size_t n, char *buf, size_t bufsz, size_t *klen)
{
	if (n == 0)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!hex_value1[(unsigned char)hex[i]])
			return NULL;
	size_t pad = n % 2;
	char *key = n + pad + 1 <= bufsz ? buf : module_alloc(NULL, n + pad + 1);
	key[0] = '\0';
	key[1] = '0';
	for (size_t i = 0; i < n; i++)
		key[1 + pad + i] = (char)(hex[i] >= 'a' ? hex[i] - 32 : hex[i]);
	*klen = n + pad + 1;
	return key;
}

/*
 * The "FILE:" and "BUILDID:" prefixes of a module (llvm-symbolizer 15 and
 * later): how many bytes of s[0..n) they take, and whether "BUILDID:" was
 * one of them; -1 when one is repeated or both are given (the line is
 * invalid, its JSON ModuleName empty, as llvm's).
 */
static ptrdiff_t module_prefixes(const char *s, size_t n, int *build_id)
{
	size_t at = 0;
	int file = 0;
	*build_id = 0;
	for (;;) {
		if (n - at >= 5 && memcmp(s + at, "FILE:", 5) == 0) {
			if (file++)
				return -1;
			at += 5;
		} else if (n - at >= 8 && memcmp(s + at, "BUILDID:", 8) == 0) {
			if ((*build_id)++)
				return -1;
			at += 8;
		} else {
			break;
		}
	}
	return file && *build_id ? -1 : (ptrdiff_t)at;
}

/*
 * The module name of a per-line request: after its prefixes, a quoted
 * string ('...' or "...") or the next token; a build-id after "BUILDID:".
 * Returns 0, or -1 for an invalid module (an unterminated quote, a
 * repeated prefix, a build-id that is not hex), whose JSON ModuleName is
 * what llvm's is.
 */
static int parse_module(struct query *q, const char **sp, size_t *np, struct request *r)
{
	const char *s = *sp;
	size_t n = *np, len;
	int build_id;
	/* (llvm-16 reads the prefixes where the module starts, before the
	 * delimiters: " BUILDID:x" is a path) */
	ptrdiff_t pre = module_prefixes(s, n, &build_id);
	if (pre < 0) {
		r->mod = cli_query_intern_module(q, "", 0);
		return -1;
	}
	for (s += pre, n -= (size_t)pre; n && is_delim(*s);)
		s++, n--;
	const char *name = s;
	size_t name_len;
	if (n && (*s == '"' || *s == '\'')) {
		const char *end = memchr(s + 1, *s, n - 1);
		if (!end) {
			r->mod = cli_query_intern_module(q, "", 0);
			return -1;
		}
		name = s + 1;
		name_len = (size_t)(end - s - 1);
		len = (size_t)(end - s) + 1;
	} else {
		for (len = 0; len < n && !is_delim(s[len]); len++)
			;
		name_len = len;
	}
	*sp = s + len;
	*np = n - len;
	if (build_id && cli_query_intern_build_id(q, name, name_len, &r->mod) == 0)
		return 0;
	/* (a build-id that is not hex: the line is invalid, its module the text) */
	r->mod = cli_query_intern_module(q, name, name_len);
	return build_id ? -1 : 0;
}

int cli_query_intern_build_id(struct query *q, const char *hex, size_t n, uint32_t *mod)
{
	size_t klen;
	char buf[LLVM_LINE_MAX + 2];
	char *key = build_id_key(hex, n, buf, sizeof(buf), &klen);
	if (!key)
		return -1;
	*mod = cli_query_intern_module(q, key, klen);
	if (key != buf)
		free(key);
	return 0;
}

int cli_query_req_kind(const char **sp, size_t *np)
{
	const char *s = *sp;
	size_t n = *np;
	int kind = REQ_CODE;
	if (n >= 5 && memcmp(s, "CODE ", 5) == 0)
		s += 5, n -= 5;
	else if (n >= 5 && memcmp(s, "DATA ", 5) == 0)
		s += 5, n -= 5, kind = REQ_DATA;
	else if (n >= 6 && memcmp(s, "FRAME ", 6) == 0)
		s += 6, n -= 6, kind = REQ_FRAME;
	*sp = s;
	*np = n;
	return kind;
}

int cli_query_req_addr(const char *s, size_t n, uint64_t *addr)
{
	while (n && is_delim(*s))
		s++, n--;
	size_t tl = 0;
	while (tl < n && !is_delim(s[tl]))
		tl++;
	return cli_parse_u64(s, tl, addr);
}

static void parse_request(struct query *q, const char *s, size_t n, struct request *r)
{
	r->text = s;
	r->len = n;
	r->addr = 0;
	r->mod = 0;
	r->kind = cli_query_req_kind(&s, &n);
	if (q->per_line && !q->pid && parse_module(q, &s, &n, r) < 0) {
		r->kind = REQ_INVALID;
		return;
	}
	if (cli_query_req_addr(s, n, &r->addr) != 0) {
		r->kind = REQ_INVALID;
		/* llvm names no module then, only the path it could not use
		 * (nor --build-id's) */
		if (((q->per_line && !q->pid) || q->build_id_hex) && q->mods[r->mod].build_id)
			r->mod = cli_query_intern_module(q, "", 0);
	}
}

static struct request *new_request(struct query *q)
{
	q->req = cli_query_grow(q->req, &q->req_cap, q->nreq + 1, sizeof(*q->req));
	return &q->req[q->nreq++];
}

/* ---- input ------------------------------------------------------------- */

#ifdef __SSE2__
/*
 * The hex digits that s[0..16) starts with: how many (0 to 16), and when
 * there are at most 8, their value in *v, without a branch per digit (the
 * lengths of a stream's addresses vary from line to line, and a loop's exit
 * is then mispredicted on most lines).  Every byte is classified at once;
 * the digits' values, first digit in the lowest byte, are reversed into
 * place and their nibbles packed pairwise.
 */
static inline size_t hex_digits16(const char *s, uint64_t *v)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
	__m128i d = _mm_sub_epi8(x, _mm_set1_epi8('0'));
	__m128i l = _mm_sub_epi8(_mm_or_si128(x, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
	__m128i is_d = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
	__m128i is_l = _mm_cmpeq_epi8(_mm_min_epu8(l, _mm_set1_epi8(5)), l);
	unsigned hex = (unsigned)_mm_movemask_epi8(_mm_or_si128(is_d, is_l));
	size_t n = (size_t)__builtin_ctz(~hex); /* (bit 16 and up of ~hex are set) */
	if (n == 0 || n > 8)
		return n;
	__m128i val = _mm_or_si128(_mm_and_si128(is_d, d),
	                           _mm_and_si128(is_l, _mm_add_epi8(l, _mm_set1_epi8(10))));
	uint64_t y = (uint64_t)_mm_cvtsi128_si64(val);
	y = __builtin_bswap64(y) >> (64 - 8 * n); /* the last digit lowest */
	y = (y | y >> 4) & 0x00ff00ff00ff00ffull;
	y = (y | y >> 8) & 0x0000ffff0000ffffull;
	*v = (y | y >> 16) & 0xffffffffull;
	return n;
}
#endif

/*
 * The common line, "0x" and 1 to 16 hex digits then "\n" (or the end of
 * input), at buf[0..avail): found and parsed in one pass, without the
 * newline search and the in-place erase of the general path.  What
 * split_pieces, add_piece and parse_request would make of it is the same:
 * one piece (far below LLVM_LINE_MAX), no NUL, nothing to erase but the
 * newline, no prefix or module, one token in radix 16 that cannot overflow.
 * Returns the bytes taken, or 0 for any other line (the general path).
 */
static size_t add_hex_line(struct query *q, const char *s, size_t avail, int eof)
{
	if (avail < 3 || s[0] != '0' || (s[1] | 0x20) != 'x')
		return 0;
	size_t lim = avail < 19 ? avail : 19, i = 2;
	uint64_t v = 0;
#ifdef __SSE2__
	size_t n;
	if (avail >= 18 && (n = hex_digits16(s + 2, &v)) <= 8)
		i += n;
	else
#endif
	for (; i < lim; i++) {
		unsigned d = hex_value1[(unsigned char)s[i]];
		if (!d)
			break;
		v = v << 4 | (d - 1);
	}
	size_t take;
	if (i == 2 || i > 18)
		return 0;
	if (i < avail && s[i] == '\n')
		take = i + 1;
	else if (i == avail && eof)
		take = i;
	else
		return 0;
	struct request *r = new_request(q);
	r->text = s;
	r->len = i;
	r->kind = REQ_CODE;
	r->addr = v;
	r->mod = 0;
	return take;
}

/* Bytes below 0x21 (space, the delimiters, NUL, control bytes) of an
 * 8-byte word, as their top bits: exact for the lowest such byte. */
#define LOW_BYTES(w) (((w) - 0x2121212121212121ull) & ~(w) & 0x8080808080808080ull)

#ifdef __SSE2__
/* Bit k set when byte k of s[0..16) is below 0x21 (unsigned): LOW_BYTES
 * for two words in four instructions. */
static inline unsigned low_mask16(const char *s)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
	return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x20)), x));
}
#endif

/* The index of the first byte below 0x21 in s[i..n), or n. */
static size_t next_low(const char *s, size_t i, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; i + 8 <= n; i += 8) {
		uint64_t w, t;
		memcpy(&w, s + i, 8);
		if ((t = LOW_BYTES(w)) != 0)
			return i + (size_t)__builtin_ctzll(t) / 8;
	}
#endif
	for (; i < n; i++)
		if ((unsigned char)s[i] < 0x21)
			return i;
	return n;
}

/*
 * The module of a request line s[0..lim) that starts with neither a
 * delimiter nor a quote: its length (up to the first space; a tab or
 * another control byte is part of it, as for strcspn(" \n\r")) and its
 * module_hash(), or 0 when a newline, \r or NUL comes first, or no space
 * within lim.  Words without a byte below 0x21, nearly all of a path, are
 * hashed as they are scanned.
 */
static inline __attribute__((always_inline)) size_t scan_module(const char *s, size_t lim,
                                                                 uint64_t *hash)
{
	size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t h = HASH_SEED;
#ifdef __SSE2__
	/* 32 bytes a step, one branch for them while they are clean (a path
	 * is a few steps); at the first byte below 0x21, the words before it
	 * are hashed and the rest of its word is the tail. */
	for (; i + 32 <= lim; i += 32) {
		uint32_t m = low_mask16(s + i) | (uint32_t)low_mask16(s + i + 16) << 16;
		uint64_t w[4];
		memcpy(w, s + i, sizeof w);
		if (m) {
			size_t k = (size_t)__builtin_ctz(m), j = 0;
			if (s[i + k] != ' ') {
				i += k;
				break;
			}
			for (; 8 * j + 8 <= k; j++)
				h = hash_word(h, w[j]);
			k -= 8 * j;
			*hash = hash_end(h, k ? w[j] & (~0ull >> (64 - 8 * k)) : 0, i + 8 * j + k);
			return i + 8 * j + k;
		}
		h = hash_word(hash_word(hash_word(hash_word(h, w[0]), w[1]), w[2]), w[3]);
	}
	if (i + 32 > lim) /* (else a tab or a control byte at i: the loop below) */
#endif
		for (; i + 8 <= lim; i += 8) {
			uint64_t w, t;
			memcpy(&w, s + i, 8);
			if ((t = LOW_BYTES(w)) == 0) {
				h = hash_word(h, w);
				continue;
			}
			size_t k = (size_t)__builtin_ctzll(t) / 8;
			if (s[i + k] != ' ') {
				i += k;
				break;
			}
			*hash = hash_end(h, k ? w & (~0ull >> (64 - 8 * k)) : 0, i + k);
			return i + k;
		}
#endif
	for (;; i++) {
		i = next_low(s, i, lim);
		if (i == lim || s[i] == '\n' || s[i] == '\r' || s[i] == '\0')
			return 0;
		if (s[i] == ' ')
			break;
	}
	*hash = module_hash(s, i);
	return i;
}

/*
 * On a stream over thousands of modules, a line's slot and key are out of
 * the first-level cache (or, when other processes share the core, of the
 * second): each fast-path line's slot is prefetched as soon as its hash is
 * known, and its module looked up one line later, while the next line is
 * parsed (held_line).  A few hundred modules stay in the cache: below
 * HOLD_SLOTS slots a line is looked up at once.
 */
#define HOLD_SLOTS 1024

struct held_line {
	uint32_t req1, len; /* its request + 1 (0: none), its module's length */
	uint64_t hash;
};

static inline void intern_held(struct query *q, struct held_line *held)
{
	if (held->req1) {
		struct request *r = &q->req[held->req1 - 1];
		r->mod = intern_hashed(q, r->text, held->len, held->hash);
		held->req1 = 0;
	}
}

/*
 * The common per-line request, "MODULE ADDR\n" (MODULE unquoted, not
 * starting with a space; one or more spaces; ADDR "0x" and 1 to 16 hex
 * digits, or 1 to 19 decimal digits not starting with 0; then the newline,
 * or the end of input), at buf[0..avail): parsed in one pass, without the
 * in-place erase and the byte loops of the general path.  What
 * split_pieces, add_piece and parse_request would make of it is the same:
 * one piece (the newline within LLVM_LINE_MAX bytes), no NUL and no \r,
 * nothing to erase but the newline, no CODE/DATA/FRAME prefix, the module
 * the token up to the first space (a tab or another control byte is part
 * of it, as for strcspn(" \n\r")), and an address token that
 * cli_parse_u64 reads as the same number.  Returns the bytes taken, or 0
 * for any other line (the general path).
 */
static inline __attribute__((always_inline)) size_t
add_module_line(struct query *q, struct held_line *held, const char *s, size_t avail, int eof)
{
	size_t lim = avail < LLVM_LINE_MAX ? avail : LLVM_LINE_MAX, i, d;
	uint64_t hash;
	if ((unsigned char)s[0] < 0x21 || s[0] == '"' || s[0] == '\'')
		return 0;
	size_t mlen = i = scan_module(s, lim, &hash);
	if (!mlen)
		return 0;
	unsigned c = (unsigned char)s[0];
	if (c - 'B' <= 'F' - 'B') { /* (one compare for a path: '/' or '.') */
		if (mlen <= 5 && c != 'B' && c != 'E')
			return 0; /* maybe a "CODE "/"DATA "/"FRAME " prefix */
		if (c == 'B' ? mlen >= 8 && memcmp(s, "BUILDID:", 8) == 0
		             : c == 'F' && memcmp(s, "FILE:", 5) == 0) /* (mlen > 5) */
			return 0; /* a module prefix (parse_module) */
	}
	while (++i < lim && s[i] == ' ')
		;
	uint64_t v = 0;
	if (i + 2 < lim && s[i] == '0' && (s[i + 1] | 0x20) == 'x') {
		size_t a = i + 2, end = lim - a > 16 ? a + 16 : lim;
#ifdef __SSE2__
		size_t n;
		if (a + 16 <= lim && (n = hex_digits16(s + a, &v)) <= 8) {
			i = a + n;
		} else
#endif
		{
			for (i = a; i < end && (d = hex_value1[(unsigned char)s[i]]) != 0; i++)
				v = v << 4 | (d - 1);
		}
		if (i == a)
			return 0;
	} else if (i < lim && s[i] >= '1' && s[i] <= '9') {
		size_t end = lim - i > 19 ? i + 19 : lim;
		for (; i < end && s[i] >= '0' && s[i] <= '9'; i++)
			v = v * 10 + (uint64_t)(s[i] - '0');
	} else {
		return 0;
	}
	size_t take;
	if (i < lim && s[i] == '\n')
		take = i + 1;
	else if (i == avail && eof && avail < LLVM_LINE_MAX)
		take = i;
	else
		return 0; /* more digits, trailing text, \r, a long line */
	struct request *r = new_request(q);
	r->text = s;
	r->len = i;
	r->kind = REQ_CODE;
	r->addr = v;
	if (!held) {
		r->mod = intern_hashed(q, s, mlen, hash);
		return take;
	}
	__builtin_prefetch(&q->mod_slot[hash & (q->mod_slots - 1)]);
	intern_held(q, held);
	*held = (struct held_line){ (uint32_t)q->nreq, (uint32_t)mlen, hash };
	return take;
}

/*
 * Turn one fgets()-sized piece into a request: the C string ends at the first
 * NUL, and every \r and \n is erased (llvm::erase_if), in place.
 */
static void add_piece(struct query *q, char *s, size_t n)
{
	char *nul = memchr(s, '\0', n);
	if (nul)
		n = (size_t)(nul - s);
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] != '\r' && s[i] != '\n')
			s[w++] = s[i];
	parse_request(q, s, w, new_request(q));
}

/* Split buf[0..len) into pieces; returns bytes consumed.  At EOF the tail
 * is a piece too. */
static size_t split_pieces(struct query *q, char *buf, size_t len, int eof)
{
	size_t off = 0;
	int per_line = q->per_line && !q->pid;
	struct held_line held = { 0, 0, 0 };
	int hold = per_line && q->mod_slots >= HOLD_SLOTS; /* (for the chunk) */
	while (off < len && q->nreq < BATCH_LINES) {
		size_t avail = len - off;
		size_t fast = !per_line ? add_hex_line(q, buf + off, avail, eof)
		              : hold    ? add_module_line(q, &held, buf + off, avail, eof)
		                        : add_module_line(q, NULL, buf + off, avail, eof);
		if (fast) {
			off += fast;
			continue;
		}
		intern_held(q, &held); /* (modules numbered in line order) */
		size_t take = cli_llvm_piece_len(buf + off, avail, eof);
		if (!take)
			break;
		add_piece(q, buf + off, take);
		off += take;
	}
	intern_held(q, &held);
	return off;
}

/* Whether stdin has something to read now (or its end). */
static int stdin_ready(void)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP));
}

/* One read(2) into buf[*len..cap): the bytes read (0 at the end), or < 0
 * on an error (reported). */
static ptrdiff_t read_once(char *buf, size_t *len, size_t cap)
{
	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cli_err("<stdin>", "%s", strerror(errno));
			return -errno;
		}
		*len += (size_t)n;
		return n;
	}
}

/*
 * The loop reads what stdin has now: one read(2), which waits for
 * something (or the end), then more reads while poll() says more is there
 * already, so that a fast writer through a pipe (64 KiB a read) still
 * makes big batches, and a client that writes one line and waits gets its
 * answer.  With q->stdin_buf set (llvm-symbolizer's input), it reads
 * STDIN_CHUNK bytes at a time and takes the lines of each chunk at once,
 * while they are still in the cache, until the batch has BATCH_LINES
 * requests or the buffer is full (the requests point into the buffer,
 * which moves only between batches); a batch that stopped at BATCH_LINES
 * is followed by the rest of the buffer, topped up with what stdin has
 * already (no read that waits).
 */
int cli_query_stdin_loop(struct query *q,
                         ptrdiff_t (*take)(void *arg, char *buf, size_t len, int eof), void *arg)
{
	size_t cap = q->stdin_buf ? q->stdin_buf : STDIN_BUF;
	size_t chunk = q->stdin_buf ? STDIN_CHUNK : cap;
	char *buf = malloc(cap + 1);
	if (!buf) {
		cli_err(NULL, "out of memory");
		return -ENOMEM;
	}
	size_t start = 0, len = 0; /* buf[start..len) is not taken yet */
	int eof = 0, rc = 0, full = 0;
	while (rc == 0) {
		if (!eof) { /* (between batches: no request points into buf) */
			memmove(buf, buf + start, len - start);
			len -= start;
			start = 0;
		}
		/* After a batch that stopped at BATCH_LINES, the rest of buf is
		 * answered without waiting: more is read only if stdin has it
		 * now, and taken with it, so that the batch is full again. */
		for (int waited = full; !eof && len < cap && q->nreq < BATCH_LINES &&
		                        (!waited || stdin_ready());
		     waited = 1) {
			ptrdiff_t n = read_once(buf, &len, cap - len < chunk ? cap : len + chunk);
			if (n <= 0) {
				rc = n < 0 ? (int)n : 0;
				eof = n == 0;
				break;
			}
			if (q->stdin_buf) { /* this chunk's lines while they are cached */
				ptrdiff_t used = take(arg, buf + start, len - start, 0);
				if (used < 0) {
					rc = (int)used;
					break;
				}
				start += (size_t)used;
			}
		}
		if (rc)
			break;
		ptrdiff_t used = take(arg, buf + start, len - start, eof);
		if (used < 0) {
			rc = (int)used;
			break;
		}
		start += (size_t)used;
		full = q->nreq >= BATCH_LINES;
		if (q->nreq)
			rc = cli_query_run_batch(q);
		cli_out_flush(q->pr.out);
		if (eof && !full)
			break;
	}
	free(buf);
	return rc;
}

static ptrdiff_t take_pieces(void *arg, char *buf, size_t len, int eof)
{
	return (ptrdiff_t)split_pieces(arg, buf, len, eof);
}

int cli_query_run_stdin(struct query *q)
{
	q->stdin_buf = STDIN_BUF_PIECES;
	return cli_query_stdin_loop(q, take_pieces, q);
}

int cli_query_run_args(struct query *q, char **addrs, int naddrs)
{
	for (int i = 0; i < naddrs; i++)
		parse_request(q, addrs[i], strlen(addrs[i]), new_request(q));
	return q->nreq ? cli_query_run_batch(q) : 0;
}
