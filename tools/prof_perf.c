/* SPDX-License-Identifier: MIT */
/*
 * prof_perf.c - reads `perf script` text (prof_perf.h) for `symdb perf`.
 *
 * perf 6.1 prints a sample as a header line
 *   COMM PID/TID [CPU] TIME: [PERIOD] EVENT: [ADDR (DSO)]
 * followed, when it has a callchain, by one line per frame, leaf first,
 *   <TAB> ADDR [SYM[+OFF]] (DSO)
 * and a blank line; samples without a callchain are one line each, with no
 * blank line between them, their COMM right-aligned in 16 columns (so the
 * line may start with spaces, never with a tab as a frame does) and ADDR
 * the runtime address (prof_perf_frame.runtime).  Which header fields are
 * there depends on -F, so the header is read by shape, not by column: the
 * last PID/TID (or bare PID followed by a time) token before the time ends
 * the command name, which may itself hold spaces, colons and "10/20", or be
 * absent; a decimal token before the event name is the period.  With
 * neither a pid nor a time nor an event (-F comm,ip,dso; comm,tid,ip,dso)
 * a line is a header when frames follow it; with no header field at all
 * (-F ip,dso) perf prints an empty line, and frames after a blank line are
 * a sample of their own.
 * Unless run with --no-inline, perf resolves inlined functions itself and
 * prints an address that has some as one entry per function, the same
 * address each time: the inlined ones with "(inlined)" where the DSO
 * goes, the outermost with its DSO -- or "(inlined)" too when its DWARF
 * name is not the symbol table's (glibc's __libc_start_main_impl, whose
 * symbol is __libc_start_main), and then no entry names the DSO.  symdb
 * expands inlines from the address itself, so such a group is one frame:
 * the entry with the DSO, or, when none has it, one frame with no DSO
 * (counted: prof_perf_inlined_only).
 * --show-mmap-events adds lines "... PERF_RECORD_MMAP2 PID/TID: [0xSTART(0xLEN)
 * @ 0xPGOFF MAJ:MIN INO GEN]: PROT PATH", with "<BUILDID>" in place of the
 * device and inode when perf record ran with --buildid-mmap.
 *
 * The reader hands out one event at a time; its strings live in one buffer
 * reused for the next event, so memory follows the longest sample, not the
 * input.
 */
#define _POSIX_C_SOURCE 200809L /* ssize_t */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prof_perf.h"

struct pframe {
	uint64_t addr;
	size_t dso; /* offset in sbuf */
	int runtime;
};

/* A longer line is skipped whole (read through, never held): no line of
 * perf script is near this, and input without a newline (/dev/zero, a
 * binary file) must not grow the buffer until memory runs out. */
#define PERF_MAX_LINE ((size_t)1 << 20)

struct prof_perf_reader {
	FILE *in;
	char *line;        /* the current line, at most PERF_MAX_LINE bytes */
	size_t line_cap;
	char *blk;         /* fread's block and the unread part of it */
	size_t blk_pos, blk_len;
	ssize_t line_len;  /* the line read but not yet used, or -1 */
	uint64_t lineno, bytes, skipped, first_skipped;

	/* The event being assembled: strings at offsets into sbuf. */
	char *sbuf;
	size_t slen, scap;
	struct pframe *pf;
	size_t npf, pf_cap;
	prof_perf_frame *out; /* handed out: pf with pointers */
	size_t out_cap;
	int pending;          /* a sample header was read */
	int candidate;        /* the last line is a header if frames follow */
	int after_blank;      /* the last line was blank (or there was none) */
	uint64_t inlined_only; /* groups of "(inlined)" entries with no DSO */
	size_t comm, path, build_id;
	uint64_t map_start, map_len, map_pgoff;
	long pid;
	uint64_t period, ev_line;
};

int prof_perf_open(FILE *in, prof_perf_reader **out)
{
	prof_perf_reader *r = calloc(1, sizeof *r);
	if (!r)
		return -ENOMEM;
	r->in = in;
	r->line_len = -1;
	r->after_blank = 1;
	*out = r;
	return 0;
}

void prof_perf_close(prof_perf_reader *r)
{
	if (!r)
		return;
	free(r->line);
	free(r->blk);
	free(r->sbuf);
	free(r->pf);
	free(r->out);
	free(r);
}

uint64_t prof_perf_skipped(const prof_perf_reader *r, uint64_t *first_line)
{
	if (first_line)
		*first_line = r->first_skipped;
	return r->skipped;
}

