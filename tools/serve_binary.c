/* SPDX-License-Identifier: MIT */
/*
 * serve_binary.c - POST /v1/symbolize with Content-Type
 * application/x-symdb-batch (SPEC §16): the request is validated whole by
 * the codec (symdb_batch.h) before anything is allocated from its counts,
 * turned into the batch model (serve_batch.h), run, and each chunk of
 * results encoded as it comes into the response encoder, whose string
 * table sends every name once.  A request the codec rejects is a 400 with
 * its one-line reason; one over the server's limits a 413, from its header.
 *
 * Stacks go through the stack cache like JSON's, but a binary answer refers
 * to its response's string table, so the cache cannot hold the bytes that
 * were sent: it holds the stack's results packed with their strings inline
 * (serve_cache_pack_result()), and a hit is encoded again from them
 * (emit_cached()).
 * A stack equal to an earlier one of the request (serve_cache_lookup_stacks)
 * is not resolved: the earlier stack's results are packed the same way as
 * they are encoded, and encoded again for each of its copies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli_fault.h"
#include "serve.h"
#include "serve_batch.h"
#include "serve_cache.h"
#include "symdb_batch.h"

/* A binary response is at most this large (as JSON's); beyond it the
 * request is a 413: send fewer addresses. */
#define BIN_MAX_RESPONSE (256ull << 20)

/* The wire's status numbers are the model's (SPEC §16.4 pins both). */
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(SYMDB_BATCH_OK, SERVE_OK) && SAME(SYMDB_BATCH_UNKNOWN_IMAGE, SERVE_UNKNOWN_IMAGE) &&
                       SAME(SYMDB_BATCH_NO_SYMBOL, SERVE_NO_SYMBOL) &&
                       SAME(SYMDB_BATCH_OUT_OF_RANGE, SERVE_OUT_OF_RANGE) &&
                       SAME(SYMDB_BATCH_DAMAGED, SERVE_DAMAGED) &&
                       SAME(SYMDB_BATCH_BAD_IMAGE, SERVE_BAD_IMAGE) &&
                       SAME(SYMDB_BATCH_DEADLINE, SERVE_DEADLINE) &&
                       SAME(SYMDB_BATCH_PENDING, SERVE_PENDING),
               "SPEC §16.4 statuses differ from serve_batch.h's");
_Static_assert(SAME(SYMDB_BATCH_FN_LINKAGE, SERVE_FN_LINKAGE) &&
                       SAME(SYMDB_BATCH_FN_SHORT, SERVE_FN_SHORT) &&
                       SAME(SYMDB_BATCH_FN_NONE, SERVE_FN_NONE),
               "SPEC §16.3 Functions values differ from serve_batch.h's");

/* The request, decoded into the batch model; every array sized from counts
 * the codec checked against the body. */
struct breq {
	struct serve_batch b;
	symdb_batch_request wire;
	symdb_batch_module *wmods;
	uint64_t *addrs;
	struct serve_stack_frame *frames;
	char *names;                   /* ids as hex, paths and arches, NUL-terminated */
	char err[300];
};

/* The writer's state across chunks. */
struct bw {
	symdb_batch_encoder *enc;
	const struct serve_batch *b;
	struct serve_cache *cache;
	unsigned long faults;          /* cli_fault_count() when the chunk's writing began */
	bool faulted;                  /* a fault while writing: strings may be zeros */
	struct serve_frame *fr;        /* serve_result_frames() output */
	symdb_batch_frame *wf;         /* the same as wire frames */
	size_t frcap;
	uint32_t stack;                /* the stack the next frame item belongs to */
	bool keep;                     /* the current stack's results may be cached */
	struct serve_buf packed;       /* the current stack's results, packed */
	struct serve_buf hits;         /* packed results of the stacks the cache held, then
	                                  of the resolved stacks that have later copies */
	size_t *hit_off, *hit_len;     /* stack i's packed results in hits */
	uint32_t *dup;                 /* serve_cache_lookup_stacks(): i, or the earlier equal stack */
	bool *copied;                  /* a later stack is a copy of stack i */
	int rc;                        /* the encoder's first error */
};

static unsigned refuse(struct breq *r, unsigned code, const char *why)
{
	snprintf(r->err, sizeof r->err, "%s", why);
	return code;
}

static void put_hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = "0123456789abcdef"[p[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[p[i] & 15];
	}
	out[2 * n] = 0;
}

