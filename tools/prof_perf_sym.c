/* SPDX-License-Identifier: MIT */
/*
 * prof_perf_sym.c - the symbolizing step of `symdb perf` (cmd_perf.c says
 * the whole): the distinct locations of a run, grouped by kind, each kind
 * through its symdb API in batches, into frames (prof_frame) that the
 * folding step expands.
 *   files   symdb_symbolize(): by path at the file offset perf printed,
 *           indexed on first sight; through the file's debug file at the
 *           vaddr when there is one (perf's names, below); by build-id
 *           when the file on disk is not the one perf recorded
 *   kernel  symdb_kernel_symbolize(), refused for another kernel's profile
 *   vDSO    this process's own vDSO (symdb_proc_symbolize())
 *   JIT     the process's perf map or jitdump (symdb_perfmap_lookup())
 * PLT stubs are named NAME@plt (prof_plt.c), as perf names them.
 */
#define _GNU_SOURCE /* getauxval */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "cli_util.h"
#include "prof_perf_run.h"
#include "prof_plt.h"

#define SYM_BATCH 65536u /* requests per library call */

static int add_frame(struct perf_run *r, const prof_frame *f)
{
	if (GROW(r->frames, r->frames_cap, r->nframes + 1))
		return -ENOMEM;
	r->frames[r->nframes++] = *f;
	return 0;
}

/* A location nothing named: "module+0xOFF", or "[unknown]". */
static int unresolved(struct perf_run *r, struct loc *l)
{
	const struct pmodule *m = &r->mod[l->mod];
	char buf[512];
	int rc = 0;
	if (m->kind == MOD_NONE)
		snprintf(buf, sizeof buf, "[unknown]");
	else
		snprintf(buf, sizeof buf, "%s+0x%llx", m->base, (unsigned long long)l->addr);
	prof_frame f = { .name = prof_perf_intern(r, buf, &rc), .kind = PROF_UNKNOWN,
	                 .module = prof_perf_intern(r, m->kind == MOD_NONE ? NULL : m->base, &rc) };
	l->first = (uint32_t)r->nframes;
	l->n = 1;
	return rc ? rc : add_frame(r, &f);
}

/* A location's frames from symdb frames (innermost first) or, without
 * any, the covering symbol's name. */
static int resolved(struct perf_run *r, struct loc *l, int kind, const symdb_frame *fr,
                    size_t n, const char *sym_name)
{
	struct pmodule *m = &r->mod[l->mod];
	int rc = 0;
	l->first = (uint32_t)r->nframes;
	l->n = (uint32_t)(n ? n : 1);
	m->nresolved++;
	const char *mod = prof_perf_intern(r, kind == PROF_KERNEL ? "[kernel.kallsyms]" : m->base, &rc);
	if (!n) {
		prof_frame f = { .name = prof_perf_intern(r, sym_name, &rc), .kind = (uint8_t)kind,
		                 .module = mod };
		return rc ? rc : add_frame(r, &f);
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const symdb_frame *s = &fr[i];
		const char *name = s->name ? s->name : i == n - 1 && sym_name ? sym_name : "[unknown]";
		int has_line = (s->flags & SYMDB_FRAME_HAS_LINE) != 0;
		prof_frame f = { .name = prof_perf_intern(r, name, &rc),
		                 .file = has_line ? prof_perf_intern(r, s->file, &rc) : NULL,
		                 .line = has_line ? s->line : 0, .kind = (uint8_t)kind,
		                 .inlined = i + 1 < n, .module = mod };
		if (rc == 0)
			rc = add_frame(r, &f);
	}
	return rc;
}

/* Whether the file at path has build-id hex. */
static int has_build_id(const char *path, const char *hex)
{
	symdb_uuid id;
	char got[2 * SYMDB_UUID_MAX + 1];
	if (symdb_file_uuid(path, NULL, &id) < 0)
		return 0;
	symdb_uuid_format(&id, got);
	return strcasecmp(got, hex) == 0;
}

/* perf record keeps a copy of every file it sampled in its build-id cache,
 * DIR/.build-id/XX/REST/elf (XX REST: the build-id's hex), as perf report
 * reads it once the file was rebuilt or removed.  That copy, when it has
 * the build-id. */
static void find_cached(const struct perf_run *r, struct pmodule *m)
{
	char path[4096];
	size_t n = strlen(m->build_id);
	if (!r->o.buildid_dir[0] || n < 4 || strspn(m->build_id, "0123456789abcdefABCDEF") != n)
		return;
	if ((size_t)snprintf(path, sizeof path, "%s/.build-id/%.2s/%s/elf", r->o.buildid_dir,
	                     m->build_id, m->build_id + 2) < sizeof path &&
	    has_build_id(path, m->build_id))
		m->cached = strdup(path);
}

