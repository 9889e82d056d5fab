/* SPDX-License-Identifier: MIT */
/*
 * cli_maint.c - helpers shared by `symdb verify` and `symdb gc`: walking the
 * files a database directory holds (DB/images/XX/ and DB/tmp/, SPEC §12.1),
 * the set of files the catalog names (to tell orphans), duration and size
 * parsing, and the batched last-query bookkeeping of `symdb query`.
 */
#define _GNU_SOURCE /* fstatat, fdopendir, O_NOFOLLOW, O_DIRECTORY */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_maint.h"

void cli_db_name(const struct cli_global *g, char *buf, size_t bufsz)
{
	if (g->db_dir)
		snprintf(buf, bufsz, "%s", g->db_dir);
	else if (cli_default_dir(buf, bufsz) < 0)
		snprintf(buf, bufsz, "(default database)");
}

/* ---- files ---------------------------------------------------------------- */

/* The walk below reaches every entry relative to its directory's
 * descriptor and follows nothing inside DB (SPEC §12.1 "Entries inside
 * DB"): a symbolic link, or an entry owned by neither DB's owner nor this
 * process's effective user (foreign), is visited with `unsafe` set and
 * never descended into.  The library applies the same rule (db_dir.c) to
 * every file it opens, renames or removes. */
struct walk {
	const char *dir; /* DB as given */
	uid_t owner;     /* DB's owner */
	int (*fn)(const struct cli_fs_visit *v, void *arg);
	void *arg;
};

static const char *unsafe_owner(uid_t owner, const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return "symbolic link, not followed";
	if (st->st_uid != owner && st->st_uid != geteuid())
		return "owned by another user, not followed";
	return NULL;
}

static const char *unsafe_why(const struct walk *w, const struct stat *st)
{
	return unsafe_owner(w->owner, st);
}

/* Visit an unsafe entry rel (in dirfd as name). */
static int visit_unsafe(const struct walk *w, int dirfd, const char *name, const char *rel,
                        const struct stat *st, int is_tmp)
{
	char path[4096];
	struct cli_fs_visit v = { rel, path, (uint64_t)st->st_mtime, is_tmp, dirfd, name,
		                  unsafe_why(w, st), 0, (unsigned)w->owner };

	snprintf(path, sizeof path, "%s/%s", w->dir, rel);
	return w->fn(&v, w->arg);
}

/* Open directory `name` in dirfd without following it; rel names it for
 * messages.  Returns the fd, 0 when it is missing or not a directory, or
 * -1 when it is unsafe (visited already) or cannot be read (*rc set). */
static int walk_opendir(const struct walk *w, int dirfd, const char *name, const char *rel,
                        int is_tmp, int *rc)
{
	struct stat st;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : (*rc = -errno, -1);
	if (unsafe_why(w, &st)) {
		*rc = visit_unsafe(w, dirfd, name, rel, &st, is_tmp);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return 0;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || unsafe_why(w, &st)) {
		/* replaced since the fstatat: report it as it is now */
		if (fd >= 0)
			close(fd);
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && unsafe_why(w, &st))
			*rc = visit_unsafe(w, dirfd, name, rel, &st, is_tmp);
		return -1;
	}
	return fd;
}

/* The PID in a name fetch-HEX-PID-N (fetch_api.c's fetch_dir_open), or 0
 * when name is not of that shape. */
static long fetch_dir_pid(const char *name)
{
	const char *n = strrchr(name, '-'), *p;
	size_t hex;
	long pid = 0;

	if (strncmp(name, "fetch-", 6) != 0 || !n || !n[1] || n[1 + strspn(n + 1, "0123456789")])
		return 0;
	for (p = n; p > name + 6 && p[-1] != '-'; p--)
		;
	hex = strspn(name + 6, "0123456789abcdef");
	if (p <= name + 7 || name + 6 + hex != p - 1 || p == n)
		return 0;
	for (; p < n && *p >= '0' && *p <= '9' && pid < 1L << 30; p++)
		pid = pid * 10 + (*p - '0');
	return p == n ? pid : 0;
}

/* Visit the regular files of the directory `name` in dirfd (one level),
 * rel being its path in DB, and in DB/tmp the directories of debuginfod
 * fetches (fetch_pid set).  Names starting with '.' are skipped. */
