/* SPDX-License-Identifier: MIT */
/*
 * reader_resolve.c - symdb_resolve_batch(): the lookup algorithm of SPEC §11
 * over a mapped, validated index file.
 *
 * Each address needs three upper_bound searches (symbols, inline intervals,
 * line intervals).  Because the batch is sorted, each search starts where the
 * previous address's search ended and gallops forward (1, 2, 4, ... records,
 * then bisects the last step), so a dense batch costs O(1) per address per
 * table and a sparse one O(log gap).  An address equal to its predecessor
 * gets the predecessor's result, pointing at the same frames: no search, no
 * copy (profile batches are mostly such repeats).  So does a different
 * address whose three searches find what the previous search found (another
 * instruction of the same line row): the result depends on those alone.
 * Each search also leaves the first offset at which any of the three could
 * answer otherwise (the next symbol, interval or row start, the symbol's
 * end: rd_cursor.limit), so such an address below it is not searched.
 *
 * The helpers called per frame or per distinct address (file_paths' cache
 * hit, call_site, row_line, hit_row, block_at, block_row) are forced
 * inline: the register saves and restores of their calls cost more than
 * the small bodies.
 *
 * Both majors of the format go through reader_tables.h: in format 2 the
 * inline and line searches gallop over a block column and bisect one block
 * of 64 packed intervals (SPEC §7.9.2), and a block whose widths or offset
 * are damaged makes the address SYMDB_E_CORRUPT.
 *
 * Open validated only the directory: record contents are untrusted.  Every
 * index read from a record (string reference, FILES, FUNCTIONS, node,
 * Parent) is checked against its table before use, and a failing check marks
 * that one address SYMDB_E_CORRUPT.  So zeros read where a truncated file's
 * pages were (reader_fault.c) cannot loop or lead outside the mapping, and
 * a batch during or after which the mapping faulted is SYMDB_E_CORRUPT
 * throughout.  The chain walk terminates because each
 * Parent must be below its child (SPEC §7.5).  Nothing here allocates or
 * locks, and all state lives on the stack, so any number of threads may
 * resolve on one image.
 */
#include <string.h>

#include "reader_advise.h"
#include "reader_internal.h"
#include "reader_tables.h"
#include "symdb_endian.h"

/* A format-2 interval table's search position (SPEC §7.9.2): the block
 * the previous address fell in, decoded once (k = its index + 1, 0 = none)
 * and the row it found there, where the next, larger address's search in
 * the same block starts. */
typedef struct rd_blockpos {
	fmt_block b;
	uint64_t k;
	unsigned r;
} rd_blockpos;

/* The deepest chain whose nodes a lookup remembers (walk_chain): deeper
 * ones are walked in full every time. */
#define RD_CHAIN_MEMO 32

/* Where the previous address's three searches ended: the upper_bound (count
 * of entries <= the previous offset) in each address column, or in format 2
 * in each block column. */
typedef struct rd_cursor {
	uint64_t sym, inl, line;
	rd_blockpos ib, lb;
	rd_tab tab;           /* FUNCTIONS and INLINE_NODES, for this call */
	rd_fcache fc;         /* tab.fc */
	/* The INLINE_NODES index behind each frame of the last result that
	 * has frames of its own (innermost first), nchain of them; 0 when
	 * unknown (no chain, or deeper than RD_CHAIN_MEMO). */
	uint32_t chain[RD_CHAIN_MEMO];
	unsigned nchain;
	/* Set by search: every offset in (o, limit), o the one searched, gets
	 * the same answer from all three searches, with the cursor left as it
	 * is, so its result is the previous address's (0: none such). */
	uint64_t limit;
} rd_cursor;

/* The first index in [from, n] whose address exceeds key, given that every
 * address before `from` is <= key (true for a sorted batch: it was for the
 * previous, smaller key).  Gallop, then bisect without branches (the
 * outcome of each step is a coin toss).  Inlined with a constant width, so
 * each column load is one load and one byte swap. */
static inline __attribute__((always_inline)) uint64_t
col_at(const uint8_t *col, const unsigned stride, const unsigned aw, uint64_t i)
{
	return aw == 4 ? fmt_be32(col + stride * i) : fmt_be64(col + stride * i);
}

/* Inlined with constant stride and width (an address column: Address_Size
 * apart; a format-2 block column: the u64 First_Address of 32-byte
 * records), so each load is one load and one byte swap. */
static inline __attribute__((always_inline)) uint64_t
upper_from_w(const uint8_t *col, const unsigned stride, const unsigned aw, uint64_t n,
             uint64_t from, uint64_t key)
{
	uint64_t lo, len, step = 1;

	if (from >= n || col_at(col, stride, aw, from) > key)
		return from;
	lo = from; /* invariant: col[lo] <= key */
	while (step < n - lo && col_at(col, stride, aw, lo + step) <= key) {
		lo += step;
		step <<= 1;
	}
	/* col[lo + len] > key, or lo + len == n */
	len = step < n - lo ? step : n - lo;
	while (len > 1) {
		uint64_t half = len / 2;
		lo = col_at(col, stride, aw, lo + half) <= key ? lo + half : lo;
		len -= half;
	}
	return lo + 1;
}

