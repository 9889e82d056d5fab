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
 *   2. symbolizing (prof_perf_sym.c): the distinct locations only, grouped by kind, in
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
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_outfile.h"
#include "cli_query.h"
#include "prof_perf.h"
#include "prof_perf_run.h"

/* ---- small containers ------------------------------------------------ */

int prof_perf_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

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
const char *prof_perf_intern(struct perf_run *r, const char *s, int *rc)
{
	if (!s || *rc)
		return NULL;
	uint32_t id = intern_id(r, s, rc);
	return *rc ? NULL : r->str[id];
}

/* ---- modules --------------------------------------------------------- */

const char *prof_perf_base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s && s[1] ? s + 1 : p;
}

/* "perf-PID.map" or "jit-PID.dump": a JIT's own file. */
int prof_perf_is_jit_file(const char *dso)
{
	const char *b = prof_perf_base_name(dso);
	size_t n = strlen(b);
	return (!strncmp(b, "perf-", 5) && n > 9 && !strcmp(b + n - 4, ".map")) ||
	       (!strncmp(b, "jit-", 4) && n > 9 && !strcmp(b + n - 5, ".dump"));
}

/* What answers a frame: perf's DSO says, except that a kernel module
 * ("[ext4]", a .ko) and a frame printed without a DSO are known by their
 * address in the kernel's half.  "[unknown]" stays unknown whatever its
 * address (frame-pointer unwinding through code without frame pointers
 * yields any number). */
static int classify(const char *dso, uint64_t addr)
{
	if (!strcmp(dso, "[unknown]"))
		return MOD_NONE;
	if (!strncmp(dso, "[kernel.", 8) || addr >= KERNEL_MIN)
		return MOD_KERNEL;
	if (!dso[0])
		return MOD_NONE;
	if (!strcmp(dso, "[vdso]"))
		return MOD_VDSO;
	if (prof_perf_is_jit_file(dso) || !strcmp(dso, "//anon") || !strncmp(dso, "[anon", 5))
		return MOD_JIT;
	return dso[0] == '[' ? MOD_NONE : MOD_FILE;
}

const char *prof_perf_build_id(const struct perf_run *r, const char *path)
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
	/* A file is a module per build-id recorded for its path so far (the
	 * --build-ids list, then the mmap events up to this sample): a library
	 * replaced at one path while perf recorded is two images, each frame
	 * asked of the one mapped when it was sampled. */
	uint32_t psid = intern_id(r, dso, &rc);
	if (rc)
		return -ENOMEM;
	const char *bid = kind == MOD_FILE && psid < r->bid_of_n ? r->bid_of[psid] : NULL;
	uint32_t sid = psid;
	if (bid && r->key_of[psid]) {
		sid = r->key_of[psid] - 1; /* the key made for this path and build-id */
	} else if (bid) { /* "PATH\x1fBUILDID": no path or build-id holds 0x1f */
		char small[512], *key;
		size_t n = strlen(dso), k = strlen(bid);
		key = n + k + 2 <= sizeof small ? small : malloc(n + k + 2);
		if (!key)
			return -ENOMEM;
		memcpy(key, dso, n);
		key[n] = '\x1f';
		memcpy(key + n + 1, bid, k + 1);
		sid = intern_id(r, key, &rc);
		if (key != small)
			free(key);
		r->key_of[psid] = sid + 1; /* (until add_build_id changes bid_of[psid]) */
	}
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
	m->base = prof_perf_base_name(m->dso);
	m->pid = pid;
	m->kind = kind;
	m->build_id = bid; /* (the run's copy, kept until the end) */
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
/* A file's address of a sample without a callchain: perf printed the
 * runtime address there, not the mapping-relative one it prints for
 * callchain frames.  The latest mapping of that file in that process
 * holding it (mmap events) gives the file offset; without one the frame is
 * placed nowhere (-1) rather than looked up at a wrong offset. */
