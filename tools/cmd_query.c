/* SPDX-License-Identifier: MIT */
/*
 * `symdb query`: a drop-in for `llvm-symbolizer-14 --obj FILE`.
 *
 * Requests come from the arguments or from stdin, parsed exactly as
 * llvm-symbolizer parses them (fgets into a 1024-byte buffer, so longer lines
 * split every 1023 bytes; every \r and \n removed; an optional "CODE ",
 * "DATA " or "FRAME " prefix; spaces skipped; the address token read by
 * StringRef::getAsInteger with radix auto-detection; anything unparsable
 * echoed back).  Instead of one lookup per line, a batch of requests goes
 * to the library in one symdb_symbolize() call, which translates, groups by
 * image, sorts, resolves and demangles, and answers in input order.  stdin
 * is read with read(2) and each batch is whatever complete lines have
 * arrived, so an interactive client that writes one line and waits for the
 * answer still gets it at once.
 *
 * Without --obj/--uuid each request names its module first ("FILE ADDR", as
 * llvm-symbolizer and the sanitizers speak it); each module is opened on
 * first use (here, so that failures are reported the CLI's way) and handed
 * to the library as an image handle.
 *
 * The text after each CODE request's address (its body) is formatted in the
 * order the library resolved the batch (symdb_symbolizer_order: by image and
 * address) into one buffer, and copied out in input order: frames are then
 * read in the order the library wrote them, and equal results, which share
 * their frames (symdb.h), share one body; a body cache keyed by address
 * carries them across batches.  Names are demangled by the library, once
 * per name while its context's name cache holds it.
 *
 * Memory grows per batch, never per address.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_atos.h"
#include "cli_maint.h"
#include "cli_output.h"
#include "cli_slice.h"
#include "cli_util.h"
#include "symdb.h"

/* REQ_CACHED: a CODE request whose body the body cache held. */
enum req_kind { REQ_INVALID, REQ_CODE, REQ_DATA, REQ_FRAME, REQ_CACHED };

/* A piece of query.text (32 bits: half the cache lines when printing). */
struct text_span {
	uint32_t off, len;
};

struct request {
	const char *text; /* the line as llvm-symbolizer echoes it */
	size_t len;
	uint64_t addr;    /* as given (printed by --addresses) */
	int kind;
	uint32_t mod;     /* index into query.mods */
	struct text_span body; /* REQ_CACHED: its body in query.text */
};

/*
 * Bodies of earlier batches by address, for one image and a run's fixed
 * options (--obj/--uuid, vaddr requests, a style whose bodies stand apart):
 * a profile sends the same few thousand addresses in every batch, and a
 * hit skips sorting, resolving and formatting.  Open addressing over a
 * table allocated once; cleared between batches when half full or when
 * query.text, which holds the bodies, passes CACHE_TEXT_MAX; switched off
 * for the rest of the run when a batch hits less than a quarter of the time,
 * or as soon as a batch that began with an empty cache filled it (a
 * uniform set of short lines: one batch fills it, the next would clear
 * it), since probing and filling would only cost.
 */
#define CACHE_SLOTS (1u << 17)           /* 2 MiB of slots */
#define CACHE_TEXT_MAX (32u << 20)
#define CACHE_EMPTY UINT64_MAX           /* never a key: see cache_key */

struct cache_slot {
	uint64_t key;
	struct text_span body;
};

struct body_cache {
	struct cache_slot *slot; /* CACHE_SLOTS, NULL when off */
	size_t used;
	size_t lookups, hits;    /* of the current batch */
	int cold;                /* the current batch began with it empty */
};

/*
 * An image named by requests.  With --obj/--uuid there is one, opened up
 * front; without them every input line names its module, as llvm-symbolizer
 * accepts ("MODULE ADDR", sanitizers' protocol), and each module is opened
 * on first use and kept for the rest of the run.
 */
struct module {
	char *name;       /* as given: JSON ModuleName, error messages */
	size_t len;
	symdb_image *img; /* NULL until opened, or when opening failed */
	int state;        /* 0 not tried, 1 open, < 0 the error */
	char *error;      /* why it failed (JSON Error.Message) */
};

struct query {
	const char *obj, *uuid_hex;
	const char *arch;       /* --arch: a slice of a universal Mach-O file */
	const char *image_name; /* for --output-style=atos */
	enum symdb_addr_kind kind;
	uint64_t load_address, adjust_vma;
	int inlines;
	int no_verify;  /* --no-verify: skip table checksums at open */
	int lib_demangle; /* the library demangles (the printer then does not) */
	symdb_image *img;
	struct cli_printer pr;
	int damaged; /* some address hit a damaged record */
	int per_line;       /* no --obj/--uuid: each line names its module */
	int module_failed;  /* some module could not be opened */
	symdb *db;
	symdb_symbolizer *sym;
	struct module *mods;
	size_t nmods, mods_cap, last_mod;

	/* per-batch arrays, grown as needed and reused */
	struct request *req;
	size_t nreq, req_cap;
	symdb_request *sreq;     /* the CODE/DATA requests, for the library */
	uint32_t *pos;           /* request index -> its index in res */
	uint32_t *spos;          /* sreq index -> request index */
	symdb_symbolized *res;   /* the library's answers: by sreq index, or in
	                            its order (q->apart: res[k] answers sreq[order[k]]) */
	const uint32_t *order;   /* symdb_symbolizer_order(), owned by sym */
	size_t arr_cap, res_cap;
	size_t nsorted;          /* sreq[0..nsorted) is the last batch's */
	struct cli_line_info *li;
	size_t li_cap;
	struct cli_out text;      /* CODE bodies of the batch (format_bodies),
	                             and of earlier ones while the cache holds them */
	struct body_cache cache;
	struct text_span *body;   /* by res index: its body in text */
	size_t body_cap;
	int apart;                /* the batch's CODE bodies are formatted apart,
	                             in the library's order, then printed */
	int apart_failed;         /* ... and text outgrew the 32-bit spans */
};

