/* SPDX-License-Identifier: MIT */
/*
 * cli_query_open.c - `symdb query`'s database and images: opened up front for
 * --obj/--uuid or per module on first use, failures reported the CLI's way.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symdb_build.h"

#include "cli_query.h"
#include "cli_slice.h"
#include "cli_target.h"

/* ---- opening the image ---------------------------------------------------- */

/* The one warning of a run whose database cannot be written (the library
 * words it the same way when it finds out later, at the first build). */
static void warn_private(const char *dir, const char *why)
{
	fprintf(stderr,
	        "symdb: warning: database %s cannot be written (%s); indexing into a private "
	        "temporary directory for this process\n",
	        dir, why);
}

/* The default database is created on first sight, as `symdb build` would
 * create it (with its parents). */
static int create_db(const char *dir, char *err, size_t errsz)
{
	symdb_builder *b = NULL;
	SYMDB_OPTS(symdb_build_opts, bo, .errbuf = err, .errbuf_sz = errsz);
	int rc = symdb_builder_open(dir, &bo, &b);
	symdb_builder_close(b);
	return rc;
}

int cli_query_open_db(const struct cli_global *g, int no_build, symdb **db)
{
	char err[512] = "";
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof(err));
	int rc = cli_open_db(g->db_dir, &o, db);
	if (rc == 0)
		return 0;
	char dir[4096] = "";
	if (g->db_dir)
		snprintf(dir, sizeof(dir), "%s", g->db_dir);
	else if (cli_default_dir(dir, sizeof(dir)) < 0)
		snprintf(dir, sizeof(dir), "(default database)");
	if (!no_build) {
		/* Answers come first: a database that cannot be had leaves
		 * the run with private indexes (db NULL) and one warning. */
		if (rc == -ENOENT && dir[0] != '(' && (rc = create_db(dir, err, sizeof err)) == 0 &&
		    (rc = cli_open_db(dir, &o, db)) == 0)
			return 0;
		*db = NULL;
		warn_private(dir, err[0] ? err : symdb_strerror(rc));
		return 0;
	}
	if (rc == -ENOENT)
		cli_err(dir, "no symdb database here (create it with 'symdb build FILE')");
	else
		cli_err_lib(dir, rc, err);
	return -CLI_EXIT_DATABASE;
}

/* The indexer first sight runs: $SYMDB_INDEXER when set (as `symdb build`
 * runs it), else symdb-indexer beside this executable (a build tree or a
 * moved install runs its own), else NULL for the library's installed one. */
const char *cli_query_indexer(char *buf, size_t sz)
{
	return cli_helper_exe("SYMDB_INDEXER", "symdb-indexer", buf, sz);
}

int cli_query_create_sym(struct query *q, int no_build)
{
	const char *tmp = getenv("TMPDIR");
	const char *indexer = cli_query_indexer(q->indexer_buf, sizeof q->indexer_buf);
	/* Images named by build-id are fetched on first sight (cli_fetch.h);
	 * fetching publishes, so it needs the database. */
	const symdb_fetch_opts *fo = q->db ? cli_fetch_opts(&q->fetch, indexer) : NULL;
	SYMDB_OPTS(symdb_symbolizer_opts, so,
	           .flags = cli_verify_flag(q->verify) |
	                    (no_build ? 0u : SYMDB_SYMBOLIZER_BUILD) |
	                    (fo ? SYMDB_SYMBOLIZER_FETCH : 0u),
	           .indexer_path = no_build ? NULL : indexer,
	           .tmp_dir = tmp && tmp[0] == '/' ? tmp : NULL, .fetch = fo);
	int rc = symdb_symbolizer_create(q->db, &so, &q->sym);
	q->indexer = indexer;
	if (rc < 0)
		cli_err(NULL, "%s", symdb_strerror(rc));
	return rc;
}

/* A library failure rc (err: its words) to open what: reported on stderr,
 * its short form left in msg (JSON's Error.Message); minus an exit code. */
