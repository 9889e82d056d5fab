/* SPDX-License-Identifier: MIT */
/*
 * serve_batch.c - running a POST /v1/symbolize batch (serve_batch.h): the
 * pool of symbolizer contexts, finding each module's image, and resolving
 * the addresses in chunks through symdb_symbolize() with the request's
 * deadline checked between chunks.
 *
 * Every item is sent to the library with its module's image as a handle
 * (SYMDB_IMAGE_HANDLE): the images are found once per request, by one
 * symdb_symbolize() call over the modules (hex ids: the context keeps what
 * it opened, so a warm context finds them without a catalog lookup) and by
 * symdb_symbolizer_image() for paths, and every chunk after that resolves
 * against them without looking anything up again.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "serve_batch.h"

/* Items per symdb_symbolize() call: small enough that the deadline is
 * looked at every millisecond or so, large enough that the per-call costs
 * (grouping by image, sorting) stay invisible. */
#define SERVE_CHUNK 4096u

struct serve_run {
	struct serve_run *next;        /* the pool's idle list */
	struct serve_pool *pool;
	symdb_symbolizer *sym;
	symdb_request *reqs;           /* SERVE_CHUNK (or nmodules) requests */
	symdb_symbolized *syms;        /* their results */
	uint32_t *slot;                /* request k answers chunk item slot[k] */
	struct serve_result *res;      /* SERVE_CHUNK results */
	size_t cap;                    /* elements of the four arrays */
	symdb_image **fresh;           /* this request's images opened anew (current) */
	size_t nfresh, fresh_cap;
	char (*why)[SERVE_FETCH_WHY];  /* this request's failed fetches' reasons */
	size_t why_cap;
	int stale;                     /* the context holds a replaced image: not reused */
};

struct serve_pool {
	pthread_mutex_t mu;
	struct serve_run *idle;
	size_t nidle;                  /* contexts in idle */
	struct serve_server *srv;
	const char *indexer;           /* srv->indexer_path, or beside_exe */
	char beside_exe[4096];
};

static const char *const status_names[] = {
#define SERVE_X_NAME(e, v, name, what) [v] = name,
	SERVE_STATUS_LIST(SERVE_X_NAME)
#undef SERVE_X_NAME
};