/* One wire module into the model: its id as the model wants it (hex for
 * build-ids and UUIDs: raw bytes can never name a file), arch, kind. */
static unsigned take_module(struct breq *r, const struct serve_server *srv, uint32_t i,
                            char **names, uint32_t *next)
{
	const symdb_batch_module *w = &r->wmods[i];
	struct serve_module *m = &r->b.modules[i];

	if (w->id_kind == SYMDB_BATCH_ID_PATH) {
		if (!srv->allow_paths) {
			snprintf(r->err, sizeof r->err, "modules[%u]: path modules are not accepted by "
			         "this server (it listens beyond loopback); use a build-id or UUID", i);
			return 400;
		}
		m->ref = SERVE_REF_PATH;
		memcpy(*names, w->id, w->id_len);
		(*names)[w->id_len] = 0;
	} else {
		m->ref = w->id_kind == SYMDB_BATCH_ID_UUID ? SERVE_REF_UUID : SERVE_REF_BUILD_ID;
		put_hex(*names, w->id, w->id_len);
	}
	m->id = *names;
	*names += strlen(*names) + 1;
	if (w->arch_len) {
		memcpy(*names, w->arch, w->arch_len);
		(*names)[w->arch_len] = 0;
		m->arch = *names;
		*names += w->arch_len + 1;
	}
	m->addr_kind = (enum symdb_addr_kind)w->addr_kind;
	m->load_address = w->load_address;
	m->first = *next;
	m->count = w->naddrs;
	symdb_batch_module_addrs(w, r->addrs + *next);
	*next += w->naddrs;
	return 0;
}

/* The stacks: counts, then each frame's (module, address). */
static int take_stacks(struct breq *r)
{
	uint32_t *counts = calloc(r->wire.nstacks + 1, sizeof *counts);
	uint32_t *mods = calloc(r->wire.nframes + 1, sizeof *mods);
	uint64_t *addrs = calloc(r->wire.nframes + 1, sizeof *addrs);
	int rc = -ENOMEM;

	if (counts && mods && addrs && symdb_batch_request_stacks(&r->wire, counts, mods, addrs) == 0) {
		for (uint32_t s = 0, k = 0; s < r->wire.nstacks; k += counts[s], s++)
			r->b.stacks[s] = (struct serve_stack){ .first = k, .count = counts[s] };
		for (uint32_t k = 0; k < r->wire.nframes; k++)
			r->frames[k] = (struct serve_stack_frame){ .module = mods[k], .addr = addrs[k] };
		rc = 0;
	}
	free(counts), free(mods), free(addrs);
	return rc;
}

static unsigned parse_request(struct breq *r, const struct serve_request *rq)
{
	const struct serve_server *srv = rq->srv;
	SYMDB_OPTS(symdb_batch_opts, o, .errbuf = r->err, .errbuf_sz = sizeof r->err,
	           .max_modules = srv->lim.max_modules, .max_addresses = srv->lim.max_addresses,
	           .max_stacks = srv->lim.max_stacks);
	size_t names;
	uint32_t next = 0;
	char *np;
	int rc = symdb_batch_request_parse(rq->body, rq->body_len, &o, &r->wire);

	if (rc == SYMDB_E_TOO_BIG)
		return 413;
	if (rc < 0)
		return 400;
	r->b.nmodules = r->wire.nmodules;
	r->b.naddrs = r->wire.naddrs;
	r->b.nstacks = r->wire.nstacks;
	r->b.nframes = r->wire.nframes;
	r->b.opt.demangle = r->wire.flags & SYMDB_BATCH_DEMANGLE;
	r->b.opt.inlines = r->wire.flags & SYMDB_BATCH_INLINES;
	r->b.opt.functions = (enum serve_functions)((r->wire.flags & SYMDB_BATCH_FUNCTIONS_MASK) >>
	                                            SYMDB_BATCH_FUNCTIONS_SHIFT);
	/* Ids and arches are body bytes: as hex at most twice as many, plus a
	 * NUL each. */
	names = 2 * rq->body_len + 2 * (size_t)r->wire.nmodules + 1;
	r->wmods = calloc(r->b.nmodules + 1, sizeof *r->wmods);
	r->b.modules = calloc(r->b.nmodules + 1, sizeof *r->b.modules);
	r->addrs = calloc(r->b.naddrs + 1, sizeof *r->addrs);
	r->b.stacks = calloc(r->b.nstacks + 1, sizeof *r->b.stacks);
	r->frames = calloc(r->b.nframes + 1, sizeof *r->frames);
	r->names = malloc(names);
	if (!r->wmods || !r->b.modules || !r->addrs || !r->b.stacks || !r->frames || !r->names)
		return refuse(r, 503, "out of memory for the request");
	r->b.addrs = r->addrs;
	r->b.frames = r->frames;
	if (symdb_batch_request_modules(&r->wire, r->wmods, r->b.nmodules) < 0)
		return refuse(r, 400, "request: changed while it was read");
	np = r->names;
	for (uint32_t i = 0; i < r->b.nmodules; i++) {
		unsigned code = take_module(r, srv, i, &np, &next);

		if (code)
			return code;
	}
	if (take_stacks(r) < 0)
		return refuse(r, 503, "out of memory for the request");
	return 0;
}

