/* SPDX-License-Identifier: MIT */
/*
 * test_perfmap.c - perf maps through the public API (symdb_perfmap_*): the
 * line format perf 6.1 reads, malformed lines skipped and counted, sizes of
 * zero, overlapping entries (the latest line wins), a huge line, a missing
 * map, lines appended or the file rewritten between refreshes, and a line
 * still being written.  Every expectation is written from the map text and
 * perf's rules, never from symdb's own output.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "symdb.h"

static char dir[4096];

static void write_file(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

/* The name m answers for addr, or "" when none. */
static const char *name_at(const symdb_perfmap *m, uint64_t addr)
{
	SYMDB_OPTS(symdb_perfmap_sym, s);
	int rc = symdb_perfmap_lookup(m, addr, &s);
	if (rc == SYMDB_E_NOT_FOUND)
		return "";
	CHECK_RC(rc);
	return rc == 0 ? s.name : "(error)";
}

static symdb_perfmap_stats stats_of(const symdb_perfmap *m)
{
	SYMDB_OPTS(symdb_perfmap_stats, st);
	CHECK_RC(symdb_perfmap_get_stats(m, &st));
	return st;
}

#define CHECK_NAME(m, addr, want) do { const char *got_ = name_at(m, addr); \
	if (strcmp(got_, want)) { check_failures++; fprintf(stderr, \
	"%s:%d: 0x%llx: got '%s', want '%s'\n", __FILE__, __LINE__, \
	(unsigned long long)(addr), got_, want); } } while (0)

static void test_format(void)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/format.map", dir);
	write_file(path, "w",
	           "1000 10 LazyCompile:*hot /app/x.js:3\n"  /* 1: plain */
	           "0x2000 0x20 with 0x prefixes\n"          /* 2 */
	           "3000 0 zero size\n"                      /* 3: answers 0x3000 only */
	           "4000 100 outer\n"                        /* 4: [4000,4100) */
	           "4040 10 inner later\n"                   /* 5: wins over 4 in [4040,4050) */
	           "5000 10  two spaces kept\n"              /* 6: name keeps the 2nd blank */
	           "garbage line\n"                          /* 7: skipped */
	           "6000 zz bad size\n"                      /* 8: skipped */
	           "7000 10 ab\n"                            /* 9: skipped: perf needs 3 bytes */
	           "11112222333344445 10 too many digits\n"  /* 10: skipped */
	           "ffffffffffffff00 1000 wraps past 2^64\n" /* 11: skipped */
	           "\n"                                      /* 12: skipped */
	           "8000 10 last wins over\n"                /* 13 */
	           "8000 10 same range later\n"              /* 14: shadows 13 */
	           "9000 10 being written");                 /* no newline yet */
	char eb[512] = "";
	SYMDB_OPTS(symdb_perfmap_opts, o, .errbuf = eb, .errbuf_sz = sizeof eb);
	symdb_perfmap *m = NULL;
	CHECK_RC(symdb_perfmap_open(path, &o, &m));
	if (!m)
		return;
	CHECK_NAME(m, 0x1000, "LazyCompile:*hot /app/x.js:3");
	CHECK_NAME(m, 0x100f, "LazyCompile:*hot /app/x.js:3");
	CHECK_NAME(m, 0x1010, "");
	CHECK_NAME(m, 0xfff, "");
	CHECK_NAME(m, 0x201f, "with 0x prefixes");
	CHECK_NAME(m, 0x3000, "zero size");
	CHECK_NAME(m, 0x3001, "");
	CHECK_NAME(m, 0x403f, "outer");
	CHECK_NAME(m, 0x4040, "inner later");
	CHECK_NAME(m, 0x404f, "inner later");
	CHECK_NAME(m, 0x4050, "outer");
	CHECK_NAME(m, 0x40ff, "outer");
	CHECK_NAME(m, 0x4100, "");
	CHECK_NAME(m, 0x5005, " two spaces kept");
	CHECK_NAME(m, 0x6000, "");
	CHECK_NAME(m, 0x7000, "");
	CHECK_NAME(m, 0x8008, "same range later");
	CHECK_NAME(m, 0x9000, "");
	SYMDB_OPTS(symdb_perfmap_sym, s);
	CHECK(symdb_perfmap_lookup(m, 0x4045, &s) == 0 && s.start == 0x4040 && s.size == 0x10 &&
	      s.line == 5);
	symdb_perfmap_stats st = stats_of(m);
	CHECK(st.lines == 14);
	CHECK(st.entries == 8);
	CHECK(st.skipped == 6);
	CHECK(st.first_skipped_line == 7);
	CHECK(st.zero_size == 1);
	CHECK(st.shadowed == 1);
	CHECK(st.long_lines == 0);
	CHECK(st.pending == strlen("9000 10 being written"));

	/* The writer finishes its line: a refresh reads it, nothing else. */
	write_file(path, "a", "\n");
	CHECK(symdb_perfmap_refresh(m, NULL) == 1);
	CHECK_NAME(m, 0x900f, "being written");
	CHECK_NAME(m, 0x1000, "LazyCompile:*hot /app/x.js:3");
	st = stats_of(m);
	CHECK(st.lines == 15 && st.entries == 9 && st.pending == 0 && st.rereads == 0);
	CHECK(symdb_perfmap_refresh(m, NULL) == 0);
	symdb_perfmap_close(m);
}

