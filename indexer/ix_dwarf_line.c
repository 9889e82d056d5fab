/* SPDX-License-Identifier: MIT */
/*
 * ix_dwarf_line.c - runs one DWARF line program (DWARF 2-5, §6.2) and
 * flattens its rows into address pieces exactly as llvm-symbolizer 14 looks
 * them up.
 *
 * symdb parses line programs itself rather than through libdwarf so that
 * the two details byte-identical output depends on are LLVM's, not
 * libdwarf's: (1) which file entry an index names (DWARF 5 counts from 0,
 * DWARF 2-4 from 1, §6.2.4) and how the printed path is built from comp_dir,
 * include directory and name (LLVM's Prologue::getFileNameByIndex); (2) which
 * row an address gets: LLVM keeps only sequences with LowPC < HighPC (LowPC
 * being the first row's address), sorts them by HighPC (std::sort, so ties
 * land where libstdc++'s introsort puts them: seq_sort), picks a sequence
 * with upper_bound on HighPC, then the row with upper_bound - 1 inside it.  We
 * evaluate that very search at every row and sequence boundary, so whatever
 * it does on odd input (overlapping or unsorted sequences), we do too.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ix_dwarf_cursor.h"
#include "ix_dwarf_internal.h"
#include "ix_reloc.h"

/* DWARF 5 §7.22 line number header entry formats. */
#define LNCT_PATH 1
#define LNCT_DIR_INDEX 2
#define LNCT_LLVM_SOURCE 0x2001 /* clang -gembed-source: the file's text */

static const char *str_at(const ix_debug_section *sec, uint64_t off)
{
	if (!sec || off >= sec->size || !memchr(sec->data + off, 0, sec->size - off))
		return NULL;
	return (const char *)sec->data + off;
}

/* ---- file names ---------------------------------------------------------- */

static int is_abs(const char *p)
{
	/* LLVM's isPathAbsoluteOnWindowsOrPosix. */
	if (!p || !*p)
		return 0;
	if (p[0] == '/' || p[0] == '\\')
		return p[0] == '/' || p[1] == '\\';
	return ((p[0] | 0x20) >= 'a' && (p[0] | 0x20) <= 'z') && p[1] == ':' &&
	       (p[2] == '/' || p[2] == '\\');
}

/* snprintf(buf, sz, "%s", s) without the format machinery (sz > 0): file
 * names are joined for every file entry of every line table. */
static void put_str(char *buf, size_t sz, const char *s)
{
	size_t n = strlen(s);
	if (n >= sz)
		n = sz - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
}

/* llvm::sys::path::append (POSIX style) of one component. */
static void path_append(char *buf, size_t sz, const char *comp)
{
	size_t n = strlen(buf);
	if (n && buf[n - 1] == '/') {
		while (*comp == '/')
			comp++;
	} else if (n && *comp != '/') {
		if (n + 1 < sz)
			buf[n++] = '/', buf[n] = 0;
	}
	put_str(buf + n, sz - n, comp);
}

static uint32_t files_lookup(ix_image *img, ix_u64map *idx, uint32_t path,
			     uint32_t rel, uint32_t base)
{
	/* Keyed by both names: one path can have two relative forms in one
	 * line table (GCC 12's DWARF 5 file 0 under directory 1 and file 1
	 * under directory 0, the compilation directory, name the same file;
	 * LLVM prints "/dir/a.c" for the first and "a.c" for the second under
	 * --relativenames). */
	uint64_t key = (uint64_t)path | (uint64_t)rel << 32;
	uint32_t f = ix_u64map_get(idx, key);
	if (f != FMT_NONE)
		return f;
	ix_file *nf = ix_vec_push(&img->files);
	if (!nf)
		return FMT_NONE;
	nf->path = path;
	nf->relative = rel;
	nf->base = base;
	nf->source = FMT_NONE;
	f = (uint32_t)(img->files.n - 1);
	if (ix_u64map_put(idx, key, f))
		return FMT_NONE;
	return f;
}