static void breq_free(struct breq *r)
{
	free(r->wmods);
	free(r->b.modules);
	free(r->addrs);
	free(r->b.stacks);
	free(r->frames);
	free(r->names);
}

/* ---- results ----------------------------------------------------------------- */

static void frame_to_wire(const struct serve_frame *f, symdb_batch_frame *w)
{
	*w = (symdb_batch_frame){
		.function = f->function, .file = f->file, .start_file = f->start_file,
		.line = f->line, .column = f->column, .discriminator = f->discriminator,
		.start_line = f->start_line, .start = f->has_start ? f->start : 0,
		.flags = (f->has_start ? SYMDB_BATCH_FRAME_HAS_START : 0) |
		         (f->inlined ? SYMDB_BATCH_FRAME_INLINED : 0),
	};
}

/* The symbol part of a result, as JSON shows it (serve_json.c). */
static void symbol_of(const struct serve_result *res, symdb_batch_result *out)
{
	*out = (symdb_batch_result){ .status = (uint8_t)res->status };
	if (res->status == SERVE_OK && res->sym_name && res->vaddr != SYMDB_ADDR_INVALID) {
		out->sym_name = res->sym_name;
		out->sym_start = res->sym_addr;
		out->sym_size = res->sym_size;
		out->sym_offset = res->vaddr - res->sym_addr + res->top;
	}
}

static int room(struct bw *w, size_t n)
{
	struct serve_frame *fr;
	symdb_batch_frame *wf;

	if (n <= w->frcap)
		return 0;
	if (!(fr = realloc(w->fr, n * sizeof *fr)))
		return -ENOMEM;
	w->fr = fr;
	if (!(wf = realloc(w->wf, n * sizeof *wf)))
		return -ENOMEM;
	w->wf = wf;
	w->frcap = n;
	return 0;
}

/* Encodes the packed results of one cached stack (count of them): each
 * read back by serve_cache_unpack_*() and encoded as if just resolved. */
static int emit_cached(struct bw *w, const char *v, size_t len, uint32_t count)
{
	struct serve_cache_reader rd = { (const unsigned char *)v, (const unsigned char *)v + len };
	int rc = 0;

	for (uint32_t i = 0; i < count && rc == 0; i++) {
		struct serve_result res;
		symdb_batch_result r;
		uint32_t n;

		if (serve_cache_unpack_result(&rd, &res, &n))
			return -EINVAL;
		if (room(w, n ? n : 1) < 0)
			return -ENOMEM;
		for (uint32_t k = 0; k < n; k++) {
			if (serve_cache_unpack_frame(&rd, &w->fr[k]))
				return -EINVAL;
			frame_to_wire(&w->fr[k], &w->wf[k]);
		}
		symbol_of(&res, &r);
		rc = symdb_batch_encode_result(w->enc, &r, w->wf, n);
	}
	return rc;
}

/* One item's result: encoded, and packed when it belongs to a stack that
 * may be cached. */
static int put_result(struct bw *w, const struct serve_result *res, bool pack)
{
	size_t n;
	symdb_batch_result r;
	int rc;

	if ((rc = room(w, res->nframes ? res->nframes : 1)) < 0)
		return rc;
	n = serve_result_frames(&w->b->opt, res, w->fr);
	for (size_t k = 0; k < n; k++)
		frame_to_wire(&w->fr[k], &w->wf[k]);
	symbol_of(res, &r);
	if (pack)
		serve_cache_pack_result(&w->packed, res, w->fr, n);
	return symdb_batch_encode_result(w->enc, &r, w->wf, (uint32_t)n);
}

