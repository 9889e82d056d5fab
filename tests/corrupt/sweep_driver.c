/* SPDX-License-Identifier: MIT */
/*
 * sweep_driver.c - the damage sweep of sweep.py, every case in one process.
 *
 *   sweep_driver DB BINARY INDEX ADDRS STEP DIR_END
 *
 * INDEX is BINARY's published index file in database DB, undamaged; ADDRS
 * holds sorted hex addresses, one a line.  The driver damages INDEX in
 * place, one way at a time, and after each opens a fresh handle on DB and
 * the image of BINARY, as `symdb query --obj BINARY` does, and resolves
 * every address:
 *
 *   prefix  INDEX cut to every STEP-th size below its own: the open must
 *           fail as damaged (SYMDB_E_FORMAT, _VERSION, _CORRUPT, _CHECKSUM:
 *           the CLI's exit 4);
 *   flip    byte K inverted, every byte below DIR_END (header and
 *           directory) and every STEP-th after: opened with checksum
 *           verification the image must be refused as damaged or answer
 *           exactly as the undamaged one; opened without it, the same for a
 *           byte below DIR_END, and anything but a crash or an out-of-bounds
 *           read (AddressSanitizer in that lane) inside a table.
 *
 * Every string of every answer is read to its end, as a printer would.
 * INDEX is restored at the end.  Prints one summary line and a line per
 * failure (at most 30); exits 0 when there is none, 1 otherwise, 2 on a
 * usage or setup error.  A process per case (sweep.py's way) cost 20-40 ms
 * each, 3,000 of them per sweep; sweep.py now runs the CLI on a sample.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symdb.h"

struct text {
	char *buf;
	size_t len, cap;
};

struct sweep {
	const char *db, *binary, *index;
	uint64_t *addrs;
	size_t naddrs;
	symdb_frame *frames;
	symdb_result *results;
	size_t frames_cap;
	struct text want, got;
	unsigned failures;
};

static void die(const char *what, const char *why)
{
	fprintf(stderr, "sweep_driver: %s: %s\n", what, why);
	exit(2);
}

static void put(struct text *t, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			die("vsnprintf", strerror(errno));
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = t->cap ? t->cap * 2 : 65536;
		while (cap - t->len <= (size_t)n)
			cap *= 2;
		char *nb = realloc(t->buf, cap);
		if (!nb)
			die("render", "out of memory");
		t->buf = nb;
		t->cap = cap;
	}
}

/* A string of an answer, read to its end (NULL shows as "-"). */
static void put_str(struct text *t, const char *s)
{
	put(t, "%s|", s ? s : "-");
}

static void render_result(struct sweep *s, const symdb_result *r)
{
	struct text *t = &s->got;
	put(t, "%d %" PRIu32 " %" PRIx64 " %" PRIx64 " ", r->status, r->count, r->sym_addr,
	    r->sym_size);
	put_str(t, r->sym_name);
	for (uint32_t i = 0; i < r->count; i++) {
		const symdb_frame *f = &s->frames[r->first + i];
		put_str(t, f->name);
		put_str(t, f->short_name);
		put_str(t, f->file);
		put_str(t, f->file_rel);
		put_str(t, f->decl_file);
		put_str(t, f->decl_file_rel);
		put(t, "%" PRIx64 " %" PRIu32 ":%" PRIu32 ":%" PRIu32 " %" PRIu32 " %" PRIx32
		       " %" PRIx64 ";", f->start_addr, f->line, f->column, f->discriminator,
		    f->decl_line, f->flags, f->dwarf_start_addr);
	}
	put(t, "\n");
}

/* Open BINARY's image through a fresh handle on the database (nothing
 * cached from the case before) and render every address into s->got.
 * Returns 0, or the open's error. */
static int answer(struct sweep *s, unsigned flags)
{
	char err[256] = "";
	SYMDB_OPTS(symdb_open_opts, o, .flags = flags, .errbuf = err, .errbuf_sz = sizeof(err));
	symdb *db = NULL;
	int rc = symdb_open(s->db, NULL, &db);
	if (rc < 0)
		die(s->db, symdb_strerror(rc));
	symdb_image *img = NULL;
	rc = symdb_image_open_binary(db, s->binary, &o, &img);
	s->got.len = 0;
	if (rc == 0) {
		size_t done = 0;
		while (done < s->naddrs) {
			ptrdiff_t n = symdb_resolve_batch(img, s->addrs + done, s->naddrs - done,
			                                  s->frames, s->frames_cap, sizeof(symdb_frame),
			                                  s->results, sizeof(symdb_result));
			if (n <= 0) {
				put(&s->got, "resolve: %s\n", symdb_strerror((int)n));
				break;
			}
			for (ptrdiff_t i = 0; i < n; i++)
				render_result(s, &s->results[i]);
			done += (size_t)n;
		}
		if (symdb_image_fault_check(img) < 0)
			put(&s->got, "faulted\n");
		symdb_image_close(img);
	}
	symdb_close(db);
	return rc;
}

static int damaged(int rc)
{
	return rc == SYMDB_E_FORMAT || rc == SYMDB_E_VERSION || rc == SYMDB_E_CORRUPT ||
	       rc == SYMDB_E_CHECKSUM;
}

