/* SPDX-License-Identifier: MIT */
/*
 * reader_symbolize.c - symdb_symbolize(): the query pipeline as one call.
 *
 * A batch of requests, in any order and over any number of images, goes
 * through these steps, each over arrays the context keeps from call to call:
 *   1. each request's image is found (a context table by UUID, a path table
 *      by file identity, the caller's handle as it is) and numbered within
 *      the call: its group;
 *   2. the requests are put in group order (a stable counting sort), their
 *      addresses translated to virtual addresses and sorted (radix, ties in
 *      input order: reader_symbolize_sort.c);
 *   3. each group is resolved with symdb_resolve_batch(), growing the frames
 *      array whenever it runs out;
 *   4. names are demangled where asked (reader_symbolize_names.c: once per
 *      name per context), and each result written at its request's index.
 * Results whose frames are shared (equal addresses: symdb.h) share them in
 * the output too.
 */
#define _GNU_SOURCE /* struct stat's st_mtim */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reader_symbolize.h"

/* An image the context found for a UUID: open, or why not. */
struct sym_image {
	symdb_uuid id;
	symdb_image *img;  /* NULL when it could not be opened */
	int status, error; /* when img is NULL: SYMDB_SYM_* and the code */
	uint64_t call;     /* the call that failed to open it (retried after) */
};

/* A file identity (stat) and the image of that file. */
struct sym_path {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_s, mtime_ns;
	int64_t image;     /* into images, or -1 with error set */
	int error;
};

/* Within one call: an image and its group number (valid when call matches). */
struct sym_group_slot {
	const symdb_image *img;
	uint64_t call;
	uint32_t group;
};

/* An open-addressing table of indices + 1 (0 = empty); power-of-two size. */
struct sym_index {
	uint32_t *slot;
	size_t cap, used;
};

struct symdb_symbolizer {
	symdb *db;
	unsigned open_flags;
	uint64_t call;                  /* counts calls, from 1 */

	struct sym_image *images;       /* by UUID: open images and failures */
	size_t nimages, images_cap;
	struct sym_index by_uuid;
	struct sym_path *paths;         /* by file identity */
	size_t npaths, paths_cap;
	struct sym_index by_path;
	struct sym_group_slot *groups;  /* by image pointer, within a call */
	size_t groups_cap, ngroups;
	const symdb_image **group_img;  /* group -> image */
	size_t group_img_cap;

	/* per-call arrays: arr_cap entries each (packed twice that) */
	uint32_t *gid;                  /* request -> group, or UINT32_MAX when failed */
	struct rd_sort_ent *ord, *tmp;
	uint64_t *packed, *addrs;
	symdb_result *res;              /* by sorted position */
	size_t arr_cap;
	size_t *gstart;                 /* groups + 1 counters */
	size_t gstart_cap;
	uint32_t *order;                /* SYMDB_SYMBOLIZE_ORDER: ord's indices */
	size_t order_cap, norder;
	symdb_frame *frames;            /* everything the library wrote */
	size_t frames_cap;
	unsigned char *out_frames;      /* frames repacked for a caller's frame_sz */
	size_t out_frames_cap;
	struct rd_names names;
};

/* ---- small helpers ------------------------------------------------------ */

