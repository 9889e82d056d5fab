/* SPDX-License-Identifier: MIT */
/*
 * reader_symbolize.c - the context of symdb_symbolize(): create and free,
 * and the images its requests name (by UUID, hex, path or handle), kept
 * for its life; the batch itself is reader_symbolize_batch.c.
 *
 * symdb_symbolize(): the query pipeline as one call.
 *
 * A batch of requests, in any order and over any number of images, goes
 * through these steps, each over arrays the context keeps from call to call:
 *   1. each request's image is found (a context table by UUID, a path table
 *      by file identity, the caller's handle as it is) and numbered within
 *      the call: its group;
 *   2. the requests are put in group order (a stable counting sort), their
 *      addresses translated to virtual addresses and sorted (radix, ties in
 *      input order: reader_symbolize_sort.c);
 *   3. each group is resolved with symdb_resolve_batch() a chunk at a time,
 *      growing the frames array whenever it runs out;
 *   4. names are demangled where asked (reader_symbolize_names.c: once per
 *      name per context), and each chunk's results written at their
 *      requests' indices (or in resolution order, or handed to on_results)
 *      while the chunk is in the cache.
 * Results whose frames are shared (equal addresses: symdb.h) share them in
 * the output too.
 */
#define _GNU_SOURCE /* struct stat's st_mtim */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format_content.h"
#include "publish_internal.h"
#include "reader_symbolize.h"

/* ---- small helpers ------------------------------------------------------ */

/* Grow *p (of *cap elements of elem bytes) to hold need; 0 or -ENOMEM. */
int rd_sym_grow(void *pp, size_t *cap, size_t need, size_t elem)
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

static uint64_t image_key_hash(const symdb_uuid *id, unsigned names, uint64_t source)
{
	return uuid_hash(id) ^ mix64(names) ^ mix64(source ^ 0x5bd1e995u);
}

static uint64_t image_hash_of(const void *ctx, uint32_t i)
{
	const struct sym_image *e = &((const symdb_symbolizer *)ctx)->images[i];
	return image_key_hash(&e->id, e->names, e->source);
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
	int rc = rd_opts_prefix(opts, RD_OPTS_END(symdb_symbolizer_opts),
	                        SYMDB_OPEN_VERIFY_CHECKSUMS | SYMDB_OPEN_NO_THAW |
	                                SYMDB_SYMBOLIZER_BUILD | SYMDB_SYMBOLIZER_FETCH,
	                        &flags, &eb, &ebsz);
	if (rc)
		return rc;
	if ((!db && !(flags & SYMDB_SYMBOLIZER_BUILD)) || !out)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "symdb_symbolizer_create: NULL argument");
	/* The caller's struct may be older (smaller): what it lacks reads as 0. */
	symdb_symbolizer_opts o;
	memset(&o, 0, sizeof o);
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof o ? opts->sz : sizeof o);
	symdb_symbolizer *s = calloc(1, sizeof(*s));
	if (!s)
		return fmt_err(eb, ebsz, -ENOMEM, "symdb_symbolizer_create: out of memory");
	s->db = db;
	s->open_flags = flags & ~(SYMDB_SYMBOLIZER_BUILD | SYMDB_SYMBOLIZER_FETCH);
	s->build = (flags & SYMDB_SYMBOLIZER_BUILD) != 0;
	s->on_warning = o.on_warning;
	s->on_warning_arg = o.on_warning_arg;
	if ((o.indexer_path && !(s->indexer_path = strdup(o.indexer_path))) ||
	    (o.tmp_dir && !(s->tmp_dir = strdup(o.tmp_dir)))) {
		symdb_symbolizer_free(s);
		return fmt_err(eb, ebsz, -ENOMEM, "symdb_symbolizer_create: out of memory");
	}
	if (flags & SYMDB_SYMBOLIZER_FETCH) {
		/* Fetching publishes: it needs the caller's database. */
		rc = !db || !o.fetch ? SYMDB_E_INVAL : rd_sym_fetch_init(s, o.fetch);
		if (rc) {
			symdb_symbolizer_free(s);
			return fmt_err(eb, ebsz, rc, "symdb_symbolizer_create: %s",
			               rc == -ENOMEM ? "out of memory"
			                             : "SYMDB_SYMBOLIZER_FETCH needs a database and "
			                               "fetch options");
		}
	}
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
	free(s->fail);
	free(s->ord);
	free(s->tmp);
	free(s->packed);
	free(s->addrs);
	free(s->res);
	free(s->order);
	free(s->dm_copy);
	free(s->chunk_out);
	free(s->gstart);
	rd_sym_frames_free(s->frames, s->frames_bytes);
	free(s->out_frames);
	rd_names_fini(&s->names);
	rd_sym_build_fini(s);
	rd_sym_fetch_fini(s);
	free(s);
}