uint64_t prof_perf_bytes(const prof_perf_reader *r)
{
	return r->bytes;
}

uint64_t prof_perf_inlined_only(const prof_perf_reader *r)
{
	return r->inlined_only;
}

static void skip_line(prof_perf_reader *r)
{
	if (!r->skipped++)
		r->first_skipped = r->lineno;
}

/* Appends s[0..n) and a NUL to sbuf; returns its offset or SIZE_MAX. */
static size_t save_str(prof_perf_reader *r, const char *s, size_t n)
{
	if (r->scap - r->slen < n + 1) {
		size_t cap = r->scap ? r->scap : 256;
		while (cap - r->slen < n + 1)
			cap *= 2;
		char *p = realloc(r->sbuf, cap);
		if (!p)
			return SIZE_MAX;
		r->sbuf = p;
		r->scap = cap;
	}
	size_t off = r->slen;
	memcpy(r->sbuf + off, s, n);
	r->sbuf[off + n] = 0;
	r->slen += n + 1;
	return off;
}

static int is_hex(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Hex digits (an optional 0x) at *s: 0 with *v, else -1. */
static int read_hex(const char **s, const char *end, uint64_t *v)
{
	const char *p = *s;
	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	const char *d = p;
	uint64_t x = 0;
	for (; p < end && is_hex(*p); p++) {
		if (p - d == 16)
			return -1;
		int c = *p;
		x = x << 4 | (uint64_t)(is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	if (p == d)
		return -1;
	*v = x;
	*s = p;
	return 0;
}

/* "ADDR [SYM[+OFF]] (DSO)" in [s, end): the address and the DSO, the text
 * of the last balanced parenthesised group (a DSO such as
 * "/x.so (deleted)" has its own parentheses). */
static int parse_frame(prof_perf_reader *r, const char *s, const char *end, int runtime)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	uint64_t addr;
	if (read_hex(&s, end, &addr) < 0 || (s < end && *s != ' ' && *s != '\t'))
		return -1;
	const char *dso = end, *dso_end = end;
	if (end > s && end[-1] == ')') {
		int depth = 0;
		for (const char *p = end - 1; p >= s; p--) {
			depth += *p == ')' ? 1 : *p == '(' ? -1 : 0;
			if (depth == 0) {
				dso = p + 1;
				dso_end = end - 1;
				break;
			}
		}
	}
	if (r->npf == r->pf_cap) {
		size_t cap = r->pf_cap ? 2 * r->pf_cap : 64;
		struct pframe *p = realloc(r->pf, cap * sizeof *p);
		if (!p)
			return -ENOMEM;
		r->pf = p;
		r->pf_cap = cap;
	}
	size_t off = save_str(r, dso, (size_t)(dso_end - dso));
	if (off == SIZE_MAX)
		return -ENOMEM;
	r->pf[r->npf].addr = addr;
	r->pf[r->npf].runtime = runtime;
	r->pf[r->npf++].dso = off;
	return 0;
}

/* The next token of [*s, end) (spaces skipped): its start, *n its length. */
static const char *token(const char **s, const char *end, size_t *n)
{
	const char *p = *s;
	while (p < end && *p == ' ')
		p++;
	const char *t = p;
	while (p < end && *p != ' ')
		p++;
	*n = (size_t)(p - t);
	*s = p;
	return t;
}

static int all_digits(const char *t, size_t n, int extra)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_digit(t[i]) && t[i] != extra)
			return 0;
	return 1;
}

/* A time field: "123.456:". */
static int time_token(const char *t, size_t n)
{
	return n > 1 && t[n - 1] == ':' && all_digits(t, n - 1, '.');
}

/* "PID/TID", or a bare PID when the next token is a time ("123.456:"). */
static int pid_token(const char *t, size_t n, const char *rest, const char *end)
{
	const char *slash = memchr(t, '/', n);
	if (slash && slash > t && slash < t + n - 1)
		return all_digits(t, (size_t)(slash - t), 0) &&
		       all_digits(slash + 1, n - (size_t)(slash - t) - 1, 0);
	if (!all_digits(t, n, 0))
		return 0;
	size_t m;
	const char *nx = token(&rest, end, &m);
	return time_token(nx, m);
}

/* "0xS(0xL) @ 0xP" at p: the mapping's start, length and page offset into
 * r (length 0 when they do not parse). */