/* Grow *p (of *cap elements of elem bytes) to hold need; 0 or -ENOMEM. */
static int grow(void *pp, size_t *cap, size_t need, size_t elem)
{
	void **p = pp;
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *np = realloc(*p, n * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = n;
	return 0;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static uint64_t uuid_hash(const symdb_uuid *id)
{
	uint64_t h = id->len;
	for (unsigned i = 0; i < id->len; i++)
		h = h * 0x100000001b3ull ^ id->bytes[i];
	return mix64(h);
}

static int uuid_eq(const symdb_uuid *a, const symdb_uuid *b)
{
	return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

/* Make room for one more entry in an index table (rehashing via hash_of). */
static int index_reserve(struct sym_index *t, const void *ctx,
                         uint64_t (*hash_of)(const void *ctx, uint32_t i))
{
	if (t->used + 1 <= t->cap / 2)
		return 0;
	size_t cap = t->cap ? 2 * t->cap : 64;
	uint32_t *ns = calloc(cap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t k = 0; k < t->cap; k++) {
		if (!t->slot[k])
			continue;
		size_t h = (size_t)hash_of(ctx, t->slot[k] - 1) & (cap - 1);
		while (ns[h])
			h = (h + 1) & (cap - 1);
		ns[h] = t->slot[k];
	}
	free(t->slot);
	t->slot = ns;
	t->cap = cap;
	return 0;
}

static uint64_t image_hash_of(const void *ctx, uint32_t i)
{
	return uuid_hash(&((const symdb_symbolizer *)ctx)->images[i].id);
}

static uint64_t path_key_hash(const struct sym_path *p)
{
	return mix64((uint64_t)p->dev * 31 + (uint64_t)p->ino) ^
	       mix64((uint64_t)p->size ^ (uint64_t)p->mtime_s * 1000000007ull ^
	             (uint64_t)p->mtime_ns);
}

static uint64_t path_hash_of(const void *ctx, uint32_t i)
{
	return path_key_hash(&((const symdb_symbolizer *)ctx)->paths[i]);
}

/* ---- context ------------------------------------------------------------- */

int symdb_symbolizer_create(symdb *db, const symdb_symbolizer_opts *opts, symdb_symbolizer **out)
{
	unsigned flags;
	char *eb;
	size_t ebsz;
	int rc = rd_opts((const symdb_open_opts *)opts,
	                 SYMDB_OPEN_VERIFY_CHECKSUMS | SYMDB_OPEN_NO_THAW, &flags, &eb, &ebsz);
	if (rc)
		return rc;
	if (!db || !out)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "symdb_symbolizer_create: NULL argument");
	symdb_symbolizer *s = calloc(1, sizeof(*s));
	if (!s)
		return fmt_err(eb, ebsz, -ENOMEM, "symdb_symbolizer_create: out of memory");
	s->db = db;
	s->open_flags = flags;
	*out = s;
	return 0;
}

void symdb_symbolizer_free(symdb_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nimages; i++)
		symdb_image_close(s->images[i].img);
	free(s->images);
	free(s->by_uuid.slot);
	free(s->paths);
	free(s->by_path.slot);
	free(s->groups);
	free(s->group_img);
	free(s->gid);
	free(s->ord);
	free(s->tmp);
	free(s->packed);
	free(s->addrs);
	free(s->res);
	free(s->order);
	free(s->gstart);
	free(s->frames);
	free(s->out_frames);
	rd_names_fini(&s->names);
	free(s);
}

/* ---- finding images -------------------------------------------------------- */

/* Status of a failed open. */
static int open_status(int rc)
{
	return rc == SYMDB_E_NOT_INDEXED ? SYMDB_SYM_NOT_INDEXED : SYMDB_SYM_DAMAGED;
}

/* The context's entry for id, opened on first use; -ENOMEM. */
static int64_t image_by_uuid(symdb_symbolizer *s, const symdb_uuid *id)
{
	size_t h = 0;
	if (s->by_uuid.cap) {
		for (h = (size_t)uuid_hash(id) & (s->by_uuid.cap - 1); s->by_uuid.slot[h];
		     h = (h + 1) & (s->by_uuid.cap - 1)) {
			struct sym_image *e = &s->images[s->by_uuid.slot[h] - 1];
			if (!uuid_eq(&e->id, id))
				continue;
			if (!e->img && e->call != s->call) {
				/* Failed in an earlier call: try again (indexed since?). */
				SYMDB_OPTS(symdb_open_opts, o, .flags = s->open_flags);
				int rc = symdb_image_open_uuid(s->db, id, &o, &e->img);
				e->status = rc ? open_status(rc) : SYMDB_SYM_OK;
				e->error = rc;
				e->call = s->call;
				if (rc)
					e->img = NULL;
			}
			return (int64_t)(s->by_uuid.slot[h] - 1);
		}
	}
	if (grow(&s->images, &s->images_cap, s->nimages + 1, sizeof(*s->images)) < 0 ||
	    index_reserve(&s->by_uuid, s, image_hash_of) < 0)
		return -ENOMEM;
	struct sym_image *e = &s->images[s->nimages];
	memset(e, 0, sizeof(*e));
	e->id = *id;
	SYMDB_OPTS(symdb_open_opts, o, .flags = s->open_flags);
	int rc = symdb_image_open_uuid(s->db, id, &o, &e->img);
	if (rc) {
		e->img = NULL;
		e->status = open_status(rc);
		e->error = rc;
		e->call = s->call;
	}
	for (h = (size_t)uuid_hash(id) & (s->by_uuid.cap - 1); s->by_uuid.slot[h];
	     h = (h + 1) & (s->by_uuid.cap - 1))
		;
	s->by_uuid.slot[h] = (uint32_t)++s->nimages;
	return (int64_t)(s->nimages - 1);
}

/* The image entry of a binary, by its file identity; -1 with *err when the
 * file cannot be identified, -ENOMEM-as-(-2). */
static int64_t image_by_path(symdb_symbolizer *s, const char *path, int *err)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		*err = -errno;
		return -1;
	}
	struct sym_path key = { .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
		                .mtime_s = (int64_t)st.st_mtim.tv_sec,
		                .mtime_ns = (int64_t)st.st_mtim.tv_nsec };
	size_t h;
	if (s->by_path.cap) {
		for (h = (size_t)path_key_hash(&key) & (s->by_path.cap - 1); s->by_path.slot[h];
		     h = (h + 1) & (s->by_path.cap - 1)) {
			const struct sym_path *p = &s->paths[s->by_path.slot[h] - 1];
			if (p->dev == key.dev && p->ino == key.ino && p->size == key.size &&
			    p->mtime_s == key.mtime_s && p->mtime_ns == key.mtime_ns) {
				*err = p->error;
				return p->image;
			}
		}
	}
	symdb_uuid id;
	int rc = symdb_file_uuid(path, NULL, &id);
	key.image = -1;
	key.error = rc;
	if (rc == 0 && (key.image = image_by_uuid(s, &id)) < 0)
		return -2;
	if (grow(&s->paths, &s->paths_cap, s->npaths + 1, sizeof(*s->paths)) < 0 ||
	    index_reserve(&s->by_path, s, path_hash_of) < 0)
		return -2;
	s->paths[s->npaths] = key;
	for (h = (size_t)path_key_hash(&key) & (s->by_path.cap - 1); s->by_path.slot[h];
	     h = (h + 1) & (s->by_path.cap - 1))
		;
	s->by_path.slot[h] = (uint32_t)++s->npaths;
	*err = rc;
	return key.image;
}

