/* SPDX-License-Identifier: MIT */
/*
 * cmd_perf.c - `symdb perf [IN|-] [-o OUT] [--svg FILE]`: the samples of
 * `perf script` text (prof_perf.c reads it) symbolized by symdb and written
 * as folded stacks (prof_folded, tools/profile.h) and a flame graph.
 *
 * A profile repeats itself, so the work is split by what repeats:
 *   1. reading: each frame becomes a location (module, address) kept once,
 *      and each sample a stack of location ids (with its process name)
 *      kept once with a summed weight;
 *   2. symbolizing: the distinct locations only, grouped by kind, in
 *      batches: files through symdb_symbolize() (by path, or by build-id
 *      when the file on disk is not the one perf recorded), the kernel
 *      through symdb_kernel_symbolize(), the vDSO through this process's
 *      own (the same kernel's) with symdb_proc_symbolize(), JIT code
 *      through the process's perf map (symdb_perfmap_lookup());
 *   3. folding: each distinct stack expanded into frames, root first, each
 *      location's inline chain outermost first, into the model.
 * Memory follows the distinct locations and stacks, not the samples.
 *
 * Addresses.  perf prints a file's frames as offsets into the file (the
 * address minus the mapping's start plus its page offset), which is what
 * SYMDB_ADDR_FILEOFF takes; the kernel's and JIT code's as runtime
 * addresses.  Every frame but the leaf is a return address: it is looked
 * up one byte earlier, inside the call, so that a call that ends its
 * function (a noreturn call) or an inlined call site is named right.  The
 * first user frame after kernel frames is the address the kernel
 * interrupted or returns to, not a return address, and is taken as is.
 */
#define _GNU_SOURCE /* getauxval */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "cli_query.h"
#include "prof_perf.h"
#include "prof_plt.h"
#include "profile.h"

#define SYM_BATCH 65536u  /* requests per library call */
#define KERNEL_MIN 0xffff800000000000ull /* x86-64 and arm64 kernel half */

enum mod_kind { MOD_NONE, MOD_FILE, MOD_KERNEL, MOD_VDSO, MOD_JIT };

struct pmodule {
	char *dso;          /* as perf printed it */
	const char *base;   /* its file name, for frames and the summary */
	long pid;           /* MOD_JIT: the process whose perf map names it */
	int kind;           /* enum mod_kind */
	const char *build_id; /* from mmap events or --build-ids; NULL */
	char *debug;        /* MOD_FILE: its debug file, whose symbol table names it */
	char *map_path;     /* MOD_JIT: the perf map read */
	symdb_perfmap *map; /* MOD_JIT, once opened */
	int unknown;        /* no image answered any of its addresses */
	uint64_t nloc, nresolved;
};

struct loc {
	uint32_t mod;
	uint32_t first, n; /* its frames in perf_run.frames, innermost first */
	uint64_t addr;     /* as looked up (a return address minus 1) */
};

struct stack {
	size_t off;   /* its ids in perf_run.ids */
	uint32_t len;
	uint64_t weight;
};

struct build_id {
	char *path, *hex;
};

/* An open addressing table of indices + 1 (0 = empty); power-of-2 capacity. */
struct table {
	uint32_t *slot;
	size_t cap, n;
};

struct perf_opts {
	const char *in, *out, *svg, *title, *build_ids, *map_dir, *debug_dir;
	int period, no_comm, no_annotate, no_build, quiet, no_debug_names;
};

struct perf_run {
	struct perf_opts o;
	/* interned strings: names, files, process names */
	char **str;
	size_t nstr, str_cap;
	struct table str_tab;
	struct pmodule *mod;
	size_t nmod, mod_cap;
	uint32_t *dso_mod;     /* by string id: a DSO's module + 1 (not JIT) */
	size_t dso_mod_n, dso_mod_cap;
	struct loc *loc;
	size_t nloc, loc_cap;
	struct table loc_tab;
	/* stacks: [comm string, location ids root first] back to back */
	uint32_t *ids;
	size_t nids, ids_cap;
	struct stack *stack;
	size_t nstack, stack_cap;
	struct table stack_tab;
	uint32_t *scratch;
	size_t scratch_cap;
	prof_frame *frames;    /* the locations' frames */
	size_t nframes, frames_cap;
	struct build_id *bid; /* by path: mmap events, --build-ids */
	size_t nbid, bid_cap;
	uint64_t samples, weight;
	/* symbolizing */
	symdb *db;
	symdb_symbolizer *sym;
	int progress;
	struct timespec last_progress;
	uint64_t done_locs;
};

