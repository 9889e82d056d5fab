/* SPDX-License-Identifier: MIT */
/*
 * reader_symbolize_batch.c - symdb_symbolize(): one batch through the steps
 * reader_symbolize.c describes (groups, translation, sort, resolution in
 * chunks, demangling, results in input or resolution order, streaming).
 */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MADV_HUGEPAGE */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "reader_symbolize.h"

/* ---- the pipeline ------------------------------------------------------------ */

static const symdb_request *req_at(const symdb_request *reqs, size_t sz, size_t i)
{
	return (const symdb_request *)((const unsigned char *)reqs + i * sz);
}

static symdb_symbolized *res_at(symdb_symbolized *res, size_t sz, size_t i)
{
	return (symdb_symbolized *)((unsigned char *)res + i * sz);
}

static int all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* Grow every per-request array to n entries. */
static int reserve_arrays(symdb_symbolizer *s, size_t n)
{
	if (n <= s->arr_cap)
		return 0;
	size_t cap = s->arr_cap, c;
#define GROW_ONE(field)                                                        \
	do {                                                                   \
		c = s->arr_cap;                                                \
		if (rd_sym_grow(&s->field, &c, n, sizeof(*s->field)) < 0)             \
			return -ENOMEM;                                        \
		cap = c;                                                       \
	} while (0)
	GROW_ONE(gid);
	GROW_ONE(fail);
	GROW_ONE(ord);
	GROW_ONE(tmp);
	GROW_ONE(addrs);
	c = s->arr_cap;
	if (rd_sym_grow(&s->packed, &c, n, 2 * sizeof(*s->packed)) < 0)
		return -ENOMEM;
#undef GROW_ONE
	s->arr_cap = cap;
	return 0;
}

/* One call's arguments and progress. */
struct sym_call {
	const symdb_request *reqs;
	size_t n, req_sz;
	symdb_symbolized *results;
	size_t result_sz, frame_sz;
	unsigned flags;
	int ordered;   /* SYMDB_SYMBOLIZE_ORDER: results in resolution order */
	size_t want;   /* requests with SYMDB_REQ_DEMANGLE (assign_groups) */
	int dm;        /* every request demangles (1), none does (0), mixed (-1) */
	int late;      /* results written after everything (mixed, repacked) */
	size_t m;      /* requests whose image was found: ord[0..m) */
	size_t nfail;  /* the others: fail[0..nfail) */
	size_t done;   /* ord[0..done) have their results written */
	int all_vaddr; /* every request is a SYMDB_ADDR_VADDR: nothing to translate */
	int stream;    /* SYMDB_SYMBOLIZE_STREAM honoured: frames reused per chunk */
	size_t chunk_from; /* results NULL: the chunk buffer holds ord[chunk_from...] */
	void (*on_results)(void *arg, const symdb_symbolized *results, const uint32_t *order,
	                   size_t first, size_t count);
	void *on_results_arg;
};

/* Where the result of ord[k] goes. */
static symdb_symbolized *out_of(symdb_symbolizer *s, const struct sym_call *c, size_t k)
{
	if (!c->results) /* (streamed: always ordered) */
		return res_at((symdb_symbolized *)s->chunk_out, c->result_sz, k - c->chunk_from);
	return res_at(c->results, c->result_sz, c->ordered ? k : s->ord[k].idx);
}

/* Hand results [from, to) of the resolution order to on_results. */
static void deliver(symdb_symbolizer *s, const struct sym_call *c, size_t from, size_t to)
{
	if (c->on_results && to > from)
		c->on_results(c->on_results_arg, out_of(s, c, from), s->order + from, from,
		              to - from);
}

/* The handles a call has seen, direct-mapped by pointer, with their
 * groups: requests that interleave many images (a stream whose every line
 * names its module) change handle on nearly every request. */
#define SEEN_BITS 6

struct seen_handle {
	const symdb_image *img;
	uint32_t group;
};

static size_t seen_slot(const symdb_image *img)
{
	return (size_t)(((uint64_t)(uintptr_t)img * 0x9E3779B97F4A7C15ull) >> (64 - SEEN_BITS));
}

