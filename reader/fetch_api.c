/* SPDX-License-Identifier: MIT */
/*
 * fetch_api.c - symdb_fetch() (symdb_fetch.h, SPEC §12.9): an image the
 * database lacks, asked of upstream index stores, then debuginfod servers,
 * within one deadline; the first source that delivers publishes it.
 *
 * Everything downloaded is hostile input, handled as the rest of libsymdb
 * handles input: an upstream's index file goes through
 * symdb_builder_import_file() (copied, every checksum, symdb_image_verify(),
 * its header UUID against the one asked for); debuginfod's executable and
 * debuginfo go through symdb_builder_add() (the sandboxed indexer), after
 * the download's own build-id was read and found to be the one asked for,
 * so a server cannot publish an image under a build-id nobody asked for.
 *
 * Only "every source answered that it has no such image" is a negative
 * answer, remembered in DB/misses (fetch_misses.c); a timeout, a refused
 * connection or a damaged download is not, so it is tried again next time.
 */
#define _GNU_SOURCE
#include "fetch_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_dir.h"
#include "format_layout.h"
#include "publish_internal.h"
#include "symdb_url.h"

#define RD_OPTS_LAST_symdb_fetch_opts cancel
#define FETCH_DEFAULT_TIMEOUT_MS 30000u
#define FETCH_DEFAULT_TTL_S 600u
#define FETCH_DEFAULT_MAX (4ull << 30)
#define FETCH_ENV_VALUE_MAX 4095u /* bytes of a value in the fetcher's environment */

/* The fetcher's environment: at most the 4 proxies and libdebuginfod's 5
 * variables, each "NAME=VALUE" in a slot of its own. */
#define FETCH_ENV_MAX 9
struct fetch_env {
	char slot[FETCH_ENV_MAX][4200];
	char *envp[FETCH_ENV_MAX + 1];
	int n;
};

/* One fetch: its options with defaults applied, and where it stands. */
struct fetch_ctx {
	symdb_builder *b;
	const symdb_uuid *id;
	symdb_fetch_opts o;
	const char *dbdir;
	char hex[2 * SYMDB_UUID_MAX + 1];
	int64_t deadline_ms;
	symdb_fetch_result *res;
	char err[1024]; /* the last source's failure, "ID: URL: reason" */
	int last;       /* ... and its code */
	int empty_only; /* fetch_sources' result is a store's index that answers
	                   nothing, every other source having none: a miss for
	                   the cache */
	int no_miss;    /* a "not found" that is not every server's answer:
	                   libdebuginfod folds several servers' errors into one
	                   -ENOENT, so with more than one it is not remembered */
	struct fetch_env env; /* the fetcher's, remade per source */
};

/* The last source's failure into c->err, "ID: URL: reason", with the
 * passwords of its URLs masked before it is escaped (fmt_escape: the URL
 * and the reason are the caller's and an upstream's bytes) and cut to
 * c->err's size: cut first, a password could lose the '@' that marks it (a
 * debuginfod list is up to 4095 bytes).  Returns rc. */