static int walk_one(const struct walk *w, int dirfd, const char *name, const char *sub,
                    int is_tmp)
{
	char path[4096], rel[4096];
	struct dirent *de;
	struct stat st;
	int fd, rc = 0;
	DIR *d;

	fd = walk_opendir(w, dirfd, name, sub, is_tmp, &rc);
	if (fd <= 0)
		return rc;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if ((size_t)snprintf(rel, sizeof rel, "%s/%s", sub, de->d_name) >= sizeof rel ||
		    (size_t)snprintf(path, sizeof path, "%s/%s", w->dir, rel) >= sizeof path)
			continue;
		struct cli_fs_visit v = { rel, path, (uint64_t)st.st_mtime, is_tmp, fd, de->d_name,
			                  unsafe_why(w, &st), 0, (unsigned)w->owner };
		if (!v.unsafe && is_tmp && S_ISDIR(st.st_mode))
			v.fetch_pid = fetch_dir_pid(de->d_name);
		if (!v.unsafe && !S_ISREG(st.st_mode) && !v.fetch_pid)
			continue;
		rc = w->fn(&v, w->arg);
	}
	closedir(d);
	return rc;
}

/* DB itself (the user's choice: followed), its owner in w: the fd or -errno. */
static int walk_open_db(struct walk *w)
{
	struct stat st;
	int dbfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (dbfd < 0 || fstat(dbfd, &st) < 0) {
		rc = -errno;
		if (dbfd >= 0)
			close(dbfd);
		return rc;
	}
	w->owner = st.st_uid;
	return dbfd;
}

int cli_fs_walk(const char *dir, int (*fn)(const struct cli_fs_visit *v, void *arg), void *arg)
{
	const char *images = symdb_layout_name(SYMDB_LAYOUT_IMAGES);
	struct walk w = { dir, 0, fn, arg };
	char sub[64];
	struct dirent *de;
	int dbfd, fd, rc = 0;
	DIR *d = NULL;

	if ((dbfd = walk_open_db(&w)) < 0)
		return dbfd;
	fd = walk_opendir(&w, dbfd, images, images, 0, &rc);
	if (fd > 0 && !(d = fdopendir(fd))) {
		rc = -errno;
		close(fd);
	}
	while (d && rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strlen(de->d_name) > 32)
			continue;
		if ((size_t)snprintf(sub, sizeof sub, "%s/%s", images, de->d_name) >= sizeof sub)
			continue;
		rc = walk_one(&w, fd, de->d_name, sub, 0);
	}
	if (d)
		closedir(d);
	if (rc == 0)
		rc = walk_one(&w, dbfd, symdb_layout_name(SYMDB_LAYOUT_TMP),
		              symdb_layout_name(SYMDB_LAYOUT_TMP), 1);
	close(dbfd);
	return rc;
}

int cli_fetch_dir_live(const struct cli_fs_visit *f)
{
	/* EPERM: a process of another user has that PID now; it may be a
	 * symdb serve of another account sharing the database: alive. */
	return f->fetch_pid > 0 && (kill((pid_t)f->fetch_pid, 0) == 0 || errno == EPERM);
}

static int remove_subdir(int fd, const char *name, const char *path, uid_t owner, int depth,
                         int dry_run, uint64_t *bytes);

/* Remove what the directory fd (path, for messages) holds, depth levels
 * deep at most (a fetch directory has three: cache/HEX/FILE). */
static int remove_inside(int fd, const char *path, uid_t owner, int depth, int dry_run,
                         uint64_t *bytes)
{
	char sub[4096];
	struct dirent *de;
	struct stat st;
	int dfd = dup(fd), rc = 0;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return -errno;
	}
	while ((de = readdir(d)) != NULL) {
		const char *why, *name = de->d_name;
		int r = 0;
		if (!strcmp(name, ".") || !strcmp(name, "..") ||
		    fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		snprintf(sub, sizeof sub, "%s/%s", path, name);
		if ((why = unsafe_owner(owner, &st)) != NULL) {
			cli_err(sub, "%s", why);
			rc = -ENOTEMPTY;
			continue;
		}
		if (S_ISDIR(st.st_mode) && depth == 0) {
			cli_err(sub, "too deep, not removed");
			r = -ENOTEMPTY;
		} else if (S_ISDIR(st.st_mode)) {
			r = remove_subdir(fd, name, sub, owner, depth - 1, dry_run, bytes);
		} else if (!dry_run && unlinkat(fd, name, 0) < 0 && errno != ENOENT)
			r = -errno;
		if (r == 0 && !S_ISDIR(st.st_mode))
			*bytes += (uint64_t)st.st_size;
		if (r && r != -ENOTEMPTY)
			cli_err(sub, "cannot remove: %s", symdb_strerror(r));
		if (r)
			rc = r;
	}
	closedir(d);
	return rc;
}