static int open_failed(const char *what, int rc, const char *err, char *msg, size_t msz)
{
	int sys = rc < 0 && rc > SYMDB_E_FORMAT; /* -errno */
	snprintf(msg, msz, "%s", sys || !err[0] ? symdb_strerror(rc) : err);
	cli_err_lib(what, rc, err);
	return -cli_exit_for(rc);
}

/* An image the database lacks (--uuid HEX, a "BUILDID:" line): fetched
 * from the configured sources (cli_fetch.h) and opened.  0, a library code
 * when the fetch worked and the open did not, or -CLI_EXIT_FAILED with the
 * reason on stderr (and in msg, if given).  With msg, an image no source
 * has is SYMDB_E_NOT_INDEXED instead, unreported (the caller words it). */
static int fetch_uuid(struct query *q, const symdb_uuid *id, const symdb_open_opts *o,
                      symdb_image **img, char *msg, size_t msz)
{
	char err[1024] = "", hex[2 * SYMDB_UUID_MAX + 1];
	symdb_builder *b = NULL;
	SYMDB_OPTS(symdb_build_opts, bo, .errbuf = err, .errbuf_sz = sizeof err);
	symdb_fetch_opts fo = q->fetch.opts;
	int rc;

	symdb_uuid_format(id, hex);
	fo.errbuf = err;
	fo.errbuf_sz = sizeof err;
	rc = symdb_builder_open(symdb_dir(q->db), &bo, &b);
	if (rc == 0)
		rc = cli_fetch_run(b, id, &fo, NULL);
	symdb_builder_close(b);
	if (rc == SYMDB_E_NOT_FOUND && msg)
		return SYMDB_E_NOT_INDEXED;
	if (rc) {
		if (msg)
			snprintf(msg, msz, "%s", err[0] ? err : symdb_strerror(rc));
		cli_fetch_report(hex, rc, err);
		return -CLI_EXIT_FAILED;
	}
	return symdb_image_open_uuid(q->db, id, o, img);
}

/* An index that answers nothing (SPEC §7.2: its file had no symbol and no
 * DWARF) is one whose debug information a fetch source may have: fetched
 * over, and the empty index kept when nothing better comes. */
static void refetch_empty(struct query *q, const symdb_uuid *id, const symdb_open_opts *o,
                          symdb_image **img)
{
	SYMDB_OPTS(symdb_image_info, info);
	symdb_image *fresh = NULL;
	char msg[512];
	if (!q->fetch.opts.sz || !q->db || symdb_image_get_info(*img, &info) != 0 ||
	    !info.answers_nothing)
		return;
	if (fetch_uuid(q, id, o, &fresh, msg, sizeof msg) == 0) {
		symdb_image_close(*img);
		*img = fresh;
	}
}

static void describe_not_indexed(const char *obj, char *msg, size_t msz)
{
	symdb_uuid id;
	char hex[2 * SYMDB_UUID_MAX + 1];
	if (symdb_file_uuid(obj, NULL, &id) == 0) {
		symdb_uuid_format(&id, hex);
		snprintf(msg, msz, "not indexed (%s %s); run 'symdb build %s' first",
		         id.kind == SYMDB_UUID_GNU_BUILD_ID ? "build-id" : "image id", hex, obj);
	} else {
		snprintf(msg, msz, "not indexed; run 'symdb build %s' first", obj);
	}
}

/*
 * What llvm-symbolizer-14 says of a file it cannot read (JSON's
 * Error.Message, and "LLVMSymbolizer: error reading file: MSG" on stderr),
 * or NULL when the failure is symdb's own (an index, a database, an
 * indexer limit): llvm-symbolizer reads the file itself and would answer.
 */
static const char *llvm_reason(int rc)
{
	/* Not SYMDB_E_NO_UUID: llvm-symbolizer reads a Mach-O file without
	 * LC_UUID (an object file); symdb, which keys images by it, says so. */
	if (rc == SYMDB_E_BAD_OBJECT || rc == SYMDB_E_FORMAT)
		return "The file was not recognized as a valid object file";
	if (rc < 0 && rc > SYMDB_E_FORMAT && rc != -ENOMEM && rc != -ETIMEDOUT && rc != -ENOSPC)
		return strerror(-rc);
	return NULL;
}

