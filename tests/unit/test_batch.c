/* SPDX-License-Identifier: MIT */
/*
 * test_batch.c - the batch messages of `symdb serve` (SPEC §16, symdb_batch.h):
 * requests and responses survive a round trip; every proper prefix of a valid
 * message is rejected; counts that lie (too large for the length, not adding
 * up, pointing at modules that do not exist) are rejected before anything is
 * sized from them; reserved fields and unknown kinds are rejected; the string
 * table holds each distinct name once; the encoder allocates only through the
 * caller's realloc and stops at its byte limit.  Seeds are fixed.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "symdb_batch.h"
#include "symdb_endian.h"

static char why[256];
#define OPTS(...) (&(symdb_batch_opts){ .sz = sizeof(symdb_batch_opts), .errbuf = why, \
                                        .errbuf_sz = sizeof why, __VA_ARGS__ })

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

/* The request of SPEC Appendix C: one build-id module with two vaddrs, one
 * path module (runtime, arch x86_64) with one address, one stack of two
 * frames. */
static size_t sample_request(uint8_t *buf, size_t cap)
{
	static const uint8_t bid[] = { 0xde, 0xad, 0xbe, 0xef };
	static const uint64_t a0[] = { 0x1139, 0x1150 }, a1[] = { 0x7f0000001139 };
	static const uint32_t sm[] = { 0, 1 };
	static const uint64_t sa[] = { 0x1139, 0x7f0000001150 };
	symdb_batch_module m0 = { .id_kind = SYMDB_BATCH_ID_BUILD_ID, .id = bid, .id_len = 4,
	                          .naddrs = 2 };
	symdb_batch_module m1 = { .id_kind = SYMDB_BATCH_ID_PATH, .id = (const uint8_t *)"/bin/x",
	                          .id_len = 6, .arch = (const uint8_t *)"x86_64", .arch_len = 6,
	                          .addr_kind = 3, .load_address = 0x7f0000000000, .naddrs = 1 };
	symdb_batch_writer w;
	size_t len = 0;

	symdb_batch_writer_begin(&w, buf, cap, SYMDB_BATCH_DEMANGLE | SYMDB_BATCH_INLINES, 2, 3, 1, 2);
	symdb_batch_writer_module(&w, &m0, a0);
	symdb_batch_writer_module(&w, &m1, a1);
	symdb_batch_writer_stack(&w, sm, sa, 2);
	CHECK(symdb_batch_writer_end(&w, &len) == 0);
	return len;
}

static void test_request_roundtrip(void)
{
	uint8_t buf[512];
	size_t len = sample_request(buf, sizeof buf);
	symdb_batch_request rq;
	symdb_batch_module mods[2];
	uint64_t addrs[2];
	uint32_t counts[1], fm[2];
	uint64_t fa[2];
	symdb_batch_writer w;
	size_t need = 0;

	CHECK(len == 24 + (20 + 4 + 16) + (20 + 6 + 6 + 8) + (4 + 24));
	CHECK(symdb_batch_request_parse(buf, len, OPTS(), &rq) == 0);
	CHECK(rq.nmodules == 2 && rq.naddrs == 3 && rq.nstacks == 1 && rq.nframes == 2);
	CHECK(rq.flags == (SYMDB_BATCH_DEMANGLE | SYMDB_BATCH_INLINES));
	CHECK(symdb_batch_request_modules(&rq, mods, 1) == SYMDB_E_INVAL);
	CHECK(symdb_batch_request_modules(&rq, mods, 2) == 2);
	CHECK(mods[0].id_kind == SYMDB_BATCH_ID_BUILD_ID && mods[0].id_len == 4 &&
	      mods[0].id[0] == 0xde && mods[0].naddrs == 2 && mods[0].arch_len == 0);
	symdb_batch_module_addrs(&mods[0], addrs);
	CHECK(addrs[0] == 0x1139 && addrs[1] == 0x1150);
	CHECK(mods[1].id_kind == SYMDB_BATCH_ID_PATH && mods[1].id_len == 6 &&
	      memcmp(mods[1].id, "/bin/x", 6) == 0 && mods[1].arch_len == 6 &&
	      memcmp(mods[1].arch, "x86_64", 6) == 0 && mods[1].addr_kind == 3 &&
	      mods[1].load_address == 0x7f0000000000);
	CHECK(symdb_batch_request_stacks(&rq, counts, fm, fa) == 0);
	CHECK(counts[0] == 2 && fm[0] == 0 && fm[1] == 1 && fa[1] == 0x7f0000001150);

	/* Measuring (buf NULL) gives the same length; a short buffer is TOO_BIG. */
	symdb_batch_writer_begin(&w, NULL, 0, 0, 1, 1, 0, 0);
	symdb_batch_writer_module(&w, &mods[0], addrs);
	CHECK(symdb_batch_writer_end(&w, &need) == SYMDB_E_INVAL); /* 2 addrs > 1 declared */
	CHECK(sample_request(NULL, 0) == len);
	symdb_batch_writer_begin(&w, buf, 30, 0, 1, 2, 0, 0);
	CHECK(symdb_batch_writer_module(&w, &mods[0], addrs) == SYMDB_E_TOO_BIG);
	CHECK(symdb_batch_writer_end(&w, &need) == SYMDB_E_TOO_BIG && need == 24 + 20 + 4 + 16);
}

