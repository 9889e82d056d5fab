/* SPDX-License-Identifier: MIT */
/*
 * format_lmdb_tree.c - every page of one LMDB snapshot checked before LMDB
 * is trusted with it (SPEC §12.1, "Catalog tree check").
 *
 * LMDB reads its pages without checking them: one flipped byte in a
 * B-tree page of data.mdb (a node offset, a key size, a child page number,
 * the page's lower bound) made list, query, verify and even reindex die of
 * SIGSEGV or SIGBUS, abort on an assertion, corrupt the heap of a writer,
 * or loop for ever.  This walk reads each page of the snapshot's trees at
 * most once, from the two roots of its meta (the free-page database and
 * the main one, whose leaves are the named databases), and refuses what
 * LMDB could not survive: a page number not where the page is, a page
 * reached twice (a cycle), flags of another kind of page, lower/upper or
 * a node outside the page, a key or datum past it, keys out of order
 * within a page or outside the range its parent gives it (a walk that
 * would never end), a leaf not at its database's depth, an overflow run
 * past the last page, counts that differ from the database record, and a
 * free-list entry naming a page a tree uses.  Layout: format_lmdb.h.
 */
#include "format_lmdb.h"

#include <string.h>

#define LP_BRANCH   0x01u
#define LP_LEAF     0x02u
#define LP_OVERFLOW 0x04u
#define LP_OTHER    0x78u /* meta, dirty, LEAF2, sub-page: never in a tree at rest */
#define LN_BIGDATA  0x01u
#define LN_SUBDATA  0x02u
#define LN_NODESIZE 8u
#define L_MAXDEPTH  32u   /* LMDB's cursor stack */
#define L_INVALID   ((uint64_t)(size_t)~(size_t)0) /* LMDB's P_INVALID, one word */

/* A database record (8 + 5 words): pad, flags, depth, three page counts,
 * entries, root. */
struct dbrec {
	uint16_t flags, depth;
	uint64_t branch, leaf, overflow, entries, root;
};

/* What one database's walk counted. */
struct count {
	uint64_t branch, leaf, overflow, entries;
};

struct walk {
	const uint8_t *map;
	uint32_t ps;
	uint64_t last;   /* last page of the snapshot */
	uint8_t *seen;   /* one bit per page */
	int intkey;      /* the free database: word keys, compared as integers */
	int main;        /* the main database: its leaves name databases */
	fmt_lmdb_tree_report *rep;
};

struct key {
	const uint8_t *p; /* NULL: no bound */
	size_t n;
};

/* A node's two 16-bit halves of its datum size (a branch's: the low 32
 * bits of its child's page number), in LMDB's order for the byte order. */
static uint64_t node_lohi(const uint8_t *node)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return fmt_lmdb_u16(node + 2) | (uint64_t)fmt_lmdb_u16(node) << 16;
#else
	return fmt_lmdb_u16(node) | (uint64_t)fmt_lmdb_u16(node + 2) << 16;
#endif
}

static int bad(struct walk *w, uint64_t page, const char *why)
{
	w->rep->why = why;
	w->rep->page = page;
	return -1;
}

static void db_decode(const uint8_t *p, struct dbrec *d)
{
	d->flags = fmt_lmdb_u16(p + 4);
	d->depth = fmt_lmdb_u16(p + 6);
	d->branch = fmt_lmdb_word(p + 8);
	d->leaf = fmt_lmdb_word(p + 8 + FMT_LMDB_W);
	d->overflow = fmt_lmdb_word(p + 8 + 2 * FMT_LMDB_W);
	d->entries = fmt_lmdb_word(p + 8 + 3 * FMT_LMDB_W);
	d->root = fmt_lmdb_word(p + 8 + 4 * FMT_LMDB_W);
}

/* Mark page pg used; -1 when it cannot be a tree's (a meta, past the
 * snapshot) or was reached before. */
static int take(struct walk *w, uint64_t pg, uint64_t from)
{
	if (pg < 2 || pg > w->last)
		return bad(w, from, "names a page outside the snapshot");
	if (w->seen[pg >> 3] & (1u << (pg & 7)))
		return bad(w, pg, "page reached twice");
	w->seen[pg >> 3] |= (uint8_t)(1u << (pg & 7));
	return 0;
}