static void test_huge_line(void)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/huge.map", dir);
	size_t big = 300000;
	char *line = malloc(big + 64);
	CHECK(line != NULL);
	if (!line)
		return;
	memcpy(line, "a000 10 ", 8);
	memset(line + 8, 'x', big);
	strcpy(line + 8 + big, "\n");
	write_file(path, "w", "b000 10 before\n");
	write_file(path, "a", line);
	write_file(path, "a", "c000 10 after\n");
	SYMDB_OPTS(symdb_perfmap_opts, o, .max_line = 1000);
	symdb_perfmap *m = NULL;
	CHECK_RC(symdb_perfmap_open(path, &o, &m));
	if (m) {
		CHECK_NAME(m, 0xb000, "before");
		CHECK_NAME(m, 0xa000, "");
		CHECK_NAME(m, 0xc000, "after");
		symdb_perfmap_stats st = stats_of(m);
		CHECK(st.lines == 3 && st.skipped == 1 && st.long_lines == 1 &&
		      st.first_skipped_line == 2);
		symdb_perfmap_close(m);
	}
	/* Under the default limit (4096) too, and one that arrives in pieces. */
	write_file(path, "w", "b000 10 before\n");
	CHECK_RC(symdb_perfmap_open(path, NULL, &m));
	line[8 + big] = '\0';
	write_file(path, "a", line); /* no newline yet */
	CHECK(symdb_perfmap_refresh(m, NULL) >= 0);
	write_file(path, "a", "\nc000 10 after\n");
	CHECK(symdb_perfmap_refresh(m, NULL) == 1);
	if (m) {
		CHECK_NAME(m, 0xc000, "after");
		CHECK_NAME(m, 0xa000, "");
		symdb_perfmap_stats st = stats_of(m);
		CHECK(st.lines == 3 && st.long_lines == 1 && st.entries == 2);
	}
	symdb_perfmap_close(m);
	free(line);
}

static void test_rewrite(void)
{
	char path[4200], tmp[4300];
	snprintf(path, sizeof path, "%s/rewrite.map", dir);
	snprintf(tmp, sizeof tmp, "%s.new", path);
	write_file(path, "w", "1000 10 first\n2000 10 second\n");
	symdb_perfmap *m = NULL;
	CHECK_RC(symdb_perfmap_open(path, NULL, &m));
	if (!m)
		return;
	/* Appended: only the new line is read. */
	write_file(path, "a", "3000 10 third\n");
	CHECK(symdb_perfmap_refresh(m, NULL) == 1);
	CHECK_NAME(m, 0x3000, "third");
	CHECK_NAME(m, 0x1000, "first");
	/* Truncated and written shorter: read whole again. */
	write_file(path, "w", "1000 10 again\n");
	CHECK(symdb_perfmap_refresh(m, NULL) == 2);
	CHECK_NAME(m, 0x1000, "again");
	CHECK_NAME(m, 0x3000, "");
	/* Rewritten in place, longer, other first bytes: read whole again. */
	write_file(path, "w", "1000 10 AGAIN\n4000 10 fourth\n");
	CHECK(symdb_perfmap_refresh(m, NULL) == 2);
	CHECK_NAME(m, 0x1000, "AGAIN");
	CHECK_NAME(m, 0x4000, "fourth");
	/* Replaced by rename (another inode). */
	write_file(tmp, "w", "1000 10 AGAIN\n5000 10 fifth\n");
	CHECK(rename(tmp, path) == 0);
	CHECK(symdb_perfmap_refresh(m, NULL) == 2);
	CHECK_NAME(m, 0x5000, "fifth");
	CHECK_NAME(m, 0x4000, "");
	CHECK(stats_of(m).rereads == 3);
	/* Removed: an error, and the table read before still answers. */
	CHECK(unlink(path) == 0);
	CHECK(symdb_perfmap_refresh(m, NULL) == -ENOENT);
	CHECK_NAME(m, 0x5000, "fifth");
	write_file(path, "w", "6000 10 back\n");
	CHECK(symdb_perfmap_refresh(m, NULL) >= 1);
	CHECK_NAME(m, 0x6000, "back");
	symdb_perfmap_close(m);
}