/* ---- small containers ------------------------------------------------ */

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(p, c * elem);
	if (!q)
		return NULL;
	*cap = c;
	return q;
}

#define GROW(arr, cap, need)                                                  \
	((arr) = grow((arr), &(cap), (need), sizeof(*(arr))), (arr) ? 0 : -ENOMEM)

static uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

/* Finds key (eq(arg, index, key)) or the empty slot where it goes. */
static uint32_t *table_find(struct table *t, uint64_t h,
                            int (*eq)(const struct perf_run *, uint32_t, const void *),
                            const struct perf_run *r, const void *key)
{
	size_t mask = t->cap - 1;
	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask)
		if (!t->slot[i] || eq(r, t->slot[i] - 1, key))
			return &t->slot[i];
}

/* Doubles the table when it is half full; rehash(r, index) gives a hash. */
static int table_reserve(struct table *t, const struct perf_run *r,
                         uint64_t (*rehash)(const struct perf_run *, uint32_t))
{
	if (t->cap && 2 * (t->n + 1) <= t->cap)
		return 0;
	size_t cap = t->cap ? 2 * t->cap : 1024;
	uint32_t *s = calloc(cap, sizeof *s);
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slot[i]) {
			size_t j = (size_t)rehash(r, t->slot[i] - 1) & (cap - 1);
			while (s[j])
				j = (j + 1) & (cap - 1);
			s[j] = t->slot[i];
		}
	free(t->slot);
	t->slot = s;
	t->cap = cap;
	return 0;
}

/* ---- interned strings ------------------------------------------------ */

static uint64_t str_hash(const struct perf_run *r, uint32_t i)
{
	return hash_bytes(r->str[i], strlen(r->str[i]), 0xcbf29ce484222325ull);
}

static int str_eq(const struct perf_run *r, uint32_t i, const void *key)
{
	return !strcmp(r->str[i], key);
}

/* The index of the run's copy of s; UINT32_MAX with *rc = -ENOMEM. */
static uint32_t intern_id(struct perf_run *r, const char *s, int *rc)
{
	if (table_reserve(&r->str_tab, r, str_hash) < 0 || GROW(r->str, r->str_cap, r->nstr + 1)) {
		*rc = -ENOMEM;
		return UINT32_MAX;
	}
	uint32_t *slot = table_find(&r->str_tab, hash_bytes(s, strlen(s), 0xcbf29ce484222325ull),
	                            str_eq, r, s);
	if (*slot)
		return *slot - 1;
	char *c = strdup(s);
	if (!c) {
		*rc = -ENOMEM;
		return UINT32_MAX;
	}
	r->str[r->nstr++] = c;
	*slot = (uint32_t)r->nstr;
	r->str_tab.n++;
	return *slot - 1;
}

/* The run's copy of s (NULL stays NULL); NULL with *rc = -ENOMEM. */
static const char *intern(struct perf_run *r, const char *s, int *rc)
{
	if (!s || *rc)
		return NULL;
	uint32_t id = intern_id(r, s, rc);
	return *rc ? NULL : r->str[id];
}

/* ---- modules --------------------------------------------------------- */

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s && s[1] ? s + 1 : p;
}

/* "perf-PID.map" or "jit-PID.dump": a JIT's own file. */
static int is_jit_file(const char *dso)
{
	const char *b = base_name(dso);
	size_t n = strlen(b);
	return (!strncmp(b, "perf-", 5) && n > 9 && !strcmp(b + n - 4, ".map")) ||
	       (!strncmp(b, "jit-", 4) && n > 9 && !strcmp(b + n - 5, ".dump"));
}

