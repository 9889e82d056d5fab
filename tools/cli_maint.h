/* SPDX-License-Identifier: MIT */
/*
 * cli_maint.h - the maintenance subcommands (`verify`, `rm`, `gc`) and the
 * batched last-query bookkeeping `symdb query` does at exit (SPEC §12.6).
 * Kept apart from cli_util.h so the maintenance code has one owner.
 */
#ifndef SYMDB_CLI_MAINT_H
#define SYMDB_CLI_MAINT_H

#include <stddef.h>
#include <stdint.h>

#include "cli_util.h"
#include "symdb.h"

/* Exit status of `symdb verify --repair` when it found damage and removed
 * all of it (0 = clean, CLI_EXIT_DAMAGED = damage left). */
#define CLI_EXIT_REPAIRED 5

/* Default age below which an orphan or temp file may belong to a build in
 * progress (renamed but not yet committed) and is left alone. */
#define CLI_GRACE_DEFAULT 3600u
/* gc forgets negative fetch answers older than this (--miss-age): a day is
 * past any TTL a node would set (the default is 600 s), and an entry
 * removed early costs one more question to the sources. */
#define CLI_MISS_AGE_DEFAULT 86400u

#define CLI_STORED_FILE 0x1u /* the index file (`FILE`) exists */
#define CLI_STORED_COLD 0x2u /* its cold form (`FILE.lz4`) exists */

/* Which forms of an entry's index file are on disk (SPEC §12.8). */
struct cli_storage {
	unsigned forms;       /* CLI_STORED_* bits; 0 = neither (missing) */
	uint64_t disk_bytes;  /* bytes on disk, both forms together */
	uint64_t cold_bytes;  /* size of the cold form, 0 if absent */
};

/* Stat both forms of the index file `file` (symdb_entry.file, relative to
 * the database directory dbdir): 0 or -ENAMETOOLONG. */
CLI_HIDDEN int cli_entry_storage(const char *dbdir, const char *file, struct cli_storage *out);

CLI_HIDDEN int cli_cmd_verify(const struct cli_global *g, int argc, char **argv);
CLI_HIDDEN int cli_cmd_rm(const struct cli_global *g, int argc, char **argv);
CLI_HIDDEN int cli_cmd_gc(const struct cli_global *g, int argc, char **argv);
/* cmd_export.c: export bundles (SPEC §12.7). */
CLI_HIDDEN int cli_cmd_export(const struct cli_global *g, int argc, char **argv);
CLI_HIDDEN int cli_cmd_import(const struct cli_global *g, int argc, char **argv);
/* cmd_compact.c: cold storage (SPEC §12.8). */
CLI_HIDDEN int cli_cmd_compact(const struct cli_global *g, int argc, char **argv);
/* cmd_reindex.c: rebuild the catalog from the index files (SPEC §12.6). */
CLI_HIDDEN int cli_cmd_reindex(const struct cli_global *g, int argc, char **argv);
/* cmd_reindex.c: for `verify --repair` on a catalog that cannot be opened:
 * if it is damaged, move it aside and reindex (one line on stderr each).
 * Returns 0 when that was done, else -1 (nothing was changed). */
CLI_HIDDEN int cli_reindex_recover(const char *dir);

/* Last-query times, batched: `add` (while db is open) notes an image whose
 * stored day differs from today's; `commit` (after db is closed: LMDB
 * forbids two handles on one environment in a process) opens the catalog
 * for writing once and records them.  Failures are silent: a read-only
 * database simply keeps no times. */
#define CLI_USED_MAX 64
struct cli_used {
	symdb_uuid ids[CLI_USED_MAX];
	size_t n;
	uint64_t now;
	char dir[4096];
};
CLI_HIDDEN void cli_used_init(struct cli_used *u, symdb *db);
CLI_HIDDEN void cli_used_add(struct cli_used *u, symdb *db, const symdb_image *img);
CLI_HIDDEN void cli_used_commit(struct cli_used *u);

/* Shared by gc and compact: every catalog entry with its last use (SPEC
 * §12.6: the recorded query time, else Built_At) and sizes, sorted least
 * recently used first (UUID order among equals: deterministic). */
struct cli_aged_image {
	symdb_uuid uuid;
	uint64_t last_use;
	uint64_t file_size; /* the catalog's File_Size */
	uint64_t disk_size; /* bytes on disk: a cold image's .lz4 (SPEC §12.8) */
	char *name, *file;
};
struct cli_aged {
	struct cli_aged_image *img;
	size_t n, cap;
	symdb *db;
};
CLI_HIDDEN int cli_aged_load(symdb *db, struct cli_aged *a);
CLI_HIDDEN void cli_aged_free(struct cli_aged *a);
/* Was it last used more than `age` seconds before `now`? */
CLI_HIDDEN int cli_aged_unused(const struct cli_aged_image *im, uint64_t now, uint64_t age);

