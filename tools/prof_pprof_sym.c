/* SPDX-License-Identifier: MIT */
/*
 * prof_pprof_sym.c - symbolize a pprof profile in place, as pprof's own
 * local symbolizer does with llvm-symbolizer (--inlining, names not
 * demangled), but with every distinct address resolved once by one
 * symdb_symbolize() batch.
 *
 * Each mapping is tied to one image: its build-id in the database, else
 * its file (by the file's own build-id; indexed on first sight), never a
 * file whose build-id is not the mapping's.  A location's address is a
 * runtime address inside the mapping, so memory_start and file_offset turn
 * it into a file offset, which the image maps to a virtual address through
 * its segments: the same vaddr pprof hands llvm-symbolizer.  A location
 * gets one Line per frame, innermost first (profile.proto: "the last entry
 * represents the caller into which the preceding entries were inlined");
 * Functions are shared by (name, system_name, filename, start_line) with
 * those the profile already has; strings are interned into its table.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "prof_pprof.h"

/* An open-addressing set of indices (into the string table or the function
 * array), keyed by content through the callbacks of its user. */
struct iset {
	uint32_t *slot; /* index + 1; 0 = empty */
	size_t cap, n;
};

struct sym_ctx {
	prof_pprof *p;
	symdb *db;
	symdb_symbolizer *s;
	prof_pprof_stats *st;
	prof_pprof_hooks hooks;
	/* the growing string table and function array (pb points at them) */
	size_t scap, fcap;
	struct iset strs, funcs;
	uint64_t next_fid;
	uint32_t *demangled; /* per string index: the index of its demangled form + 1 */
	size_t ndemangled;
	char *dbuf;          /* symdb_demangle()'s buffer */
	size_t dcap;
	/* per mapping */
	const symdb_image **img;
	uint8_t *tried;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

static int iset_grow(struct iset *t, uint64_t (*hash)(const struct sym_ctx *, uint32_t),
                     const struct sym_ctx *c)
{
	size_t cap = t->cap ? 2 * t->cap : 1024;
	uint32_t *slot = calloc(cap, sizeof *slot);
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i]) {
			size_t k = hash(c, t->slot[i] - 1) & (cap - 1);
			while (slot[k])
				k = (k + 1) & (cap - 1);
			slot[k] = t->slot[i];
		}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

/* ---- strings ---------------------------------------------------------------- */

static uint64_t str_hash(const struct sym_ctx *c, uint32_t i)
{
	return hash_str(c->p->pb->string_table[i]);
}

/* The index of s in the string table, or -1 with *k the free slot for it
 * (the set has room for one more). */
static int64_t find_str(struct sym_ctx *c, const char *s, size_t *k)
{
	char **st = c->p->pb->string_table;
	if (4 * (c->strs.n + 1) > 3 * c->strs.cap && iset_grow(&c->strs, str_hash, c) < 0)
		return -ENOMEM;
	size_t i = hash_str(s) & (c->strs.cap - 1);
	for (; c->strs.slot[i]; i = (i + 1) & (c->strs.cap - 1))
		if (!strcmp(st[c->strs.slot[i] - 1], s))
			return c->strs.slot[i] - 1;
	*k = i;
	return -1;
}

/* The index of s in the string table, appended when new; s must outlive
 * the profile (a name in an image's mapping, or a copy in the arena).
 * intern_copy() is for a string that may not: one from a symdb_symbolize()
 * result, which may live in the context's buffers until its next call. */
static int64_t intern_str(struct sym_ctx *c, const char *s)
{
	Perftools__Profiles__Profile *pb = c->p->pb;
	size_t k;
	int64_t r = find_str(c, s, &k);
	if (r != -1)
		return r;
	if (pb->n_string_table == c->scap) {
		size_t cap = 2 * c->scap;
		char **nt = cap < UINT32_MAX ? realloc(pb->string_table, cap * sizeof *nt) : NULL;
		if (!nt)
			return -ENOMEM;
		pb->string_table = nt;
		c->scap = cap;
	}
	pb->string_table[pb->n_string_table] = (char *)s;
	c->strs.slot[k] = (uint32_t)++pb->n_string_table;
	c->strs.n++;
	return (int64_t)pb->n_string_table - 1;
}