/* How a request names its image, for comparing with the previous one. */
static int same_ref(const symdb_request *a, const symdb_request *b)
{
	if (a->image_ref != b->image_ref)
		return 0;
	switch (a->image_ref) {
	case SYMDB_IMAGE_UUID:
		return a->image.uuid == b->image.uuid || uuid_eq(a->image.uuid, b->image.uuid);
	case SYMDB_IMAGE_HEX:
		return a->image.hex == b->image.hex || strcmp(a->image.hex, b->image.hex) == 0;
	case SYMDB_IMAGE_PATH:
		return a->image.path == b->image.path || strcmp(a->image.path, b->image.path) == 0;
	default:
		return a->image.handle == b->image.handle;
	}
}

/* The image a request names, or NULL with *status and *err. */
static int find_image(symdb_symbolizer *s, const symdb_request *rq, const symdb_image **img,
                      int *status, int *err)
{
	int64_t e;
	symdb_uuid id;
	*img = NULL;
	*err = 0;
	switch (rq->image_ref) {
	case SYMDB_IMAGE_HANDLE:
		*img = rq->image.handle;
		*status = *img ? SYMDB_SYM_OK : SYMDB_SYM_NO_IMAGE;
		*err = *img ? 0 : SYMDB_E_INVAL;
		return 0;
	case SYMDB_IMAGE_UUID:
		if (!rq->image.uuid || rq->image.uuid->len < 1 ||
		    rq->image.uuid->len > SYMDB_UUID_MAX) {
			*status = SYMDB_SYM_NO_IMAGE;
			*err = SYMDB_E_INVAL;
			return 0;
		}
		e = image_by_uuid(s, rq->image.uuid);
		break;
	case SYMDB_IMAGE_HEX:
		if (!rq->image.hex || symdb_uuid_parse(rq->image.hex, &id) < 0) {
			*status = SYMDB_SYM_NO_IMAGE;
			*err = SYMDB_E_INVAL;
			return 0;
		}
		e = image_by_uuid(s, &id);
		break;
	default: /* SYMDB_IMAGE_PATH */
		if (!rq->image.path) {
			*status = SYMDB_SYM_NO_IMAGE;
			*err = SYMDB_E_INVAL;
			return 0;
		}
		e = image_by_path(s, rq->image.path, err);
		if (e == -1) {
			*status = SYMDB_SYM_NO_IMAGE;
			return 0;
		}
		break;
	}
	if (e < 0)
		return -ENOMEM;
	const struct sym_image *im = &s->images[e];
	*img = im->img;
	*status = im->img ? SYMDB_SYM_OK : im->status;
	*err = im->img ? 0 : im->error;
	return 0;
}