/* remove_inside for the directory name in fd, then the directory itself. */
static int remove_subdir(int fd, const char *name, const char *path, uid_t owner, int depth,
                         int dry_run, uint64_t *bytes)
{
	struct stat st;
	int sfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc;

	if (sfd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(sfd, &st) < 0 || unsafe_owner(owner, &st)) {
		close(sfd); /* replaced since it was judged: not this walk's */
		return -ENOTEMPTY;
	}
	rc = remove_inside(sfd, path, owner, depth, dry_run, bytes);
	close(sfd);
	if (rc == 0 && !dry_run && unlinkat(fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = -errno;
	return rc;
}

int cli_fs_remove_dir(const struct cli_fs_visit *f, int dry_run, uint64_t *bytes)
{
	int rc = remove_subdir(f->dirfd, f->name, f->path, (uid_t)f->owner, 3, dry_run, bytes);
	if (rc && rc != -ENOTEMPTY)
		cli_err(f->path, "cannot remove: %s", symdb_strerror(rc));
	return rc;
}

int cli_fs_walk_misses(const char *dir, int (*fn)(const struct cli_fs_visit *v, void *arg),
                       void *arg)
{
	const char *misses = symdb_layout_name(SYMDB_LAYOUT_MISSES);
	struct walk w = { dir, 0, fn, arg };
	int dbfd = walk_open_db(&w), rc;

	if (dbfd < 0)
		return dbfd;
	rc = walk_one(&w, dbfd, misses, misses, 0);
	close(dbfd);
	return rc;
}

int cli_maint_lock(const char *dir)
{
	char path[4096];
	int fd;

	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir,
	                     symdb_layout_name(SYMDB_LAYOUT_IMAGES)) >= sizeof path)
		return -ENAMETOOLONG;
	/* O_NOFOLLOW: a DB/images that is a symbolic link is not locked (nor
	 * walked: cli_fs_walk reports it). */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP || errno == ENOTDIR ? -ENOENT : -errno;
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			int rc = -errno;
			close(fd);
			return rc;
		}
	}
	return fd;
}

/* ---- the catalog's files -------------------------------------------------- */

static int add_file(const symdb_entry *e, void *arg)
{
	struct cli_catfiles *cf = arg;

	if (cf->n == cf->cap) {
		size_t cap = cf->cap ? 2 * cf->cap : 256;
		char **p = realloc(cf->files, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		cf->files = p;
		cf->cap = cap;
	}
	cf->files[cf->n] = strdup(e->file);
	return cf->files[cf->n++] ? 0 : -ENOMEM;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int aged_add(const symdb_entry *e, void *arg)
{
	struct cli_aged *a = arg;
	struct cli_aged_image *im;
	struct cli_storage sg;

	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 256;
		struct cli_aged_image *p = realloc(a->img, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		a->img = p;
		a->cap = cap;
	}
	im = &a->img[a->n];
	im->uuid = e->uuid;
	im->last_use = e->built_at;
	im->file_size = e->file_size;
	im->disk_size = cli_entry_storage(symdb_dir(a->db), e->file, &sg) == 0 && sg.forms
	                        ? sg.disk_bytes
	                        : e->file_size;
	im->name = strdup(e->image_name ? e->image_name : "");
	im->file = strdup(e->file);
	if (!im->name || !im->file) {
		free(im->name);
		free(im->file);
		return -ENOMEM;
	}
	a->n++;
	return 0;
}

static int cmp_lru(const void *pa, const void *pb)
{
	const struct cli_aged_image *x = pa, *y = pb;

	if (x->last_use != y->last_use)
		return x->last_use < y->last_use ? -1 : 1;
	if (x->uuid.len != y->uuid.len)
		return x->uuid.len < y->uuid.len ? -1 : 1;
	return memcmp(x->uuid.bytes, y->uuid.bytes, x->uuid.len);
}

int cli_aged_load(symdb *db, struct cli_aged *a)
{
	int rc;

	memset(a, 0, sizeof *a);
	a->db = db;
	rc = symdb_list(db, aged_add, a);
	if (rc)
		return rc;
	for (size_t i = 0; i < a->n; i++) {
		uint64_t t;
		if (symdb_last_used(db, &a->img[i].uuid, &t) == 0 && t > a->img[i].last_use)
			a->img[i].last_use = t;
	}
	if (a->n)
		qsort(a->img, a->n, sizeof *a->img, cmp_lru);
	return 0;
}

void cli_aged_free(struct cli_aged *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->img[i].name);
		free(a->img[i].file);
	}
	free(a->img);
	memset(a, 0, sizeof *a);
}

int cli_aged_unused(const struct cli_aged_image *im, uint64_t now, uint64_t age)
{
	return now > im->last_use && now - im->last_use > age;
}

int cli_catfiles_load(symdb *db, struct cli_catfiles *cf)
{
	int rc;

	memset(cf, 0, sizeof *cf);
	rc = symdb_list(db, add_file, cf);
	/* SYMDB_E_CATALOG: every readable entry was listed (verify goes on). */
	if ((rc == 0 || rc == SYMDB_E_CATALOG) && cf->n)
		qsort(cf->files, cf->n, sizeof *cf->files, cmp_str);
	return rc;
}

