/* SPDX-License-Identifier: MIT */
/*
 * reader_symbolize.h - what the files of symdb_symbolize() share: the
 * address sort (reader_symbolize_sort.c) and the name cache
 * (reader_symbolize_names.c).  Internal, not installed.
 */
#ifndef SYMDB_READER_SYMBOLIZE_H
#define SYMDB_READER_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "reader_internal.h"

/* A sort key: an address and the request it came from. */
struct rd_sort_ent {
	uint64_t addr;
	uint32_t idx;
};

/*
 * Stable radix sort of a[0..n) by addr; ties keep their order.  tmp holds n
 * entries, packed 2 * n words.  Sorted input costs one scan.
 */
RD_HIDDEN void rd_sort_by_addr(struct rd_sort_ent *a, struct rd_sort_ent *tmp,
                               uint64_t *packed, size_t n);

/*
 * Demangled names by name pointer (names that point into mappings the
 * context keeps open): one demangling per distinct name.  Results live in
 * blocks that never move while a call runs; rd_names_begin() starts over
 * when the cache grew past its bounds, so memory stays bounded.
 */
struct rd_name_slot {
	const char *key;   /* NULL = empty */
	const char *value; /* the demangled name, or key itself */
};

struct rd_name_block {
	char *p;
	size_t cap;
};

struct rd_names {
	struct rd_name_slot *slot; /* RD_NAME_SLOTS, NULL until first used */
	size_t used;
	struct rd_name_block *blk;
	size_t nblk, blk_cap;
	size_t cur, off;           /* the block being filled, and its fill */
	size_t bytes;              /* arena bytes handed out since the last clear */
	char *dm;                  /* symdb_demangle()'s buffer */
	size_t dm_cap;
};

/* At the start of a call: clear the cache when it is over its bounds. */
RD_HIDDEN void rd_names_begin(struct rd_names *c);
/* Clear it now: names it holds may point into a mapping that is going away. */
RD_HIDDEN void rd_names_clear(struct rd_names *c);
/* The demangled form of name (name itself when it does not demangle), or
 * NULL without memory.  Valid until the next rd_names_begin(). */
RD_HIDDEN const char *rd_names_demangle(struct rd_names *c, const char *name);
RD_HIDDEN void rd_names_fini(struct rd_names *c);


/* ---- the context (reader_symbolize.c) and the batch (reader_symbolize_batch.c) ---- */

/* An image the context found for a UUID: open, or why not. */
struct sym_image {
	symdb_uuid id;
	symdb_image *img;  /* NULL when it could not be opened */
	int status, error; /* when img is NULL: SYMDB_SYM_* and the code */
	uint64_t call;     /* the call that failed to open it (retried after) */
	uint64_t gen;      /* the catalog's generation then (rd_catalog_generation):
	                      retried once it moved, as only a commit can index
	                      or repair the image */
	int build_failed;  /* first sight tried and failed: not built again */
	int fetch_tried;   /* SYMDB_SYMBOLIZER_FETCH: fetched once, not again */
	unsigned names;    /* SYMDB_OPEN_NAMES_* of the file named (SPEC §7.2.2):
	                      part of the key, X and X.debug get their own handle */
	uint64_t source;   /* a fallback identity opened by path: XXH3-64 of the
	                      file's bytes (part of the key, SPEC §5.2); else 0 */
};

/* A chunk of addresses per library call: its frames, the rows and strings
 * they came from are still in the cache when the chunk is finished. */
#define RESOLVE_CHUNK 2048

/* A file identity (stat) and the image of that file. */
struct sym_path {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_s, mtime_ns;
	int64_t image;     /* into images, or -1 with error set */
	int error;
};

/* Within one call: an image and its group number (valid when call matches). */
struct sym_group_slot {
	const symdb_image *img;
	uint64_t call;
	uint32_t group;
};

/* A request whose image was not found. */
struct sym_fail {
	uint32_t idx;
	int status, error;
};

/* An open-addressing table of indices + 1 (0 = empty); power-of-two size. */
struct sym_index {
	uint32_t *slot;
	size_t cap, used;
};

struct symdb_symbolizer {
	symdb *db;
	unsigned open_flags;
	uint64_t call;                  /* counts calls, from 1 */
	uint64_t gen_call, gen;         /* the catalog's generation, read in call gen_call */

	struct sym_image *images;       /* by UUID: open images and failures */
	size_t nimages, images_cap;
	struct sym_index by_uuid;
	struct sym_path *paths;         /* by file identity */
	size_t npaths, paths_cap;
	struct sym_index by_path;
	struct sym_group_slot *groups;  /* by image pointer, within a call */
	size_t groups_cap, ngroups;
	const symdb_image **group_img;  /* group -> image */
	size_t group_img_cap;

