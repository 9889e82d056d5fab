/* SPDX-License-Identifier: MIT */
/*
 * live_proc.c - symdb_proc_*: runtime addresses of live processes.
 *
 * A call finds the process's mapping table (cached by pid and start time),
 * places each address in a mapping, finds that mapping's module on first
 * use (live_proc_module.c), normalises the address into it, and, when the
 * caller wants symbols, hands the whole batch to symdb_symbolize() as
 * image-handle requests, so grouping, sorting and demangling are the
 * context's.  Every call reads /proc/PID/maps again: a process maps and
 * unmaps between calls, and may map another file where one was
 * (dlclose + dlopen at the same address, execve, which keeps the pid and
 * its start time); an unchanged file is one read and one compare, and
 * modules of mappings that survive a change are kept.  A process found
 * gone answers from the table it had: what it had mapped and we had
 * opened still resolves, the rest is SYMDB_PROC_GONE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format_header.h"
#include "live_proc_internal.h"

#define RD_OPTS_LAST_symdb_proc_opts jit_arg
#define RD_OPTS_LAST_symdb_proc_call_opts frame_sz

int symdb_proc_cache_create(symdb_symbolizer *s, const symdb_proc_opts *opts,
                            symdb_proc_cache **out)
{
	symdb_proc_opts o = { 0 };
	unsigned flags;
	char *eb;
	size_t ebsz;
	if (!out)
		return SYMDB_E_INVAL;
	*out = NULL;
	int rc = rd_opts_prefix(opts, RD_OPTS_END(symdb_proc_opts), 0, &flags, &eb, &ebsz);
	if (rc < 0)
		return rc;
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof o ? opts->sz : sizeof o);
	if (!s)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "no symbolizer context");
	struct symdb_proc_cache *c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	c->sym = s;
	c->proc_dir = strdup(o.proc_dir ? o.proc_dir : "/proc");
	c->tmp_dir = strdup(o.tmp_dir ? o.tmp_dir : "/tmp");
	c->jit_lookup = o.jit_lookup;
	c->jit_arg = o.jit_arg;
	if (!c->proc_dir || !c->tmp_dir) {
		symdb_proc_cache_free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void symdb_proc_cache_free(symdb_proc_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ntables; i++)
		lp_table_free(&c->tables[i]);
	free(c->tables);
	for (size_t i = 0; i < c->nmods; i++)
		free(c->mods[i]);
	free(c->mods);
	lp_table_free(&c->scratch);
	free(c->maps_buf);
	free(c->req);
	free(c->vdso_buf);
	free(c->proc_dir);
	free(c->tmp_dir);
	free(c);
}

static struct lp_table *table_of(symdb_proc_cache *c, int pid)
{
	for (size_t i = 0; i < c->ntables; i++)
		if (c->tables[i].pid == pid)
			return &c->tables[i];
	return NULL;
}

int symdb_proc_forget(symdb_proc_cache *c, int pid)
{
	if (!c)
		return SYMDB_E_INVAL;
	struct lp_table *t = table_of(c, pid);
	if (!t)
		return SYMDB_E_NOT_FOUND;
	lp_table_free(t);
	*t = c->tables[--c->ntables];
	return 0;
}

static struct lp_table *table_new(symdb_proc_cache *c, int pid)
{
	struct lp_table *nt = realloc(c->tables, (c->ntables + 1) * sizeof *nt);
	if (!nt)
		return NULL;
	c->tables = nt;
	nt = &c->tables[c->ntables++];
	memset(nt, 0, sizeof *nt);
	nt->pid = pid;
	return nt;
}

/* Read /proc/PID/maps again and, when its text is not the one t was
 * parsed from, parse it, keeping the modules of mappings that are still
 * there (same range, offset, device and inode).  An unchanged file costs
 * one read and one compare, and allocates nothing once the buffers have
 * grown.  0, or -errno (-ESRCH: the process is gone) with t unchanged. */
static int table_reread(symdb_proc_cache *c, struct lp_table *t, char *eb, size_t ebsz)
{
	int rc = lp_read_maps(c->proc_dir, t->pid, &c->maps_buf, &c->maps_cap, &c->maps_len, eb,
	                      ebsz);
	if (rc < 0)
		return rc;
	if (t->raw && t->raw_len == c->maps_len && memcmp(t->raw, c->maps_buf, c->maps_len) == 0)
		return 0;
	struct lp_table old = *t;
	struct lp_table fresh = { .pid = t->pid, .start_time = t->start_time };
	if ((rc = lp_parse_maps(&fresh, c->maps_buf, c->maps_len)) < 0) {
		lp_table_free(&fresh);
		return fmt_err(eb, ebsz, rc, "%s/%d/maps: %s", c->proc_dir, t->pid,
		               symdb_strerror(rc));
	}
	for (size_t i = 0; i < fresh.nmap; i++) {
		struct lp_map *n = &fresh.map[i], *o = lp_table_find(&old, n->start);
		if (o && o->start == n->start && o->end == n->end && o->pgoff == n->pgoff &&
		    o->ino == n->ino && o->dev == n->dev && o->mod_state > 0) {
			n->mod = o->mod;
			n->mod_state = o->mod_state;
		}
	}
	/* The text goes with the table; the table's old text is the next
	 * read's buffer. */
	fresh.raw = c->maps_buf;
	fresh.raw_len = c->maps_len;
	fresh.raw_cap = c->maps_cap;
	c->maps_buf = old.raw;
	c->maps_cap = old.raw_cap;
	c->maps_len = 0;
	old.raw = NULL;
	lp_table_free(&old);
	*t = fresh;
	return 0;
}

