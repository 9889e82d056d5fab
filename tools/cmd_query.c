/* SPDX-License-Identifier: MIT */
/*
 * `symdb query`: a drop-in for `llvm-symbolizer-14 --obj FILE`.
 *
 * Requests come from the arguments or from stdin, parsed exactly as
 * llvm-symbolizer parses them (fgets into a 1024-byte buffer, so longer lines
 * split every 1023 bytes; every \r and \n removed; an optional "CODE ",
 * "DATA " or "FRAME " prefix; spaces skipped; the address token read by
 * StringRef::getAsInteger with radix auto-detection; anything unparsable
 * echoed back).  Instead of one lookup per line, a window of requests goes
 * to the library in one symdb_symbolize() call, which translates, groups by
 * image, sorts and resolves, and answers in input order.  stdin
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
 * (on a per-line stream by image and address) carries them across
 * batches.  Names are demangled by the printer, once per distinct name for
 * the run (cli_output.c's name cache).
 *
 * A batch is answered in windows of a bounded number of requests whose
 * bodies come to a few MiB (cli_query.h, WINDOW_*), each printed before
 * the next is resolved: memory is bounded by the window, never by the
 * batch or the input.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli_fault.h"
#include "cli_maint.h"
#include "cli_query.h"

void *cli_query_grow_to(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *np = cli_big_realloc(p, *cap * elem, n * elem);
	if (!np) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	*cap = n;
	return np;
}

/* ---- resolving a batch ----------------------------------------------- */

/*
 * Module mod's image, opened on first use.  An open module's tag names the
 * module that holds its image (cli_query_owns_image): thousands of paths
 * to a few files then read a few modules, which stay in the cache, rather
 * than one struct module a line (mod_tag, 4 bytes a module, is read per
 * line anyway by the body cache).  A module without a tag (not tried yet,
 * failed, damaged, or one of --pid's) is asked.
 */
static inline const symdb_image *module_image(struct query *q, uint32_t mod)
{
	uint32_t tag = mod < q->mod_tag_cap ? q->mod_tag[mod] : 0;
	if (tag)
		return q->mods[tag - 1].img;
	struct module *md = &q->mods[mod];
	return md->state > 0 ? md->img : cli_query_module_image(q, md);
}

/*
 * Resolve every CODE/DATA request of the window with one symdb_symbolize()
 * call: the library translates, groups by image, sorts, resolves (and
 * demangles, when q->lib_demangle), and answers in input order (res[pos[i]]
 * for request i).
 * Requests name their module's image by handle: modules are opened here, on
 * first use, so that a failure is reported the CLI's way (a module that
 * could not be opened is a NULL handle, and prints as nothing found).
 */