/* LMDB's default order (mdb_cmp_memn), or words for the free database. */
static int key_cmp(const struct walk *w, struct key a, struct key b)
{
	if (w->intkey && a.n == FMT_LMDB_W && b.n == FMT_LMDB_W) {
		uint64_t x = fmt_lmdb_word(a.p), y = fmt_lmdb_word(b.p);
		return x < y ? -1 : x > y;
	}
	int c = memcmp(a.p, b.p, a.n < b.n ? a.n : b.n);
	return c ? c : a.n < b.n ? -1 : a.n > b.n;
}

/* A key inside [lo, hi) and above prev (when given). */
static int key_in(const struct walk *w, struct key k, struct key prev, struct key lo,
                  struct key hi)
{
	return (!prev.p || key_cmp(w, prev, k) < 0) && (!lo.p || key_cmp(w, lo, k) <= 0) &&
	       (!hi.p || key_cmp(w, k, hi) < 0);
}

/* The overflow run at pg holding a datum of dsize bytes. */
static int check_overflow(struct walk *w, uint64_t pg, uint64_t dsize, uint64_t from,
                          struct count *cnt)
{
	if (pg < 2 || pg > w->last)
		return bad(w, from, "names an overflow page outside the snapshot");
	const uint8_t *p = w->map + pg * w->ps;
	uint64_t need = (FMT_LMDB_HDR + dsize + w->ps - 1) / w->ps;
	uint32_t n = fmt_lmdb_u32(p + FMT_LMDB_W + 4);

	if (fmt_lmdb_word(p) != pg || !(fmt_lmdb_u16(p + FMT_LMDB_W + 2) & LP_OVERFLOW))
		return bad(w, pg, "is not the overflow page its node names");
	if (n < need || n > w->last - pg + 1)
		return bad(w, pg, "overflow run does not fit its datum or the snapshot");
	for (uint64_t i = 0; i < n; i++)
		if (take(w, pg + i, from))
			return -1;
	cnt->overflow += n;
	return 0;
}

/* A free-list datum: a count, then that many page numbers, none of them a
 * page some tree uses or another free-list entry names (LMDB would hand it
 * out twice, or overwrite live data: an assertion, a corrupt commit).
 * The free database is walked last, so its pages are marked too. */
static int check_idl(struct walk *w, const uint8_t *d, uint64_t dsize, uint64_t pg)
{
	if (dsize < FMT_LMDB_W || dsize % FMT_LMDB_W)
		return bad(w, pg, "free-list entry is not a list of page numbers");
	uint64_t n = fmt_lmdb_word(d);
	if (n > dsize / FMT_LMDB_W - 1)
		return bad(w, pg, "free-list entry counts more pages than it holds");
	for (uint64_t i = 1; i <= n; i++) {
		uint64_t f = fmt_lmdb_word(d + i * FMT_LMDB_W);
		if (f < 2 || f > w->last || (w->seen[f >> 3] & (1u << (f & 7))))
			return bad(w, pg, "free-list entry names a page in use, twice, or outside "
			                  "the snapshot");
		w->seen[f >> 3] |= (uint8_t)(1u << (f & 7));
	}
	return 0;
}

/* The bytes a node takes (LMDB's NODESIZE + key + datum, or + a page
 * number for a datum on overflow pages, or nothing more for a branch),
 * rounded up to an even size. */
static uint64_t node_bytes(const uint8_t *node, int leaf)
{
	uint64_t n = LN_NODESIZE + fmt_lmdb_u16(node + 6);
	if (leaf)
		n += (fmt_lmdb_u16(node + 4) & LN_BIGDATA) ? FMT_LMDB_W : node_lohi(node);
	return (n + 1) & ~(uint64_t)1;
}

static int check_db(struct walk *w, const uint8_t *rec, uint64_t from, int is_main);