/* Every proper prefix is rejected, and never read past (ASan builds). */
static void test_request_truncations(void)
{
	uint8_t buf[512];
	size_t len = sample_request(buf, sizeof buf);
	symdb_batch_request rq;

	for (size_t n = 0; n < len; n++) {
		uint8_t *copy = malloc(n ? n : 1);

		memcpy(copy, buf, n);
		if (symdb_batch_request_parse(copy, n, OPTS(), &rq) != SYMDB_E_INVAL) {
			fprintf(stderr, "prefix %zu of %zu accepted\n", n, len);
			CHECK(!"prefix accepted");
		}
		free(copy);
	}
	/* One byte more is rejected too. */
	buf[len] = 0;
	CHECK(symdb_batch_request_parse(buf, len + 1, OPTS(), &rq) == SYMDB_E_INVAL);
	CHECK(strstr(why, "after the last stack") != NULL);
}

static int parse_patched(const uint8_t *orig, size_t len, size_t at, const void *bytes, size_t n,
                         const symdb_batch_opts *o)
{
	uint8_t buf[512];
	symdb_batch_request rq;

	memcpy(buf, orig, len);
	memcpy(buf + at, bytes, n);
	return symdb_batch_request_parse(buf, len, o, &rq);
}

static void put32(uint8_t *p, uint32_t v) { fmt_put32(p, v); }