/* Whether rq names another image than prev does (pointers first). */
static int other_ref(const symdb_request *rq, const symdb_request *prev)
{
	if (rq->image_ref == prev->image_ref && rq->image.handle == prev->image.handle)
		return 0;
	return rq->image_ref == SYMDB_IMAGE_HANDLE || !rd_sym_same_ref(rq, prev);
}

/* Step 1: each request's group (or its failure, noted in fail[]). */
static int assign_groups(symdb_symbolizer *s, struct sym_call *c)
{
	const symdb_request *prev = NULL;
	const symdb_image *img = NULL;
	int status = 0, err = 0, rc;
	uint32_t g = UINT32_MAX;
	size_t k = 0, f = 0;
	unsigned kinds = 0;
	struct seen_handle seen[1u << SEEN_BITS];
	memset(seen, 0, sizeof seen);
	for (size_t i = 0; i < c->n; i++) {
		const symdb_request *rq = req_at(c->reqs, c->req_sz, i);
		if (rq->image_ref > SYMDB_IMAGE_HANDLE || rq->addr_kind > SYMDB_ADDR_RUNTIME ||
		    (rq->flags & ~SYMDB_REQ_DEMANGLE) || rq->reserved_ ||
		    (c->req_sz > sizeof(*rq) && !all_zero(rq + 1, c->req_sz - sizeof(*rq))))
			return SYMDB_E_INVAL;
		kinds |= 1u << rq->addr_kind;
		c->want += (rq->flags & SYMDB_REQ_DEMANGLE) != 0;
		if (!prev || other_ref(rq, prev)) {
			const symdb_image *h = rq->image.handle;
			struct seen_handle *sh = &seen[seen_slot(h)];
			prev = rq;
			if (rq->image_ref == SYMDB_IMAGE_HANDLE && h && sh->img == h) {
				img = h;
				g = sh->group;
			} else {
				if ((rc = rd_sym_find_image(s, rq, &img, &status, &err)) < 0)
					return rc;
				g = UINT32_MAX;
				if (img && (rc = rd_sym_group_of(s, img, &g)) < 0)
					return rc;
				if (rq->image_ref == SYMDB_IMAGE_HANDLE && img)
					*sh = (struct seen_handle){ img, g };
			}
		}
		s->gid[i] = g;
		if (!img) {
			s->fail[f++] = (struct sym_fail){ (uint32_t)i, status, err };
			continue;
		}
		s->ord[k].addr = rq->addr;
		s->ord[k].idx = (uint32_t)i;
		k++;
	}
	c->m = k;
	c->nfail = f;
	c->all_vaddr = kinds == 1u << SYMDB_ADDR_VADDR;
	return 0;
}

/* The results of requests whose image was not found: in input order, after
 * the others when ordered (and delivered, a chunk at a time). */
static void write_failures(symdb_symbolizer *s, struct sym_call *c)
{
	c->chunk_from = c->m;
	for (size_t f = 0; f < c->nfail; f++) {
		size_t at = c->ordered ? c->m + f : s->fail[f].idx;
		if (!c->results && at - c->chunk_from == RESOLVE_CHUNK) {
			deliver(s, c, c->chunk_from, at);
			c->chunk_from = at;
		}
		symdb_symbolized *r = c->results ? res_at(c->results, c->result_sz, at)
		                                 : res_at((symdb_symbolized *)s->chunk_out,
		                                          c->result_sz, at - c->chunk_from);
		memset(r, 0, c->result_sz);
		r->status = s->fail[f].status;
		r->error = s->fail[f].error;
		r->vaddr = SYMDB_ADDR_INVALID;
		if (c->ordered)
			s->order[at] = s->fail[f].idx;
	}
	if (c->ordered)
		deliver(s, c, c->results ? c->m : c->chunk_from, c->m + c->nfail);
}

/* Step 2a: put ord[0..m) in group order, stably. */
static int sort_by_group(symdb_symbolizer *s, size_t m)
{
	size_t ng = s->ngroups;
	if (rd_sym_grow(&s->gstart, &s->gstart_cap, ng + 1, sizeof(*s->gstart)) < 0)
		return -ENOMEM;
	memset(s->gstart, 0, (ng + 1) * sizeof(*s->gstart));
	for (size_t k = 0; k < m; k++)
		s->gstart[s->gid[s->ord[k].idx] + 1]++;
	for (size_t g = 1; g <= ng; g++)
		s->gstart[g] += s->gstart[g - 1];
	for (size_t k = 0; k < m; k++)
		s->tmp[s->gstart[s->gid[s->ord[k].idx]]++] = s->ord[k];
	struct rd_sort_ent *t = s->ord; /* (both arr_cap entries: swapped, not copied) */
	s->ord = s->tmp;
	s->tmp = t;
	return 0;
}