/* One leaf node (its key checked by the caller). */
static int check_leaf_node(struct walk *w, const uint8_t *node, uint64_t off, uint64_t pg,
                           struct count *cnt)
{
	uint16_t nflags = fmt_lmdb_u16(node + 4), ksize = fmt_lmdb_u16(node + 6);
	uint64_t dsize = node_lohi(node);
	const uint8_t *d = node + LN_NODESIZE + ksize;

	if (nflags & ~(LN_BIGDATA | LN_SUBDATA))
		return bad(w, pg, "a node of a kind the catalog never writes");
	if (nflags & LN_BIGDATA) {
		if (off + LN_NODESIZE + ksize + FMT_LMDB_W > w->ps)
			return bad(w, pg, "an overflow page number past the page");
		uint64_t opg = fmt_lmdb_word(d);
		if (check_overflow(w, opg, dsize, pg, cnt))
			return -1;
		d = w->map + opg * w->ps + FMT_LMDB_HDR;
	} else if (off + LN_NODESIZE + ksize + dsize > w->ps) {
		return bad(w, pg, "a datum past the page");
	}
	cnt->entries++;
	if (nflags & LN_SUBDATA) {
		if (!w->main || (nflags & LN_BIGDATA) || dsize != FMT_LMDB_DB_SIZE)
			return bad(w, pg, "a database record where none can be");
		return check_db(w, d, pg, 0);
	}
	return w->intkey ? check_idl(w, d, dsize, pg) : 0;
}

/* Page pg at level (1: the root) of a database of the given depth, its
 * keys within [lo, hi). */
static int check_page(struct walk *w, uint64_t pg, unsigned level, unsigned depth,
                      struct key lo, struct key hi, uint64_t from, struct count *cnt)
{
	if (take(w, pg, from))
		return -1;
	const uint8_t *p = w->map + pg * w->ps;
	uint16_t flags = fmt_lmdb_u16(p + FMT_LMDB_W + 2), lower = fmt_lmdb_u16(p + FMT_LMDB_W + 4),
	         upper = fmt_lmdb_u16(p + FMT_LMDB_W + 6);
	int leaf = (flags & (LP_LEAF | LP_BRANCH | LP_OVERFLOW | LP_OTHER)) == LP_LEAF;
	int branch = (flags & (LP_LEAF | LP_BRANCH | LP_OVERFLOW | LP_OTHER)) == LP_BRANCH;

	if (fmt_lmdb_word(p) != pg)
		return bad(w, pg, "page number does not match its place in the file");
	if (!leaf && !branch)
		return bad(w, pg, "neither a branch nor a leaf page");
	if (leaf != (level == depth))
		return bad(w, pg, "a page at a depth its database does not have");
	if (lower < FMT_LMDB_HDR || lower > upper || upper > w->ps || (lower - FMT_LMDB_HDR) % 2 ||
	    lower == FMT_LMDB_HDR)
		return bad(w, pg, "lower/upper bounds outside the page");
	unsigned n = (lower - (unsigned)FMT_LMDB_HDR) / 2;
	struct key prev = { NULL, 0 };
	uint64_t used = 0;

