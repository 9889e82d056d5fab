/* SPDX-License-Identifier: MIT */
/*
 * test_prof_folded: the folded-stacks model of the profile commands
 * (tools/prof_folded.c): equal stacks merged whatever the strings' storage,
 * weights summed and checked for overflow, names escaped so that a line
 * always parses, the text form sorted, and folded text read back, every
 * expectation written by hand here (flamegraph.pl's "a;b;c N" format);
 * and the SVG writer's tooltips (name, file:line, module, kind, share) and
 * XML escaping (tools/prof_svg.c; the browser checks it in tests/profile).
 */
#define _POSIX_C_SOURCE 200809L /* fmemopen, open_memstream */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "prof_model.h"

/* The model's text, in a malloc'd string. */
static char *text_of(const prof_folded *f, int annotate)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	prof_text_opts o = { .sz = sizeof(o), .annotate = annotate };
	CHECK(m != NULL);
	if (!m)
		return strdup("");
	CHECK(prof_folded_write_text(f, m, &o) == 0);
	fclose(m);
	return buf;
}

/* Read text into a new model; *rc gets prof_folded_read_text()'s result. */
static prof_folded *read_str(const char *text, int *rc, char *eb, size_t ebsz)
{
	prof_folded *f = prof_folded_new();
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	CHECK(f && in);
	if (!f || !in)
		exit(1);
	*rc = prof_folded_read_text(f, in, "in.folded", eb, ebsz);
	fclose(in);
	return f;
}

static void test_merge(void)
{
	/* Strings in different buffers with equal contents are one frame. */
	char main1[] = "main", main2[] = "main", work[] = "work";
	prof_frame a[] = { { .name = main1, .file = "m.c", .line = 3 }, { .name = work } };
	prof_frame b[] = { { .name = main2, .file = "m.c", .line = 3 }, { .name = "work" } };
	prof_frame c[] = { { .name = "main", .file = "m.c", .line = 3 } };
	prof_folded *f = prof_folded_new();

	CHECK(prof_folded_add(f, a, 2, 5) == 0);
	CHECK(prof_folded_add(f, b, 2, 7) == 0);
	CHECK(prof_folded_add(f, c, 1, 1) == 0);
	CHECK(prof_folded_count(f) == 2);
	CHECK(prof_folded_total(f) == 13);
	CHECK(prof_folded_frames(f) == 2);
	const uint32_t *ids;
	size_t n;
	CHECK(prof_folded_stack(f, 0, &ids, &n) == 12 && n == 2);
	CHECK(strcmp(prof_folded_frame(f, ids[0])->file, "m.c") == 0);
	CHECK(prof_folded_frame(f, ids[0])->line == 3);
	CHECK(prof_folded_stack(f, 1, &ids, &n) == 1 && n == 1);

	/* Another line, kind or inlined flag is another frame... */
	prof_frame d[] = { { .name = "main", .file = "m.c", .line = 4 }, { .name = "work" } };
	prof_frame e[] = { { .name = "main", .file = "m.c", .line = 3 },
		           { .name = "work", .kind = PROF_KERNEL } };
	prof_frame g[] = { { .name = "main", .file = "m.c", .line = 3 },
		           { .name = "work", .inlined = 1 } };
	CHECK(prof_folded_add(f, d, 2, 1) == 0);
	CHECK(prof_folded_add(f, e, 2, 1) == 0);
	CHECK(prof_folded_add(f, g, 2, 1) == 0);
	CHECK(prof_folded_count(f) == 5);
	CHECK(prof_folded_total(f) == 16);
	/* ...but bare text shows names only: those stacks are one line. */
	char *t = text_of(f, 0);
	CHECK(strcmp(t, "main 1\nmain;work 15\n") == 0);
	free(t);
	t = text_of(f, 1);
	CHECK(strcmp(t, "main 1\nmain;work 13\nmain;work_[i] 1\nmain;work_[k] 1\n") == 0);
	free(t);

	/* Bad calls change nothing. */
	CHECK(prof_folded_add(f, a, 0, 1) == -EINVAL);
	prof_frame bad[] = { { .name = "x", .kind = 9 } };
	CHECK(prof_folded_add(f, bad, 1, 1) == -EINVAL);
	CHECK(prof_folded_add(f, a, 2, UINT64_MAX) == -EOVERFLOW);
	CHECK(prof_folded_total(f) == 16 && prof_folded_count(f) == 5);
	prof_folded_free(f);
}