uint32_t ix_file_intern(ix_image *img, void *files_index, const char *comp_dir,
			const char *dir, int dir_is_compdir, const char *name)
{
	char absb[8192], relb[8192];
	const char *slash = strrchr(name, '/');
	const char *base = slash ? slash + 1 : name;
	if (is_abs(name)) {
		put_str(absb, sizeof(absb), name);
		put_str(relb, sizeof(relb), name);
	} else {
		const char *inc = dir ? dir : "";
		absb[0] = relb[0] = 0;
		if (comp_dir && *comp_dir && !is_abs(inc))
			path_append(absb, sizeof(absb), comp_dir);
		path_append(absb, sizeof(absb), inc);
		path_append(absb, sizeof(absb), name);
		/* DWARF 5 directory 0 is the compilation directory: LLVM leaves
		 * it out of relative names. */
		path_append(relb, sizeof(relb), dir_is_compdir ? "" : inc);
		path_append(relb, sizeof(relb), name);
	}
	uint32_t p = ix_str_addz(img->strings, absb);
	uint32_t r = ix_str_addz(img->strings, relb);
	uint32_t b = ix_str_addz(img->strings, base);
	if (p == FMT_NONE || r == FMT_NONE || b == FMT_NONE)
		return FMT_NONE;
	return files_lookup(img, files_index, p, r, b);
}

/* The first embedded source met for file f, in unit order (SPEC §7.3.1). */
int ix_file_embed_source(ix_image *img, uint32_t f, const char *src)
{
	ix_file *file = &IX_AT(&img->files, ix_file, f);
	if (file->source != FMT_NONE)
		return 0;
	uint32_t s = ix_str_addz(img->strings, src);
	if (s == FMT_NONE)
		return -1;
	file->source = s;
	return 0;
}

/* ---- header ---------------------------------------------------------------- */

typedef struct line_header {
	uint16_t version;
	uint8_t offset_size, addr_size, min_inst, default_stmt, line_range, opcode_base;
	int8_t line_base;
	const uint8_t *std_lens;
	const char **dirs;
	size_t ndirs;
	const uint8_t *prog, *prog_end;
} line_header;

/* Skips or reads one attribute value of a DWARF 5 entry-format pair.  Sets
 * *s for string forms (NULL if unreadable) and *u for constants. */
static int read_form(const ix_line_ctx *lc, ix_cursor *c, uint64_t form, uint8_t offsz,
		     const char **s, uint64_t *u)
{
	*s = NULL;
	*u = 0;
	switch (form) {
	case 0x08: *s = ix_cursor_cstr(c); break;                              /* string */
	case 0x1f: *s = str_at(lc->line_str, ix_cursor_n(c, offsz)); break;    /* line_strp */
	case 0x0e: *s = str_at(lc->str, ix_cursor_n(c, offsz)); break;         /* strp */
	case 0x0b: *u = ix_cursor_n(c, 1); break;                              /* data1 */
	case 0x05: *u = ix_cursor_n(c, 2); break;                              /* data2 */
	case 0x06: *u = ix_cursor_n(c, 4); break;                              /* data4 */
	case 0x07: *u = ix_cursor_n(c, 8); break;                              /* data8 */
	case 0x1e: ix_cursor_n(c, 8); ix_cursor_n(c, 8); break;                /* data16 */
	case 0x0f: *u = ix_cursor_uleb(c); break;                              /* udata */
	case 0x09: {                                                       /* block */
		uint64_t n = ix_cursor_uleb(c);
		if (n > (uint64_t)(c->end - c->p))
			c->bad = 1;
		else
			c->p += n;
		break;
	}
	case 0x1a: ix_cursor_uleb(c); break;                                   /* strx: unsupported */
	case 0x25: ix_cursor_n(c, 1); break;
	case 0x26: ix_cursor_n(c, 2); break;
	case 0x27: ix_cursor_n(c, 3); break;
	case 0x28: ix_cursor_n(c, 4); break;
	default: return -1;
	}
	return c->bad ? -1 : 0;
}

/* Reads a DWARF 5 entry-format list and its entries.  For directories only
 * names are kept; for files, names, directory indexes and embedded sources
 * (NULL where the entry has none: LLVM's DILineInfo::Source is set exactly
 * when the format has a DW_LNCT_LLVM_source string, even an empty one). */