static uint64_t upper_from(const uint8_t *col, unsigned aw, uint64_t n, uint64_t from,
                           uint64_t key)
{
	return aw == 4 ? upper_from_w(col, 4, 4, n, from, key)
	               : upper_from_w(col, 8, 8, n, from, key);
}

/* upper_from over a format-2 block column (SPEC §7.9.2). */
static uint64_t upper_blocks(const uint8_t *blk, uint64_t n, uint64_t from, uint64_t key)
{
	return upper_from_w(blk, FMT_BLK_SIZE, 8, n, from, key);
}

/* A string reference to a C string.  Reference 0 is the empty string (SPEC
 * §8), which here means "unknown" and becomes NULL; comparing the reference
 * rather than the first byte keeps the pool's cache lines untouched until the
 * caller prints.  Returns -1 for a reference past the pool. */
static int str_or_null(const symdb_image *img, uint32_t ref, const char **out)
{
	if (ref >= img->nstrs)
		return -1;
	*out = ref ? (const char *)img->strs + ref : NULL;
	return 0;
}

/* file_paths for an index not in the cache: decode, check, cache. */
static int file_paths_miss(const rd_tab *tb, uint32_t idx, const char **path, const char **rel)
{
	const symdb_image *img = tb->img;
	rd_fcache *fc = tb->fc;
	const uint8_t *f;

	if (idx >= img->nfiles)
		return -1;
	f = img->files + (uint64_t)idx * FMT_FILE_SIZE;
	if (str_or_null(img, fmt_be32(f + FMT_FILE_PATH), path) ||
	    str_or_null(img, fmt_be32(f + FMT_FILE_RELATIVE), rel))
		return -1;
	if (fc) {
		const unsigned slot = idx % RD_FCACHE_SIZE;
		fc->idx[slot] = idx;
		fc->path[slot] = *path;
		fc->rel[slot] = *rel;
	}
	return 0;
}

/* FILES index -> full and relative path; NONE leaves them NULL.  The
 * frames of a batch name few files many times (the headers of a C++
 * image's inline chains: a frame's call file and its function's
 * declaration file), so the last answers are cached by index: a hit costs
 * a compare and two loads instead of a record, two bounds checks and two
 * string references, and is inlined (three calls a frame).  Only valid
 * records are cached: the mapping does not change, so a later miss would
 * decode the same. */
static inline __attribute__((always_inline)) int
file_paths(const rd_tab *tb, uint32_t idx, const char **path, const char **rel)
{
	const rd_fcache *fc = tb->fc;
	const unsigned slot = idx % RD_FCACHE_SIZE;

	*path = *rel = NULL;
	if (idx == FMT_NONE)
		return 0;
	if (fc && fc->idx[slot] == idx) {
		*path = fc->path[slot];
		*rel = fc->rel[slot];
		return 0;
	}
	return file_paths_miss(tb, idx, path, rel);
}

/* Name, short name and declaration of FUNCTIONS[idx] (SPEC §7.4). */
static int function_info(const rd_tab *tb, uint32_t idx, symdb_frame *fr)
{
	const symdb_image *img = tb->img;
	rd_fn fn;

	if (idx == FMT_NONE)
		return 0;
	if (idx >= tb->nfns)
		return -1;
	rd_fn_get(tb, idx, &fn);
	if (str_or_null(img, fn.linkage, &fr->name) || str_or_null(img, fn.name, &fr->short_name) ||
	    file_paths(tb, fn.decl_file, &fr->decl_file, &fr->decl_file_rel))
		return -1;
	fr->decl_line = fn.decl_line;
	return 0;
}

/* Frame for one INLINE_NODES record: its function and start (SPEC §11.5).
 * File and line are filled by the caller, who knows the inner frame. */
static int node_frame(const rd_tab *tb, const rd_node *node, symdb_frame *fr)
{
	const symdb_image *img = tb->img;

	if (node->flags & FMT_NODEF_INLINED)
		fr->flags |= SYMDB_FRAME_INLINED;
	if (node->flags & FMT_NODEF_HAS_LOW_PC) {
		fr->start_addr = node->low_pc + img->base;
		fr->dwarf_start_addr = fr->start_addr;
		fr->flags |= SYMDB_FRAME_HAS_START | SYMDB_FRAME_HAS_DWARF_START;
	}
	return function_info(tb, node->function, fr);
}

/* Outer frames take file and line from the call site recorded in the node
 * of the frame inside them (DW_AT_call_file / _line / _column). */