/*
 * Open the image of a binary (obj) or of a UUID.  A binary's image comes
 * from the symbolizer context, indexed on first sight unless --no-build
 * (symdb_symbolizer_image): 1 is returned then, the image being the
 * context's (never closed here).  On failure the reason is printed on
 * stderr (llvm-symbolizer's words when it too cannot read the file, unless
 * --no-build, which keeps symdb's own words and exit codes), a
 * short form of it left in msg (JSON's Error.Message), and minus an exit
 * code returned, or OPEN_AS_LLVM when llvm-symbolizer-14 fails alike (it
 * answers "??" and exits 0).
 */
int cli_query_open_named(struct query *q, const char *obj, const char *uuid_hex,
                      symdb_image **img, char *msg, size_t msz)
{
	char err[1024] = "", file[4096];
	const char *arch = q->arch, *suffix = obj ? cli_split_arch(obj, file, sizeof file) : NULL;
	if (suffix) { /* FILE:ARCH: the file FILE, an ELF one too */
		obj = file;
		arch = suffix;
	}
	/* Table checksums only with --verify (SPEC §9): verifying reads the
	 * whole file, so one answer would cost time and RSS in proportion to
	 * the image; the structural check keeps a damaged file from crashing
	 * or reading outside the mapping, and `symdb verify` finds the rest. */
	SYMDB_OPTS(symdb_open_opts, o, .flags = cli_verify_flag(q->verify),
	           .errbuf = err, .errbuf_sz = sizeof(err));
	int rc = 0;
	const char *what = obj ? obj : uuid_hex;
	snprintf(msg, msz, "unable to open this image");
	SYMDB_OPTS(symdb_build_opts, first_sight, .indexer_path = q->indexer);
	if (obj && (rc = cli_open_slice(q->db, obj, arch, &o,
	                                q->no_build || !q->db ? NULL : &first_sight, img, msg,
	                                msz)) <= 0) {
		return rc; /* Mach-O: opened, or reported */
	} else if (obj && rc == CLI_SLICE_UNCHOSEN) {
		/* JSON carries it in the answer instead. */
		if (q->pr.style != CLI_STYLE_JSON)
			fprintf(stderr, "LLVMSymbolizer: error reading file: %s\n", msg);
		return OPEN_AS_LLVM;
	} else if (obj) {
		const symdb_image *ci = NULL;
		SYMDB_OPTS(symdb_symbolize_opts, so, .errbuf = err, .errbuf_sz = sizeof(err));
		rc = symdb_symbolizer_image(q->sym, obj, &so, &ci);
		if (rc == 0) {
			*img = (symdb_image *)ci;
			return 1;
		}
		/* A file whose image id can be read is an object file that
		 * failed to index (the indexer's limits, a crash): symdb's
		 * own failure, said symdb's way. */
		symdb_uuid id;
		char why[sizeof err] = "";
		SYMDB_OPTS(symdb_open_opts, uo, .errbuf = why, .errbuf_sz = sizeof why);
		int idrc = symdb_file_uuid(obj, &uo, &id);
		const char *llvm = q->no_build || idrc == 0 ? NULL : llvm_reason(rc);
		/* "FILE: Mach-O image without LC_UUID", "FILE: build-id longer
		 * than 32 bytes": the reason, not the code's name */
		if ((idrc == SYMDB_E_NO_UUID || idrc == SYMDB_E_TOO_BIG) && why[0])
			snprintf(err, sizeof err, "%s", why);
		if (llvm) {
			snprintf(msg, msz, "%s", llvm);
			/* JSON carries it in the answer instead. */
			if (q->pr.style != CLI_STYLE_JSON)
				fprintf(stderr, "LLVMSymbolizer: error reading file: %s\n", llvm);
			return OPEN_AS_LLVM;
		}
	} else {
		symdb_uuid id;
		/* A unique prefix names its image too; cli_target.c words the
		 * ambiguous, short and malformed ones. */
		int n = q->db ? symdb_lookup_prefix(q->db, uuid_hex, NULL, 0) : 0;
		if (n != 0 && (rc = cli_uuid_resolve(q->db, uuid_hex, &id)) < 0)
			return rc;
		if (n == 0 && symdb_uuid_parse(uuid_hex, &id) < 0) {
			cli_err(uuid_hex, "not a UUID (8 to 64 hex digits)");
			return -CLI_EXIT_USAGE;
		}
		rc = symdb_image_open_uuid(q->db, &id, &o, img);
		if (rc == SYMDB_E_NOT_INDEXED && q->fetch.opts.sz && q->db)
			rc = fetch_uuid(q, &id, &o, img, NULL, 0);
		else if (rc == 0)
			refetch_empty(q, &id, &o, img);
		if (rc == 0)
			return 0;
		if (rc == -CLI_EXIT_FAILED)
			return rc; /* the fetch's failure, reported */
	}
	if (rc == SYMDB_E_NOT_INDEXED && obj) {
		describe_not_indexed(obj, msg, msz);
		cli_err(obj, "%s", msg);
	} else if (rc == SYMDB_E_NOT_INDEXED) {
		snprintf(msg, msz, "not indexed in this database");
		cli_err(what, "%s", msg);
	} else {
		return open_failed(what, rc, err, msg, msz);
	}
	return -cli_exit_for(rc);
}