/* How a file's requests name it: by path, unless perf recorded a build-id
 * that the file at that path no longer has (it was rebuilt or replaced):
 * then by perf's copy of that build (find_cached), else by that build-id,
 * answered if the database holds it. */
static int by_hex(const struct perf_run *r, struct pmodule *m)
{
	if (!m->build_id || has_build_id(m->dso, m->build_id))
		return 0;
	find_cached(r, m);
	return m->cached == NULL;
}

/* The file a module's requests read: perf's copy, or the DSO's path. */
static const char *file_of(const struct pmodule *m)
{
	return m->cached ? m->cached : m->dso;
}

/*
 * perf names a function by the symbol table it reads, and it prefers a
 * separate debug file's full .symtab (found by build-id) to the binary's
 * .dynsym: static functions and the compiler's clones keep their symbol
 * names there ("gc_collect_main.lto_priv.0", "foo.isra.0", "foo.cold"),
 * where DWARF says "gc_collect_main".  symdb names the outermost frame
 * from the symbol table of the file it is asked about, so a file with a
 * debug file in the debug directory is asked about through that file (at
 * the virtual address the binary maps the offset to), as perf reads it.
 */
static void find_debug_file(struct perf_run *r, struct pmodule *m)
{
	symdb_uuid id;
	char hex[2 * SYMDB_UUID_MAX + 1], path[4096];
	if (symdb_file_uuid(file_of(m), NULL, &id) < 0 || id.kind != SYMDB_UUID_GNU_BUILD_ID ||
	    id.len < 2)
		return;
	symdb_uuid_format(&id, hex);
	snprintf(path, sizeof path, "%s/.build-id/%.2s/%s.debug", r->o.debug_dir, hex, hex + 2);
	if (access(path, R_OK) == 0)
		m->debug = strdup(path);
}

/* The request of a file's location: by path, the debug file's at a vaddr,
 * or by build-id. */
static void file_request(struct perf_run *r, const struct loc *l, int hex,
                         const symdb_image *img, symdb_request *q)
{
	const struct pmodule *m = &r->mod[l->mod];
	memset(q, 0, sizeof *q);
	q->image_ref = hex ? SYMDB_IMAGE_HEX : SYMDB_IMAGE_PATH;
	q->addr_kind = SYMDB_ADDR_FILEOFF;
	q->addr = l->addr;
	if (hex) {
		q->image.hex = m->build_id;
		return;
	}
	q->image.path = file_of(m);
	if (m->debug && img &&
	    symdb_image_translate(img, SYMDB_ADDR_FILEOFF, 0, &l->addr, &q->addr, 1) == 0) {
		q->image.path = m->debug;
		q->addr_kind = SYMDB_ADDR_VADDR;
	}
}

/* A module asked by build-id that the database lacks: fetched from
 * --upstream / --debuginfod and published before its requests, as `symdb
 * pprof` does (cli_fetch_id.c: a failure is one line with its reason; a
 * source that has no such image leaves the summary's "unknown image"). */
static void fetch_module(struct perf_run *r, const struct pmodule *m)
{
	symdb_uuid id;
	symdb_image *img;
	if (!r->fetch.fo || !r->db || symdb_uuid_parse(m->build_id, &id) != 0)
		return;
	if (symdb_image_open_uuid(r->db, &id, NULL, &img) == 0) {
		symdb_image_close(img);
		return;
	}
	cli_fetch_id(&r->fetch, &id);
}

