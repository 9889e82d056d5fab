/* SPDX-License-Identifier: MIT */
/*
 * test_resolve_stream.c - the streaming-store path of symdb_resolve_batch().
 *
 * A batch whose results pass RD_STREAM_MIN_BYTES (8 MiB: 209,716 results of
 * sizeof(symdb_result), 8-byte aligned) writes them with non-temporal stores
 * (reader/reader_resolve.c, put_run); smaller ones use plain stores.  No
 * other test passes that size.  Here one batch of STREAM_N sorted addresses
 * over the synthetic model of rd_model.h (most of them repeats: the path
 * that stores one result for a run of equal addresses) is resolved in one
 * call, and every result and each of its frames must equal those of the
 * same addresses resolved SMALL_N at a time (the plain-store path), field
 * by field; equal addresses must share their frames (symdb.h).  Both
 * majors of the format, Address_Size 4 and 8.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rd_model.h"
#include "symdb.h"

/* Past 8 MiB of results: (8 << 20) / 40 rounded up is 209,716. */
#define STREAM_N ((size_t)240000)
#define SMALL_N ((size_t)1000)
#define FRAMES_CAP ((size_t)1 << 16)

_Static_assert(STREAM_N * sizeof(symdb_result) > ((size_t)8 << 20),
               "the batch must pass the streaming threshold");

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Every field the library fills (symdb.h), not memcmp: padding is not
 * part of the answer. */
static int same_frame(const symdb_frame *a, const symdb_frame *b)
{
	return same_str(a->name, b->name) && same_str(a->short_name, b->short_name) &&
	       same_str(a->file, b->file) && same_str(a->file_rel, b->file_rel) &&
	       same_str(a->decl_file, b->decl_file) &&
	       same_str(a->decl_file_rel, b->decl_file_rel) && a->flags == b->flags &&
	       a->start_addr == b->start_addr && a->dwarf_start_addr == b->dwarf_start_addr &&
	       a->line == b->line && a->column == b->column &&
	       a->discriminator == b->discriminator && a->decl_line == b->decl_line;
}

static size_t mismatches; /* of the current batch: CHECKed once */

/* Result i of the big batch (r, frames fr) against the small batches'
 * (w, frames wf). */
static void compare(uint64_t a, const symdb_result *r, const symdb_frame *fr,
                    const symdb_result *w, const symdb_frame *wf)
{
	int ok = r->status == w->status && r->count == w->count && r->sym_name == w->sym_name &&
	         r->sym_addr == w->sym_addr && r->sym_size == w->sym_size;

	for (uint32_t j = 0; ok && j < w->count; j++)
		ok = same_frame(&fr[r->first + j], &wf[w->first + j]);
	if (!ok && mismatches++ < 5)
		fprintf(stderr, "address 0x%llx: streamed status %d count %u sym 0x%llx+%llu, "
		        "small batches status %d count %u sym 0x%llx+%llu\n", (unsigned long long)a,
		        r->status, r->count, (unsigned long long)r->sym_addr,
		        (unsigned long long)r->sym_size, w->status, w->count,
		        (unsigned long long)w->sym_addr, (unsigned long long)w->sym_size);
}

/* STREAM_N sorted addresses: gen_batch's (distinct ones, repeats, a few
 * below the base, SYMDB_ADDR_INVALID last), each in a run of 1-16 equal
 * ones, as in a profile. */
static uint64_t *repeated_batch(const model *m)
{
	uint64_t *d = gen_batch(m, STREAM_N / 8), *a = malloc(STREAM_N * sizeof *a);
	size_t n = 0;

	for (size_t i = 0; a && n < STREAM_N; i = (i + 1) % (STREAM_N / 8)) {
		size_t run = 1 + rnd_below(16);
		if (i == 0 && n) /* wrapped: stay sorted */
			break;
		while (run-- && n < STREAM_N)
			a[n++] = d[i];
	}
	while (a && n < STREAM_N) /* after the wrap: the last address again */
		a[n] = a[n - 1], n++;
	free(d);
	return a;
}

static void test_stream(unsigned aw, uint64_t base, int far, uint64_t seed)
{
	sizes sz = { 300, 6, 30, 60, 400, 500, far };
	symdb_frame *big_fr = malloc(FRAMES_CAP * sizeof *big_fr);
	symdb_frame *small_fr = malloc(FRAMES_CAP * sizeof *small_fr);
	symdb_result *big = malloc(STREAM_N * sizeof *big);
	symdb_result *small = malloc(SMALL_N * sizeof *small);
	model m;
	symdb_image *img;
	uint64_t *a;
	size_t repeats = 0;
	ptrdiff_t got;

	rng_state = seed;
	fprintf(stderr, "test_stream major=%u aw=%u far=%d seed=0x%llx\n", model_major, aw, far,
	        (unsigned long long)seed);
	gen_model(&m, &sz, aw, base);
	img = open_model(&m);
	if (!img || !big_fr || !small_fr || !big || !small) {
		CHECK(!"setup");
		goto out;
	}
	a = repeated_batch(&m);
	if (!a) {
		CHECK(!"malloc");
		goto out;
	}
	for (size_t i = 1; i < STREAM_N; i++)
		repeats += a[i] == a[i - 1];
	CHECK(repeats > STREAM_N / 2);
	CHECK((uintptr_t)big % 8 == 0);
	mismatches = 0;
	got = symdb_resolve_batch(img, a, STREAM_N, big_fr, FRAMES_CAP, sizeof *big_fr, big,
	                          sizeof *big);
	CHECK(got == (ptrdiff_t)STREAM_N); /* one call: the frames fit */
	for (size_t done = 0; got == (ptrdiff_t)STREAM_N && done < STREAM_N;) {
		size_t k = STREAM_N - done < SMALL_N ? STREAM_N - done : SMALL_N;
		ptrdiff_t g = symdb_resolve_batch(img, a + done, k, small_fr, FRAMES_CAP,
		                                  sizeof *small_fr, small, sizeof *small);
		if (g <= 0) {
			CHECK(g > 0);
			break;
		}
		for (size_t i = 0; i < (size_t)g; i++) {
			size_t at = done + i;
			compare(a[at], &big[at], big_fr, &small[i], small_fr);
			if (at && a[at] == a[at - 1] && (big[at].first != big[at - 1].first ||
			                                 big[at].count != big[at - 1].count))
				mismatches++; /* a repeat must share its frames */
		}
		done += (size_t)g;
	}
	if (mismatches)
		fprintf(stderr, "%zu of %zu results differ\n", mismatches, STREAM_N);
	CHECK(mismatches == 0);
	free(a);
out:
	symdb_image_close(img);
	free_model(&m);
	free(big_fr);
	free(small_fr);
	free(big);
	free(small);
}

int main(void)
{
	for (model_major = FMT_V1_MAJOR; model_major <= FMT_VERSION_MAJOR; model_major++) {
		test_stream(4, 0x400000, 0, 0x5eed0301);
		test_stream(8, 0x7f0000000000ull, 1, 0x5eed0302);
	}
	return check_exit();
}