__attribute__((format(printf, 3, 4))) static int fetch_fail(struct fetch_ctx *c, int rc,
                                                            const char *fmt, ...)
{
	char line[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	symdb_url_mask(line, sizeof line);
	fmt_escape(c->err, sizeof c->err, line, strlen(line)); /* cut, now that it is masked */
	return rc;
}

static const char *fetch_exe(const symdb_fetch_opts *o)
{
	return o->fetcher_path && o->fetcher_path[0] ? o->fetcher_path : SYMDB_FETCHER_DEFAULT;
}

/* The caller's build options say SYMDB_BUILD_FORCE: the image is fetched
 * and published anew even when the database holds it (a damaged or stale
 * index) or a source answered lately that it has none, as `symdb build
 * FILE --force` rebuilds. */
static int fetch_force(const struct fetch_ctx *c)
{
	return c->o.build &&
	       c->o.build->sz >= offsetof(symdb_build_opts, flags) + sizeof c->o.build->flags &&
	       (c->o.build->flags & SYMDB_BUILD_FORCE);
}

/* ---- upstream index stores -------------------------------------------------- */

/* Add NAME=VALUE to e unless value is NULL or empty (the proxies and
 * debuginfod_urls were bounded by fetch_opts, the other values are ours
 * and short, and so are the names: it always fits). */
static void fetch_env_put(struct fetch_env *e, const char *name, const char *value)
{
	if (!value || !value[0] || e->n >= FETCH_ENV_MAX)
		return;
	snprintf(e->slot[e->n], sizeof e->slot[e->n], "%s=%s", name, value);
	e->envp[e->n] = e->slot[e->n];
	e->envp[++e->n] = NULL;
}

/* The proxies of the options, under the names libcurl reads (lowercase:
 * the one spelling it reads for every scheme), and nothing else: this
 * library reads no environment, and the fetcher inherits none. */
static void fetch_env_proxies(struct fetch_env *e, const symdb_fetch_opts *o)
{
	e->n = 0;
	e->envp[0] = NULL;
	fetch_env_put(e, "http_proxy", o->http_proxy);
	fetch_env_put(e, "https_proxy", o->https_proxy);
	fetch_env_put(e, "all_proxy", o->all_proxy);
	fetch_env_put(e, "no_proxy", o->no_proxy);
}

/* BASE/symdb/v1/XX/HEX.symdb (SPEC §12.9); base given as configured, with
 * or without a trailing slash.  A base with a ?query or #fragment is
 * refused (SYMDB_E_INVAL): the path would land inside it. */
static int fetch_store_url(char *url, size_t sz, const char *base, size_t blen, const char *hex)
{
	if (memchr(base, '?', blen) || memchr(base, '#', blen))
		return SYMDB_E_INVAL;
	while (blen && base[blen - 1] == '/')
		blen--;
	int n = snprintf(url, sz, "%.*s/symdb/v1/%.2s/%s.symdb", (int)blen, base, hex, hex);
	return n > 0 && (size_t)n < sz ? 0 : -ENAMETOOLONG;
}

/* The import's reason without the names of DB/tmp's files, which mean
 * nothing to the reader of the message: "invalid index file: truncated:
 * ...".  Cut in place. */
static const char *fetch_reason(char *why, const char *dbdir)
{
	char pre[4200];
	char *p, *q;

	snprintf(pre, sizeof pre, "%s/" FMT_LAYOUT_TMP "/", dbdir);
	while ((p = strstr(why, pre)) != NULL && (q = strstr(p, ": ")) != NULL)
		memmove(p, q + 2, strlen(q + 2) + 1);
	return why;
}

/* The download of one upstream into DB/tmp, then its import. */
static int fetch_upstream(struct fetch_ctx *c, const char *url)
{
	char tmp[4096], name[96];
	int fd, rc;

	snprintf(name, sizeof name, "fetch-%s", c->hex);
	if (fmt_layout_tmp(tmp, sizeof tmp, c->dbdir, name))
		return fmt_err(c->err, sizeof c->err, -ENAMETOOLONG, "%s: path too long", c->dbdir);
	fd = rd_safe_tmp_create(c->dbdir, tmp, c->err, sizeof c->err);
	if (fd < 0)
		return fd;
	struct rd_fetch_job j = { .exe = fetch_exe(&c->o), .mode = "url", .what = url,
		                  .out = { fd, -1 }, .max_bytes = c->o.max_bytes,
		                  .progress = (c->o.flags & SYMDB_FETCH_PROGRESS) != 0,
		                  .deadline_ms = c->deadline_ms, .cancel = c->o.cancel };
	fetch_env_proxies(&c->env, &c->o);
	j.env = c->env.envp;
	rc = rd_fetch_run(&j);
	close(fd);
	if (rc == 0) {
		c->res->bytes = strtoull(j.line, NULL, 10);
		SYMDB_OPTS(symdb_build_opts, bo, .flags = fetch_force(c) ? SYMDB_BUILD_FORCE : 0u,
		           .errbuf = j.line, .errbuf_sz = sizeof j.line);
		rc = symdb_builder_import_file(c->b, tmp, c->id, &bo, &c->res->build);
		if (rc)
			fetch_fail(c, rc, "%s: %s: %s", c->hex, url, fetch_reason(j.line, c->dbdir));
		else
			c->res->source = SYMDB_FETCH_UPSTREAM;
	} else if (rc != SYMDB_E_NOT_FOUND) {
		fetch_fail(c, rc, "%s: %s: %s", c->hex, url, j.line);
	}
	rd_safe_tmp_unlink(c->dbdir, tmp);
	if (rc == 0)
		snprintf(c->res->url, sizeof c->res->url, "%.1000s", url);
	return rc;
}

/* ---- debuginfod -------------------------------------------------------------- */

/* A private directory DB/tmp/fetch-HEX-PID-N for one debuginfod download,
 * reached through its descriptor only (db_dir.h): the indexer is given
 * /proc/self/fd/DIR/... paths, which no rename of DB/tmp can redirect. */
struct fetch_dir {
	int tmpfd, fd;
	char name[128];
	char bid[8 + SYMDB_UUID_MAX * 2]; /* ".build-id/XX" */
	char dbg[SYMDB_UUID_MAX * 2 + 8]; /* "REST.debug" */
	int exe_fd, dbg_fd, bid_fd;
};

/* Remove directory name under dirfd and what is in it, two levels deep
 * (libdebuginfod's cache: CACHE/HEX/{executable,debuginfo,their
 * temporaries} and its few files at the top), never following a link. */
static void remove_tree(int dirfd, const char *name, int depth)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(dir)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(fd, e->d_name, 0) < 0 && errno == EISDIR && depth > 0)
			remove_tree(fd, e->d_name, depth - 1);
	}
	closedir(dir);
	unlinkat(dirfd, name, AT_REMOVEDIR);
}

