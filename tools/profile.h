/* SPDX-License-Identifier: MIT */
/*
 * profile.h - the parts of `symdb pprof` and `symdb perf` and the one model
 * they share: stacks of symbolized frames with weights ("folded stacks"),
 * written as text (`a;b;c N`, the format every flame-graph tool reads) or
 * rendered as a self-contained interactive SVG flame graph.
 *
 *   prof_folded.c   the model: stacks interned, equal stacks merged, weights
 *                   summed; the text writer (and reader, for `symdb flame`)
 *   prof_svg.c      the SVG flame graph (search, zoom on click, tooltips with
 *                   file:line, colours by frame kind); no network, no fonts
 *                   fetched, one file
 *   cmd_pprof.c     `symdb pprof IN [-o OUT] [--force] [--svg FILE]`
 *   prof_pprof.c    profile.proto in and out through protobuf-c
 *   cmd_perf.c      `symdb perf [IN|-] [-o OUT] [--svg FILE]`: perf script
 *                   text in, folded stacks out
 *   prof_perf.c     the `perf script` parser and its batching
 *
 * Internal to the CLI (tools/); not installed.  Not thread-safe: one
 * prof_folded belongs to one thread.
 */
#ifndef SYMDB_PROFILE_H
#define SYMDB_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What a frame is, for colour and for the folded text's annotation. */
enum prof_kind {
	PROF_USER = 0,   /* native user-space code, symbolized from an image */
	PROF_KERNEL = 1, /* the kernel or a module */
	PROF_JIT = 2,    /* JIT code: a perf map or jitdump */
	PROF_UNKNOWN = 3 /* not symbolized: an unknown image, no symbol */
};

/* One frame.  The strings are copied by prof_folded_add (interned once). */
typedef struct prof_frame {
	const char *name;   /* function (demangled), or "[unknown]" / "MODULE+0xOFF" */
	const char *file;   /* source file, or NULL */
	uint32_t line;      /* 0 = unknown */
	uint8_t kind;       /* enum prof_kind */
	uint8_t inlined;    /* 1: an inline frame (not the outermost of its address) */
	const char *module; /* the image's file name (basename), or NULL */
} prof_frame;

typedef struct prof_folded prof_folded;

/* New empty model, or NULL when out of memory. */
prof_folded *prof_folded_new(void);
void prof_folded_free(prof_folded *f);

/* Add one stack, frames[0] the root (outermost caller), frames[n-1] the
 * leaf, with weight (samples or a value).  Equal stacks (same frames,
 * comparing name, file, line, kind, inlined, module) are merged.  0,
 * -ENOMEM, -EINVAL (n == 0, a kind out of range) or -EOVERFLOW (the total
 * weight would pass UINT64_MAX); on failure no stack or weight is added. */
int prof_folded_add(prof_folded *f, const prof_frame *frames, size_t n, uint64_t weight);

/* Total weight and number of distinct stacks. */
uint64_t prof_folded_total(const prof_folded *f);
size_t prof_folded_count(const prof_folded *f);

/* Options of the text writer.  annotate: append "_[k]" to kernel frames,
 * "_[j]" to JIT frames, "_[i]" to inline frames, as flamegraph.pl's
 * --color=java convention reads them; 0 writes bare names. */
typedef struct prof_text_opts {
	size_t sz;
	int annotate;
} prof_text_opts;

/* Write every stack as "name;name;... WEIGHT\n", root first, sorted by the
 * stack text (a stable, diffable order).  Names have ';' and control bytes
 * replaced (';' by ':', others escaped) so a line always parses.
 * 0 or -errno (a write error). */
int prof_folded_write_text(const prof_folded *f, FILE *out, const prof_text_opts *opts);

/* Read folded text ("a;b;c N" lines; "_[k]" / "_[j]" / "_[i]" suffixes
 * become kinds); a bad line is one error line naming its number.
 * 0, -errno, or -EINVAL with errbuf filled. */
int prof_folded_read_text(prof_folded *f, FILE *in, const char *name, char *errbuf,
                          size_t errbuf_sz);

/* Options of the SVG writer. */
typedef struct prof_svg_opts {
	size_t sz;
	const char *title;    /* the page's <title> and heading; NULL = "Flame Graph" */
	const char *subtitle; /* e.g. "12,345 samples, 99.2% resolved"; NULL = none */
	const char *unit;     /* "samples" (default) or a pprof sample type */
	unsigned width;       /* pixels; 0 = 1200 */
	double min_width;     /* frames narrower than this many pixels are not drawn; 0 = 0.1 */
} prof_svg_opts;

/* Render the model as one self-contained SVG document (inline script and
 * style, nothing fetched): a frame per box, root at the bottom, width by
 * weight; click zooms, a search box highlights matches and shows the
 * matched share, a tooltip shows name, file:line, module, weight and share;
 * colours by kind (user warm, kernel orange/brown, JIT green, inlined
 * lighter/outlined, unknown grey).  All text escaped for XML.  0 or -errno. */
int prof_svg_write(const prof_folded *f, FILE *out, const prof_svg_opts *opts);

/* Commands, with the signature of the command table in symdb_main.c (the
 * global options, --db DIR, come in g; argv[0] is the command's name). */
struct cli_global;
int cmd_pprof(const struct cli_global *g, int argc, char **argv);
int cmd_perf(const struct cli_global *g, int argc, char **argv);
/* `symdb flame FOLDED [-o OUT.svg]` (--svg OUT too): render folded text */
int cmd_flame(const struct cli_global *g, int argc, char **argv);

#endif /* SYMDB_PROFILE_H */