static void test_request_lies(void)
{
	uint8_t buf[512], v[8];
	size_t len = sample_request(buf, sizeof buf);
	const size_t m1 = 24 + 40, st = m1 + 40;

	/* Header counts the length cannot hold: rejected from the header alone. */
	put32(v, 0xFFFFFFFFu);
	for (size_t at = 8; at < 24; at += 4) {
		CHECK(parse_patched(buf, len, at, v, 4, OPTS()) == SYMDB_E_INVAL);
		CHECK(strstr(why, "at least") != NULL);
	}
	/* Counts one too large or too small: they do not add up. */
	put32(v, 4);
	CHECK(parse_patched(buf, len, 12, v, 4, OPTS()) == SYMDB_E_INVAL);
	put32(v, 2);
	CHECK(parse_patched(buf, len, 12, v, 4, OPTS()) == SYMDB_E_INVAL);
	put32(v, 1);
	CHECK(parse_patched(buf, len, 8, v, 4, OPTS()) == SYMDB_E_INVAL);
	CHECK(parse_patched(buf, len, 20, v, 4, OPTS()) == SYMDB_E_INVAL);
	/* A module's Address_Count larger than its record. */
	put32(v, 3);
	CHECK(parse_patched(buf, len, 24 + 16, v, 4, OPTS()) == SYMDB_E_INVAL);
	put32(v, 0x20000000u);
	CHECK(parse_patched(buf, len, 24 + 16, v, 4, OPTS()) == SYMDB_E_INVAL);
	/* A stack's Frame_Count larger than the rest. */
	put32(v, 3);
	CHECK(parse_patched(buf, len, st, v, 4, OPTS()) == SYMDB_E_INVAL);
	/* A frame naming module 2 of 2. */
	put32(v, 2);
	CHECK(parse_patched(buf, len, st + 4 + 12, v, 4, OPTS()) == SYMDB_E_INVAL);
	CHECK(strstr(why, "Module_Index 2") != NULL);
	/* Bad magic, version 2, unknown flags, Functions 3. */
	CHECK(parse_patched(buf, len, 0, "SYBR", 4, OPTS()) == SYMDB_E_INVAL);
	CHECK(parse_patched(buf, len, 4, "\x02", 1, OPTS()) == SYMDB_E_VERSION);
	CHECK(parse_patched(buf, len, 5, "\x07", 1, OPTS()) == 0); /* any 1.x minor */
	CHECK(parse_patched(buf, len, 6, "\x00\x10", 2, OPTS()) == SYMDB_E_INVAL);
	CHECK(parse_patched(buf, len, 6, "\x00\x0f", 2, OPTS()) == SYMDB_E_INVAL);
	/* Module fields: Id_Kind 0 and 4, Addr_Kind 4, reserved, id length 0 and 33,
	 * load address on a vaddr module, a NUL in a path, a bad arch byte. */
	CHECK(parse_patched(buf, len, 24, "\x00", 1, OPTS()) == SYMDB_E_INVAL);
	CHECK(parse_patched(buf, len, 24, "\x04", 1, OPTS()) == SYMDB_E_INVAL);
	CHECK(parse_patched(buf, len, 25, "\x04", 1, OPTS()) == SYMDB_E_INVAL);
	CHECK(parse_patched(buf, len, 29, "\x01", 1, OPTS()) == SYMDB_E_INVAL);
	CHECK(parse_patched(buf, len, 26, "\x00\x00", 2, OPTS()) == SYMDB_E_INVAL);
	CHECK(parse_patched(buf, len, 26, "\x00\x21", 2, OPTS()) == SYMDB_E_INVAL);
	CHECK(parse_patched(buf, len, 32 + 7, "\x01", 1, OPTS()) == SYMDB_E_INVAL);
	CHECK(parse_patched(buf, len, m1 + 20 + 3, "\x00", 1, OPTS()) == SYMDB_E_INVAL);
	CHECK(parse_patched(buf, len, m1 + 26 + 2, "/", 1, OPTS()) == SYMDB_E_INVAL);
	/* The caller's limits, from the header. */
	CHECK(symdb_batch_request_parse(buf, len, OPTS(.max_modules = 1), &(symdb_batch_request){ 0 }) ==
	      SYMDB_E_TOO_BIG);
	CHECK(symdb_batch_request_parse(buf, len, OPTS(.max_addresses = 4), &(symdb_batch_request){ 0 }) ==
	      SYMDB_E_TOO_BIG); /* 3 addresses + 2 stack frames */
	CHECK(symdb_batch_request_parse(buf, len, OPTS(.max_addresses = 5), &(symdb_batch_request){ 0 }) == 0);
	/* Every single-byte flip is rejected or parses into a valid request:
	 * never a crash or an out-of-bounds read (ASan). */
	for (size_t i = 0; i < len; i++)
		for (unsigned bit = 0; bit < 8; bit++) {
			uint8_t b = (uint8_t)(buf[i] ^ (1u << bit));
			symdb_batch_request rq;
			uint8_t copy[512];
			int rc;

			memcpy(copy, buf, len);
			copy[i] = b;
			rc = symdb_batch_request_parse(copy, len, NULL, &rq);
			CHECK(rc == 0 || rc == SYMDB_E_INVAL || rc == SYMDB_E_VERSION);
			if (rc == 0) {
				symdb_batch_module mods[2];
				CHECK(symdb_batch_request_modules(&rq, mods, 2) == 2);
			}
		}
}