static int classify(const char *dso, uint64_t addr)
{
	if (addr >= KERNEL_MIN)
		return MOD_KERNEL;
	if (!dso[0] || !strcmp(dso, "[unknown]"))
		return MOD_NONE;
	if (!strcmp(dso, "[vdso]"))
		return MOD_VDSO;
	if (!strncmp(dso, "[kernel.", 8))
		return MOD_KERNEL;
	if (is_jit_file(dso) || !strcmp(dso, "//anon") || !strncmp(dso, "[anon", 5))
		return MOD_JIT;
	return dso[0] == '[' ? MOD_NONE : MOD_FILE;
}

static const char *find_build_id(const struct perf_run *r, const char *path)
{
	for (size_t i = r->nbid; i-- > 0;) /* the latest mapping of the path */
		if (!strcmp(r->bid[i].path, path))
			return r->bid[i].hex;
	return NULL;
}

/* The module of a frame; kernel frames share one, JIT modules are per pid
 * (a perf map names one process's code). */
static int module_id(struct perf_run *r, const char *dso, uint64_t addr, long pid, uint32_t *out)
{
	int kind = classify(dso, addr), rc = 0;
	if (kind == MOD_KERNEL)
		dso = "[kernel.kallsyms]";
	uint32_t sid = intern_id(r, dso, &rc);
	if (rc || GROW(r->dso_mod, r->dso_mod_cap, r->nstr))
		return -ENOMEM;
	for (size_t i = r->dso_mod_n; i < r->nstr; i++)
		r->dso_mod[i] = 0;
	r->dso_mod_n = r->nstr;
	if (kind != MOD_JIT && r->dso_mod[sid]) {
		*out = r->dso_mod[sid] - 1;
		return 0;
	}
	if (kind != MOD_JIT)
		pid = 0;
	for (size_t i = 0; kind == MOD_JIT && i < r->nmod; i++) /* few JIT processes: a scan */
		if (r->mod[i].pid == pid && !strcmp(r->mod[i].dso, dso)) {
			*out = (uint32_t)i;
			return 0;
		}
	if (GROW(r->mod, r->mod_cap, r->nmod + 1))
		return -ENOMEM;
	if (kind != MOD_JIT)
		r->dso_mod[sid] = (uint32_t)r->nmod + 1;
	struct pmodule *m = &r->mod[r->nmod];
	memset(m, 0, sizeof *m);
	m->dso = strdup(dso);
	if (!m->dso)
		return -ENOMEM;
	m->base = base_name(m->dso);
	m->pid = pid;
	m->kind = kind;
	*out = (uint32_t)r->nmod++;
	return 0;
}

/* ---- locations and stacks ---------------------------------------------- */

static uint64_t loc_key_hash(uint32_t mod, uint64_t addr)
{
	uint64_t h = (addr ^ (uint64_t)mod << 48) * 0x9e3779b97f4a7c15ull;
	return h ^ h >> 29;
}

static uint64_t loc_hash(const struct perf_run *r, uint32_t i)
{
	return loc_key_hash(r->loc[i].mod, r->loc[i].addr);
}

static int loc_eq(const struct perf_run *r, uint32_t i, const void *key)
{
	const struct loc *k = key;
	return r->loc[i].mod == k->mod && r->loc[i].addr == k->addr;
}

static int loc_id(struct perf_run *r, uint32_t mod, uint64_t addr, uint32_t *out)
{
	struct loc k = { .mod = mod, .addr = addr };
	if (table_reserve(&r->loc_tab, r, loc_hash) < 0 || GROW(r->loc, r->loc_cap, r->nloc + 1))
		return -ENOMEM;
	uint32_t *slot = table_find(&r->loc_tab, loc_key_hash(mod, addr), loc_eq, r, &k);
	if (!*slot) {
		r->loc[r->nloc++] = k;
		*slot = (uint32_t)r->nloc;
		r->loc_tab.n++;
		r->mod[mod].nloc++;
	}
	*out = *slot - 1;
	return 0;
}

