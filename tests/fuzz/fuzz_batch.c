/* SPDX-License-Identifier: MIT */
/*
 * fuzz_batch.c - libFuzzer target for the request decoder of the binary
 * batch messages (SPEC §16, symdb_batch.h), the bytes `symdb serve` takes
 * from any client as application/x-symdb-batch.  Arbitrary bytes go to
 * symdb_batch_request_parse() with small limits; an accepted request is read
 * back in full (modules, addresses, stacks), written again with the request
 * writer (which must give the same bytes, the minor version aside), and
 * answered with a response built by the encoder from its ids and paths as
 * names, which must parse and read back the same.  The same bytes also go
 * to symdb_batch_response_parse().  Contract: a rejection has a one-line
 * reason; nothing reads outside the input (ASan), nothing crashes.
 */
#define _GNU_SOURCE /* fuzz_util.h: memfd_create, nftw */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "symdb_batch.h"

#define FZ_MAX 4096u /* modules, addresses, stacks: the input is small anyway */

static void fz_assert(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_batch: %s\n", what);
		abort();
	}
}

/* Rewrites rq with the writer: the same bytes, but for the minor version. */
static void rewrite(const symdb_batch_request *rq, const symdb_batch_module *mods,
                    const uint64_t *addrs, const uint32_t *counts, const uint32_t *fmods,
                    const uint64_t *faddrs)
{
	uint8_t *buf = malloc(rq->len);
	symdb_batch_writer w;
	size_t len = 0, a = 0, f = 0;

	symdb_batch_writer_begin(&w, buf, rq->len, rq->flags, rq->nmodules, rq->naddrs, rq->nstacks,
	                         rq->nframes);
	for (uint32_t i = 0; i < rq->nmodules; a += mods[i].naddrs, i++)
		symdb_batch_writer_module(&w, &mods[i], addrs + a);
	for (uint32_t s = 0; s < rq->nstacks; f += counts[s], s++)
		symdb_batch_writer_stack(&w, fmods + f, faddrs + f, counts[s]);
	fz_assert(symdb_batch_writer_end(&w, &len) == 0 && len == rq->len, "rewrite failed");
	buf[5] = rq->msg[5];
	fz_assert(memcmp(buf, rq->msg, len) == 0, "rewrite differs");
	free(buf);
}

/* A response whose names are the modules' ids (NUL-terminated copies):
 * encoded, parsed, read back. */