/* Step 2b: translate ord[from..to) of one image to vaddrs, in runs of one
 * (kind, load address). */
static int translate_group(symdb_symbolizer *s, const struct sym_call *c,
                           const symdb_image *img, size_t from, size_t to)
{
	for (size_t k = from; k < to;) {
		const symdb_request *rq = req_at(c->reqs, c->req_sz, s->ord[k].idx);
		size_t e = k + 1;
		if (rq->addr_kind == SYMDB_ADDR_VADDR) {
			while (e < to &&
			       req_at(c->reqs, c->req_sz, s->ord[e].idx)->addr_kind == SYMDB_ADDR_VADDR)
				e++;
			k = e;
			continue;
		}
		while (e < to) {
			const symdb_request *q = req_at(c->reqs, c->req_sz, s->ord[e].idx);
			if (q->addr_kind != rq->addr_kind || q->load_address != rq->load_address)
				break;
			e++;
		}
		for (size_t j = k; j < e; j++)
			s->addrs[j] = s->ord[j].addr;
		int rc = symdb_image_translate(img, rq->addr_kind, rq->load_address, s->addrs + k,
		                               s->addrs + k, e - k);
		if (rc < 0)
			return rc;
		for (size_t j = k; j < e; j++)
			s->ord[j].addr = s->addrs[j];
		k = e;
	}
	return 0;
}

/* A result from the library's: status, frames (at fbase + first * frame_sz). */
static inline __attribute__((always_inline)) void fill_result(symdb_symbolized *o,
                                                             const symdb_result *r,
                                                             uint64_t vaddr,
                                                             const unsigned char *fbase,
                                                             size_t frame_sz,
                                                             const symdb_image *img)
{
	int st = vaddr == SYMDB_ADDR_INVALID          ? SYMDB_SYM_OUT_OF_RANGE
	         : r->status == SYMDB_E_CORRUPT       ? SYMDB_SYM_DAMAGED
	         : r->count || r->sym_name            ? SYMDB_SYM_OK
	                                              : SYMDB_SYM_NO_SYMBOL;
	*o = (symdb_symbolized){
		.status = st,
		.error = st == SYMDB_SYM_OK ? 0 : r->status,
		.nframes = r->count,
		.frames = r->count ? (const symdb_frame *)(fbase + r->first * frame_sz) : NULL,
		.sym_name = r->sym_name,
		.sym_addr = r->sym_addr,
		.sym_size = r->sym_size,
		.vaddr = vaddr,
		.image = img,
	};
}

/* Write the result of ord[k] (its frames at fbase + r->first * frame_sz). */
static void write_one(symdb_symbolizer *s, const struct sym_call *c, size_t k,
                      const symdb_result *r, const unsigned char *fbase, const symdb_image *img)
{
	symdb_symbolized *o = out_of(s, c, k);
	if (c->result_sz > sizeof(*o))
		memset(o + 1, 0, c->result_sz - sizeof(*o));
	fill_result(o, r, s->addrs[k], fbase, c->frame_sz, img);
	if (c->ordered)
		s->order[k] = s->ord[k].idx;
}

/* Frames arrays of at least this many bytes are anonymous mappings asking
 * for transparent huge pages: a batch's frames are written once and read
 * once, and with 4 KiB pages faulting them in costs as much as writing them. */
#define FRAMES_MAP_MIN ((size_t)4 << 20)
#define FRAMES_MAP_ALIGN ((size_t)2 << 20)

static symdb_frame *frames_alloc(size_t cap, size_t *bytes)
{
	size_t b = cap * sizeof(symdb_frame);
	if (b < FRAMES_MAP_MIN) {
		*bytes = 0;
		return malloc(b);
	}
	b = (b + FRAMES_MAP_ALIGN - 1) & ~(FRAMES_MAP_ALIGN - 1);
	void *p = mmap(NULL, b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, b, MADV_HUGEPAGE); /* a hint: failure changes nothing */
#endif
	*bytes = b;
	return p;
}