struct stack_key {
	const uint32_t *ids;
	uint32_t n;
};

static uint64_t stack_hash(const struct perf_run *r, uint32_t i)
{
	return hash_bytes(r->ids + r->stack[i].off, r->stack[i].len * sizeof(uint32_t),
	                  0xcbf29ce484222325ull);
}

static int stack_eq(const struct perf_run *r, uint32_t i, const void *key)
{
	const struct stack_key *k = key;
	return r->stack[i].len == k->n &&
	       !memcmp(r->ids + r->stack[i].off, k->ids, k->n * sizeof(uint32_t));
}

static int add_stack(struct perf_run *r, const uint32_t *ids, uint32_t n, uint64_t w)
{
	struct stack_key k = { ids, n };
	if (table_reserve(&r->stack_tab, r, stack_hash) < 0)
		return -ENOMEM;
	uint32_t *slot = table_find(&r->stack_tab, hash_bytes(ids, n * sizeof *ids,
	                                                      0xcbf29ce484222325ull),
	                            stack_eq, r, &k);
	if (*slot) {
		r->stack[*slot - 1].weight += w;
		return 0;
	}
	if (GROW(r->ids, r->ids_cap, r->nids + n) || GROW(r->stack, r->stack_cap, r->nstack + 1))
		return -ENOMEM;
	memcpy(r->ids + r->nids, ids, n * sizeof *ids);
	r->stack[r->nstack++] = (struct stack){ .off = r->nids, .len = n, .weight = w };
	r->nids += n;
	*slot = (uint32_t)r->nstack;
	r->stack_tab.n++;
	return 0;
}

/* A sample: its frames (leaf first) become location ids, root first, after
 * the process name's string id. */
static int add_sample(struct perf_run *r, const prof_perf_event *ev)
{
	int rc = 0;
	uint32_t comm = intern_id(r, ev->comm[0] ? ev->comm : "[unknown]", &rc);
	if (rc || GROW(r->scratch, r->scratch_cap, ev->nframes + 1))
		return -ENOMEM;
	uint32_t n = 0;
	r->scratch[n++] = comm;
	for (size_t j = ev->nframes; j-- > 0;) {
		const prof_perf_frame *f = &ev->frames[j];
		uint32_t mod, id;
		if ((rc = module_id(r, f->dso, f->addr, ev->pid, &mod)) < 0)
			return rc;
		uint64_t a = f->addr;
		/* A return address, unless the leaf or the first user frame
		 * below the kernel's (see the file comment). */
		int exact = j == 0 || (r->mod[mod].kind != MOD_KERNEL &&
		                       classify(ev->frames[j - 1].dso, ev->frames[j - 1].addr) ==
		                               MOD_KERNEL);
		if (!exact && a && r->mod[mod].kind != MOD_NONE)
			a--;
		if ((rc = loc_id(r, mod, a, &id)) < 0)
			return rc;
		r->scratch[n++] = id;
	}
	r->samples++;
	uint64_t w = r->o.period && ev->period ? ev->period : 1; /* no period printed: a count */
	r->weight += w;
	return add_stack(r, r->scratch, n, w);
}

/* ---- progress ---------------------------------------------------------- */

static void progress(struct perf_run *r, const char *what, uint64_t a, uint64_t b)
{
	if (!r->progress)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double dt = (double)(now.tv_sec - r->last_progress.tv_sec) +
	            (double)(now.tv_nsec - r->last_progress.tv_nsec) / 1e9;
	if (dt < 0.25)
		return;
	r->last_progress = now;
	if (b)
		fprintf(stderr, "\rsymdb perf: %s %llu/%llu locations   ", what,
		        (unsigned long long)a, (unsigned long long)b);
	else
		fprintf(stderr, "\rsymdb perf: %s %llu samples, %zu locations   ", what,
		        (unsigned long long)a, r->nloc);
}

static void progress_clear(struct perf_run *r)
{
	if (r->progress && (r->last_progress.tv_sec || r->last_progress.tv_nsec))
		fprintf(stderr, "\r%70s\r", "");
}