static int place_runtime(struct perf_run *r, const prof_perf_frame *f, long pid, uint64_t *addr)
{
	int rc = 0;
	uint32_t path = intern_id(r, f->dso, &rc);
	if (rc)
		return rc;
	for (size_t i = r->nmaps; i-- > 0;) {
		const struct pmap *m = &r->maps[i];
		if (m->path == path && (m->pid == pid || pid < 0 || m->pid < 0) &&
		    f->addr - m->start < m->len) {
			*addr = f->addr - m->start + m->pgoff;
			return 0;
		}
	}
	/* None of this process: a child forked without exec has its parent's
	 * mappings and no mmap event of its own (perf prints no FORK here).
	 * Another process's mapping of the file holding the address places
	 * it when every such mapping agrees on where the file lies. */
	int found = 0;
	uint64_t off = 0;
	for (size_t i = r->nmaps; i-- > 0;) {
		const struct pmap *m = &r->maps[i];
		if (m->path != path || f->addr - m->start >= m->len)
			continue;
		uint64_t o = f->addr - m->start + m->pgoff;
		if (found && o != off) {
			found = 0;
			break;
		}
		found = 1;
		off = o;
	}
	if (found) {
		*addr = off;
		return 0;
	}
	r->unplaced++;
	return -1;
}

static int add_map(struct perf_run *r, const prof_perf_event *ev)
{
	int rc = 0;
	if (!ev->len || !ev->path[0])
		return 0;
	uint32_t path = intern_id(r, ev->path, &rc);
	if (rc || GROW(r->maps, r->maps_cap, r->nmaps + 1))
		return -ENOMEM;
	r->maps[r->nmaps++] = (struct pmap){ ev->pid, ev->start, ev->len, ev->pgoff, path };
	return 0;
}

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
		uint64_t a = f->addr;
		const char *dso = f->dso;
		int kind = f->runtime ? classify(dso, a) : MOD_NONE; /* (only needed then) */
		if (f->runtime && (kind == MOD_FILE || kind == MOD_VDSO) &&
		    (rc = place_runtime(r, f, ev->pid, &a)) != 0) {
			if (rc < -1)
				return rc;
			dso = "[unknown]";
		}
		if ((rc = module_id(r, dso, a, ev->pid, &mod)) < 0)
			return rc;
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
	if (r->weight + w < r->weight)
		return -EOVERFLOW; /* the weights would wrap: every share wrong */
	r->weight += w;
	return add_stack(r, r->scratch, n, w);
}

/* ---- progress ---------------------------------------------------------- */

void prof_perf_progress(struct perf_run *r, const char *what, uint64_t a, uint64_t b)
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

void prof_perf_progress_clear(struct perf_run *r)
{
	if (r->progress && (r->last_progress.tv_sec || r->last_progress.tv_nsec))
		fprintf(stderr, "\r%70s\r", "");
}

static void progress_line(void *arg)
{
	prof_perf_progress_clear(arg);
}

/* ---- reading ------------------------------------------------------------ */

static int add_build_id(struct perf_run *r, const char *path, const char *hex)
{
	if (!hex[0] || !path[0])
		return 0;
	/* The kernel's mmap event names "[kernel.kallsyms]_text". */
	if (!strncmp(path, "[kernel.kallsyms]", 17))
		path = "[kernel.kallsyms]";
	const char *known = prof_perf_build_id(r, path);
	if (known && !strcmp(known, hex))
		return 0;
	if (GROW(r->bid, r->bid_cap, r->nbid + 1))
		return -ENOMEM;
	struct build_id *b = &r->bid[r->nbid++];
	b->path = strdup(path);
	b->hex = strdup(hex);
	if (!b->path || !b->hex)
		return -ENOMEM;
	int rc = 0;
	uint32_t sid = intern_id(r, path, &rc); /* (module_id's look-up, O(1)) */
	if (rc || GROW(r->bid_of, r->bid_of_cap, (size_t)sid + 1))
		return -ENOMEM;
	if (GROW(r->key_of, r->key_of_cap, (size_t)sid + 1))
		return -ENOMEM;
	for (; r->bid_of_n <= sid; r->bid_of_n++) {
		r->bid_of[r->bid_of_n] = NULL;
		r->key_of[r->bid_of_n] = 0;
	}
	r->bid_of[sid] = b->hex;
	r->key_of[sid] = 0; /* module_id makes the key of the new build-id */
	return 0;
}