static int resolve_batch(struct query *q)
{
	size_t cap = q->arr_cap;
	q->sreq = cli_query_grow(q->sreq, &cap, q->nreq, sizeof(*q->sreq));
	cap = q->arr_cap;
	q->pos = cli_query_grow(q->pos, &cap, q->nreq, sizeof(*q->pos));
	cap = q->arr_cap;
	q->spos = cli_query_grow(q->spos, &cap, q->nreq, sizeof(*q->spos));
	q->arr_cap = cap;
	size_t m = 0;
	int has_data = 0;
	uint32_t last = UINT32_MAX;
	const symdb_image *img = NULL;
	for (size_t i = 0; i < q->nreq; i++) {
		const struct request *rq = &q->req[i];
		if (rq->kind != REQ_CODE && rq->kind != REQ_DATA) {
			/* llvm-symbolizer reads a FRAME request's module too,
			 * in input order with the others: its errors are said
			 * in that order */
			if (rq->kind == REQ_FRAME && ((q->per_line && !q->pid) || q->build_id_hex)) {
				if (rq->mod != last)
					(void)module_image(q, rq->mod);
				else if (!img)
					cli_query_build_id_missing(q, &q->mods[last]);
			}
			continue;
		}
		if (rq->mod != last) { /* (lines of many modules: nearly every line) */
			img = module_image(q, rq->mod);
			last = rq->mod;
		} else if (!img) {
			cli_query_build_id_missing(q, &q->mods[last]);
		}
		symdb_request *sr = &q->sreq[m];
		*sr = (symdb_request){ .image_ref = SYMDB_IMAGE_HANDLE,
			               .addr_kind = (uint8_t)q->kind,
			               .image.handle = img,
			               .addr = q->xaddr ? q->xaddr[i] : rq->addr - q->adjust_vma,
			               .load_address = q->load_address };
		/* A vaddr of UINT64_MAX is a real request to llvm-symbolizer
		 * (it finds the last zero-size symbol, e.g. _end), but it is
		 * SYMDB_ADDR_INVALID to the library.  UINT64_MAX - 1 lies in
		 * exactly the same symbols unless one ends at UINT64_MAX. */
		if (q->kind == SYMDB_ADDR_VADDR && sr->addr == SYMDB_ADDR_INVALID)
			sr->addr = SYMDB_ADDR_INVALID - 1;
		has_data |= rq->kind == REQ_DATA;
		q->spos[m] = (uint32_t)i;
		q->pos[i] = (uint32_t)m++;
	}
	q->nsorted = m;
	if (!m)
		return 0;
	/* Bodies formatted apart are formatted as the library hands over each
	 * chunk of results, while its frames are in the cache, and need
	 * nothing of them afterwards (STREAM: the library reuses the frames,
	 * and keeps no results array); DATA requests are printed from their
	 * results (names, not frames), so a batch with any keeps them. */
	symdb_symbolized *res = NULL;
	if (!q->apart || has_data) {
		size_t rcap = q->res_cap;
		q->res = cli_query_grow(q->res, &rcap, m, sizeof(*q->res));
		q->res_cap = rcap;
		res = q->res;
	}
	if (q->apart)
		cli_query_format_begin(q);
	char err[256] = "";
	SYMDB_OPTS(symdb_symbolize_opts, o,
	           .flags = (q->lib_demangle ? SYMDB_SYMBOLIZE_DEMANGLE : 0u) |
	                    (q->apart ? SYMDB_SYMBOLIZE_ORDER | SYMDB_SYMBOLIZE_STREAM : 0u),
	           .errbuf = err, .errbuf_sz = sizeof(err),
	           .on_results = q->apart ? cli_query_format_results : NULL, .on_results_arg = q);
	return symdb_symbolize(q->sym, q->sreq, m, res, &o);
}

void cli_query_cache_result(struct query *q, const symdb_symbolized *r, uint32_t k,
                            struct text_span body)
{
	if (!q->per_line) {
		cli_query_cache_insert(q, r->vaddr, body);
		return;
	}
	uint32_t tag = q->mod_tag[q->req[q->spos[k]].mod];
	uint64_t key = cli_query_cache_key_tagged(tag, r->vaddr);
	if (key != CACHE_EMPTY && (tag > q->tag_probe_cap || !q->tag_probe[tag - 1])) {
		size_t cap = q->tag_probe_cap;
		if (tag > cap) {
			q->tag_probe = cli_query_grow(q->tag_probe, &q->tag_probe_cap, tag,
			                              sizeof(*q->tag_probe));
			memset(q->tag_probe + cap, 0, (q->tag_probe_cap - cap) * sizeof(*q->tag_probe));
		}
		q->probed = cli_query_grow(q->probed, &q->probed_cap, q->nprobed + 1,
		                           sizeof(*q->probed));
		q->probed[q->nprobed++] = tag;
		q->tag_probe[tag - 1] = r->vaddr + 1;
	}
	cli_query_cache_insert(q, key, body);
}