#define STDIN_BUF (1u << 20)
#define PREFETCH_AHEAD 16 /* requests: how far ahead random reads are started */
#define LLVM_LINE_MAX 1023 /* fgets(buf, 1024, stdin) in llvm-symbolizer.cpp */

static void *grow_array(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *np = realloc(p, n * elem);
	if (!np) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	*cap = n;
	return np;
}

/* ---- request parsing (llvm-symbolizer.cpp parseCommand) -------------- */

static int is_delim(char c)
{
	return c == ' ' || c == '\n' || c == '\r';
}

/* The index of module name[0..len), added on first sight. */
static uint32_t intern_module(struct query *q, const char *name, size_t len)
{
	if (q->last_mod < q->nmods && q->mods[q->last_mod].len == len &&
	    memcmp(q->mods[q->last_mod].name, name, len) == 0)
		return (uint32_t)q->last_mod;
	for (size_t i = 0; i < q->nmods; i++)
		if (q->mods[i].len == len && memcmp(q->mods[i].name, name, len) == 0)
			return (uint32_t)(q->last_mod = i);
	q->mods = grow_array(q->mods, &q->mods_cap, q->nmods + 1, sizeof(*q->mods));
	struct module *m = &q->mods[q->nmods];
	memset(m, 0, sizeof(*m));
	m->name = malloc(len + 1);
	if (!m->name) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	memcpy(m->name, name, len);
	m->name[len] = '\0';
	m->len = len;
	return (uint32_t)(q->last_mod = q->nmods++);
}

/*
 * The module name of a per-line request: a quoted string ('...' or "...")
 * or the next token.  Returns 0, or -1 for an unterminated quote (the line
 * is then invalid and its JSON ModuleName empty, as llvm's).
 */
static int parse_module(struct query *q, const char **sp, size_t *np, struct request *r)
{
	const char *s = *sp;
	size_t n = *np, len;
	while (n && is_delim(*s))
		s++, n--;
	if (n && (*s == '"' || *s == '\'')) {
		const char *end = memchr(s + 1, *s, n - 1);
		if (!end) {
			r->mod = intern_module(q, "", 0);
			return -1;
		}
		r->mod = intern_module(q, s + 1, (size_t)(end - s - 1));
		len = (size_t)(end - s) + 1;
	} else {
		for (len = 0; len < n && !is_delim(s[len]); len++)
			;
		r->mod = intern_module(q, s, len);
	}
	*sp = s + len;
	*np = n - len;
	return 0;
}

static void parse_request(struct query *q, const char *s, size_t n, struct request *r)
{
	r->text = s;
	r->len = n;
	r->kind = REQ_CODE;
	r->addr = 0;
	r->mod = 0;
	if (n >= 5 && memcmp(s, "CODE ", 5) == 0)
		s += 5, n -= 5;
	else if (n >= 5 && memcmp(s, "DATA ", 5) == 0)
		s += 5, n -= 5, r->kind = REQ_DATA;
	else if (n >= 6 && memcmp(s, "FRAME ", 6) == 0)
		s += 6, n -= 6, r->kind = REQ_FRAME;
	if (q->per_line && parse_module(q, &s, &n, r) < 0) {
		r->kind = REQ_INVALID;
		return;
	}
	while (n && is_delim(*s))
		s++, n--;
	size_t tl = 0;
	while (tl < n && !is_delim(s[tl]))
		tl++;
	if (cli_parse_u64(s, tl, &r->addr) != 0)
		r->kind = REQ_INVALID;
}

static struct request *new_request(struct query *q)
{
	q->req = grow_array(q->req, &q->req_cap, q->nreq + 1, sizeof(*q->req));
	return &q->req[q->nreq++];
}

/* ---- resolving a batch ----------------------------------------------- */

static symdb_image *module_image(struct query *q, struct module *m);
static size_t cache_hash(uint64_t key);
static void cache_insert(struct query *q, uint64_t key, struct text_span body);
static void format_begin(struct query *q);
static void format_results(void *arg, const symdb_symbolized *res, const uint32_t *order,
                           size_t first, size_t count);

/*
 * Resolve every CODE/DATA request of the batch with one symdb_symbolize()
 * call: the library translates, groups by image, sorts, resolves and
 * demangles, and answers in input order (res[pos[i]] for request i).
 * Requests name their module's image by handle: modules are opened here, on
 * first use, so that a failure is reported the CLI's way (a module that
 * could not be opened is a NULL handle, and prints as nothing found).
 */
