/* SPDX-License-Identifier: MIT */
/*
 * cli_query_print.c - `symdb query`'s output: the frames each style shows for a
 * result, the bodies formatted as the library finishes results, and the
 * batch printed in input order.
 */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "cli_atos.h"
#include "cli_query.h"

/* ---- choosing what each frame shows ---------------------------------- */

void cli_query_line_info(const struct query *q, const symdb_frame *f,
                         struct cli_line_info *li)
{
	/* One store of the whole struct (no memset first): it is filled per
	 * printed frame. */
	*li = (struct cli_line_info){
		.name = q->pr.fn_kind == CLI_FN_LINKAGE ? f->name :
		        q->pr.fn_kind == CLI_FN_SHORT   ? f->short_name : NULL,
		.file = f->file, .file_rel = f->file_rel,
		.decl_file = f->decl_file, .decl_file_rel = f->decl_file_rel,
		.line = f->line, .column = f->column, .discriminator = f->discriminator,
		.decl_line = f->decl_line,
		.has_start = (f->flags & SYMDB_FRAME_HAS_START) != 0,
		.start = f->start_addr,
	};
	/* Without --functions=linkage llvm-symbolizer does not consult the
	 * symbol table at all: the start is the DIE's DW_AT_low_pc, unknown
	 * for a DIE with DW_AT_ranges (a function split into hot and .cold
	 * parts) or without a DIE. */
	if (q->pr.fn_kind != CLI_FN_LINKAGE) {
		li->has_start = (f->flags & SYMDB_FRAME_HAS_DWARF_START) != 0;
		li->start = f->dwarf_start_addr;
	}
	/* The STT_FILE name comes with the symbol-table override, which
	 * llvm-symbolizer applies only for --functions=linkage. */
	if (f->flags & SYMDB_FRAME_FILE_FROM_SYMTAB) {
		if (q->pr.fn_kind == CLI_FN_LINKAGE)
			li->file_verbatim = 1;
		else
			li->file = li->file_rel = NULL;
	}
}

/* The source the line table embeds for frame 0's file (DWARF 5
 * -gembed-source), which llvm-symbolizer-14 prints instead of the file's:
 * for the line-table frame only, never for inlined call sites. */
static void embedded_source(const struct query *q, const symdb_symbolized *r,
                            struct cli_line_info *li)
{
	if (q->pr.src.lines > 0 && r->image && li->file && !li->file_verbatim &&
	    symdb_image_file_source(r->image, li->file, &li->source, &li->source_len) != 1)
		li->source = NULL;
}

/*
 * The frames llvm-symbolizer prints for one CODE request:
 * - --inlines: every frame (symbolizeInlinedCode), at least one;
 * - --no-inlines, GNU style: frame 0 of that same list (the innermost, which
 *   carries the symbol-table name only when it is also the outermost);
 * - --no-inlines otherwise: symbolizeCode, i.e. the innermost frame's line
 *   and DWARF name, with the name and start replaced by the symbol covering
 *   the address when --functions=linkage.
 */
static size_t select_frames(struct query *q, const symdb_symbolized *r)
{
	size_t n = r->nframes ? r->nframes : 1;
	q->li = cli_query_grow(q->li, &q->li_cap, n, sizeof(*q->li));
	if (!r->nframes) {
		memset(q->li, 0, sizeof(*q->li));
		return 1;
	}
	const symdb_frame *f = r->frames;
	if (q->inlines) {
		for (size_t i = 0; i < n; i++)
			cli_query_line_info(q, &f[i], &q->li[i]);
		embedded_source(q, r, &q->li[0]);
		return n;
	}
	cli_query_line_info(q, &f[0], &q->li[0]);
	embedded_source(q, r, &q->li[0]);
	if (q->pr.style != CLI_STYLE_GNU && q->pr.fn_kind == CLI_FN_LINKAGE && r->sym_name) {
		const symdb_frame *outer = &f[r->nframes - 1];
		q->li[0].name = r->sym_name;
		q->li[0].start = r->sym_addr;
		q->li[0].has_start = 1;
		/* symbolizeCode: an innermost frame without a file takes the
		 * symbol's STT_FILE name too. */
		if (!q->li[0].file && (outer->flags & SYMDB_FRAME_FILE_FROM_SYMTAB)) {
			q->li[0].file = q->li[0].file_rel = outer->file;
			q->li[0].file_verbatim = 1;
		}
	}
	return 1;
}