static inline __attribute__((always_inline)) int
call_site(const rd_tab *tb, uint32_t inner, symdb_frame *fr)
{
	rd_call c;

	rd_node_call(tb, inner, &c);
	if (file_paths(tb, c.file, &fr->file, &fr->file_rel))
		return -1;
	fr->line = c.line;
	fr->column = c.column;
	fr->discriminator = c.discr;
	if (c.file != FMT_NONE)
		fr->flags |= SYMDB_FRAME_HAS_LINE;
	return 0;
}

/* Frame 0's file and line from its LINE_ROWS record (SPEC §11.4), NULL
 * when there is none. */
static inline __attribute__((always_inline)) int
row_line(const rd_tab *tb, const rd_row *row, symdb_frame *fr)
{
	if (!row)
		return 0;
	if (file_paths(tb, row->file, &fr->file, &fr->file_rel))
		return -1;
	fr->line = row->line;
	fr->column = row->column;
	fr->discriminator = row->discr;
	fr->flags |= SYMDB_FRAME_HAS_LINE;
	return 0;
}

/* A cleared frame, copied rather than memset: for an 88-byte struct the
 * copy is a few vector moves, where memset becomes `rep stos`, whose
 * start-up costs more than the stores. */
static const symdb_frame rd_zero_frame;

/* Forget what call_site, row_line or symbol_file put into f: its function
 * part (node_frame, apply_symbol) stays. */
static void clear_line(symdb_frame *f)
{
	f->file = f->file_rel = NULL;
	f->line = f->column = f->discriminator = 0;
	f->flags &= ~(uint32_t)(SYMDB_FRAME_HAS_LINE | SYMDB_FRAME_FILE_FROM_SYMTAB);
}

/* What the three searches found for one offset.  The line row's fields
 * are decoded only when frames are built (hit_row): an address whose hit
 * equals the previous one's never needs them. */
typedef struct rd_hit {
	int64_t sym;        /* SYMBOLS index, or -1 */
	uint32_t node;      /* innermost INLINE_NODES index, or FMT_NONE */
	int64_t rowk;       /* LINE_ROWS index with File != NONE, or -1 */
	const fmt_block *lb; /* format 2: rowk's block (the cursor's), row lr */
	unsigned lr;
	int bad;            /* a damaged block was met (format 2) */
} rd_hit;

/* *lim = min(*lim, v). */
static inline void lim_min(uint64_t *lim, uint64_t v)
{
	if (v < *lim)
		*lim = v;
}

/* x + y, or UINT64_MAX when that overflows. */
static inline uint64_t add_sat(uint64_t x, uint64_t y)
{
	return x + y < x ? UINT64_MAX : x + y;
}

/* Format 1: the inline and line intervals by their address columns. */
static void search_v1(const symdb_image *img, rd_cursor *c, uint64_t o, rd_hit *h)
{
	rd_row row;

	c->inl = upper_from(img->iaddr, img->aw, img->nimap, c->inl, o);
	if (c->inl > 0)
		(void)rd_imap_get(img, c->inl - 1, &h->node);
	if (c->inl < img->nimap) /* upper_from returns c->inl below this */
		lim_min(&c->limit, fmt_be_addr(img->iaddr, img->aw, c->inl));
	c->line = upper_from(img->laddr, img->aw, img->nrows, c->line, o);
	if (c->line < img->nrows)
		lim_min(&c->limit, fmt_be_addr(img->laddr, img->aw, c->line));
	if (c->line > 0) {
		/* Format 1: rd_row_get cannot fail (the check is for gcc -O2,
		 * which cannot see that). */
		if (rd_row_get(img, c->line - 1, &row) == 0 && row.file != FMT_NONE)
			h->rowk = (int64_t)(c->line - 1);
	}
}

/* The row of block p->b holding offset o, searched from p->r, the row of
 * the previous, smaller offset in the same block: a dense sorted batch
 * costs one Delta load per address, as the galloping search of format 1. */
static inline __attribute__((always_inline)) unsigned
block_row(const rd_blockpos *p, uint64_t o)
{
	const fmt_block *b = &p->b;
	uint64_t d = o - b->first;
	unsigned lo = p->r, step = 1, len; /* Delta[lo] <= d: it was for the previous offset */

	/* Gallop, then bisect the last step, as upper_from_w does. */
	while (step < b->n - lo && fmt_block_raw(b, FMT_BC_DELTA, lo + step) <= d) {
		lo += step;
		step <<= 1;
	}
	len = step < b->n - lo ? step : b->n - lo;
	while (len > 1) {
		unsigned half = len / 2;
		lo = fmt_block_raw(b, FMT_BC_DELTA, lo + half) <= d ? lo + half : lo;
		len -= half;
	}
	return lo;
}

/* Block k of a format-2 interval table at cursor position p, decoded and
 * checked once per block; then the row of o in it.  -1: damaged. */