/* ---- jitdump files, written here field by field ------------------------ */

struct dump {
	unsigned char *b;
	size_t len, cap;
	int swap; /* write the other byte order */
};

static void put(struct dump *d, const void *p, size_t n)
{
	if (d->len + n > d->cap) {
		d->cap = (d->len + n) * 2;
		d->b = realloc(d->b, d->cap);
	}
	if (d->b)
		memcpy(d->b + d->len, p, n);
	d->len += n;
}

static void put32(struct dump *d, uint32_t v)
{
	if (d->swap)
		v = __builtin_bswap32(v);
	put(d, &v, sizeof v);
}

static void put64(struct dump *d, uint64_t v)
{
	if (d->swap)
		v = __builtin_bswap64(v);
	put(d, &v, sizeof v);
}

static void dump_header(struct dump *d)
{
	put32(d, 0x4A695444); /* "jItD" in the writer's order */
	put32(d, 1);
	put32(d, 40);
	put32(d, 62); /* EM_X86_64 */
	put32(d, 0);
	put32(d, 4242);
	put64(d, 123456789);
	put64(d, 0);
}

static void dump_load(struct dump *d, uint64_t addr, uint64_t size, uint64_t index,
                      const char *name, size_t code_bytes)
{
	size_t n = strlen(name) + 1;
	put32(d, 0);
	put32(d, (uint32_t)(56 + n + code_bytes));
	put64(d, 1);
	put32(d, 4242);
	put32(d, 4243);
	put64(d, addr);
	put64(d, addr);
	put64(d, size);
	put64(d, index);
	put(d, name, n);
	for (size_t i = 0; i < code_bytes; i++)
		put(d, "\xcc", 1);
}

static void dump_move(struct dump *d, uint64_t from, uint64_t to, uint64_t size, uint64_t index)
{
	put32(d, 1);
	put32(d, 64);
	put64(d, 2);
	put32(d, 4242);
	put32(d, 4243);
	put64(d, to);
	put64(d, from);
	put64(d, to);
	put64(d, size);
	put64(d, index);
}

static void dump_other(struct dump *d, uint32_t id, size_t body)
{
	put32(d, id);
	put32(d, (uint32_t)(16 + body));
	put64(d, 3);
	for (size_t i = 0; i < body; i++)
		put(d, "", 1);
}

static void write_bytes(const char *path, const char *mode, const void *p, size_t n)
{
	FILE *f = fopen(path, mode);
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fwrite(p, 1, n, f) == n);
	fclose(f);
}

static void test_jitdump(int swap)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/jit-%d.dump", dir, swap);
	struct dump d = { .swap = swap };
	dump_header(&d);
	dump_other(&d, 4, 40);                                   /* unwinding info: passed over */
	dump_load(&d, 0x7000, 0x100, 1, "JS:*first /a.js:1", 0x100); /* record 2 */
	dump_load(&d, 0x8000, 0x40, 2, "Builtin:Big", 300000);   /* code past the read buffer */
	dump_other(&d, 2, 64);                                   /* debug info */
	dump_move(&d, 0x7000, 0x9000, 0x100, 1);                 /* record 5: first, moved */
	dump_move(&d, 0x1, 0x2, 0x10, 99);                       /* record 6: no such index */
	size_t cut = d.len;
	dump_load(&d, 0xa000, 0x20, 3, "JS:*late /a.js:9", 16); /* written in two steps */
	CHECK(d.b != NULL);
	if (!d.b)
		return;
	write_bytes(path, "wb", d.b, cut + 60); /* the late record up to 4 bytes of its name */
	symdb_perfmap *m = NULL;
	CHECK_RC(symdb_perfmap_open(path, NULL, &m));
	if (!m) {
		free(d.b);
		return;
	}
	CHECK_NAME(m, 0x7000, "JS:*first /a.js:1");
	CHECK_NAME(m, 0x70ff, "JS:*first /a.js:1");
	CHECK_NAME(m, 0x803f, "Builtin:Big");
	CHECK_NAME(m, 0x8040, "");
	CHECK_NAME(m, 0x9080, "JS:*first /a.js:1");
	CHECK_NAME(m, 0xa000, "");
	SYMDB_OPTS(symdb_perfmap_sym, s);
	CHECK(symdb_perfmap_lookup(m, 0x9000, &s) == 0 && s.line == 5 && s.size == 0x100);
	symdb_perfmap_stats st = stats_of(m);
	CHECK(st.entries == 3);
	CHECK(st.skipped == 1 && st.first_skipped_line == 6);
	CHECK(st.pending == 60);
	write_bytes(path, "ab", d.b + cut + 60, d.len - cut - 60);
	CHECK(symdb_perfmap_refresh(m, NULL) == 1);
	CHECK_NAME(m, 0xa01f, "JS:*late /a.js:9");
	CHECK_NAME(m, 0x7000, "JS:*first /a.js:1");
	st = stats_of(m);
	CHECK(st.entries == 4 && st.pending == 0 && st.lines == 7);
	/* A record that says it is shorter than its prefix: nothing after it
	 * can be trusted; what came before still answers. */
	d.len = 0;
	put32(&d, 0);
	put32(&d, 8);
	put64(&d, 4);
	write_bytes(path, "ab", d.b, d.len);
	CHECK(symdb_perfmap_refresh(m, NULL) == 1);
	CHECK_NAME(m, 0xa000, "JS:*late /a.js:9");
	st = stats_of(m);
	CHECK(st.skipped == 2 && st.entries == 4);
	symdb_perfmap_close(m);

	/* Not a jitdump version this reader knows: one skipped record. */
	d.len = 0;
	dump_header(&d);
	d.b[4] = d.b[7] = 7;
	dump_load(&d, 0x7000, 0x100, 1, "JS:*first /a.js:1", 0);
	write_bytes(path, "wb", d.b, d.len);
	CHECK_RC(symdb_perfmap_open(path, NULL, &m));
	if (m) {
		CHECK_NAME(m, 0x7000, "");
		st = stats_of(m);
		CHECK(st.entries == 0 && st.skipped == 1);
	}
	symdb_perfmap_close(m);
	free(d.b);
}