/*
 * A per-line stream's cached bodies came from index files that may have
 * been truncated since (truncate_live.sh): a hit reads nothing of its
 * image, so while the cache answers, the truncation would go unnoticed.
 * Before each window, every image with cached bodies resolves one of its
 * cached addresses again (its tables and strings read as for any request:
 * a truncated file faults, and the SIGBUS handler marks the image damaged,
 * cli_fault.c), and a damaged image's module is declared damaged, which
 * also switches the cache off: the window is then resolved, and every
 * module of that image found damaged, as without the cache.
 */
static void probe_images(struct query *q)
{
	symdb_frame fr[64];
	symdb_result res;
	for (size_t k = 0; k < q->nprobed && q->cache.slot; k++) {
		uint32_t m = q->probed[k] - 1;
		const struct module *md = &q->mods[m];
		if (md->state <= 0 || !md->img)
			continue;
		uint64_t a = q->tag_probe[m] - 1;
		if (symdb_resolve_batch(md->img, &a, 1, fr, sizeof fr / sizeof fr[0], sizeof fr[0],
		                        &res, sizeof res) == 1)
			for (uint32_t f = res.first; f < res.first + res.count; f++) {
				const char *name = fr[f].name; /* (its strings too) */
				if (name)
					(void)*(const volatile char *)name;
			}
		if (symdb_image_fault_check(md->img) < 0)
			cli_query_module_damaged(q, m);
	}
}

/* One window of the batch: q->req[0..q->nreq) resolved and printed. */
static int run_window(struct query *q)
{
	if (q->cache.slot && q->per_line)
		probe_images(q);
	if (q->cache.slot)
		cli_query_cache_lookup(q);
	q->apart = cli_query_apart(q);
	int rc = q->pid ? cli_live_prepare(q) : 0;
	if (rc < 0)
		return rc; /* reported */
	rc = resolve_batch(q);
	if (rc == 0 && q->apart && q->apart_failed) {
		/* Print this window directly, from all its results at once,
		 * and make the next ones smaller. */
		q->apart = 0;
		q->window = q->window / 8 > WINDOW_MIN ? q->window / 8 : WINDOW_MIN;
		rc = resolve_batch(q);
	} else if (rc == 0 && q->apart && q->nsorted) {
		/* The next window's bodies about WINDOW_TEXT, or with the
		 * body cache off, WINDOW_TEXT_ALONE. */
		size_t bytes = q->text.len - q->text_mark;
		uint64_t target = q->cache.slot ? WINDOW_TEXT : WINDOW_TEXT_ALONE;
		size_t w = bytes ? (size_t)(target * q->nsorted / bytes) : WINDOW_MAX;
		q->window = w < WINDOW_MIN ? WINDOW_MIN : w > WINDOW_MAX ? WINDOW_MAX : w;
	} else if (rc == 0 && !q->apart && q->nsorted && q->res && cli_code_body_apart(&q->pr)) {
		/* Printed straight from its results, a window holds them and
		 * their frames, not text: the next one about WINDOW_TEXT of
		 * those.  Sized by the text it would have made (2 KiB an
		 * address on a deeply inlined C++ image), it was a few
		 * thousand addresses spread over the whole index, each lookup
		 * a chain of cache misses. */
		uint64_t frames = 0;
		for (size_t i = 0; i < q->nsorted; i++)
			frames += q->res[i].nframes;
		uint64_t bytes = q->nsorted * sizeof(*q->res) + frames * sizeof(symdb_frame);
		size_t w = (size_t)((uint64_t)WINDOW_TEXT * q->nsorted / bytes);
		q->window = w < WINDOW_MIN ? WINDOW_MIN : w > WINDOW_DIRECT_MAX ? WINDOW_DIRECT_MAX : w;
	}
	if (rc < 0) {
		cli_err(q->per_line ? "query" : q->mods[0].name, "%s", symdb_strerror(rc));
		return rc;
	}
	cli_query_print_batch(q);
	cli_query_mem_check(q);
	if (q->cache.slot)
		cli_query_cache_review(q);
	return 0;
}