static inline __attribute__((always_inline)) int
block_at(const symdb_image *img, int lines, rd_blockpos *p, uint64_t k, uint64_t o)
{
	unsigned r;

	if (p->k != k + 1) {
		p->k = 0;
		if (rd_block(img, lines, k, &p->b))
			return -1;
		r = fmt_block_find(&p->b, o);
	} else {
		r = block_row(p, o);
	}
	p->k = k + 1;
	p->r = r;
	return 0;
}

/* Bound *lim to the offsets past o (just found at row p->r of block k,
 * the cursor's) for which block_at finds the same row: below the next row's
 * start its first Delta compare fails (Delta[r + 1] > o - First, checked,
 * as a damaged block need not be sorted); the last row stays up to the next
 * block (the caller's bound). */
static inline __attribute__((always_inline)) void
block_limit(const rd_blockpos *p, uint64_t o, uint64_t *lim)
{
	const fmt_block *b = &p->b;
	uint64_t delta;

	if (o < b->first) { /* damaged: no shortcut */
		*lim = 0;
		return;
	}
	if (p->r + 1 >= b->n)
		return;
	delta = fmt_block_raw(b, FMT_BC_DELTA, p->r + 1);
	if (delta <= o - b->first)
		*lim = 0;
	else
		lim_min(lim, add_sat(b->first, delta));
}

/* Format 2 (SPEC §7.9.2): the cursors count blocks; the block found is
 * searched for the interval. */
static void search_v2(const symdb_image *img, rd_cursor *c, uint64_t o, rd_hit *h)
{
	c->inl = upper_blocks(img->iaddr, img->niblk, c->inl, o);
	if (c->inl < img->niblk) /* upper_blocks returns c->inl below this */
		lim_min(&c->limit, fmt_be64(img->iaddr + c->inl * FMT_BLK_SIZE + FMT_BLK_FIRST));
	if (c->inl > 0) {
		if (block_at(img, 0, &c->ib, c->inl - 1, o))
			h->bad = 1;
		else
			h->node = fmt_nullable(c->ib.b.base_index,
			                       fmt_block_raw(&c->ib.b, FMT_BC_INDEX, c->ib.r));
		if (!h->bad)
			block_limit(&c->ib, o, &c->limit);
		if (h->node < c->tab.nnodes)
			rd_node_prefetch(&c->tab, h->node); /* during the line search */
	}
	c->line = upper_blocks(img->laddr, img->nlblk, c->line, o);
	if (c->line < img->nlblk)
		lim_min(&c->limit, fmt_be64(img->laddr + c->line * FMT_BLK_SIZE + FMT_BLK_FIRST));
	if (c->line > 0) {
		const fmt_block *b = &c->lb.b;
		if (block_at(img, 1, &c->lb, c->line - 1, o)) {
			h->bad = 1;
			return;
		}
		block_limit(&c->lb, o, &c->limit);
		if (fmt_block_raw(b, FMT_BC_INDEX, c->lb.r) != 0) { /* File != NONE */
			h->rowk = (int64_t)((c->line - 1) * FMT_BLK_ROWS + c->lb.r);
			h->lb = b;
			h->lr = c->lb.r;
		}
	}
}

static void search(const symdb_image *img, rd_cursor *c, uint64_t o, rd_hit *h)
{
	h->sym = -1;
	h->node = FMT_NONE;
	h->rowk = -1;
	h->bad = 0;
	c->limit = UINT64_MAX;
	c->sym = upper_from(img->saddr, img->aw, img->nsyms, c->sym, o);
	if (c->sym < img->nsyms) /* upper_from returns c->sym below this */
		lim_min(&c->limit, fmt_be_addr(img->saddr, img->aw, c->sym));
	if (c->sym > 0) {
		/* start <= o: upper_from's answer - 1 always is */
		uint64_t i = c->sym - 1, start = fmt_be_addr(img->saddr, img->aw, i);
		uint64_t size = fmt_be64(img->syms + i * FMT_SYM_SIZE + FMT_SYM_LENGTH);
		if (size == 0 || o - start < size)
			h->sym = (int64_t)i;
		if (size != 0 && o - start < size)
			lim_min(&c->limit, add_sat(start, size));
	}
	if (img->packed)
		search_v2(img, c, o, h);
	else
		search_v1(img, c, o, h);
	if (h->bad)
		c->limit = 0;
}

/* Store frame f at dst, an element of the caller's array of fsz-byte
 * frames: min(fsz, sizeof *f) bytes, so a caller built against an older,
 * smaller symdb_frame is never overrun and a newer, larger one keeps its
 * tail.  The common case (fsz == sizeof) is one fixed-size copy. */
static inline void put_frame(uint8_t *dst, const symdb_frame *f, size_t fsz)
{
	if (fsz == sizeof *f)
		memcpy(dst, f, sizeof *f);
	else
		memcpy(dst, f, fsz < sizeof *f ? fsz : sizeof *f);
}