/* Random requests: written, parsed, read back equal. */
static void test_request_random(void)
{
	for (int round = 0; round < 200; round++) {
		uint32_t nm = 1 + next() % 5, ns = next() % 3, na = 0, nf = 0;
		symdb_batch_module m[5];
		uint8_t ids[5][40];
		uint64_t addrs[5][16], fa[16];
		uint32_t fm[16], cnt[3];
		symdb_batch_writer w;
		size_t need, len;
		uint8_t *buf;
		symdb_batch_request rq;
		symdb_batch_module got[5];

		for (uint32_t i = 0; i < nm; i++) {
			m[i] = (symdb_batch_module){ .id_kind = (uint8_t)(1 + next() % 3),
			                             .addr_kind = (uint8_t)(next() % 4),
			                             .naddrs = (uint32_t)(next() % 16) };
			m[i].id_len = (uint16_t)(1 + next() % 32);
			for (size_t k = 0; k < m[i].id_len; k++)
				ids[i][k] = (uint8_t)(m[i].id_kind == SYMDB_BATCH_ID_PATH ? 'a' + next() % 26
				                                                           : next());
			m[i].id = ids[i];
			if (m[i].addr_kind == 3)
				m[i].load_address = next();
			for (uint32_t k = 0; k < m[i].naddrs; k++)
				addrs[i][k] = next();
			na += m[i].naddrs;
		}
		for (uint32_t s = 0; s < ns; s++) {
			cnt[s] = (uint32_t)(next() % 6);
			for (uint32_t k = 0; k < cnt[s]; k++) {
				fm[nf + k] = (uint32_t)(next() % nm);
				fa[nf + k] = next();
			}
			nf += cnt[s];
		}
		for (int pass = 0; pass < 2; pass++) {
			buf = pass ? malloc(need) : NULL;
			symdb_batch_writer_begin(&w, buf, pass ? need : 0, next() % 12, nm, na, ns, nf);
			for (uint32_t i = 0; i < nm; i++)
				symdb_batch_writer_module(&w, &m[i], addrs[i]);
			for (uint32_t s = 0, k = 0; s < ns; k += cnt[s], s++)
				symdb_batch_writer_stack(&w, fm + k, fa + k, cnt[s]);
			CHECK(symdb_batch_writer_end(&w, pass ? &len : &need) == 0);
		}
		CHECK(len == need);
		CHECK(symdb_batch_request_parse(buf, len, OPTS(), &rq) == 0);
		CHECK(symdb_batch_request_modules(&rq, got, 5) == nm);
		for (uint32_t i = 0; i < nm; i++) {
			uint64_t back[16];

			CHECK(got[i].id_kind == m[i].id_kind && got[i].addr_kind == m[i].addr_kind &&
			      got[i].id_len == m[i].id_len && memcmp(got[i].id, ids[i], m[i].id_len) == 0 &&
			      got[i].load_address == m[i].load_address && got[i].naddrs == m[i].naddrs);
			symdb_batch_module_addrs(&got[i], back);
			CHECK(memcmp(back, addrs[i], m[i].naddrs * 8) == 0);
		}
		if (ns) {
			uint32_t c2[3], fm2[16];
			uint64_t fa2[16];

			CHECK(symdb_batch_request_stacks(&rq, c2, fm2, fa2) == 0);
			CHECK(memcmp(c2, cnt, ns * 4) == 0 && memcmp(fm2, fm, nf * 4) == 0 &&
			      memcmp(fa2, fa, nf * 8) == 0);
		}
		free(buf);
	}
}

/* ---- responses ------------------------------------------------------------ */

static size_t allocs, live;
static void *counting_realloc(void *ctx, void *p, size_t n)
{
	(void)ctx;
	if (!n) {
		live--;
		free(p);
		return NULL;
	}
	allocs++;
	live += !p;
	return realloc(p, n);
}