/*
 * Files whose image a module got from the symbolizer context, by identity
 * (device, inode, size, mtime: what the context's own path table keys on),
 * so that another path to the same file (a symbolic or hard link, a
 * /proc/PID/root/ path) shares that image without its first sight: a stream
 * that names thousands of such paths would otherwise read every file's
 * headers (cli_open_slice, the context's build-id) once per path.  Open
 * addressing over indices + 1 (0 = empty), doubled at half full.
 */
struct module_file {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_s, mtime_ns;
	symdb_image *img;
	uint32_t img_tag; /* of the module that opened img (query.mod_tag) */
};

struct module_files {
	struct module_file *file;
	size_t n, cap;
	uint32_t *slot;
	size_t slots;
};

static uint64_t file_hash(const struct module_file *f)
{
	uint64_t h = ((uint64_t)f->dev * 0x9E3779B97F4A7C15ull) ^ (uint64_t)f->ino;
	h = (h ^ (uint64_t)f->size ^ (uint64_t)f->mtime_ns) * 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 31);
}

static int file_same(const struct module_file *a, const struct module_file *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_s == b->mtime_s && a->mtime_ns == b->mtime_ns;
}

static struct module_file file_key(const struct stat *st)
{
	return (struct module_file){ .dev = st->st_dev, .ino = st->st_ino, .size = st->st_size,
		                     .mtime_s = (int64_t)st->st_mtim.tv_sec,
		                     .mtime_ns = (int64_t)st->st_mtim.tv_nsec };
}

/* The slot of key in fs: its entry, or the empty slot it would take. */
static size_t file_slot(const struct module_files *fs, const struct module_file *key)
{
	size_t mask = fs->slots - 1, h = (size_t)file_hash(key) & mask;
	while (fs->slot[h] && !file_same(&fs->file[fs->slot[h] - 1], key))
		h = (h + 1) & mask;
	return h;
}

static const struct module_file *file_image(const struct query *q, const struct module_file *key)
{
	const struct module_files *fs = q->files;
	if (!fs || !fs->slots)
		return NULL;
	uint32_t i1 = fs->slot[file_slot(fs, key)];
	return i1 ? &fs->file[i1 - 1] : NULL;
}

/* Remember module m's image as key's (nothing happens without memory: it
 * is a shortcut). */
static void file_remember(struct query *q, const struct module_file *key, const struct module *m)
{
	struct module_files *fs = q->files;
	if (!fs && !(fs = q->files = calloc(1, sizeof(*fs))))
		return;
	if (2 * (fs->n + 1) > fs->slots) {
		size_t cap = fs->slots ? 2 * fs->slots : 64;
		uint32_t *slot = calloc(cap, sizeof(*slot));
		if (!slot)
			return;
		free(fs->slot);
		fs->slot = slot;
		fs->slots = cap;
		for (size_t i = 0; i < fs->n; i++)
			fs->slot[file_slot(fs, &fs->file[i])] = (uint32_t)i + 1;
	}
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? 2 * fs->cap : 64;
		struct module_file *f = realloc(fs->file, cap * sizeof(*f));
		if (!f)
			return;
		fs->file = f;
		fs->cap = cap;
	}
	size_t h = file_slot(fs, key);
	if (fs->slot[h])
		return;
	fs->file[fs->n] = *key;
	fs->file[fs->n].img = m->img;
	fs->file[fs->n].img_tag = q->mod_tag[m - q->mods];
	fs->slot[h] = (uint32_t)++fs->n;
}