const char *serve_status_name(enum serve_status st)
{
	if ((unsigned)st >= SERVE_STATUS_COUNT || !status_names[st])
		return "?";
	return status_names[st];
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool past(uint64_t deadline_ns)
{
	return deadline_ns && now_ns() >= deadline_ns;
}

/* ---- the pool ------------------------------------------------------------ */

/* serve.h: no indexer_path means the symdb-indexer beside this executable
 * (a build tree or a moved install runs its own, as `symdb query` does),
 * else NULL: the library's installed one. */
static const char *indexer_beside_exe(struct serve_pool *p)
{
	char *buf = p->beside_exe;
	size_t sz = sizeof(p->beside_exe);
	ssize_t n = readlink("/proc/self/exe", buf, sz - 1);
	if (n <= 0 || (size_t)n >= sz - 1)
		return NULL;
	buf[n] = 0;
	char *slash = strrchr(buf, '/');
	if (!slash || (size_t)(slash - buf) + sizeof("/symdb-indexer") > sz)
		return NULL;
	memcpy(slash, "/symdb-indexer", sizeof("/symdb-indexer"));
	return access(buf, X_OK) == 0 ? buf : NULL;
}

int serve_pool_create(struct serve_server *srv, struct serve_pool **out)
{
	struct serve_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (pthread_mutex_init(&p->mu, NULL)) {
		free(p);
		return -ENOMEM;
	}
	p->srv = srv;
	p->indexer = srv->indexer_path ? srv->indexer_path : indexer_beside_exe(p);
	*out = p;
	return 0;
}

static void run_free(struct serve_run *r)
{
	free(r->fresh);
	free(r->why);
	symdb_symbolizer_free(r->sym);
	free(r->reqs);
	free(r->syms);
	free(r->slot);
	free(r->res);
	free(r);
}

void serve_pool_free(struct serve_pool *pool)
{
	if (!pool)
		return;
	while (pool->idle) {
		struct serve_run *r = pool->idle;
		pool->idle = r->next;
		run_free(r);
	}
	pthread_mutex_destroy(&pool->mu);
	free(pool);
}

/* The arrays of r, for at least n elements. */
static int run_reserve(struct serve_run *r, size_t n)
{
	if (n <= r->cap)
		return 0;
	symdb_request *q = realloc(r->reqs, n * sizeof(*q));
	if (q)
		r->reqs = q;
	symdb_symbolized *y = realloc(r->syms, n * sizeof(*y));
	if (y)
		r->syms = y;
	uint32_t *s = realloc(r->slot, n * sizeof(*s));
	if (s)
		r->slot = s;
	struct serve_result *o = realloc(r->res, n * sizeof(*o));
	if (o)
		r->res = o;
	if (!q || !y || !s || !o)
		return -ENOMEM;
	r->cap = n;
	return 0;
}

/* An idle context, or a new one: libmicrohttpd's pool and the limit of
 * requests waiting for fetches bound how many requests run at once, and so
 * how many contexts there are. */
static int pool_get(struct serve_pool *pool, struct serve_run **out, char *err, size_t errsz)
{
	pthread_mutex_lock(&pool->mu);
	struct serve_run *r = pool->idle;
	if (r) {
		pool->idle = r->next;
		pool->nidle--;
	}
	pthread_mutex_unlock(&pool->mu);
	if (r) {
		*out = r;
		return 0;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->pool = pool;
	const struct serve_server *srv = pool->srv;
	/* The verification policy of `symdb query` (SPEC §9): header and
	 * directory at open, every table checksum only with --verify (then
	 * once per image and context, and a flipped byte is "damaged"). */
	SYMDB_OPTS(symdb_symbolizer_opts, so,
	           .flags = srv->open_flags |
	                    (srv->allow_paths ? SYMDB_SYMBOLIZER_BUILD : 0u),
	           .errbuf = err, .errbuf_sz = errsz, .indexer_path = pool->indexer,
	           .tmp_dir = srv->tmp_dir);
	int rc = symdb_symbolizer_create(srv->db, &so, &r->sym);
	if (rc == 0)
		rc = run_reserve(r, SERVE_CHUNK);
	if (rc) {
		run_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void serve_batch_close(struct serve_run *run)
{
	if (!run)
		return;
	for (size_t i = 0; i < run->nfresh; i++)
		symdb_image_close(run->fresh[i]);
	run->nfresh = 0;
	if (run->stale) { /* its images are kept until it is freed: free it now */
		run_free(run);
		return;
	}
	/* One idle context per pool thread is kept: those made for requests
	 * that waited for fetches on threads of their own (a burst, while an
	 * upstream hangs) are freed again. */
	struct serve_pool *pool = run->pool;
	pthread_mutex_lock(&pool->mu);
	bool keep = pool->nidle < (pool->srv->lim.threads ? pool->srv->lim.threads : 1);
	if (keep) {
		run->next = pool->idle;
		pool->idle = run;
		pool->nidle++;
	}
	pthread_mutex_unlock(&pool->mu);
	if (!keep)
		run_free(run);
}

/* ---- finding the images --------------------------------------------------- */

/* The ranges of b as serve_batch.h requires them; err says what is wrong. */
static int check_shape(const struct serve_batch *b, char *err, size_t errsz)
{
	uint64_t next = 0;
	for (uint32_t i = 0; i < b->nmodules; i++) {
		if (b->modules[i].first != next) {
			snprintf(err, errsz, "modules[%u]: addresses do not follow module %u's", i,
			         i ? i - 1 : 0);
			return -EINVAL;
		}
		next += b->modules[i].count;
	}
	if (next != b->naddrs) {
		snprintf(err, errsz, "modules: %llu addresses for an array of %u",
		         (unsigned long long)next, b->naddrs);
		return -EINVAL;
	}
	next = 0;
	for (uint32_t i = 0; i < b->nstacks; i++) {
		if (b->stacks[i].first != next) {
			snprintf(err, errsz, "stacks[%u]: frames do not follow stack %u's", i,
			         i ? i - 1 : 0);
			return -EINVAL;
		}
		next += b->stacks[i].count;
	}
	if (next != b->nframes) {
		snprintf(err, errsz, "stacks: %llu frames for an array of %u",
		         (unsigned long long)next, b->nframes);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < b->nframes; i++)
		if (b->frames[i].module >= b->nmodules) {
			snprintf(err, errsz, "frame %u: module %u of %u", i, b->frames[i].module,
			         b->nmodules);
			return -EINVAL;
		}
	return 0;
}

static bool damage_code(int rc)
{
	return rc == SYMDB_E_FORMAT || rc == SYMDB_E_VERSION || rc == SYMDB_E_CORRUPT ||
	       rc == SYMDB_E_CHECKSUM;
}

static void module_failed(struct serve_module *m, enum serve_status st, int error)
{
	m->status = st;
	m->error = error;
	m->reason = NULL;
	m->image = NULL;
}

/*
 * Which index of an image this is, for the stack cache: an image replaced
 * by one built from other contents (a stripped binary's index by the full
 * binary's, uploaded or built with --force) answers otherwise, and the
 * cache must not give the old answers for it.  What the catalog's
 * same-build-id policy compares (SPEC §12.5): the input's and the debug
 * file's XXH3, the header flags (DWARF or not) and which symbol table,
 * with the file's size and table counts, mixed into 8 bytes.
 */
static uint64_t index_version(const symdb_image_info *in)
{
	const uint64_t v[] = { in->file_size, in->flags, in->nsymbols, in->nfunctions,
		               in->nline_rows, in->ninline_nodes, in->build_info[6],
		               in->build_info[7], in->build_info[8], in->alt_symbols };
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		h ^= v[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
		h *= 0xff51afd7ed558ccdull;
	}
	return h ^ (h >> 33);
}

static void module_found(struct serve_module *m, const symdb_image *img)
{
	SYMDB_OPTS(symdb_image_info, info);
	m->status = SERVE_OK;
	m->error = 0;
	m->image = img;
	m->key_len = 0;
	if (symdb_image_get_info(img, &info) == 0) {
		uint64_t ver = index_version(&info);
		m->uuid = info.uuid;
		memcpy(m->key_id, m->uuid.bytes, m->uuid.len);
		memcpy(m->key_id + m->uuid.len, &ver, sizeof ver);
		m->key_len = (uint8_t)(m->uuid.len + sizeof ver);
	}
}

/*
 * A path module: a universal Mach-O file's slice is named by arch and
 * opened by its LC_UUID (1 is returned: the caller adds it to the hex
 * lookups, m->uuid set); any other file through the context, indexed on
 * first sight (0, status set).
 */
static int open_path(struct serve_run *r, struct serve_module *m)
{
	symdb_file_image im[64];
	int n = symdb_file_uuids(m->id, NULL, im, sizeof(im) / sizeof(im[0]), sizeof(im[0]));
	if (n < 0) {
		module_failed(m, SERVE_BAD_IMAGE, n);
		return 0;
	}
	if (n > 1) {
		if (n > (int)(sizeof(im) / sizeof(im[0])))
			n = (int)(sizeof(im) / sizeof(im[0]));
		for (int i = 0; m->arch && i < n; i++)
			if (!strcmp(im[i].arch, m->arch)) {
				m->uuid = im[i].uuid;
				return 1;
			}
		module_failed(m, SERVE_BAD_IMAGE, SYMDB_E_NOT_FOUND);
		return 0;
	}
	const symdb_image *img = NULL;
	int rc = symdb_symbolizer_image(r->sym, m->id, NULL, &img);
	if (rc == 0)
		module_found(m, img);
	else if (rc == SYMDB_E_NOT_INDEXED)
		module_failed(m, SERVE_UNKNOWN_IMAGE, rc);
	else if (damage_code(rc))
		module_failed(m, SERVE_DAMAGED, rc);
	else if (rc == -ENOMEM)
		return rc;
	else
		module_failed(m, SERVE_BAD_IMAGE, rc);
	return 0;
}

/* The modules named by id (hex, or a slice's uuid) in one symdb_symbolize()
 * call of one request each: its results carry the images.  only: NULL,
 * or which modules to look at. */
static int open_by_id(struct serve_run *r, struct serve_batch *b, const bool *by_uuid,
                      const bool *only)
{
	size_t n = 0;
	for (uint32_t i = 0; i < b->nmodules; i++) {
		struct serve_module *m = &b->modules[i];
		if (m->status == SERVE_DEADLINE || (m->ref == SERVE_REF_PATH && !by_uuid[i]) ||
		    (only && !only[i]))
			continue;
		if (run_reserve(r, n + 1))
			return -ENOMEM;
		symdb_request *q = &r->reqs[n];
		memset(q, 0, sizeof(*q));
		q->addr_kind = SYMDB_ADDR_VADDR;
		if (by_uuid[i]) {
			q->image_ref = SYMDB_IMAGE_UUID;
			q->image.uuid = &m->uuid;
		} else {
			q->image_ref = SYMDB_IMAGE_HEX;
			q->image.hex = m->id;
		}
		r->slot[n++] = i;
	}
	if (!n)
		return 0;
	int rc = symdb_symbolize(r->sym, r->reqs, n, r->syms, NULL);
	if (rc)
		return rc;
	for (size_t k = 0; k < n; k++) {
		struct serve_module *m = &b->modules[r->slot[k]];
		const symdb_symbolized *y = &r->syms[k];
		if (y->image && y->status != SYMDB_SYM_DAMAGED)
			module_found(m, y->image);
		else if (y->status == SYMDB_SYM_DAMAGED)
			module_failed(m, SERVE_DAMAGED, y->error);
		else
			module_failed(m, SERVE_UNKNOWN_IMAGE, y->error ? y->error : SYMDB_E_NOT_INDEXED);
	}
	return 0;
}

/* ---- fetching the unknown ones ----------------------------------------------- */

/* Whether an image answers nothing (SPEC §7.2: indexed from a file with
 * no symbol and no DWARF): its debug information may be fetched. */
static bool answers_nothing(const symdb_image *img)
{
	SYMDB_OPTS(symdb_image_info, info);
	return img && symdb_image_get_info(img, &info) == 0 && info.answers_nothing;
}

/* A module the fetch sources may have: named by id, and not in the
 * database (a damaged index is not fetched over: `symdb build --force`),
 * or in it with an index that answers nothing. */
static bool fetchable(const struct serve_module *m)
{
	if (m->ref == SERVE_REF_PATH)
		return false;
	if (m->status == SERVE_OK)
		return answers_nothing(m->image);
	return m->status == SERVE_UNKNOWN_IMAGE &&
	       (m->error == SYMDB_E_NOT_INDEXED || m->error == 0);
}

/* How long this request may wait for its fetches: the budget, and at most
 * half of what is left before its deadline. */
static uint64_t fetch_until(const struct serve_server *srv, uint64_t deadline_ns)
{
	uint64_t now = now_ns();
	uint64_t until = now + (uint64_t)srv->lim.fetch_budget_ms * 1000000u;
	if (deadline_ns) {
		uint64_t half = deadline_ns > now ? now + (deadline_ns - now) / 2 : now;
		if (half < until)
			until = half;
	}
	return until;
}

struct fetch_list {
	symdb_uuid *ids;
	uint32_t *mod;                 /* ids[k] is modules[mod[k]]'s */
	enum serve_fetch_outcome *outcome;
	int *err;
	bool *again;                   /* per module: published, look again */
	size_t n;
};

static void fetch_list_free(struct fetch_list *l)
{
	free(l->ids);
	free(l->mod);
	free(l->outcome);
	free(l->err);
	free(l->again);
}

/* The fetchable modules of b, with their ids parsed; -ENOMEM. */
static int fetch_list_make(const struct serve_batch *b, struct fetch_list *l)
{
	size_t n = 0, cap = b->nmodules ? b->nmodules : 1;
	if (!(l->ids = calloc(cap, sizeof(*l->ids))) || !(l->mod = calloc(cap, sizeof(*l->mod))) ||
	    !(l->outcome = calloc(cap, sizeof(*l->outcome))) ||
	    !(l->err = calloc(cap, sizeof(*l->err))) || !(l->again = calloc(cap, sizeof(*l->again))))
		return -ENOMEM;
	for (uint32_t i = 0; i < b->nmodules; i++)
		if (fetchable(&b->modules[i]) && symdb_uuid_parse(b->modules[i].id, &l->ids[n]) == 0)
			l->mod[n++] = i;
	l->n = n;
	return 0;
}

/*
 * Waits for the fetches of the unknown modules (serve_batch_open's
 * comment), then opens the images that were published meanwhile.  Where
 * it may not wait (SERVE_WAIT_HANDOFF: a pool thread), it only starts or
 * joins the fetches and looks at them: when one has not ended and the
 * request has time to wait for it, -EWOULDBLOCK, nothing counted.  The
 * next call, on a thread of its own, joins the same fetches (one per id).
 */
static int fetch_unknown(struct serve_run *r, struct serve_server *srv, struct serve_batch *b,
                         const bool *by_uuid, uint64_t deadline_ns, enum serve_wait wait)
{
	struct fetch_list l = { 0 };
	int rc = fetch_list_make(b, &l);
	if (rc || !l.n) {
		fetch_list_free(&l);
		return rc;
	}
	if (r->why_cap < l.n) { /* the reasons outlive l: the answer is written later */
		char(*w)[SERVE_FETCH_WHY] = realloc(r->why, l.n * sizeof(*w));
		if (!w) {
			fetch_list_free(&l);
			return -ENOMEM;
		}
		r->why = w;
		r->why_cap = l.n;
	}
	uint64_t until = fetch_until(srv, deadline_ns);
	bool handoff = wait == SERVE_WAIT_HANDOFF && until > now_ns();
	serve_fetch_wait(srv->fetch, l.ids, l.n, wait == SERVE_WAIT_ALLOWED ? until : 0, l.outcome,
	                 l.err, r->why);
	for (size_t k = 0; handoff && k < l.n; k++)
		if (l.outcome[k] == SERVE_FETCH_PENDING) {
			fetch_list_free(&l);
			return -EWOULDBLOCK;
		}
	bool any = false;
	uint64_t pending = 0;
	for (size_t k = 0; k < l.n; k++) {
		struct serve_module *m = &b->modules[l.mod[k]];
		switch (l.outcome[k]) {
		case SERVE_FETCH_PUBLISHED: l.again[l.mod[k]] = any = true; break;
		case SERVE_FETCH_PENDING: module_failed(m, SERVE_PENDING, 0); pending++; break;
		default: /* (an empty index found stays the answer) */
			if (m->status != SERVE_OK) {
				module_failed(m, SERVE_UNKNOWN_IMAGE, l.err[k]);
				m->reason = r->why[k][0] ? r->why[k] : NULL;
			}
			break;
		}
	}
	if (pending)
		serve_metrics_pending(srv->metrics, pending);
	if (any)
		rc = open_by_id(r, b, by_uuid, l.again);
	fetch_list_free(&l);
	return rc;
}

const char *serve_module_error(const struct serve_module *m)
{
	if (m->status == SERVE_PENDING)
		return "being fetched: ask again later";
	if (m->status == SERVE_UNKNOWN_IMAGE && m->reason)
		return m->reason; /* a failed fetch's: which source, what went wrong */
	return m->status != SERVE_OK && m->error ? symdb_strerror(m->error) : NULL;
}

/*
 * A context keeps every image it opened, and the catalog may have changed
 * since: an image re-indexed (a richer upload, `symdb build --force`) or
 * removed (`symdb rm`, gc) by anyone.  Each module named by id is checked
 * against the catalog (one lookup; an unchanged image is the same shared
 * mapping): a replaced one is answered from the current file, opened for
 * this request, and a removed one is unknown.  The context is then freed
 * after the request instead of going back to the pool.  Path modules are
 * not checked here: the context chose their image by the file (its symbol
 * table kind, SPEC §7.2.2, and without a build-id its bytes, §5.2), which
 * a catalog lookup by id would not.
 */
static int check_current(struct serve_server *srv, struct serve_run *r, struct serve_module *m)
{
	symdb_image *cur = NULL;
	const void *old_data, *cur_data;
	size_t old_len, cur_len;
	int rc = symdb_image_open_uuid(srv->db, &m->uuid, NULL, &cur);
	if (rc == SYMDB_E_NOT_INDEXED) {
		if (m->ref != SERVE_REF_PATH) {
			module_failed(m, SERVE_UNKNOWN_IMAGE, rc);
			r->stale = 1;
		}
		return 0;
	}
	if (rc)
		return 0; /* damaged or unreadable now: the next context says so */
	if (symdb_image_data(cur, &cur_data, &cur_len) == 0 &&
	    symdb_image_data(m->image, &old_data, &old_len) == 0 && cur_data == old_data) {
		symdb_image_close(cur);
		return 0;
	}
	symdb_image_close(cur);
	cur = NULL;
	SYMDB_OPTS(symdb_open_opts, o, .flags = srv->open_flags);
	if ((rc = symdb_image_open_uuid(srv->db, &m->uuid, &o, &cur)) != 0) {
		module_failed(m, damage_code(rc) ? SERVE_DAMAGED : SERVE_UNKNOWN_IMAGE, rc);
		r->stale = 1;
		return 0;
	}
	if (r->nfresh == r->fresh_cap) {
		size_t cap = r->fresh_cap ? 2 * r->fresh_cap : 8;
		symdb_image **f = realloc(r->fresh, cap * sizeof(*f));
		if (!f) {
			symdb_image_close(cur);
			return -ENOMEM;
		}
		r->fresh = f;
		r->fresh_cap = cap;
	}
	r->fresh[r->nfresh++] = cur;
	module_found(m, cur); /* (its stack cache key too: another index) */
	r->stale = 1;
	return 0;
}

int serve_batch_open(struct serve_server *srv, struct serve_batch *b, uint64_t deadline_ns,
                     enum serve_wait wait, struct serve_run **out, char *err, size_t errsz)
{
	int rc = check_shape(b, err, errsz);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < b->nmodules; i++)
		if (b->modules[i].ref == SERVE_REF_PATH && !srv->allow_paths) {
			snprintf(err, errsz, "modules[%u].path: not accepted by this server", i);
			return -EPERM;
		}
	struct serve_run *r = NULL;
	if ((rc = pool_get(srv->pool, &r, err, errsz)))
		return rc;
	bool *by_uuid = calloc(b->nmodules ? b->nmodules : 1, sizeof(*by_uuid));
	if (!by_uuid) {
		serve_batch_close(r);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < b->nmodules && rc >= 0; i++) {
		struct serve_module *m = &b->modules[i];
		module_failed(m, SERVE_UNKNOWN_IMAGE, 0);
		if (past(deadline_ns))
			module_failed(m, SERVE_DEADLINE, 0);
		else if (m->ref == SERVE_REF_PATH && (rc = open_path(r, m)) > 0)
			by_uuid[i] = true;
	}
	if (rc >= 0)
		rc = open_by_id(r, b, by_uuid, NULL);
	if (rc >= 0 && srv->fetch)
		rc = fetch_unknown(r, srv, b, by_uuid, deadline_ns, wait);
	/* (a path's image is the context's by the file's own identity, its
	 * symbol-table kind and, without a build-id, its bytes: not checked) */
	for (uint32_t i = 0; i < b->nmodules && rc >= 0; i++)
		if (b->modules[i].status == SERVE_OK &&
		    (b->modules[i].ref != SERVE_REF_PATH || by_uuid[i]))
			rc = check_current(srv, r, &b->modules[i]);
	free(by_uuid);
	if (rc < 0) {
		if (rc != -EWOULDBLOCK)
			snprintf(err, errsz, "finding the images: %s", symdb_strerror(rc));
		serve_batch_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* ---- resolving ------------------------------------------------------------ */

static enum serve_status from_sym(int st)
{
	switch (st) {
	case SYMDB_SYM_OK: return SERVE_OK;
	case SYMDB_SYM_NO_SYMBOL: return SERVE_NO_SYMBOL;
	case SYMDB_SYM_OUT_OF_RANGE: return SERVE_OUT_OF_RANGE;
	case SYMDB_SYM_DAMAGED: return SERVE_DAMAGED;
	default: return SERVE_UNKNOWN_IMAGE; /* NOT_INDEXED, NO_IMAGE */
	}
}

/* Walks the items in order: which module (addresses) or stack (frames)
 * the next item belongs to. */
struct cursor {
	uint32_t mod, stack;
};

static const struct serve_module *item_module(const struct serve_batch *b, struct cursor *c,
                                              uint32_t item, const struct serve_stack **stack)
{
	*stack = NULL;
	if (item < b->naddrs) {
		while (item >= b->modules[c->mod].first + b->modules[c->mod].count)
			c->mod++;
		return &b->modules[c->mod];
	}
	uint32_t f = item - b->naddrs;
	while (f >= b->stacks[c->stack].first + b->stacks[c->stack].count)
		c->stack++;
	*stack = &b->stacks[c->stack];
	return &b->modules[b->frames[f].module];
}

/* Stack frames answered by the resolver (the library or their module's
 * error) and not answered for the deadline: /metrics. */
struct frame_count {
	uint64_t resolved, late;
};

/* One chunk: requests for the items that need the library, the others'
 * results made here.  Returns the number of requests. */
static size_t chunk_requests(struct serve_run *r, const struct serve_batch *b, struct cursor *c,
                             uint32_t first, uint32_t count, bool late, struct frame_count *fc)
{
	size_t n = 0;
	for (uint32_t k = 0; k < count; k++) {
		uint32_t item = first + k;
		const struct serve_stack *st;
		const struct serve_module *m = item_module(b, c, item, &st);
		struct serve_result *o = &r->res[k];
		memset(o, 0, sizeof(*o));
		o->vaddr = SYMDB_ADDR_INVALID;
		if (st && !st->cached) {
			if (late)
				fc->late++;
			else
				fc->resolved++;
		}
		if (late || (st && st->cached) || m->status != SERVE_OK) {
			o->status = late ? SERVE_DEADLINE : st && st->cached ? SERVE_OK : m->status;
			continue;
		}
		symdb_request *q = &r->reqs[n];
		memset(q, 0, sizeof(*q));
		q->image_ref = SYMDB_IMAGE_HANDLE;
		q->image.handle = m->image;
		q->addr_kind = (uint8_t)m->addr_kind;
		q->addr = item < b->naddrs ? b->addrs[item] : b->frames[item - b->naddrs].addr;
		/* A vaddr of 2^64-1 is a real request to llvm-symbolizer (the
		 * last zero-size symbol, _end) but SYMDB_ADDR_INVALID to the
		 * library: 2^64-2 lies in the same symbols unless one ends at
		 * 2^64-1 (as symdb query asks it, cmd_query.c). */
		o->top = q->addr_kind == SYMDB_ADDR_VADDR && q->addr == SYMDB_ADDR_INVALID;
		if (o->top)
			q->addr = SYMDB_ADDR_INVALID - 1;
		q->load_address = m->load_address;
		r->slot[n++] = k;
	}
	return n;
}

static void take_results(struct serve_run *r, size_t n)
{
	for (size_t j = 0; j < n; j++) {
		const symdb_symbolized *y = &r->syms[j];
		struct serve_result *o = &r->res[r->slot[j]];
		o->status = from_sym(y->status);
		o->nframes = y->nframes;
		o->frames = y->frames;
		o->sym_name = y->sym_name;
		o->sym_addr = y->sym_addr;
		o->sym_size = y->sym_size;
		o->vaddr = y->vaddr;
		o->image = y->image;
	}
}

int serve_batch_resolve(struct serve_run *run, const struct serve_batch *b, uint64_t deadline_ns,
                        serve_chunk_fn fn, void *arg)
{
	uint64_t total = (uint64_t)b->naddrs + b->nframes;
	struct cursor c = { 0, 0 };
	SYMDB_OPTS(symdb_symbolize_opts, so, .flags = b->opt.demangle ? SYMDB_SYMBOLIZE_DEMANGLE : 0u);
	struct frame_count fc = { 0, 0 };
	bool late = false;
	int rc = 0;
	for (uint64_t first = 0; first < total && rc == 0; first += SERVE_CHUNK) {
		uint32_t count = (uint32_t)(total - first < SERVE_CHUNK ? total - first : SERVE_CHUNK);
		late = late || past(deadline_ns);
		struct frame_count now = { 0, 0 };
		size_t n = chunk_requests(run, b, &c, (uint32_t)first, count, late, &now);
		if (n) {
			rc = symdb_symbolize(run->sym, run->reqs, n, run->syms, &so);
			if (rc)
				break;
			take_results(run, n);
		}
		fc.resolved += now.resolved;
		fc.late += now.late;
		if (fn(arg, b, (uint32_t)first, count, run->res))
			rc = -ECANCELED;
	}
	if (run->pool->srv->metrics)
		serve_metrics_stack_frames(run->pool->srv->metrics, fc.resolved, 0, 0, fc.late);
	return rc;
}

int serve_batch_run(struct serve_server *srv, struct serve_batch *b, uint64_t deadline_ns,
                    enum serve_wait wait, serve_chunk_fn fn, void *arg, char *err, size_t errsz)
{
	struct serve_run *run = NULL;
	int rc = serve_batch_open(srv, b, deadline_ns, wait, &run, err, errsz);
	if (rc)
		return rc;
	rc = serve_batch_resolve(run, b, deadline_ns, fn, arg);
	if (rc && rc != -ECANCELED)
		snprintf(err, errsz, "symbolizing: %s", symdb_strerror(rc));
	serve_batch_close(run);
	return rc;
}

/* ---- what a result shows ---------------------------------------------------- */

/* One library frame as llvm-symbolizer-14 shows it (cli_query_print.c's
 * choice, for the JSON style). */
static void frame_from(const struct serve_options *opt, const symdb_frame *f,
                       struct serve_frame *o)
{
	memset(o, 0, sizeof(*o));
	if (opt->functions == SERVE_FN_LINKAGE)
		o->function = f->name;
	else if (opt->functions == SERVE_FN_SHORT)
		o->function = f->short_name;
	o->file = f->file;
	o->start_file = f->decl_file;
	o->line = f->line;
	o->column = f->column;
	o->discriminator = f->discriminator;
	o->start_line = f->decl_line;
	o->inlined = (f->flags & SYMDB_FRAME_INLINED) != 0;
	/* Without linkage names llvm-symbolizer does not consult the symbol
	 * table: the start is the DIE's DW_AT_low_pc, and an STT_FILE name
	 * (which comes with the symbol-table override) is not shown. */
	if (opt->functions == SERVE_FN_LINKAGE) {
		o->has_start = (f->flags & SYMDB_FRAME_HAS_START) != 0;
		o->start = f->start_addr;
	} else {
		o->has_start = (f->flags & SYMDB_FRAME_HAS_DWARF_START) != 0;
		o->start = f->dwarf_start_addr;
		if (f->flags & SYMDB_FRAME_FILE_FROM_SYMTAB)
			o->file = NULL;
	}
}

/* A frame that says nothing (a symbol-table-only frame shown without
 * linkage names): llvm-symbolizer prints it as its empty answer. */
static bool frame_empty(const struct serve_frame *f)
{
	return !f->function && !f->file && !f->line && !f->has_start && !f->start_file;
}

static size_t select_frames(const struct serve_options *opt, const struct serve_result *r,
                            struct serve_frame *out)
{
	if (opt->inlines) {
		for (uint32_t i = 0; i < r->nframes; i++)
			frame_from(opt, &r->frames[i], &out[i]);
		return r->nframes;
	}
	/* symbolizeCode: the innermost frame's line and DWARF name, the name
	 * and start replaced by the covering symbol's with linkage names (and
	 * a missing file by the symbol's STT_FILE name). */
	frame_from(opt, &r->frames[0], &out[0]);
	out[0].inlined = false;
	if (opt->functions == SERVE_FN_LINKAGE && r->sym_name) {
		const symdb_frame *outer = &r->frames[r->nframes - 1];
		out[0].function = r->sym_name;
		out[0].start = r->sym_addr;
		out[0].has_start = true;
		if (!out[0].file && (outer->flags & SYMDB_FRAME_FILE_FROM_SYMTAB))
			out[0].file = outer->file;
	}
	return 1;
}

size_t serve_result_frames(const struct serve_options *opt, const struct serve_result *r,
                           struct serve_frame *out)
{
	if (r->status != SERVE_OK || !r->nframes)
		return 0;
	size_t n = select_frames(opt, r, out);
	return n == 1 && frame_empty(&out[0]) ? 0 : n;
}
