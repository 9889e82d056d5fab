/* SPDX-License-Identifier: MIT */
/*
 * ix_util.c - the indexer's two containers: ix_vec, a growable array of
 * fixed-size elements, and ix_strtab, the string pool of one image (SPEC §8).
 *
 * The pool is a byte buffer starting with NUL (reference 0 is the empty
 * string) plus an open-addressing hash table of (XXH3-64, reference) pairs,
 * so that every distinct string is stored once.  References are u32, so the
 * pool refuses to grow past 4 GiB (SPEC §13) instead of wrapping.  Insertion
 * order alone decides the bytes, which keeps the output deterministic.
 */
#define _DEFAULT_SOURCE /* mmap, O_CLOEXEC */
#include "indexer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* ---- ix_vec ------------------------------------------------------------- */

void ix_vec_init(ix_vec *v, size_t elem)
{
	v->p = NULL;
	v->n = 0;
	v->cap = 0;
	v->elem = elem;
}

void *ix_vec_push(ix_vec *v)
{
	uint8_t *slot;

	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		void *p;

		if (cap < v->cap || cap > SIZE_MAX / v->elem)
			return NULL;
		p = realloc(v->p, cap * v->elem);
		if (!p)
			return NULL;
		v->p = p;
		v->cap = cap;
	}
	slot = (uint8_t *)v->p + v->n * v->elem;
	memset(slot, 0, v->elem);
	v->n++;
	return slot;
}

void ix_vec_free(ix_vec *v)
{
	free(v->p);
	v->p = NULL;
	v->n = v->cap = 0;
}

/*
 * LSD radix sort, one pass per byte that differs between the keys (code
 * addresses of one unit usually differ in two or three): the unit walk
 * sorts range endpoints of every unit, and qsort's indirect comparisons were
 * 3 % of a libstdc++ build.
 */