static uint8_t *sample_response(symdb_batch_encoder *e, size_t *len)
{
	symdb_batch_frame f[2] = {
		{ .function = "inner", .file = "/src/a.c", .start_file = "/src/a.h", .line = 3,
		  .column = 7, .start_line = 1, .flags = SYMDB_BATCH_FRAME_HAS_START |
		  SYMDB_BATCH_FRAME_INLINED, .start = 0x1130 },
		{ .function = "main", .file = "/src/a.c", .start_file = "/src/a.c", .line = 12,
		  .column = 3, .start_line = 10, .flags = SYMDB_BATCH_FRAME_HAS_START, .start = 0x1120 },
	};
	symdb_batch_module_result m0 = { .status = SYMDB_BATCH_OK, .nresults = 2, .image_id_len = 4,
	                                 .image_id = { 0xde, 0xad, 0xbe, 0xef } };
	symdb_batch_module_result m1 = { .status = SYMDB_BATCH_UNKNOWN_IMAGE, .nresults = 1,
	                                 .error = "SYMDB_E_NOT_INDEXED: image is not in the database" };
	symdb_batch_result ok = { .status = SYMDB_BATCH_OK, .sym_name = "main", .sym_start = 0x1120,
	                          .sym_size = 0x40, .sym_offset = 0x19 };
	uint8_t *out;

	CHECK(symdb_batch_encode_begin(e, 2, 1) == 0);
	CHECK(symdb_batch_encode_module(e, &m0) == 0);
	CHECK(symdb_batch_encode_module(e, &m1) == 0);
	CHECK(symdb_batch_encode_stack(e, 2) == 0);
	CHECK(symdb_batch_encode_result(e, &ok, f, 2) == 0);
	CHECK(symdb_batch_encode_result(e, &(symdb_batch_result){ .status = SYMDB_BATCH_NO_SYMBOL },
	                                NULL, 0) == 0);
	CHECK(symdb_batch_encode_result(e, &(symdb_batch_result){ .status = SYMDB_BATCH_UNKNOWN_IMAGE },
	                                NULL, 0) == 0);
	CHECK(symdb_batch_encode_result(e, &ok, f, 2) == 0);
	CHECK(symdb_batch_encode_result(e, &(symdb_batch_result){ .status = SYMDB_BATCH_UNKNOWN_IMAGE },
	                                NULL, 0) == 0);
	CHECK(symdb_batch_encode_size(e, len) == 0);
	out = malloc(*len);
	CHECK(symdb_batch_encode_finish(e, out, *len - 1) == SYMDB_E_TOO_BIG);
	CHECK(symdb_batch_encode_finish(e, out, *len) == 0);
	return out;
}