static int read_v5_entries(const ix_line_ctx *lc, ix_cursor *c, uint8_t offsz,
			   const char ***names, uint64_t **dirs, const char ***srcs, size_t *n)
{
	uint8_t nfmt = (uint8_t)ix_cursor_n(c, 1);
	uint64_t fmt[2 * 255];
	for (unsigned i = 0; i < nfmt; i++) {
		fmt[2 * i] = ix_cursor_uleb(c);
		fmt[2 * i + 1] = ix_cursor_uleb(c);
	}
	uint64_t count = ix_cursor_uleb(c);
	if (c->bad || count > (uint64_t)(c->end - c->p))
		return -1;
	*names = calloc(count + 1, sizeof(**names));
	if (dirs)
		*dirs = calloc(count + 1, sizeof(**dirs));
	if (srcs)
		*srcs = calloc(count + 1, sizeof(**srcs));
	if (!*names || (dirs && !*dirs) || (srcs && !*srcs))
		return -1;
	for (uint64_t k = 0; k < count; k++) {
		for (unsigned i = 0; i < nfmt; i++) {
			const char *s;
			uint64_t u;
			if (read_form(lc, c, fmt[2 * i + 1], offsz, &s, &u))
				return -1;
			if (fmt[2 * i] == LNCT_PATH)
				(*names)[k] = s;
			else if (fmt[2 * i] == LNCT_DIR_INDEX && dirs)
				(*dirs)[k] = u;
			else if (fmt[2 * i] == LNCT_LLVM_SOURCE && srcs)
				(*srcs)[k] = s;
		}
	}
	*n = (size_t)count;
	return 0;
}

/* File entries, gathered before interning. */
typedef struct file_entries {
	const char **names;
	uint64_t *dirs;
	const char **srcs; /* embedded source, or NULL */
	size_t n, cap;
} file_entries;

static int file_entries_add(file_entries *f, const char *name, uint64_t dir, const char *src)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		const char **nn = realloc(f->names, cap * sizeof(*nn));
		if (!nn)
			return -1;
		f->names = nn;
		uint64_t *nd = realloc(f->dirs, cap * sizeof(*nd));
		if (!nd)
			return -1;
		f->dirs = nd;
		const char **ns = realloc(f->srcs, cap * sizeof(*ns));
		if (!ns)
			return -1;
		f->srcs = ns;
		f->cap = cap;
	}
	f->names[f->n] = name;
	f->srcs[f->n] = src;
	f->dirs[f->n++] = dir;
	return 0;
}

static int read_v4_tables(ix_cursor *c, line_header *h, file_entries *f)
{
	size_t cap = 0;
	for (;;) {
		const char *d = ix_cursor_cstr(c);
		if (!d || !*d)
			break;
		if (h->ndirs == cap) {
			cap = cap ? 2 * cap : 32;
			const char **nd = realloc(h->dirs, cap * sizeof(*nd));
			if (!nd)
				return -1;
			h->dirs = nd;
		}
		h->dirs[h->ndirs++] = d;
	}
	for (;;) {
		const char *name = ix_cursor_cstr(c);
		if (!name || !*name)
			break;
		uint64_t dir = ix_cursor_uleb(c);
		ix_cursor_uleb(c);
		ix_cursor_uleb(c);
		if (c->bad || file_entries_add(f, name, dir, NULL))
			return -1;
	}
	return c->bad ? -1 : 0;
}

static int read_v5_tables(const ix_line_ctx *lc, ix_cursor *c, line_header *h, file_entries *f)
{
	const char **fn = NULL, **fs = NULL;
	uint64_t *fd = NULL;
	size_t nf = 0;
	if (read_v5_entries(lc, c, h->offset_size, &h->dirs, NULL, NULL, &h->ndirs) ||
	    read_v5_entries(lc, c, h->offset_size, &fn, &fd, &fs, &nf)) {
		free(fn);
		free(fd);
		free(fs);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < nf && !rc; i++)
		rc = file_entries_add(f, fn[i], fd[i], fs[i]);
	free(fn);
	free(fd);
	free(fs);
	return rc;
}

static int read_header(const ix_line_ctx *lc, ix_cursor *c, line_header *h, file_entries *f)
{
	uint64_t len = ix_cursor_n(c, 4);
	h->offset_size = 4;
	if (len == 0xffffffffu) {
		len = ix_cursor_n(c, 8);
		h->offset_size = 8;
	} else if (len >= 0xfffffff0u) {
		return -1;
	}
	if (c->bad || len > (uint64_t)(c->end - c->p))
		return -1;
	c->end = c->p + len;
	h->version = (uint16_t)ix_cursor_n(c, 2);
	if (h->version < 2 || h->version > 5)
		return -1;
	h->addr_size = lc->addr_size;
	if (h->version >= 5) {
		h->addr_size = (uint8_t)ix_cursor_n(c, 1);
		ix_cursor_n(c, 1); /* segment selector size */
	}
	uint64_t hlen = ix_cursor_n(c, h->offset_size);
	if (c->bad || hlen > (uint64_t)(c->end - c->p))
		return -1;
	h->prog = c->p + hlen;
	h->prog_end = c->end;
	h->min_inst = (uint8_t)ix_cursor_n(c, 1);
	if (h->version >= 4)
		ix_cursor_n(c, 1); /* maximum_operations_per_instruction: VLIW only */
	h->default_stmt = (uint8_t)ix_cursor_n(c, 1);
	h->line_base = (int8_t)ix_cursor_n(c, 1);
	h->line_range = (uint8_t)ix_cursor_n(c, 1);
	h->opcode_base = (uint8_t)ix_cursor_n(c, 1);
	h->std_lens = c->p;
	if (c->bad || h->opcode_base == 0 ||
	    (size_t)(c->end - c->p) < (size_t)h->opcode_base - 1)
		return -1;
	c->p += h->opcode_base - 1;
	ix_cursor hc = *c;
	hc.end = h->prog; /* the tables must lie inside header_length */
	return h->version >= 5 ? read_v5_tables(lc, &hc, h, f) : read_v4_tables(&hc, h, f);
}