static void parse_range(prof_perf_reader *r, const char *p, const char *end)
{
	uint64_t start, len, pgoff;
	r->map_len = 0;
	if (read_hex(&p, end, &start) < 0 || p == end || *p++ != '(' ||
	    read_hex(&p, end, &len) < 0 || end - p < 4 || memcmp(p, ") @ ", 4))
		return;
	p += 4;
	if (read_hex(&p, end, &pgoff) < 0)
		return;
	r->map_start = start;
	r->map_len = len;
	r->map_pgoff = pgoff;
}

/* "... PERF_RECORD_MMAP[2] PID/TID: [0xS(0xL) @ 0xP <ID>|DEV INO GEN]: PROT PATH" */
static int parse_mmap(prof_perf_reader *r, const char *s, const char *end)
{
	const char *br = memchr(s, '[', (size_t)(end - s));
	const char *close = br ? memchr(br, ']', (size_t)(end - br)) : NULL;
	if (!close || end - close < 3 || close[1] != ':')
		return -1;
	const char *q = s;
	size_t n;
	token(&q, br, &n);                  /* PERF_RECORD_MMAP2 */
	const char *t = token(&q, br, &n);  /* PID/TID: */
	r->pid = n > 1 && t[n - 1] == ':' && is_digit(t[0]) ? strtol(t, NULL, 10) : -1;
	parse_range(r, br + 1, close);
	const char *id = memchr(br, '<', (size_t)(close - br));
	const char *id_end = id ? memchr(id, '>', (size_t)(close - id)) : NULL;
	r->build_id = save_str(r, "", 0);
	if (id_end && id_end > id + 1)
		r->build_id = save_str(r, id + 1, (size_t)(id_end - id - 1));
	const char *p = close + 2;
	token(&p, end, &n); /* the protection ("r-xp"; "x" for MMAP) */
	while (p < end && *p == ' ')
		p++;
	if (p == end)
		return -1;
	r->path = save_str(r, p, (size_t)(end - p));
	return r->path == SIZE_MAX || r->build_id == SIZE_MAX ? -ENOMEM : 0;
}

/* The last token of [s, *e) (spaces before *e dropped): its start. */
static const char *last_token(const char *s, const char **e)
{
	while (*e > s && (*e)[-1] == ' ')
		(*e)--;
	const char *t = *e;
	while (t > s && t[-1] != ' ')
		t--;
	return t;
}

/* A line with neither a pid nor an event (-F comm,ip,dso, comm,tid,ip,dso,
 * comm,time,ip,dso): a sample's header if frames follow it (3).  Its
 * command name is what precedes a trailing time and then a trailing bare
 * TID (one that is not the whole line). */
static int candidate_header(prof_perf_reader *r, const char *s, const char *end)
{
	const char *e = end, *t = last_token(s, &e);
	if (time_token(t, (size_t)(e - t))) {
		e = t;
		t = last_token(s, &e);
	}
	if (t > s && all_digits(t, (size_t)(e - t), 0)) {
		r->pid = strtol(t, NULL, 10);
		e = t;
		last_token(s, &e);
	}
	r->slen = 0;
	r->comm = save_str(r, s, (size_t)(e - s));
	return r->comm == SIZE_MAX ? -ENOMEM : 3;
}

/* A header line: a sample (1), an mmap event (2), another event (0), a
 * sample if frames follow (3). */
static int parse_header(prof_perf_reader *r, const char *s, const char *end)
{
	const char *rec = NULL;
	for (const char *p = s; (p = memchr(p, 'P', (size_t)(end - p))) != NULL; p++)
		if ((size_t)(end - p) > 12 && !memcmp(p, "PERF_RECORD_", 12)) {
			rec = p;
			break;
		}
	r->slen = 0;
	r->npf = 0;
	if (rec) {
		if ((size_t)(end - rec) < 17 || memcmp(rec + 12, "MMAP", 4))
			return 0;
		int rc = parse_mmap(r, rec, end);
		return rc == -ENOMEM ? rc : rc < 0 ? 0 : 2;
	}
	/* The command name ends where the last pid token before the time
	 * starts (at s: -F without comm); a name may hold "10/20" itself. */
	const char *p = s, *comm_end = s, *t, *pid = NULL, *after = NULL;
	size_t n;
	for (t = token(&p, end, &n); n && !time_token(t, n); t = token(&p, end, &n))
		if (pid_token(t, n, p, end)) {
			pid = t;
			after = p;
		}
	int found = pid != NULL;
	r->pid = -1;
	r->period = 0;
	if (found) {
		comm_end = pid;
		while (comm_end > s && comm_end[-1] == ' ')
			comm_end--;
		r->pid = strtol(pid, NULL, 10);
		p = after;
	} else {
		p = s;
	}
	r->comm = save_str(r, s, (size_t)(comm_end - s));
	if (r->comm == SIZE_MAX)
		return -ENOMEM;
	/* [CPU], TIME:, PERIOD, EVENT: -- then ADDR (DSO) without a callchain. */
	int event = 0;
	for (;;) {
		const char *q = p;
		t = token(&q, end, &n);
		if (!n)
			break;
		if (t[0] == '[' && t[n - 1] == ']') {
			p = q;
		} else if (t[n - 1] == ':' && all_digits(t, n - 1, '.')) {
			p = q;
		} else if (all_digits(t, n, 0)) {
			r->period = strtoull(t, NULL, 10);
			p = q;
		} else if (t[n - 1] == ':') {
			p = q; /* the event name: the last field before the address */
			event = 1;
			break;
		} else {
			break;
		}
	}
	if (!found && !event) /* a sample only if frames follow */
		return candidate_header(r, s, end);
	while (p < end && *p == ' ')
		p++;
	if (p < end && parse_frame(r, p, end, 1) < 0)
		skip_line(r);
	return 1;
}