static int resolve_batch(struct query *q)
{
	size_t cap = q->arr_cap;
	q->sreq = grow_array(q->sreq, &cap, q->nreq, sizeof(*q->sreq));
	cap = q->arr_cap;
	q->pos = grow_array(q->pos, &cap, q->nreq, sizeof(*q->pos));
	cap = q->arr_cap;
	q->spos = grow_array(q->spos, &cap, q->nreq, sizeof(*q->spos));
	q->arr_cap = cap;
	size_t m = 0;

	uint32_t last = UINT32_MAX;
	const symdb_image *img = NULL;
	for (size_t i = 0; i < q->nreq; i++) {
		const struct request *rq = &q->req[i];
		if (rq->kind != REQ_CODE && rq->kind != REQ_DATA)
			continue;
		if (rq->mod != last) {
			img = module_image(q, &q->mods[rq->mod]);
			last = rq->mod;
		}
		symdb_request *sr = &q->sreq[m];
		*sr = (symdb_request){ .image_ref = SYMDB_IMAGE_HANDLE,
			               .addr_kind = (uint8_t)q->kind,
			               .image.handle = img,
			               .addr = rq->addr - q->adjust_vma,
			               .load_address = q->load_address };
		/* A vaddr of UINT64_MAX is a real request to llvm-symbolizer
		 * (it finds the last zero-size symbol, e.g. _end), but it is
		 * SYMDB_ADDR_INVALID to the library.  UINT64_MAX - 1 lies in
		 * exactly the same symbols unless one ends at UINT64_MAX. */
		if (q->kind == SYMDB_ADDR_VADDR && sr->addr == SYMDB_ADDR_INVALID)
			sr->addr = SYMDB_ADDR_INVALID - 1;
		q->spos[m] = (uint32_t)i;
		q->pos[i] = (uint32_t)m++;
	}
	size_t rcap = q->res_cap;
	q->res = grow_array(q->res, &rcap, m, sizeof(*q->res));
	q->res_cap = rcap;
	q->nsorted = m;
	if (!m)
		return 0;
	if (q->apart)
		format_begin(q);
	char err[256] = "";
	SYMDB_OPTS(symdb_symbolize_opts, o,
	           .flags = (q->lib_demangle ? SYMDB_SYMBOLIZE_DEMANGLE : 0u) |
	                    (q->apart ? SYMDB_SYMBOLIZE_ORDER : 0u),
	           .errbuf = err, .errbuf_sz = sizeof(err),
	           .on_results = q->apart ? format_results : NULL, .on_results_arg = q);
	return symdb_symbolize(q->sym, q->sreq, m, q->res, &o);
}

/* ---- choosing what each frame shows ---------------------------------- */

static void line_info_from(const struct query *q, const symdb_frame *f,
                           struct cli_line_info *li)
{
	memset(li, 0, sizeof(*li));
	if (q->pr.fn_kind == CLI_FN_LINKAGE)
		li->name = f->name;
	else if (q->pr.fn_kind == CLI_FN_SHORT)
		li->name = f->short_name;
	li->file = f->file;
	li->file_rel = f->file_rel;
	li->decl_file = f->decl_file;
	li->decl_file_rel = f->decl_file_rel;
	li->line = f->line;
	li->column = f->column;
	li->discriminator = f->discriminator;
	li->decl_line = f->decl_line;
	li->has_start = (f->flags & SYMDB_FRAME_HAS_START) != 0;
	li->start = f->start_addr;
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
	q->li = grow_array(q->li, &q->li_cap, n, sizeof(*q->li));
	if (!r->nframes) {
		memset(q->li, 0, sizeof(*q->li));
		return 1;
	}
	const symdb_frame *f = r->frames;
	if (q->inlines) {
		for (size_t i = 0; i < n; i++)
			line_info_from(q, &f[i], &q->li[i]);
		return n;
	}
	line_info_from(q, &f[0], &q->li[0]);
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

/*
 * The bodies of a batch's CODE requests (cli_format_code_body), formatted in
 * the order the library resolved them (symdb_symbolizer_order: by image and
 * address): the frames, the index rows they came from and the strings they
 * point to are then read in the order the library wrote or found them,
 * instead of at random in input order.  Neighbours with equal results share
 * their frames (symdb.h), so a run of them shares one body: a repeated
 * address costs one copy of its text when printed.  Also notes damaged
 * results, for every CODE and DATA request.  Text past 4 GiB (spans are
 * 32-bit) sets q->apart_failed.
 */
static void format_begin(struct query *q)
{
	q->apart_failed = 0;
	if (!q->cache.slot)
		q->text.len = 0;
	if (!q->per_line)
		q->pr.module = q->mods[0].name;
	q->body = grow_array(q->body, &q->body_cap, q->nsorted, sizeof(*q->body));
}

/* The bodies of res[first, first + count), which answer sreq[order[...]]:
 * called by the library as results become final (on_results), while their
 * frames are still in the cache. */
static void format_results(void *arg, const symdb_symbolized *res, const uint32_t *order,
                           size_t first, size_t count)
{
	struct query *q = arg;
	q->order = order;
	if (q->nsorted == q->nreq) /* every request resolved: spos is the identity */
		for (size_t k = first; k < first + count; k++)
			q->pos[order[k]] = (uint32_t)k;
	else
		for (size_t k = first; k < first + count; k++)
			q->pos[q->spos[order[k]]] = (uint32_t)k;
	for (size_t k = first; k < first + count && !q->apart_failed; k++) {
		const symdb_symbolized *r = &res[k];
		if (r->status == SYMDB_SYM_DAMAGED)
			q->damaged = 1;
		if (k > first && r->nframes && r[-1].frames == r->frames) {
			q->body[k] = q->body[k - 1];
		} else {
			if (q->per_line)
				q->pr.module = q->mods[q->req[q->spos[order[k]]].mod].name;
			size_t nf = select_frames(q, r), off = q->text.len;
			cli_format_code_body(&q->pr, &q->text, q->li, nf);
			if (q->text.len > UINT32_MAX)
				q->apart_failed = 1;
			q->body[k].off = (uint32_t)off;
			q->body[k].len = (uint32_t)(q->text.len - off);
		}
		if (q->cache.slot && k + PREFETCH_AHEAD < first + count)
			__builtin_prefetch(&q->cache.slot[cache_hash(r[PREFETCH_AHEAD].vaddr)]);
		if (q->cache.slot && !q->apart_failed && r->image &&
		    (k == first || r->vaddr != r[-1].vaddr))
			cache_insert(q, r->vaddr, q->body[k]);
	}
}

/*
 * Bodies are read in input order, i.e. at random: the span of request
 * i + 2 * PREFETCH_AHEAD and the text of request i + PREFETCH_AHEAD are
 * loaded ahead of their use.  These helpers only prefetch, so they are
 * forced inline: GCC takes a function whose only effect is
 * __builtin_prefetch for pure and drops the calls it does not inline
 * (GCC 12 did so here, and nothing was prefetched).
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

static inline __attribute__((always_inline)) void prefetch_bodies(const struct query *q, size_t i)
{
	if (i + 2 * PREFETCH_AHEAD >= q->nreq)
		return; /* the last few requests of a batch go without */
	if (q->req[i + 2 * PREFETCH_AHEAD].kind == REQ_CODE)
		__builtin_prefetch(&q->body[q->pos[i + 2 * PREFETCH_AHEAD]]);
	const struct request *rq = &q->req[i + PREFETCH_AHEAD];
	if (rq->kind == REQ_CACHED) {
		prefetch_span(q->text.buf + rq->body.off, rq->body.len);
	} else if (rq->kind == REQ_CODE) {
		const struct text_span *b = &q->body[q->pos[i + PREFETCH_AHEAD]];
		prefetch_span(q->text.buf + b->off, b->len);
	}
}