/* Interns every file entry; the map is by file index (§6.2.4: from 0 in
 * DWARF 5, from 1 before). */
static int intern_files(const ix_line_ctx *lc, const line_header *h, const file_entries *f,
			ix_line_table *t)
{
	size_t n = f->n + (h->version < 5);
	uint32_t *m = realloc(t->file_map, (n ? n : 1) * sizeof(*m));
	if (!m)
		return -1;
	t->file_map = m;
	for (size_t i = t->nfiles; i < n; i++) {
		m[i] = FMT_NONE;
		if (h->version < 5 && i == 0)
			continue;
		size_t k = i - (h->version < 5);
		if (!f->names[k])
			continue;
		uint64_t d = f->dirs[k];
		const char *dir = NULL;
		int dir0 = 0;
		if (h->version >= 5) {
			if (d < h->ndirs)
				dir = h->dirs[d];
			dir0 = d == 0;
		} else if (d > 0 && d <= h->ndirs) {
			dir = h->dirs[d - 1];
		}
		m[i] = ix_file_intern(lc->img, lc->files_index, lc->comp_dir,
				      dir, dir0, f->names[k]);
		if (f->srcs[k] && m[i] != FMT_NONE &&
		    ix_file_embed_source(lc->img, m[i], f->srcs[k]) < 0)
			return -1;
	}
	t->nfiles = n;
	return 0;
}

/* ---- program --------------------------------------------------------------- */

typedef struct line_row {
	uint64_t addr, file;
	uint32_t line, col, discr;
	uint32_t sec; /* ET_REL: section of the DW_LNE_set_address relocation */
} line_row;

typedef struct line_seq {
	uint64_t lo, hi;
	size_t first, last; /* rows [first, last), last row is the end_sequence */
	uint32_t sec;       /* LLVM's Sequence::SectionIndex, of the end row */
} line_seq;

typedef struct line_program {
	line_row *rows;
	size_t nrows, caprows;
	line_seq *seqs;
	size_t nseqs, capseqs;
	size_t seq_first;
	int seq_empty;
} line_program;

static int append_row(line_program *p, const line_row *r, int end_seq)
{
	if (p->nrows == p->caprows) {
		size_t cap = p->caprows ? 2 * p->caprows : 256;
		line_row *n = realloc(p->rows, cap * sizeof(*n));
		if (!n)
			return -1;
		p->rows = n;
		p->caprows = cap;
	}
	if (p->seq_empty) {
		p->seq_empty = 0;
		p->seq_first = p->nrows;
	}
	p->rows[p->nrows++] = *r;
	if (!end_seq)
		return 0;
	/* LLVM's Sequence::isValid(): LowPC (first row) < HighPC (end row). */
	uint64_t lo = p->rows[p->seq_first].addr;
	p->seq_empty = 1;
	if (!(lo < r->addr))
		return 0;
	if (p->nseqs == p->capseqs) {
		size_t cap = p->capseqs ? 2 * p->capseqs : 32;
		line_seq *n = realloc(p->seqs, cap * sizeof(*n));
		if (!n)
			return -1;
		p->seqs = n;
		p->capseqs = cap;
	}
	p->seqs[p->nseqs++] = (line_seq){ lo, r->addr, p->seq_first, p->nrows, r->sec };
	return 0;
}

static void reset_row(line_row *r)
{
	memset(r, 0, sizeof(*r));
	r->file = 1;
	r->line = 1;
	r->sec = IX_SEC_UNDEF;
}