static void fetch_dir_close(struct fetch_dir *d)
{
	if (d->fd >= 0)
		remove_tree(d->fd, "cache", 2); /* a private download cache */
	if (d->bid_fd >= 0) {
		unlinkat(d->bid_fd, d->dbg, 0);
		close(d->bid_fd);
		unlinkat(d->fd, d->bid, AT_REMOVEDIR);
		unlinkat(d->fd, ".build-id", AT_REMOVEDIR);
	}
	if (d->exe_fd >= 0)
		close(d->exe_fd);
	if (d->dbg_fd >= 0)
		close(d->dbg_fd);
	if (d->fd >= 0) {
		unlinkat(d->fd, "exe", 0);
		close(d->fd);
		unlinkat(d->tmpfd, d->name, AT_REMOVEDIR);
	}
	if (d->tmpfd >= 0)
		close(d->tmpfd);
}

static int fetch_dir_open(struct fetch_dir *d, const struct fetch_ctx *c)
{
	static atomic_uint seq;
	rd_safedir t;
	int rc;

	memset(d, 0, sizeof *d);
	d->tmpfd = d->fd = d->exe_fd = d->dbg_fd = d->bid_fd = -1;
	if ((rc = rd_safedir_open(&t, c->dbdir, FMT_LAYOUT_TMP, 1, NULL, 0)) != 0)
		return rc;
	d->tmpfd = t.fd;
	for (int tries = 0;; tries++) {
		snprintf(d->name, sizeof d->name, "fetch-%s-%ld-%u", c->hex, (long)getpid(),
		         atomic_fetch_add(&seq, 1));
		if (mkdirat(d->tmpfd, d->name, 0700) == 0)
			break;
		if (errno != EEXIST || tries > 100)
			return -errno;
	}
	d->fd = openat(d->tmpfd, d->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->fd < 0)
		return -errno;
	snprintf(d->bid, sizeof d->bid, ".build-id/%.2s", c->hex);
	snprintf(d->dbg, sizeof d->dbg, "%s.debug", c->hex + 2);
	if (mkdirat(d->fd, ".build-id", 0700) < 0 || mkdirat(d->fd, d->bid, 0700) < 0 ||
	    (d->bid_fd = openat(d->fd, d->bid, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	d->exe_fd = openat(d->fd, "exe", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	d->dbg_fd = openat(d->bid_fd, d->dbg, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	                   0600);
	return d->exe_fd < 0 || d->dbg_fd < 0 ? -errno : 0;
}

/* The child's environment: the proxies and libdebuginfod's variables,
 * from the options only.  Without a cache named by the caller,
 * libdebuginfod's cache is a directory of this fetch's own (d), removed
 * with it: the published index is what is kept, and a shared cache kept
 * what it should not, a rejected download (asked for again only after
 * libdebuginfod's week-long cleaning) and the partial file of a download
 * the deadline killed (never removed). */
static int fetch_dbgd_env(struct fetch_ctx *c, const struct fetch_dir *d)
{
	char cache[4096], num[32];
	int64_t left_s = (c->deadline_ms - rd_fetch_now_ms() + 999) / 1000;

	if (c->o.debuginfod_cache && c->o.debuginfod_cache[0]) {
		snprintf(cache, sizeof cache, "%s", c->o.debuginfod_cache);
	} else {
		if (mkdirat(d->fd, "cache", 0700) < 0)
			return -errno;
		snprintf(cache, sizeof cache, "%s/" FMT_LAYOUT_TMP "/%s/cache", c->dbdir, d->name);
	}
	fetch_env_proxies(&c->env, &c->o);
	fetch_env_put(&c->env, "DEBUGINFOD_URLS", c->o.debuginfod_urls);
	fetch_env_put(&c->env, "DEBUGINFOD_CACHE_PATH", cache);
	snprintf(num, sizeof num, "%lld", (long long)(left_s > 0 ? left_s : 1));
	fetch_env_put(&c->env, "DEBUGINFOD_TIMEOUT", num);
	snprintf(num, sizeof num, "%llu", (unsigned long long)c->o.max_bytes);
	fetch_env_put(&c->env, "DEBUGINFOD_MAXSIZE", num);
	fetch_env_put(&c->env, "DEBUGINFOD_RETRY_LIMIT", "1");
	return 0;
}

/* The download at path (what: "executable" or "debuginfo") is an object
 * file whose build-id is c->hex: 0, or SYMDB_E_BAD_OBJECT with c->err set.
 * Messages name the download by what it is, not by its /proc/self/fd path. */
static int fetch_dbgd_same_id(struct fetch_ctx *c, const char *path, const char *what)
{
	char ghex[2 * SYMDB_UUID_MAX + 1];
	symdb_uuid got;

	if (symdb_file_uuid(path, NULL, &got) != 0)
		return fmt_err(c->err, sizeof c->err, SYMDB_E_BAD_OBJECT,
		               "%s: %s: %s: not an object file with a build-id", c->hex,
		               c->o.debuginfod_urls, what);
	symdb_uuid_format(&got, ghex);
	if (strcmp(ghex, c->hex) != 0)
		return fmt_err(c->err, sizeof c->err, SYMDB_E_BAD_OBJECT,
		               "%s: %s: %s: carries build-id %s", c->hex, c->o.debuginfod_urls, what,
		               ghex);
	return 0;
}

/* Whether the ELF file at fd has every section inside the file and a
 * .debug_info (or .zdebug_info) section: what the indexer needs of a debug
 * file before it uses one (else it indexes the binary alone, silently). */
static int usable_debug_file(int fd)
{
	struct stat st;
	size_t n, shstr;
	Elf *e;
	int found = 0, bad = 0;

	if (fstat(fd, &st) < 0 || elf_version(EV_CURRENT) == EV_NONE ||
	    !(e = elf_begin(fd, ELF_C_READ, NULL))) /* pread, as reader_uuid.c */
		return 0;
	if (elf_kind(e) != ELF_K_ELF || elf_getshdrnum(e, &n) != 0 || elf_getshdrstrndx(e, &shstr) != 0)
		bad = 1;
	for (Elf_Scn *s = NULL; !bad && (s = elf_nextscn(e, s)) != NULL;) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(s, &sh)) {
			bad = 1;
			break;
		}
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > (uint64_t)st.st_size || sh.sh_size > (uint64_t)st.st_size - sh.sh_offset))
			bad = 1;
		name = elf_strptr(e, shstr, sh.sh_name);
		found |= name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"));
	}
	elf_end(e);
	return !bad && found;
}