void cli_query_files_free(struct query *q)
{
	if (!q->files)
		return;
	free(q->files->file);
	free(q->files->slot);
	free(q->files);
	q->files = NULL;
}

/*
 * The image of build-id id from DIR/.build-id/XX/REST.debug under each
 * --debug-file-directory DIR (none given: /usr/lib/debug), as llvm-16
 * looks for it: the first such path that exists is opened (indexed on
 * first sight), and its failure, reported by cli_query_open_named (msg:
 * its reason), is the module's, as llvm's.  Unlike llvm, a FIFO or a
 * device there is skipped unread, and an image that carries another
 * build-id is not used.  Returns 0 or 1 as cli_query_open_named,
 * SYMDB_E_NOT_INDEXED when no path held the image, or its failure.
 */
static int open_build_id_file(struct query *q, const symdb_uuid *id, symdb_image **img,
                              char *msg, size_t msz)
{
	static const char *const fallback[] = { "/usr/lib/debug" };
	const char *const *dirs = q->nbuild_id_dirs ? q->build_id_dirs : fallback;
	int ndirs = q->nbuild_id_dirs ? q->nbuild_id_dirs : 1;
	char hex[2 * SYMDB_UUID_MAX + 1], path[PATH_MAX];
	symdb_uuid_format(id, hex);
	for (int i = 0; i < ndirs && !q->no_build; i++) {
		struct stat st;
		int n = snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dirs[i], hex, hex + 2);
		if (n < 0 || (size_t)n >= sizeof(path) || stat(path, &st) != 0 ||
		    !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			continue;
		symdb_image *found = NULL;
		symdb_image_info info = { .sz = sizeof(info) };
		int rc = cli_query_open_named(q, path, NULL, &found, msg, msz);
		if (rc < 0)
			return rc;
		if (symdb_image_get_info(found, &info) == 0 && info.uuid.len == id->len &&
		    memcmp(info.uuid.bytes, id->bytes, id->len) == 0) {
			*img = found;
			return rc;
		}
		if (rc == 0)
			symdb_image_close(found);
	}
	return SYMDB_E_NOT_INDEXED;
}

/*
 * A "BUILDID:HEX" module's image (m->name is HEX, cli_query_input.c): the
 * database's image of exactly that build-id; else the debug file of that
 * build-id under the debug directories (open_build_id_file); else fetched
 * on first sight when fetch sources are set.  One that none has is
 * llvm-symbolizer's "could not find build ID" ("??" answers, exit 0; said
 * again at each request, m->id_missing); any other failure is symdb's, as
 * for --uuid.
 */
static int open_build_id(struct query *q, struct module *m, char *msg, size_t msz)
{
	char err[1024] = "";
	SYMDB_OPTS(symdb_open_opts, o, .flags = cli_verify_flag(q->verify),
	           .errbuf = err, .errbuf_sz = sizeof(err));
	symdb_uuid id;
	int rc = SYMDB_E_NOT_INDEXED;
	snprintf(msg, msz, "unable to open this image");
	if (symdb_uuid_parse(m->name, &id) == 0) {
		if (q->db && (rc = symdb_image_open_uuid(q->db, &id, &o, &m->img)) == 0)
			refetch_empty(q, &id, &o, &m->img);
		if (rc == SYMDB_E_NOT_INDEXED &&
		    (rc = open_build_id_file(q, &id, &m->img, msg, msz)) != SYMDB_E_NOT_INDEXED)
			return rc; /* opened, or its failure reported (msg: why) */
		if (rc == SYMDB_E_NOT_INDEXED && q->fetch.opts.sz && q->db)
			rc = fetch_uuid(q, &id, &o, &m->img, msg, msz);
	}
	if (rc == 0 || rc == -CLI_EXIT_FAILED)
		return rc; /* opened, or the fetch's failure reported (msg: why) */
	if (rc == SYMDB_E_NOT_INDEXED) {
		m->id_missing = 1; /* worded and said by cli_query_module_image */
		return OPEN_AS_LLVM;
	}
	return open_failed(m->name, rc, err, msg, msz);
}