static int run_extended(const ix_line_ctx *lc, ix_cursor *c, line_program *p, line_row *r,
			file_entries *f, line_header *h, int *changed_files)
{
	uint64_t len = ix_cursor_uleb(c);
	if (c->bad || len == 0 || len > (uint64_t)(c->end - c->p))
		return -1;
	const uint8_t *next = c->p + len;
	uint8_t op = (uint8_t)ix_cursor_n(c, 1);
	int rc = 0;
	switch (op) {
	case 1: /* DW_LNE_end_sequence */
		rc = append_row(p, r, 1);
		reset_row(r);
		break;
	case 2: /* DW_LNE_set_address */
		if (len - 1 == 1 || len - 1 == 2 || len - 1 == 4 || len - 1 == 8) {
			r->sec = ix_reloc_line_sec(lc->reloc, (uint64_t)(c->p - lc->line->data));
			r->addr = ix_cursor_n(c, (unsigned)(len - 1));
		}
		break;
	case 3: { /* DW_LNE_define_file (DWARF 2-4) */
		ix_cursor fc = { c->p, next, c->little, 0 };
		const char *name = ix_cursor_cstr(&fc);
		uint64_t dir = ix_cursor_uleb(&fc);
		if (!fc.bad && h->version < 5 && file_entries_add(f, name, dir, NULL) == 0)
			*changed_files = 1;
		break;
	}
	case 4: /* DW_LNE_set_discriminator */
		r->discr = (uint32_t)ix_cursor_uleb(c);
		break;
	default:
		break;
	}
	c->p = next;
	return rc;
}

static int run_standard(ix_cursor *c, const line_header *h, uint8_t op, line_program *p,
			line_row *r)
{
	switch (op) {
	case 1: /* DW_LNS_copy */
		if (append_row(p, r, 0))
			return -1;
		r->discr = 0;
		break;
	case 2: r->addr += ix_cursor_uleb(c) * h->min_inst; break;
	case 3: r->line = (uint32_t)((int64_t)r->line + ix_cursor_sleb(c)); break;
	case 4: r->file = ix_cursor_uleb(c); break;
	case 5: r->col = (uint32_t)ix_cursor_uleb(c); break;
	case 6: case 7: case 10: case 11: break;
	case 8: r->addr += (uint64_t)((255 - h->opcode_base) / h->line_range) * h->min_inst; break;
	case 9: r->addr += ix_cursor_n(c, 2); break;
	case 12: ix_cursor_uleb(c); break;
	default:
		for (unsigned i = 0; i < h->std_lens[op - 1]; i++)
			ix_cursor_uleb(c);
		break;
	}
	return c->bad ? -1 : 0;
}

static int run_program(const ix_line_ctx *lc, line_header *h, file_entries *f, line_program *p,
		       ix_line_table *t)
{
	ix_cursor c = { h->prog, h->prog_end, lc->little, 0 };
	line_row r;
	reset_row(&r);
	p->seq_empty = 1;
	if (h->line_range == 0)
		return -1;
	while (c.p < c.end) {
		uint8_t op = (uint8_t)ix_cursor_n(&c, 1);
		int changed = 0;
		if (op >= h->opcode_base) {
			unsigned adj = op - h->opcode_base;
			r.addr += (uint64_t)(adj / h->line_range) * h->min_inst;
			r.line = (uint32_t)((int64_t)r.line + h->line_base + adj % h->line_range);
			if (append_row(p, &r, 0))
				return -1;
			r.discr = 0;
		} else if (op == 0) {
			if (run_extended(lc, &c, p, &r, f, h, &changed))
				return -1;
			if (changed && intern_files(lc, h, f, t))
				return -1;
		} else if (run_standard(&c, h, op, p, &r)) {
			return -1;
		}
	}
	return 0;
}

/* ---- flattening ------------------------------------------------------------ */

/*
 * LLVM 14 sorts a table's sequences with llvm::sort(Sequences,
 * Sequence::orderByHighPC), which is std::sort: not stable.  Sequences with
 * the same HighPC (identical code folded by the linker leaves several
 * sequences over the same bytes) end in whatever order libstdc++'s
 * introsort leaves them, and lookup takes the first.  So we run that very
 * algorithm (GCC's bits/stl_algo.h and stl_heap.h, unchanged for many
 * releases): introsort loop down to runs of 16 with a median-of-three pivot
 * moved to the front and an unguarded partition, heapsort past depth
 * 2*floor(log2 n), then insertion sort.  (sec, hi) is compared, as
 * orderByHighPC does; in a linked image every sequence has SectionIndex
 * Undef, so only "hi <" decides, and in an object file (SPEC §7.8) each
 * section's sequences form one run.  Sequences are appended in end_sequence order, as LLVM's are.
 */
#define SEQ_SORT_THRESHOLD 16