int cli_query_run_batch(struct query *q)
{
	struct request *all = q->req;
	size_t n = q->nreq;
	int rc = 0;
	if (!q->window)
		q->window = WINDOW_FIRST;
	cli_query_mem_batch(q, n);
	for (size_t off = 0; off < n && rc == 0;) {
		size_t w = n - off < q->window ? n - off : q->window;
		q->req = all + off;
		q->nreq = w;
		rc = run_window(q);
		off += w;
	}
	q->req = all;
	q->nreq = 0;
	return rc;
}

void cli_query_module_damaged(struct query *q, uint32_t mod)
{
	struct module *m = &q->mods[mod];
	q->damaged = 1;
	if (m->state < 0)
		return;
	cli_err(m->name, "%s: its addresses are not resolved from here on", DAMAGED_MSG);
	m->state = -CLI_EXIT_DAMAGED;
	cli_query_set_tag(q, mod, 0);
	free(m->error);
	m->error = strdup(DAMAGED_MSG);
	if (-m->state > q->module_failed)
		q->module_failed = -m->state;
	/* Bodies and names cached before the fault must not answer for it
	 * either. */
	cli_printer_forget_names(&q->pr);
	free(q->cache.slot);
	q->cache.slot = NULL;
	q->cache.used = 0;
}

static void query_free(struct query *q)
{
	struct cli_used used; /* last-query times, written once at exit (cli_maint.c) */
	cli_used_init(&used, q->db);
	cli_used_add(&used, q->db, q->img);
	int img_ctx = 0; /* q->img is the context's */
	for (size_t i = 0; i < q->nmods; i++) {
		/* one catalog read an image, not one a path */
		if (cli_query_owns_image(q, i))
			cli_used_add(&used, q->db, q->mods[i].img);
		img_ctx |= q->mods[i].ctx_img && q->mods[i].img == q->img;
		if (q->mods[i].img != q->img && !q->mods[i].ctx_img)
			symdb_image_close(q->mods[i].img);
		free(q->mods[i].name);
		free(q->mods[i].error);
	}
	free(q->mods);
	free(q->mod_tag);
	free(q->tag_probe);
	free(q->probed);
	free(q->mod_slot);
	free(q->mod_keys);
	cli_query_files_free(q);
	cli_live_free(q);
	if (!img_ctx)
		symdb_image_close(q->img);
	symdb_symbolizer_free(q->sym);
	cli_fault_unguard();
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
	cli_fetch_free(&q->fetch);
	free(q->cache.slot);
	free(q->cache.keep);
	free(q->cache.keep_text);
	cli_query_mem_fini(q);
}

void cli_query_setup(struct query *q, struct cli_out *out)
{
	memset(q, 0, sizeof(*q));
	q->statm_fd = -1;
	q->inlines = -1; /* on, as llvm-symbolizer; atos style needs an explicit -i */
	if (cli_out_init(out, stdout, 256 * 1024) < 0 || cli_out_init(&q->text, NULL, 1 << 20) < 0) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	cli_printer_init(&q->pr, out);
}