/* The same for one result. */
static inline void put_result(uint8_t *dst, const symdb_result *r, size_t rsz)
{
	if (rsz == sizeof *r)
		memcpy(dst, r, sizeof *r);
	else
		memcpy(dst, r, rsz < sizeof *r ? rsz : sizeof *r);
}

/* A batch whose results pass this many bytes writes them with streaming
 * (non-temporal) stores: such an array outgrows the core's caches before
 * the caller reads it, so a plain store first reads each line in (RFO) and
 * later writes it back, where a streaming store only writes it.  Measured
 * on 1M profile-like addresses (40 MB of results): writing them 4.9 ns per
 * result with plain stores, 3.3-3.8 with streaming ones, and the caller's
 * reading them back no slower.  Small batches keep plain stores, whose
 * lines stay in cache for the caller. */
#define RD_STREAM_MIN_BYTES ((size_t)8 << 20)

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#define RD_HAVE_STREAM 1
_Static_assert(sizeof(symdb_result) == 40, "symdb_result is five u64s");

/* One result at dst (8-byte aligned) by streaming stores of its five u64s,
 * unrolled (gcc -O2 keeps a loop here, which costs more than the stores). */
static inline void put_result_nt(uint8_t *dst, const long long *w)
{
	long long *d = (long long *)(void *)dst;

	_mm_stream_si64(d, w[0]);
	_mm_stream_si64(d + 1, w[1]);
	_mm_stream_si64(d + 2, w[2]);
	_mm_stream_si64(d + 3, w[3]);
	_mm_stream_si64(d + 4, w[4]);
}
#else
#define RD_HAVE_STREAM 0
#endif

/* Store result r at res[i] and at every following index whose address
 * equals a (the run of repeats shares r, symdb.h); returns the index past
 * the run.  `stream`: by streaming stores (res 8-byte aligned, rsz ==
 * sizeof r).  The fixed-size cases are separate loops so that a repeat
 * costs a compare and the stores. */
static size_t put_run(uint8_t *res, size_t rsz, int stream, const symdb_result *r,
                      const uint64_t *addrs, size_t i, size_t naddrs)
{
	const uint64_t a = addrs[i];

#if RD_HAVE_STREAM
	if (stream) {
		long long w[sizeof *r / 8];
		memcpy(w, r, sizeof w);
		do
			put_result_nt(res + i * sizeof *r, w);
		while (++i < naddrs && addrs[i] == a);
		return i;
	}
#else
	(void)stream;
#endif
#if RD_HAVE_STREAM
	if (rsz == sizeof *r) {
		/* In registers: GCC kept a copy of *r on the stack and loaded it
		 * back for every repeat (three loads besides the stores). */
		const __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)r);
		const __m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)r + 1);
		uint64_t v2;
		memcpy(&v2, (const uint8_t *)r + 32, sizeof v2);
		do {
			uint8_t *d = res + i * sizeof *r;
			_mm_storeu_si128((__m128i *)(void *)d, v0);
			_mm_storeu_si128((__m128i *)(void *)d + 1, v1);
			memcpy(d + 32, &v2, sizeof v2);
		} while (++i < naddrs && addrs[i] == a);
		return i;
	}
#else
	if (rsz == sizeof *r) {
		const symdb_result v = *r;
		do
			memcpy(res + i * sizeof v, &v, sizeof v);
		while (++i < naddrs && addrs[i] == a);
		return i;
	}
#endif
	do
		put_result(res + i * rsz, r, rsz);
	while (++i < naddrs && addrs[i] == a);
	return i;
}

/* The hit's line row decoded into *row, or NULL when it has none. */
static inline __attribute__((always_inline)) const rd_row *
hit_row(const symdb_image *img, const rd_hit *h, rd_row *row)
{
	if (h->rowk < 0)
		return NULL;
	if (img->packed)
		rd_block_row(h->lb, h->lr, row);
	else
		(void)rd_row_get(img, (uint64_t)h->rowk, row);
	return row;
}

/* The previous result's frames, for walk_chain to take a shared tail from:
 * node[j] made frame j (innermost first), n frames, fr their first (fsz
 * bytes apart).  n == 0: nothing to share. */
typedef struct rd_tail {
	const uint8_t *fr;
	const uint32_t *node;
	unsigned n;
} rd_tail;

/* walk_chain met node t->node[p], frame p of the previous result, as its
 * frame m: from there outward the chain is the previous one (a node's
 * Parent is fixed), and so are the frames outside frame p, which depend
 * only on their node and the node inside them, and, for the outermost, on
 * the symbol, which is the same (resolve_one's condition).  Frame p itself
 * keeps its function and takes its line from this chain's inner node (or
 * row).  A deep C++ chain whose innermost inlined calls differ from the
 * previous address's then decodes those few nodes only.  chain[] gets the
 * nodes of the frames past m, RD_CHAIN_MEMO at most.  Returns walk_chain's
 * answer. */