static void failure(struct sweep *s, const char *fmt, ...)
{
	if (++s->failures > 30)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("FAIL ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

/* Write data[0, n) over the index file, in place (the same inode, as
 * sweep.py's damage()). */
static void damage(const struct sweep *s, const unsigned char *data, size_t n)
{
	int fd = open(s->index, O_WRONLY | O_TRUNC);
	if (fd < 0)
		die(s->index, strerror(errno));
	size_t off = 0;
	while (off < n) {
		ssize_t w = write(fd, data + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die(s->index, strerror(errno));
		off += (size_t)w;
	}
	close(fd);
}

static unsigned char *read_file(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		die(path, strerror(errno));
	unsigned char *b = malloc((size_t)st.st_size + 1);
	if (!b)
		die(path, "out of memory");
	size_t off = 0;
	while (off < (size_t)st.st_size) {
		ssize_t r = read(fd, b + off, (size_t)st.st_size - off);
		if (r <= 0)
			die(path, r < 0 ? strerror(errno) : "short read");
		off += (size_t)r;
	}
	close(fd);
	b[off] = 0;
	*size = off;
	return b;
}

static void read_addrs(struct sweep *s, const char *path)
{
	size_t size;
	char *text = (char *)read_file(path, &size);
	size_t cap = 64;
	s->addrs = malloc(cap * sizeof(*s->addrs));
	for (char *p = text, *end; *p; p = end) {
		errno = 0;
		unsigned long long v = strtoull(p, &end, 16);
		if (end == p)
			break;
		if (errno)
			die(path, "bad address");
		if (s->naddrs == cap && !(s->addrs = realloc(s->addrs, (cap *= 2) * sizeof(*s->addrs))))
			die(path, "out of memory");
		s->addrs[s->naddrs++] = v;
	}
	free(text);
	if (!s->naddrs)
		die(path, "no addresses");
}

/* One flip: verified open, then plain open. */
static void flip_case(struct sweep *s, size_t k, size_t dir_end, unsigned *caught,
                      unsigned *unchanged)
{
	int rc = answer(s, SYMDB_OPEN_VERIFY_CHECKSUMS);
	int same = rc == 0 && s->got.len == s->want.len && !memcmp(s->got.buf, s->want.buf, s->want.len);
	if (damaged(rc))
		++*caught;
	else if (same)
		++*unchanged;
	else
		failure(s, "flip %zu (verify): open %s, answers %s", k, rc ? symdb_strerror(rc) : "ok",
		        same ? "same" : "different");
	rc = answer(s, 0);
	same = rc == 0 && s->got.len == s->want.len && !memcmp(s->got.buf, s->want.buf, s->want.len);
	if (k < dir_end && !damaged(rc) && !same)
		failure(s, "flip %zu (plain open, header or directory): open %s, answers %s", k,
		        rc ? symdb_strerror(rc) : "ok", same ? "same" : "different");
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fputs("usage: sweep_driver DB BINARY INDEX ADDRS STEP DIR_END\n", stderr);
		return 2;
	}
	struct sweep s = { .db = argv[1], .binary = argv[2], .index = argv[3] };
	size_t step = strtoul(argv[5], NULL, 10), dir_end = strtoul(argv[6], NULL, 10);
	if (!step)
		die("STEP", "must be at least 1");
	read_addrs(&s, argv[4]);
	s.frames_cap = s.naddrs * 8 + 64;
	s.frames = calloc(s.frames_cap, sizeof(*s.frames));
	s.results = calloc(s.naddrs, sizeof(*s.results));
	if (!s.frames || !s.results)
		die("arrays", "out of memory");

	size_t size;
	unsigned char *good = read_file(s.index, &size);
	int rc = answer(&s, SYMDB_OPEN_VERIFY_CHECKSUMS);
	if (rc < 0)
		die(s.index, symdb_strerror(rc));
	struct text keep = s.want;
	s.want = s.got;
	s.got = keep;

	unsigned prefixes = 0, flips = 0, caught = 0, unchanged = 0;
	for (size_t n = 0; n < size; n += step, prefixes++) {
		damage(&s, good, n);
		rc = answer(&s, 0);
		if (!damaged(rc))
			failure(&s, "prefix %zu: open %s", n, rc ? symdb_strerror(rc) : "ok");
	}
	unsigned char *b = malloc(size);
	if (!b)
		die("flip", "out of memory");
	/* every byte of the header and directory, then every step-th */
	for (size_t k = 0; k < size; k = k + 1 < dir_end ? k + 1 : k < dir_end ? dir_end : k + step) {
		memcpy(b, good, size);
		b[k] ^= 0xFF;
		damage(&s, b, size);
		flip_case(&s, k, dir_end, &caught, &unchanged);
		flips++;
	}
	damage(&s, good, size);
	printf("sweep_driver: %zu-byte index, %zu addresses: %u prefixes, %u flips: %u caught, "
	       "%u harmless; %u failures\n", size, s.naddrs, prefixes, flips, caught, unchanged,
	       s.failures);
	free(b);
	free(good);
	free(s.addrs);
	free(s.frames);
	free(s.results);
	free(s.want.buf);
	free(s.got.buf);
	return s.failures ? 1 : 0;
}