/* Print the batch in input order.  With bodies formatted apart, a CODE
 * request is its header and a copy of its body. */
static void print_batch(struct query *q)
{
	int apart = q->apart;
	for (size_t i = 0; i < q->nreq; i++) {
		const struct request *rq = &q->req[i];
		struct module *md = &q->mods[rq->mod];
		if (apart)
			prefetch_bodies(q, i);
		if (rq->kind == REQ_CACHED) {
			cli_print_code_body(&q->pr, rq->addr, q->text.buf + rq->body.off,
			                    rq->body.len);
			continue;
		}
		if (apart && rq->kind == REQ_CODE &&
		    (md->state >= 0 || q->pr.style != CLI_STYLE_JSON)) {
			const struct text_span *b = &q->body[q->pos[i]];
			cli_print_code_body(&q->pr, rq->addr, q->text.buf + b->off, b->len);
			continue;
		}
		int resolved = rq->kind == REQ_CODE || rq->kind == REQ_DATA;
		q->pr.module = md->name;
		/* llvm-symbolizer prints an Error object for CODE and DATA
		 * requests on a module it cannot read, and "Frame": [] for FRAME. */
		if (resolved && md->state < 0 && q->pr.style == CLI_STYLE_JSON) {
			cli_print_error(&q->pr, rq->addr, md->error);
			continue;
		}
		const symdb_symbolized *r = resolved ? &q->res[q->pos[i]] : NULL;
		if (r && r->status == SYMDB_SYM_DAMAGED)
			q->damaged = 1;
		if (r && q->pr.style == CLI_STYLE_ATOS) {
			symdb_result lr = { .count = r->nframes, .sym_name = r->sym_name,
				            .sym_addr = r->sym_addr, .sym_size = r->sym_size };
			cli_atos_print(q->pr.out, &q->pr.dm, q->image_name, rq->addr, r->vaddr, &lr,
			               r->frames, q->inlines > 0);
			continue;
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
				cli_print_data(&q->pr, rq->addr, r->sym_name, r->sym_addr,
				               r->sym_size);
			else
				cli_print_data(&q->pr, rq->addr, NULL, 0, 0);
			break;
		default:
			cli_print_code(&q->pr, rq->addr, q->li, select_frames(q, r));
		}
	}
}

/* ---- the body cache (struct body_cache) ------------------------------ */

/* What the library is asked for (resolve_batch, resolve_module with
 * SYMDB_ADDR_VADDR): equal keys resolve, and so print, alike. */
static uint64_t cache_key(const struct query *q, uint64_t addr)
{
	uint64_t k = addr - q->adjust_vma;
	return k == SYMDB_ADDR_INVALID ? SYMDB_ADDR_INVALID - 1 : k;
}

static size_t cache_hash(uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & (CACHE_SLOTS - 1);
}

static void cache_clear(struct body_cache *c)
{
	memset(c->slot, 0xff, CACHE_SLOTS * sizeof(*c->slot)); /* CACHE_EMPTY */
	c->used = 0;
}

/* Turn the cache on when the run's options allow it (once, at start). */
static void cache_init(struct query *q)
{
	if (q->per_line || q->kind != SYMDB_ADDR_VADDR || q->pr.style == CLI_STYLE_ATOS ||
	    !cli_code_body_apart(&q->pr))
		return;
	q->cache.slot = malloc(CACHE_SLOTS * sizeof(*q->cache.slot));
	if (q->cache.slot)
		cache_clear(&q->cache);
}