/* ---- reading ------------------------------------------------------------ */

static int add_build_id(struct perf_run *r, const char *path, const char *hex)
{
	if (!hex[0] || !path[0])
		return 0;
	const char *known = find_build_id(r, path);
	if (known && !strcmp(known, hex))
		return 0;
	if (GROW(r->bid, r->bid_cap, r->nbid + 1))
		return -ENOMEM;
	struct build_id *b = &r->bid[r->nbid++];
	b->path = strdup(path);
	b->hex = strdup(hex);
	return b->path && b->hex ? 0 : -ENOMEM;
	return 0;
}

/* `perf buildid-list` output: "HEX PATH" per line. */
static int read_build_ids(struct perf_run *r, const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		int e = errno;
		cli_err(file, "%s", strerror(e));
		return -e;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;
	while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		char *sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp = 0;
		rc = add_build_id(r, sp + 1, line);
	}
	free(line);
	fclose(f);
	return rc;
}

static int read_input(struct perf_run *r, FILE *in)
{
	prof_perf_reader *rd = NULL;
	int rc = prof_perf_open(in, &rd);
	prof_perf_event ev;
	while (rc == 0 && (rc = prof_perf_next(rd, &ev)) > 0) {
		rc = ev.kind == PROF_PERF_MMAP ? add_build_id(r, ev.path, ev.build_id)
		                               : add_sample(r, &ev);
		if ((r->samples & 4095) == 0)
			progress(r, "read", r->samples, 0);
	}
	uint64_t first, skipped = rd ? prof_perf_skipped(rd, &first) : 0;
	prof_perf_close(rd);
	if (rc < 0) {
		progress_clear(r);
		cli_err(r->o.in, "%s", strerror(-rc));
		return rc;
	}
	if (skipped && r->samples) { /* none: the one line is run()'s */
		progress_clear(r);
		cli_err(r->o.in, "%llu line%s not understood, skipped (first: line %llu)",
		        (unsigned long long)skipped, skipped == 1 ? "" : "s",
		        (unsigned long long)first);
	}
	return 0;
}

/* ---- symbolizing ------------------------------------------------------- */

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
	prof_frame f = { .name = intern(r, buf, &rc), .kind = PROF_UNKNOWN,
	                 .module = intern(r, m->kind == MOD_NONE ? NULL : m->base, &rc) };
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
	const char *mod = intern(r, kind == PROF_KERNEL ? "[kernel.kallsyms]" : m->base, &rc);
	if (!n) {
		prof_frame f = { .name = intern(r, sym_name, &rc), .kind = (uint8_t)kind,
		                 .module = mod };
		return rc ? rc : add_frame(r, &f);
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const symdb_frame *s = &fr[i];
		const char *name = s->name ? s->name : i == n - 1 && sym_name ? sym_name : "[unknown]";
		int has_line = (s->flags & SYMDB_FRAME_HAS_LINE) != 0;
		prof_frame f = { .name = intern(r, name, &rc),
		                 .file = has_line ? intern(r, s->file, &rc) : NULL,
		                 .line = has_line ? s->line : 0, .kind = (uint8_t)kind,
		                 .inlined = i + 1 < n, .module = mod };
		if (rc == 0)
			rc = add_frame(r, &f);
	}
	return rc;
}

/* How a file's requests name it: by path, unless perf recorded a build-id
 * that the file at that path no longer has (it was rebuilt or replaced):
 * then by that build-id, answered if the database holds it. */
