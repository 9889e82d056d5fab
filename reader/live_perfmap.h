/* SPDX-License-Identifier: MIT */
/*
 * live_perfmap.h - what the two readers of JIT symbol files share: the
 * handle behind symdb_perfmap_* (live_perfmap.c: the table, the text
 * format, refreshing) and the record reader of perf's jit-PID.dump format
 * (live_jitdump.c).  Internal.
 */
#ifndef SYMDB_LIVE_PERFMAP_H
#define SYMDB_LIVE_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symdb.h"

#ifndef RD_HIDDEN
#define RD_HIDDEN __attribute__((visibility("hidden")))
#endif

#define PM_HEAD 256 /* first bytes kept to notice an in-place rewrite */

/* One accepted line (or jitdump code-load record). */
struct pm_entry {
	uint64_t start, size;
	uint64_t line;  /* 1-based line (record) number in the file */
	uint64_t tag;   /* jitdump: the code_index; 0 for a text map */
	uint32_t name;  /* offset into names */
};

/* A range of addresses [start, end) answered by entry ent. */
struct pm_seg {
	uint64_t start, end;
	uint32_t ent;
};

enum pm_kind { PM_UNKNOWN, PM_TEXT, PM_JITDUMP };

struct symdb_perfmap {
	char *path;
	size_t max_line;
	int loaded;             /* the table answers for the file as last read */
	dev_t dev;
	ino_t ino;
	uint64_t offset;        /* bytes taken: complete lines (records) only */
	uint64_t lineno;        /* lines (records) taken so far */
	int skipping;           /* text: inside a line longer than max_line */
	uint64_t skip;          /* jitdump: bytes of a taken record still to pass */
	enum pm_kind kind;      /* decided by the first 4 bytes */
	int swapped;            /* jitdump written in the other byte order */
	int broken;             /* jitdump: a record size that cannot be; read no more */
	char head[PM_HEAD];     /* the file's first bytes as read */
	size_t head_len;
	struct pm_entry *ent;   /* in line order */
	size_t nent, ent_cap;
	struct pm_seg *seg;     /* sorted, disjoint */
	size_t nseg, seg_cap;
	char *names;            /* NUL-terminated names, back to back */
	size_t names_len, names_cap;
	symdb_perfmap_stats st;
};

/* Add an entry for the current line (m->lineno); a range past 2^64 or a
 * name too long for the table is counted as skipped instead.  0 or -ENOMEM.
 * name must not point into m->names. */
RD_HIDDEN int pm_add(symdb_perfmap *m, uint64_t start, uint64_t size, const char *name, size_t len,
                     uint64_t tag);
/* Count the current line (record) as skipped. */
RD_HIDDEN void pm_bad(symdb_perfmap *m);

/* jitdump magic "jItD" as the writer's uint32_t, and byte-swapped. */
#define PM_JITDUMP_MAGIC    0x4A695444u
#define PM_JITDUMP_MAGIC_SW 0x4454694Au

/* Take the complete records of buf[0..len), which starts at file offset
 * file_off (0: the file header first).  Returns the bytes used; a taken
 * record that runs past len leaves the rest in m->skip.  < 0: -ENOMEM. */
RD_HIDDEN ptrdiff_t pm_jitdump_take(symdb_perfmap *m, const unsigned char *buf, size_t len,
                                    uint64_t file_off);

#endif /* SYMDB_LIVE_PERFMAP_H */