static int seq_less(const line_seq *a, const line_seq *b)
{
	if (a->sec != b->sec) /* only in an object file (SPEC §7.8) */
		return a->sec < b->sec;
	return a->hi < b->hi;
}

static void seq_swap(line_seq *a, line_seq *b)
{
	line_seq t = *a;
	*a = *b;
	*b = t;
}

/* std::__unguarded_linear_insert */
static void seq_linear_insert(line_seq *last)
{
	line_seq val = *last, *next = last - 1;
	while (seq_less(&val, next)) {
		*last = *next;
		last = next--;
	}
	*last = val;
}

/* std::__insertion_sort */
static void seq_insertion_sort(line_seq *first, line_seq *last)
{
	if (first == last)
		return;
	for (line_seq *i = first + 1; i != last; i++) {
		if (seq_less(i, first)) {
			line_seq val = *i;
			memmove(first + 1, first, (size_t)(i - first) * sizeof(*i));
			*first = val;
		} else {
			seq_linear_insert(i);
		}
	}
}

/* std::__push_heap and std::__adjust_heap (a max-heap over seq_less). */
static void seq_push_heap(line_seq *first, ptrdiff_t hole, ptrdiff_t top, line_seq val)
{
	ptrdiff_t parent = (hole - 1) / 2;
	while (hole > top && seq_less(&first[parent], &val)) {
		first[hole] = first[parent];
		hole = parent;
		parent = (hole - 1) / 2;
	}
	first[hole] = val;
}

static void seq_adjust_heap(line_seq *first, ptrdiff_t hole, ptrdiff_t len, line_seq val)
{
	ptrdiff_t top = hole, child = hole;
	while (child < (len - 1) / 2) {
		child = 2 * (child + 1);
		if (seq_less(&first[child], &first[child - 1]))
			child--;
		first[hole] = first[child];
		hole = child;
	}
	if ((len & 1) == 0 && child == (len - 2) / 2) {
		child = 2 * (child + 1);
		first[hole] = first[child - 1];
		hole = child - 1;
	}
	seq_push_heap(first, hole, top, val);
}

/* std::__partial_sort(first, last, last): make_heap, then sort_heap. */
static void seq_heap_sort(line_seq *first, line_seq *last)
{
	ptrdiff_t len = last - first;
	if (len < 2)
		return;
	for (ptrdiff_t parent = (len - 2) / 2;; parent--) {
		seq_adjust_heap(first, parent, len, first[parent]);
		if (parent == 0)
			break;
	}
	while (last - first > 1) {
		last--;
		line_seq val = *last; /* std::__pop_heap */
		*last = *first;
		seq_adjust_heap(first, 0, last - first, val);
	}
}

/* std::__move_median_to_first */
static void seq_median_to_first(line_seq *result, line_seq *a, line_seq *b, line_seq *c)
{
	if (seq_less(a, b)) {
		if (seq_less(b, c))
			seq_swap(result, b);
		else if (seq_less(a, c))
			seq_swap(result, c);
		else
			seq_swap(result, a);
	} else if (seq_less(a, c)) {
		seq_swap(result, a);
	} else if (seq_less(b, c)) {
		seq_swap(result, c);
	} else {
		seq_swap(result, b);
	}
}

/* std::__unguarded_partition_pivot */
static line_seq *seq_partition(line_seq *first, line_seq *last)
{
	line_seq *mid = first + (last - first) / 2, *pivot = first;
	seq_median_to_first(first, first + 1, mid, last - 1);
	first++;
	for (;;) {
		while (seq_less(first, pivot))
			first++;
		last--;
		while (seq_less(pivot, last))
			last--;
		if (!(first < last))
			return first;
		seq_swap(first, last);
		first++;
	}
}

static void seq_introsort_loop(line_seq *first, line_seq *last, unsigned depth)
{
	while (last - first > SEQ_SORT_THRESHOLD) {
		if (depth == 0) {
			seq_heap_sort(first, last);
			return;
		}
		depth--;
		line_seq *cut = seq_partition(first, last);
		seq_introsort_loop(cut, last, depth);
		last = cut;
	}
}

/* std::sort(first, first + n, orderByHighPC) as libstdc++ runs it. */
static void seq_sort(line_seq *first, size_t n)
{
	line_seq *last = first + n;
	unsigned lg = 0;
	if (n < 2)
		return;
	while ((n >> lg) > 1)
		lg++;
	seq_introsort_loop(first, last, 2 * lg);
	if (n > SEQ_SORT_THRESHOLD) {
		seq_insertion_sort(first, first + SEQ_SORT_THRESHOLD);
		for (line_seq *i = first + SEQ_SORT_THRESHOLD; i != last; i++)
			seq_linear_insert(i);
	} else {
		seq_insertion_sort(first, last);
	}
}