static int64_t intern_copy(struct sym_ctx *c, const char *s)
{
	size_t k;
	int64_t r = find_str(c, s, &k);
	if (r != -1)
		return r;
	size_t len = strlen(s) + 1;
	char *copy = prof_arena_alloc(&c->p->arena, len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	return intern_str(c, copy);
}

/* Function.name for a linkage name (string index sys), once per name: what
 * pprof's own symbolization stores, the short demangled form of a C++
 * name (prof_pprof_name.c); the linkage name itself for anything else or
 * a form not understood, which pprof demangles when it reads the profile
 * (it demangles any Function whose name equals its system_name, and
 * demangles only "_Z" names). */
static int64_t demangled_name(struct sym_ctx *c, int64_t sys)
{
	if ((size_t)sys >= c->ndemangled) {
		size_t n = (size_t)sys * 2 + 1024;
		uint32_t *d = realloc(c->demangled, n * sizeof *d);
		if (!d)
			return -ENOMEM;
		memset(d + c->ndemangled, 0, (n - c->ndemangled) * sizeof *d);
		c->demangled = d;
		c->ndemangled = n;
	}
	if (c->demangled[sys])
		return c->demangled[sys] - 1;
	int64_t r = sys;
	const char *raw = c->p->pb->string_table[sys];
	int dm = strncmp(raw, "_Z", 2) ? 0 : symdb_demangle(raw, &c->dbuf, &c->dcap);
	if (dm < 0)
		return dm;
	char *copy = dm == 1 ? prof_arena_alloc(&c->p->arena, strlen(c->dbuf) + 1) : NULL;
	if (dm == 1 && !copy)
		return -ENOMEM;
	if (copy && prof_pprof_short_name(c->dbuf, copy) == 0 && (r = intern_str(c, copy)) < 0)
		return r;
	c->demangled[sys] = (uint32_t)r + 1;
	return r;
}

/* ---- functions -------------------------------------------------------------- */

static uint64_t fn_key_hash(int64_t name, int64_t sys, int64_t file, int64_t start)
{
	uint64_t h = (uint64_t)name * 0x9e3779b97f4a7c15u;
	h = (h ^ (uint64_t)sys) * 0xff51afd7ed558ccdu;
	h = (h ^ (uint64_t)file) * 0xc4ceb9fe1a85ec53u;
	return (h ^ (uint64_t)start) * 0x9e3779b97f4a7c15u;
}

static uint64_t fn_hash(const struct sym_ctx *c, uint32_t i)
{
	const Perftools__Profiles__Function *f = c->p->pb->function[i];
	return fn_key_hash(f->name, f->system_name, f->filename, f->start_line);
}

/* The index of the Function (name, sys, file, start) in the function
 * array, or -1 with *k the free slot for it. */
static int64_t find_fn(struct sym_ctx *c, int64_t name, int64_t sys, int64_t file, int64_t start,
                       size_t *k)
{
	Perftools__Profiles__Function **fa = c->p->pb->function;
	if (4 * (c->funcs.n + 1) > 3 * c->funcs.cap && iset_grow(&c->funcs, fn_hash, c) < 0)
		return -ENOMEM;
	size_t i = fn_key_hash(name, sys, file, start) & (c->funcs.cap - 1);
	for (; c->funcs.slot[i]; i = (i + 1) & (c->funcs.cap - 1)) {
		const Perftools__Profiles__Function *f = fa[c->funcs.slot[i] - 1];
		if (f->name == name && f->system_name == sys && f->filename == file &&
		    f->start_line == start)
			return c->funcs.slot[i] - 1;
	}
	*k = i;
	return -1;
}

/* The id of the Function (name, sys, file, start), made when new. */
static int64_t intern_fn(struct sym_ctx *c, int64_t name, int64_t sys, int64_t file,
                         int64_t start)
{
	Perftools__Profiles__Profile *pb = c->p->pb;
	size_t k;
	int64_t r = find_fn(c, name, sys, file, start, &k);
	if (r != -1)
		return r < 0 ? r : (int64_t)pb->function[r]->id;
	if (pb->n_function == c->fcap) {
		size_t cap = 2 * c->fcap;
		Perftools__Profiles__Function **nf =
			cap < UINT32_MAX ? realloc(pb->function, cap * sizeof *nf) : NULL;
		if (!nf)
			return -ENOMEM;
		pb->function = nf;
		c->fcap = cap;
	}
	static const Perftools__Profiles__Function init = PERFTOOLS__PROFILES__FUNCTION__INIT;
	Perftools__Profiles__Function *f = prof_arena_alloc(&c->p->arena, sizeof *f);
	if (!f)
		return -ENOMEM;
	*f = init;
	f->id = c->next_fid++;
	f->name = name;
	f->system_name = sys;
	f->filename = file;
	f->start_line = start;
	pb->function[pb->n_function] = f;
	c->funcs.slot[k] = (uint32_t)++pb->n_function;
	c->funcs.n++;
	return (int64_t)f->id;
}

/* Our own copies of the string table and the function array, indexed as
 * they are, so that new entries can be appended (restore_unpacked() in
 * prof_pprof.c puts the originals back). */
static int own_tables(struct sym_ctx *c)
{
	prof_pprof *p = c->p;
	Perftools__Profiles__Profile *pb = p->pb;
	c->scap = pb->n_string_table * 2 + 1024;
	c->fcap = pb->n_function * 2 + 1024;
	char **st = malloc(c->scap * sizeof *st);
	Perftools__Profiles__Function **fn = malloc(c->fcap * sizeof *fn);
	p->saved = calloc(pb->n_location ? pb->n_location : 1, sizeof *p->saved);
	if (!st || !fn || !p->saved) {
		free(st);
		free(fn);
		return -ENOMEM;
	}
	memcpy(st, pb->string_table, pb->n_string_table * sizeof *st);
	if (pb->n_function) /* an unsymbolized profile has none: no memcpy from NULL */
		memcpy(fn, pb->function, pb->n_function * sizeof *fn);
	p->orig_strings = pb->string_table;
	p->orig_nstrings = pb->n_string_table;
	p->orig_funcs = pb->function;
	p->orig_nfuncs = pb->n_function;
	pb->string_table = st;
	pb->function = fn;
	p->replaced = 1;
	/* The profile's own strings and functions are found like new ones
	 * (the first of equal ones). */
	size_t k;
	for (size_t i = 0; i < pb->n_string_table; i++) {
		int64_t r = find_str(c, st[i], &k);
		if (r == -ENOMEM)
			return -ENOMEM;
		if (r == -1) {
			c->strs.slot[k] = (uint32_t)i + 1;
			c->strs.n++;
		}
	}
	c->next_fid = 1;
	for (size_t i = 0; i < pb->n_function; i++) {
		const Perftools__Profiles__Function *f = fn[i];
		if (f->id >= c->next_fid)
			c->next_fid = f->id + 1;
		int64_t r = find_fn(c, f->name, f->system_name, f->filename, f->start_line, &k);
		if (r == -ENOMEM)
			return -ENOMEM;
		if (r == -1) {
			c->funcs.slot[k] = (uint32_t)i + 1;
			c->funcs.n++;
		}
	}
	return 0;
}

/* ---- images ----------------------------------------------------------------- */

static int keep_image(prof_pprof *p, symdb_image *img)
{
	symdb_image **v = realloc(p->images, (p->nimages + 1) * sizeof *v);
	if (!v) {
		symdb_image_close(img);
		return -ENOMEM;
	}
	p->images = v;
	p->images[p->nimages++] = img;
	return 0;
}

static int is_regular(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The image a mapping's addresses are resolved in, or NULL.  The file
 * first, if its own build-id is the mapping's (or the mapping has none):
 * the image is then opened as that file reads, names from its own symbol
 * table as llvm-symbolizer gives them, and indexed on first sight.  Else
 * the build-id in the database: the file may be gone, or be another build.
 * Mappings with no file to read ("[vdso]", "[kernel.kallsyms]", anonymous
 * ones) and no indexed build-id stay as they are. */
static const symdb_image *find_image(struct sym_ctx *c, const Perftools__Profiles__Mapping *m)
{
	char **st = c->p->pb->string_table;
	const char *file = st[m->filename], *bid = st[m->build_id];
	symdb_uuid id;
	int have_id = bid[0] && symdb_uuid_parse(bid, &id) == 0;
	const symdb_image *img;
	if (file[0] && file[0] != '[' && is_regular(file) &&
	    symdb_symbolizer_image(c->s, file, NULL, &img) == 0) {
		SYMDB_OPTS(symdb_image_info, info);
		if (!have_id || (symdb_image_get_info(img, &info) == 0 && info.uuid.len == id.len &&
		                 !memcmp(info.uuid.bytes, id.bytes, id.len)))
			return img;
	}
	symdb_image *own;
	if (!have_id || !c->db)
		return NULL;
	if (symdb_image_open_uuid(c->db, &id, NULL, &own) != 0 &&
	    (!c->hooks.fetch || c->hooks.fetch(c->hooks.arg, &id) != 0 ||
	     symdb_image_open_uuid(c->db, &id, NULL, &own) != 0))
		return NULL;
	return keep_image(c->p, own) == 0 ? own : NULL;
}

static void note_unknown(struct sym_ctx *c, const Perftools__Profiles__Mapping *m)
{
	prof_pprof_stats *st = c->st;
	char **s = c->p->pb->string_table;
	const char *name = s[m->filename][0] ? s[m->filename] : s[m->build_id];
	const char *slash = strrchr(name, '/');
	size_t used = strlen(st->unknown_names);
	if (st->unknown_images++ < 4)
		snprintf(st->unknown_names + used, sizeof st->unknown_names - used, "%s%s",
		         used ? ", " : "", name[0] ? (slash ? slash + 1 : name) : "(no file)");
	else if (st->unknown_images == 5 && used + 5 < sizeof st->unknown_names)
		strcat(st->unknown_names, ", ...");
}

static const symdb_image *mapping_image(struct sym_ctx *c, size_t mi)
{
	if (!c->tried[mi]) {
		c->tried[mi] = 1;
		c->img[mi] = find_image(c, c->p->pb->mapping[mi]);
		if (!c->img[mi])
			note_unknown(c, c->p->pb->mapping[mi]);
	}
	return c->img[mi];
}

/* ---- the batch -------------------------------------------------------------- */

/* One location to symbolize; equal (map, addr) pairs share one request. */
struct sym_key {
	size_t map, loc;
	uint64_t addr;
};

static int key_cmp(const void *a, const void *b)
{
	const struct sym_key *x = a, *y = b;
	if (x->map != y->map)
		return x->map < y->map ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->loc < y->loc ? -1 : x->loc > y->loc;
}

/* The locations to symbolize, sorted by (mapping, address). */
static int collect_keys(struct sym_ctx *c, int force, struct sym_key **out, size_t *n)
{
	const Perftools__Profiles__Profile *pb = c->p->pb;
	struct sym_key *k = malloc((pb->n_location ? pb->n_location : 1) * sizeof *k);
	if (!k)
		return -ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < pb->n_location; i++) {
		const Perftools__Profiles__Location *l = pb->location[i];
		if ((l->n_line && !force) || !l->mapping_id)
			continue;
		size_t mi = prof_id_find(&c->p->maps, l->mapping_id);
		if (mapping_image(c, mi))
			k[m++] = (struct sym_key){ .map = mi, .loc = i, .addr = l->address };
	}
	qsort(k, m, sizeof *k, key_cmp);
	*out = k;
	*n = m;
	return 0;
}

/* The request for a location's address: a file offset through the
 * mapping, or the address itself when the mapping has no placement
 * (start, limit and offset 0: pprof then takes addresses as the object's
 * own, like a profile of a non-PIE binary without mappings). */
static symdb_request key_request(const struct sym_ctx *c, const struct sym_key *k)
{
	const Perftools__Profiles__Mapping *m = c->p->pb->mapping[k->map];
	symdb_request r = { .image_ref = SYMDB_IMAGE_HANDLE, .image.handle = c->img[k->map] };
	if (!m->memory_start && !m->memory_limit && !m->file_offset) {
		r.addr_kind = SYMDB_ADDR_VADDR;
		r.addr = k->addr;
	} else {
		r.addr_kind = SYMDB_ADDR_FILEOFF;
		r.addr = k->addr >= m->memory_start ? k->addr - m->memory_start + m->file_offset
		                                    : SYMDB_ADDR_INVALID;
	}
	return r;
}

/* The Line of one frame; the mapping's has_* flags it justifies. */
static int frame_line(struct sym_ctx *c, const char *name, const char *file, uint32_t line,
                      uint32_t start, Perftools__Profiles__Line *out,
                      Perftools__Profiles__Mapping *m)
{
	int64_t sys = intern_copy(c, name ? name : "");
	int64_t hname = sys > 0 ? demangled_name(c, sys) : sys;
	int64_t fi = hname >= 0 ? intern_copy(c, file ? file : "") : hname;
	int64_t fid = fi >= 0 ? intern_fn(c, hname, sys, fi, start) : fi;
	if (fid < 0)
		return (int)fid;
	static const Perftools__Profiles__Line init = PERFTOOLS__PROFILES__LINE__INIT;
	*out = init;
	out->function_id = (uint64_t)fid;
	out->line = line;
	m->has_functions |= name && name[0];
	m->has_filenames |= file && file[0];
	m->has_line_numbers |= line != 0;
	return 0;
}

/* pprof drops a frame llvm-symbolizer prints as "??" and "??:0:0". */
static int frame_kept(const symdb_frame *f)
{
	return (f->name && f->name[0]) || (f->file && f->file[0]) || f->line;
}

/* The Lines of one result, innermost first (in the arena); *n = 0 when
 * nothing is known.  An address only the symbol table covers gets one
 * Line with the symbol's name, as llvm-symbolizer prints it. */
static int result_lines(struct sym_ctx *c, const symdb_symbolized *r,
                        Perftools__Profiles__Mapping *m, Perftools__Profiles__Line ***out,
                        size_t *n)
{
	size_t nl = 0;
	*n = 0;
	if (r->status != SYMDB_SYM_OK)
		return 0;
	for (uint32_t i = 0; i < r->nframes; i++)
		nl += frame_kept(&r->frames[i]);
	int symtab_only = r->nframes == 0 && r->sym_name && r->sym_name[0];
	nl += symtab_only;
	if (!nl)
		return 0;
	Perftools__Profiles__Line **v = prof_arena_alloc(&c->p->arena, nl * sizeof *v);
	Perftools__Profiles__Line *lines =
		v ? prof_arena_alloc(&c->p->arena, nl * sizeof *lines) : NULL;
	if (!lines)
		return -ENOMEM;
	size_t k = 0;
	int rc = 0;
	if (symtab_only)
		rc = frame_line(c, r->sym_name, NULL, 0, 0, &lines[k++], m);
	for (uint32_t i = 0; rc == 0 && i < r->nframes; i++) {
		const symdb_frame *f = &r->frames[i];
		if (frame_kept(f))
			rc = frame_line(c, f->name, f->file, f->line, f->decl_line, &lines[k++], m);
	}
	for (size_t i = 0; i < nl; i++)
		v[i] = &lines[i];
	*out = v;
	*n = nl;
	return rc;
}

static void set_lines(prof_pprof *p, size_t loc, Perftools__Profiles__Line **v, size_t n)
{
	Perftools__Profiles__Location *l = p->pb->location[loc];
	if (!p->saved[loc].changed) {
		p->saved[loc].line = l->line;
		p->saved[loc].n_line = l->n_line;
		p->saved[loc].changed = 1;
	}
	l->line = v;
	l->n_line = n;
	l->is_folded = 0;
}

/* Requests per symdb_symbolize() call: big enough that the calls cost
 * nothing next to the lookups, small enough for a lively progress line. */
#define SYM_BATCH 16384

/* Give the locations of groups [g0, g1) (results res[0..g1-g0)) their
 * Lines. */
static int apply_results(struct sym_ctx *c, const struct sym_key *keys, const size_t *first,
                         size_t g0, size_t g1, const symdb_symbolized *res)
{
	int rc = 0;
	for (size_t g = g0; rc == 0 && g < g1; g++) {
		Perftools__Profiles__Mapping *m = c->p->pb->mapping[keys[first[g]].map];
		Perftools__Profiles__Line **v;
		size_t nl;
		rc = result_lines(c, &res[g - g0], m, &v, &nl);
		if (rc < 0 || nl == 0)
			continue;
		c->st->resolved++;
		m->has_inline_frames = 1;
		for (size_t i = first[g]; i < first[g + 1]; i++)
			set_lines(c->p, keys[i].loc, v, nl);
	}
	return rc;
}

/* Resolve the unique addresses of keys[0..n) in batches and give each
 * location its Lines. */
static int resolve_keys(struct sym_ctx *c, const struct sym_key *keys, size_t n, char *err,
                        size_t errsz)
{
	symdb_request *req = malloc((n ? n : 1) * sizeof *req);
	size_t *first = malloc((n + 1) * sizeof *first); /* group u: keys[first[u]..first[u+1]) */
	symdb_symbolized *res = NULL;
	size_t u = 0;
	int rc = -ENOMEM;
	if (!req || !first)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || keys[i].map != keys[i - 1].map || keys[i].addr != keys[i - 1].addr) {
			first[u] = i;
			req[u++] = key_request(c, &keys[i]);
		}
	first[u] = n;
	c->st->addresses = u;
	rc = 0;
	if (u == 0)
		goto out;
	res = malloc((u < SYM_BATCH ? u : SYM_BATCH) * sizeof *res);
	rc = res ? 0 : -ENOMEM;
	for (size_t at = 0; rc == 0 && at < u; at += SYM_BATCH) {
		size_t m = u - at < SYM_BATCH ? u - at : SYM_BATCH;
		SYMDB_OPTS(symdb_symbolize_opts, so, .errbuf = err, .errbuf_sz = errsz);
		rc = symdb_symbolize(c->s, req + at, m, res, &so);
		if (rc == 0)
			rc = apply_results(c, keys, first, at, at + m, res);
		if (rc == 0 && c->hooks.progress)
			c->hooks.progress(c->hooks.arg, at + m, u);
	}
out:
	free(req);
	free(first);
	free(res);
	return rc;
}