static void cache_insert(struct query *q, uint64_t key, struct text_span body)
{
	struct body_cache *c = &q->cache;
	if (c->used >= CACHE_SLOTS / 2)
		return; /* full until the next batch clears it */
	size_t h = cache_hash(key);
	while (c->slot[h].key != CACHE_EMPTY) {
		if (c->slot[h].key == key)
			return;
		h = (h + 1) & (CACHE_SLOTS - 1);
	}
	c->slot[h].key = key;
	c->slot[h].body = body;
	c->used++;
}

static int cache_full(const struct query *q)
{
	return q->cache.used >= CACHE_SLOTS / 2 || q->text.len > CACHE_TEXT_MAX;
}

/* Mark the batch's CODE requests whose body is cached as REQ_CACHED. */
static void cache_lookup(struct query *q)
{
	struct body_cache *c = &q->cache;
	c->lookups = c->hits = 0;
	if (cache_full(q)) {
		cache_clear(c);
		q->text.len = 0;
	}
	c->cold = c->used == 0;
	if (c->cold)
		return;
	for (size_t i = 0; i < q->nreq; i++) {
		if (i + PREFETCH_AHEAD < q->nreq)
			__builtin_prefetch(&c->slot[cache_hash(
				cache_key(q, q->req[i + PREFETCH_AHEAD].addr))]);
		struct request *rq = &q->req[i];
		if (rq->kind != REQ_CODE)
			continue;
		c->lookups++;
		uint64_t key = cache_key(q, rq->addr);
		for (size_t h = cache_hash(key); c->slot[h].key != CACHE_EMPTY;
		     h = (h + 1) & (CACHE_SLOTS - 1)) {
			if (c->slot[h].key == key) {
				rq->kind = REQ_CACHED;
				rq->body = c->slot[h].body;
				c->hits++;
				break;
			}
		}
	}
}

/* After a batch: a cache that mostly misses costs more than it saves, and
 * one that a single batch filled from empty would be cleared by the next. */
static void cache_review(struct query *q)
{
	struct body_cache *c = &q->cache;
	if ((c->cold && cache_full(q)) ||
	    (!c->cold && c->lookups >= 1024 && c->hits < c->lookups / 4)) {
		free(c->slot);
		c->slot = NULL;
		c->used = 0;
	}
}

static int run_batch(struct query *q)
{
	if (q->cache.slot)
		cache_lookup(q);
	q->apart = q->pr.style != CLI_STYLE_ATOS && cli_code_body_apart(&q->pr);
	int rc = resolve_batch(q);
	if (rc == 0 && q->apart && q->apart_failed) {
		/* Print this batch directly, from all its results at once. */
		q->apart = 0;
		rc = resolve_batch(q);
	}
	if (rc < 0) {
		cli_err(q->per_line ? "query" : q->mods[0].name, "%s", symdb_strerror(rc));
		return rc;
	}
	print_batch(q);
	if (q->cache.slot)
		cache_review(q);
	q->nreq = 0;
	return 0;
}

/* ---- input ------------------------------------------------------------- */

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
	if (q->per_line || avail < 3 || s[0] != '0' || (s[1] | 0x20) != 'x')
		return 0;
	size_t lim = avail < 19 ? avail : 19, i = 2;
	uint64_t v = 0;
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
	while (off < len) {
		size_t avail = len - off;
		size_t fast = add_hex_line(q, buf + off, avail, eof);
		if (fast) {
			off += fast;
			continue;
		}
		size_t lim = avail < LLVM_LINE_MAX ? avail : LLVM_LINE_MAX;
		char *nl = memchr(buf + off, '\n', lim);
		size_t take;
		if (nl)
			take = (size_t)(nl - (buf + off)) + 1;
		else if (avail >= LLVM_LINE_MAX)
			take = LLVM_LINE_MAX;
		else if (eof)
			take = avail;
		else
			break;
		add_piece(q, buf + off, take);
		off += take;
	}
	return off;
}

static int run_stdin(struct query *q)
{
	char *buf = malloc(STDIN_BUF);
	if (!buf) {
		cli_err(NULL, "out of memory");
		return -ENOMEM;
	}
	size_t len = 0;
	int eof = 0, rc = 0;
	while (!eof && rc == 0) {
		ssize_t n = read(STDIN_FILENO, buf + len, STDIN_BUF - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			cli_err("<stdin>", "%s", strerror(errno));
			break;
		}
		if (n == 0)
			eof = 1;
		len += (size_t)n;
		size_t used = split_pieces(q, buf, len, eof);
		if (q->nreq) {
			rc = run_batch(q);
			cli_out_flush(q->pr.out);
		}
		memmove(buf, buf + used, len - used);
		len -= used;
	}
	free(buf);
	return rc;
}

static int run_args(struct query *q, char **addrs, int naddrs)
{
	for (int i = 0; i < naddrs; i++)
		parse_request(q, addrs[i], strlen(addrs[i]), new_request(q));
	return q->nreq ? run_batch(q) : 0;
}

/* ---- options ------------------------------------------------------------ */

static int parse_style(const char *v, enum cli_style *out)
{
	if (strcmp(v, "LLVM") == 0)
		*out = CLI_STYLE_LLVM;
	else if (strcmp(v, "GNU") == 0)
		*out = CLI_STYLE_GNU;
	else if (strcmp(v, "JSON") == 0)
		*out = CLI_STYLE_JSON;
	else if (strcmp(v, "atos") == 0)
		*out = CLI_STYLE_ATOS;
	else
		return -1;
	return 0;
}