static int is_anon(const char *path)
{
	return !path || !path[0] || (path[0] == '[' && strcmp(path, "[vdso]") != 0);
}

/* Where addr lies in mapping m of table t. */
static void place(symdb_proc_cache *c, int pid, struct lp_table *t, struct lp_map *m,
                  uint64_t addr, symdb_proc_addr *w)
{
	const char *path = lp_map_path(t, m);
	w->module = path;
	w->map_start = m->start;
	w->file_offset = addr - m->start + m->pgoff;
	if (!is_anon(path) && m->mod_state == 0)
		lp_module_find(c, pid, t, m);
	if (!is_anon(path) && m->mod_state > 0) {
		w->id = m->mod->id;
		lp_normalise(t, m, addr, &w->file_offset, &w->vaddr);
		w->status = m->mod->status;
		w->error = m->mod->error;
		w->image = m->mod->img;
		if (w->status == SYMDB_PROC_OK && w->vaddr == SYMDB_ADDR_INVALID) {
			w->status = SYMDB_PROC_NO_SEGMENT; /* never resolved as 2^64-1 */
			w->image = NULL;
			return;
		}
		if (w->status == SYMDB_PROC_OK || !(m->prot & SYMDB_MAP_EXEC) ||
		    w->error != SYMDB_E_BAD_OBJECT)
			return;
	} else if (!is_anon(path)) {
		w->status = -m->mod_state;
		w->error = m->mod_error;
		return;
	}
	/* Anonymous code, or executable memory that is no object file (a
	 * JIT's memfd): only a JIT map can name it. */
	w->status = SYMDB_PROC_ANON;
	if ((m->prot & SYMDB_MAP_EXEC) && c->jit_lookup) {
		int rc = c->jit_lookup(c->jit_arg, pid, addr, &w->jit);
		if (rc > 0)
			w->status = SYMDB_PROC_JIT;
		else if (rc < 0)
			w->error = rc;
	}
}

/* Fill where[0..n) from table t (gone: the process exited, and t is what
 * it had mapped). */
static void answer(symdb_proc_cache *c, int pid, struct lp_table *t, int gone,
                   const uint64_t *addrs, size_t n, unsigned char *where, size_t where_sz)
{
	for (size_t i = 0; i < n; i++) {
		symdb_proc_addr w = { .vaddr = SYMDB_ADDR_INVALID, .file_offset = 0 };
		struct lp_map *m = lp_table_find(t, addrs[i]);
		if (m) {
			place(c, pid, t, m, addrs[i], &w);
		} else if (gone) {
			w.status = SYMDB_PROC_GONE;
			w.error = -ESRCH;
		} else {
			w.status = SYMDB_PROC_NO_MAPPING;
		}
		memcpy(where + i * where_sz, &w, where_sz < sizeof w ? where_sz : sizeof w);
	}
}

/* Symbolize the placed addresses in one symdb_symbolize() call. */
static int symbolize(symdb_proc_cache *c, const uint64_t *addrs, size_t n,
                     const unsigned char *where, size_t where_sz, symdb_symbolized *results,
                     const symdb_proc_call_opts *o)
{
	if (n > c->req_cap) {
		size_t nc = c->req_cap ? c->req_cap : 256;
		while (nc < n)
			nc *= 2;
		symdb_request *nr = realloc(c->req, nc * sizeof *nr);
		if (!nr)
			return -ENOMEM;
		c->req = nr;
		c->req_cap = nc;
	}
	for (size_t i = 0; i < n; i++) {
		symdb_proc_addr w = { 0 };
		memcpy(&w, where + i * where_sz, where_sz < sizeof w ? where_sz : sizeof w);
		int ok = w.status == SYMDB_PROC_OK && w.image;
		c->req[i] = (symdb_request){ .image_ref = SYMDB_IMAGE_HANDLE,
			                     .addr_kind = SYMDB_ADDR_VADDR,
			                     .image.handle = ok ? w.image : NULL,
			                     .addr = ok ? w.vaddr : 0 };
		(void)addrs;
	}
	SYMDB_OPTS(symdb_symbolize_opts, so, .flags = o->flags & SYMDB_SYMBOLIZE_DEMANGLE,
	           .errbuf = o->errbuf, .errbuf_sz = o->errbuf_sz, .result_sz = o->result_sz,
	           .frame_sz = o->frame_sz);
	return symdb_symbolize(c->sym, c->req, n, results, &so);
}

