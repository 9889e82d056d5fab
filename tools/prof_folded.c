/* SPDX-License-Identifier: MIT */
/*
 * prof_folded.c - the one model of `symdb perf`, `symdb pprof` and
 * `symdb flame`: weighted stacks of symbolized frames (tools/profile.h),
 * and its text form, folded stacks ("root;...;leaf WEIGHT" per line).
 *
 * Profiles repeat themselves: a million samples are typically a few
 * thousand distinct stacks over a few thousand distinct frames.  So every
 * string is interned once, every distinct frame gets a 32-bit id (frames
 * then compare as ids, strings as pointers), and every distinct stack is
 * one run of ids in a shared pool with its summed weight.  Three open
 * addressing tables (strings, frames, stacks) find the existing copy; they
 * hold indices, never pointers into arrays that move when they grow.
 */
#define _POSIX_C_SOURCE 200809L /* getline */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "prof_model.h"

struct stack_rec {
	size_t off;      /* first id in ids[] */
	uint32_t n;      /* frames, root first */
	uint64_t hash;
	uint64_t weight;
};

/* An open addressing table of indices + 1 (0 = empty), capacity a power of 2. */
struct slots {
	uint32_t *v;
	size_t cap;
};

struct prof_folded {
	char **strs;   /* interned strings, in order of first sight */
	size_t nstrs, strs_cap;
	struct slots str_slots;

	prof_frame *frames;
	uint64_t *frame_hash;
	size_t nframes, frames_cap;
	struct slots frame_slots;

	uint32_t *ids; /* every stack's frame ids, back to back */
	size_t nids, ids_cap;
	struct stack_rec *stacks;
	size_t nstacks, stacks_cap;
	struct slots stack_slots;

	uint32_t *scratch; /* the ids of the stack being added */
	size_t scratch_cap;
	uint64_t total;
};

/* ---- hashing ----------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	/* splitmix64's finaliser: every input bit reaches every output bit. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return mix64(h);
}

/* Grow a dynamic array to hold at least need elements of size sz. */
static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < need) {
		if (c > SIZE_MAX / 2 / sz)
			return -ENOMEM;
		c *= 2;
	}
	void *q = realloc(*p, c * sz);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* Keep the load factor at most 1/2; rehash with hash_of(index). */
static int slots_reserve(struct slots *t, size_t used, const prof_folded *f,
                         uint64_t (*hash_of)(const prof_folded *, uint32_t))
{
	if ((used + 1) * 2 <= t->cap)
		return 0;
	size_t cap = t->cap ? t->cap * 2 : 256;
	if (cap > SIZE_MAX / sizeof(uint32_t) || used >= UINT32_MAX - 1)
		return -ENOMEM;
	uint32_t *v = calloc(cap, sizeof(uint32_t));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		uint32_t e = t->v[i];
		if (!e)
			continue;
		size_t j = hash_of(f, e - 1) & (cap - 1);
		while (v[j])
			j = (j + 1) & (cap - 1);
		v[j] = e;
	}
	free(t->v);
	t->v = v;
	t->cap = cap;
	return 0;
}

static uint64_t str_hash_of(const prof_folded *f, uint32_t i)
{
	return hash_bytes(f->strs[i], strlen(f->strs[i]));
}

static uint64_t frame_hash_of(const prof_folded *f, uint32_t i)
{
	return f->frame_hash[i];
}

static uint64_t stack_hash_of(const prof_folded *f, uint32_t i)
{
	return f->stacks[i].hash;
}

/* ---- interning ----------------------------------------------------------- */

/* The model's copy of s (NULL stays NULL), or NULL with *rc = -ENOMEM. */
static const char *intern(prof_folded *f, const char *s, int *rc)
{
	if (!s)
		return NULL;
	if ((*rc = slots_reserve(&f->str_slots, f->nstrs, f, str_hash_of)) < 0)
		return NULL;
	size_t len = strlen(s), mask = f->str_slots.cap - 1;
	size_t j = hash_bytes(s, len) & mask;
	for (uint32_t e; (e = f->str_slots.v[j]); j = (j + 1) & mask)
		if (strcmp(f->strs[e - 1], s) == 0)
			return f->strs[e - 1];
	if ((*rc = grow((void **)&f->strs, &f->strs_cap, f->nstrs + 1, sizeof(char *))) < 0)
		return NULL;
	char *copy = malloc(len + 1);
	if (!copy) {
		*rc = -ENOMEM;
		return NULL;
	}
	memcpy(copy, s, len + 1);
	f->strs[f->nstrs++] = copy;
	f->str_slots.v[j] = (uint32_t)f->nstrs;
	return copy;
}