void rd_sym_frames_free(symdb_frame *f, size_t bytes)
{
	if (bytes)
		munmap(f, bytes);
	else
		free(f);
}

/* Grow the frames array to hold need frames, keeping frames[0..used) and
 * the written results valid: a new array, the results' pointers moved to
 * it, then the old one freed. */
static int grow_frames(symdb_symbolizer *s, struct sym_call *c, size_t need, size_t used)
{
	if (need <= s->frames_cap)
		return 0;
	size_t cap = s->frames_cap ? s->frames_cap : 256;
	while (cap < need)
		cap *= 2;
	size_t bytes;
	symdb_frame *nf = frames_alloc(cap, &bytes);
	if (!nf)
		return -ENOMEM;
	if (used)
		memcpy(nf, s->frames, used * sizeof(*nf));
	for (size_t k = 0; c->results && k < c->done; k++) {
		symdb_symbolized *o = out_of(s, c, k);
		if (o->frames)
			o->frames = nf + (o->frames - s->frames);
	}
	rd_sym_frames_free(s->frames, s->frames_bytes);
	s->frames = nf;
	s->frames_cap = bytes ? bytes / sizeof(*nf) : cap;
	s->frames_bytes = bytes;
	return 0;
}

/* Only names starting with '_' or '?' can demangle (C names skip the call). */
static inline int may_demangle(const char *name)
{
	return name && (name[0] == '_' || name[0] == '?');
}

/* Demangle the names of frames[first, first + count) in place.  Sorted
 * addresses meet the same names in runs, and a C function's short name is
 * its name (the same string), so the last answer is kept at hand. */
static int demangle_frames(symdb_symbolizer *s, size_t first, size_t count)
{
	const char *last = NULL, *last_dm = NULL;
	for (size_t f = first; f < first + count; f++) {
		symdb_frame *fr = &s->frames[f];
		const char *name = fr->name;
		if (may_demangle(name)) {
			if (name != last) {
				last = name;
				if (!(last_dm = rd_names_demangle(&s->names, name)))
					return -ENOMEM;
			}
			fr->name = last_dm;
		}
		const char *sn = fr->short_name;
		if (may_demangle(sn)) {
			if (sn != last) {
				last = sn;
				if (!(last_dm = rd_names_demangle(&s->names, sn)))
					return -ENOMEM;
			}
			fr->short_name = last_dm;
		}
	}
	return 0;
}

/* When img's mapping faulted (reader_fault.c) during or before anything
 * read from it, names included: every result of res[0..n) damaged. */
static void check_damage(symdb_symbolizer *s, const symdb_image *img, symdb_result *res,
                         size_t n)
{
	if (!rd_image_damaged(img))
		return;
	for (size_t k = 0; k < n; k++)
		res[k] = (symdb_result){ .status = SYMDB_E_CORRUPT };
	s->saw_damage = 1;
}

/*
 * What a chunk just resolved (ord[from..to), frames [f0, f1)) gets while it
 * is in the cache: when every request wants the same, its names demangled
 * and its results written.
 */
static int finish_chunk(symdb_symbolizer *s, struct sym_call *c, const symdb_image *img,
                        symdb_result *res, size_t from, size_t to, size_t f0, size_t f1)
{
	if (c->late)
		return 0;
	if (c->dm == 1) {
		if (demangle_frames(s, f0, f1 - f0) < 0)
			return -ENOMEM;
		const char *last = NULL, *last_dm = NULL;
		for (size_t k = 0; k < to - from; k++) {
			const char *sym = res[k].sym_name;
			if (!may_demangle(sym))
				continue;
			if (sym != last) {
				last = sym;
				if (!(last_dm = rd_names_demangle(&s->names, sym)))
					return -ENOMEM;
			}
			res[k].sym_name = last_dm;
		}
	}
	check_damage(s, img, res, to - from);
	c->chunk_from = from;
	const unsigned char *fbase = (const unsigned char *)s->frames;
	if (c->ordered && c->result_sz == sizeof(symdb_symbolized)) {
		/* The common case: results side by side, in this order. */
		symdb_symbolized *o = out_of(s, c, from);
		for (size_t k = from; k < to; k++) {
			fill_result(&o[k - from], &res[k - from], s->addrs[k], fbase,
			            sizeof(symdb_frame), img);
			s->order[k] = s->ord[k].idx;
		}
	} else {
		for (size_t k = from; k < to; k++)
			write_one(s, c, k, &res[k - from], fbase, img);
	}
	c->done = to;
	deliver(s, c, from, to);
	if (c->stream && c->results) /* the chunk's frames are about to be reused */
		for (size_t k = from; k < to; k++)
			out_of(s, c, k)->frames = NULL;
	return 0;
}