/* ---- finding images -------------------------------------------------------- */

/* Status of a failed open. */
static int open_status(int rc)
{
	return rc == SYMDB_E_NOT_INDEXED ? SYMDB_SYM_NOT_INDEXED : SYMDB_SYM_DAMAGED;
}

/* Whether img answers nothing (SPEC §7.2). */
static int answers_nothing(const symdb_image *img)
{
	symdb_image_info info;
	memset(&info, 0, sizeof info);
	info.sz = sizeof info;
	return symdb_image_get_info(img, &info) == 0 && info.answers_nothing;
}

/* Whether img lacks what indexing its file again may add: this file's
 * kind of symbol table (SPEC §7.2.2), or everything (an image indexed with
 * no symbol and no DWARF, whose debug file may have been installed since:
 * found by build-id or debuglink, it makes the index whole). */
static int symbols_missing(const symdb_image *img)
{
	symdb_image_info info;
	memset(&info, 0, sizeof info);
	info.sz = sizeof info;
	if (symdb_image_get_info(img, &info) != 0)
		return 0;
	return info.symbols_missing == 1 || info.answers_nothing;
}

/* Whether img, indexed without DWARF, now has a debug file beside the
 * binary at path or under /usr/lib/debug (a -dbg package installed, or
 * dsymutil run, since the index was built): SPEC §12.5's rank rule then
 * replaces the index with one that has the lines. */
static int debug_found_since(const symdb_image *img, const symdb_uuid *id, const char *path)
{
	symdb_image_info info;
	memset(&info, 0, sizeof info);
	info.sz = sizeof info;
	if (symdb_image_get_info(img, &info) != 0 || (info.flags & FMT_FLAG_HAS_DWARF))
		return 0;
	return build_debug_found(path, id);
}

/* Whether img was indexed from the file whose bytes hash to source: its
 * Source_XXH3, or Debug_XXH3 (SPEC §7.7); an index that records neither
 * (an older writer) is taken as the same, as the publisher takes it. */
static int same_source(const symdb_image *img, uint64_t source)
{
	symdb_image_info info;
	memset(&info, 0, sizeof info);
	info.sz = sizeof info;
	if (symdb_image_get_info(img, &info) != 0 || info.nbuild_info <= FMT_BI_SOURCE_XXH3 ||
	    !info.build_info[FMT_BI_SOURCE_XXH3])
		return 1;
	return source == info.build_info[FMT_BI_SOURCE_XXH3] ||
	       (info.nbuild_info > FMT_BI_DEBUG_XXH3 &&
	        source == info.build_info[FMT_BI_DEBUG_XXH3]);
}

/*
 * A fallback identity (no build-id, SPEC §5.2) is the loaded bytes only:
 * the database's index of it may come from another file with those bytes
 * (a rebuild whose lines moved but whose code did not, the same program
 * built in another directory, a copy without debug information), and would
 * answer with that file's lines and names.  The file named is indexed
 * instead, by the same-build-id policy (§12.5): one that carries more
 * replaces the index; one that carries as much (the rebuild) replaces it
 * too, as SYMDB_BUILD_FORCE; one that carries less (a stripped copy) must
 * not destroy a richer index others use, and is indexed privately for this
 * context.  Without first sight, or when that fails, the image is not
 * indexed rather than answered wrongly.  Returns 0 with e->img the file's
 * own index, or the error.
 */
static int reindex_other_source(symdb_symbolizer *s, struct sym_image *e, const char *path)
{
	symdb_image_close(e->img);
	e->img = NULL;
	if (!s->build || e->build_failed)
		return fmt_err(s->build_err, sizeof s->build_err, SYMDB_E_NOT_INDEXED,
		               "%s: indexed from another file with the same loaded bytes (no "
		               "build-id); its index would not be this file's",
		               path);
	e->build_failed = 1; /* once: another file may take its place again */
	int rc = rd_sym_first_sight(s, path, &e->id, e->names, 0, &e->img);
	if (rc == SYMDB_E_EXISTS) /* as much in it, other contents: the rebuild */
		rc = rd_sym_first_sight(s, path, &e->id, e->names, 1, &e->img);
	if (rc == 0 && !same_source(e->img, e->source)) { /* the richer one was kept */
		symdb_image_close(e->img);
		e->img = NULL;
		rc = rd_sym_private(s, path, e->names, &e->img);
	}
	return rc;
}