/* Shared by verify and gc: walk DB/images/XX/ and DB/tmp/ (cli_maint.c)
 * through directory descriptors, following nothing inside DB (SPEC §12.1). */
struct cli_fs_visit {
	const char *rel;    /* "images/XX/NAME" or "tmp/NAME" ("images/XX" when unsafe) */
	const char *path;   /* DB/rel, for messages only: never opened by this path */
	uint64_t mtime;     /* unix seconds */
	int is_tmp;
	int dirfd;          /* the directory holding it: unlinkat(dirfd, name, 0) */
	const char *name;   /* its last component */
	const char *unsafe; /* NULL, or why it is never followed or removed
	                       ("symbolic link, not followed") */
	long fetch_pid;     /* > 0: a directory DB/tmp/fetch-HEX-PID-N, a
	                       debuginfod fetch's (SPEC §12.9), made by PID */
	unsigned owner;     /* DB's owner (uid): who else may own what is inside */
};
CLI_HIDDEN int cli_fs_walk(const char *dir, int (*fn)(const struct cli_fs_visit *v, void *arg),
                           void *arg);
/* Whether the process that made the fetch directory f is still running
 * (on this host: its PID is in the directory's name). */
CLI_HIDDEN int cli_fetch_dir_live(const struct cli_fs_visit *f);
/* Remove the fetch directory f and all it holds (with dry_run, nothing:
 * only sizes), through descriptors, never following a link; an unsafe
 * entry inside is named on stderr and left, and so is its directory.
 * *bytes adds the sizes of the files (to be) removed.  0, -ENOTEMPTY when
 * something unsafe was left, or another -errno (named on stderr). */
CLI_HIDDEN int cli_fs_remove_dir(const struct cli_fs_visit *f, int dry_run, uint64_t *bytes);
/* The same walk over DB/misses (symdb_fetch()'s negative answers, SPEC
 * §12.9), rel "misses/HEX"; a missing DB/misses is no error. */
CLI_HIDDEN int cli_fs_walk_misses(const char *dir,
                                  int (*fn)(const struct cli_fs_visit *v, void *arg), void *arg);
/* Serialize the commands that remove what they judge stray or expired (gc,
 * verify --repair): flock(LOCK_EX) on DB/images for the whole run (SPEC
 * §12.6), so that two of them never both count one removal, nor take an
 * image's file that another is removing for an orphan.  Returns the fd to
 * close, -ENOENT when there is nothing to lock (no DB/images, or a symbolic
 * link there), or another -errno. */
CLI_HIDDEN int cli_maint_lock(const char *dir);
/* Sorted set of the file paths the catalog names, for orphan checks. */
struct cli_catfiles {
	char **files;
	size_t n, cap;
};
CLI_HIDDEN int cli_catfiles_load(symdb *db, struct cli_catfiles *cf);
CLI_HIDDEN int cli_catfiles_has(const struct cli_catfiles *cf, const char *rel);
/* What a file under DB/images/ is to the catalog (SPEC §12.8): */
enum cli_file_role {
	CLI_FILE_STRAY,     /* named by no entry: an orphan */
	CLI_FILE_INDEX,     /* an entry's index file, or its cold form alone */
	CLI_FILE_REDUNDANT  /* a cold form whose .symdb exists too: the leftover
	                       of a compaction or thaw that died in between */
};
CLI_HIDDEN enum cli_file_role cli_catfiles_role(const struct cli_catfiles *cf,
                                                const struct cli_fs_visit *f);
CLI_HIDDEN void cli_catfiles_free(struct cli_catfiles *cf);
/* "30d", "12h", "90m", "45s", "2w" or plain seconds. Returns 0 or -1. */
CLI_HIDDEN int cli_parse_duration(const char *s, uint64_t *out);
/* "50G", "512M", "64K", "1T" (powers of 1024) or plain bytes. */
CLI_HIDDEN int cli_parse_size(const char *s, uint64_t *out);
/* Whether something dated t is less than age old at now (no overflow for a
 * huge age; a date in the future counts as young). */
static inline int cli_younger(uint64_t t, uint64_t now, uint64_t age)
{
	return now < t || now - t < age;
}
/* The database directory the commands name in messages. */
CLI_HIDDEN void cli_db_name(const struct cli_global *g, char *buf, size_t bufsz);

#endif /* SYMDB_CLI_MAINT_H */