int cli_query_execute(struct query *q, const struct cli_global *g, char **addrs, int naddr)
{
	int rc, ex = CLI_EXIT_OK;
	if (q->perf_map) /* JIT code: the map is its own index, no database */
		return cli_live_perfmap_execute(q, addrs, naddr);
	/* --uuid names no file to index: its database must exist, unless
	 * the image may be fetched into it (cli_fetch.h). */
	int fetches = cli_fetch_opts(&q->fetch, NULL) != NULL;
	if ((rc = cli_query_open_db(g, q->no_build || (q->uuid_hex && !fetches), &q->db)) < 0)
		return -rc;
	/* A stream may run for hours: an index file truncated meanwhile
	 * damages that module only (cli_query_module_damaged). */
	cli_fault_guard(q->db);
	if (cli_query_create_sym(q, q->no_build) < 0)
		return CLI_EXIT_FAILED;
	/* Each distinct name is demangled once per run: by the printer,
	 * whose cache is keyed by the name's address in an index mapping,
	 * which stays mapped for the run; by the library (once per name while
	 * its context's name cache holds it) when names may come from
	 * elsewhere: --pid's JIT names, freed per batch, and the kernel's
	 * symbol table.  atos style demangles its own way (cli_atos.c). */
	q->pr.stable_names = !q->pid && !q->ksrc.on;
	q->lib_demangle = q->pr.demangle && q->pr.style != CLI_STYLE_ATOS && !q->pr.stable_names;
	if (q->lib_demangle)
		q->pr.demangle = 0;
	if (q->build_id_hex) {
		/* Module 0 is a "BUILDID:" line's module, opened (or said
		 * missing, at each request, as llvm-16) on first use; the
		 * hex was checked with the options (check_build_id) */
		uint32_t m0;
		(void)cli_query_intern_build_id(q, q->build_id_hex, strlen(q->build_id_hex), &m0);
	} else if (!q->per_line) {
		char msg[1024];
		const char *name = q->obj ? q->obj : q->uuid_hex;
		uint32_t m0 = cli_query_intern_module(q, name, strlen(name)); /* reallocs mods */
		rc = cli_query_open_named(q, q->obj, q->uuid_hex, &q->img, msg, sizeof(msg));
		/* A file that cannot be read still gets one answer per
		 * request ("??"), as from llvm-symbolizer; a bad command line
		 * or database does not. */
		if (rc == -CLI_EXIT_USAGE || rc == -CLI_EXIT_DATABASE ||
		    (rc < 0 && q->pr.style == CLI_STYLE_ATOS))
			return rc == OPEN_AS_LLVM ? CLI_EXIT_FAILED : -rc;
		q->mods[m0].img = q->img;
		cli_query_module_opened(q, &q->mods[m0], rc, msg);
		if (rc >= 0) {
			symdb_image_info info;
			info.sz = sizeof info;
			symdb_image_get_info(q->img, &info);
			q->image_name = info.image_name;
		}
	}
	q->pr.json_list = naddr > 0;
	cli_query_cache_init(q);
	cli_query_mem_init(q);
	cli_print_begin(&q->pr);
	if (q->run)
		rc = q->run(q, addrs, naddr);
	else
		rc = naddr > 0 ? cli_query_run_args(q, addrs, naddr) : cli_query_run_stdin(q);
	cli_print_end(&q->pr);
	if (rc < 0)
		ex = cli_exit_for(rc);
	if (q->module_failed && ex == CLI_EXIT_OK)
		ex = q->module_failed;
	if (q->damaged) {
		cli_err(q->per_line ? "query" : q->mods[0].name,
		        "index file is damaged: some addresses were not resolved");
		ex = CLI_EXIT_DAMAGED;
	}
	return ex;
}

int cli_query_finish(struct query *q, struct cli_out *out, int ex)
{
	cli_printer_fini(&q->pr);
	if (cli_out_fini(out) < 0 && ex == CLI_EXIT_OK) {
		cli_err("<stdout>", "write error");
		ex = CLI_EXIT_FAILED;
	}
	query_free(q);
	return ex;
}

int cli_cmd_query(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	struct cli_out out;
	struct query q;
	cli_query_setup(&q, &out);
	int naddr = 0, ex;
	char **addrs = NULL;
	int rc = cli_query_parse_args(&q, &g, argc, argv, &addrs, &naddr);
	if (rc < 0)
		ex = rc == HELP_SHOWN ? CLI_EXIT_OK : -rc;
	else
		ex = cli_query_execute(&q, &g, addrs, naddr);
	return cli_query_finish(&q, &out, ex);
}
