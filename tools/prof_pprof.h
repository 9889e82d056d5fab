/* SPDX-License-Identifier: MIT */
/*
 * prof_pprof.h - a pprof profile (profile.proto, through the protobuf-c code
 * generated at build time from the installed schema) held in memory so that
 * `symdb pprof` can read it, add what symbolization finds, and write it
 * again.  prof_pprof.c reads (gzip or plain), checks every reference and
 * writes (gzip); prof_pprof_sym.c symbolizes; prof_pprof_fold() turns the
 * samples into folded stacks for the flame graph.
 *
 * Internal to the CLI (tools/).  Not thread-safe: one prof_pprof belongs to
 * one thread.
 */
#ifndef SYMDB_PROF_PPROF_H
#define SYMDB_PROF_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "symdb.h"

typedef struct prof_pprof prof_pprof;

/* Read a profile from path ("-" = standard input): gzip'd (as pprof writes
 * it) or plain protobuf, then check it: ids non-zero and unique, every
 * string index inside the string table, every mapping, location and
 * function a record names present, one value per sample type.  0, or -1
 * with one line in err ("truncated gzip stream", "location 7 names
 * mapping 9, which the profile does not have"). */
int prof_pprof_read(const char *path, prof_pprof **out, char *err, size_t errsz);
void prof_pprof_free(prof_pprof *p);

/* What symbolization did, for the summary line. */
typedef struct prof_pprof_stats {
	size_t samples, locations;
	size_t addresses;     /* distinct (mapping, address) pairs sent to symdb */
	size_t resolved;      /* of those, the ones that got at least one Line */
	size_t located;       /* locations with Lines after the run */
	uint64_t weight, weight_located; /* sample weight (prof_pprof_weight) */
	size_t unknown_images;
	char unknown_names[256]; /* the first few, "a, b, c" */
} prof_pprof_stats;

/* What the command adds to symbolization (any member may be NULL):
 * progress after each batch of addresses (done of total distinct ones),
 * for its progress line on a terminal; fetch of a build-id that neither a
 * file nor the database has, from the command's sources (0 when it was
 * published to the database; the mapping's image is then opened). */
typedef struct prof_pprof_hooks {
	void (*progress)(void *arg, size_t done, size_t total);
	int (*fetch)(void *arg, const symdb_uuid *id);
	void *arg;
} prof_pprof_hooks;

/* Symbolize every location whose mapping names an image symdb can answer
 * for: its build-id in db, else its file (indexed on first sight when s
 * was made with SYMDB_SYMBOLIZER_BUILD; a file whose build-id is not the
 * mapping's is not used).  Locations that already have Lines are left
 * alone unless force.  Each distinct (mapping, address) is resolved once.
 * db may be NULL (files only); hooks may be NULL.  0, -ENOMEM, or
 * another negative code with err filled. */
int prof_pprof_symbolize(prof_pprof *p, symdb *db, symdb_symbolizer *s, int force,
                         const prof_pprof_hooks *hooks, prof_pprof_stats *st, char *err,
                         size_t errsz);

/* The profile as gzip'd protobuf in a malloc'd buffer.  0 or -ENOMEM. */
int prof_pprof_write(const prof_pprof *p, unsigned char **buf, size_t *len);

/* Every sample as a folded stack, root first, inline frames marked, with
 * the weight of the default sample type (else the last one).  The unit
 * ("samples", "nanoseconds"...) is left in *unit (owned by p). */
int prof_pprof_fold(const prof_pprof *p, prof_folded *f, const char **unit);

/* ---- internals shared by prof_pprof.c and prof_pprof_sym.c ---------------- */

/* The name pprof stores in Function.name for a C++ function (no
 * parameters, template arguments, return type, qualifiers or clone
 * suffixes) from full, its full demangled form, into out (room for
 * strlen(full) + 1 bytes).  0, or -1 for a form not understood
 * (prof_pprof_name.c). */
int prof_pprof_short_name(const char *full, char *out);

#include "profile.pb-c.h" /* generated from profile.proto at build time */

/* Record ids to indices: sorted pairs, looked up by binary search (with a
 * fast path for the usual dense ids 1..n). */
struct prof_id {
	uint64_t id;
	size_t idx;
};
struct prof_idmap {
	struct prof_id *v;
	size_t n;
};
/* The index of id in m, or SIZE_MAX. */
size_t prof_id_find(const struct prof_idmap *m, uint64_t id);
/* (Re)build p->funcs from pb->function: 0, or -1 with err filled (an id 0
 * or a duplicate). */
int prof_pprof_index_functions(prof_pprof *p, char *err, size_t errsz);
/* The sample value folded and summed: the default sample type's, else
 * the last (pprof's own choice); the profile has a sample type. */
size_t prof_pprof_value_index(const prof_pprof *p);

/* Memory for what symbolization adds (Lines, Functions, demangled names),
 * freed at once. */
struct prof_block;
void *prof_arena_alloc(struct prof_block **arena, size_t size);

struct prof_pprof {
	Perftools__Profiles__Profile *pb; /* as protobuf-c unpacked it */
	struct prof_idmap maps, locs, funcs;
	/* What symbolization replaced: pb points to arrays of ours while the
	 * unpacked message's own are kept here and put back before
	 * protobuf_c_message_free_unpacked(), which must free only those. */
	char **orig_strings;
	size_t orig_nstrings;
	Perftools__Profiles__Function **orig_funcs;
	size_t orig_nfuncs;
	struct prof_saved_lines {
		Perftools__Profiles__Line **line;
		size_t n_line;
		int changed;
	} *saved;             /* per location, once symbolization changes one */
	int replaced;          /* string_table and function are ours */
	struct prof_block *arena;
	symdb_image **images;  /* opened by build-id: names point into them */
	size_t nimages;
};

#endif /* SYMDB_PROF_PPROF_H */