static int parse_fn_kind(const char *v, enum cli_fn_kind *out)
{
	if (strcmp(v, "none") == 0)
		*out = CLI_FN_NONE;
	else if (strcmp(v, "short") == 0)
		*out = CLI_FN_SHORT;
	else if (strcmp(v, "linkage") == 0)
		*out = CLI_FN_LINKAGE;
	else
		return -1;
	return 0;
}

static int parse_addr_kind(const char *v, enum symdb_addr_kind *out)
{
	static const struct {
		const char *name;
		enum symdb_addr_kind kind;
	} kinds[] = { { "vaddr", SYMDB_ADDR_VADDR },
		      { "offset", SYMDB_ADDR_OFFSET },
		      { "fileoff", SYMDB_ADDR_FILEOFF },
		      { "runtime", SYMDB_ADDR_RUNTIME } };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(v, kinds[i].name) == 0) {
			*out = kinds[i].kind;
			return 0;
		}
	return -1;
}

/* Plain flags; returns 1 when argv[i] was one. */
static int query_flag(struct query *q, const char *a)
{
	struct cli_printer *p = &q->pr;
	if (!strcmp(a, "--inlines") || !strcmp(a, "--inlining") || !strcmp(a, "--inlining=true"))
		q->inlines = 1;
	else if (!strcmp(a, "--no-inlines") || !strcmp(a, "--inlining=false"))
		q->inlines = 0;
	else if (!strcmp(a, "--functions"))
		p->fn_kind = CLI_FN_LINKAGE;
	else if (!strcmp(a, "--demangle") || !strcmp(a, "-demangle=true"))
		p->demangle = 1;
	else if (!strcmp(a, "--no-demangle") || !strcmp(a, "-demangle=false"))
		p->demangle = 0;
	else if (!strcmp(a, "--basenames"))
		p->path_kind = CLI_PATH_BASENAME;
	else if (!strcmp(a, "--relativenames"))
		p->path_kind = CLI_PATH_RELATIVE;
	else if (!strcmp(a, "--addresses") || !strcmp(a, "--print-address"))
		p->print_address = 1;
	else if (!strcmp(a, "--pretty-print"))
		p->pretty = 1;
	else if (!strcmp(a, "--verbose"))
		p->verbose = 1;
	else if (!strcmp(a, "--no-verify"))
		q->no_verify = 1;
	else if (!strcmp(a, "--relative-address") || !strcmp(a, "--use-symbol-table=true"))
		; /* no-ops for ELF and Mach-O in llvm-symbolizer-14: its "preferred
		   base" is non-zero only for COFF.  Use --addr-kind offset. */
	else
		return 0;
	return 1;
}

/* Grouped one-letter flags, as LLVM's OptTable accepts them: -apCs. */
static int query_short_flags(struct query *q, const char *a)
{
	if (a[0] != '-' || a[1] == '-' || a[1] == '\0')
		return 0;
	for (const char *c = a + 1; *c; c++)
		if (!strchr("aCfips", *c))
			return 0;
	for (const char *c = a + 1; *c; c++) {
		switch (*c) {
		case 'a': q->pr.print_address = 1; break;
		case 'C': q->pr.demangle = 1; break;
		case 'f': q->pr.fn_kind = CLI_FN_LINKAGE; break;
		case 'i': q->inlines = 1; break;
		case 'p': q->pr.pretty = 1; break;
		case 's': q->pr.path_kind = CLI_PATH_BASENAME; break;
		}
	}
	return 1;
}

/* A signed int like StringRef::getAsInteger: "-N" is accepted (and, being
 * <= 0, turns the context off). */
static int parse_context_lines(const char *v, int *out)
{
	int neg = v[0] == '-';
	uint64_t n;
	if (cli_parse_u64(v + neg, strlen(v + neg), &n) < 0 || n > 1000000)
		return -1;
	*out = neg ? -(int)n : (int)n;
	return 0;
}

static int bad_value(const char *opt, const char *v)
{
	cli_err(NULL, "invalid value '%s' for %s (see 'symdb help query')", v, opt);
	return CLI_EXIT_USAGE;
}

enum { V_OBJ, V_UUID, V_DB, V_STYLE, V_KIND, V_LOAD, V_VMA, V_ARCH, V_CONTEXT, V_IGNORED };

static const struct {
	const char *name;
	int id;
} value_opts[] = {
	{ "--obj", V_OBJ },       { "--exe", V_OBJ },         { "-e", V_OBJ },
	{ "--uuid", V_UUID },     { "--db", V_DB },           { "--output-style", V_STYLE },
	{ "--addr-kind", V_KIND }, { "--load-address", V_LOAD }, { "--adjust-vma", V_VMA },
	{ "--arch", V_ARCH },     { "--default-arch", V_ARCH },
	{ "--print-source-context-lines", V_CONTEXT },
	/* Where llvm-symbolizer looks for debug info: symdb decides that when
	 * indexing (symdb build --debug-dir), so at query time they are
	 * accepted and have no effect. */
	{ "--debug-file-directory", V_IGNORED }, { "--dwp", V_IGNORED },
	{ "--fallback-debug-path", V_IGNORED },  { "--dsym-hint", V_IGNORED },
};

static int apply_value_opt(struct query *q, struct cli_global *g, int id, const char *name,
                           const char *v)
{
	int bad = 0;
	switch (id) {
	case V_OBJ: q->obj = v; break;
	case V_UUID: q->uuid_hex = v; break;
	case V_DB: g->db_dir = v; break;
	case V_STYLE: bad = parse_style(v, &q->pr.style); break;
	case V_KIND: bad = parse_addr_kind(v, &q->kind); break;
	case V_LOAD: bad = cli_parse_u64(v, strlen(v), &q->load_address); break;
	case V_ARCH: q->arch = v; break;
	case V_CONTEXT: bad = parse_context_lines(v, &q->pr.src.lines); break;
	case V_IGNORED: break;
	default: bad = cli_parse_u64(v, strlen(v), &q->adjust_vma); break;
	}
	return bad ? -bad_value(name, v) : 1;
}

