/* SPDX-License-Identifier: MIT */
/*
 * test_symbolize_alloc DB BINARY... NOT_INDEXED: after warm-up,
 * symdb_symbolize() allocates nothing.  malloc, calloc, realloc, free and
 * the aligned allocators are interposed here (forwarding to glibc's
 * __libc_*; under AddressSanitizer, its allocation hook instead), so every
 * allocation of the process, the library's and the demangler's included,
 * is counted.  The batch mixes the indexed binaries
 * given (by path and by build-id hex), every address kind, demangling on
 * and off per request, repeated addresses, a binary that is not indexed
 * (looked up again by every call), a path that does not exist and
 * out-of-range file offsets.  It is reshuffled before every call, and calls
 * take turns: input order, resolution order, streamed to on_results without
 * a results array.  Warm-up: three calls (one of each); then twenty-one
 * calls must allocate nothing.  One call's names are checked: demangled
 * where the request asked, mangled C++ names left where it did not.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symdb.h"

static volatile size_t allocs;

#if defined(__SANITIZE_ADDRESS__)
/* AddressSanitizer owns malloc and its friends (interposing them here would
 * mix its heap with glibc's); it calls these hooks for every allocation of
 * the process instead. */
/* sanitizer/allocator_interface.h is clang's; GCC's libasan exports the
 * function without shipping that header. */
int __sanitizer_install_malloc_and_free_hooks(void (*on_alloc)(const volatile void *, size_t),
                                              void (*on_free)(const volatile void *));

static void on_alloc(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
	allocs++;
}

static void on_free(const volatile void *p)
{
	(void)p;
}

static void count_allocations(void)
{
	__sanitizer_install_malloc_and_free_hooks(on_alloc, on_free);
}
#else
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t a, size_t n);
void __libc_free(void *p);

void *malloc(size_t n)
{
	allocs++;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	allocs++;
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	allocs++;
	return __libc_realloc(p, n);
}

void free(void *p)
{
	__libc_free(p);
}

void *memalign(size_t a, size_t n)
{
	allocs++;
	return __libc_memalign(a, n);
}

