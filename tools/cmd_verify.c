/* SPDX-License-Identifier: MIT */
/*
 * `symdb verify [--repair]`: check a whole database.
 *
 * Every catalog entry is opened the way a reader opens it (file exists,
 * File_Size and Header_Checksum equal the catalog's, header and directory
 * valid, SPEC §12.3) with every table checksum verified, then
 * symdb_image_verify() checks sort order and references of every table, and
 * the header's UUID must be the catalog key.  Every file under DB/images/ the
 * catalog does not name is an orphan, every file in DB/tmp/ a leftover of a
 * build that died; both only when older than --grace, since a build in
 * progress owns a fresh temp file and, between its rename and its commit
 * (SPEC §12.5), a fresh unreferenced file.
 *
 * A compacted entry (SPEC §12.8) is checked the same way on its cold form,
 * decompressed in memory (SYMDB_OPEN_NO_THAW): verify never thaws.  A cold
 * form next to its entry's .symdb is the leftover of a compaction or thaw
 * that died between its rename and its unlink: redundant, removed by
 * --repair once older than --grace.
 *
 * An entry whose file is younger than --grace and valid on its own is a
 * --force rebuild between its rename and its commit: reported as young, not
 * damaged.
 *
 * --repair removes exactly what was reported: a damaged image through
 * symdb_remove() (entry, then file), an orphan or leftover by unlink.  A
 * valid image is never touched.  A symbolic link or a foreign entry inside
 * DB (SPEC §12.1) is reported as "unsafe", never followed and never
 * repaired.  An index file truncated while verify reads it (SIGBUS, caught
 * by cli_fault.c) is reported as damaged like any other.  Exit: 0 clean,
 * 5 everything found was
 * repaired, 4 damage remains, 3 the catalog cannot be read.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, unlinkat */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_fault.h"
#include "cli_maint.h"

struct verify {
	symdb *db;
	int repair;
	uint64_t now, grace;
	struct cli_catfiles cf;
	struct cli_out *out;
	size_t images, damaged, orphans, leftovers, repaired, failed;
	size_t unsafe; /* symbolic links and foreign entries inside DB: never touched */
	size_t catalog; /* problems in the catalog's own records */
	int bad_values; /* undecodable entries left in place: symdb_list says so */
};

struct entry_list {
	symdb_entry *e;
	char **files;
	size_t n, cap;
};

static int collect(const symdb_entry *e, void *arg)
{
	struct entry_list *l = arg;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		symdb_entry *ne = realloc(l->e, cap * sizeof *ne);
		if (!ne)
			return -ENOMEM;
		l->e = ne;
		char **nf = realloc(l->files, cap * sizeof *nf);
		if (!nf)
			return -ENOMEM;
		l->files = nf;
		l->cap = cap;
	}
	l->e[l->n] = *e;
	l->e[l->n].image_name = NULL;
	l->files[l->n] = strdup(e->file);
	if (!l->files[l->n])
		return -ENOMEM;
	l->e[l->n].file = l->files[l->n];
	l->n++;
	return 0;
}

static void entry_list_free(struct entry_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->files[i]);
	free(l->files);
	free(l->e);
}

/* The header's UUID is the catalog key (SPEC §12.3, §12.6). */
static int same_uuid(const symdb_image *img, const symdb_uuid *key)
{
	symdb_image_info info;

	info.sz = sizeof info;
	symdb_image_get_info(img, &info);
	return info.uuid.len == key->len && memcmp(info.uuid.bytes, key->bytes, key->len) == 0;
}

/* Open and fully check one image; reason into eb on failure. */
static int check_image(struct verify *v, const symdb_entry *e, char *eb, size_t ebsz)
{
	/* NO_THAW: a cold image is checked in memory, and stays cold. */
	SYMDB_OPTS(symdb_open_opts, o, .flags = SYMDB_OPEN_VERIFY_CHECKSUMS | SYMDB_OPEN_NO_THAW,
	           .errbuf = eb, .errbuf_sz = ebsz);
	symdb_image *img;
	int rc;

	eb[0] = 0;
	rc = symdb_image_open_uuid(v->db, &e->uuid, &o, &img);
	if (rc < 0)
		return rc;
	rc = symdb_image_verify(img, CLI_EB_OPTS(eb, ebsz));
	/* Truncated while it was read (cli_fault.c): what was checked may be
	 * zeros, whatever the checks said. */
	if (symdb_image_fault_check(img) < 0) {
		snprintf(eb, ebsz, "index file changed while in use (truncated?)");
		rc = SYMDB_E_CORRUPT;
	} else if (rc == 0 && !same_uuid(img, &e->uuid)) {
		snprintf(eb, ebsz, "header UUID differs from the catalog key");
		rc = SYMDB_E_CORRUPT;
	}
	symdb_image_close(img);
	return rc;
}