/* The group of img within this call, numbered from 0 in order of first use. */
static int group_of(symdb_symbolizer *s, const symdb_image *img, uint32_t *out)
{
	if (s->ngroups + 1 > s->groups_cap / 2) {
		size_t cap = s->groups_cap ? 2 * s->groups_cap : 64;
		struct sym_group_slot *ng = calloc(cap, sizeof(*ng));
		if (!ng || grow(&s->group_img, &s->group_img_cap, cap, sizeof(*s->group_img)) < 0) {
			free(ng);
			return -ENOMEM;
		}
		for (size_t g = 0; g < s->ngroups; g++) {
			size_t h = (size_t)mix64((uintptr_t)s->group_img[g]) & (cap - 1);
			while (ng[h].call == s->call)
				h = (h + 1) & (cap - 1);
			ng[h] = (struct sym_group_slot){ s->group_img[g], s->call, (uint32_t)g };
		}
		free(s->groups);
		s->groups = ng;
		s->groups_cap = cap;
	}
	size_t h = (size_t)mix64((uintptr_t)img) & (s->groups_cap - 1);
	for (; s->groups[h].call == s->call; h = (h + 1) & (s->groups_cap - 1)) {
		if (s->groups[h].img == img) {
			*out = s->groups[h].group;
			return 0;
		}
	}
	s->groups[h] = (struct sym_group_slot){ img, s->call, (uint32_t)s->ngroups };
	s->group_img[s->ngroups] = img;
	*out = (uint32_t)s->ngroups++;
	return 0;
}

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

/* Validate requests: known refs, kinds and flags, zero reserved bytes. */
static int check_requests(const symdb_request *reqs, size_t n, size_t req_sz)
{
	for (size_t i = 0; i < n; i++) {
		const symdb_request *rq = req_at(reqs, req_sz, i);
		if (rq->image_ref > SYMDB_IMAGE_HANDLE || rq->addr_kind > SYMDB_ADDR_RUNTIME ||
		    (rq->flags & ~SYMDB_REQ_DEMANGLE) || rq->reserved_)
			return SYMDB_E_INVAL;
		if (req_sz > sizeof(*rq) && !all_zero(rq + 1, req_sz - sizeof(*rq)))
			return SYMDB_E_INVAL;
	}
	return 0;
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
		if (grow(&s->field, &c, n, sizeof(*s->field)) < 0)             \
			return -ENOMEM;                                        \
		cap = c;                                                       \
	} while (0)
	GROW_ONE(gid);
	GROW_ONE(ord);
	GROW_ONE(tmp);
	GROW_ONE(addrs);
	GROW_ONE(res);
	c = s->arr_cap;
	if (grow(&s->packed, &c, n, 2 * sizeof(*s->packed)) < 0)
		return -ENOMEM;
#undef GROW_ONE
	s->arr_cap = cap;
	return 0;
}

/* Step 1: each request's group (or its failure, written to its result). */
static int assign_groups(symdb_symbolizer *s, const symdb_request *reqs, size_t n,
                         size_t req_sz, symdb_symbolized *results, size_t result_sz,
                         size_t *m)
{
	const symdb_request *prev = NULL;
	const symdb_image *img = NULL;
	int status = 0, err = 0, rc;
	uint32_t g = UINT32_MAX;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const symdb_request *rq = req_at(reqs, req_sz, i);
		if (!prev || !same_ref(rq, prev)) {
			if ((rc = find_image(s, rq, &img, &status, &err)) < 0)
				return rc;
			g = UINT32_MAX;
			if (img && (rc = group_of(s, img, &g)) < 0)
				return rc;
			prev = rq;
		}
		s->gid[i] = g;
		if (!img) {
			symdb_symbolized *r = res_at(results, result_sz, i);
			memset(r, 0, result_sz);
			r->status = status;
			r->error = err;
			r->vaddr = SYMDB_ADDR_INVALID;
			continue;
		}
		s->ord[k].addr = rq->addr;
		s->ord[k].idx = (uint32_t)i;
		k++;
	}
	*m = k;
	return 0;
}