static void test_open_errors(void)
{
	char eb[512] = "", want[4300];
	SYMDB_OPTS(symdb_perfmap_opts, o, .errbuf = eb, .errbuf_sz = sizeof eb, .dir = dir);
	symdb_perfmap *m = (symdb_perfmap *)1;
	/* No map for this pid in dir. */
	CHECK(symdb_perfmap_open_pid(999999999, &o, &m) == -ENOENT);
	CHECK(m == NULL);
	snprintf(want, sizeof want, "%s/perf-999999999.map: No such file or directory", dir);
	CHECK(strcmp(eb, want) == 0);
	if (strcmp(eb, want))
		fprintf(stderr, "errbuf: '%s'\n", eb);
	CHECK(symdb_perfmap_open(dir, &o, &m) == SYMDB_E_INVAL);
	CHECK(symdb_perfmap_open_pid(0, &o, &m) == SYMDB_E_INVAL);
	SYMDB_OPTS(symdb_perfmap_opts, bad, .flags = 0x80);
	CHECK(symdb_perfmap_open_pid(1, &bad, &m) == SYMDB_E_INVAL);
	/* By pid, in dir: our own pid's map. */
	char path[4200];
	snprintf(path, sizeof path, "%s/perf-%d.map", dir, (int)getpid());
	write_file(path, "w", "7f0000001000 40 Function:self\n");
	CHECK_RC(symdb_perfmap_open_pid((int)getpid(), &o, &m));
	if (m) {
		CHECK(strcmp(symdb_perfmap_path(m), path) == 0);
		CHECK_NAME(m, 0x7f000000103f, "Function:self");
		symdb_perfmap_close(m);
	}
	/* The same file as an earlier process with our pid would have left it:
	 * last written an hour before we started. */
	struct timespec old[2] = { { .tv_sec = time(NULL) - 3600 }, { .tv_sec = time(NULL) - 3600 } };
	CHECK(utimensat(AT_FDCWD, path, old, 0) == 0);
	eb[0] = '\0';
	m = (symdb_perfmap *)1;
	CHECK(symdb_perfmap_open_pid((int)getpid(), &o, &m) == -ESTALE);
	CHECK(m == NULL);
	snprintf(want, sizeof want, "%s: written before process %d started (left by an earlier "
	         "process with this pid)", path, (int)getpid());
	CHECK(strcmp(eb, want) == 0);
	if (strcmp(eb, want))
		fprintf(stderr, "errbuf: '%s'\n", eb);
	CHECK_RC(symdb_perfmap_open(path, NULL, &m)); /* by path: the caller's call */
	symdb_perfmap_close(m);
	CHECK(utimensat(AT_FDCWD, path, NULL, 0) == 0); /* written again now */
	/* In the process's root: /proc/self/root/DIR is DIR itself here. */
	SYMDB_OPTS(symdb_perfmap_opts, r, .dir = dir, .flags = SYMDB_PERFMAP_IN_ROOT);
	m = NULL;
	CHECK_RC(symdb_perfmap_open_pid((int)getpid(), &r, &m));
	if (m)
		CHECK_NAME(m, 0x7f0000001000, "Function:self");
	symdb_perfmap_close(m);
	symdb_perfmap_close(NULL);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/live_perfmap.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	test_format();
	test_huge_line();
	test_rewrite();
	test_open_errors();
	test_jitdump(0);
	test_jitdump(1);
	return check_exit();
}