static int64_t share_tail(const rd_tab *tb, const rd_hit *h, uint8_t *out, size_t fsz,
                          size_t room, symdb_frame *outer, const rd_tail *t, unsigned p,
                          size_t m, uint32_t inner, uint32_t *chain)
{
	const size_t total = m + (t->n - p), fcp = fsz < sizeof *outer ? fsz : sizeof *outer;
	symdb_frame f = rd_zero_frame;
	rd_row row;

	if (total > room)
		return -2;
	memcpy(&f, t->fr + p * fsz, fcp);
	clear_line(&f);
	if (m ? call_site(tb, inner, &f) : row_line(tb, hit_row(tb->img, h, &row), &f))
		return -1;
	if (p + 1 == t->n) {
		*outer = f;
	} else {
		put_frame(out + m * fsz, &f, fsz);
		if (fsz == sizeof f) /* else only the first fcp bytes of each */
			memcpy(out + (m + 1) * fsz, t->fr + (p + 1) * fsz, (t->n - p - 2) * fsz);
		else
			for (size_t j = p + 1; j + 1 < t->n; j++)
				memcpy(out + (m + j - p) * fsz, t->fr + j * fsz, fcp);
		*outer = rd_zero_frame;
		memcpy(outer, t->fr + (t->n - 1) * fsz, fcp);
	}
	for (size_t j = m; j < total && j < RD_CHAIN_MEMO; j++)
		chain[j] = t->node[p + (j - m)];
	return (int64_t)total;
}

/* Walk the chain innermost first into the first `room` frames of out (fsz
 * bytes apart), except the outermost frame, which goes to *outer: the
 * symbol table may still override it.  A node met that made a frame of the
 * previous result (*t) ends the walk: share_tail.  chain[j] gets the node
 * of frame j, for j < RD_CHAIN_MEMO.  Returns the number of frames
 * (outermost included), -1 if corrupt, -2 if room ran out. */
static int64_t walk_chain(const rd_tab *tb, const rd_hit *h, uint8_t *out, size_t fsz,
                          size_t room, symdb_frame *outer, const rd_tail *t, uint32_t *chain)
{
	rd_node node;
	rd_row row;
	uint32_t n = h->node, inner = 0;
	size_t m = 0;
	unsigned p = 0;

	while (n != FMT_NONE) {
		uint32_t parent;
		symdb_frame f, *fp;
		/* Depth is a u16 (SPEC §7.5), so no valid chain is longer than
		 * 65536: a longer one is damage, not a reason to ask for more room. */
		if (n >= tb->nnodes || m > UINT16_MAX)
			return -1;
		if (m >= room)
			return -2;
		/* Both chains descend (Parent < node): a merge finds the
		 * first node they share. */
		while (p < t->n && t->node[p] > n)
			p++;
		if (p < t->n && t->node[p] == n)
			return share_tail(tb, h, out, fsz, room, outer, t, p, m, inner, chain);
		rd_node_get(tb, n, &node);
		parent = node.parent;
		if (parent != FMT_NONE && parent >= n)
			return -1; /* SPEC §7.5: parents come first; else a cycle */
		if (parent != FMT_NONE)
			rd_node_prefetch(tb, parent); /* while this frame is built */
		/* Built where it goes (the caller's array holds our frames in
		 * the common case), not built and then copied. */
		fp = parent == FMT_NONE ? outer
		     : fsz == sizeof f  ? (symdb_frame *)(void *)(out + m * fsz) : &f;
		*fp = rd_zero_frame;
		if (node_frame(tb, &node, fp) ||
		    (m ? call_site(tb, inner, fp) : row_line(tb, hit_row(tb->img, h, &row), fp)))
			return -1;
		if (fp == &f)
			put_frame(out + m * fsz, &f, fsz);
		if (m < RD_CHAIN_MEMO)
			chain[m] = n;
		inner = n;
		n = parent;
		m++;
	}
	return (int64_t)m;
}

/* An outermost frame without a file takes its symbol's STT_FILE name (SPEC
 * §7.2.1, §11.6), verbatim in every path form: llvm-symbolizer 14 puts it in
 * FileName after --basenames/--relativenames were applied to DWARF paths.
 * Line, column and HAS_LINE stay unset.  Returns 0, or -1 when corrupt. */
static int symbol_file(const symdb_image *img, int64_t sym, symdb_frame *outer)
{
	const char *file;
	uint32_t ref;

	if (!img->sfiles)
		return 0;
	ref = fmt_be32(img->sfiles + (uint64_t)sym * FMT_SYMFILE_SIZE);
	if (ref == 0)
		return 0;
	file = rd_str(img, ref);
	if (!file)
		return -1;
	outer->file = outer->file_rel = file;
	outer->flags |= SYMDB_FRAME_FILE_FROM_SYMTAB;
	return 0;
}

