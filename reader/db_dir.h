/* SPDX-License-Identifier: MIT */
/*
 * db_dir.h - the one place that opens what lies inside a database directory
 * (SPEC §12.1, "Entries inside DB"): DB/images, DB/images/XX, DB/tmp and the
 * files in them are reached relative to directory descriptors, with
 * O_NOFOLLOW / AT_SYMLINK_NOFOLLOW / O_DIRECTORY, never by a path that the
 * kernel resolves again.  DB itself may be a symbolic link (the caller named
 * it); nothing inside it is followed.
 *
 * An entry inside DB is *unsafe* when it is a symbolic link (-ELOOP), or
 * *foreign*: owned by neither DB's owner nor the process's effective user
 * (-EPERM).  Unsafe entries are never followed, written through or removed;
 * the messages say why ("DB/images/ab: symbolic link, not followed").
 *
 * Internal: not installed.  Thread-safe: no state besides the descriptors
 * the caller holds.
 */
#ifndef SYMDB_DB_DIR_H
#define SYMDB_DB_DIR_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "rd_catalog.h"

/* An internal symdb_open_opts flag bit (never a public one): the path given
 * to rd_image_map / rd_cold_open_file is a file inside a database, opened
 * by rd_safe_open_path. */
#define RD_OPEN_IN_DB 0x80000000u

/* A directory inside DB (or DB itself), opened safely. */
typedef struct rd_safedir {
	int fd;      /* O_DIRECTORY descriptor, or -1 */
	uid_t owner; /* DB's owner: with geteuid(), the owners an entry may have */
} rd_safedir;

/* Open DB/rel, rel being "" (DB itself), "images", "tmp" or "images/XX",
 * one component at a time without following any.  With create, missing
 * components are made (mkdirat 0777, their parent fsynced).  Returns 0 with
 * d->fd open, or a negative code with one line in errbuf ("DB/images/ab:
 * symbolic link, not followed"; -ENOENT when missing and not created). */
RD_HIDDEN int rd_safedir_open(rd_safedir *d, const char *dbdir, const char *rel, int create,
                              char *errbuf, size_t errbuf_sz);

/* The same for DB/images/XX, XX being the first two characters of hex. */
RD_HIDDEN int rd_safedir_images(rd_safedir *d, const char *dbdir, const char *hex, int create,
                                char *errbuf, size_t errbuf_sz);

/* Open the directory that holds path = DB/images/XX/NAME (a catalog entry's
 * file or its cold form), DB being everything before "images/XX/NAME";
 * *name points at NAME inside path.  -EINVAL when path is not of that shape. */
RD_HIDDEN int rd_safedir_of(rd_safedir *d, const char *path, const char **name, int create,
                            char *errbuf, size_t errbuf_sz);

RD_HIDDEN void rd_safedir_close(rd_safedir *d);

/* rd_safedir_of, then rd_safedir_lock: d is path's directory, locked
 * (close it to unlock), *name path's last component.  0 or a negative code
 * (d closed). */
RD_HIDDEN int rd_safedir_lock_of(rd_safedir *d, const char *path, const char **name);

/* flock(LOCK_EX) on d's directory (SPEC §12.8's per-directory lock): d must
 * come from its own rd_safedir_open (flock locks the open file description,
 * so this also excludes other threads).  0 or -errno. */
RD_HIDDEN int rd_safedir_lock(rd_safedir *d);

/* Judge st, an lstat of an entry inside DB: 0 safe, -ELOOP a symbolic
 * link, -EPERM foreign (see above). */
RD_HIDDEN int rd_safe_judge(const rd_safedir *d, const struct stat *st);

/* fstatat(d, name, AT_SYMLINK_NOFOLLOW) and judge: 0 for a safe regular
 * file (st filled), -ENOENT, -ELOOP, -EPERM, or -EINVAL for another type. */
RD_HIDDEN int rd_safe_stat(const rd_safedir *d, const char *name, struct stat *st);

/* openat(d, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY), then the
 * rd_safe_stat rules on the open file.  Returns the descriptor, or -errno /
 * -ELOOP / -EPERM / -EINVAL. */
RD_HIDDEN int rd_safe_openat(const rd_safedir *d, const char *name, int flags);

/* Open path = DB/images/XX/NAME read-only by the rules above (each
 * component relative to its parent's descriptor).  Returns the descriptor
 * or a negative code as rd_safe_openat. */
RD_HIDDEN int rd_safe_open_path(const char *path);

/* Create a new file NAME.XXXXXX in d (O_CREAT | O_EXCL | O_NOFOLLOW, mode
 * 0600), the X's random; prefix is NAME, name receives NAME.XXXXXX.
 * Returns the descriptor or -errno. */
RD_HIDDEN int rd_safe_mktemp(const rd_safedir *d, const char *prefix, char *name, size_t namesz);

/* Create DB/tmp/NAME.XXXXXX given tmp = DB/tmp/NAME.XXXXXX (fmt_layout_tmp),
 * its X's replaced in place, through DB/tmp's descriptor (rd_safe_mktemp).
 * Returns the file's descriptor, or a negative code with one line in
 * errbuf. */
RD_HIDDEN int rd_safe_tmp_create(const char *dbdir, char *tmp, char *errbuf, size_t errbuf_sz);

/* Unlink tmp = DB/tmp/NAME through DB/tmp's descriptor (nothing when DB/tmp
 * is unsafe). */
RD_HIDDEN void rd_safe_tmp_unlink(const char *dbdir, const char *tmp);

/* fsync d's directory; a filesystem without directory fsync (EINVAL) is
 * not an error.  0 or -errno. */
RD_HIDDEN int rd_safedir_sync(const rd_safedir *d);

/* The reason for rd_safe_* codes -ELOOP and -EPERM, for messages: "symbolic
 * link, not followed", "owned by another user, not followed"; NULL for
 * other codes. */
RD_HIDDEN const char *rd_safe_why(int rc);

#endif /* SYMDB_DB_DIR_H */