static void test_response(void)
{
	SYMDB_OPTS(symdb_batch_encoder_opts, eo, .realloc_fn = counting_realloc);
	symdb_batch_encoder *e;
	symdb_batch_response r;
	symdb_batch_frame f;
	symdb_batch_module_result mr;
	symdb_batch_result rr;
	uint8_t *msg;
	uint32_t n;
	size_t len, warm;
	const size_t strings = 50 + 6 + 9 + 9 + 5;

	CHECK(symdb_batch_encoder_create(&eo, &e) == 0);
	msg = sample_response(e, &len);
	/* The error, "inner", "/src/a.c", "/src/a.h", "main": once each. */
	CHECK(len == 32 + 2 * 48 + 4 + 5 * 40 + 4 * 40 + strings);
	CHECK(symdb_batch_response_parse(msg, len, OPTS(), &r) == 0);
	CHECK(r.nmodules == 2 && r.nstacks == 1 && r.nresults == 5 && r.nframes == 4 &&
	      r.string_bytes == strings);
	symdb_batch_response_module(&r, 0, &mr);
	CHECK(mr.status == SYMDB_BATCH_OK && mr.nresults == 2 && mr.image_id_len == 4 &&
	      mr.image_id[3] == 0xef && mr.error == NULL);
	symdb_batch_response_module(&r, 1, &mr);
	CHECK(mr.status == SYMDB_BATCH_UNKNOWN_IMAGE && mr.nresults == 1 && mr.image_id_len == 0 &&
	      mr.error && strncmp(mr.error, "SYMDB_E_NOT_INDEXED", 19) == 0);
	symdb_batch_response_stack(&r, 0, &n);
	CHECK(n == 2);
	symdb_batch_response_result(&r, 3, &rr);
	CHECK(rr.status == SYMDB_BATCH_OK && rr.nframes == 2 && rr.sym_name &&
	      strcmp(rr.sym_name, "main") == 0 && rr.sym_start == 0x1120 && rr.sym_size == 0x40 &&
	      rr.sym_offset == 0x19);
	symdb_batch_response_result(&r, 1, &rr);
	CHECK(rr.status == SYMDB_BATCH_NO_SYMBOL && rr.nframes == 0 && rr.sym_name == NULL);
	symdb_batch_response_frame(&r, 2, &f);
	CHECK(f.function && strcmp(f.function, "inner") == 0 && strcmp(f.file, "/src/a.c") == 0 &&
	      strcmp(f.start_file, "/src/a.h") == 0 && f.line == 3 && f.column == 7 &&
	      f.start == 0x1130 && f.start_line == 1 &&
	      f.flags == (SYMDB_BATCH_FRAME_HAS_START | SYMDB_BATCH_FRAME_INLINED));
	symdb_batch_response_frame(&r, 3, &f);
	CHECK(strcmp(f.function, "main") == 0 && f.start_file == f.file && f.start == 0x1120);

	/* Every proper prefix, and one byte more, is rejected. */
	for (size_t k = 0; k <= len + 1; k++) {
		uint8_t *copy = malloc(len + 1);

		memcpy(copy, msg, len);
		copy[len] = 0;
		if (k != len)
			CHECK(symdb_batch_response_parse(copy, k, NULL, &r) == SYMDB_E_INVAL);
		free(copy);
	}
	/* Lies: a string reference past the table, frames on a failed result,
	 * a Result_Count that does not add up, a table not ending in NUL. */
	{
		uint8_t *c = malloc(len);
		const size_t res = 32 + 2 * 48 + 4, fr = res + 5 * 40;

		memcpy(c, msg, len);
		fmt_put32(c + fr, (uint32_t)strings);
		CHECK(symdb_batch_response_parse(c, len, OPTS(), &r) == SYMDB_E_INVAL);
		memcpy(c, msg, len);
		c[res + 40] = SYMDB_BATCH_DEADLINE; /* result 1: any status with 0 frames */
		CHECK(symdb_batch_response_parse(c, len, OPTS(), &r) == 0);
		c[res] = SYMDB_BATCH_DAMAGED;       /* result 0 has 2 frames */
		CHECK(symdb_batch_response_parse(c, len, OPTS(), &r) == SYMDB_E_INVAL);
		memcpy(c, msg, len);
		fmt_put64(c + res + 40 + 16, 1);    /* a symbol start without a symbol */
		CHECK(symdb_batch_response_parse(c, len, OPTS(), &r) == SYMDB_E_INVAL);
		memcpy(c, msg, len);
		c[32 + 1] = 33;                     /* Image_Id_Length */
		CHECK(symdb_batch_response_parse(c, len, OPTS(), &r) == SYMDB_E_INVAL);
		memcpy(c, msg, len);
		c[32 + 16 + 4] = 1;                 /* Image_Id past its length */
		CHECK(symdb_batch_response_parse(c, len, OPTS(), &r) == SYMDB_E_INVAL);
		memcpy(c, msg, len);
		fmt_put32(c + 32 + 4, 3);
		CHECK(symdb_batch_response_parse(c, len, OPTS(), &r) == SYMDB_E_INVAL);
		memcpy(c, msg, len);
		c[len - 1] = 'x';
		CHECK(symdb_batch_response_parse(c, len, OPTS(), &r) == SYMDB_E_INVAL);
		memcpy(c, msg, len);
		fmt_put32(c + fr + 28, 4); /* unknown frame flag */
		CHECK(symdb_batch_response_parse(c, len, OPTS(), &r) == SYMDB_E_INVAL);
		free(c);
	}
	free(msg);

	/* Counts that do not add up are the encoder's error. */
	CHECK(symdb_batch_encode_begin(e, 1, 0) == 0);
	CHECK(symdb_batch_encode_module(e, &(symdb_batch_module_result){ .nresults = 2 }) == 0);
	CHECK(symdb_batch_encode_result(e, &(symdb_batch_result){ 0 }, NULL, 0) == 0);
	CHECK(symdb_batch_encode_size(e, &len) == SYMDB_E_INVAL);
	CHECK(symdb_batch_encode_module(e, &(symdb_batch_module_result){ .nresults = 1 }) ==
	      SYMDB_E_INVAL); /* past nmodules */

	/* A warm encoder allocates nothing for a response no larger. */
	free(sample_response(e, &len));
	warm = allocs;
	for (int i = 0; i < 10; i++)
		free(sample_response(e, &len));
	CHECK(allocs == warm);
	symdb_batch_encoder_free(e);
	CHECK(live == 0);
}