static int by_hex(const struct pmodule *m)
{
	if (!m->build_id)
		return 0;
	symdb_uuid id;
	char hex[2 * SYMDB_UUID_MAX + 1];
	if (symdb_file_uuid(m->dso, NULL, &id) < 0)
		return 1;
	symdb_uuid_format(&id, hex);
	return strcasecmp(hex, m->build_id) != 0;
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
	if (symdb_file_uuid(m->dso, NULL, &id) < 0 || id.kind != SYMDB_UUID_GNU_BUILD_ID ||
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
	q->image.path = m->dso;
	if (m->debug && img &&
	    symdb_image_translate(img, SYMDB_ADDR_FILEOFF, 0, &l->addr, &q->addr, 1) == 0) {
		q->image.path = m->debug;
		q->addr_kind = SYMDB_ADDR_VADDR;
	}
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
		if (m->kind != MOD_FILE || (hex[i] = by_hex(m)) != 0)
			continue;
		prof_plt_load(m->dso, &plt[i]); /* none: no stub names */
		if (r->o.no_debug_names)
			continue;
		find_debug_file(r, m);
		/* The binary's image maps its offsets to vaddrs (a failure
		 * is answered by the path's own request below). */
		if (m->debug && symdb_symbolizer_image(r->sym, m->dso, NULL, &img[i]) < 0)
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
		progress(r, "symbolized", r->done_locs, r->nloc);
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
	const char *want = find_build_id(r, "[kernel.kallsyms]");
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
		progress(r, "symbolized", r->done_locs, r->nloc);
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
	const char *want = find_build_id(r, "[vdso]");
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
			if (is_jit_file(m->dso))
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
			r->frames[l->first].module = intern(r, base_name(m->map_path), &rc);
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

static int open_symbolizer(struct perf_run *r, const struct cli_global *g)
{
	int rc = cli_query_open_db(g, r->o.no_build, &r->db);
	if (rc < 0)
		return rc;
	char ix[4096];
	const char *tmp = getenv("TMPDIR");
	SYMDB_OPTS(symdb_symbolizer_opts, so, .flags = r->o.no_build ? 0u : SYMDB_SYMBOLIZER_BUILD,
	           .indexer_path = r->o.no_build ? NULL : cli_query_indexer(ix, sizeof ix),
	           .tmp_dir = tmp && tmp[0] == '/' ? tmp : NULL);
	if ((rc = symdb_symbolizer_create(r->db, &so, &r->sym)) < 0)
		cli_err(NULL, "%s", symdb_strerror(rc));
	return rc;
}

static int symbolize_all(struct perf_run *r)
{
	for (size_t i = 0; i < r->nmod; i++)
		if (r->mod[i].kind == MOD_FILE || r->mod[i].kind == MOD_VDSO ||
		    r->mod[i].kind == MOD_KERNEL)
			r->mod[i].build_id = find_build_id(r, r->mod[i].dso);
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

/* ---- folding and output ------------------------------------------------ */

static int fold(struct perf_run *r, prof_folded *f)
{
	prof_frame *st = NULL;
	size_t cap = 0;
	int rc = 0;
	for (size_t s = 0; rc == 0 && s < r->nstack; s++) {
		const uint32_t *ids = r->ids + r->stack[s].off;
		uint32_t len = r->stack[s].len;
		size_t need = 1;
		for (uint32_t j = 1; j < len; j++)
			need += r->loc[ids[j]].n;
		if (GROW(st, cap, need))
			return -ENOMEM;
		size_t n = 0;
		if (!r->o.no_comm)
			st[n++] = (prof_frame){ .name = r->str[ids[0]], .kind = PROF_USER };
		for (uint32_t j = 1; j < len; j++) {
			const struct loc *l = &r->loc[ids[j]];
			for (uint32_t i = l->n; i-- > 0;) /* outermost first */
				st[n++] = r->frames[l->first + i];
		}
		if (n)
			rc = prof_folded_add(f, st, n, r->stack[s].weight);
	}
	free(st);
	return rc;
}

static void summary(const struct perf_run *r, char *buf, size_t sz)
{
	uint64_t mapped = 0, ok = 0, none = 0;
	size_t unknown = 0;
	for (size_t i = 0; i < r->nmod; i++) {
		const struct pmodule *m = &r->mod[i];
		if (m->kind == MOD_NONE) {
			none += m->nloc;
			continue;
		}
		mapped += m->nloc;
		ok += m->nresolved;
		unknown += m->unknown;
	}
	int len = snprintf(buf, sz,
	                   "%llu samples, %zu stacks, %zu locations (%llu outside any mapping), "
	                   "%.1f%% resolved, %zu unknown image%s",
	                   (unsigned long long)r->samples, r->nstack, r->nloc,
	                   (unsigned long long)none, mapped ? 100.0 * (double)ok / (double)mapped : 100.0,
	                   unknown, unknown == 1 ? "" : "s");
	const char *sep = ": ";
	for (size_t i = 0; i < r->nmod && len > 0 && (size_t)len < sz; i++)
		if (r->mod[i].unknown) {
			len += snprintf(buf + len, sz - (size_t)len, "%s%s", sep, r->mod[i].dso);
			sep = ", ";
		}
}

static int write_outputs(struct perf_run *r, prof_folded *f)
{
	FILE *out = stdout;
	if (r->o.out && strcmp(r->o.out, "-") && !(out = fopen(r->o.out, "w"))) {
		cli_err(r->o.out, "%s", strerror(errno));
		return CLI_EXIT_FAILED;
	}
	SYMDB_OPTS(prof_text_opts, to, .annotate = !r->o.no_annotate);
	int rc = prof_folded_write_text(f, out, &to);
	if (out != stdout ? fclose(out) != 0 : fflush(out) != 0)
		rc = rc ? rc : -errno;
	if (rc < 0) {
		cli_err(r->o.out ? r->o.out : "stdout", "%s", strerror(-rc));
		return CLI_EXIT_FAILED;
	}
	if (!r->o.svg)
		return 0;
	FILE *svg = fopen(r->o.svg, "w");
	if (!svg) {
		cli_err(r->o.svg, "%s", strerror(errno));
		return CLI_EXIT_FAILED;
	}
	char sub[512];
	summary(r, sub, sizeof sub);
	SYMDB_OPTS(prof_svg_opts, so, .title = r->o.title ? r->o.title : "symdb perf", .subtitle = sub);
	rc = prof_svg_write(f, svg, &so);
	if (fclose(svg) != 0 && rc == 0)
		rc = -errno;
	if (rc < 0) {
		cli_err(r->o.svg, "%s", strerror(-rc));
		return CLI_EXIT_FAILED;
	}
	return 0;
}

/* ---- the command ------------------------------------------------------- */

static int parse_args(struct perf_opts *o, struct cli_global *g, int argc, char **argv)
{
	static const struct {
		const char *name;
		size_t off;
	} values[] = {
		{ "-o", offsetof(struct perf_opts, out) },
		{ "--output", offsetof(struct perf_opts, out) },
		{ "--svg", offsetof(struct perf_opts, svg) },
		{ "--title", offsetof(struct perf_opts, title) },
		{ "--build-ids", offsetof(struct perf_opts, build_ids) },
		{ "--perf-map-dir", offsetof(struct perf_opts, map_dir) },
		{ "--debug-dir", offsetof(struct perf_opts, debug_dir) },
	};
	static const struct {
		const char *name;
		size_t off;
	} flags[] = {
		{ "--period", offsetof(struct perf_opts, period) },
		{ "--no-comm", offsetof(struct perf_opts, no_comm) },
		{ "--no-annotate", offsetof(struct perf_opts, no_annotate) },
		{ "--no-build", offsetof(struct perf_opts, no_build) },
		{ "--no-debug-names", offsetof(struct perf_opts, no_debug_names) },
		{ "-q", offsetof(struct perf_opts, quiet) },
		{ "--quiet", offsetof(struct perf_opts, quiet) },
	};
	for (int i = 1; i < argc; i++) {
		int m = argv[i][0] == '-' && argv[i][1] ? cli_opt_common(g, "perf", argc, argv, &i)
		                                        : CLI_OPT_NONE;
		if (m < 0)
			return CLI_EXIT_USAGE;
		if (m == CLI_OPT_HELP)
			return -1;
		if (m == CLI_OPT_TAKEN)
			continue;
		for (size_t k = 0; m == 0 && k < sizeof values / sizeof values[0]; k++) {
			const char *v;
			m = cli_opt_value(argc, argv, &i, values[k].name, &v);
			if (m < 0)
				return CLI_EXIT_USAGE;
			if (m > 0)
				*(const char **)((char *)o + values[k].off) = v;
		}
		for (size_t k = 0; m == 0 && k < sizeof flags / sizeof flags[0]; k++)
			if (!strcmp(argv[i], flags[k].name)) {
				*(int *)((char *)o + flags[k].off) = 1;
				m = 1;
			}
		if (m)
			continue;
		if (argv[i][0] == '-' && argv[i][1]) {
			cli_err(NULL, "perf: unknown option '%s' (see 'symdb help perf')", argv[i]);
			return CLI_EXIT_USAGE;
		}
		if (o->in) {
			cli_err(NULL, "perf: one input at most ('%s' and '%s')", o->in, argv[i]);
			return CLI_EXIT_USAGE;
		}
		o->in = argv[i];
	}
	if (!o->map_dir)
		o->map_dir = "/tmp";
	if (!o->debug_dir)
		o->debug_dir = "/usr/lib/debug";
	return 0;
}

static void free_run(struct perf_run *r)
{
	for (size_t i = 0; i < r->nstr; i++)
		free(r->str[i]);
	for (size_t i = 0; i < r->nmod; i++) {
		free(r->mod[i].dso);
		free(r->mod[i].map_path);
		free(r->mod[i].debug);
		symdb_perfmap_close(r->mod[i].map);
	}
	for (size_t i = 0; i < r->nbid; i++) {
		free(r->bid[i].path);
		free(r->bid[i].hex);
	}
	free(r->bid);
	free(r->str);
	free(r->str_tab.slot);
	free(r->mod);
	free(r->dso_mod);
	free(r->loc);
	free(r->loc_tab.slot);
	free(r->ids);
	free(r->stack);
	free(r->stack_tab.slot);
	free(r->scratch);
	free(r->frames);
	symdb_symbolizer_free(r->sym);
	symdb_close(r->db);
}

static int run(struct perf_run *r, const struct cli_global *g)
{
	if (r->o.build_ids && read_build_ids(r, r->o.build_ids) < 0)
		return CLI_EXIT_FAILED;
	FILE *in = stdin;
	if (r->o.in && strcmp(r->o.in, "-") && !(in = fopen(r->o.in, "r"))) {
		cli_err(r->o.in, "%s", strerror(errno));
		return CLI_EXIT_FAILED;
	}
	if (!r->o.in)
		r->o.in = "-";
	int rc = read_input(r, in);
	if (in != stdin)
		fclose(in);
	if (rc < 0)
		return CLI_EXIT_FAILED;
	if (!r->samples) {
		cli_err(r->o.in, "no samples (is this the output of 'perf script'? see 'symdb help perf')");
		return CLI_EXIT_FAILED;
	}
	if ((rc = open_symbolizer(r, g)) < 0)
		return rc == -CLI_EXIT_DATABASE ? CLI_EXIT_DATABASE : CLI_EXIT_FAILED;
	prof_folded *f = prof_folded_new();
	rc = f ? symbolize_all(r) : -ENOMEM;
	if (rc == 0)
		rc = fold(r, f);
	progress_clear(r);
	int ex = rc < 0 ? CLI_EXIT_FAILED : write_outputs(r, f);
	if (rc == -ENOMEM)
		cli_err("perf", "%s", strerror(ENOMEM));
	if (ex == 0 && !r->o.quiet) {
		char line[1024];
		summary(r, line, sizeof line);
		fprintf(stderr, "symdb perf: %s\n", line);
	}
	prof_folded_free(f);
	return ex;
}

int cmd_perf(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	struct perf_run *r = calloc(1, sizeof *r);
	if (!r) {
		cli_err("perf", "%s", strerror(ENOMEM));
		return CLI_EXIT_FAILED;
	}
	int rc = parse_args(&r->o, &g, argc, argv);
	if (rc == 0) {
		r->progress = !r->o.quiet && isatty(2);
		rc = run(r, &g);
	} else if (rc < 0) {
		rc = CLI_EXIT_OK; /* --help */
	}
	free_run(r);
	free(r);
	return rc;
}