/* The call's options in a full struct; 0 or SYMDB_E_INVAL. */
static int call_opts(const symdb_proc_call_opts *in, symdb_proc_call_opts *o)
{
	unsigned flags;
	char *eb;
	size_t ebsz;
	memset(o, 0, sizeof *o);
	int rc = rd_opts_prefix(in, RD_OPTS_END(symdb_proc_call_opts), SYMDB_SYMBOLIZE_DEMANGLE,
	                        &flags, &eb, &ebsz);
	if (in)
		memcpy(o, in, in->sz < sizeof *o ? in->sz : sizeof *o);
	o->sz = sizeof *o;
	o->flags = flags;
	o->errbuf = eb;
	o->errbuf_sz = ebsz;
	if (!o->where_sz)
		o->where_sz = sizeof(symdb_proc_addr);
	if (rc == 0 && o->where_sz < offsetof(symdb_proc_addr, error) + sizeof(int))
		rc = fmt_err(eb, ebsz, SYMDB_E_INVAL, "where_sz %zu too small", o->where_sz);
	return rc;
}

static int check_args(symdb_proc_cache *c, const uint64_t *addrs, size_t n, const void *where,
                      const symdb_proc_call_opts *o)
{
	if (!c || (n && (!addrs || !where)) || n > UINT32_MAX)
		return fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_INVAL, "bad arguments");
	return 0;
}

int symdb_proc_symbolize(symdb_proc_cache *c, int pid, const uint64_t *addrs, size_t n,
                         symdb_proc_addr *where, symdb_symbolized *results,
                         const symdb_proc_call_opts *opts)
{
	symdb_proc_call_opts o;
	int rc = call_opts(opts, &o);
	if (rc == 0)
		rc = check_args(c, addrs, n, where, &o);
	if (rc == 0 && pid <= 0)
		rc = fmt_err(o.errbuf, o.errbuf_sz, SYMDB_E_INVAL, "pid %d: not a process id", pid);
	if (rc < 0)
		return rc;
	uint64_t st;
	struct lp_table *t = table_of(c, pid);
	int alive = (rc = lp_read_start_time(c->proc_dir, pid, &st)) == 0;
	if (!alive && (!t || rc != -ESRCH))
		return fmt_err(o.errbuf, o.errbuf_sz, rc, "%s/%d: %s", c->proc_dir, pid,
		               rc == -ESRCH ? "no such process" : symdb_strerror(rc));
	if (alive && (!t || t->start_time != st)) {
		/* New, or its pid was reused: its predecessor's table is void. */
		if (!t && !(t = table_new(c, pid)))
			return -ENOMEM;
		t->start_time = st;
		for (size_t i = 0; i < t->nmap; i++)
			t->map[i].mod_state = 0, t->map[i].mod = NULL;
		free(t->raw); /* never its text again */
		t->raw = NULL;
		t->raw_len = t->raw_cap = 0;
		if ((rc = table_reread(c, t, o.errbuf, o.errbuf_sz)) < 0) {
			symdb_proc_forget(c, pid);
			return rc;
		}
	} else if (alive && table_reread(c, t, NULL, 0) == -ESRCH) {
		alive = 0; /* exited (or a zombie now): answer from what it had */
	} /* another failure to read it: the table it had answers */
	answer(c, pid, t, !alive, addrs, n, (unsigned char *)where, o.where_sz);
	return results ? symbolize(c, addrs, n, (unsigned char *)where, o.where_sz, results, &o)
	               : 0;
}

int symdb_proc_symbolize_maps(symdb_proc_cache *c, int pid, const symdb_mapping *maps,
                              size_t nmaps, const uint64_t *addrs, size_t n,
                              symdb_proc_addr *where, symdb_symbolized *results,
                              const symdb_proc_call_opts *opts)
{
	symdb_proc_call_opts o;
	int rc = call_opts(opts, &o);
	if (rc == 0)
		rc = check_args(c, addrs, n, where, &o);
	if (rc == 0 && nmaps && !maps)
		rc = fmt_err(o.errbuf, o.errbuf_sz, SYMDB_E_INVAL, "no mappings");
	if (rc < 0)
		return rc;
	struct lp_table *t = &c->scratch;
	lp_table_clear(t);
	t->pid = pid;
	t->start_time = 0;
	if (pid > 0 && lp_read_start_time(c->proc_dir, pid, &t->start_time) < 0)
		pid = -pid; /* gone: files by path, no vDSO */
	for (size_t i = 0; i < nmaps; i++) {
		const symdb_mapping *m = &maps[i];
		if (m->end <= m->start)
			return fmt_err(o.errbuf, o.errbuf_sz, SYMDB_E_INVAL,
			               "mapping %zu: end 0x%llx not above start 0x%llx", i,
			               (unsigned long long)m->end, (unsigned long long)m->start);
		if ((rc = lp_table_add(t, m->start, m->end, m->file_offset, 0, 0, m->prot, m->path,
		                       m->path ? strlen(m->path) : 0)) < 0)
			return rc;
		t->map[t->nmap - 1].want_id = m->build_id;
	}
	lp_table_sort(t);
	answer(c, pid > 0 ? pid : 0, t, 0, addrs, n, (unsigned char *)where, o.where_sz);
	return results ? symbolize(c, addrs, n, (unsigned char *)where, o.where_sz, results, &o)
	               : 0;
}