/* Many distinct and repeated names: each once in the table; a byte limit. */
static void test_response_strings(void)
{
	SYMDB_OPTS(symdb_batch_encoder_opts, eo, .max_bytes = 1u << 20);
	symdb_batch_encoder *e;
	symdb_batch_response r;
	char names[3000][16];
	size_t len, want = 0;
	uint8_t *msg;
	int rc = 0;

	CHECK(symdb_batch_encoder_create(&eo, &e) == 0);
	for (int i = 0; i < 3000; i++)
		want += (size_t)snprintf(names[i], sizeof names[i], "fn_%d", i) + 1;
	CHECK(symdb_batch_encode_begin(e, 1, 0) == 0);
	CHECK(symdb_batch_encode_module(e, &(symdb_batch_module_result){ .nresults = 9000 }) == 0);
	for (int i = 0; i < 9000; i++) {
		symdb_batch_frame f = { .function = names[(i * 7) % 3000], .file = names[i % 3000] };
		symdb_batch_result rs = { .sym_name = names[(i * 13) % 3000] };
		CHECK(symdb_batch_encode_result(e, &rs, &f, 1) == 0);
	}
	CHECK(symdb_batch_encode_size(e, &len) == 0);
	msg = malloc(len);
	CHECK(symdb_batch_encode_finish(e, msg, len) == 0);
	CHECK(symdb_batch_response_parse(msg, len, OPTS(), &r) == 0);
	CHECK(r.string_bytes == want);
	for (uint32_t k = 0; k < r.nframes; k++) {
		symdb_batch_frame f;

		symdb_batch_response_frame(&r, k, &f);
		if (strcmp(f.function, names[(k * 7) % 3000]) || strcmp(f.file, names[k % 3000]))
			rc = 1;
	}
	CHECK(rc == 0);
	free(msg);

	/* Past max_bytes: TOO_BIG, and it stays the encoder's error. */
	CHECK(symdb_batch_encode_begin(e, 1, 0) == 0);
	CHECK(symdb_batch_encode_module(e, &(symdb_batch_module_result){ .nresults = 100000 }) == 0);
	for (int i = 0; i < 100000 && rc == 0; i++)
		rc = symdb_batch_encode_result(e, &(symdb_batch_result){ 0 },
		                               &(symdb_batch_frame){ .line = 1 }, 1);
	CHECK(rc == SYMDB_E_TOO_BIG);
	CHECK(symdb_batch_encode_size(e, &len) == SYMDB_E_TOO_BIG);
	symdb_batch_encoder_free(e);
}

int main(void)
{
	test_request_roundtrip();
	test_request_truncations();
	test_request_lies();
	test_request_random();
	test_response();
	test_response_strings();
	return check_exit();
}