int cli_catfiles_has(const struct cli_catfiles *cf, const char *rel)
{
	return cf->n && bsearch(&rel, cf->files, cf->n, sizeof *cf->files, cmp_str) != NULL;
}

enum cli_file_role cli_catfiles_role(const struct cli_catfiles *cf, const struct cli_fs_visit *f)
{
	const char *cold = symdb_layout_name(SYMDB_LAYOUT_COLD_EXT);
	const size_t ext = strlen(cold);
	char base[4096];
	size_t n = strlen(f->rel);
	struct stat st;

	if (cli_catfiles_has(cf, f->rel))
		return CLI_FILE_INDEX;
	if (n <= ext || strcmp(f->rel + n - ext, cold) != 0 || n - ext >= sizeof base)
		return CLI_FILE_STRAY;
	memcpy(base, f->rel, n - ext);
	base[n - ext] = 0;
	if (!cli_catfiles_has(cf, base))
		return CLI_FILE_STRAY;
	/* Its .symdb sibling: f->name minus the cold suffix, in the same
	 * directory (never followed). */
	snprintf(base, sizeof base, "%.*s", (int)(strlen(f->name) - ext), f->name);
	return fstatat(f->dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 ? CLI_FILE_REDUNDANT
	                                                              : CLI_FILE_INDEX;
}

void cli_catfiles_free(struct cli_catfiles *cf)
{
	for (size_t i = 0; i < cf->n; i++)
		free(cf->files[i]);
	free(cf->files);
	memset(cf, 0, sizeof *cf);
}

/* ---- parsing -------------------------------------------------------------- */

static int parse_scaled(const char *s, const char *units, const uint64_t *mult, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t m = 1;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end) {
		const char *u = strchr(units, *end);
		if (!u || end[1])
			return -1;
		m = mult[u - units];
	}
	if (m && v > UINT64_MAX / m)
		return -1;
	*out = (uint64_t)v * m;
	return 0;
}

int cli_parse_duration(const char *s, uint64_t *out)
{
	static const uint64_t mult[] = { 1, 60, 3600, 86400, 7 * 86400 };
	return parse_scaled(s, "smhdw", mult, out);
}

int cli_parse_size(const char *s, uint64_t *out)
{
	static const uint64_t mult[] = { 1, 1ull << 10, 1ull << 20, 1ull << 30, 1ull << 40,
	                                 1ull << 10, 1ull << 20, 1ull << 30, 1ull << 40 };
	return parse_scaled(s, "BKMGTkmgt", mult, out);
}

/* ---- last-query times ----------------------------------------------------- */

void cli_used_init(struct cli_used *u, symdb *db)
{
	memset(u, 0, sizeof *u);
	u->now = cli_now();
	if (db)
		snprintf(u->dir, sizeof u->dir, "%s", symdb_dir(db));
}

void cli_used_add(struct cli_used *u, symdb *db, const symdb_image *img)
{
	symdb_image_info info;
	uint64_t t;

	if (!db || !img || u->n == CLI_USED_MAX)
		return;
	info.sz = sizeof info;
	symdb_image_get_info(img, &info);
	for (size_t i = 0; i < u->n; i++)
		if (u->ids[i].len == info.uuid.len &&
		    !memcmp(u->ids[i].bytes, info.uuid.bytes, info.uuid.len))
			return;
	/* Day granularity: at most one catalog write per image per day. */
	if (symdb_last_used(db, &info.uuid, &t) == 0 && t / 86400 >= u->now / 86400)
		return;
	u->ids[u->n++] = info.uuid;
}

void cli_used_commit(struct cli_used *u)
{
	SYMDB_OPTS(symdb_open_opts, o, .flags = SYMDB_OPEN_WRITE);
	symdb *db;

	if (!u->n || !u->dir[0] || cli_open_db(u->dir, &o, &db) < 0)
		return;
	for (size_t i = 0; i < u->n; i++)
		symdb_mark_used(db, &u->ids[i], u->now);
	symdb_close(db);
}

int cli_entry_storage(const char *dbdir, const char *file, struct cli_storage *out)
{
	const char *cold = symdb_layout_name(SYMDB_LAYOUT_COLD_EXT);
	char path[4200];
	struct stat sb;

	memset(out, 0, sizeof *out);
	if ((size_t)snprintf(path, sizeof path, "%s/%s%s", dbdir, file, cold) >= sizeof path)
		return -ENAMETOOLONG;
	/* lstat: sizes only, and a symbolic link counts as no form. */
	if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
		out->forms |= CLI_STORED_COLD;
		out->cold_bytes = (uint64_t)sb.st_size;
		out->disk_bytes += (uint64_t)sb.st_size;
	}
	path[strlen(path) - strlen(cold)] = 0;
	if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
		out->forms |= CLI_STORED_FILE;
		out->disk_bytes += (uint64_t)sb.st_size;
	}
	return 0;
}