/* The current stack is complete: keep its packed results, for the cache
 * and for its later copies. */
static int close_stack(struct bw *w, const struct serve_stack *st)
{
	struct serve_cache_key k;

	if (w->copied[w->stack]) {
		if (w->packed.oom)
			return -ENOMEM;
		w->hit_off[w->stack] = w->hits.len;
		w->hit_len[w->stack] = w->packed.len;
		serve_buf_put(&w->hits, w->packed.p, w->packed.len);
		if (w->hits.oom)
			return -ENOMEM;
	}
	if (w->keep && w->cache && !w->packed.oom && !w->faulted &&
	    cli_fault_count() == w->faults) {
		if (serve_cache_stack_key(&k, w->b, st, SERVE_CACHE_BINARY))
			serve_cache_put(w->cache, &k, w->packed.p, w->packed.len);
		serve_cache_key_release(&k);
	}
	w->packed.len = 0;
	w->packed.oom = false;
	w->keep = true;
	return 0;
}

/* A stack frame item j: a cached stack is written whole at its first frame
 * (its items are handed over without frames); the others frame by frame. */
static int put_stack_frame(struct bw *w, uint32_t j, const struct serve_result *res)
{
	const struct serve_batch *b = w->b;
	const struct serve_stack *st;
	int rc = 0;

	while (j >= b->stacks[w->stack].first + b->stacks[w->stack].count)
		w->stack++; /* empty stacks have no items */
	st = &b->stacks[w->stack];
	if (st->cached) {
		uint32_t from = w->dup[w->stack]; /* itself when the cache held it */

		if (j == st->first)
			rc = emit_cached(w, w->hits.p + w->hit_off[from], w->hit_len[from], st->count);
		return rc;
	}
	w->keep = w->keep && serve_cache_results_keepable(res, 1);
	rc = put_result(w, res, (w->cache && w->keep) || w->copied[w->stack]);
	if (rc == 0 && j + 1 == st->first + st->count)
		rc = close_stack(w, st);
	return rc;
}

static int on_chunk(void *arg, const struct serve_batch *b, uint32_t first, uint32_t count,
                    const struct serve_result *res)
{
	struct bw *w = arg;

	w->faults = cli_fault_count(); /* as serve_json.c's on_chunk */
	for (uint32_t k = 0; k < count && w->rc == 0; k++) {
		uint32_t item = first + k;

		w->rc = item < b->naddrs ? put_result(w, &res[k], false)
		                         : put_stack_frame(w, item - b->naddrs, &res[k]);
	}
	w->faulted = w->faulted || cli_fault_count() != w->faults;
	return w->rc ? -1 : 0;
}

/* Once the modules are found: the stacks the cache held and those equal to
 * an earlier stack are marked cached (their frames are not resolved), and
 * the stacks with copies noted (their results are packed as they come). */
static int lookup_stacks(struct bw *w, struct serve_batch *b, struct serve_metrics *m)
{
	uint32_t n = b->nstacks;

	if (!n)
		return 0;
	w->hit_off = calloc(n, sizeof *w->hit_off);
	w->hit_len = calloc(n, sizeof *w->hit_len);
	w->dup = malloc(n * sizeof *w->dup);
	w->copied = calloc(n, sizeof *w->copied);
	if (!w->hit_off || !w->hit_len || !w->dup || !w->copied)
		return -ENOMEM;
	if (serve_cache_lookup_stacks(w->cache, m, b, SERVE_CACHE_BINARY, w->dup, &w->hits,
	                              w->hit_off, w->hit_len))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		if (w->dup[i] != i)
			w->copied[w->dup[i]] = true;
	return 0;
}

/* The module records: known once serve_batch_open() found the images. */
static int put_modules(struct bw *w)
{
	const struct serve_batch *b = w->b;
	int rc = symdb_batch_encode_begin(w->enc, b->nmodules, b->nstacks);

	for (uint32_t i = 0; i < b->nmodules && rc == 0; i++) {
		const struct serve_module *m = &b->modules[i];
		symdb_batch_module_result mr = { .status = (uint8_t)m->status, .nresults = m->count };

		if (m->status == SERVE_OK) {
			mr.image_id_len = m->uuid.len;
			memcpy(mr.image_id, m->uuid.bytes, m->uuid.len);
		} else {
			mr.error = serve_module_error(m);
		}
		rc = symdb_batch_encode_module(w->enc, &mr);
	}
	for (uint32_t s = 0; s < b->nstacks && rc == 0; s++)
		rc = symdb_batch_encode_stack(w->enc, b->stacks[s].count);
	return rc;
}