/* The symbol-table part of the result, and the override of the outermost
 * frame (SPEC §11.2, §11.6). */
static int apply_symbol(const symdb_image *img, int64_t sym, symdb_frame *outer, symdb_result *r)
{
	const uint8_t *s = img->syms + (uint64_t)sym * FMT_SYM_SIZE;
	const char *name = rd_str(img, fmt_be32(s + FMT_SYM_NAME));

	if (!name)
		return -1;
	r->sym_name = name;
	r->sym_addr = fmt_be_addr(img->saddr, img->aw, (uint64_t)sym) + img->base;
	r->sym_size = fmt_be64(s + FMT_SYM_LENGTH);
	outer->name = name;
	outer->start_addr = r->sym_addr;
	outer->flags |= SYMDB_FRAME_FROM_SYMTAB | SYMDB_FRAME_HAS_START;
	return outer->file ? 0 : symbol_file(img, sym, outer);
}

/* The previous result's frames again, for a hit that differs from the
 * previous one (*prev, result prev_r, frames at prev_fr) in its line row
 * only: the chain, its call sites, names and the symbol are the same, so
 * only frame 0's file and line are read, from the new row.  A dense sorted
 * batch (many addresses per function) then decodes no node or function
 * record per address.  Returns 0, -1 if corrupt, -2 if room ran out. */
static int reuse_frames(const rd_tab *tb, const rd_hit *h, uint8_t *fr, size_t fsz,
                        size_t room, const uint8_t *prev_fr, const symdb_result *prev_r,
                        symdb_result *r)
{
	const symdb_image *img = tb->img;
	symdb_frame f0 = rd_zero_frame;
	rd_row row;

	if (room < prev_r->count)
		return -2;
	memmove(fr, prev_fr, prev_r->count * fsz);
	memcpy(&f0, prev_fr, fsz < sizeof f0 ? fsz : sizeof f0);
	clear_line(&f0);
	if (row_line(tb, hit_row(img, h, &row), &f0))
		return -1;
	/* Frame 0 is the outermost too: apply_symbol's file rule. */
	if (prev_r->count == 1 && h->sym >= 0 && !f0.file && symbol_file(img, h->sym, &f0))
		return -1;
	put_frame(fr, &f0, fsz);
	r->count = prev_r->count;
	r->sym_name = prev_r->sym_name;
	r->sym_addr = prev_r->sym_addr;
	r->sym_size = prev_r->sym_size;
	r->status = 0;
	return 0;
}

/* Resolve one address into the first `room` frames of fr (fsz bytes
 * apart).  Returns 0, or -2 when it needs more than `room` frames (nothing
 * is then consumed).  *prev is what the previous search found and prev_r
 * its result (NULL before the first): the result is a function of the hit
 * alone, so an equal hit takes a copy of prev_r, sharing its frames, and fr
 * is untouched. */
static int resolve_one(const symdb_image *img, rd_cursor *c, uint64_t a, uint8_t *fr,
                       size_t fsz, size_t room, symdb_result *r, rd_hit *prev,
                       const symdb_result *prev_r, const uint8_t *prev_fr)
{
	symdb_frame outer;
	rd_hit h;
	rd_tail tail = { NULL, c->chain, 0 };
	uint32_t chain[RD_CHAIN_MEMO];
	int64_t m;

	r->count = 0;
	r->status = SYMDB_E_NOT_FOUND;
	r->sym_name = NULL;
	r->sym_addr = r->sym_size = 0;
	c->limit = 0;
	if (a == SYMDB_ADDR_INVALID || a < img->base)
		return 0;
	search(img, c, a - img->base, &h);
	if (h.bad) {
		r->status = SYMDB_E_CORRUPT;
		return 0;
	}
	if (h.sym < 0 && h.node == FMT_NONE && h.rowk < 0)
		return 0;
	if (prev_r && h.sym == prev->sym && h.node == prev->node && h.rowk == prev->rowk) {
		*r = *prev_r;
		return 0;
	}
	if (prev_r && h.sym == prev->sym && h.node == prev->node && h.rowk >= 0 &&
	    prev->rowk >= 0) {
		m = reuse_frames(&c->tab, &h, fr, fsz, room, prev_fr, prev_r, r);
		if (m == -1) {
			r->status = SYMDB_E_CORRUPT;
			r->sym_name = NULL;
			r->sym_addr = r->sym_size = 0;
		} else if (m == 0) {
			*prev = h;
		}
		return m == -2 ? -2 : 0;
	}
	if (prev_r && h.sym == prev->sym) {
		tail.fr = prev_fr;
		tail.n = c->nchain;
	}
	m = walk_chain(&c->tab, &h, fr, fsz, room, &outer, &tail, chain);
	if (m == 0) { /* no chain: one frame of unknown name (SPEC §11.5) */
		if (room == 0)
			return -2;
		outer = rd_zero_frame;
		rd_row row;
		m = row_line(&c->tab, hit_row(img, &h, &row), &outer) ? -1 : 1;
	}
	if (m == -2)
		return -2;
	if (m > 0 && h.sym >= 0 && apply_symbol(img, h.sym, &outer, r))
		m = -1;
	if (m < 0) {
		r->status = SYMDB_E_CORRUPT;
		r->sym_name = NULL;
		r->sym_addr = r->sym_size = 0;
		return 0;
	}
	put_frame(fr + (size_t)(m - 1) * fsz, &outer, fsz);
	r->status = 0;
	r->count = (uint32_t)m;
	*prev = h;
	/* h.node == NONE: the one frame of no chain, nothing to share. */
	c->nchain = h.node != FMT_NONE && m <= RD_CHAIN_MEMO ? (unsigned)m : 0;
	if (c->nchain)
		memcpy(c->chain, chain, c->nchain * sizeof *chain);
	return 0;
}