/* `perf buildid-list` output: "HEX PATH" per line (HEX padded with spaces
 * to 40 columns). */
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
		/* perf pads a build-id shorter than 20 bytes (lld's 8, an md5's
		 * 16) to 40 columns: the path starts after the spaces. */
		char *sp = strchr(line, ' '), *path = sp;
		if (!sp)
			continue;
		*sp = 0;
		while (*++path == ' ')
			;
		rc = add_build_id(r, path, line);
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
		if (ev.kind == PROF_PERF_MMAP)
			rc = add_build_id(r, ev.path, ev.build_id) || add_map(r, &ev) ? -ENOMEM : 0;
		else
			rc = add_sample(r, &ev);
		if ((r->samples & 4095) == 0)
			prof_perf_progress(r, "read", r->samples, 0);
	}
	uint64_t first, skipped = rd ? prof_perf_skipped(rd, &first) : 0;
	uint64_t inlined_only = rd ? prof_perf_inlined_only(rd) : 0;
	prof_perf_close(rd);
	if (rc < 0) {
		prof_perf_progress_clear(r);
		cli_err(r->o.in, "%s", rc == -EOVERFLOW ? "the sample periods add up past 2^64-1"
		                                          : strerror(-rc));
		return rc;
	}
	if (r->unplaced) {
		prof_perf_progress_clear(r);
		cli_err(r->o.in, "%llu address%s of samples without a callchain lie in files no mmap "
		        "event places (perf script --show-mmap-events prints them): left [unknown]",
		        (unsigned long long)r->unplaced, r->unplaced == 1 ? "" : "es");
	}
	if (inlined_only) {
		prof_perf_progress_clear(r);
		cli_err(r->o.in, "%llu frame%s printed by perf only as '(inlined)', with no DSO, left "
		        "[unknown] (run perf script with --no-inline: symdb expands inlines itself)",
		        (unsigned long long)inlined_only, inlined_only == 1 ? "" : "s");
	}
	if (skipped && r->samples) { /* none: the one line is run()'s */
		prof_perf_progress_clear(r);
		cli_err(r->o.in, "%llu line%s not understood, skipped (first: line %llu)",
		        (unsigned long long)skipped, skipped == 1 ? "" : "s",
		        (unsigned long long)first);
	}
	return 0;
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
		if (GROW(st, cap, need)) {
			rc = -ENOMEM;
			break;
		}
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

/* s appended at buf[len] (truncated to sz) with control bytes as \xNN:
 * DSO paths come from the profile and the summary goes to a terminal. */
static int put_escaped(char *buf, size_t sz, size_t len, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	for (; *s && len + 5 < sz; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f) {
			memcpy(buf + len, (char[]){ '\\', 'x', hex[c >> 4], hex[c & 15] }, 4);
			len += 4;
		} else {
			buf[len++] = (char)c;
		}
	}
	if (len < sz)
		buf[len] = 0;
	return (int)len;
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
			len += snprintf(buf + len, sz - (size_t)len, "%s", sep);
			len = put_escaped(buf, sz, (size_t)len, r->mod[i].dso);
			sep = ", ";
		}
}

static int write_svg(struct perf_run *r, prof_folded *f, FILE *svg)
{
	char sub[512];
	summary(r, sub, sizeof sub);
	SYMDB_OPTS(prof_svg_opts, so, .title = r->o.title ? r->o.title : "symdb perf", .subtitle = sub);
	return prof_svg_write(f, svg, &so);
}

/* A write error (-errno) on out: named, and the outputs abandoned. */
static int write_failed(struct cli_outfile *bad, int rc, struct cli_outfile *other)
{
	cli_err(bad->name, "%s", strerror(-rc));
	cli_outfile_abort(bad);
	cli_outfile_abort(other);
	return CLI_EXIT_FAILED;
}

/* The folded text and the SVG are published (cli_outfile.h) only when both
 * are complete: a failure (the disk, a bad --svg path) leaves no partial or
 * stale-mixed output behind. */