/* LLVM 14 LineTable::lookupAddressImpl + findRowInSeq, step for step
 * (std::upper_bound's halving loop), so odd tables resolve identically. */
static const line_row *lookup_row(const line_program *p, uint64_t a)
{
	size_t first = 0, len = p->nseqs;
	while (len > 0) {
		size_t half = len >> 1;
		if (a < p->seqs[first + half].hi) {
			len = half;
		} else {
			first += half + 1;
			len -= half + 1;
		}
	}
	if (first == p->nseqs)
		return NULL;
	const line_seq *s = &p->seqs[first];
	if (!(s->lo <= a && a < s->hi))
		return NULL;
	size_t lo = s->first + 1, n = s->last - 1 - lo;
	if (s->last - 1 < lo)
		n = 0;
	while (n > 0) {
		size_t half = n >> 1;
		if (a < p->rows[lo + half].addr) {
			n = half;
		} else {
			lo += half + 1;
			n -= half + 1;
		}
	}
	return &p->rows[lo - 1];
}

static const line_row *lookup_sec(const line_program *p, const ix_reloc_info *rel, uint64_t a);

/* lookup_row for ascending addresses, from where the previous one ended:
 * the sequences are sorted by end, so the first that ends past a only
 * moves forward; inside a sequence whose rows ascend, so does the first
 * row past a (upper_bound has one answer there).  A sequence whose rows
 * do not ascend is searched as lookup_row searches it. */
typedef struct row_cursor {
	size_t seq, row;
	int sorted; /* -1: not checked yet for seqs[seq] */
} row_cursor;

static int rows_ascend(const line_program *p, const line_seq *s)
{
	for (size_t i = s->first + 1; i + 1 < s->last; i++)
		if (p->rows[i].addr < p->rows[i - 1].addr)
			return 0;
	return 1;
}

static const line_row *lookup_row_next(const line_program *p, row_cursor *c, uint64_t a)
{
	size_t seq = c->seq;
	while (seq < p->nseqs && !(a < p->seqs[seq].hi))
		seq++;
	if (seq != c->seq) {
		c->seq = seq;
		c->sorted = -1;
	}
	if (seq == p->nseqs)
		return NULL;
	const line_seq *s = &p->seqs[seq];
	if (!(s->lo <= a && a < s->hi))
		return NULL;
	if (c->sorted < 0) {
		c->sorted = rows_ascend(p, s);
		c->row = s->first + 1;
	}
	if (!c->sorted || s->last - 1 < s->first + 1)
		return lookup_row(p, a);
	while (c->row < s->last - 1 && !(a < p->rows[c->row].addr))
		c->row++;
	return &p->rows[c->row - 1];
}

/* One piece per distinct point of pts (sorted): the row that answers it,
 * looked up as a linked image does (rel NULL) or as an object does. */
static int push_pieces(const line_program *p, ix_line_table *t, const uint64_t *pts,
                       size_t npts, const ix_reloc_info *rel)
{
	int rc = 0;
	row_cursor cur = { 0, 0, -1 };
	for (size_t i = 0; i < npts && !rc; i++) {
		if (i && pts[i] == pts[i - 1])
			continue;
		const line_row *r = rel ? lookup_sec(p, rel, pts[i]) : lookup_row_next(p, &cur, pts[i]);
		uint32_t v[4] = { FMT_NONE, 0, 0, 0 };
		if (r && (v[0] = ix_line_file(t, r->file)) != FMT_NONE) {
			v[1] = r->line;
			v[2] = r->col;
			v[3] = r->discr;
		}
		rc = ix_piece_push(&t->pieces, pts[i], v);
	}
	return rc;
}

static int flatten(const line_program *p, ix_line_table *t)
{
	size_t npts = 0;
	for (size_t i = 0; i < p->nseqs; i++)
		npts += p->seqs[i].last - p->seqs[i].first;
	uint64_t *pts = malloc((npts ? npts : 1) * sizeof(*pts));
	if (!pts)
		return -1;
	npts = 0;
	for (size_t i = 0; i < p->nseqs; i++)
		for (size_t k = p->seqs[i].first; k < p->seqs[i].last; k++)
			pts[npts++] = p->rows[k].addr;
	/* Sequences are sorted by end and usually disjoint, with ascending
	 * rows: then the points are already in order and need no sort. */
	size_t k = 1;
	while (k < npts && pts[k - 1] <= pts[k])
		k++;
	int rc = k < npts ? ix_sort_u64(pts, npts) : 0;
	if (!rc)
		rc = push_pieces(p, t, pts, npts, NULL);
	free(pts);
	return rc;
}