/* The download in d called what ("debuginfo") is an object file of
 * build-id c->hex with debug information the indexer can read: 0, or
 * SYMDB_E_BAD_OBJECT with c->err set. */
static int fetch_dbgd_check(struct fetch_ctx *c, const struct fetch_dir *d, const char *what)
{
	char path[256];

	snprintf(path, sizeof path, "/proc/self/fd/%d/%s/%s", d->fd, d->bid, d->dbg);
	if (!usable_debug_file(d->dbg_fd))
		return fmt_err(c->err, sizeof c->err, SYMDB_E_BAD_OBJECT,
		               "%s: %s: %s: not a debug file the indexer can read (truncated, or "
		               "no .debug_info)", c->hex, c->o.debuginfod_urls, what);
	return fetch_dbgd_same_id(c, path, what);
}

/* Index path (a download in d, what: "executable" or "debuginfo") unless it
 * carries another build-id. */
static int fetch_dbgd_index(struct fetch_ctx *c, const struct fetch_dir *d, const char *path,
                            const char *what)
{
	char eb[1024] = "", ep[1024]; /* ep: path as eb names it, escaped */
	char ddir[64];
	size_t pl = fmt_escape(ep, sizeof ep, path, strlen(path));
	int rc = fetch_dbgd_same_id(c, path, what);

	if (rc)
		return rc;
	symdb_build_opts bo;
	memset(&bo, 0, sizeof bo);
	if (c->o.build)
		memcpy(&bo, c->o.build, c->o.build->sz < sizeof bo ? c->o.build->sz : sizeof bo);
	bo.sz = sizeof bo;
	snprintf(ddir, sizeof ddir, "/proc/self/fd/%d", d->fd);
	bo.debug_dir = ddir;
	bo.flags = (bo.flags & (SYMDB_BUILD_FORCE | SYMDB_BUILD_NO_DWARF)) |
	           SYMDB_BUILD_NO_SOURCE_PATH;
	bo.errbuf = eb;
	bo.errbuf_sz = sizeof eb;
	/* The fetch's cancel flag stops the indexer too (-EINTR). */
	rc = publish_builder_add(c->b, path, &bo, c->o.cancel, &c->res->build);
	if (rc)
		return fetch_fail(c, rc, "%s: %s: %s: %s", c->hex, c->o.debuginfod_urls, what,
		               !eb[0]                                             ? symdb_strerror(rc)
		               : strncmp(eb, ep, pl) == 0 && eb[pl] == ':'   ? eb + pl + 2
		                                                                  : eb);
	return 0;
}

