/* SPDX-License-Identifier: MIT */
/*
 * rel_readers.c - the reader side of tests/reliability/concurrency.sh: N
 * threads share one read-only database handle and, while `symdb build`
 * processes publish and `--force`-replace index files, keep opening images
 * by UUID, resolving a fixed, sorted address set and comparing the frames,
 * printed as llvm-symbolizer-14's LLVM style with --no-demangle, with what
 * llvm-symbolizer-14 printed for the same binary beforehand.
 *
 *   rel_readers DB NTHREADS STOPFILE UUIDHEX:ADDRFILE:EXPECTFILE...
 *
 * ADDRFILE holds the addresses (hex, ascending, one a line); EXPECTFILE the
 * oracle's output for them.  An image not in the catalog yet is skipped.
 * The threads run until STOPFILE exists, then make one last pass in which
 * every image must be present.  Any mismatch prints the image, the address'
 * request and both texts, and the exit status is 1.  On success one line of
 * counts goes to stdout.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symdb.h"

#define MAX_IMAGES 64
#define FRAME_CAP  4096

struct image_case {
	symdb_uuid id;
	char name[80];
	uint64_t *addrs;
	size_t naddrs;
	char *expect;
};

struct shared {
	symdb *db;
	const char *stopfile;
	struct image_case cases[MAX_IMAGES];
	size_t ncases;
	atomic_ulong resolved, absent, passes;
	atomic_int failed;
	pthread_mutex_t print_lock;
};

struct text {
	char *buf;
	size_t len, cap;
};

static int text_add(struct text *t, const char *s)
{
	size_t n = strlen(s);

	if (t->len + n + 1 > t->cap) {
		size_t cap = (t->cap ? t->cap * 2 : 4096) + n;
		char *p = realloc(t->buf, cap);

		if (!p)
			return -ENOMEM;
		t->buf = p;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, s, n + 1);
	t->len += n;
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct text t = { 0 };
	char chunk[4096];
	size_t n;

	if (!f)
		return NULL;
	text_add(&t, "");
	while ((n = fread(chunk, 1, sizeof chunk - 1, f)) > 0) {
		chunk[n] = '\0';
		text_add(&t, chunk);
	}
	fclose(f);
	return t.buf;
}

static int load_addrs(struct image_case *c, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[64];
	size_t cap = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof line, f)) {
		if (c->naddrs == cap) {
			cap = cap ? cap * 2 : 64;
			uint64_t *p = realloc(c->addrs, cap * sizeof *p);
			if (!p) {
				fclose(f);
				return -ENOMEM;
			}
			c->addrs = p;
		}
		c->addrs[c->naddrs++] = strtoull(line, NULL, 16);
	}
	fclose(f);
	return 0;
}

/* "UUIDHEX:ADDRFILE:EXPECTFILE" */
static int load_case(struct image_case *c, char *spec)
{
	char *a = strchr(spec, ':'), *e = a ? strchr(a + 1, ':') : NULL;

	if (!a || !e)
		return SYMDB_E_INVAL;
	*a++ = '\0';
	*e++ = '\0';
	snprintf(c->name, sizeof c->name, "%s", spec);
	if (symdb_uuid_parse(spec, &c->id) || load_addrs(c, a) < 0)
		return SYMDB_E_INVAL;
	c->expect = slurp(e);
	return c->expect ? 0 : -errno;
}

/* One frame as `llvm-symbolizer --no-demangle` prints it in LLVM style. */
static int print_frame(struct text *t, const char *name, const char *file, uint32_t line,
                       uint32_t col)
{
	char num[48];

	snprintf(num, sizeof num, ":%" PRIu32 ":%" PRIu32 "\n", line, col);
	if (text_add(t, name && *name ? name : "??") || text_add(t, "\n") ||
	    text_add(t, file && *file ? file : "??") || text_add(t, num))
		return -ENOMEM;
	return 0;
}

static int print_result(struct text *t, const symdb_frame *frames, const symdb_result *r)
{
	int rc = 0;

	if (r->count == 0)
		rc = print_frame(t, NULL, NULL, 0, 0);
	for (uint32_t i = 0; i < r->count && rc == 0; i++) {
		const symdb_frame *f = &frames[r->first + i];
		rc = print_frame(t, f->name, f->file, f->line, f->column);
	}
	return rc ? rc : text_add(t, "\n");
}

/* Resolve every address of c on img and print the whole text into t. */
static int resolve_all(const symdb_image *img, const struct image_case *c, struct text *t,
                       symdb_frame *frames, symdb_result *results)
{
	size_t done = 0;

	t->len = 0;
	text_add(t, "");
	while (done < c->naddrs) {
		ptrdiff_t n = symdb_resolve_batch(img, c->addrs + done, c->naddrs - done, frames,
		                                  FRAME_CAP, sizeof(symdb_frame), results,
		                                  sizeof(symdb_result));
		if (n <= 0)
			return n < 0 ? (int)n : SYMDB_E_INVAL;
		for (ptrdiff_t i = 0; i < n; i++)
			if (print_result(t, frames, &results[i]))
				return -ENOMEM;
		done += (size_t)n;
	}
	return 0;
}