/* The catalog's generation (rd_catalog_generation), read once a call;
 * 0 without a database. */
static uint64_t cat_gen(symdb_symbolizer *s)
{
	if (s->gen_call != s->call) {
		s->gen = s->db ? rd_catalog_generation(s->db->cat) : 0;
		s->gen_call = s->call;
	}
	return s->gen;
}

/* Whether e, which failed to open, is opened again now: in a later call
 * than its failure; when it was not indexed, only once the catalog has
 * committed since (only a commit can index it, and an unchanged catalog is
 * not asked: the lookup would allocate).  Any other failure (a damaged
 * file, found so after opening too, or a passing error: EMFILE, ENOMEM, a
 * permission fixed since) is tried again at every call, as before. */
static int retry_open(symdb_symbolizer *s, const struct sym_image *e)
{
	if (e->img || e->call == s->call)
		return 0;
	return e->status != SYMDB_SYM_NOT_INDEXED || cat_gen(s) != e->gen;
}

/* Open e's image (from the database, or by indexing path on first sight);
 * records the outcome in e. */
static void open_entry(symdb_symbolizer *s, struct sym_image *e, const char *path)
{
	int rc = SYMDB_E_NOT_INDEXED;
	e->gen = cat_gen(s); /* (before the lookup: a commit racing it is retried) */
	if (s->db) {
		/* The reason stays for symdb_symbolizer_image(). */
		SYMDB_OPTS(symdb_open_opts, o, .flags = s->open_flags | e->names,
		           .errbuf = s->build_err, .errbuf_sz = sizeof s->build_err);
		rc = symdb_image_open_uuid(s->db, &e->id, &o, &e->img);
		if (rc == SYMDB_E_NOT_INDEXED)
			s->build_err[0] = '\0';
		if (rc == 0 && e->source && path && !same_source(e->img, e->source)) {
			rc = reindex_other_source(s, e, path);
			if (rc) {
				e->status = open_status(rc);
				e->error = rc;
				e->call = s->call;
				e->img = NULL;
				return;
			}
		}
	}
	/* Indexed from the other file of a stripped-binary / debug-file pair,
	 * without this file's symbol table (SPEC §7.2.2), with nothing at all,
	 * or without DWARF when a debug file of the image is found now:
	 * indexing this file completes the index, once; a build that adds
	 * nothing (its debug file not found, or not usable) leaves the answers
	 * to the index it has. */
	if (rc == 0 && path && s->build && !e->build_failed &&
	    (symbols_missing(e->img) || debug_found_since(e->img, &e->id, path))) {
		symdb_image *img = NULL;
		e->build_failed = 1;
		if (rd_sym_first_sight(s, path, &e->id, e->names, 0, &img) == 0) {
			symdb_image_close(e->img);
			e->img = img;
		}
	}
	/* A failure other than "not indexed" is a damaged index (or catalog
	 * entry): indexing the binary again replaces it. */
	if (rc && path && s->build && !e->build_failed) {
		e->img = NULL;
		rc = rd_sym_first_sight(s, path, &e->id, e->names, rc != SYMDB_E_NOT_INDEXED,
		                        &e->img);
		e->build_failed = rc != 0;
		if (rc == -ENOMEM)
			e->build_failed = 0;
	}
	/* An index that answers nothing (SPEC §7.2) is one whose debug
	 * information a fetch source may have: fetched over, once; the empty
	 * index answers if the fetch finds nothing. */
	if (rc == 0 && !path && s->fetch && !e->fetch_tried && answers_nothing(e->img)) {
		symdb_image *img = NULL;
		e->fetch_tried = 1;
		if (rd_sym_fetch(s, &e->id, e->names, &img) == 0) {
			symdb_image_close(e->img);
			e->img = img;
		}
	}
	/* Fetch on first sight: an image named by UUID only, never fetched
	 * by this context before.  Its failure is "not indexed" with the
	 * fetch's code, whatever the code. */
	if (rc == SYMDB_E_NOT_INDEXED && !path && s->fetch && !e->fetch_tried) {
		e->fetch_tried = 1;
		rc = rd_sym_fetch(s, &e->id, e->names, &e->img);
		if (rc) {
			e->status = SYMDB_SYM_NOT_INDEXED;
			e->error = rc;
			e->call = s->call;
			e->img = NULL;
			return;
		}
	}
	e->status = rc == 0                      ? SYMDB_SYM_OK
	            : rc == SYMDB_E_BAD_OBJECT   ? SYMDB_SYM_NO_IMAGE
	                                         : open_status(rc);
	e->error = rc;
	e->call = s->call;
	if (rc)
		e->img = NULL;
}