static int fetch_debuginfod(struct fetch_ctx *c)
{
	char path[256];
	unsigned long long exe = 0, dbg = 0;
	struct fetch_dir d;
	int rc = fetch_dir_open(&d, c);

	if (rc == 0)
		rc = fetch_dbgd_env(c, &d);
	if (rc) {
		fetch_dir_close(&d);
		return fmt_err(c->err, sizeof c->err, rc, "%s: %s/tmp: %s", c->hex, c->dbdir,
		               symdb_strerror(rc));
	}
	struct rd_fetch_job j = { .exe = fetch_exe(&c->o), .mode = "debuginfod", .what = c->hex,
		                  .env = c->env.envp, .out = { d.exe_fd, d.dbg_fd },
		                  .max_bytes = c->o.max_bytes,
		                  .progress = (c->o.flags & SYMDB_FETCH_PROGRESS) != 0,
		                  .deadline_ms = c->deadline_ms, .cancel = c->o.cancel };
	rc = rd_fetch_run(&j);
	if (rc == 0 && sscanf(j.line, "%llu %llu", &exe, &dbg) != 2)
		rc = fmt_err(j.line, sizeof j.line, -EIO, "unreadable status line");
	if (rc == 0) {
		/* The executable with its debuginfo beside it by build-id, as
		 * `symdb build` finds a debug file; or whichever came. */
		if (exe)
			snprintf(path, sizeof path, "/proc/self/fd/%d/exe", d.fd);
		else
			snprintf(path, sizeof path, "/proc/self/fd/%d/%s/%s", d.fd, d.bid, d.dbg);
		c->res->bytes = exe + dbg;
		/* The debuginfo the indexer finds beside the executable must be
		 * HEX's too: another build's would answer for it. */
		if (exe && dbg)
			rc = fetch_dbgd_check(c, &d, "debuginfo");
		if (rc == 0)
			rc = fetch_dbgd_index(c, &d, path, exe ? "executable" : "debuginfo");
		if (rc == 0) {
			c->res->source = SYMDB_FETCH_DEBUGINFOD;
			snprintf(c->res->url, sizeof c->res->url, "%s", c->o.debuginfod_urls);
		}
	} else if (rc != SYMDB_E_NOT_FOUND) {
		fetch_fail(c, rc, "%s: %s: %s", c->hex, c->o.debuginfod_urls, j.line);
	}
	fetch_dir_close(&d);
	return rc;
}

/* ---- symdb_fetch ------------------------------------------------------------- */

/* Each value handed to the fetcher in its environment fits its slot:
 * SYMDB_E_INVAL naming the one that does not (its value is not repeated:
 * a proxy's may hold a password). */
static int fetch_env_check(const symdb_fetch_opts *o)
{
	const char *names[] = { "http_proxy", "https_proxy", "all_proxy", "no_proxy",
		                "debuginfod_urls" };
	const char *values[] = { o->http_proxy, o->https_proxy, o->all_proxy, o->no_proxy,
		                 o->debuginfod_urls };

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (values[i] && strlen(values[i]) > FETCH_ENV_VALUE_MAX)
			return fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_INVAL,
			               "%s: longer than %u bytes", names[i], FETCH_ENV_VALUE_MAX);
	return 0;
}