static int write_outputs(struct perf_run *r, prof_folded *f)
{
	struct cli_outfile out, svg = { 0 };
	if (cli_outfile_open(&out, r->o.out) < 0)
		return CLI_EXIT_FAILED;
	if (r->o.svg && cli_outfile_open(&svg, r->o.svg) < 0) {
		cli_outfile_abort(&out);
		return CLI_EXIT_FAILED;
	}
	SYMDB_OPTS(prof_text_opts, to, .annotate = !r->o.no_annotate);
	int rc = prof_folded_write_text(f, out.f, &to);
	if (rc < 0)
		return write_failed(&out, rc, &svg);
	if (svg.f && (rc = write_svg(r, f, svg.f)) < 0)
		return write_failed(&svg, rc, &out);
	if (svg.f && cli_outfile_commit(&svg) < 0) {
		cli_outfile_abort(&out);
		return CLI_EXIT_FAILED;
	}
	return cli_outfile_commit(&out) < 0 ? CLI_EXIT_FAILED : 0;
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
		{ "--buildid-dir", offsetof(struct perf_opts, buildid_dir) },
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
		if (m == 0 && (m = cli_fetch_arg(&o->fetch, argc, argv, &i)) < 0)
			return CLI_EXIT_USAGE;
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
	if (!o->buildid_dir) { /* perf's default: $HOME/.debug */
		static char home_debug[4096];
		const char *home = getenv("HOME");
		o->buildid_dir = "";
		if (home && *home &&
		    (size_t)snprintf(home_debug, sizeof home_debug, "%s/.debug", home) < sizeof home_debug)
			o->buildid_dir = home_debug;
	}
	return 0;
}

static int open_symbolizer(struct perf_run *r, const struct cli_global *g)
{
	int rc = cli_query_open_db(g, r->o.no_build, &r->db);
	if (rc < 0)
		return rc;
	char ix[4096];
	const char *tmp = getenv("TMPDIR");
	const char *indexer = cli_query_indexer(ix, sizeof ix);
	/* A DSO asked about by build-id (its file is gone or another build)
	 * is fetched when the database lacks it (prof_perf_sym.c, through
	 * cli_fetch_id: its failures are said with their reason); fetching
	 * publishes, so it needs the database. */
	r->fetch = (struct cli_fetch_run){ .db = r->db, .before_line = progress_line, .arg = r };
	r->fetch.fo = r->db ? cli_fetch_opts(&r->o.fetch, indexer) : NULL;
	SYMDB_OPTS(symdb_symbolizer_opts, so,
	           .flags = r->o.no_build ? 0u : SYMDB_SYMBOLIZER_BUILD,
	           .indexer_path = r->o.no_build ? NULL : indexer,
	           .tmp_dir = tmp && tmp[0] == '/' ? tmp : NULL);
	if ((rc = symdb_symbolizer_create(r->db, &so, &r->sym)) < 0)
		cli_err(NULL, "%s", symdb_strerror(rc));
	return rc;
}

static void free_run(struct perf_run *r)
{
	cli_fetch_free(&r->o.fetch);
	for (size_t i = 0; i < r->nstr; i++)
		free(r->str[i]);
	for (size_t i = 0; i < r->nmod; i++) {
		free(r->mod[i].dso);
		free(r->mod[i].map_path);
		free(r->mod[i].debug);
		free(r->mod[i].cached);
		symdb_perfmap_close(r->mod[i].map);
	}
	for (size_t i = 0; i < r->nbid; i++) {
		free(r->bid[i].path);
		free(r->bid[i].hex);
	}
	free(r->bid);
	free(r->bid_of);
	free(r->key_of);
	free(r->maps);
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
	rc = f ? prof_perf_symbolize(r) : -ENOMEM;
	if (rc == 0)
		rc = fold(r, f);
	prof_perf_progress_clear(r);
	int ex = rc < 0 ? CLI_EXIT_FAILED : write_outputs(r, f);
	if (rc < 0)
		cli_err("perf", "%s", strerror(-rc));
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
