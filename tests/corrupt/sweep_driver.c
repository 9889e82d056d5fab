/* SPDX-License-Identifier: MIT */
/*
 * sweep_driver.c - the damage sweep of sweep.py, every case in one process.
 *
 *   sweep_driver DB BINARY INDEX ADDRS STEP DIR_END
 *
 * INDEX is BINARY's published index file in database DB, undamaged; ADDRS
 * holds hex addresses, one a line.  The driver damages INDEX in place, one
 * way at a time, and after each answers every address as `symdb query --obj
 * BINARY --no-build` does: a fresh database handle and symbolizer context,
 * the image found by symdb_symbolizer_image(), the batch symbolized and
 * demangled by symdb_symbolize():
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
 * INDEX is restored at the end.  Prints one summary line, a line per
 * failure (at most 30), and "differs K" for each flip K whose plain open
 * answered, differently: sweep.py runs the CLI's printers on those too.
 * Exits 0 when there is no failure, 1 otherwise, 2 on a usage or setup
 * error.  A process per case (sweep.py's old way) cost 20-40 ms each,
 * 3,000 of them per sweep; sweep.py now runs the CLI on a sample.
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
	symdb_request *reqs;
	symdb_symbolized *results;
	size_t naddrs;
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

static void render_result(struct text *t, const symdb_symbolized *r)
{
	put(t, "%d %d %" PRIx64 " %" PRIx64 " %" PRIx64 " ", r->status, r->error, r->vaddr,
	    r->sym_addr, r->sym_size);
	put_str(t, r->sym_name);
	for (uint32_t i = 0; i < r->nframes; i++) {
		const symdb_frame *f = &r->frames[i];
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

/* Answer every address through a fresh database handle and symbolizer
 * context (nothing cached from the case before), rendered into s->got.
 * Returns 0, or the error of finding the image (a damage code is the
 * CLI's exit 4). */
static int answer(struct sweep *s, unsigned flags)
{
	symdb *db = NULL;
	int rc = symdb_open(s->db, NULL, &db);
	if (rc < 0)
		die(s->db, symdb_strerror(rc));
	SYMDB_OPTS(symdb_symbolizer_opts, so, .flags = flags);
	symdb_symbolizer *sym = NULL;
	rc = symdb_symbolizer_create(db, &so, &sym);
	if (rc < 0)
		die("symdb_symbolizer_create", symdb_strerror(rc));
	const symdb_image *img = NULL;
	rc = symdb_symbolizer_image(sym, s->binary, NULL, &img);
	s->got.len = 0;
	if (rc == 0) {
		SYMDB_OPTS(symdb_symbolize_opts, o, .flags = SYMDB_SYMBOLIZE_DEMANGLE);
		int r = symdb_symbolize(sym, s->reqs, s->naddrs, s->results, &o);
		if (r < 0)
			die("symdb_symbolize", symdb_strerror(r));
		for (size_t i = 0; i < s->naddrs; i++)
			render_result(&s->got, &s->results[i]);
		if (symdb_image_fault_check(img) < 0)
			put(&s->got, "faulted\n");
	}
	symdb_symbolizer_free(sym);
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

/* The requests: every address of ADDRS, of BINARY, named by path. */
static void read_requests(struct sweep *s, const char *path)
{
	size_t size, cap = 64;
	char *text = (char *)read_file(path, &size);
	s->reqs = calloc(cap, sizeof(*s->reqs));
	if (!s->reqs)
		die(path, "out of memory");
	for (char *p = text, *end; *p; p = end) {
		errno = 0;
		unsigned long long v = strtoull(p, &end, 16);
		if (end == p)
			break;
		if (errno)
			die(path, "bad address");
		if (s->naddrs == cap) {
			symdb_request *nr = realloc(s->reqs, (cap *= 2) * sizeof(*nr));
			if (!nr)
				die(path, "out of memory");
			s->reqs = nr;
		}
		s->reqs[s->naddrs++] = (symdb_request){ .image_ref = SYMDB_IMAGE_PATH,
			                                .addr_kind = SYMDB_ADDR_VADDR,
			                                .image.path = s->binary, .addr = v };
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
	else if (rc == 0 && !same)
		printf("differs %zu\n", k);
}

/* Flip byte k of a copy of good and answer it. */
static void flip_byte(struct sweep *s, const unsigned char *good, unsigned char *b, size_t size,
                      size_t k, size_t dir_end, unsigned *caught, unsigned *unchanged)
{
	memcpy(b, good, size);
	b[k] ^= 0xFF;
	damage(s, b, size);
	flip_case(s, k, dir_end, caught, unchanged);
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
	read_requests(&s, argv[4]);
	s.results = calloc(s.naddrs, sizeof(*s.results));
	if (!s.results)
		die("results", "out of memory");

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
	size_t head = dir_end < size ? dir_end : size;
	for (size_t k = 0; k < head; k++, flips++)
		flip_byte(&s, good, b, size, k, dir_end, &caught, &unchanged);
	for (size_t k = head; k < size; k += step, flips++)
		flip_byte(&s, good, b, size, k, dir_end, &caught, &unchanged);
	damage(&s, good, size);
	printf("sweep_driver: %zu-byte index, %zu addresses: %u prefixes, %u flips: %u caught, "
	       "%u harmless; %u failures\n", size, s.naddrs, prefixes, flips, caught, unchanged,
	       s.failures);
	free(b);
	free(good);
	free(s.reqs);
	free(s.results);
	free(s.want.buf);
	free(s.got.buf);
	return s.failures ? 1 : 0;
}