	if (leaf)
		cnt->leaf++;
	else
		cnt->branch++;
	/* Every node first: in the page, its key in order; then the children,
	 * each with the range its neighbours' keys give. */
	for (unsigned i = 0; i < n; i++) {
		uint64_t off = fmt_lmdb_u16(p + FMT_LMDB_HDR + 2 * i);
		if (off < upper || off + LN_NODESIZE > w->ps)
			return bad(w, pg, "a node outside the page");
		const uint8_t *node = p + off;
		struct key k = { node + LN_NODESIZE, fmt_lmdb_u16(node + 6) };
		if (off + LN_NODESIZE + k.n > w->ps)
			return bad(w, pg, "a key past the page");
		used += node_bytes(node, leaf);
		if ((leaf || i > 0) && !key_in(w, k, prev, lo, hi))
			return bad(w, pg, "keys out of order");
		if (leaf || i > 0)
			prev = k;
		if (leaf && check_leaf_node(w, node, off, pg, cnt))
			return -1;
	}
	/* LMDB keeps the nodes packed from upper to the page's end (a delete
	 * moves the others up): nodes that overlap, or a size changed, leave
	 * a sum other than the space. */
	if (used != (uint64_t)w->ps - upper)
		return bad(w, pg, "nodes do not fill the space between upper and the page end");
	for (unsigned i = 0; branch && i < n; i++) {
		const uint8_t *node = p + fmt_lmdb_u16(p + FMT_LMDB_HDR + 2 * i);
		uint64_t child = node_lohi(node);
		if (FMT_LMDB_W == 8)
			child |= (uint64_t)fmt_lmdb_u16(node + 4) << 32;
		struct key clo = lo, chi = hi;
		if (i > 0)
			clo = (struct key){ node + LN_NODESIZE, fmt_lmdb_u16(node + 6) };
		if (i + 1 < n) {
			const uint8_t *next = p + fmt_lmdb_u16(p + FMT_LMDB_HDR + 2 * (i + 1));
			chi = (struct key){ next + LN_NODESIZE, fmt_lmdb_u16(next + 6) };
		}
		if (check_page(w, child, level + 1, depth, clo, chi, pg, cnt))
			return -1;
	}
	return 0;
}

/* The database whose record is at rec (a meta's, or a main-database
 * leaf's), walked whole; its counts must be its record's.  is_main: the
 * main database, whose leaves are the named databases' records. */
static int check_db(struct walk *w, const uint8_t *rec, uint64_t from, int is_main)
{
	struct dbrec d;
	struct count cnt = { 0, 0, 0, 0 };
	int main = w->main;

	db_decode(rec, &d);
	if (d.root == L_INVALID) {
		if (d.depth || d.entries || d.branch || d.leaf || d.overflow)
			return bad(w, from, "an empty database record with pages or entries");
		return 0;
	}
	if (d.depth < 1 || d.depth > L_MAXDEPTH)
		return bad(w, from, "a database record of impossible depth");
	w->main = is_main;
	int rc = check_page(w, d.root, 1, d.depth, (struct key){ NULL, 0 }, (struct key){ NULL, 0 },
	                    from, &cnt);
	w->main = main;
	if (rc)
		return -1;
	if (cnt.branch != d.branch || cnt.leaf != d.leaf || cnt.overflow != d.overflow ||
	    cnt.entries != d.entries)
		return bad(w, d.root, "page or entry counts differ from the database record");
	return 0;
}

int fmt_lmdb_tree_meta(const uint8_t *map, uint64_t len, uint64_t txnid, fmt_lmdb_meta *m,
                       const uint8_t **meta)
{
	const char *why;

	if (len < FMT_LMDB_META_END || fmt_lmdb_meta_decode(map, len, m, &why) ||
	    !fmt_lmdb_psize_ok(m->psize))
		return -1;
	uint32_t ps = m->psize;
	for (int i = 0; i < 2; i++) {
		fmt_lmdb_meta mi;
		if ((uint64_t)ps * i + FMT_LMDB_META_END > len ||
		    fmt_lmdb_meta_decode(map + (uint64_t)ps * i, len - (uint64_t)ps * i, &mi, &why))
			continue;
		if (mi.txnid == txnid && mi.psize == ps && (mi.last_pg + 1) * ps <= len) {
			*m = mi;
			*meta = map + (uint64_t)ps * i;
			return 0;
		}
	}
	return -1;
}

int fmt_lmdb_check_tree(const uint8_t *map, uint32_t psize, uint64_t last_pg,
                        const uint8_t *meta, uint8_t *seen, fmt_lmdb_tree_report *rep)
{
	struct walk w = { map, psize, last_pg, seen, 0, 0, rep };

	rep->why = NULL;
	rep->page = 0;
	/* The main database first: the free list is then checked against
	 * every page the named databases use. */
	if (check_db(&w, meta + FMT_LMDB_OFF_DBS + FMT_LMDB_DB_SIZE, 0, 1))
		return -1;
	w.intkey = 1;
	return check_db(&w, meta + FMT_LMDB_OFF_DBS, 0, 0);
}