int ix_sort_u64(uint64_t *a, size_t n)
{
	if (n < 32) {
		for (size_t i = 1; i < n; i++) {
			uint64_t v = a[i];
			size_t j = i;
			for (; j > 0 && a[j - 1] > v; j--)
				a[j] = a[j - 1];
			a[j] = v;
		}
		return 0;
	}
	uint64_t diff = 0;
	for (size_t i = 1; i < n; i++)
		diff |= a[i] ^ a[0];
	uint64_t *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -1;
	uint64_t *src = a, *dst = tmp;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		if (!((diff >> shift) & 0xff))
			continue;
		size_t pos[256] = { 0 };
		for (size_t i = 0; i < n; i++)
			pos[(src[i] >> shift) & 0xff]++;
		for (size_t d = 0, sum = 0; d < 256; d++) {
			size_t c = pos[d];
			pos[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[pos[(src[i] >> shift) & 0xff]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	return 0;
}

/* ---- ix_strtab ---------------------------------------------------------- */

typedef struct str_slot {
	uint64_t hash;
	uint32_t ref; /* 0 = empty slot (reference 0 is never hashed) */
} str_slot;

struct ix_strtab {
	uint8_t *bytes;
	uint64_t len, cap;
	str_slot *slots;
	size_t nslots, used; /* nslots is a power of two */
};

#define STR_POOL_MAX 0xFFFFFFFFull /* u32 references, SPEC §13 */

ix_strtab *ix_str_new(void)
{
	ix_strtab *t = calloc(1, sizeof *t);

	if (!t)
		return NULL;
	t->cap = 4096;
	t->bytes = malloc(t->cap);
	t->nslots = 1024;
	t->slots = calloc(t->nslots, sizeof *t->slots);
	if (!t->bytes || !t->slots) {
		ix_str_free(t);
		return NULL;
	}
	t->bytes[0] = 0;
	t->len = 1;
	return t;
}

void ix_str_free(ix_strtab *t)
{
	if (!t)
		return;
	free(t->bytes);
	free(t->slots);
	free(t);
}

static int str_rehash(ix_strtab *t)
{
	size_t n = t->nslots * 2, i, j;
	str_slot *s = calloc(n, sizeof *s);

	if (!s)
		return -1;
	for (i = 0; i < t->nslots; i++) {
		if (!t->slots[i].ref)
			continue;
		for (j = (size_t)t->slots[i].hash & (n - 1); s[j].ref; j = (j + 1) & (n - 1))
			;
		s[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return 0;
}

/* Append s plus a NUL; returns its reference or FMT_NONE. */
static uint32_t str_append(ix_strtab *t, const char *s, size_t len)
{
	uint64_t need = t->len + len + 1;
	uint32_t ref = (uint32_t)t->len;

	if (need > STR_POOL_MAX)
		return FMT_NONE;
	if (need > t->cap) {
		uint64_t cap = t->cap * 2;
		uint8_t *p;

		while (cap < need)
			cap *= 2;
		if (cap > SIZE_MAX)
			return FMT_NONE;
		p = realloc(t->bytes, (size_t)cap);
		if (!p)
			return FMT_NONE;
		t->bytes = p;
		t->cap = cap;
	}
	memcpy(t->bytes + t->len, s, len);
	t->bytes[t->len + len] = 0;
	t->len = need;
	return ref;
}

uint32_t ix_str_add(ix_strtab *t, const char *s, size_t len)
{
	uint64_t h;
	size_t i;
	uint32_t ref;

	if (len == 0)
		return 0;
	if (memchr(s, 0, len))
		len = strlen(s); /* a pool string ends at its first NUL (SPEC §8) */
	if ((t->used + 1) * 4 > t->nslots * 3 && str_rehash(t) < 0)
		return FMT_NONE;
	h = XXH3_64bits(s, len);
	for (i = (size_t)h & (t->nslots - 1); t->slots[i].ref; i = (i + 1) & (t->nslots - 1)) {
		const str_slot *sl = &t->slots[i];

		if (sl->hash == h && t->len - sl->ref > len &&
		    memcmp(t->bytes + sl->ref, s, len) == 0 && t->bytes[sl->ref + len] == 0)
			return sl->ref;
	}
	ref = str_append(t, s, len);
	if (ref == FMT_NONE)
		return FMT_NONE;
	t->slots[i].hash = h;
	t->slots[i].ref = ref;
	t->used++;
	return ref;
}

uint32_t ix_str_addz(ix_strtab *t, const char *s)
{
	return ix_str_add(t, s, strlen(s));
}

const uint8_t *ix_str_bytes(const ix_strtab *t, size_t *len)
{
	*len = (size_t)t->len;
	return t->bytes;
}

/* ---- ix_image ----------------------------------------------------------- */

int ix_image_init(ix_image *img)
{
	memset(img, 0, sizeof *img);
	img->strings = ix_str_new();
	if (!img->strings)
		return -ENOMEM;
	ix_vec_init(&img->segments, sizeof(ix_segment));
	ix_vec_init(&img->symbols, sizeof(ix_symbol));
	ix_vec_init(&img->alt_symbols, sizeof(ix_symbol));
	ix_vec_init(&img->files, sizeof(ix_file));
	ix_vec_init(&img->functions, sizeof(ix_function));
	ix_vec_init(&img->nodes, sizeof(ix_node));
	ix_vec_init(&img->imap, sizeof(ix_imap));
	ix_vec_init(&img->rows, sizeof(ix_row));
	return 0;
}

void ix_image_free(ix_image *img)
{
	ix_str_free(img->strings);
	img->strings = NULL;
	ix_vec_free(&img->segments);
	ix_vec_free(&img->symbols);
	ix_vec_free(&img->alt_symbols);
	ix_vec_free(&img->files);
	ix_vec_free(&img->functions);
	ix_vec_free(&img->nodes);
	ix_vec_free(&img->imap);
	ix_vec_free(&img->rows);
}