static int symbolize_files(struct perf_run *r, uint32_t *todo, size_t n)
{
	symdb_request *req = calloc(SYM_BATCH, sizeof *req);
	symdb_symbolized *res = calloc(SYM_BATCH, sizeof *res);
	int *hex = calloc(r->nmod, sizeof *hex);
	const symdb_image **img = calloc(r->nmod, sizeof *img);
	struct prof_plt *plt = calloc(r->nmod, sizeof *plt);
	int rc = req && res && hex && img && plt ? 0 : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < r->nmod; i++) {
		struct pmodule *m = &r->mod[i];
		if (m->kind != MOD_FILE)
			continue;
		if ((hex[i] = by_hex(r, m)) != 0) {
			fetch_module(r, m);
			continue;
		}
		prof_plt_load(file_of(m), &plt[i]); /* none: no stub names */
		if (r->o.no_debug_names)
			continue;
		find_debug_file(r, m);
		/* The binary's image maps its offsets to vaddrs (a failure
		 * is answered by the path's own request below). */
		if (m->debug && symdb_symbolizer_image(r->sym, file_of(m), NULL, &img[i]) < 0)
			img[i] = NULL;
	}
	for (size_t at = 0; rc == 0 && at < n; at += SYM_BATCH) {
		size_t k = n - at < SYM_BATCH ? n - at : SYM_BATCH;
		for (size_t i = 0; i < k; i++) {
			const struct loc *l = &r->loc[todo[at + i]];
			file_request(r, l, hex[l->mod], img[l->mod], &req[i]);
		}
		char err[512] = "";
		SYMDB_OPTS(symdb_symbolize_opts, so, .flags = SYMDB_SYMBOLIZE_DEMANGLE, .errbuf = err,
		           .errbuf_sz = sizeof err);
		if ((rc = symdb_symbolize(r->sym, req, k, res, &so)) < 0) {
			cli_err_lib("perf", rc, err);
			break;
		}
		for (size_t i = 0; rc == 0 && i < k; i++) {
			struct loc *l = &r->loc[todo[at + i]];
			const symdb_symbolized *s = &res[i];
			const char *stub = s->vaddr != SYMDB_ADDR_INVALID
			                           ? prof_plt_name(&plt[l->mod], s->vaddr)
			                           : NULL;
			if (stub)
				rc = resolved(r, l, PROF_USER, NULL, 0, stub);
			else if (s->status == SYMDB_SYM_OK && (s->nframes || s->sym_name))
				rc = resolved(r, l, PROF_USER, s->frames, s->nframes, s->sym_name);
			else
				rc = unresolved(r, l);
			if (s->status != SYMDB_SYM_OK && s->status != SYMDB_SYM_NO_SYMBOL &&
			    s->status != SYMDB_SYM_OUT_OF_RANGE)
				r->mod[l->mod].unknown = 1;
		}
		r->done_locs += k;
		prof_perf_progress(r, "symbolized", r->done_locs, r->nloc);
	}
	free(req);
	free(res);
	free(hex);
	free(img);
	for (size_t i = 0; plt && i < r->nmod; i++)
		prof_plt_free(&plt[i]);
	free(plt);
	return rc;
}

/* The kernel's build-id as perf recorded it, and the running one's. */
static int kernel_matches(struct perf_run *r, symdb_kernel *k)
{
	const char *want = prof_perf_build_id(r, "[kernel.kallsyms]");
	SYMDB_OPTS(symdb_kernel_info, info);
	if (!want || symdb_kernel_get_info(k, &info) < 0 || !info.build_id.len)
		return 1;
	char hex[2 * SYMDB_UUID_MAX + 1];
	symdb_uuid_format(&info.build_id, hex);
	if (!strcasecmp(hex, want))
		return 1;
	cli_err("[kernel.kallsyms]", "recorded on kernel %s, this one is %s: kernel frames "
	        "left unsymbolized", want, hex);
	return 0;
}

static int symbolize_kernel(struct perf_run *r, uint32_t *todo, size_t n)
{
	char err[1024] = "";
	SYMDB_OPTS(symdb_kernel_opts, ko, .errbuf = err, .errbuf_sz = sizeof err);
	symdb_kernel *k = NULL;
	int rc = symdb_kernel_open(&ko, &k);
	if (rc < 0 || !kernel_matches(r, k)) {
		if (rc < 0)
			cli_err_lib("kernel", rc, err);
		r->mod[r->loc[todo[0]].mod].unknown = 1;
		for (size_t i = 0; i < n; i++)
			if ((rc = unresolved(r, &r->loc[todo[i]])) < 0)
				break;
		symdb_kernel_close(k);
		return rc < 0 && rc != -ENOMEM ? 0 : rc;
	}
	uint64_t *addr = malloc(SYM_BATCH * sizeof *addr);
	symdb_kernel_result *res = calloc(SYM_BATCH, sizeof *res);
	rc = addr && res ? 0 : -ENOMEM;
	for (size_t at = 0; rc == 0 && at < n; at += SYM_BATCH) {
		size_t m = n - at < SYM_BATCH ? n - at : SYM_BATCH;
		for (size_t i = 0; i < m; i++)
			addr[i] = r->loc[todo[at + i]].addr;
		SYMDB_OPTS(symdb_symbolize_opts, so, .flags = SYMDB_SYMBOLIZE_DEMANGLE, .errbuf = err,
		           .errbuf_sz = sizeof err);
		if ((rc = symdb_kernel_symbolize(k, r->sym, addr, m, res, sizeof *res, &so)) < 0) {
			cli_err_lib("kernel", rc, err);
			break;
		}
		for (size_t i = 0; rc == 0 && i < m; i++) {
			struct loc *l = &r->loc[todo[at + i]];
			if (res[i].status == SYMDB_SYM_OK)
				rc = resolved(r, l, PROF_KERNEL, res[i].frames, res[i].nframes,
				              res[i].sym_name);
			else
				rc = unresolved(r, l);
		}
		r->done_locs += m;
		prof_perf_progress(r, "symbolized", r->done_locs, r->nloc);
	}
	free(addr);
	free(res);
	symdb_kernel_close(k);
	return rc;
}