/* Interned strings compare by pointer; the hash uses their addresses,
 * which are stable for the model's life. */
static uint64_t frame_key_hash(const prof_frame *fr)
{
	uint64_t h = mix64((uintptr_t)fr->name);
	h = mix64(h ^ (uintptr_t)fr->file);
	h = mix64(h ^ (uintptr_t)fr->module);
	return mix64(h ^ fr->line ^ (uint64_t)fr->kind << 32 ^ (uint64_t)fr->inlined << 40);
}

static int frame_equal(const prof_frame *a, const prof_frame *b)
{
	return a->name == b->name && a->file == b->file && a->module == b->module &&
	       a->line == b->line && a->kind == b->kind && a->inlined == b->inlined;
}

/* The id of frame *in (added if new), or a negative errno. */
static int64_t frame_id(prof_folded *f, const prof_frame *in)
{
	int rc = 0;
	prof_frame k = *in;
	k.name = intern(f, in->name ? in->name : "[unknown]", &rc);
	if (rc < 0 || (in->file && !(k.file = intern(f, in->file, &rc))) ||
	    (in->module && !(k.module = intern(f, in->module, &rc))))
		return rc < 0 ? rc : -ENOMEM;
	k.inlined = in->inlined != 0;
	if ((rc = slots_reserve(&f->frame_slots, f->nframes, f, frame_hash_of)) < 0)
		return rc;
	uint64_t h = frame_key_hash(&k);
	size_t mask = f->frame_slots.cap - 1, j = h & mask;
	for (uint32_t e; (e = f->frame_slots.v[j]); j = (j + 1) & mask)
		if (f->frame_hash[e - 1] == h && frame_equal(&f->frames[e - 1], &k))
			return e - 1;
	size_t cap = f->frames_cap;
	if ((rc = grow((void **)&f->frames, &cap, f->nframes + 1, sizeof(prof_frame))) < 0)
		return rc;
	cap = f->frames_cap;
	if ((rc = grow((void **)&f->frame_hash, &cap, f->nframes + 1, sizeof(uint64_t))) < 0)
		return rc;
	f->frames_cap = cap;
	f->frames[f->nframes] = k;
	f->frame_hash[f->nframes] = h;
	f->frame_slots.v[j] = (uint32_t)++f->nframes;
	return (int64_t)f->nframes - 1;
}

/* ---- the model ------------------------------------------------------------- */

prof_folded *prof_folded_new(void)
{
	return calloc(1, sizeof(prof_folded));
}

void prof_folded_free(prof_folded *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nstrs; i++)
		free(f->strs[i]);
	free(f->strs);
	free(f->str_slots.v);
	free(f->frames);
	free(f->frame_hash);
	free(f->frame_slots.v);
	free(f->ids);
	free(f->stacks);
	free(f->stack_slots.v);
	free(f->scratch);
	free(f);
}

int prof_folded_add(prof_folded *f, const prof_frame *frames, size_t n, uint64_t weight)
{
	int rc;
	if (!f || !frames || n == 0 || n > UINT32_MAX)
		return -EINVAL;
	if (f->total + weight < f->total)
		return -EOVERFLOW;
	if ((rc = grow((void **)&f->scratch, &f->scratch_cap, n, sizeof(uint32_t))) < 0)
		return rc;
	uint64_t h = mix64(n);
	for (size_t i = 0; i < n; i++) {
		if (frames[i].kind > PROF_UNKNOWN)
			return -EINVAL;
		int64_t id = frame_id(f, &frames[i]);
		if (id < 0)
			return (int)id;
		f->scratch[i] = (uint32_t)id;
		h = mix64(h ^ (uint64_t)id);
	}
	if ((rc = slots_reserve(&f->stack_slots, f->nstacks, f, stack_hash_of)) < 0)
		return rc;
	size_t mask = f->stack_slots.cap - 1, j = h & mask;
	for (uint32_t e; (e = f->stack_slots.v[j]); j = (j + 1) & mask) {
		struct stack_rec *s = &f->stacks[e - 1];
		if (s->hash == h && s->n == n &&
		    memcmp(f->ids + s->off, f->scratch, n * sizeof(uint32_t)) == 0) {
			s->weight += weight;
			f->total += weight;
			return 0;
		}
	}
	if ((rc = grow((void **)&f->ids, &f->ids_cap, f->nids + n, sizeof(uint32_t))) < 0 ||
	    (rc = grow((void **)&f->stacks, &f->stacks_cap, f->nstacks + 1,
	               sizeof(struct stack_rec))) < 0)
		return rc;
	memcpy(f->ids + f->nids, f->scratch, n * sizeof(uint32_t));
	f->stacks[f->nstacks] = (struct stack_rec){ f->nids, (uint32_t)n, h, weight };
	f->nids += n;
	f->stack_slots.v[j] = (uint32_t)++f->nstacks;
	f->total += weight;
	return 0;
}