/* Sample counts and weights for the summary. */
static void count_samples(const prof_pprof *p, prof_pprof_stats *st)
{
	const Perftools__Profiles__Profile *pb = p->pb;
	st->samples = pb->n_sample;
	st->locations = pb->n_location;
	for (size_t i = 0; i < pb->n_location; i++)
		st->located += pb->location[i]->n_line > 0;
	if (pb->n_sample_type == 0)
		return;
	size_t vi = prof_pprof_value_index(p);
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		uint64_t w = s->value[vi] > 0 ? (uint64_t)s->value[vi] : 0;
		int all = 1; /* every frame of the sample has Lines */
		for (size_t j = 0; all && j < s->n_location_id; j++)
			all = pb->location[prof_id_find(&p->locs, s->location_id[j])]->n_line > 0;
		st->weight += w;
		st->weight_located += all ? w : 0;
	}
}

static int rebuild_function_ids(prof_pprof *p)
{
	free(p->funcs.v);
	p->funcs.v = NULL;
	char err[8];
	return prof_pprof_index_functions(p, err, sizeof err) < 0 ? -ENOMEM : 0;
}

int prof_pprof_symbolize(prof_pprof *p, symdb *db, symdb_symbolizer *s, int force,
                         const prof_pprof_hooks *hooks, prof_pprof_stats *st, char *err,
                         size_t errsz)
{
	memset(st, 0, sizeof *st);
	size_t nm = p->pb->n_mapping;
	struct sym_ctx c = { .p = p, .db = db, .s = s, .st = st };
	if (hooks)
		c.hooks = *hooks;
	c.img = calloc(nm ? nm : 1, sizeof *c.img);
	c.tried = calloc(nm ? nm : 1, 1);
	struct sym_key *keys = NULL;
	size_t n = 0;
	int rc = c.img && c.tried ? own_tables(&c) : -ENOMEM;
	if (rc == 0)
		rc = collect_keys(&c, force, &keys, &n);
	if (rc == 0)
		rc = resolve_keys(&c, keys, n, err, errsz);
	if (rc == 0)
		rc = rebuild_function_ids(p);
	if (rc == 0)
		count_samples(p, st);
	if (rc == -ENOMEM)
		snprintf(err, errsz, "out of memory");
	free(keys);
	free(c.img);
	free(c.tried);
	free(c.strs.slot);
	free(c.funcs.slot);
	free(c.demangled);
	free(c.dbuf);
	return rc;
}