static void report(struct shared *s, const struct image_case *c, const char *what,
                   const char *got)
{
	pthread_mutex_lock(&s->print_lock);
	fprintf(stderr, "rel_readers: image %s: %s\n", c->name, what);
	if (got)
		fprintf(stderr, "--- expected (llvm-symbolizer-14)\n%s--- got\n%s---\n", c->expect,
		        got);
	pthread_mutex_unlock(&s->print_lock);
	atomic_store(&s->failed, 1);
}

/* One open-resolve-compare-close round on image c.  must_exist: the final
 * pass, where a missing image is a failure. */
static void check_image(struct shared *s, const struct image_case *c, struct text *t,
                        symdb_frame *frames, symdb_result *results, int must_exist)
{
	char err[512] = "";
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof err);
	symdb_image *img;
	int rc = symdb_image_open_uuid(s->db, &c->id, &o, &img);

	if (rc == SYMDB_E_NOT_INDEXED && !must_exist) {
		atomic_fetch_add(&s->absent, 1);
		return;
	}
	if (rc) {
		char what[700];
		snprintf(what, sizeof what, "open failed: %s (%s)", symdb_strerror(rc), err);
		report(s, c, what, NULL);
		return;
	}
	rc = resolve_all(img, c, t, frames, results);
	if (rc)
		report(s, c, symdb_strerror(rc), NULL);
	else if (strcmp(t->buf, c->expect) != 0)
		report(s, c, "result differs from llvm-symbolizer-14", t->buf);
	else
		atomic_fetch_add(&s->resolved, 1);
	symdb_image_close(img);
}

static void *reader_main(void *arg)
{
	struct shared *s = arg;
	symdb_frame *frames = malloc(FRAME_CAP * sizeof *frames);
	symdb_result *results = NULL;
	struct text t = { 0 };
	size_t maxn = 0, k = (size_t)pthread_self();

	for (size_t i = 0; i < s->ncases; i++)
		if (s->cases[i].naddrs > maxn)
			maxn = s->cases[i].naddrs;
	results = malloc((maxn + 1) * sizeof *results);
	if (!frames || !results) {
		atomic_store(&s->failed, 1);
		goto out;
	}
	for (;;) {
		int last = access(s->stopfile, F_OK) == 0;

		for (size_t i = 0; i < s->ncases && !atomic_load(&s->failed); i++)
			check_image(s, &s->cases[(i + k) % s->ncases], &t, frames, results, last);
		atomic_fetch_add(&s->passes, 1);
		if (last || atomic_load(&s->failed))
			break;
		k++;
	}
out:
	free(frames);
	free(results);
	free(t.buf);
	return NULL;
}

/* $SYMDB_THAW_LOG, as the CLI maps it: one line per decompression of a
 * cold image, "thawed FILE" or "memory FILE", in one O_APPEND write. */
static void thaw_log(const char *file, int on_disk, void *arg)
{
	char line[4200];
	int fd, n = snprintf(line, sizeof line, "%s %s\n", on_disk ? "thawed" : "memory", file);

	fd = n > 0 && (size_t)n < sizeof line ? open(arg, O_WRONLY | O_APPEND | O_CREAT, 0644) : -1;
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0) {
	}
	close(fd);
}

/* The database may not exist until the first builder created it. */
static int open_db(const char *dir, symdb **db)
{
	char err[512] = "";
	const char *log = getenv("SYMDB_THAW_LOG");
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof err,
	           .on_decompress = log && *log ? thaw_log : NULL, .on_decompress_arg = (void *)log);
	struct timespec ms = { 0, 1000000 };
	int rc;

	for (int tries = 0; tries < 30000; tries++) {
		rc = symdb_open(dir, &o, db);
		if (rc != -ENOENT && rc != SYMDB_E_CATALOG)
			break;
		nanosleep(&ms, NULL);
	}
	if (rc)
		fprintf(stderr, "rel_readers: %s: %s (%s)\n", dir, symdb_strerror(rc), err);
	return rc;
}

int main(int argc, char **argv)
{
	static struct shared s;
	pthread_t th[64];
	int nthreads, rc = 0;

	if (argc < 5 || (nthreads = atoi(argv[2])) < 1 || nthreads > 64 ||
	    argc - 4 > MAX_IMAGES) {
		fprintf(stderr, "usage: rel_readers DB NTHREADS STOPFILE UUID:ADDRS:EXPECT...\n");
		return 2;
	}
	s.stopfile = argv[3];
	pthread_mutex_init(&s.print_lock, NULL);
	for (int i = 4; i < argc; i++) {
		if (load_case(&s.cases[s.ncases++], argv[i])) {
			fprintf(stderr, "rel_readers: bad image spec or file: %s\n", argv[i]);
			return 2;
		}
	}
	if (open_db(argv[1], &s.db))
		return 1;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, reader_main, &s))
			return 2;
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	symdb_close(s.db);
	for (size_t i = 0; i < s.ncases; i++) {
		free(s.cases[i].addrs);
		free(s.cases[i].expect);
	}
	if (atomic_load(&s.failed))
		rc = 1;
	printf("%d threads: %lu passes, %lu image resolutions matched llvm-symbolizer-14, %lu opens "
	       "before publication\n",
	       nthreads, atomic_load(&s.passes), atomic_load(&s.resolved), atomic_load(&s.absent));
	return rc;
}