/* Every result of [0, n) SYMDB_E_CORRUPT: the mapping faulted during or
 * before the call (reader_fault.c), so what was read may be zeros. */
static void all_damaged(uint8_t *res, size_t n, size_t rsz)
{
	static const symdb_result bad = { .status = SYMDB_E_CORRUPT };

	for (size_t i = 0; i < n; i++)
		put_result(res + i * rsz, &bad, rsz);
}

ptrdiff_t symdb_resolve_batch(const symdb_image *img, const uint64_t *addrs, size_t naddrs,
                              symdb_frame *frames, size_t frames_cap, size_t frame_sz,
                              symdb_result *results, size_t result_sz)
{
	rd_cursor c;
	rd_hit prev = { .sym = -1, .node = FMT_NONE, .rowk = -1 };
	symdb_result r, prev_r; /* prev_r: the result of prev, once have_prev */
	uint8_t *fr = (uint8_t *)frames, *res = (uint8_t *)results;
	size_t i, used = 0;
	int have_prev = 0, stream;

	if (!img || (naddrs && (!addrs || !results)) || (frames_cap && !frames) || !frame_sz ||
	    !result_sz)
		return SYMDB_E_INVAL;
	if (!frames)
		frames_cap = 0;
	if (frames_cap > UINT32_MAX)
		frames_cap = UINT32_MAX; /* symdb_result.first is a u32 */
	if (rd_image_damaged(img)) {
		all_damaged(res, naddrs, result_sz);
		return (ptrdiff_t)naddrs;
	}
	rd_advise_batch(img, naddrs); /* tables this batch would fault through */
	stream = RD_HAVE_STREAM && result_sz == sizeof r && (uintptr_t)results % 8 == 0 &&
	         naddrs >= RD_STREAM_MIN_BYTES / sizeof r;
	c.sym = c.inl = c.line = 0;
	c.ib.k = c.lb.k = 0; /* no block decoded yet */
	c.nchain = 0;
	c.limit = 0;
	rd_tab_init(&c.tab, img, NULL);
	for (i = 0; i < RD_FCACHE_SIZE; i++)
		c.fc.idx[i] = FMT_NONE;
	c.tab.fc = &c.fc;
	for (i = 0; i < naddrs;) {
		uint64_t a = addrs[i];
		if (i > 0 && a < addrs[i - 1])
			return SYMDB_E_UNSORTED; /* symdb.h: frames and results
			                            are then unspecified */
		/* Below c.limit, r is still the previous address's result (a >
		 * that address, which was searched: limit > 0 says so, so a >=
		 * base). */
		if (a == SYMDB_ADDR_INVALID || a - img->base >= c.limit) {
			r.first = (uint32_t)used;
			if (resolve_one(img, &c, a, fr ? fr + used * frame_sz : NULL, frame_sz,
			                frames_cap - used, &r, &prev, have_prev ? &prev_r : NULL,
			                have_prev ? fr + (size_t)prev_r.first * frame_sz : NULL))
				break;
		}
		if (r.first == used && r.count) {
			used += r.count;
			prev_r = r; /* resolve_one set prev */
			have_prev = 1;
		}
		/* This address and the run of addresses equal to it: the same
		 * result, sharing its frames (symdb.h). */
		i = put_run(res, result_sz, stream, &r, addrs, i, naddrs);
	}
#if RD_HAVE_STREAM
	if (stream)
		_mm_sfence(); /* order the streaming stores before the return */
#endif
	if (i == 0 && naddrs > 0)
		return SYMDB_E_INVAL; /* frames_cap too small for even one address */
	if (rd_image_damaged(img))
		all_damaged(res, i, result_sz);
	return (ptrdiff_t)i;
}