static int fetch_opts(const symdb_fetch_opts *in, symdb_fetch_opts *o)
{
	unsigned flags;
	char *eb;
	size_t ebsz;
	int rc = rd_opts_prefix(in, RD_OPTS_END(symdb_fetch_opts),
	                        SYMDB_FETCH_NO_NEGATIVE_CACHE | SYMDB_FETCH_PROGRESS, &flags, &eb,
	                        &ebsz);

	memset(o, 0, sizeof *o);
	if (in)
		memcpy(o, in, in->sz < sizeof *o ? in->sz : sizeof *o);
	o->sz = sizeof *o;
	o->errbuf = eb;
	o->errbuf_sz = ebsz;
	if (rc)
		return rc;
	if (!o->timeout_ms)
		o->timeout_ms = FETCH_DEFAULT_TIMEOUT_MS;
	if (!o->negative_ttl_s)
		o->negative_ttl_s = FETCH_DEFAULT_TTL_S;
	if (!o->max_bytes)
		o->max_bytes = FETCH_DEFAULT_MAX;
	if (!o->upstreams)
		o->upstreams = "";
	if (!o->debuginfod_urls)
		o->debuginfod_urls = "";
	return fetch_env_check(o);
}

/* 1 when the catalog already has id (nothing to fetch), unless its index
 * answers nothing (SPEC §7.2): the source may have the debug information. */
static int fetch_have(struct fetch_ctx *c)
{
	rd_catalog *cat = publish_builder_catalog(c->b);
	rd_cat_entry e;
	char buf[1024], path[4096];

	if (rd_catalog_get(cat, c->id->bytes, c->id->len, &e, buf, sizeof buf) != 0)
		return 0;
	return fmt_layout_file(path, sizeof path, rd_catalog_dir(cat), e.file) != 0 ||
	       !rd_index_answers_nothing(path);
}

/* 1 when the catalog holds an index of id, whatever it answers. */
static int fetch_held(struct fetch_ctx *c)
{
	rd_cat_entry e;
	char buf[1024];

	return rd_catalog_get(publish_builder_catalog(c->b), c->id->bytes, c->id->len, &e, buf,
	                      sizeof buf) == 0;
}

/* How many URLs the space-separated list holds. */
static int url_count(const char *list)
{
	int n = 0;

	while (*(list += strspn(list, " \t\n"))) {
		n++;
		list += strcspn(list, " \t\n");
	}
	return n;
}

/*
 * Every source in order: 0 at the first that publishes an index that
 * answers something; else SYMDB_E_NOT_FOUND when each answered it has
 * none, or the last failure.  A store's index that answers nothing (SPEC
 * §7.2: a stripped binary indexed without its debug file) stays published,
 * but the later sources are asked too: a debuginfod server may have the
 * debug information, whose index then replaces it.  When every other
 * source answered it has none, the fetch of that empty index is the
 * result; when one failed, its failure is.
 */
static int fetch_sources(struct fetch_ctx *c)
{
	const char *u = c->o.upstreams;
	symdb_fetch_result *empty = NULL; /* (~12 KiB: not on the caller's stack) */
	int rc;

	while (*(u += strspn(u, " \t\n"))) {
		char url[4200];
		size_t n = strcspn(u, " \t\n");

		int bad = fetch_store_url(url, sizeof url, u, n, c->hex);
		if (bad == SYMDB_E_INVAL) /* a failure of this source, not a miss */
			c->last = fetch_fail(c, bad, "%s: %.*s: a source URL has no ?query or #fragment",
			                     c->hex, (int)(n < 4000 ? n : 4000), u);
		if (bad == 0) {
			rc = fetch_upstream(c, url);
			if (rc == 0 && fetch_have(c)) {
				free(empty);
				return 0;
			}
			if (rc == 0 && !empty) {
				if (!(empty = malloc(sizeof *empty)))
					return 0; /* the empty index it is, as before */
				*empty = *c->res;
			}
			if (rc && rc != SYMDB_E_NOT_FOUND)
				c->last = rc;
			if (rc == -ETIMEDOUT || rc == -EINTR)
				break;
		}
		u += n;
	}
	if (c->last != -ETIMEDOUT && c->last != -EINTR &&
	    c->o.debuginfod_urls[strspn(c->o.debuginfod_urls, " \t\n")]) {
		/* A UUID parsed from hex has no kind: debuginfod is asked, and
		 * answers 404 for what is not a build-id it knows.  libdebuginfod
		 * adds its path at the end of each URL, as fetch_store_url. */
		rc = strpbrk(c->o.debuginfod_urls, "?#")
		             ? fetch_fail(c, SYMDB_E_INVAL,
		                          "%s: %s: a source URL has no ?query or #fragment", c->hex,
		                          c->o.debuginfod_urls)
		             : fetch_debuginfod(c);
		if (rc == 0) {
			free(empty);
			/* An executable without its debuginfo (the server has
			 * none) indexes to nothing when it is stripped (SPEC
			 * §7.2): that is the fetch's result, remembered as a
			 * store's empty index is, or each query of it would
			 * download the executable again. */
			if (!fetch_have(c)) {
				c->empty_only = 1;
				c->no_miss |= url_count(c->o.debuginfod_urls) > 1;
			}
			return 0;
		}
		if (rc != SYMDB_E_NOT_FOUND)
			c->last = rc;
		else if (url_count(c->o.debuginfod_urls) > 1)
			c->no_miss = 1;
	}
	if (empty) {
		*c->res = *empty; /* (a later source's failure may have written it) */
		free(empty);
		/* A source that failed (timeout, unreachable, damaged download)
		 * may have the debug information: not a miss, and the failure is
		 * the caller's to report; the empty index stays published. */
		if (c->last)
			return c->last;
		c->empty_only = 1;
		return 0;
	}
	return c->last ? c->last : SYMDB_E_NOT_FOUND;
}