/* A --force rebuild renames its new file over the old one before it
 * commits the new entry (SPEC §12.5): for that moment the file differs from
 * the entry.  A file younger than the grace period that is valid on its own
 * is such a build in progress, not damage. */
static int replaced_in_progress(const struct verify *v, const symdb_entry *e)
{
	SYMDB_OPTS(symdb_open_opts, o, .flags = SYMDB_OPEN_VERIFY_CHECKSUMS);
	char path[4096], eb[256];
	struct stat st;
	symdb_image *img;
	int ok;

	if ((size_t)snprintf(path, sizeof path, "%s/%s", symdb_dir(v->db), e->file) >=
	            sizeof path ||
	    lstat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
	    !cli_younger((uint64_t)st.st_mtime, v->now, v->grace))
		return 0;
	if (symdb_image_open_file(path, &o, &img) < 0)
		return 0;
	ok = symdb_image_verify(img, CLI_EB_OPTS(eb, sizeof eb)) == 0 && same_uuid(img, &e->uuid);
	symdb_image_close(img);
	return ok;
}

static void report_image(struct verify *v, const symdb_entry *e, int rc, const char *eb)
{
	char hex[2 * SYMDB_UUID_MAX + 1];

	symdb_uuid_format(&e->uuid, hex);
	v->damaged++;
	cli_out_lib_line(v->out, "damaged %s %s: %s\n", hex, e->file,
	             eb[0] ? eb : symdb_strerror(rc));
	if (!v->repair)
		return;
	char rb[1024] = "";
	int r = symdb_remove(v->db, &e->uuid, CLI_EB_OPTS(rb, sizeof rb));
	if (r == 0 || r == SYMDB_E_NOT_INDEXED) {
		v->repaired++;
		cli_out_line(v->out, "removed %s\n", hex);
	} else {
		v->failed++;
		cli_err(hex, "cannot remove: %s", rb[0] ? rb : symdb_strerror(r));
	}
}

/* A debuginfod fetch's directory: a leftover once past the grace period
 * with its process gone (gc's rule), with the bytes it holds. */
static void visit_fetch_dir(struct verify *v, const struct cli_fs_visit *f)
{
	uint64_t bytes = 0;

	if (cli_younger(f->mtime, v->now, v->grace) || cli_fetch_dir_live(f)) {
		cli_out_line(v->out, "young %s/ (may belong to a fetch in progress)\n", f->rel);
		return;
	}
	v->leftovers++;
	(void)cli_fs_remove_dir(f, 1, &bytes);
	cli_out_line(v->out, "leftover %s/ (a fetch that died, %llu bytes)\n", f->rel,
	             (unsigned long long)bytes);
	if (!v->repair)
		return;
	if (cli_fs_remove_dir(f, 0, &bytes) == 0) {
		v->repaired++;
		cli_out_line(v->out, "removed %s/\n", f->rel);
	} else {
		v->failed++;
	}
}

static int visit_file(const struct cli_fs_visit *f, void *arg)
{
	struct verify *v = arg;

	if (f->unsafe) {
		/* Reported, never followed or removed, even by --repair (SPEC §12.1). */
		v->unsafe++;
		cli_out_line(v->out, "unsafe %s: %s\n", f->rel, f->unsafe);
		return 0;
	}
	if (f->fetch_pid) {
		visit_fetch_dir(v, f);
		return 0;
	}
	enum cli_file_role role = f->is_tmp ? CLI_FILE_STRAY : cli_catfiles_role(&v->cf, f);

	if (role == CLI_FILE_INDEX)
		return 0;
	if (cli_younger(f->mtime, v->now, v->grace)) {
		cli_out_line(v->out, "young %s (may belong to a build in progress)\n", f->rel);
		return 0;
	}
	if (f->is_tmp || role == CLI_FILE_REDUNDANT)
		v->leftovers++;
	else
		v->orphans++;
	if (role == CLI_FILE_REDUNDANT)
		cli_out_line(v->out, "leftover %s (its .symdb exists: redundant cold copy)\n",
		             f->rel);
	else
		cli_out_line(v->out, "%s %s\n", f->is_tmp ? "leftover" : "orphan", f->rel);
	if (!v->repair)
		return 0;
	int removed = 1;
	int r = role == CLI_FILE_REDUNDANT
	                ? symdb_cold_remove_redundant(v->db, f->rel, NULL, &removed)
	        : unlinkat(f->dirfd, f->name, 0) == 0 || errno == ENOENT ? 0 : -errno;
	if (r == 0 && !removed) {
		v->repaired++; /* a compaction made it the only form: not a leftover now */
		cli_out_line(v->out, "kept %s (now the image's only form)\n", f->rel);
	} else if (r == 0) {
		v->repaired++;
		cli_out_line(v->out, "removed %s\n", f->rel);
	} else {
		v->failed++;
		cli_err(f->path, "cannot remove: %s", symdb_strerror(r));
	}
	return 0;
}