/* Whether a line that starts with spaces is a sample's header (its command
 * name right-aligned, perf's "%16s" without a callchain) rather than a
 * frame: it holds a PID/TID token, or a bare PID followed by a time. */
static int header_shaped(const char *s, const char *end)
{
	const char *p = s, *t;
	size_t n;
	for (t = token(&p, end, &n); n; t = token(&p, end, &n))
		if (pid_token(t, n, p, end))
			return 1;
	return 0;
}

static int is_inlined(const prof_perf_reader *r, size_t i)
{
	return strcmp(r->sbuf + r->pf[i].dso, "inlined") == 0;
}

/* The frames of the sample, each group of perf's "(inlined)" entries made
 * one frame (the file comment); returns how many. */
static size_t fill_frames(prof_perf_reader *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->npf; i++) {
		const char *dso = r->sbuf + r->pf[i].dso;
		if (is_inlined(r, i)) {
			size_t j = i;
			while (j + 1 < r->npf && r->pf[j + 1].addr == r->pf[i].addr && is_inlined(r, j + 1))
				j++;
			if (j + 1 < r->npf && r->pf[j + 1].addr == r->pf[i].addr) {
				i = j; /* the group's own entry comes next */
				continue;
			}
			dso = "";
			r->inlined_only++;
			i = j;
		}
		r->out[n].addr = r->pf[i].addr;
		r->out[n].dso = dso;
		r->out[n++].runtime = r->pf[i].runtime;
	}
	return n;
}

static void fill_sample(prof_perf_reader *r, prof_perf_event *ev)
{
	size_t n = fill_frames(r);
	memset(ev, 0, sizeof *ev);
	ev->kind = PROF_PERF_SAMPLE;
	ev->comm = r->sbuf + r->comm;
	ev->pid = r->pid;
	ev->period = r->period;
	ev->frames = r->out;
	ev->nframes = n;
	ev->lineno = r->ev_line;
}

static int finish_sample(prof_perf_reader *r, prof_perf_event *ev)
{
	r->pending = 0;
	if (r->out_cap < r->npf) {
		prof_perf_frame *o = realloc(r->out, r->pf_cap * sizeof *o);
		if (!o)
			return -ENOMEM;
		r->out = o;
		r->out_cap = r->pf_cap;
	}
	fill_sample(r, ev);
	return 1;
}

#define PERF_BLOCK ((size_t)1 << 16)

/* Appends [s, s + n) to the line unless it is already too long; *len
 * counts every byte, kept or not. */
static int line_put(prof_perf_reader *r, const char *s, size_t n, size_t *len)
{
	size_t keep = *len >= PERF_MAX_LINE ? 0 : n < PERF_MAX_LINE - *len ? n : PERF_MAX_LINE - *len;
	if (keep && r->line_cap - *len < keep) {
		size_t cap = r->line_cap ? r->line_cap : 256;
		while (cap - *len < keep)
			cap *= 2;
		char *p = realloc(r->line, cap);
		if (!p)
			return -ENOMEM;
		r->line = p;
		r->line_cap = cap;
	}
	memcpy(r->line + *len, s, keep);
	*len += n;
	return 0;
}

/* One raw line (its newline dropped) into r->line: 1, 0 at the end, or
 * -errno.  *len may exceed PERF_MAX_LINE: the line was cut there. */