/*
 * One fetch of a build-id at a time across processes sharing the
 * database: N queries of one unknown image (a sanitizer's processes, a
 * profile's shards) would each download it.  The lock is a file
 * DB/tmp/fetch-HEX.lock under flock, waited for until the fetch's
 * deadline (then this process fetches all the same, as before).  Its
 * holder unlinks it before letting go, so a waiter that wakes on an
 * unlinked file tries again on the path.  Returns the descriptor to
 * close when done, or -1 (no lock: fetch anyway).
 */
static int fetch_lock(struct fetch_ctx *c, int *tmpfd)
{
	char name[2 * SYMDB_UUID_MAX + 16];
	rd_safedir t;

	*tmpfd = -1;
	if (rd_safedir_open(&t, c->dbdir, FMT_LAYOUT_TMP, 1, NULL, 0) != 0)
		return -1;
	snprintf(name, sizeof name, "fetch-%s.lock", c->hex);
	/* (A cancelled wait goes on without the lock: the fetch then stops
	 * before it asks anything, rd_fetch_run.) */
	while (rd_fetch_now_ms() < c->deadline_ms && !rd_fetch_cancelled(c->o.cancel)) {
		struct stat a, b;
		int fd = openat(t.fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			break;
		while (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK &&
		       rd_fetch_now_ms() < c->deadline_ms && !rd_fetch_cancelled(c->o.cancel))
			usleep(20 * 1000);
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &a) == 0 &&
		    fstatat(t.fd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev) {
			*tmpfd = t.fd;
			return fd;
		}
		close(fd); /* unlinked by its last holder, or the deadline: again */
	}
	rd_safedir_close(&t);
	return -1;
}

static void fetch_unlock(struct fetch_ctx *c, int fd, int tmpfd)
{
	char name[2 * SYMDB_UUID_MAX + 16];

	if (fd < 0)
		return;
	snprintf(name, sizeof name, "fetch-%s.lock", c->hex);
	unlinkat(tmpfd, name, 0); /* before the unlock: see fetch_lock */
	close(fd);
	close(tmpfd);
}

static int fetch_run_locked(struct fetch_ctx *c);

/* A fresh negative-cache entry for c->hex (another process's fetch, or an
 * earlier one, found no source): SYMDB_E_NOT_FOUND saying when; else 0. */
static int fetch_cached_miss(struct fetch_ctx *c)
{
	uint32_t age;

	if ((c->o.flags & SYMDB_FETCH_NO_NEGATIVE_CACHE) || fetch_force(c) ||
	    !rd_fetch_miss_fresh(c->dbdir, c->hex, c->o.negative_ttl_s, &age))
		return 0;
	c->res->source = SYMDB_FETCH_CACHED_MISS;
	return fmt_err(c->o.errbuf, c->o.errbuf_sz, SYMDB_E_NOT_FOUND,
	               "%s: not found on any source (answered %us ago; asked again after %us)",
	               c->hex, age, c->o.negative_ttl_s);
}