/* A catalog key for humans: a UUID in hex; a names key as NAME/UUIDHEX. */
static void key_text(const uint8_t *key, size_t len, int is_name, char *buf, size_t bufsz)
{
	/* A UUID may hold 0x00 bytes; a name (SPEC §12.3) never does. */
	const uint8_t *nul = is_name ? memchr(key, 0, len) : NULL;
	size_t at = 0, start = 0;

	if (nul) {
		start = (size_t)(nul - key) + 1;
		at = (size_t)snprintf(buf, bufsz, "%.*s/", (int)(nul - key), (const char *)key);
	}
	for (size_t i = start; i < len && at + 3 <= bufsz; i++)
		at += (size_t)snprintf(buf + at, bufsz - at, "%02x", key[i]);
}

static void verify_catalog_problem(symdb_catalog_problem kind, const uint8_t *key,
                                   size_t key_len, const char *why, void *arg)
{
	static const char *const db[] = { "", "images", "names", "names", "used" };
	struct verify *v = arg;
	char k[600];

	key_text(key, key_len,
	         kind == SYMDB_CAT_DANGLING_NAME || kind == SYMDB_CAT_MISSING_NAME, k, sizeof k);
	v->catalog++;
	if (kind == SYMDB_CAT_BAD_VALUE)
		v->bad_values = 1;
	cli_out_line(v->out, "catalog %s %s: %s\n", db[kind <= 4 ? kind : 0], k, why);
}

/* The catalog's records first (SPEC §12.6): with --repair they are fixed in
 * one transaction before the entries are opened. */
static int verify_catalog(struct verify *v)
{
	int rc = symdb_catalog_check(v->db, v->repair ? SYMDB_CHECK_REPAIR : 0,
	                             verify_catalog_problem, v);

	if (rc > 0 && v->repair) {
		v->repaired += (size_t)rc;
		v->bad_values = 0;
		cli_out_line(v->out, "repaired %d catalog records\n", rc);
	}
	return rc < 0 ? rc : 0;
}

static int verify_entries(struct verify *v)
{
	struct entry_list l = { 0 };
	char eb[1024];
	int rc = symdb_list(v->db, collect, &l);

	/* Undecodable entries were reported by verify_catalog; the readable
	 * ones were all listed and are checked. */
	if (rc == SYMDB_E_CATALOG && v->bad_values)
		rc = 0;
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		int r = check_image(v, &l.e[i], eb, sizeof eb);
		v->images++;
		/* -ELOOP/-EPERM: an unsafe file or directory (SPEC §12.1). */
		if (r == -ELOOP || r == -EPERM) {
			/* eb is "DB/ENTRY: why": shown as "unsafe UUID ENTRY: why". */
			size_t dl = cli_errbuf_names(eb, symdb_dir(v->db), "/");
			const char *what = dl ? eb + dl + 1 : eb;
			char hex[2 * SYMDB_UUID_MAX + 1];
			symdb_uuid_format(&l.e[i].uuid, hex);
			v->unsafe++; /* never followed, never repaired (SPEC §12.1) */
			cli_out_lib_line(v->out, "unsafe %s %s\n", hex, what);
		} else if (r < 0 && replaced_in_progress(v, &l.e[i]))
			cli_out_line(v->out, "young %s (replaced by a build in progress?)\n",
			             l.e[i].file);
		else if (r < 0)
			report_image(v, &l.e[i], r, eb);
	}
	entry_list_free(&l);
	return rc;
}

