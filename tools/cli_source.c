/* SPDX-License-Identifier: MIT */
/*
 * Source context for --print-source-context-lines (see cli_source.h).  The
 * window is FirstLine = max(1, Line - N/2) .. LastLine = FirstLine + N - 1,
 * as in llvm-symbolizer-14's DIPrinter; a window starting past the end of
 * the file prints nothing, one running past it prints what there is.  The
 * text is the file's, or the source its line table embeds (DWARF 5
 * DW_LNCT_LLVM_source), which llvm-symbolizer prefers to the file.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "cli_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_source_fini(struct cli_source *s)
{
	free(s->path);
	free(s->data);
	free(s->out);
	memset(s, 0, sizeof(*s));
}

/* Read the whole file into the one-entry cache; returns 0 or -1. */
static int load(struct cli_source *s, const char *file)
{
	if (s->path && strcmp(s->path, file) == 0)
		return s->data ? 0 : -1;
	free(s->path);
	free(s->data);
	s->data = NULL;
	s->len = 0;
	s->path = strdup(file);
	FILE *f = fopen(file, "rb");
	if (!f)
		return -1;
	size_t cap = 0, n;
	char chunk[65536];
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (s->len + n > cap) {
			cap = (s->len + n) * 2;
			char *nd = realloc(s->data, cap);
			if (!nd)
				break;
			s->data = nd;
		}
		memcpy(s->data + s->len, chunk, n);
		s->len += n;
	}
	int err = ferror(f);
	fclose(f);
	if (!s->data) /* an empty file still "loads" */
		s->data = malloc(1);
	if (err || !s->data) {
		free(s->data);
		s->data = NULL;
		return -1;
	}
	return 0;
}

static void out_mem(struct cli_source *s, const char *p, size_t n)
{
	if (s->out_len + n > s->out_cap) {
		size_t cap = s->out_cap ? s->out_cap : 256;
		while (cap < s->out_len + n)
			cap *= 2;
		char *no = realloc(s->out, cap);
		if (!no)
			return;
		s->out = no;
		s->out_cap = cap;
	}
	memcpy(s->out + s->out_len, p, n);
	s->out_len += n;
}

/* Digits of ceil(log10(x)) for x >= 1, llvm's line-number width. */
static int number_width(int64_t x)
{
	int w = 0;
	for (int64_t p = 1; p < x && w < 19; p *= 10)
		w++;
	return w;
}

/* Offset of the start of line `first` (1-based), or -1 past the end. */
static ptrdiff_t line_start(const char *d, size_t n, int64_t first)
{
	size_t pos = 0;
	for (int64_t l = 1; l < first; l++) {
		const char *nl = memchr(d + pos, '\n', n - pos);
		if (!nl)
			return -1;
		pos = (size_t)(nl - d) + 1;
	}
	return (ptrdiff_t)pos;
}

/* The context of `line` in d[0..n). */
static void format_text(struct cli_source *s, const char *d, size_t n, int64_t line)
{
	int64_t first = line - s->lines / 2 > 1 ? line - s->lines / 2 : 1;
	int64_t last = first + s->lines - 1;
	ptrdiff_t start = line_start(d, n, first);
	if (start < 0)
		return;
	int width = number_width(last);
	size_t pos = (size_t)start;
	for (int64_t l = first; l <= last && pos < n; l++) {
		const char *nl = memchr(d + pos, '\n', n - pos);
		size_t end = nl ? (size_t)(nl - d) : n;
		size_t tl = end - pos;
		if (tl && d[pos + tl - 1] == '\r')
			tl--;
		char num[32];
		int k = snprintf(num, sizeof(num), "%*lld", width, (long long)l);
		out_mem(s, num, (size_t)k);
		out_mem(s, l == line ? " >: " : "  : ", 4);
		out_mem(s, d + pos, tl);
		out_mem(s, "\n", 1);
		if (!nl)
			break;
		pos = end + 1;
	}
}

void cli_source_format(struct cli_source *s, const char *file, int64_t line)
{
	s->out_len = 0;
	if (s->lines <= 0 || !file || load(s, file) < 0)
		return;
	format_text(s, s->data, s->len, line);
}

void cli_source_format_text(struct cli_source *s, const char *text, size_t len, int64_t line)
{
	s->out_len = 0;
	if (s->lines > 0)
		format_text(s, text, len, line);
}