/* Step 3: resolve addrs[from..to), sorted, of one image; frames go after
 * *used, and every result's first is made absolute. */
static int resolve_sorted(symdb_symbolizer *s, struct sym_call *c, const symdb_image *img,
                          size_t from, size_t to, size_t *used)
{
	size_t done = from;
	while (done < to) {
		if (s->frames_cap - *used < 256 && grow_frames(s, c, *used + 256, *used) < 0)
			return -ENOMEM;
		size_t n = to - done < RESOLVE_CHUNK ? to - done : RESOLVE_CHUNK;
		/* Results go where they stay (late), else to a chunk buffer:
		 * they are written out as soon as the chunk is done. */
		symdb_result *res = c->late ? s->res + done : s->cres;
		ptrdiff_t r = symdb_resolve_batch(img, s->addrs + done, n, s->frames + *used,
		                                  s->frames_cap - *used, sizeof(symdb_frame), res,
		                                  sizeof(symdb_result));
		if (r == 0 || r == SYMDB_E_INVAL) {
			/* Not even one address fits: more frames, unless the
			 * array is already absurdly large. */
			if (s->frames_cap - *used > ((size_t)1 << 24))
				return r ? (int)r : SYMDB_E_CORRUPT;
			if (grow_frames(s, c, s->frames_cap * 2, *used) < 0)
				return -ENOMEM;
			continue;
		}
		if (r < 0)
			return (int)r;
		size_t f0 = *used, end = *used;
		for (size_t k = 0; k < (size_t)r; k++) {
			res[k].first += (uint32_t)*used;
			if (res[k].first + res[k].count > end)
				end = res[k].first + res[k].count;
		}
		*used = end;
		int rc = finish_chunk(s, c, img, res, done, done + (size_t)r, f0, end);
		if (rc < 0)
			return rc;
		if (c->stream)
			*used = 0;
		done += (size_t)r;
		if (done < to && (size_t)r < n && grow_frames(s, c, s->frames_cap * 2, *used) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Steps 2 and 3 for every group. */
static int resolve_groups(symdb_symbolizer *s, struct sym_call *c, size_t *used)
{
	int rc;
	size_t m = c->m;
	if (s->ngroups > 1 && (rc = sort_by_group(s, m)) < 0)
		return rc;
	for (size_t from = 0; from < m;) {
		/* sort_by_group left gstart[g] at the end of group g */
		uint32_t g = s->gid[s->ord[from].idx];
		size_t to = s->ngroups == 1 ? m : s->gstart[g];
		const symdb_image *img = s->group_img[g];
		if (!c->all_vaddr && (rc = translate_group(s, c, img, from, to)) < 0)
			return rc;
		rd_sort_by_addr(s->ord + from, s->tmp, s->packed, to - from);
		for (size_t k = from; k < to; k++)
			s->addrs[k] = s->ord[k].addr;
		if ((rc = resolve_sorted(s, c, img, from, to, used)) < 0)
			return rc;
		from = to;
	}
	return 0;
}

static int want_demangle(const struct sym_call *c, uint32_t idx)
{
	return (c->flags & SYMDB_SYMBOLIZE_DEMANGLE) ||
	       (req_at(c->reqs, c->req_sz, idx)->flags & SYMDB_REQ_DEMANGLE);
}

/*
 * Step 4, when requests disagree about demangling.  Results may share
 * frames (symdb_resolve_batch gives an equal hit a copy of the result
 * before it, also across results with nothing found in between), so frames
 * are never demangled in place here: each range a demangling request uses
 * is copied once (dm_copy: frame index -> its copy) and the copy demangled.
 */
static int demangle_mixed(symdb_symbolizer *s, struct sym_call *c, size_t *used)
{
	size_t raw = *used, cap = s->dm_copy_cap;
	if (rd_sym_grow(&s->dm_copy, &cap, raw ? raw : 1, sizeof(*s->dm_copy)) < 0)
		return -ENOMEM;
	s->dm_copy_cap = cap;
	memset(s->dm_copy, 0xff, raw * sizeof(*s->dm_copy));
	for (size_t k = 0; k < c->m; k++) {
		symdb_result *r = &s->res[k];
		if (!want_demangle(c, s->ord[k].idx))
			continue;
		if (r->sym_name && !(r->sym_name = rd_names_demangle(&s->names, r->sym_name)))
			return -ENOMEM;
		if (!r->count)
			continue;
		if (s->dm_copy[r->first] != UINT32_MAX && r->first + r->count <= raw) {
			/* The same range copied before (equal results share all of
			 * it: same first, same count). */
			r->first = s->dm_copy[r->first];
			continue;
		}
		uint32_t first = r->first, count = r->count;
		if (grow_frames(s, c, *used + count, *used) < 0)
			return -ENOMEM;
		memcpy(s->frames + *used, s->frames + first, count * sizeof(*s->frames));
		if (demangle_frames(s, *used, count) < 0)
			return -ENOMEM;
		s->dm_copy[first] = (uint32_t)*used;
		r->first = (uint32_t)*used;
		*used += count;
	}
	return 0;
}

/* The frames as the caller sees them: ours, or a copy at its frame_sz. */
static int repack_frames(symdb_symbolizer *s, size_t used, size_t frame_sz)
{
	if (frame_sz == sizeof(symdb_frame))
		return 0;
	if (rd_sym_grow(&s->out_frames, &s->out_frames_cap, used * frame_sz, 1) < 0)
		return -ENOMEM;
	for (size_t f = 0; f < used; f++) {
		unsigned char *d = s->out_frames + f * frame_sz;
		memcpy(d, &s->frames[f], sizeof(symdb_frame));
		memset(d + sizeof(symdb_frame), 0, frame_sz - sizeof(symdb_frame));
	}
	return 0;
}

/* Read the options; fills c's sizes and flags. */
static int read_opts(const symdb_symbolize_opts *opts, struct sym_call *c, char **eb,
                     size_t *ebsz)
{
	int rc = rd_opts_prefix(opts, RD_OPTS_END(symdb_symbolize_opts),
	                        SYMDB_SYMBOLIZE_DEMANGLE | SYMDB_SYMBOLIZE_ORDER |
	                                SYMDB_SYMBOLIZE_STREAM,
	                        &c->flags, eb, ebsz);
	if (rc)
		return rc;
	c->req_sz = sizeof(symdb_request);
	c->result_sz = sizeof(symdb_symbolized);
	c->frame_sz = sizeof(symdb_frame);
	if (opts) {
		/* Fields past the common head, when the caller's struct has them. */
#define HAS(f) (opts->sz >= offsetof(symdb_symbolize_opts, f) + sizeof(opts->f))
		if (HAS(req_sz) && opts->req_sz)
			c->req_sz = opts->req_sz;
		if (HAS(result_sz) && opts->result_sz)
			c->result_sz = opts->result_sz;
		if (HAS(frame_sz) && opts->frame_sz)
			c->frame_sz = opts->frame_sz;
		if (HAS(on_results_arg) && (c->flags & SYMDB_SYMBOLIZE_ORDER)) {
			c->on_results = opts->on_results;
			c->on_results_arg = opts->on_results_arg;
		}
#undef HAS
		if (opts->sz > sizeof(*opts) && !all_zero(opts + 1, opts->sz - sizeof(*opts)))
			return fmt_err(*eb, *ebsz, SYMDB_E_INVAL,
			               "symdb_symbolize: unknown non-zero option fields");
	}
	if (c->req_sz < sizeof(symdb_request) || c->result_sz < sizeof(symdb_symbolized) ||
	    c->frame_sz < sizeof(symdb_frame) || c->req_sz % 8 || c->result_sz % 8 ||
	    c->frame_sz % 8)
		return fmt_err(*eb, *ebsz, SYMDB_E_INVAL,
		               "symdb_symbolize: element sizes %zu/%zu/%zu unsupported", c->req_sz,
		               c->result_sz, c->frame_sz);
	return 0;
}

int symdb_symbolize(symdb_symbolizer *s, const symdb_request *reqs, size_t n,
                    symdb_symbolized *results, const symdb_symbolize_opts *opts)
{
	char *eb;
	size_t ebsz;
	struct sym_call c = { .reqs = reqs, .n = n, .results = results };
	int rc = read_opts(opts, &c, &eb, &ebsz);
	if (rc)
		return rc;
	if (!s || (n && (!reqs || (!results && !c.on_results))) || n > UINT32_MAX)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "symdb_symbolize: NULL argument or batch too big");
	c.ordered = (c.flags & SYMDB_SYMBOLIZE_ORDER) != 0;
	if ((c.flags & SYMDB_SYMBOLIZE_STREAM) && !c.on_results)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL,
		               "symdb_symbolize: SYMDB_SYMBOLIZE_STREAM needs ORDER and on_results");
	if (s->saw_damage)
		rd_sym_drop_damaged(s);
	s->call++;
	s->ngroups = 0;
	s->norder = 0;
	rd_names_begin(&s->names);
	size_t used = 0;
	if ((rc = reserve_arrays(s, n)) < 0)
		goto fail;
	if ((rc = assign_groups(s, &c)) < 0) {
		if (rc == SYMDB_E_INVAL)
			return fmt_err(eb, ebsz, rc, "symdb_symbolize: a request has unknown fields set");
		goto fail;
	}
	/* (assign_groups counted the requests that ask for demangling) */
	c.dm = (c.flags & SYMDB_SYMBOLIZE_DEMANGLE) ? 1 : c.want == 0 ? 0 : c.want == n ? 1 : -1;
	c.late = c.dm < 0 || c.frame_sz != sizeof(symdb_frame);
	c.stream = (c.flags & SYMDB_SYMBOLIZE_STREAM) && !c.late;
	if (c.ordered && (rc = rd_sym_grow(&s->order, &s->order_cap, n, sizeof(*s->order))) < 0)
		goto fail;
	if (c.late && (rc = rd_sym_grow(&s->res, &s->res_cap, n, sizeof(*s->res))) < 0)
		goto fail;
	if (!results && (rc = rd_sym_grow(&s->chunk_out, &s->chunk_out_cap, RESOLVE_CHUNK * c.result_sz,
	                           1)) < 0)
		goto fail;
	if ((rc = resolve_groups(s, &c, &used)) < 0)
		goto fail;
	if (c.late) {
		if ((c.dm < 0 && (rc = demangle_mixed(s, &c, &used)) < 0) ||
		    (rc = repack_frames(s, used, c.frame_sz)) < 0)
			goto fail;
		const unsigned char *fbase = c.frame_sz == sizeof(symdb_frame)
		                                     ? (const unsigned char *)s->frames
		                                     : s->out_frames;
		for (size_t k0 = 0; k0 < c.m; k0 += RESOLVE_CHUNK) {
			size_t k1 = c.m - k0 < RESOLVE_CHUNK ? c.m : k0 + RESOLVE_CHUNK;
			c.chunk_from = k0;
			for (size_t k = k0; k < k1; k++) {
				const symdb_image *img = s->group_img[s->gid[s->ord[k].idx]];
				check_damage(s, img, &s->res[k], 1);
				write_one(s, &c, k, &s->res[k], fbase, img);
			}
			if (!c.results)
				deliver(s, &c, k0, k1);
		}
		if (c.results)
			deliver(s, &c, 0, c.m);
	}
	write_failures(s, &c);
	if (c.ordered)
		s->norder = n;
	return 0;
fail:
	return fmt_err(eb, ebsz, rc, "symdb_symbolize: %s", symdb_strerror(rc));
}

const uint32_t *symdb_symbolizer_order(const symdb_symbolizer *s, size_t *n)
{
	*n = s && s->norder ? s->norder : 0;
	return *n ? s->order : NULL;
}