/* The context's entry for id, opened on first use (path: the binary it
 * came from, indexed on first sight, or NULL); -ENOMEM. */
static int64_t image_by_uuid(symdb_symbolizer *s, const symdb_uuid *id, const char *path,
                             uint64_t source)
{
	size_t h = 0;
	/* Which symbol table the named file has picks the pair's table. */
	unsigned names = path ? symdb_file_symbol_table(path) : 0;
	if (s->by_uuid.cap) {
		for (h = (size_t)image_key_hash(id, names, source) & (s->by_uuid.cap - 1);
		     s->by_uuid.slot[h]; h = (h + 1) & (s->by_uuid.cap - 1)) {
			struct sym_image *e = &s->images[s->by_uuid.slot[h] - 1];
			if (!uuid_eq(&e->id, id) || e->names != names || e->source != source)
				continue;
			if (retry_open(s, e))
				open_entry(s, e, path); /* failed before: indexed since? */
			return (int64_t)(s->by_uuid.slot[h] - 1);
		}
	}
	if (rd_sym_grow(&s->images, &s->images_cap, s->nimages + 1, sizeof(*s->images)) < 0 ||
	    index_reserve(&s->by_uuid, s, image_hash_of) < 0)
		return -ENOMEM;
	struct sym_image *e = &s->images[s->nimages];
	memset(e, 0, sizeof(*e));
	e->id = *id;
	e->names = names;
	e->source = source;
	open_entry(s, e, path);
	for (h = (size_t)image_key_hash(id, names, source) & (s->by_uuid.cap - 1); s->by_uuid.slot[h];
	     h = (h + 1) & (s->by_uuid.cap - 1))
		;
	s->by_uuid.slot[h] = (uint32_t)++s->nimages;
	s->by_uuid.used++; /* index_reserve() keeps a free slot by this count */
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
				/* failed before (not indexed, damaged): indexed
				 * or repaired since?  as image_by_uuid asks */
				if (p->image >= 0 && retry_open(s, &s->images[p->image]))
					open_entry(s, &s->images[p->image], path);
				return p->image;
			}
		}
	}
	symdb_uuid id;
	/* Only a regular file is read: a FIFO would give what a writer
	 * chooses to send, or nothing, and a device is no object file. */
	int rc = S_ISDIR(st.st_mode)   ? -EISDIR
	         : !S_ISREG(st.st_mode) ? SYMDB_E_BAD_OBJECT
	                                : symdb_file_uuid(path, NULL, &id);
	/* A fallback identity is not the file's (open_entry): its bytes are. */
	uint64_t source = 0;
	if (rc == 0 && id.kind == SYMDB_UUID_FALLBACK)
		rc = fmt_file_xxh3(path, NULL, &source);
	key.image = -1;
	key.error = rc;
	if (rc == 0 && (key.image = image_by_uuid(s, &id, path, source)) < 0)
		return -2;
	if (rd_sym_grow(&s->paths, &s->paths_cap, s->npaths + 1, sizeof(*s->paths)) < 0 ||
	    index_reserve(&s->by_path, s, path_hash_of) < 0)
		return -2;
	s->paths[s->npaths] = key;
	for (h = (size_t)path_key_hash(&key) & (s->by_path.cap - 1); s->by_path.slot[h];
	     h = (h + 1) & (s->by_path.cap - 1))
		;
	s->by_path.slot[h] = (uint32_t)++s->npaths;
	s->by_path.used++;
	*err = rc;
	return key.image;
}