/* Parse the options; returns 0, or -(exit code) to stop (help: -VERIFY_HELP). */
#define VERIFY_HELP 100
static int verify_args(struct verify *v, struct cli_global *g, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *val;
		int m = cli_opt_common(g, "verify", argc, argv, &i);
		if (m < 0)
			return -CLI_EXIT_USAGE;
		if (m == CLI_OPT_HELP)
			return -VERIFY_HELP;
		if (m == CLI_OPT_TAKEN) {
			continue;
		} else if ((m = cli_opt_value(argc, argv, &i, "--grace", &val)) != 0) {
			if (m < 0)
				return -CLI_EXIT_USAGE;
			if (cli_parse_duration(val, &v->grace) < 0) {
				cli_err(NULL, "verify: bad --grace '%s' (e.g. 3600, 90m, 1h)", val);
				return -CLI_EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "--repair")) {
			v->repair = 1;
		} else {
			cli_err(NULL, "verify: unexpected argument '%s' (see 'symdb help verify')",
			        argv[i]);
			return -CLI_EXIT_USAGE;
		}
	}
	return 0;
}

static int verify_exit(const struct verify *v)
{
	size_t found = v->damaged + v->orphans + v->leftovers + v->catalog + v->unsafe;

	cli_out_line(v->out, "%zu images checked, %zu damaged, %zu orphans, %zu leftovers",
	             v->images, v->damaged, v->orphans, v->leftovers);
	if (v->unsafe)
		cli_out_line(v->out, ", %zu unsafe", v->unsafe);
	if (v->catalog)
		cli_out_line(v->out, ", %zu catalog records damaged", v->catalog);
	if (v->repair)
		cli_out_line(v->out, ", %zu removed", v->repaired);
	/* An unsafe entry is never repaired: it is left for the operator. */
	const int repaired = v->repair && !v->failed && !v->unsafe;
	cli_out_str(v->out, found == 0 ? ": clean\n" : repaired ? ": repaired\n" : ": damaged\n");
	if (found == 0)
		return CLI_EXIT_OK;
	return repaired ? CLI_EXIT_REPAIRED : CLI_EXIT_DAMAGED;
}

int cli_cmd_verify(const struct cli_global *g0, int argc, char **argv)
{
	struct cli_global g = *g0;
	struct verify v = { .grace = CLI_GRACE_DEFAULT };
	char err[1024] = "", dir[4096];
	struct cli_out out;
	int rc = verify_args(&v, &g, argc, argv);

	if (rc < 0)
		return rc == -VERIFY_HELP ? CLI_EXIT_OK : -rc;
	cli_db_name(&g, dir, sizeof dir);
	SYMDB_OPTS(symdb_open_opts, o, .flags = v.repair ? SYMDB_OPEN_WRITE : 0, .errbuf = err,
	           .errbuf_sz = sizeof err);
	rc = cli_open_db(g.db_dir, &o, &v.db);
	/* A damaged catalog is moved aside and rebuilt from the index files,
	 * never opened (cmd_reindex.c); then verified like any other. */
	if (rc == SYMDB_E_CATALOG && v.repair && cli_reindex_recover(dir) == 0) {
		v.catalog = v.repaired = 1; /* the whole catalog: found and replaced */
		rc = cli_open_db(g.db_dir, &o, &v.db);
	}
	if (rc < 0) {
		cli_err_lib(dir, rc, err);
		return CLI_EXIT_DATABASE;
	}
	if (cli_out_init(&out, stdout, 64 * 1024) < 0) {
		symdb_close(v.db);
		return CLI_EXIT_FAILED;
	}
	v.out = &out;
	v.now = cli_now();
	cli_fault_guard(v.db); /* an index truncated meanwhile: that image is damaged */
	/* --repair removes: one at a time with gc (cli_maint_lock). */
	int lock = v.repair ? cli_maint_lock(symdb_dir(v.db)) : -ENOENT;
	rc = lock < 0 && lock != -ENOENT ? lock : verify_catalog(&v);
	if (rc == 0)
		rc = verify_entries(&v);
	/* The file set is read after the repairs, so removed images' files are
	 * not counted again as orphans. */
	if (rc == 0)
		rc = cli_catfiles_load(v.db, &v.cf);
	if (rc == SYMDB_E_CATALOG && v.bad_values)
		rc = 0; /* reported by verify_catalog; the files of the rest are known */
	if (rc == 0)
		rc = cli_fs_walk(symdb_dir(v.db), visit_file, &v);
	int ex = rc < 0 ? CLI_EXIT_DATABASE : verify_exit(&v);
	if (cli_out_fini(&out) < 0 && ex == CLI_EXIT_OK)
		ex = CLI_EXIT_FAILED;
	if (rc < 0)
		cli_err(dir, "cannot read the catalog: %s", symdb_strerror(rc));
	cli_catfiles_free(&v.cf);
	if (lock >= 0)
		close(lock);
	cli_fault_unguard();
	symdb_close(v.db);
	return ex;
}