static void test_many(void)
{
	/* Enough distinct frames and stacks to rehash every table a few times;
	 * the same stacks added again only add weight. */
	prof_folded *f = prof_folded_new();
	char name[32];
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 3000; i++) {
			snprintf(name, sizeof(name), "fn%d", i);
			prof_frame st[] = { { .name = "root" }, { .name = name }, { .name = "leaf" } };
			CHECK(prof_folded_add(f, st, 3, (uint64_t)i + 1) == 0);
		}
	CHECK(prof_folded_count(f) == 3000);
	CHECK(prof_folded_frames(f) == 3002);
	CHECK(prof_folded_total(f) == 2ULL * 3000 * 3001 / 2);
	const uint32_t *ids;
	size_t n;
	CHECK(prof_folded_stack(f, 2999, &ids, &n) == 6000 && n == 3);
	CHECK(strcmp(prof_folded_frame(f, ids[1])->name, "fn2999") == 0);
	prof_folded_free(f);
}

static void test_escape(void)
{
	prof_folded *f = prof_folded_new();
	prof_frame st[] = { { .name = "std::map<a;b>" }, { .name = "line\nbreak\x1b[31m" },
		            { .name = "" }, { .name = NULL }, { .name = "x y (z)" } };
	CHECK(prof_folded_add(f, st, 5, 3) == 0);
	char *t = text_of(f, 0);
	CHECK(strcmp(t, "std::map<a:b>;line\\x0abreak\\x1b[31m;[unknown];[unknown];x y (z) 3\n") == 0);

	/* The escaped text reads back to the control bytes. */
	int rc;
	char eb[128] = "";
	prof_folded *g = read_str(t, &rc, eb, sizeof(eb));
	CHECK(rc == 0);
	const uint32_t *ids;
	size_t n;
	CHECK(prof_folded_count(g) == 1 && prof_folded_stack(g, 0, &ids, &n) == 3 && n == 5);
	if (n == 5) {
		CHECK(strcmp(prof_folded_frame(g, ids[1])->name, "line\nbreak\x1b[31m") == 0);
		CHECK(strcmp(prof_folded_frame(g, ids[4])->name, "x y (z)") == 0);
		CHECK(prof_folded_frame(g, ids[2])->kind == PROF_UNKNOWN);
	}
	char *t2 = text_of(g, 0);
	CHECK(strcmp(t, t2) == 0);
	free(t);
	free(t2);
	prof_folded_free(f);
	prof_folded_free(g);
}

static void test_round_trip(void)
{
	/* Unsorted, a repeated stack, CRLF, blank lines, spaces before the
	 * count, every suffix, a backslash that is not an escape. */
	static const char in[] =
		"python3;_start;main;Py_RunMain;_PyEval_EvalFrameDefault 10\n"
		"\n"
		"python3;entry_SYSCALL_64_[k];do_syscall_64_[k] 4\r\n"
		"python3;_start;main;Py_RunMain;_PyEval_EvalFrameDefault 5\n"
		"node;LazyCompile:*fib /app/fib.js:3_[j];LazyCompile:*fib /app/fib.js:3_[j] 7\n"
		"python3;_start;main;inline_helper_[i]   2\n"
		"a\\b;[unknown] 0\n";
	static const char want[] =
		"a\\b;[unknown] 0\n"
		"node;LazyCompile:*fib /app/fib.js:3_[j];LazyCompile:*fib /app/fib.js:3_[j] 7\n"
		"python3;_start;main;Py_RunMain;_PyEval_EvalFrameDefault 15\n"
		"python3;_start;main;inline_helper_[i] 2\n"
		"python3;entry_SYSCALL_64_[k];do_syscall_64_[k] 4\n";
	int rc;
	char eb[128] = "";
	prof_folded *f = read_str(in, &rc, eb, sizeof(eb));
	CHECK(rc == 0);
	if (rc)
		fprintf(stderr, "read: %s\n", eb);
	CHECK(prof_folded_count(f) == 5);
	CHECK(prof_folded_total(f) == 28);
	char *t = text_of(f, 1);
	CHECK(strcmp(t, want) == 0);
	if (strcmp(t, want))
		fprintf(stderr, "got:\n%s", t);

	/* Kinds and names from the suffixes. */
	int kinds[4] = { 0 }, inl = 0;
	for (uint32_t i = 0; i < prof_folded_frames(f); i++) {
		const prof_frame *fr = prof_folded_frame(f, i);
		kinds[fr->kind]++;
		inl += fr->inlined;
		CHECK(strstr(fr->name, "_[") == NULL);
		if (strcmp(fr->name, "do_syscall_64") == 0)
			CHECK(fr->kind == PROF_KERNEL);
	}
	CHECK(kinds[PROF_KERNEL] == 2 && kinds[PROF_JIT] == 1 && kinds[PROF_UNKNOWN] == 1);
	CHECK(inl == 1);

	/* Written text read again is the same model's text. */
	prof_folded *g = read_str(t, &rc, eb, sizeof(eb));
	char *t2 = text_of(g, 1);
	CHECK(rc == 0 && strcmp(t, t2) == 0);
	free(t);
	free(t2);
	prof_folded_free(f);
	prof_folded_free(g);
}