/* Bytes printed per request from which bodies are printed straight from
 * the results (cli_query_apart). */
#define APART_BYTES_MAX 1024u

/*
 * Bodies are formatted apart (below) unless the style cannot, or they are
 * large and no body cache answers with them: a deeply inlined C++ image's
 * uniform addresses print kilobytes each, and formatting them apart then
 * costs one more copy of all the output (gigabytes) for a sorted order
 * that its scattered names hardly profit from.  Those windows print each
 * request from its result, as a window whose text outgrows its bound
 * does.  Measured on the windows printed so far (out_per_req; the first
 * one is formatted apart), and only for --obj/--uuid runs.
 */
int cli_query_apart(const struct query *q)
{
	if (q->pr.style == CLI_STYLE_ATOS || !cli_code_body_apart(&q->pr))
		return 0;
	return q->per_line || q->cache.slot || q->out_per_req < APART_BYTES_MAX;
}

/*
 * The bodies of a batch's CODE requests (cli_format_code_body), formatted in
 * the order the library resolved them (symdb_symbolizer_order: by image and
 * address): the frames, the index rows they came from and the strings they
 * point to are then read in the order the library wrote or found them,
 * instead of at random in input order.  Neighbours with equal results share
 * their frames (symdb.h), so a run of them shares one body: a repeated
 * address costs one copy of its text when printed.  Also notes damaged
 * results, for every CODE and DATA request.  Bodies past their bound
 * (q->text_max), or text past 4 GiB (spans are 32-bit), set
 * q->apart_failed.
 */
void cli_query_format_begin(struct query *q)
{
	q->apart_failed = 0;
	if (!q->cache.slot)
		q->text.len = 0;
	q->text_mark = q->text.len;
	/* The bound of the window's bodies: with the body cache off, its
	 * share of the budget is the window's (cli_query.h).  Fixed for the
	 * window: a module found damaged in it turns the cache off
	 * (cli_query_module_damaged) while text_mark still counts the cached
	 * bodies, which the larger bound would then add to. */
	q->text_max = q->cache.slot ? WINDOW_TEXT_MAX : WINDOW_TEXT_ALONE_MAX;
	if (!q->per_line)
		q->pr.module = q->mods[0].name;
	q->body = cli_query_grow(q->body, &q->body_cap, q->nreq, sizeof(*q->body));
}

/* Whether the window's bodies grew past their bound. */
static int text_over(const struct query *q)
{
	return q->text.len - q->text_mark > q->text_max || q->text.len > UINT32_MAX;
}

/* Whether the mapping of img faulted (symdb_fault_recover), checked once
 * per run of results of one image. */
static int faulted(const symdb_image *img, const symdb_image **last, int *last_bad)
{
	if (img != *last) {
		*last = img;
		*last_bad = img && symdb_image_fault_check(img) < 0;
	}
	return *last_bad;
}

/*
 * After formatting res[0, count): a result whose image's mapping faulted
 * while it was resolved or its text formatted (an index file truncated under
 * the query) may have been formatted from zeros.  Its module is declared
 * damaged and the result formatted again as one of a module that cannot be
 * opened: "??" (JSON: the module's Error, printed by cli_query_print_batch).
 */
static void recheck_bodies(struct query *q, const symdb_symbolized *res, const uint32_t *order,
                           size_t count, int one_image)
{
	static const symdb_symbolized none;
	const symdb_image *last = NULL;
	int bad = 0;
	/* (one image, the --obj case: one check for all) */
	if (one_image && count && !faulted(res[0].image, &last, &bad))
		return;
	for (size_t i = 0; i < count && !q->apart_failed; i++) {
		if (!faulted(res[i].image, &last, &bad))
			continue;
		uint32_t k = q->spos[order[i]], mod = q->req[k].mod;
		cli_query_module_damaged(q, mod);
		if (q->per_line)
			q->pr.module = q->mods[mod].name;
		size_t nf = select_frames(q, &none), off = q->text.len;
		cli_format_code_body(&q->pr, &q->text, q->li, nf);
		if (text_over(q))
			q->apart_failed = 1;
		q->body[k] = (struct text_span){ (uint32_t)off, (uint32_t)(q->text.len - off) };
	}
}

