/* SPDX-License-Identifier: MIT */
/*
 * prof_perf_run.h - the state of one `symdb perf` run, shared by its
 * reading and folding (cmd_perf.c) and its symbolizing (prof_perf_sym.c).
 * Internal to the CLI; one run belongs to one thread.
 */
#ifndef SYMDB_PROF_PERF_RUN_H
#define SYMDB_PROF_PERF_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "cli_fetch.h"
#include "cli_fetch_id.h"
#include "profile.h"
#include "symdb.h"

#define KERNEL_MIN 0xffff800000000000ull /* x86-64 and arm64 kernel half */

enum mod_kind { MOD_NONE, MOD_FILE, MOD_KERNEL, MOD_VDSO, MOD_JIT };

struct pmodule {
	char *dso;          /* as perf printed it */
	const char *base;   /* its file name, for frames and the summary */
	long pid;           /* MOD_JIT: the process whose perf map names it */
	int kind;           /* enum mod_kind */
	const char *build_id; /* from mmap events or --build-ids; NULL */
	char *debug;        /* MOD_FILE: its debug file, whose symbol table names it */
	char *cached;       /* MOD_FILE: perf's copy of the recorded build, when
	                       the file at dso is another build or gone */
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

/* A file mapped into a process (an mmap event): where a runtime address
 * of a sample without a callchain comes from. */
struct pmap {
	long pid;
	uint64_t start, len, pgoff;
	uint32_t path; /* string id */
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
	const char *buildid_dir; /* perf's build-id cache (~/.debug); "" none */
	int period, no_comm, no_annotate, no_build, quiet, no_debug_names;
	struct cli_fetch fetch; /* --upstream, --debuginfod... (cli_fetch.h) */
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
	const char **bid_of;  /* by string id of a path: its latest build-id so far */
	uint32_t *key_of;     /* and the string id + 1 of "PATH\x1fBUILDID" (0: not yet) */
	size_t bid_of_n, bid_of_cap, key_of_cap;
	struct pmap *maps;    /* mmap events, in input order */
	size_t nmaps, maps_cap;
	uint64_t unplaced;    /* runtime addresses of files no mmap event placed */
	uint64_t samples, weight;
	/* symbolizing */
	symdb *db;
	symdb_symbolizer *sym;
	struct cli_fetch_run fetch; /* DSOs by build-id the database lacks */
	int progress;
	struct timespec last_progress;
	uint64_t done_locs;
};


/* cmd_perf.c */
/* *p grown to hold need elements of elem bytes (*cap updated): 0, or
 * -ENOMEM with *p as it was. */
int prof_perf_grow(void **p, size_t *cap, size_t need, size_t elem);
#define GROW(arr, cap, need) prof_perf_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))
/* The run's copy of s (NULL stays NULL); NULL with *rc = -ENOMEM. */
const char *prof_perf_intern(struct perf_run *r, const char *s, int *rc);
/* The build-id perf recorded for path (mmap events, --build-ids), or NULL. */
const char *prof_perf_build_id(const struct perf_run *r, const char *path);
/* "perf-PID.map" or "jit-PID.dump": a JIT's own file. */
int prof_perf_is_jit_file(const char *dso);
const char *prof_perf_base_name(const char *path);
/* A progress line on a terminal (at most four a second): a of b locations. */
void prof_perf_progress(struct perf_run *r, const char *what, uint64_t a, uint64_t b);
/* Clears the progress line before a line of its own goes to stderr. */
void prof_perf_progress_clear(struct perf_run *r);

/* prof_perf_sym.c */
/* Every location's frames (perf_run.frames), each kind of module through
 * its symdb API.  0 or -ENOMEM (other failures leave frames unnamed). */
int prof_perf_symbolize(struct perf_run *r);

#endif /* SYMDB_PROF_PERF_RUN_H */