/* Options that take a value; returns 1 handled, 0 not ours, or -exit code. */
static int query_value_opt(struct query *q, struct cli_global *g, int argc, char **argv, int *i)
{
	const char *v;
	for (size_t k = 0; k < sizeof(value_opts) / sizeof(value_opts[0]); k++) {
		int m = cli_opt_value(argc, argv, i, value_opts[k].name, &v);
		if (m < 0)
			return -CLI_EXIT_USAGE;
		if (m > 0)
			return apply_value_opt(q, g, value_opts[k].id, value_opts[k].name, v);
	}
	const char *a = argv[*i];
	if (!strncmp(a, "--functions=", 12) || !strncmp(a, "-f=", 3)) {
		v = strchr(a, '=') + 1;
		if (parse_fn_kind(v, &q->pr.fn_kind))
			return -bad_value("--functions", v);
		return 1;
	}
	return 0;
}

#define HELP_SHOWN (-1000)

/* Returns 0, HELP_SHOWN, or minus an exit code. */
static int parse_query_args(struct query *q, struct cli_global *g, int argc, char **argv,
                            int *first_addr)
{
	int i = 1, nat = 0;
	/* Addresses are collected at the front of argv, in order. */
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			for (i++; i < argc; i++)
				if (argv[i][0])
					argv[nat++] = argv[i];
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			cli_usage(stdout, "query");
			return HELP_SHOWN;
		}
		if (a[0] == '\0')
			continue; /* LLVM's OptTable drops empty arguments */
		if (a[0] != '-' || a[1] == '\0') {
			argv[nat++] = argv[i];
			continue;
		}
		if (query_flag(q, a) || query_short_flags(q, a))
			continue;
		int m = query_value_opt(q, g, argc, argv, &i);
		if (m < 0)
			return m;
		if (m > 0)
			continue;
		cli_err(NULL, "query: unknown option '%s' (see 'symdb help query')", a);
		return -CLI_EXIT_USAGE;
	}
	*first_addr = nat;
	if (q->obj && q->uuid_hex) {
		cli_err(NULL, "query: give only one of --obj FILE and --uuid HEX");
		return -CLI_EXIT_USAGE;
	}
	q->per_line = !q->obj && !q->uuid_hex;
	if (q->per_line && q->pr.style == CLI_STYLE_ATOS) {
		cli_err(NULL, "query: --output-style=atos needs --obj FILE or --uuid HEX");
		return -CLI_EXIT_USAGE;
	}
	if (q->kind != SYMDB_ADDR_RUNTIME && q->load_address) {
		cli_err(NULL, "query: --load-address needs --addr-kind runtime");
		return -CLI_EXIT_USAGE;
	}
	return 0;
}

/* ---- opening the image ---------------------------------------------------- */

static int open_db(const struct cli_global *g, symdb **db)
{
	char err[512] = "";
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof(err));
	int rc = symdb_open(g->db_dir, &o, db);
	if (rc == 0)
		return 0;
	char dir[4096] = "";
	if (g->db_dir)
		snprintf(dir, sizeof(dir), "%s", g->db_dir);
	else if (symdb_default_dir(dir, sizeof(dir)) < 0)
		snprintf(dir, sizeof(dir), "(default database)");
	if (rc == -ENOENT)
		cli_err(dir, "no symdb database here (create it with 'symdb build FILE')");
	else
		cli_err_lib(dir, rc, err);
	return -CLI_EXIT_DATABASE;
}

static void describe_not_indexed(const char *obj, char *msg, size_t msz)
{
	symdb_uuid id;
	char hex[2 * SYMDB_UUID_MAX + 1];
	if (symdb_file_uuid(obj, NULL, &id) == 0) {
		symdb_uuid_format(&id, hex);
		snprintf(msg, msz, "not indexed (%s %s); run 'symdb build %s' first",
		         id.kind == SYMDB_UUID_GNU_BUILD_ID ? "build-id" : "image id", hex, obj);
	} else {
		snprintf(msg, msz, "not indexed; run 'symdb build %s' first", obj);
	}
}

/*
 * Open the image of a binary (obj) or of a UUID.  On failure the reason is
 * printed on stderr, a short form of it left in msg (JSON's Error.Message:
 * strerror text for system errors, as llvm-symbolizer's), and minus an exit
 * code returned.
 */