uint64_t prof_folded_total(const prof_folded *f)
{
	return f ? f->total : 0;
}

size_t prof_folded_count(const prof_folded *f)
{
	return f ? f->nstacks : 0;
}

size_t prof_folded_frames(const prof_folded *f)
{
	return f ? f->nframes : 0;
}

const prof_frame *prof_folded_frame(const prof_folded *f, uint32_t id)
{
	return id < f->nframes ? &f->frames[id] : NULL;
}

uint64_t prof_folded_stack(const prof_folded *f, size_t i, const uint32_t **ids, size_t *n)
{
	const struct stack_rec *s = &f->stacks[i];
	*ids = f->ids + s->off;
	*n = s->n;
	return s->weight;
}

/* ---- text out ---------------------------------------------------------------- */

struct textbuf {
	char *p;
	size_t len, cap;
};

static int tb_put(struct textbuf *b, const char *s, size_t n)
{
	int rc = grow((void **)&b->p, &b->cap, b->len + n + 1, 1);
	if (rc < 0)
		return rc;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

/* One frame's name in folded text: ';' (the separator) becomes ':', a
 * control byte (a line break would end the record) becomes \xNN. */
static int put_name(struct textbuf *b, const prof_frame *fr, int annotate)
{
	static const char hex[] = "0123456789abcdef";
	const char *s = fr->name[0] ? fr->name : "[unknown]";
	int rc = 0;
	for (; *s && rc == 0; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == ';')
			rc = tb_put(b, ":", 1);
		else if (c < 0x20 || c == 0x7f)
			rc = tb_put(b, (char[]){ '\\', 'x', hex[c >> 4], hex[c & 15] }, 4);
		else
			rc = tb_put(b, s, 1);
	}
	if (rc < 0 || !annotate)
		return rc;
	/* One suffix per frame (flamegraph.pl reads one): the kind wins over
	 * "inlined", which only user frames carry in text. */
	if (fr->kind == PROF_KERNEL)
		return tb_put(b, "_[k]", 4);
	if (fr->kind == PROF_JIT)
		return tb_put(b, "_[j]", 4);
	if (fr->inlined && fr->kind == PROF_USER)
		return tb_put(b, "_[i]", 4);
	return 0;
}

struct line_ref {
	size_t off, len;
	uint64_t weight;
};

static const char *sort_base;