/* vDSO offsets, answered from this process's vDSO: the same kernel maps
 * the same vDSO into every process (checked by build-id when perf gave it). */
static int symbolize_vdso(struct perf_run *r, uint32_t *todo, size_t n)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	symdb_proc_cache *c = NULL;
	uint64_t *addr = malloc(n * sizeof *addr);
	symdb_proc_addr *where = calloc(n, sizeof *where);
	symdb_symbolized *res = calloc(n, sizeof *res);
	int rc = addr && where && res ? 0 : -ENOMEM;
	if (rc == 0 && base)
		rc = symdb_proc_cache_create(r->sym, NULL, &c);
	for (size_t i = 0; i < n; i++)
		addr[i] = base + r->loc[todo[i]].addr;
	SYMDB_OPTS(symdb_proc_call_opts, po, .flags = SYMDB_SYMBOLIZE_DEMANGLE);
	int ok = rc == 0 && c && symdb_proc_symbolize(c, (int)getpid(), addr, n, where, res, &po) == 0;
	const char *want = prof_perf_build_id(r, "[vdso]");
	for (size_t i = 0; rc != -ENOMEM && i < n; i++) {
		struct loc *l = &r->loc[todo[i]];
		char hex[2 * SYMDB_UUID_MAX + 1] = "";
		if (ok && where[i].id.len)
			symdb_uuid_format(&where[i].id, hex);
		if (ok && res[i].status == SYMDB_SYM_OK && (!want || !strcasecmp(want, hex)))
			rc = resolved(r, l, PROF_USER, res[i].frames, res[i].nframes, res[i].sym_name);
		else
			rc = unresolved(r, l);
	}
	symdb_proc_cache_free(c);
	free(addr);
	free(where);
	free(res);
	return rc == -ENOMEM ? rc : 0;
}

/* JIT code: the perf map the DSO names, or the process's
 * DIR/perf-PID.map for anonymous code. */
static int symbolize_jit(struct perf_run *r, uint32_t *todo, size_t n)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct loc *l = &r->loc[todo[i]];
		struct pmodule *m = &r->mod[l->mod];
		if (!m->map && !m->map_path) {
			char p[4096];
			if (prof_perf_is_jit_file(m->dso))
				snprintf(p, sizeof p, "%s", m->dso);
			else
				snprintf(p, sizeof p, "%s/perf-%ld.map", r->o.map_dir, m->pid);
			m->map_path = strdup(p);
			if (!m->map_path)
				return -ENOMEM;
			char err[512] = "";
			SYMDB_OPTS(symdb_perfmap_opts, mo, .errbuf = err, .errbuf_sz = sizeof err);
			if (symdb_perfmap_open(m->map_path, &mo, &m->map) < 0)
				m->map = NULL;
		}
		SYMDB_OPTS(symdb_perfmap_sym, s);
		if (m->map && symdb_perfmap_lookup(m->map, l->addr, &s) == 0) {
			rc = resolved(r, l, PROF_JIT, NULL, 0, s.name);
			r->frames[l->first].module = prof_perf_intern(r, prof_perf_base_name(m->map_path), &rc);
		} else {
			rc = unresolved(r, l);
		}
	}
	return rc;
}

static int symbolize_kind(struct perf_run *r, int kind, uint32_t *todo)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nloc; i++)
		if (r->mod[r->loc[i].mod].kind == kind)
			todo[n++] = (uint32_t)i;
	if (!n)
		return 0;
	switch (kind) {
	case MOD_FILE:
		return symbolize_files(r, todo, n);
	case MOD_KERNEL:
		return symbolize_kernel(r, todo, n);
	case MOD_VDSO:
		return symbolize_vdso(r, todo, n);
	case MOD_JIT:
		return symbolize_jit(r, todo, n);
	default:
		for (size_t i = 0; i < n; i++)
			if (unresolved(r, &r->loc[todo[i]]) < 0)
				return -ENOMEM;
		return 0;
	}
}

int prof_perf_symbolize(struct perf_run *r)
{
	for (size_t i = 0; i < r->nmod; i++)
		if ((r->mod[i].kind == MOD_VDSO || r->mod[i].kind == MOD_KERNEL) ||
		    (r->mod[i].kind == MOD_FILE && !r->mod[i].build_id))
			r->mod[i].build_id = prof_perf_build_id(r, r->mod[i].dso);
	uint32_t *todo = malloc((r->nloc ? r->nloc : 1) * sizeof *todo);
	if (!todo)
		return -ENOMEM;
	static const int kinds[] = { MOD_FILE, MOD_KERNEL, MOD_VDSO, MOD_JIT, MOD_NONE };
	int rc = 0;
	for (size_t k = 0; rc == 0 && k < sizeof kinds / sizeof kinds[0]; k++)
		rc = symbolize_kind(r, kinds[k], todo);
	free(todo);
	return rc;
}