/* ---- relocatable objects (SPEC §7.8) ---------------------------------------- */

/* The first sequence whose section is not below sec (binary search: an
 * object built with -ffunction-sections has a run per function). */
static size_t sec_lower(const line_program *p, uint64_t sec)
{
	size_t lo = 0, hi = p->nseqs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->seqs[mid].sec < sec)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The run of sequences of section sec, as a program of its own. */
static line_program sec_run(const line_program *p, uint32_t sec)
{
	size_t b = sec_lower(p, sec), e = sec_lower(p, (uint64_t)sec + 1);
	line_program v = *p;
	v.seqs = p->seqs + b;
	v.nseqs = e - b;
	return v;
}

/* LineTable::lookupAddress with the section llvm-symbolizer picks for the
 * address (ix_reloc_owner), then, if that finds no row, with none. */
static const line_row *lookup_sec(const line_program *p, const ix_reloc_info *rel, uint64_t a)
{
	uint32_t sec = ix_reloc_owner(rel, a);
	line_program v = sec_run(p, sec);
	const line_row *r = lookup_row(&v, a);
	if (!r && sec != IX_SEC_UNDEF) {
		v = sec_run(p, IX_SEC_UNDEF);
		r = lookup_row(&v, a);
	}
	return r;
}

/* flatten() for an object file: the answer changes at row addresses and
 * where the owning section changes. */
static int flatten_sections(const line_program *p, ix_line_table *t, const ix_reloc_info *rel)
{
	size_t npts = 2 * rel->nclaims;
	for (size_t i = 0; i < p->nseqs; i++)
		npts += p->seqs[i].last - p->seqs[i].first;
	uint64_t *pts = malloc((npts ? npts : 1) * sizeof(*pts));
	if (!pts)
		return -1;
	npts = 0;
	for (size_t i = 0; i < rel->nclaims; i++) {
		pts[npts++] = rel->claims[i].lo;
		pts[npts++] = rel->claims[i].hi;
	}
	for (size_t i = 0; i < p->nseqs; i++)
		for (size_t k = p->seqs[i].first; k < p->seqs[i].last; k++)
			pts[npts++] = p->rows[k].addr;
	int rc = ix_sort_u64(pts, npts);
	if (!rc)
		rc = push_pieces(p, t, pts, npts, rel);
	free(pts);
	return rc;
}

uint32_t ix_line_file(const ix_line_table *t, uint64_t idx)
{
	return idx < t->nfiles ? t->file_map[idx] : FMT_NONE;
}

int ix_line_parse(const ix_line_ctx *lc, ix_line_table *t, char *why, size_t why_sz)
{
	memset(t, 0, sizeof(*t));
	ix_vec_init(&t->pieces, sizeof(ix_piece));
	if (!lc->line || lc->offset >= lc->line->size) {
		snprintf(why, why_sz, "DW_AT_stmt_list 0x%llx is outside .debug_line",
			 (unsigned long long)lc->offset);
		return -1;
	}
	ix_cursor c = { lc->line->data + lc->offset, lc->line->data + lc->line->size, lc->little, 0 };
	line_header h;
	memset(&h, 0, sizeof(h));
	file_entries f = { 0 };
	line_program p = { 0 };
	int rc = -1;
	if (read_header(lc, &c, &h, &f)) {
		snprintf(why, why_sz, "bad line table header at .debug_line+0x%llx",
			 (unsigned long long)lc->offset);
		goto out;
	}
	t->version = h.version;
	if (intern_files(lc, &h, &f, t)) {
		snprintf(why, why_sz, "out of memory");
		goto out;
	}
	/* Like LLVM, keep the sequences completed before a malformed opcode. */
	(void)run_program(lc, &h, &f, &p, t);
	seq_sort(p.seqs, p.nseqs);
	rc = lc->reloc ? flatten_sections(&p, t, lc->reloc) : flatten(&p, t);
	if (rc)
		snprintf(why, why_sz, "out of memory");
out:
	free(h.dirs);
	free(f.names);
	free(f.dirs);
	free(f.srcs);
	free(p.rows);
	free(p.seqs);
	return rc;
}

void ix_line_free(ix_line_table *t)
{
	free(t->file_map);
	ix_vec_free(&t->pieces);
	memset(t, 0, sizeof(*t));
}