	/* per-call arrays: arr_cap entries each (packed twice that) */
	uint32_t *gid;                  /* request -> group, or UINT32_MAX when failed */
	struct sym_fail *fail;          /* requests whose image was not found */
	struct rd_sort_ent *ord, *tmp;
	uint64_t *packed, *addrs;
	symdb_result *res;              /* by sorted position (late results only) */
	size_t res_cap;
	symdb_result cres[RESOLVE_CHUNK]; /* one chunk's results */
	unsigned char *chunk_out;       /* results NULL: one chunk of results */
	size_t chunk_out_cap;
	size_t arr_cap;
	size_t *gstart;                 /* groups + 1 counters */
	size_t gstart_cap;
	uint32_t *dm_copy;              /* demangle_mixed: frame -> its demangled copy */
	size_t dm_copy_cap;
	uint32_t *order;                /* SYMDB_SYMBOLIZE_ORDER: ord's indices */
	size_t order_cap, norder;
	symdb_frame *frames;            /* everything the library wrote */
	size_t frames_cap;
	size_t frames_bytes;            /* its mapping's size, 0 when malloc'd */
	unsigned char *out_frames;      /* frames repacked for a caller's frame_sz */
	size_t out_frames_cap;
	struct rd_names names;
	int saw_damage;                 /* a result of the last call was damaged by a
	                                   fault (reader_fault.c): the next call drops
	                                   such images and the name cache */

	/* first sight (reader_symbolize_build.c) */
	int build;                      /* SYMDB_SYMBOLIZER_BUILD */
	char *indexer_path, *tmp_dir;   /* copies, NULL = defaults */
	symdb_warning_fn on_warning;
	void *on_warning_arg;
	struct symdb_builder *builder;  /* on db, opened by the first build */
	int private_only;               /* db cannot take indexes: build privately */
	char build_err[1024];           /* why the last open or first-sight build failed */

	/* fetch on first sight (reader_symbolize_fetch.c) */
	struct symdb_fetch_opts *fetch; /* a deep copy, NULL without the flag */
	uint64_t fetch_call;            /* the call whose deadline fetch_deadline is */
	int64_t fetch_deadline;         /* ms, rd_fetch_now_ms() clock */
};

/* realloc *pp (of *cap elements of elem bytes) to hold need: capacity
 * doubling from 64.  0 or -ENOMEM. */
RD_HIDDEN int rd_sym_grow(void *pp, size_t *cap, size_t need, size_t elem);
/* Whether two requests name their image alike (pointers or contents). */
RD_HIDDEN int rd_sym_same_ref(const symdb_request *a, const symdb_request *b);
/* The image a request names (opened on first use), or NULL with *status
 * (SYMDB_SYM_*) and *err.  0 or -ENOMEM. */
RD_HIDDEN int rd_sym_find_image(symdb_symbolizer *s, const symdb_request *rq,
                                const symdb_image **img, int *status, int *err);
/* The group of img within the current call, numbered in order of first use. */
RD_HIDDEN int rd_sym_group_of(symdb_symbolizer *s, const symdb_image *img, uint32_t *out);
/* At the start of a call after a damaged result: close the context's images
 * whose mapping faulted (they are opened afresh when next named) and clear
 * the name cache, whose keys point into mappings. */
RD_HIDDEN void rd_sym_drop_damaged(symdb_symbolizer *s);
/* First sight: index path, whose image id the database lacks (damaged: it
 * holds a damaged file, replaced), and open the new index into *img.  0, or
 * the build's error with s->build_err set. */
RD_HIDDEN int rd_sym_first_sight(symdb_symbolizer *s, const char *path, const symdb_uuid *id,
                                 unsigned names, int damaged, symdb_image **img);
/* Index path into a private temporary database only (the shared one is
 * not written) and open that index into *img.  0, or the build's error. */
RD_HIDDEN int rd_sym_private(symdb_symbolizer *s, const char *path, unsigned names,
                             symdb_image **img);
/* SYMDB_SYMBOLIZER_FETCH: copy the caller's fetch options into s.  0,
 * SYMDB_E_INVAL or -ENOMEM. */
RD_HIDDEN int rd_sym_fetch_init(symdb_symbolizer *s, const struct symdb_fetch_opts *f);
/* Fetch id (not in the database) within this call's fetch deadline and open
 * it into *img.  0, or the fetch's code with s->build_err set. */
RD_HIDDEN int rd_sym_fetch(symdb_symbolizer *s, const symdb_uuid *id, unsigned names,
                           symdb_image **img);
RD_HIDDEN void rd_sym_fetch_fini(symdb_symbolizer *s);
/* Free what first sight keeps (the builder, the copied options). */
RD_HIDDEN void rd_sym_build_fini(symdb_symbolizer *s);
/* Free a frames array of the batch (bytes: its mapping's size, 0 if malloc'd). */
RD_HIDDEN void rd_sym_frames_free(symdb_frame *f, size_t bytes);

#endif /* SYMDB_READER_SYMBOLIZE_H */