static void test_bad_lines(void)
{
	static const struct {
		const char *text, *err;
	} cases[] = {
		{ "a;b 1\na;b\n", "in.folded:2: no sample count at the end of the line" },
		{ "a;b \n", "in.folded:1: no sample count at the end of the line" },
		{ "a;b 1.5\n", "in.folded:1: sample count is not a whole number" },
		{ "a;b -1\n", "in.folded:1: sample count is not a whole number" },
		{ "a;b 18446744073709551616\n", "in.folded:1: sample count out of range" },
		{ "a 18446744073709551615\nb 1\n", "in.folded:2: total sample count out of range" },
		{ "a;;b 1\n", "in.folded:1: empty frame name" },
		{ ";a 1\n", "in.folded:1: empty frame name" },
		{ "a; 1\n", "in.folded:1: empty frame name" },
		{ "   7\n", "in.folded:1: no frames before the sample count" },
		{ "42\n", "in.folded:1: no sample count at the end of the line" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;
		char eb[128] = "";
		prof_folded *f = read_str(cases[i].text, &rc, eb, sizeof(eb));
		CHECK(rc == -EINVAL);
		if (strcmp(eb, cases[i].err)) {
			check_failures++;
			fprintf(stderr, "case %zu: got '%s', want '%s'\n", i, eb, cases[i].err);
		}
		prof_folded_free(f);
	}
	/* A NUL byte inside a line. */
	static const char nul[] = "a;b 1\nx\0y 2\n";
	prof_folded *f = prof_folded_new();
	FILE *in = fmemopen((void *)nul, sizeof(nul) - 1, "r");
	char eb[128] = "";
	CHECK(prof_folded_read_text(f, in, "in.folded", eb, sizeof(eb)) == -EINVAL);
	CHECK(strcmp(eb, "in.folded:2: NUL byte in the line") == 0);
	fclose(in);
	prof_folded_free(f);
}

/* The SVG document, in a malloc'd string. */
static char *svg_of(const prof_folded *f, const prof_svg_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	CHECK(m != NULL);
	if (!m)
		return strdup("");
	CHECK(prof_svg_write(f, m, o) == 0);
	fclose(m);
	return buf;
}

static void test_svg(void)
{
	prof_folded *f = prof_folded_new();
	prof_frame a[] = { { .name = "main", .file = "/src/m.c", .line = 3, .module = "prog" },
		           { .name = "vec<int>::at", .file = "v.h", .line = 9, .inlined = 1,
		             .module = "prog" } };
	prof_frame b[] = { { .name = "main", .file = "/src/m.c", .line = 3, .module = "prog" },
		           { .name = "do_sys_open", .kind = PROF_KERNEL } };
	prof_frame c[] = { { .name = "bad\xff\xef\xbf\xbe\x01name" } };
	CHECK(prof_folded_add(f, a, 2, 3) == 0);
	CHECK(prof_folded_add(f, b, 2, 1) == 0);
	CHECK(prof_folded_add(f, c, 1, 4) == 0);
	prof_svg_opts o = { .sz = sizeof(o), .title = "t<&>\"", .unit = "ms" };
	char *svg = svg_of(f, &o);
	CHECK(strstr(svg, "<title>t&lt;&amp;&gt;&quot;</title>") != NULL);
	CHECK(strstr(svg, "<title>main\n/src/m.c:3\nmodule prog\nuser\n4 ms, 50.00%</title>"));
	CHECK(strstr(svg, "<title>vec&lt;int&gt;::at\nv.h:9\nmodule prog\nuser, inlined\n"
	                  "3 ms, 37.50%</title>"));
	CHECK(strstr(svg, "<title>do_sys_open\nkernel\n1 ms, 12.50%</title>"));
	CHECK(strstr(svg, "<title>all\n8 ms, 100.00%</title>"));
	/* Bytes that are not UTF-8, U+FFFE (not an XML character), controls. */
	CHECK(strstr(svg, "<title>bad\\xff\\xef\\xbf\\xbe\\x01name\n"));
	/* Boxes: kind letters, the inlined class, widths by weight (1180 px). */
	CHECK(strstr(svg, "<g class=\"f i\" data-x=\"5\" data-w=\"3\" data-d=\"2\" data-k=\"u\">"));
	CHECK(strstr(svg, "data-x=\"4\" data-w=\"1\" data-d=\"2\" data-k=\"k\">"));
	CHECK(strstr(svg, "width=\"442.5\" height=\"15\""));
	CHECK(strstr(svg, "width=\"1180.0\" height=\"15\""));
	/* 66 px of title, 3 rows of 16 px, 30 px of details line. */
	CHECK(strstr(svg, "width=\"1200\" height=\"144\""));
	/* Nothing outside the document is referenced. */
	CHECK(strstr(svg, "href") == NULL && strstr(svg, "https:") == NULL);
	free(svg);

	/* min_width leaves out the 1-sample frame (147.5 px) and nothing else. */
	o.min_width = 150;
	svg = svg_of(f, &o);
	CHECK(strstr(svg, "do_sys_open") == NULL);
	CHECK(strstr(svg, "vec&lt;int&gt;::at") != NULL);
	free(svg);
	/* Only the 590 px boxes stay: the picture loses its top row. */
	o.min_width = 500;
	svg = svg_of(f, &o);
	CHECK(strstr(svg, "vec&lt;int&gt;::at") == NULL);
	CHECK(strstr(svg, "<title>main\n") != NULL);
	CHECK(strstr(svg, "width=\"1200\" height=\"128\""));
	free(svg);
	prof_folded_free(f);
}

/* Boxes are functions: frames that differ only in their line are one box,
 * its tooltip giving the range of lines; kind and inlined still split. */
static void test_svg_lines(void)
{
	prof_folded *f = prof_folded_new();
	prof_frame a[] = { { .name = "main", .file = "/src/m.c", .line = 3 },
		           { .name = "work", .file = "w.c", .line = 10 } };
	prof_frame b[] = { { .name = "main", .file = "/src/m.c", .line = 7 },
		           { .name = "work", .file = "w.c", .line = 12 } };
	prof_frame c[] = { { .name = "main", .file = "/src/m.c", .line = 5 },
		           { .name = "work", .file = "w.c", .line = 10, .inlined = 1 } };
	CHECK(prof_folded_add(f, a, 2, 2) == 0);
	CHECK(prof_folded_add(f, b, 2, 3) == 0);
	CHECK(prof_folded_add(f, c, 2, 1) == 0);
	CHECK(prof_folded_count(f) == 3);
	char *svg = svg_of(f, &(prof_svg_opts){ .sz = sizeof(prof_svg_opts) });
	CHECK(strstr(svg, "<title>main\n/src/m.c:3-7\nuser\n6 samples, 100.00%</title>"));
	CHECK(strstr(svg, "<title>work\nw.c:10-12\nuser\n5 samples, 83.33%</title>"));
	CHECK(strstr(svg, "<title>work\nw.c:10\nuser, inlined\n1 samples, 16.67%</title>"));
	size_t boxes = 0;
	for (const char *p = svg; (p = strstr(p, " data-x=\"")); p++)
		boxes++;
	CHECK(boxes == 4); /* all, main, work, work inlined */
	free(svg);
	prof_folded_free(f);
}

int main(void)
{
	test_merge();
	test_many();
	test_escape();
	test_round_trip();
	test_bad_lines();
	test_svg();
	test_svg_lines();
	return check_exit();
}