static void bw_free(struct bw *w)
{
	symdb_batch_encoder_free(w->enc);
	serve_buf_free(&w->packed);
	serve_buf_free(&w->hits);
	free(w->hit_off);
	free(w->hit_len);
	free(w->dup);
	free(w->copied);
	free(w->fr);
	free(w->wf);
}

/* Runs the batch into w's encoder: 0, or an HTTP status with err set, or
 * 0 with *handoff (it would wait for a fetch: serve.h). */
static unsigned answer(struct serve_request *rq, struct serve_batch *b, struct bw *w, char *err,
                       size_t errsz, bool *handoff)
{
	struct serve_run *run = NULL;
	int rc = serve_batch_open(rq->srv, b, rq->deadline_ns, rq->wait, &run, err, errsz);

	if (rc == -EWOULDBLOCK) {
		*handoff = true;
		return 0;
	}

	if (rc == -EPERM || rc == -EINVAL) {
		serve_batch_close(run);
		return 400;
	}
	if (rc == 0 && (rc = lookup_stacks(w, b, rq->srv->metrics)) != 0)
		snprintf(err, errsz, "the stack cache: %s", strerror(-rc));
	if (rc == 0 && (rc = put_modules(w)) != 0)
		snprintf(err, errsz, "the response: %s", symdb_strerror(rc));
	if (rc == 0) {
		rc = serve_batch_resolve(run, b, rq->deadline_ns, on_chunk, w);
		if (rc == -ECANCELED && w->rc == SYMDB_E_TOO_BIG)
			snprintf(err, errsz, "the response: larger than %llu bytes; send fewer addresses",
			         (unsigned long long)BIN_MAX_RESPONSE);
		else if (rc == -ECANCELED)
			snprintf(err, errsz, "the response: %s", symdb_strerror(w->rc));
		else if (rc)
			snprintf(err, errsz, "symbolizing: %s", symdb_strerror(rc));
	}
	serve_batch_close(run);
	if (rc == 0 && w->faulted) {
		/* as serve_json.c: strings read from a truncated file */
		snprintf(err, errsz, "an index file changed while it was read (truncated?); ask again");
		return 503;
	}
	if (rc == -ENOMEM || w->rc == -ENOMEM)
		return 503;
	if (w->rc == SYMDB_E_TOO_BIG)
		return 413;
	return rc ? 500 : 0;
}

void serve_binary_handle(struct serve_request *rq, struct serve_reply *out)
{
	SYMDB_OPTS(symdb_batch_encoder_opts, eo, .max_bytes = BIN_MAX_RESPONSE);
	struct breq r = { .b.nmodules = 0 };
	struct bw w = { .cache = rq->srv->cache, .keep = true };
	unsigned code = parse_request(&r, rq);
	size_t len = 0;
	char *body = NULL;
	int rc = 0;
	bool handoff = false;

	w.b = &r.b;
	if (!code && symdb_batch_encoder_create(&eo, &w.enc) < 0)
		code = refuse(&r, 503, "out of memory for the response");
	if (!code)
		code = answer(rq, &r.b, &w, r.err, sizeof r.err, &handoff);
	if (!code && !handoff && (rc = symdb_batch_encode_size(w.enc, &len)) == 0) {
		if (!(body = malloc(len ? len : 1)))
			rc = -ENOMEM;
		else
			rc = symdb_batch_encode_finish(w.enc, body, len);
	}
	if (!code && rc < 0) {
		code = rc == -ENOMEM ? 503 : 500;
		snprintf(r.err, sizeof r.err, "the response: %s", symdb_strerror(rc));
	}
	if (handoff) {
		out->handoff = true;
	} else if (code) {
		free(body);
		serve_reply_error(out, code, "%s", r.err);
		if (code == 503)
			out->retry_after = 1;
	} else {
		out->status = 200;
		out->content_type = SYMDB_BATCH_CONTENT_TYPE;
		out->body = body;
		out->len = len;
		out->addresses = (uint64_t)r.b.naddrs + r.b.nframes;
	}
	bw_free(&w);
	breq_free(&r);
}