void rd_sym_drop_damaged(symdb_symbolizer *s)
{
	for (size_t i = 0; i < s->nimages; i++) {
		struct sym_image *e = &s->images[i];
		if (!e->img || !rd_image_damaged(e->img))
			continue;
		symdb_image_close(e->img);
		e->img = NULL;
		e->status = SYMDB_SYM_DAMAGED;
		e->error = SYMDB_E_CORRUPT;
		e->call = 0; /* not this call: image_by_uuid opens it again */
	}
	rd_names_clear(&s->names);
	s->saw_damage = 0;
}

/* How a request names its image, for comparing with the previous one.  A
 * NULL reference (SYMDB_SYM_NO_IMAGE, from rd_sym_find_image) equals only
 * the same NULL: it is compared before it was judged. */
int rd_sym_same_ref(const symdb_request *a, const symdb_request *b)
{
	if (a->image_ref != b->image_ref)
		return 0;
	switch (a->image_ref) {
	case SYMDB_IMAGE_UUID:
		return a->image.uuid == b->image.uuid ||
		       (a->image.uuid && b->image.uuid && uuid_eq(a->image.uuid, b->image.uuid));
	case SYMDB_IMAGE_HEX:
		return a->image.hex == b->image.hex ||
		       (a->image.hex && b->image.hex && strcmp(a->image.hex, b->image.hex) == 0);
	case SYMDB_IMAGE_PATH:
		return a->image.path == b->image.path ||
		       (a->image.path && b->image.path && strcmp(a->image.path, b->image.path) == 0);
	default:
		return a->image.handle == b->image.handle;
	}
}

/* The image a request names, or NULL with *status and *err. */
int rd_sym_find_image(symdb_symbolizer *s, const symdb_request *rq, const symdb_image **img,
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
		e = image_by_uuid(s, rq->image.uuid, NULL, 0);
		break;
	case SYMDB_IMAGE_HEX:
		if (!rq->image.hex || symdb_uuid_parse(rq->image.hex, &id) < 0) {
			*status = SYMDB_SYM_NO_IMAGE;
			*err = SYMDB_E_INVAL;
			return 0;
		}
		e = image_by_uuid(s, &id, NULL, 0);
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
int rd_sym_group_of(symdb_symbolizer *s, const symdb_image *img, uint32_t *out)
{
	if (s->ngroups + 1 > s->groups_cap / 2) {
		size_t cap = s->groups_cap ? 2 * s->groups_cap : 64;
		struct sym_group_slot *ng = calloc(cap, sizeof(*ng));
		if (!ng || rd_sym_grow(&s->group_img, &s->group_img_cap, cap, sizeof(*s->group_img)) < 0) {
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

/* A path that could not be identified: the context keeps only the code,
 * so the reason is read again (an error path only).  The plural call first:
 * it names what is wrong with a universal file's slices. */
static int path_failed(const char *path, int err, char *eb, size_t ebsz)
{
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = eb, .errbuf_sz = ebsz);
	symdb_file_image one;
	symdb_uuid id;

	if (eb && ebsz && err != -ENOMEM &&
	    (symdb_file_uuids(path, &o, &one, 1, sizeof one) == err ||
	     symdb_file_uuid(path, &o, &id) == err))
		return err; /* eb holds the reason */
	return fmt_err(eb, ebsz, err, "%s: %s", path, symdb_strerror(err));
}

int symdb_symbolizer_image(symdb_symbolizer *s, const char *path, const symdb_symbolize_opts *opts,
                           const symdb_image **out)
{
	unsigned flags;
	char *eb;
	size_t ebsz;
	int rc = rd_opts_prefix(opts, RD_OPTS_END(symdb_symbolize_opts), 0, &flags, &eb, &ebsz);
	if (rc)
		return rc;
	if (!s || !path || !out)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "symdb_symbolizer_image: NULL argument");
	*out = NULL;
	s->build_err[0] = '\0';
	int err = 0;
	int64_t e = image_by_path(s, path, &err);
	if (e == -2)
		return fmt_err(eb, ebsz, -ENOMEM, "%s: out of memory", path);
	if (e == -1)
		return path_failed(path, err, eb, ebsz);
	const struct sym_image *im = &s->images[e];
	if (im->img) {
		*out = im->img;
		return 0;
	}
	if (s->build_err[0])
		return fmt_err(eb, ebsz, im->error, "%s", s->build_err);
	return fmt_err(eb, ebsz, im->error, "%s: %s", path, symdb_strerror(im->error));
}
