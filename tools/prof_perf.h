/* SPDX-License-Identifier: MIT */
/*
 * prof_perf.h - the reader of `perf script` text for `symdb perf`
 * (cmd_perf.c): samples (a header line, then one line per callchain frame,
 * then a blank line, or the header line alone, its address at its end) and
 * mmap events (--show-mmap-events), as perf 6.1 prints them.  Internal to the CLI; one reader belongs to one thread.
 */
#ifndef SYMDB_PROF_PERF_H
#define SYMDB_PROF_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One frame as perf printed it: ADDR [SYM[+OFF]] (DSO).  For a frame in a
 * file (a DSO) perf prints the address relative to the mapping
 * (address - map start + page offset: the file offset); for the kernel, a
 * JIT perf map and unmapped code, the runtime address. */
typedef struct prof_perf_frame {
	uint64_t addr;
	const char *dso; /* "" when perf printed none */
	int runtime;     /* the address on the sample's own line (a sample
	                    without a callchain): perf prints sample->ip there,
	                    the runtime address, for files too; mapped back
	                    through the mmap events (cmd_perf.c) */
} prof_perf_frame;

enum prof_perf_kind { PROF_PERF_END = 0, PROF_PERF_SAMPLE = 1, PROF_PERF_MMAP = 2 };

/* What prof_perf_next() read.  Strings are the reader's, valid until its
 * next call. */
typedef struct prof_perf_event {
	int kind;                 /* enum prof_perf_kind */
	const char *comm;         /* the process name ("" when not printed) */
	long pid;                 /* -1 when not printed */
	uint64_t period;          /* the sample's period; 0 when not printed */
	const prof_perf_frame *frames; /* leaf first */
	size_t nframes;
	const char *path;         /* PROF_PERF_MMAP: the mapped file */
	uint64_t start, len, pgoff; /* PROF_PERF_MMAP: where (len 0: not read) */
	const char *build_id;     /* PROF_PERF_MMAP: hex, "" when not printed
	                             (perf record --buildid-mmap prints it) */
	uint64_t lineno;          /* the event's first line */
} prof_perf_event;

typedef struct prof_perf_reader prof_perf_reader;

/* A reader of `in` (not closed by the reader).  0 or -ENOMEM. */
int prof_perf_open(FILE *in, prof_perf_reader **out);
void prof_perf_close(prof_perf_reader *r);

/* The next sample or mmap event: 1 with *ev filled, 0 at the end of the
 * input, -errno on a read error.  Lines that are neither (other
 * PERF_RECORD_* events, a frame line that does not parse) are skipped and
 * counted. */
int prof_perf_next(prof_perf_reader *r, prof_perf_event *ev);

/* Lines skipped so far, the first one's number, and bytes read. */
uint64_t prof_perf_skipped(const prof_perf_reader *r, uint64_t *first_line);
/* How many frames perf printed only as "(inlined)" entries, none naming
 * the DSO (perf script without --no-inline; prof_perf.c): handed out with
 * no DSO. */
uint64_t prof_perf_inlined_only(const prof_perf_reader *r);
uint64_t prof_perf_bytes(const prof_perf_reader *r);

#endif /* SYMDB_PROF_PERF_H */
