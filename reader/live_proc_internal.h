/* SPDX-License-Identifier: MIT */
/*
 * live_proc_internal.h - what the files of symdb_proc_* share:
 *   live_proc.c         the cache, the per-process tables, the batch call
 *   live_proc_maps.c    /proc/PID/maps and /proc/PID/stat
 *   live_proc_module.c  modules: a mapped file (or the vDSO) found, its ELF
 *                       segments read, its image opened through the context
 * Internal, not installed.
 */
#ifndef SYMDB_LIVE_PROC_INTERNAL_H
#define SYMDB_LIVE_PROC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "reader_internal.h"

#define LP_MAX_SEGS 16 /* PT_LOADs kept per module; real objects have 2 to 5 */

struct lp_seg {
	uint64_t off, filesz, memsz, vaddr;
	uint32_t exec;
};

/*
 * A module: one file (or vDSO image) as mapped, with the identity and the
 * segments that normalise addresses into it.  Found again by the (device,
 * inode, size, mtime) of its file; the vDSO (dev = ino = 0) by build-id.
 * A failure is remembered too, so a file that cannot be indexed is tried
 * once per cache, not once per batch.
 */
struct lp_module {
	uint64_t dev, ino, size, mtime_ns;
	symdb_uuid id;
	const symdb_image *img;  /* the context's; NULL when status != OK */
	int status, error;       /* SYMDB_PROC_OK or _NO_MODULE/_NO_ACCESS */
	struct lp_seg seg[LP_MAX_SEGS];
	unsigned nseg;
};

/* One line of /proc/PID/maps (or a caller's mapping).  mod is found on the
 * first address that needs it. */
struct lp_map {
	uint64_t start, end, pgoff;
	uint64_t dev, ino;   /* as maps shows them (0 for caller mappings) */
	uint32_t prot;
	uint32_t path;       /* offset into the table's strings; UINT32_MAX = none */
	int mod_state;       /* 0 not looked up, 1 found, < 0 -(status) with mod_error */
	int mod_error;
	struct lp_module *mod;
	const symdb_uuid *want_id; /* a caller's build-id, for this call only */
	const struct lp_seg *seg;  /* the segment it shows (lp_normalise), once known */
	int seg_state;             /* 0 not chosen yet, 1 seg (NULL: none), 2 by
	                              each address's file offset (lp_normalise) */
};

/* A process's mapping table, kept by (pid, start time). */
struct lp_table {
	int pid;
	uint64_t start_time;
	struct lp_map *map;  /* sorted by start, not overlapping */
	size_t nmap, map_cap;
	char *strs;
	size_t strs_len, strs_cap;
	int used;            /* a slot in use */
	char *raw;           /* the /proc/PID/maps text it was parsed from */
	size_t raw_len, raw_cap;
};

/* /proc/PID/stat's starttime (field 22): 0, -ESRCH, or -errno. */
RD_HIDDEN int lp_read_start_time(const char *proc_dir, int pid, uint64_t *out);
/* /proc/PID/maps's text into *buf (grown: *cap; NUL-terminated, *len
 * bytes): 0 or -errno, -ESRCH when the process is gone (a zombie's is
 * empty); errbuf says "/proc/PID/maps: reason". */
RD_HIDDEN int lp_read_maps(const char *proc_dir, int pid, char **buf, size_t *cap, size_t *len,
                           char *errbuf, size_t errbuf_sz);
/* Fill t (cleared first) from maps text s[0..len): 0 or -EPROTO, -ENOMEM. */
RD_HIDDEN int lp_parse_maps(struct lp_table *t, const char *s, size_t len);
/* Add one mapping to t (copying path); 0 or -ENOMEM. */
RD_HIDDEN int lp_table_add(struct lp_table *t, uint64_t start, uint64_t end, uint64_t pgoff,
                           uint64_t dev, uint64_t ino, uint32_t prot, const char *path,
                           size_t path_len);
/* Sort t's mappings by start. */
RD_HIDDEN void lp_table_sort(struct lp_table *t);
/* The mapping holding addr, or NULL. */
RD_HIDDEN struct lp_map *lp_table_find(struct lp_table *t, uint64_t addr);
RD_HIDDEN void lp_table_clear(struct lp_table *t);
RD_HIDDEN void lp_table_free(struct lp_table *t);
static inline const char *lp_map_path(const struct lp_table *t, const struct lp_map *m)
{
	return m->path == UINT32_MAX ? NULL : t->strs + m->path;
}

/* The cache (symdb.h's symdb_proc_cache). */
struct symdb_proc_cache {
	symdb_symbolizer *sym;
	char *proc_dir, *tmp_dir;
	symdb_proc_jit_fn jit_lookup;
	void *jit_arg;
	struct lp_table *tables;
	size_t ntables;
	struct lp_module **mods; /* stable pointers: maps point at them */
	size_t nmods, mods_cap;
	struct lp_table scratch;  /* symdb_proc_symbolize_maps()'s mappings */
	/* per-call arrays, grown with the largest batch */
	symdb_request *req;
	size_t req_cap;
	unsigned char *vdso_buf; /* the last vDSO read */
	size_t vdso_cap;
	char *maps_buf;          /* the last /proc/PID/maps read, when unchanged */
	size_t maps_cap, maps_len;
};

/* The module mapped at m of process pid (0: none; open paths as given):
 * sets m->mod, or m->mod_state < 0 with the status and m->mod_error. */
RD_HIDDEN void lp_module_find(struct symdb_proc_cache *c, int pid, struct lp_table *t,
                              struct lp_map *m);
/* addr (runtime, inside m, a mapping of table t) as a file offset and a
 * vaddr of m's module (SYMDB_ADDR_INVALID in no segment: page padding). */
RD_HIDDEN void lp_normalise(const struct lp_table *t, struct lp_map *m, uint64_t addr,
                            uint64_t *fileoff, uint64_t *vaddr);

#endif /* SYMDB_LIVE_PROC_INTERNAL_H */