/* m->error of a build-id nobody has: llvm's words, whole however long the
 * build-id (an argument's may be longer than any message buffer). */
static void id_missing_message(struct module *m)
{
	static const char fmt[] = "could not find build ID '%s'";
	size_t sz = sizeof(fmt) + m->len;
	char *s = malloc(sz);
	if (!s) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	snprintf(s, sz, fmt, m->name);
	free(m->error);
	m->error = s;
}

/* llvm-symbolizer looks for a build-id it could not find again at each
 * request, and says so again each time: so does a "BUILDID:" module whose
 * image is not found (JSON: cli_query_print.c prints its Error each time). */
void cli_query_build_id_missing(const struct query *q, const struct module *m)
{
	if (m->id_missing && q->pr.style != CLI_STYLE_JSON)
		fprintf(stderr, "LLVMSymbolizer: error reading file: %s\n", m->error);
}

/* A per-line module's image, opened on first use (a failure is reported
 * once and remembered).  A regular file whose identity an earlier module's
 * context image came from gets that image: the context would answer with
 * it (it keys its paths on the same identity), after reading the file.
 * Failures are not shared: each path's is reported in its own words. */
symdb_image *cli_query_module_image(struct query *q, struct module *m)
{
	if (m->state != 0) {
		cli_query_build_id_missing(q, m);
		return m->state > 0 ? m->img : NULL;
	}
	char msg[1024];
	if (m->build_id) {
		cli_query_module_opened(q, m, open_build_id(q, m, msg, sizeof(msg)), msg);
		if (m->id_missing) {
			id_missing_message(m);
			cli_query_build_id_missing(q, m); /* said at once, and at each request after */
		}
		return m->state > 0 ? m->img : NULL;
	}
	struct stat st;
	struct module_file key = { 0 };
	int known = stat(m->name, &st) == 0 && S_ISREG(st.st_mode);
	if (known)
		key = file_key(&st);
	const struct module_file *f = known ? file_image(q, &key) : NULL;
	if (f) {
		m->img = f->img;
		cli_query_module_opened(q, m, 1, NULL);
		cli_query_set_tag(q, (size_t)(m - q->mods), f->img_tag); /* one image, one tag */
		return m->img;
	}
	int rc = cli_query_open_named(q, m->name, NULL, &m->img, msg, sizeof(msg));
	cli_query_module_opened(q, m, rc, msg);
	/* The same file still (not replaced meanwhile): its image. */
	if (known && rc == 1 && stat(m->name, &st) == 0) {
		struct module_file now = file_key(&st);
		if (file_same(&now, &key))
			file_remember(q, &key, m);
	}
	return m->state > 0 ? m->img : NULL;
}

void cli_query_set_tag(struct query *q, size_t mod, uint32_t tag)
{
	size_t cap = q->mod_tag_cap;
	if (mod >= cap) {
		q->mod_tag = cli_query_grow(q->mod_tag, &q->mod_tag_cap, mod + 1, sizeof(*q->mod_tag));
		memset(q->mod_tag + cap, 0, (q->mod_tag_cap - cap) * sizeof(*q->mod_tag));
	}
	q->mod_tag[mod] = tag;
}

void cli_query_module_opened(struct query *q, struct module *m, int rc, const char *msg)
{
	m->ctx_img = rc == 1;
	m->state = rc < 0 ? rc : 1;
	cli_query_set_tag(q, (size_t)(m - q->mods), rc < 0 ? 0 : (uint32_t)(m - q->mods) + 1);
	if (rc >= 0)
		return;
	m->img = NULL;
	m->error = strdup(msg);
	if (rc != OPEN_AS_LLVM && -rc > q->module_failed)
		q->module_failed = -rc;
}