static int fetch_run(struct fetch_ctx *c)
{
	int rc;

	if (!fetch_force(c) && fetch_have(c)) {
		c->res->build.skipped = 1;
		return 0;
	}
	if (!c->o.upstreams[strspn(c->o.upstreams, " \t\n")] &&
	    !c->o.debuginfod_urls[strspn(c->o.debuginfod_urls, " \t\n")])
		return fmt_err(c->o.errbuf, c->o.errbuf_sz, SYMDB_E_NOT_FOUND,
		               "%s: not indexed, and no upstream or debuginfod server configured",
		               c->hex);
	if ((rc = fetch_cached_miss(c)) != 0)
		return rc;
	int tmpfd, lk = fetch_lock(c, &tmpfd);
	/* The holder before us may have published it, or found no source. */
	if (lk >= 0 && !fetch_force(c) && fetch_have(c)) {
		fetch_unlock(c, lk, tmpfd);
		c->res->build.skipped = 1;
		return 0;
	}
	if (lk >= 0 && (rc = fetch_cached_miss(c)) != 0) {
		fetch_unlock(c, lk, tmpfd);
		return rc;
	}
	rc = fetch_run_locked(c);
	fetch_unlock(c, lk, tmpfd);
	return rc;
}

/* fetch_run's fetch proper, under the lock when one was had. */
static int fetch_run_locked(struct fetch_ctx *c)
{
	int rc = fetch_sources(c);
	if (rc == 0 && c->empty_only) {
		/* published, but no source has the debug information: remembered
		 * as a miss, so that the next fetch of it (each process that meets
		 * the empty index) asks nobody inside the negative TTL */
		if (!(c->o.flags & SYMDB_FETCH_NO_NEGATIVE_CACHE) && !c->no_miss)
			(void)rd_fetch_miss_put(c->dbdir, c->hex);
		return 0;
	}
	if (rc == 0) {
		(void)rd_fetch_miss_drop(c->dbdir, c->hex);
		return 0;
	}
	if (rc == SYMDB_E_NOT_FOUND) {
		if (!(c->o.flags & SYMDB_FETCH_NO_NEGATIVE_CACHE) && !c->no_miss)
			(void)rd_fetch_miss_put(c->dbdir, c->hex);
		return fmt_err(c->o.errbuf, c->o.errbuf_sz, rc, "%s: not found on any source",
		               c->hex);
	}
	/* The last failure says which source and why. */
	return fmt_err(c->o.errbuf, c->o.errbuf_sz, rc, "%s", c->err);
}

int symdb_fetch(symdb_builder *b, const symdb_uuid *id, const symdb_fetch_opts *opts,
                symdb_fetch_result *out)
{
	struct fetch_ctx *c;
	int rc;

	if (!b || !id || id->len < 1 || id->len > SYMDB_UUID_MAX ||
	    (out && out->sz < sizeof out->sz))
		return SYMDB_E_INVAL;
	if (!(c = calloc(1, sizeof *c)) || !(c->res = calloc(1, sizeof *c->res))) {
		free(c);
		return -ENOMEM;
	}
	rc = fetch_opts(opts, &c->o);
	if (rc == 0) {
		int64_t t0 = rd_fetch_now_ms();
		c->b = b;
		c->id = id;
		c->dbdir = rd_catalog_dir(publish_builder_catalog(b));
		c->deadline_ms = t0 + c->o.timeout_ms;
		c->res->sz = sizeof *c->res;
		c->res->build.sz = sizeof c->res->build;
		symdb_uuid_format(id, c->hex);
		rc = fetch_run(c);
		/* No source has more than the index the database holds (one
		 * that answers nothing, else nothing was asked): that index is
		 * the answer, "already indexed", as when a fetch published it. */
		if (rc == SYMDB_E_NOT_FOUND && !fetch_force(c) && fetch_held(c)) {
			rc = 0;
			c->res->source = SYMDB_FETCH_NONE;
			c->res->build.skipped = 1;
			if (c->o.errbuf && c->o.errbuf_sz)
				c->o.errbuf[0] = '\0';
		}
		c->res->elapsed_ms = (uint32_t)(rd_fetch_now_ms() - t0);
		/* The source URLs in them may carry a password (user:pw@). */
		if (c->o.errbuf && c->o.errbuf_sz)
			symdb_url_mask(c->o.errbuf, c->o.errbuf_sz);
		symdb_url_mask(c->res->url, sizeof c->res->url);
	}
	if (out)
		rd_out_put(out, c->res, sizeof *c->res);
	free(c->res);
	free(c);
	return rc;
}

int symdb_fetch_forget(symdb_builder *b, const symdb_uuid *id)
{
	char hex[2 * SYMDB_UUID_MAX + 1];

	if (!b || !id || id->len < 1 || id->len > SYMDB_UUID_MAX)
		return SYMDB_E_INVAL;
	symdb_uuid_format(id, hex);
	return rd_fetch_miss_drop(rd_catalog_dir(publish_builder_catalog(b)), hex);
}