static int open_named(struct query *q, const char *obj, const char *uuid_hex,
                      symdb_image **img, char *msg, size_t msz)
{
	char err[512] = "";
	/* Checksums are verified unless --no-verify: XXH3 runs at memory speed,
	 * and a flipped byte must be reported rather than printed as a wrong
	 * answer. */
	SYMDB_OPTS(symdb_open_opts, o, .flags = q->no_verify ? 0 : SYMDB_OPEN_VERIFY_CHECKSUMS,
	           .errbuf = err, .errbuf_sz = sizeof(err));
	int rc;
	const char *what = obj ? obj : uuid_hex;
	snprintf(msg, msz, "unable to open this image");
	if (obj && (rc = cli_open_slice(q->db, obj, q->arch, &o, img)) <= 0) {
		return rc; /* Mach-O: opened, or reported */
	} else if (obj) {
		rc = symdb_image_open_binary(q->db, obj, &o, img);
	} else {
		symdb_uuid id;
		if (symdb_uuid_parse(uuid_hex, &id) < 0) {
			cli_err(uuid_hex, "not a UUID (2 to 64 hex digits)");
			return -CLI_EXIT_USAGE;
		}
		rc = symdb_image_open_uuid(q->db, &id, &o, img);
	}
	if (rc == 0)
		return 0;
	if (rc == SYMDB_E_NOT_INDEXED && obj) {
		describe_not_indexed(obj, msg, msz);
		cli_err(obj, "%s", msg);
	} else if (rc == SYMDB_E_NOT_INDEXED) {
		snprintf(msg, msz, "not indexed in this database");
		cli_err(what, "%s", msg);
	} else {
		int sys = rc < 0 && rc > SYMDB_E_FORMAT; /* -errno */
		snprintf(msg, msz, "%s", sys || !err[0] ? symdb_strerror(rc) : err);
		cli_err_lib(what, rc, err);
	}
	return -cli_exit_for(rc);
}

/* A per-line module's image, opened on first use (a failure is reported
 * once and remembered). */
static symdb_image *module_image(struct query *q, struct module *m)
{
	if (m->state == 0) {
		char msg[1024];
		int rc = open_named(q, m->name, NULL, &m->img, msg, sizeof(msg));
		m->state = rc < 0 ? rc : 1;
		if (rc < 0) {
			m->img = NULL;
			m->error = strdup(msg);
			if (-rc > q->module_failed)
				q->module_failed = -rc;
		}
	}
	return m->state > 0 ? m->img : NULL;
}

static void query_free(struct query *q)
{
	struct cli_used used; /* last-query times, written once at exit (cli_maint.c) */
	cli_used_init(&used, q->db);
	cli_used_add(&used, q->db, q->img);
	for (size_t i = 0; i < q->nmods; i++) {
		cli_used_add(&used, q->db, q->mods[i].img);
		if (q->mods[i].img != q->img)
			symdb_image_close(q->mods[i].img);
		free(q->mods[i].name);
		free(q->mods[i].error);
	}
	free(q->mods);
	symdb_image_close(q->img);
	symdb_symbolizer_free(q->sym);
	symdb_close(q->db);
	cli_used_commit(&used);
	free(q->req);
	free(q->sreq);
	free(q->pos);
	free(q->spos);
	free(q->res);
	free(q->li);
	free(q->body);
	free(q->text.buf);
	free(q->cache.slot);
}

int cli_cmd_query(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	struct cli_out out;
	struct query q;
	memset(&q, 0, sizeof(q));
	q.inlines = -1; /* on, as llvm-symbolizer; atos style needs an explicit -i */
	if (cli_out_init(&out, stdout, 256 * 1024) < 0)
		return CLI_EXIT_FAILED;
	if (cli_out_init(&q.text, NULL, 1 << 20) < 0) {
		cli_out_fini(&out);
		return CLI_EXIT_FAILED;
	}
	cli_printer_init(&q.pr, &out);

	int naddr = 0, ex = CLI_EXIT_OK;
	int rc = parse_query_args(&q, &g, argc, argv, &naddr);
	if (rc < 0) {
		ex = rc == HELP_SHOWN ? CLI_EXIT_OK : -rc;
		goto out;
	}
	if ((rc = open_db(&g, &q.db)) < 0) {
		ex = -rc;
		goto out;
	}
	if ((rc = symdb_symbolizer_create(q.db, NULL, &q.sym)) < 0) {
		cli_err(NULL, "%s", symdb_strerror(rc));
		ex = CLI_EXIT_FAILED;
		goto out;
	}
	/* Names are demangled by the library, once per name; atos style
	 * demangles its own way (cli_atos.c). */
	q.lib_demangle = q.pr.demangle && q.pr.style != CLI_STYLE_ATOS;
	if (q.lib_demangle)
		q.pr.demangle = 0;
	if (!q.per_line) {
		char msg[1024];
		const char *name = q.obj ? q.obj : q.uuid_hex;
		uint32_t m0 = intern_module(&q, name, strlen(name)); /* reallocs mods */
		if ((rc = open_named(&q, q.obj, q.uuid_hex, &q.img, msg, sizeof(msg))) < 0) {
			ex = -rc;
			goto out;
		}
		q.mods[m0].img = q.img;
		q.mods[m0].state = 1;
		symdb_image_info info;
		symdb_image_get_info(q.img, &info);
		q.image_name = info.image_name;
	}
	q.pr.json_list = naddr > 0;
	cache_init(&q);
	cli_print_begin(&q.pr);
	rc = naddr > 0 ? run_args(&q, argv, naddr) : run_stdin(&q);
	cli_print_end(&q.pr);
	if (rc < 0)
		ex = cli_exit_for(rc);
	if (q.module_failed && ex == CLI_EXIT_OK)
		ex = q.module_failed;
	if (q.damaged) {
		cli_err(q.per_line ? "query" : q.mods[0].name,
		        "index file is damaged: some addresses were not resolved");
		ex = CLI_EXIT_DAMAGED;
	}
out:
	cli_printer_fini(&q.pr);
	if (cli_out_fini(&out) < 0 && ex == CLI_EXIT_OK) {
		cli_err("<stdout>", "write error");
		ex = CLI_EXIT_FAILED;
	}
	query_free(&q);
	return ex;
}