/* Step 2a: put ord[0..m) in group order, stably. */
static int sort_by_group(symdb_symbolizer *s, size_t m)
{
	size_t ng = s->ngroups;
	if (grow(&s->gstart, &s->gstart_cap, ng + 1, sizeof(*s->gstart)) < 0)
		return -ENOMEM;
	memset(s->gstart, 0, (ng + 1) * sizeof(*s->gstart));
	for (size_t k = 0; k < m; k++)
		s->gstart[s->gid[s->ord[k].idx] + 1]++;
	for (size_t g = 1; g <= ng; g++)
		s->gstart[g] += s->gstart[g - 1];
	for (size_t k = 0; k < m; k++)
		s->tmp[s->gstart[s->gid[s->ord[k].idx]]++] = s->ord[k];
	memcpy(s->ord, s->tmp, m * sizeof(*s->ord));
	return 0;
}

/* Step 2b: translate ord[from..to) of one image to vaddrs, in runs of one
 * (kind, load address). */
static int translate_group(symdb_symbolizer *s, const symdb_image *img, const symdb_request *reqs,
                           size_t req_sz, size_t from, size_t to)
{
	for (size_t k = from; k < to;) {
		const symdb_request *rq = req_at(reqs, req_sz, s->ord[k].idx);
		size_t e = k + 1;
		if (rq->addr_kind == SYMDB_ADDR_VADDR) {
			while (e < to && req_at(reqs, req_sz, s->ord[e].idx)->addr_kind == SYMDB_ADDR_VADDR)
				e++;
			k = e;
			continue;
		}
		while (e < to) {
			const symdb_request *q = req_at(reqs, req_sz, s->ord[e].idx);
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

/* Step 3: resolve addrs[from..to), sorted, of one image; frames go after
 * *used, and every result's first is made absolute. */
static int resolve_sorted(symdb_symbolizer *s, const symdb_image *img, size_t from, size_t to,
                          size_t *used)
{
	size_t done = from;
	while (done < to) {
		if (s->frames_cap - *used < 64 &&
		    grow(&s->frames, &s->frames_cap, s->frames_cap + 64, sizeof(*s->frames)) < 0)
			return -ENOMEM;
		ptrdiff_t r = symdb_resolve_batch(img, s->addrs + done, to - done, s->frames + *used,
		                                  s->frames_cap - *used, s->res + done);
		if (r == 0 || r == SYMDB_E_INVAL) {
			/* Not even one address fits: more frames, unless the
			 * array is already absurdly large. */
			if (s->frames_cap - *used > ((size_t)1 << 24))
				return r ? (int)r : SYMDB_E_CORRUPT;
			if (grow(&s->frames, &s->frames_cap, s->frames_cap * 2, sizeof(*s->frames)) < 0)
				return -ENOMEM;
			continue;
		}
		if (r < 0)
			return (int)r;
		size_t end = *used;
		for (size_t k = done; k < done + (size_t)r; k++) {
			s->res[k].first += (uint32_t)*used;
			if (s->res[k].first + s->res[k].count > end)
				end = s->res[k].first + s->res[k].count;
		}
		*used = end;
		done += (size_t)r;
		if (done < to &&
		    grow(&s->frames, &s->frames_cap, s->frames_cap * 2, sizeof(*s->frames)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Steps 2 and 3 for every group. */
static int resolve_groups(symdb_symbolizer *s, const symdb_request *reqs, size_t req_sz,
                          size_t m, size_t *used)
{
	int rc;
	if (s->ngroups > 1 && (rc = sort_by_group(s, m)) < 0)
		return rc;
	for (size_t from = 0; from < m;) {
		uint32_t g = s->gid[s->ord[from].idx];
		size_t to = from + 1;
		if (s->ngroups == 1)
			to = m;
		else
			while (to < m && s->gid[s->ord[to].idx] == g)
				to++;
		const symdb_image *img = s->group_img[g];
		if ((rc = translate_group(s, img, reqs, req_sz, from, to)) < 0)
			return rc;
		rd_sort_by_addr(s->ord + from, s->tmp, s->packed, to - from);
		for (size_t k = from; k < to; k++)
			s->addrs[k] = s->ord[k].addr;
		if ((rc = resolve_sorted(s, img, from, to, used)) < 0)
			return rc;
		from = to;
	}
	return 0;
}

static int want_demangle(const symdb_request *reqs, size_t req_sz, uint32_t idx, unsigned flags)
{
	return (flags & SYMDB_SYMBOLIZE_DEMANGLE) ||
	       (req_at(reqs, req_sz, idx)->flags & SYMDB_REQ_DEMANGLE);
}

/* Demangle the names of frames[first, first + count) in place. */
static int demangle_frames(symdb_symbolizer *s, size_t first, size_t count)
{
	for (size_t f = first; f < first + count; f++) {
		symdb_frame *fr = &s->frames[f];
		if (fr->name && !(fr->name = rd_names_demangle(&s->names, fr->name)))
			return -ENOMEM;
		if (fr->short_name &&
		    !(fr->short_name = rd_names_demangle(&s->names, fr->short_name)))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Step 4a: demangle where asked.  Results that share frames are neighbours
 * in sorted order (one library call gives equal results the same frames);
 * a run of them whose requests disagree about demangling gets a copy of the
 * frames for those that want it.
 */
static int demangle_results(symdb_symbolizer *s, const symdb_request *reqs, size_t req_sz,
                            size_t m, unsigned flags, size_t *used)
{
	for (size_t k = 0; k < m;) {
		symdb_result *r = &s->res[k];
		size_t e = k + 1;
		while (e < m && r->count && s->res[e].first == r->first && s->res[e].count == r->count)
			e++;
		size_t want = 0;
		for (size_t j = k; j < e; j++)
			want += (size_t)want_demangle(reqs, req_sz, s->ord[j].idx, flags);
		if (want && r->count) {
			uint32_t first = r->first;
			if (want < e - k) {
				/* Mixed: the demangling ones get their own frames. */
				if (grow(&s->frames, &s->frames_cap, *used + r->count,
				         sizeof(*s->frames)) < 0)
					return -ENOMEM;
				memcpy(s->frames + *used, s->frames + r->first,
				       r->count * sizeof(*s->frames));
				first = (uint32_t)*used;
				*used += r->count;
				for (size_t j = k; j < e; j++)
					if (want_demangle(reqs, req_sz, s->ord[j].idx, flags))
						s->res[j].first = first;
			}
			if (demangle_frames(s, first, r->count) < 0)
				return -ENOMEM;
		}
		for (size_t j = k; j < e && want; j++) {
			if (s->res[j].sym_name &&
			    want_demangle(reqs, req_sz, s->ord[j].idx, flags) &&
			    !(s->res[j].sym_name = rd_names_demangle(&s->names, s->res[j].sym_name)))
				return -ENOMEM;
		}
		k = e;
	}
	return 0;
}

/* The frames as the caller sees them: ours, or a copy at its frame_sz. */
static int repack_frames(symdb_symbolizer *s, size_t used, size_t frame_sz)
{
	if (frame_sz == sizeof(symdb_frame))
		return 0;
	if (grow(&s->out_frames, &s->out_frames_cap, used * frame_sz, 1) < 0)
		return -ENOMEM;
	for (size_t f = 0; f < used; f++) {
		unsigned char *d = s->out_frames + f * frame_sz;
		memcpy(d, &s->frames[f], sizeof(symdb_frame));
		memset(d + sizeof(symdb_frame), 0, frame_sz - sizeof(symdb_frame));
	}
	return 0;
}

/* Step 4b: every resolved result, at its request's index. */
static void write_results(symdb_symbolizer *s, size_t m, symdb_symbolized *results,
                          size_t result_sz, size_t frame_sz)
{
	const unsigned char *fbase = frame_sz == sizeof(symdb_frame)
	                                     ? (const unsigned char *)s->frames
	                                     : s->out_frames;
	for (size_t k = 0; k < m; k++) {
		const symdb_result *r = &s->res[k];
		uint32_t idx = s->ord[k].idx;
		symdb_symbolized *o = res_at(results, result_sz, idx);
		if (result_sz > sizeof(*o))
			memset(o + 1, 0, result_sz - sizeof(*o));
		o->error = r->status;
		o->nframes = r->count;
		o->reserved_ = 0;
		o->frames = r->count ? (const symdb_frame *)(fbase + r->first * frame_sz) : NULL;
		o->sym_name = r->sym_name;
		o->sym_addr = r->sym_addr;
		o->sym_size = r->sym_size;
		o->vaddr = s->addrs[k];
		o->image = s->group_img[s->gid[idx]];
		if (s->addrs[k] == SYMDB_ADDR_INVALID)
			o->status = SYMDB_SYM_OUT_OF_RANGE;
		else if (r->status == SYMDB_E_CORRUPT)
			o->status = SYMDB_SYM_DAMAGED;
		else if (r->count || r->sym_name)
			o->status = SYMDB_SYM_OK;
		else
			o->status = SYMDB_SYM_NO_SYMBOL;
		if (o->status == SYMDB_SYM_OK)
			o->error = 0;
	}
}

int symdb_symbolize(symdb_symbolizer *s, const symdb_request *reqs, size_t n,
                    symdb_symbolized *results, const symdb_symbolize_opts *opts)
{
	unsigned flags;
	char *eb;
	size_t ebsz, req_sz = sizeof(symdb_request), result_sz = sizeof(symdb_symbolized),
	             frame_sz = sizeof(symdb_frame);
	int rc = rd_opts((const symdb_open_opts *)opts,
	                 SYMDB_SYMBOLIZE_DEMANGLE | SYMDB_SYMBOLIZE_ORDER, &flags, &eb, &ebsz);
	if (rc)
		return rc;
	if (opts) {
		/* Fields past the common head, when the caller's struct has them. */
#define HAS(f) (opts->sz >= offsetof(symdb_symbolize_opts, f) + sizeof(opts->f))
		if (HAS(req_sz) && opts->req_sz)
			req_sz = opts->req_sz;
		if (HAS(result_sz) && opts->result_sz)
			result_sz = opts->result_sz;
		if (HAS(frame_sz) && opts->frame_sz)
			frame_sz = opts->frame_sz;
#undef HAS
		if (opts->sz > sizeof(*opts) && !all_zero(opts + 1, opts->sz - sizeof(*opts)))
			return fmt_err(eb, ebsz, SYMDB_E_INVAL,
			               "symdb_symbolize: unknown non-zero option fields");
	}
	if (!s || (n && (!reqs || !results)) || n > UINT32_MAX)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "symdb_symbolize: NULL argument or batch too big");
	if (req_sz < sizeof(symdb_request) || result_sz < sizeof(symdb_symbolized) ||
	    frame_sz < sizeof(symdb_frame) || req_sz % 8 || result_sz % 8 || frame_sz % 8)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL,
		               "symdb_symbolize: element sizes %zu/%zu/%zu unsupported", req_sz,
		               result_sz, frame_sz);
	if ((rc = check_requests(reqs, n, req_sz)) < 0)
		return fmt_err(eb, ebsz, rc, "symdb_symbolize: a request has unknown fields set");
	s->call++;
	s->ngroups = 0;
	s->norder = 0;
	rd_names_begin(&s->names);
	size_t m = 0, used = 0;
	if ((rc = reserve_arrays(s, n)) < 0 ||
	    (rc = assign_groups(s, reqs, n, req_sz, results, result_sz, &m)) < 0 ||
	    (rc = resolve_groups(s, reqs, req_sz, m, &used)) < 0)
		goto fail;
	int any = (flags & SYMDB_SYMBOLIZE_DEMANGLE) != 0;
	for (size_t i = 0; i < n && !any; i++)
		any = (req_at(reqs, req_sz, i)->flags & SYMDB_REQ_DEMANGLE) != 0;
	if (any && (rc = demangle_results(s, reqs, req_sz, m, flags, &used)) < 0)
		goto fail;
	if ((rc = repack_frames(s, used, frame_sz)) < 0)
		goto fail;
	if ((flags & SYMDB_SYMBOLIZE_ORDER) &&
	    (rc = grow(&s->order, &s->order_cap, m, sizeof(*s->order))) < 0)
		goto fail;
	write_results(s, m, results, result_sz, frame_sz);
	if (flags & SYMDB_SYMBOLIZE_ORDER) {
		for (size_t k = 0; k < m; k++)
			s->order[k] = s->ord[k].idx;
		s->norder = m;
	}
	return 0;
fail:
	return fmt_err(eb, ebsz, rc, "symdb_symbolize: %s", symdb_strerror(rc));
}

const uint32_t *symdb_symbolizer_order(const symdb_symbolizer *s, size_t *n)
{
	*n = s && s->norder ? s->norder : 0;
	return *n ? s->order : NULL;
}