/* The module of sreq[k]'s request. */
static uint32_t request_mod(const struct query *q, uint32_t k)
{
	return q->req[q->spos[k]].mod;
}

/* How many results ahead the name cache's slots are loaded, for at most
 * NAME_FRAMES frames each. */
#define NAME_AHEAD 4
#define NAME_FRAMES 8

static inline __attribute__((always_inline)) void prefetch_names(const struct query *q,
                                                             const symdb_symbolized *r)
{
	size_t n = r->nframes < NAME_FRAMES ? r->nframes : NAME_FRAMES;
	for (size_t k = 0; k < n; k++)
		cli_printer_prefetch_name(&q->pr, r->frames[k].name);
}

/* The bodies of res[first, first + count), which answer sreq[order[...]]:
 * called by the library as results become final (on_results), while their
 * frames are still in the cache.  Each body's span goes to q->body by
 * request, so that printing reads the spans in order. */
void cli_query_format_results(void *arg, const symdb_symbolized *res, const uint32_t *order,
                              size_t first, size_t count)
{
	struct query *q = arg;
	int direct = q->inlines && cli_plain_frames_direct(&q->pr);
	/* every request resolved: spos is the identity */
	const uint32_t *spos = q->nsorted == q->nreq ? NULL : q->spos;
	struct text_span body = { 0, 0 };
	/* text_over() as one comparison */
	size_t bound = q->text_mark + q->text_max;
	size_t text_max = bound < UINT32_MAX ? bound : UINT32_MAX;
	int one_image = 1;
	for (size_t i = 0; i < count && !q->apart_failed; i++) {
		const symdb_symbolized *r = &res[i];
		one_image &= r->image == res[0].image;
		uint32_t k = spos ? spos[order[i]] : order[i];
		q->pos[k] = (uint32_t)(first + i);
		if (i + NAME_AHEAD < count)
			prefetch_names(q, &res[i + NAME_AHEAD]);
		if (r->status == SYMDB_SYM_DAMAGED)
			q->damaged = 1;
		/* Two paths to one file share its image, and so equal results,
		 * but not a JSON body: it names the module as the line did. */
		if (i && r->nframes && r[-1].frames == r->frames &&
		    (!q->per_line || q->pr.style != CLI_STYLE_JSON ||
		     request_mod(q, order[i - 1]) == request_mod(q, order[i]))) {
			/* body: the previous one's */
		} else {
			/* (JSON only: the request, at random in q->req, is
			 * a cache miss a line on a stream over many modules) */
			if (q->per_line && q->pr.style == CLI_STYLE_JSON)
				q->pr.module = q->mods[request_mod(q, order[i])].name;
			size_t off = q->text.len;
			if (!direct || !r->nframes ||
			    cli_format_plain_frames(&q->pr, &q->text, r->frames, r->nframes) < 0) {
				size_t nf = select_frames(q, r); /* grows q->li */
				cli_format_code_body(&q->pr, &q->text, q->li, nf);
			}
			if (q->text.len > text_max)
				q->apart_failed = 1;
			body = (struct text_span){ (uint32_t)off, (uint32_t)(q->text.len - off) };
		}
		q->body[k] = body;
		if (q->cache.slot && !q->per_line && i + PREFETCH_AHEAD < count)
			__builtin_prefetch(&q->cache.slot[cli_query_cache_hash(r[PREFETCH_AHEAD].vaddr)]);
		if (q->cache.slot && !q->apart_failed && r->image &&
		    (i == 0 || r->vaddr != r[-1].vaddr || r->image != r[-1].image))
			cli_query_cache_result(q, r, order[i], body);
	}
	recheck_bodies(q, res, order, count, one_image);
}


/*
 * Bodies are read in input order, i.e. at random (their spans in order):
 * the text of request i + PREFETCH_AHEAD is loaded ahead of its use.
 * These helpers only prefetch, so they are forced inline: GCC takes a
 * function whose only effect is __builtin_prefetch for pure and drops the
 * calls it does not inline (GCC 12 did so here, and nothing was
 * prefetched).
 */

/* Start loading [p, p + len): all of it up to 192 bytes (most bodies;
 * four cache lines when they straddle), else the first 192 and the last. */