static void answer(const symdb_batch_request *rq, const symdb_batch_module *mods)
{
	symdb_batch_encoder *e;
	symdb_batch_response r;
	char (*names)[SYMDB_BATCH_PATH_MAX + 1] = malloc((rq->nmodules + 1) * sizeof *names);
	size_t len;
	uint8_t *msg;
	uint32_t k = 0;

	fz_assert(symdb_batch_encoder_create(NULL, &e) == 0, "encoder_create");
	symdb_batch_encode_begin(e, rq->nmodules, 0);
	for (uint32_t i = 0; i < rq->nmodules; i++) {
		memcpy(names[i], mods[i].id, mods[i].id_len);
		names[i][mods[i].id_len] = 0; /* a build-id may hold NULs: a shorter name */
		symdb_batch_module_result mr = { .status = SYMDB_BATCH_OK, .nresults = mods[i].naddrs,
		                                 .image_id_len = (uint8_t)(mods[i].id_len % 33) };

		memcpy(mr.image_id, mods[i].id, mr.image_id_len);
		symdb_batch_encode_module(e, &mr);
	}
	for (uint32_t i = 0; i < rq->nmodules; i++)
		for (uint32_t j = 0; j < mods[i].naddrs; j++) {
			symdb_batch_frame f = { .function = names[i], .file = names[(i + j) % rq->nmodules],
			                        .line = j, .flags = SYMDB_BATCH_FRAME_HAS_START,
			                        .start = i };
			symdb_batch_result res = { .status = SYMDB_BATCH_OK, .sym_name = names[i],
			                           .sym_offset = j };

			fz_assert(symdb_batch_encode_result(e, &res, &f, 1) == 0, "encode_result");
		}
	fz_assert(symdb_batch_encode_size(e, &len) == 0, "encode_size");
	msg = malloc(len);
	fz_assert(symdb_batch_encode_finish(e, msg, len) == 0, "encode_finish");
	fz_assert(symdb_batch_response_parse(msg, len, NULL, &r) == 0, "own response rejected");
	fz_assert(r.nresults == rq->naddrs && r.nframes == rq->naddrs, "response counts");
	for (uint32_t i = 0; i < rq->nmodules; i++)
		for (uint32_t j = 0; j < mods[i].naddrs; j++, k++) {
			symdb_batch_frame f;

			symdb_batch_response_frame(&r, k, &f);
			fz_assert(strcmp(f.function, names[i]) == 0 && f.line == j && f.start == i &&
			          strcmp(f.file, names[(i + j) % rq->nmodules]) == 0, "frame differs");
		}
	free(msg);
	free(names);
	symdb_batch_encoder_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256] = "";
	SYMDB_OPTS(symdb_batch_opts, o, .errbuf = why, .errbuf_sz = sizeof why,
	           .max_modules = FZ_MAX, .max_addresses = FZ_MAX, .max_stacks = FZ_MAX);
	symdb_batch_request rq;
	symdb_batch_response resp;
	symdb_batch_module *mods;
	uint64_t *addrs, *faddrs;
	uint32_t *counts, *fmods;
	size_t a = 0;
	int rc;

	rc = symdb_batch_request_parse(data, size, &o, &rq);
	if (rc < 0) {
		fz_assert(why[0] && !strchr(why, '\n'), "rejection without a one-line reason");
	} else {
		/* The counts are checked against the length: sizing from them is safe. */
		mods = malloc((rq.nmodules + 1) * sizeof *mods);
		addrs = malloc((rq.naddrs + 1) * sizeof *addrs);
		counts = malloc((rq.nstacks + 1) * sizeof *counts);
		fmods = malloc((rq.nframes + 1) * sizeof *fmods);
		faddrs = malloc((rq.nframes + 1) * sizeof *faddrs);
		fz_assert(symdb_batch_request_modules(&rq, mods, rq.nmodules) == (ptrdiff_t)rq.nmodules,
		          "modules");
		for (uint32_t i = 0; i < rq.nmodules; a += mods[i].naddrs, i++)
			symdb_batch_module_addrs(&mods[i], addrs + a);
		fz_assert(a == rq.naddrs, "address count");
		fz_assert(symdb_batch_request_stacks(&rq, counts, fmods, faddrs) == 0, "stacks");
		for (uint32_t k = 0; k < rq.nframes; k++)
			fz_assert(fmods[k] < rq.nmodules, "frame module out of range");
		rewrite(&rq, mods, addrs, counts, fmods, faddrs);
		answer(&rq, mods);
		free(mods), free(addrs), free(counts), free(fmods), free(faddrs);
	}
	why[0] = 0;
	if (symdb_batch_response_parse(data, size, &o, &resp) < 0) {
		fz_assert(why[0] && !strchr(why, '\n'), "response rejection without a reason");
	} else {
		uint32_t k = 0;

		for (uint32_t i = 0; i < resp.nmodules; i++) {
			symdb_batch_module_result mr;

			symdb_batch_response_module(&resp, i, &mr);
			if (mr.error)
				(void)strlen(mr.error);
		}
		for (uint32_t i = 0; i < resp.nresults; i++) {
			symdb_batch_result res;

			symdb_batch_response_result(&resp, i, &res);
			if (res.sym_name)
				(void)strlen(res.sym_name);
			for (uint32_t j = 0; j < res.nframes; j++, k++) {
				symdb_batch_frame f;

				symdb_batch_response_frame(&resp, k, &f);
				if (f.function)
					(void)strlen(f.function); /* inside the table: ASan checks */
			}
		}
		fz_assert(k == resp.nframes, "frame sum");
	}
	return 0;
}