void *aligned_alloc(size_t a, size_t n)
{
	allocs++;
	return __libc_memalign(a, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
	allocs++;
	*out = __libc_memalign(a, n);
	return *out ? 0 : 12;
}

static void count_allocations(void)
{
	/* the interposed functions above count from the start */
}
#endif

#define PER_IMAGE 3000

/* on_results of the streamed calls: counts what it is handed. */
static void count_results(void *arg, const symdb_symbolized *res, const uint32_t *order,
                          size_t first, size_t count)
{
	(void)res;
	(void)order;
	(void)first;
	*(size_t *)arg += count;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: test_symbolize_alloc DB BINARY... NOT_INDEXED\n");
		return 2;
	}
	count_allocations();
	symdb *db;
	char err[512] = "";
	SYMDB_OPTS(symdb_open_opts, oo, .errbuf = err, .errbuf_sz = sizeof err);
	if (symdb_open(argv[1], &oo, &db)) {
		fprintf(stderr, "open %s: %s\n", argv[1], err);
		return 1;
	}
	int nbin = argc - 3;
	const char *not_indexed = argv[argc - 1];
	size_t n = (size_t)nbin * PER_IMAGE + 64;
	symdb_request *reqs = calloc(n, sizeof(*reqs));
	symdb_symbolized *res = calloc(n, sizeof(*res));
	static char hex[16][2 * SYMDB_UUID_MAX + 1];
	size_t k = 0;
	for (int b = 0; b < nbin && b < 16; b++) {
		const char *bin = argv[2 + b];
		symdb_image *img;
		symdb_image_info info;
		if (symdb_image_open_binary(db, bin, NULL, &img)) {
			fprintf(stderr, "%s is not indexed in %s\n", bin, argv[1]);
			return 1;
		}
		info.sz = sizeof info;
		symdb_image_get_info(img, &info);
		symdb_uuid_format(&info.uuid, hex[b]);
		/* Addresses over the symbols' span, some repeated. */
		uint64_t lo = info.base_address, span = 0x20000;
		symdb_image_close(img);
		for (int i = 0; i < PER_IMAGE; i++, k++) {
			symdb_request *r = &reqs[k];
			r->image_ref = (rnd() & 3) == 0 ? SYMDB_IMAGE_HEX : SYMDB_IMAGE_PATH;
			if (r->image_ref == SYMDB_IMAGE_HEX)
				r->image.hex = hex[b];
			else
				r->image.path = bin;
			r->addr_kind = (uint8_t)(rnd() % 4);
			uint64_t off = i % 7 == 0 ? 0x1000 : rnd() % span;
			r->addr = r->addr_kind == SYMDB_ADDR_VADDR ? lo + off
			        : r->addr_kind == SYMDB_ADDR_RUNTIME ? 0x7f0000000000 + off
			        : off;
			r->load_address = r->addr_kind == SYMDB_ADDR_RUNTIME ? 0x7f0000000000 : 0;
			r->flags = (rnd() & 1) ? SYMDB_REQ_DEMANGLE : 0;
		}
	}
	for (int i = 0; i < 32; i++, k++) {
		reqs[k].image_ref = SYMDB_IMAGE_PATH;
		reqs[k].image.path = i % 3 == 0 ? "/nonexistent/binary"
		                     : i % 3 == 1 ? not_indexed : argv[2];
		reqs[k].addr_kind = SYMDB_ADDR_FILEOFF;
		reqs[k].addr = 0x7fff00000000ull + (uint64_t)i;
	}
	n = k;
	symdb_symbolizer *s;
	if (symdb_symbolizer_create(db, NULL, &s)) {
		fprintf(stderr, "symdb_symbolizer_create failed\n");
		return 1;
	}
	SYMDB_OPTS(symdb_symbolize_opts, o, .errbuf = err, .errbuf_sz = sizeof err);
	size_t counted = 0, frames = 0, ok = 0, dcap = 0, streamed = 0;
	char *dbuf = NULL;
	for (int call = 0; call < 24; call++) {
		for (size_t i = n - 1; i > 0; i--) { /* reshuffle */
			size_t j = (size_t)(rnd() % (i + 1));
			symdb_request t = reqs[i];
			reqs[i] = reqs[j];
			reqs[j] = t;
		}
		/* input order, resolution order, streamed without a results array */
		int mode = call % 3;
		o.flags = mode == 0 ? 0 : mode == 1 ? SYMDB_SYMBOLIZE_ORDER
		                                    : SYMDB_SYMBOLIZE_ORDER | SYMDB_SYMBOLIZE_STREAM;
		o.on_results = mode == 2 ? count_results : NULL;
		o.on_results_arg = &streamed;
		streamed = 0;
		size_t before = allocs;
		int rc = symdb_symbolize(s, reqs, n, mode == 2 ? NULL : res, &o);
		if (mode == 2 && streamed != n) {
			fprintf(stderr, "streamed %zu results of %zu\n", streamed, n);
			return 1;
		}
		size_t used = allocs - before;
		if (rc) {
			fprintf(stderr, "symdb_symbolize: %s\n", err);
			return 1;
		}
		if (call >= 3 && used)
			printf("call %d (mode %d): %zu allocations\n", call, mode, used);
		if (call >= 3)
			counted += used;
		else
			printf("warm-up call %d: %zu allocations\n", call, used);
		if (call == 3) { /* input order: check what each request asked for */
			size_t mangled_raw = 0;
			for (size_t i = 0; i < n; i++) {
				frames += res[i].nframes;
				ok += res[i].status == SYMDB_SYM_OK;
				for (uint32_t f = 0; f < res[i].nframes; f++) {
					const char *nm = res[i].frames[f].name;
					/* (Names LLVM cannot demangle stay as they are.) */
					if (!nm || strncmp(nm, "_Z", 2) != 0 ||
					    symdb_demangle(nm, &dbuf, &dcap) != 1)
						continue;
					if (reqs[i].flags & SYMDB_REQ_DEMANGLE) {
						fprintf(stderr, "request %zu wants demangling, got %s\n",
						        i, nm);
						return 1;
					}
					mangled_raw++;
				}
			}
			if (!mangled_raw) {
				fprintf(stderr, "no mangled name left as asked: the C++ binary "
				                "proves nothing\n");
				return 1;
			}
		}
	}
	printf("%zu requests per call (%zu resolved, %zu frames); 21 calls after warm-up: "
	       "%zu allocations\n", n, ok, frames, counted);
	if (!ok || !frames) {
		fprintf(stderr, "nothing resolved: the test proves nothing\n");
		return 1;
	}
	symdb_symbolizer_free(s);
	symdb_close(db);
	free(reqs);
	free(res);
	free(dbuf);
	return counted ? 1 : 0;
}