static inline __attribute__((always_inline)) void prefetch_span(const char *p, size_t len)
{
	__builtin_prefetch(p);
	if (len)
		__builtin_prefetch(p + len - 1);
	if (len > 64)
		__builtin_prefetch(p + 64);
	if (len > 128)
		__builtin_prefetch(p + 128);
}

/* Request j's body in text, cached or formatted apart, if it has one.
 * The arrays come as arguments: print_bare keeps them in locals. */
static inline __attribute__((always_inline)) void
prefetch_body(const struct request *req, const struct text_span *body, const char *text, size_t j)
{
	if (req[j].kind == REQ_CACHED)
		prefetch_span(text + req[j].body.off, req[j].body.len);
	else if (req[j].kind == REQ_CODE)
		prefetch_span(text + body[j].off, body[j].len);
}

static inline __attribute__((always_inline)) void prefetch_bodies(const struct query *q, size_t i)
{
	if (i + PREFETCH_AHEAD >= q->nreq)
		return; /* the last few requests of a batch go without */
	prefetch_body(q->req, q->body, q->text.buf, i + PREFETCH_AHEAD);
}

/* One request of the batch that was not formatted apart; r is its result
 * (NULL for FRAME and invalid lines). */
static void print_request(struct query *q, const struct request *rq, struct module *md,
                          const symdb_symbolized *r)
{
	q->pr.module = md->name;
	/* llvm-symbolizer prints an Error object for the first request on a
	 * module it cannot read (CODE, DATA or FRAME), and from then on
	 * answers as for an empty module: "Symbol":[], an empty "Data",
	 * "Frame":[]. */
	if (md->state < 0 && q->pr.style == CLI_STYLE_JSON && rq->kind != REQ_INVALID) {
		/* (a build-id not found: at each request, as llvm's) */
		if (!md->error_shown || md->id_missing) {
			md->error_shown = 1;
			cli_print_error(&q->pr, rq->addr, md->error);
			return;
		}
		if (rq->kind == REQ_CODE) {
			cli_print_code(&q->pr, rq->addr, q->li, 0);
			return;
		}
	}
	if (r && r->status == SYMDB_SYM_DAMAGED)
		q->damaged = 1;
	if (r && q->pr.style == CLI_STYLE_ATOS) {
		symdb_result lr = { .count = r->nframes, .sym_name = r->sym_name,
			            .sym_addr = r->sym_addr, .sym_size = r->sym_size };
		cli_atos_print(q->pr.out, &q->pr.dm, q->image_name, rq->addr, r->vaddr, &lr,
		               r->frames, q->inlines > 0);
		return;
	}
	switch (rq->kind) {
	case REQ_INVALID:
		cli_print_invalid(&q->pr, rq->text, rq->len);
		break;
	case REQ_FRAME:
		cli_print_frame_cmd(&q->pr, rq->addr);
		break;
	case REQ_DATA:
		if (r->sym_name)
			cli_print_data(&q->pr, rq->addr, r->sym_name, r->sym_addr, r->sym_size);
		else
			cli_print_data(&q->pr, rq->addr, NULL, 0, 0);
		break;
	default:
		cli_print_code(&q->pr, rq->addr, q->li, select_frames(q, r));
	}
}

/* --pid: a request in JIT code its perf map names (cli_live_jit.c),
 * printed as a function without line information, as --perf-map prints. */
static void print_jit(struct query *q, const struct request *rq, const struct module *md)
{
	q->pr.module = md->name;
	if (rq->kind == REQ_DATA) {
		cli_print_data(&q->pr, rq->addr, rq->jit_name, rq->jit_start, rq->jit_size);
		return;
	}
	struct cli_line_info li;
	memset(&li, 0, sizeof li);
	if (q->pr.fn_kind != CLI_FN_NONE) {
		li.name = rq->jit_name;
		li.start = rq->jit_start;
		li.has_start = 1;
	}
	cli_print_code(&q->pr, rq->addr, &li, 1);
}