static int line_cmp(const void *a, const void *b)
{
	const struct line_ref *x = a, *y = b;
	int c = memcmp(sort_base + x->off, sort_base + y->off, x->len < y->len ? x->len : y->len);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

int prof_folded_write_text(const prof_folded *f, FILE *out, const prof_text_opts *opts)
{
	int annotate = opts && opts->sz >= sizeof(prof_text_opts) ? opts->annotate : 0;
	struct textbuf b = { 0 };
	struct line_ref *lines = calloc(f->nstacks ? f->nstacks : 1, sizeof(*lines));
	int rc = lines ? 0 : -ENOMEM;

	for (size_t i = 0; i < f->nstacks && rc == 0; i++) {
		const struct stack_rec *s = &f->stacks[i];
		lines[i] = (struct line_ref){ b.len, 0, s->weight };
		for (uint32_t k = 0; k < s->n && rc == 0; k++) {
			if (k && (rc = tb_put(&b, ";", 1)) < 0)
				break;
			rc = put_name(&b, &f->frames[f->ids[s->off + k]], annotate);
		}
		lines[i].len = b.len - lines[i].off;
	}
	if (rc == 0 && f->nstacks) {
		/* qsort has no context argument in C11; one writer at a time
		 * (profile.h: a model belongs to one thread). */
		sort_base = b.p;
		qsort(lines, f->nstacks, sizeof(*lines), line_cmp);
		sort_base = NULL;
	}
	/* Stacks that differ only in what the text does not show (file, line,
	 * module, or the kind without annotate) become one line. */
	for (size_t i = 0; i < f->nstacks && rc == 0;) {
		uint64_t w = lines[i].weight;
		size_t k = i + 1;
		for (; k < f->nstacks && lines[k].len == lines[i].len &&
		       memcmp(b.p + lines[k].off, b.p + lines[i].off, lines[i].len) == 0; k++)
			w += lines[k].weight;
		fwrite(b.p + lines[i].off, 1, lines[i].len, out);
		fprintf(out, " %llu\n", (unsigned long long)w);
		i = k;
	}
	free(lines);
	free(b.p);
	if (rc == 0 && (fflush(out) != 0 || ferror(out)))
		rc = errno ? -errno : -EIO;
	return rc;
}

/* ---- text in ------------------------------------------------------------------ */

static int line_error(char *errbuf, size_t sz, const char *name, size_t lineno,
                      const char *fmt, ...)
{
	if (errbuf && sz) {
		int n = snprintf(errbuf, sz, "%s:%zu: ", name ? name : "-", lineno);
		if (n >= 0 && (size_t)n < sz) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(errbuf + n, sz - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return -EINVAL;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Parse one frame name in place (s[0..n)), NUL-terminating it: the kind
 * suffix is taken off, and the writer's \xNN of control bytes undone so
 * that a written model reads back equal. */
static void parse_frame(char *s, size_t n, prof_frame *fr)
{
	*fr = (prof_frame){ .name = s, .kind = PROF_USER };
	if (n > 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']') {
		char k = s[n - 2];
		if (k == 'k' || k == 'j' || k == 'i') {
			fr->kind = k == 'k' ? PROF_KERNEL : k == 'j' ? PROF_JIT : PROF_USER;
			fr->inlined = k == 'i';
			n -= 4;
		}
	}
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x' && (hi = hexval(s[i + 2])) >= 0 &&
		    (lo = hexval(s[i + 3])) >= 0 && (hi * 16 + lo < 0x20 || hi * 16 + lo == 0x7f)) {
			s[o++] = (char)(hi * 16 + lo);
			i += 3;
		} else {
			s[o++] = s[i];
		}
	}
	s[o] = '\0';
	if (strcmp(s, "[unknown]") == 0)
		fr->kind = PROF_UNKNOWN;
}

/* One "a;b;c N" line (no line break) into the model. */
static int read_line(prof_folded *f, char *line, size_t len, prof_frame **frames,
                     size_t *frames_cap, const char *name, size_t lineno, char *eb, size_t ebsz)
{
	char *sp = NULL;
	for (size_t i = len; i > 0 && !sp; i--)
		if (line[i - 1] == ' ')
			sp = line + i - 1;
	if (!sp || sp + 1 == line + len)
		return line_error(eb, ebsz, name, lineno, "no sample count at the end of the line");
	uint64_t w = 0;
	for (char *p = sp + 1; p < line + len; p++) {
		if (*p < '0' || *p > '9')
			return line_error(eb, ebsz, name, lineno,
			                  "sample count is not a whole number");
		if (w > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return line_error(eb, ebsz, name, lineno, "sample count out of range");
		w = w * 10 + (uint64_t)(*p - '0');
	}
	while (sp > line && sp[-1] == ' ')
		sp--;
	if (sp == line)
		return line_error(eb, ebsz, name, lineno, "no frames before the sample count");
	size_t n = 1;
	for (char *p = line; p < sp; p++)
		n += *p == ';';
	int rc = grow((void **)frames, frames_cap, n, sizeof(prof_frame));
	if (rc < 0)
		return rc;
	char *start = line;
	n = 0;
	for (char *p = line; p <= sp; p++) {
		if (p < sp && *p != ';')
			continue;
		if (p == start)
			return line_error(eb, ebsz, name, lineno, "empty frame name");
		parse_frame(start, (size_t)(p - start), &(*frames)[n++]);
		start = p + 1;
	}
	rc = prof_folded_add(f, *frames, n, w);
	if (rc == -EOVERFLOW)
		return line_error(eb, ebsz, name, lineno, "total sample count out of range");
	return rc;
}

int prof_folded_read_text(prof_folded *f, FILE *in, const char *name, char *errbuf,
                          size_t errbuf_sz)
{
	char *line = NULL;
	size_t cap = 0, lineno = 0, frames_cap = 0;
	prof_frame *frames = NULL;
	ssize_t got;
	int rc = 0;

	errno = 0;
	while (rc == 0 && (got = getline(&line, &cap, in)) >= 0) {
		size_t len = (size_t)got;
		lineno++;
		if (len && line[len - 1] == '\n')
			len--;
		if (len && line[len - 1] == '\r')
			len--;
		if (memchr(line, '\0', len))
			rc = line_error(errbuf, errbuf_sz, name, lineno, "NUL byte in the line");
		else if (len)
			rc = read_line(f, line, len, &frames, &frames_cap, name, lineno, errbuf,
			               errbuf_sz);
	}
	if (rc == 0 && ferror(in))
		rc = errno ? -errno : -EIO;
	free(line);
	free(frames);
	return rc;
}