static int raw_line(prof_perf_reader *r, size_t *len)
{
	if (!r->blk && !(r->blk = malloc(PERF_BLOCK)))
		return -ENOMEM;
	if (!r->line) {
		if (!(r->line = malloc(256)))
			return -ENOMEM;
		r->line_cap = 256;
	}
	*len = 0;
	int any = 0;
	for (;;) {
		if (r->blk_pos == r->blk_len) {
			r->blk_pos = 0;
			r->blk_len = fread(r->blk, 1, PERF_BLOCK, r->in);
			if (r->blk_len == 0)
				return ferror(r->in) ? (errno ? -errno : -EIO) : any;
		}
		any = 1;
		const char *s = r->blk + r->blk_pos;
		size_t avail = r->blk_len - r->blk_pos;
		const char *nl = memchr(s, '\n', avail);
		size_t n = nl ? (size_t)(nl - s) : avail;
		r->blk_pos += n + (nl != NULL);
		r->bytes += n + (nl != NULL);
		if (line_put(r, s, n, len) < 0)
			return -ENOMEM;
		if (nl)
			return 1;
	}
}

static int read_line(prof_perf_reader *r)
{
	if (r->line_len >= 0)
		return 1;
	for (;;) {
		size_t got;
		errno = 0;
		int rc = raw_line(r, &got);
		if (rc <= 0)
			return rc;
		r->lineno++;
		if (got > PERF_MAX_LINE) {
			skip_line(r);
			continue;
		}
		while (got && (r->line[got - 1] == '\n' || r->line[got - 1] == '\r'))
			got--;
		r->line_len = (ssize_t)got;
		return 1;
	}
}

/* A header that no frame followed was no header: a line not understood. */
static void drop_candidate(prof_perf_reader *r)
{
	if (!r->candidate)
		return;
	r->candidate = 0;
	if (!r->skipped++)
		r->first_skipped = r->ev_line;
}

/* A sample with no header line (-F ip,dso: perf prints an empty one). */
static int begin_bare(prof_perf_reader *r)
{
	r->slen = 0;
	r->npf = 0;
	r->pid = -1;
	r->period = 0;
	r->ev_line = r->lineno;
	r->comm = save_str(r, "", 0);
	return r->comm == SIZE_MAX ? -ENOMEM : 0;
}

int prof_perf_next(prof_perf_reader *r, prof_perf_event *ev)
{
	for (;;) {
		int rc = read_line(r);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			drop_candidate(r);
			return r->pending ? finish_sample(r, ev) : 0;
		}
		const char *s = r->line, *end = r->line + r->line_len;
		if (s == end) { /* a blank line ends a sample */
			r->line_len = -1;
			drop_candidate(r);
			r->after_blank = 1;
			if (r->pending)
				return finish_sample(r, ev);
			continue;
		}
		if (*s == ' ' && header_shaped(s, end))
			while (*s == ' ') /* a header: read below, from its first character */
				s++;
		if (s == r->line && (*s == ' ' || *s == '\t')) {
			r->line_len = -1;
			if (!r->pending && (r->candidate || r->after_blank)) {
				if (!r->candidate && (rc = begin_bare(r)) < 0)
					return rc;
				r->candidate = 0;
				r->pending = 1; /* the line before was its header */
			}
			r->after_blank = 0;
			if (!r->pending) {
				skip_line(r);
				continue;
			}
			rc = parse_frame(r, s, end, 0);
			if (rc == -ENOMEM)
				return rc;
			if (rc < 0)
				skip_line(r);
			continue;
		}
		/* A header: first hand out the sample it ends. */
		if (r->pending)
			return finish_sample(r, ev);
		drop_candidate(r);
		r->after_blank = 0;
		r->line_len = -1;
		r->ev_line = r->lineno;
		rc = parse_header(r, s, end);
		if (rc < 0)
			return rc;
		if (rc == 3) {
			r->candidate = 1;
		} else if (rc == 1) {
			r->pending = 1;
		} else if (rc == 2) {
			memset(ev, 0, sizeof *ev);
			ev->kind = PROF_PERF_MMAP;
			ev->pid = -1;
			ev->comm = "";
			ev->path = r->sbuf + r->path;
			ev->build_id = r->sbuf + r->build_id;
			ev->pid = r->pid;
			ev->start = r->map_start;
			ev->len = r->map_len;
			ev->pgoff = r->map_pgoff;
			ev->lineno = r->ev_line;
			return 1;
		}
	}
}