/* Request i of the batch, in any style. */
static void print_one(struct query *q, size_t i)
{
	const struct request *rq = &q->req[i];
	struct module *md = &q->mods[rq->mod];
	if (q->pid && rq->jit_name) {
		print_jit(q, rq, md);
		return;
	}
	if (rq->kind == REQ_CACHED) {
		cli_print_code_body(&q->pr, rq->addr, q->text.buf + rq->body.off,
		                    rq->body.len);
		return;
	}
	if (q->apart && rq->kind == REQ_CODE &&
	    (q->pr.style != CLI_STYLE_JSON || md->state >= 0)) {
		const struct text_span *b = &q->body[i];
		cli_print_code_body(&q->pr, rq->addr, q->text.buf + b->off, b->len);
		return;
	}
	/* llvm-symbolizer reads the module of a FRAME request too
	 * (its errors are reported alike). */
	if (rq->kind == REQ_FRAME && md->state == 0)
		cli_query_module_image(q, md);
	static const symdb_symbolized none = { .status = SYMDB_SYM_NO_IMAGE,
		                               .vaddr = SYMDB_ADDR_INVALID };
	int resolved = rq->kind == REQ_CODE || rq->kind == REQ_DATA;
	/* A module that cannot be opened has no results (JSON: its
	 * Error; q->res may be unused: format_results had the batch) */
	if (!resolved || md->state < 0) {
		print_request(q, rq, md, resolved ? &none : NULL);
		return;
	}
	const symdb_symbolized *r = &q->res[q->pos[i]];
	if (!r->image) {
		print_request(q, rq, md, r);
		return;
	}
	/* Printing reads the image's strings: when its mapping faults
	 * meanwhile (symdb_fault_recover), the request is printed
	 * again as one of a module that cannot be opened, unless its
	 * text has already left the buffer (a rare half-garbled
	 * answer; stderr and the exit code still say so). */
	struct cli_out *o = q->pr.out;
	size_t len = o->len, flushed = o->flushed;
	unsigned jdepth = q->pr.jdepth;
	unsigned char jhas[sizeof(q->pr.jhas)];
	memcpy(jhas, q->pr.jhas, sizeof(jhas));
	print_request(q, rq, md, r);
	if (symdb_image_fault_check(r->image) == 0)
		return;
	cli_query_module_damaged(q, rq->mod);
	if (o->flushed != flushed)
		return;
	o->len = len;
	q->pr.jdepth = jdepth;
	memcpy(q->pr.jhas, jhas, sizeof(jhas));
	print_request(q, rq, md, &none);
}

/*
 * Plain styles without --addresses, bodies formatted apart: a CODE
 * request's text is all of its body, and a profile's batch is mostly
 * bodies the cache holds.  The loop keeps the batch's arrays and the
 * output buffer's end in locals: a copy stores through char *, which may
 * alias anything, and every field read through q or o would otherwise be
 * loaded again after each copy.  Other requests go through print_one.
 */
static void print_bare(struct query *q)
{
	struct cli_out *o = q->pr.out;
	const struct request *req = q->req;
	const struct text_span *body = q->body;
	const char *text = q->text.buf;
	size_t n = q->nreq, ahead = n > PREFETCH_AHEAD ? n - PREFETCH_AHEAD : 0;
	char *buf = o->buf;
	size_t len = o->len, cap = o->cap;
	for (size_t i = 0; i < n; i++) {
		if (i < ahead)
			prefetch_body(req, body, text, i + PREFETCH_AHEAD);
		int kind = req[i].kind;
		if (kind != REQ_CACHED && kind != REQ_CODE) {
			o->len = len;
			print_one(q, i);
			buf = o->buf, len = o->len, cap = o->cap;
			continue;
		}
		struct text_span b = kind == REQ_CACHED ? req[i].body : body[i];
		if (cap - len < b.len) {
			o->len = len;
			cli_out_grow(o, b.len);
			buf = o->buf, len = o->len, cap = o->cap;
		}
		memcpy(buf + len, text + b.off, b.len);
		len += b.len;
	}
	o->len = len;
}

/* Print the batch in input order.  With bodies formatted apart, a CODE
 * request is its header and a copy of its body. */
void cli_query_print_batch(struct query *q)
{
	uint64_t at = q->pr.out->flushed + q->pr.out->len;
	/* Plain styles without --addresses: a formatted body is all of a
	 * CODE request's text. */
	if (q->apart && !q->pid && q->pr.style != CLI_STYLE_JSON && !q->pr.print_address) {
		print_bare(q);
	} else {
		for (size_t i = 0; i < q->nreq; i++) {
			if (q->apart)
				prefetch_bodies(q, i);
			print_one(q, i);
		}
	}
	if (q->nreq)
		q->out_per_req = (size_t)((q->pr.out->flushed + q->pr.out->len - at) / q->nreq);
}
