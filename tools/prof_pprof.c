/* SPDX-License-Identifier: MIT */
/*
 * prof_pprof.c - a pprof profile in and out: gzip (or plain) protobuf read
 * whole into memory, unpacked by the protobuf-c code generated from the
 * installed profile.proto, checked, and packed and gzip'd again; and the
 * samples as folded stacks for the flame graph.
 *
 * The check is what pprof's own Profile.CheckValid() insists on, plus every
 * string index: a profile that passes can be walked without a bounds check
 * anywhere else, and one that fails is one line naming the first bad record.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "prof_pprof.h"

/* A profile larger than this once decompressed is refused: the whole
 * message is unpacked in memory, and profiles come from the network (a
 * gzip bomb stops here, not at the machine's memory). */
#define PPROF_MAX_RAW ((size_t)512 << 20)

/* What decoding may allocate: a few bytes of protobuf can become a struct
 * of a hundred (an empty Sample is 2 bytes, 88 decoded), so the message's
 * size alone does not bound memory.  Real profiles decode to well under
 * 16 times their size; 32 times plus a floor leaves room. */
#define PPROF_DECODE_FLOOR ((size_t)64 << 20)
#define PPROF_DECODE_FACTOR 32

struct budget {
	size_t used, limit;
	int over;
};

static void *budget_alloc(void *data, size_t size)
{
	struct budget *b = data;
	if (size > b->limit - b->used) {
		b->over = 1;
		return NULL;
	}
	b->used += size;
	return malloc(size);
}

static void budget_free(void *data, void *ptr)
{
	(void)data;
	free(ptr); /* the unpacked message is freed with the default allocator */
}

struct prof_block {
	struct prof_block *next;
	size_t used, cap;
	max_align_t data[];
};

void *prof_arena_alloc(struct prof_block **arena, size_t size)
{
	size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	struct prof_block *b = *arena;
	if (!b || b->cap - b->used < size) {
		size_t cap = size > ((size_t)1 << 20) ? size : (size_t)1 << 20;
		b = malloc(sizeof *b + cap);
		if (!b)
			return NULL;
		b->next = *arena;
		b->used = 0;
		b->cap = cap;
		*arena = b;
	}
	void *r = (char *)b->data + b->used;
	b->used += size;
	return r;
}

static void arena_free(struct prof_block *b)
{
	while (b) {
		struct prof_block *n = b->next;
		free(b);
		b = n;
	}
}

static void seterr(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errsz, fmt, ap);
	va_end(ap);
}

/* ---- bytes in --------------------------------------------------------------- */

/* Doubling, but never past one byte over the limit. */
static size_t grow_cap(size_t cap)
{
	return cap < (PPROF_MAX_RAW + 1) / 2 ? cap * 2 : PPROF_MAX_RAW + 1;
}

static int read_all(const char *path, unsigned char **buf, size_t *len, char *err, size_t errsz)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		seterr(err, errsz, "%s", strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	unsigned char *b = malloc(cap);
	while (b) {
		n += fread(b + n, 1, cap - n, f);
		if (n < cap)
			break;
		/* One byte past the limit tells "too large" from "exactly". */
		unsigned char *nb = cap <= PPROF_MAX_RAW ? realloc(b, cap = grow_cap(cap)) : NULL;
		if (!nb)
			free(b);
		b = nb;
	}
	int bad = !b || ferror(f);
	int e = !b ? ENOMEM : errno;
	if (f != stdin)
		fclose(f);
	if (bad) {
		free(b);
		seterr(err, errsz, "%s", !b && cap > PPROF_MAX_RAW ? "larger than 512 MiB" : strerror(e));
		return -1;
	}
	*buf = b;
	*len = n;
	return 0;
}

/* Point z at the rest of in (inlen bytes in all) and at out past its n
 * used bytes (cap in all), each count clamped to zlib's 32 bits, so that
 * gunzip and gzip_buf both take buffers over 4 GiB in several calls.  The
 * output space offered. */
static uInt z_window(z_stream *z, const unsigned char *in, size_t inlen, unsigned char *out,
                     size_t n, size_t cap)
{
	size_t left = inlen - (size_t)(z->next_in - in);

	z->avail_in = left > UINT32_MAX ? UINT32_MAX : (uInt)left;
	z->next_out = out + n;
	z->avail_out = cap - n > UINT32_MAX ? UINT32_MAX : (uInt)(cap - n);
	return z->avail_out;
}

/* Inflate a gzip stream (members may follow each other, as gzip allows). */
static int gunzip(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen,
                  char *err, size_t errsz)
{
	z_stream z = { 0 };
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
		seterr(err, errsz, "gzip: out of memory");
		return -1;
	}
	size_t cap = inlen < PPROF_MAX_RAW / 4 ? inlen * 4 + 4096 : PPROF_MAX_RAW + 1, n = 0;
	unsigned char *b = malloc(cap);
	int rc = b ? Z_OK : Z_MEM_ERROR;
	z.next_in = (unsigned char *)in;
	while (rc == Z_OK || rc == Z_BUF_ERROR) {
		if (n == cap) {
			unsigned char *nb = cap <= PPROF_MAX_RAW ? realloc(b, cap = grow_cap(cap)) : NULL;
			if (!nb) {
				rc = cap > PPROF_MAX_RAW ? Z_DATA_ERROR : Z_MEM_ERROR;
				z.msg = cap > PPROF_MAX_RAW ? "larger than 512 MiB uncompressed" : NULL;
				break;
			}
			b = nb;
		}
		uInt before = z_window(&z, in, inlen, b, n, cap);
		rc = inflate(&z, Z_NO_FLUSH);
		n += before - z.avail_out;
		if (rc == Z_STREAM_END && z.next_in < in + inlen && in[z.next_in - in] == 0x1f) {
			inflateReset(&z); /* another member */
			rc = Z_OK;
		} else if (rc == Z_BUF_ERROR && z.avail_in == 0 && n < cap) {
			break; /* input ended inside the stream */
		}
	}
	if (rc != Z_STREAM_END) {
		if (rc == Z_MEM_ERROR || !b)
			seterr(err, errsz, "gzip: out of memory");
		else if (rc == Z_BUF_ERROR || rc == Z_OK)
			seterr(err, errsz, "truncated gzip stream");
		else
			seterr(err, errsz, "gzip: %s", z.msg ? z.msg : "bad data");
		inflateEnd(&z);
		free(b);
		return -1;
	}
	inflateEnd(&z);
	*out = b;
	*outlen = n;
	return 0;
}

/* ---- the check -------------------------------------------------------------- */

static int id_cmp(const void *a, const void *b)
{
	const struct prof_id *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

size_t prof_id_find(const struct prof_idmap *m, uint64_t id)
{
	if (id - 1 < m->n && m->v[id - 1].id == id)
		return m->v[id - 1].idx;
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n && m->v[lo].id == id ? m->v[lo].idx : SIZE_MAX;
}

/* ids[i] is record i's id; what names the record kind in messages. */
static int idmap_build(struct prof_idmap *m, size_t n, uint64_t (*id_of)(const void *, size_t),
                       const void *recs, const char *what, char *err, size_t errsz)
{
	m->n = n;
	m->v = malloc((n ? n : 1) * sizeof *m->v);
	if (!m->v) {
		seterr(err, errsz, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		m->v[i].id = id_of(recs, i);
		m->v[i].idx = i;
		if (m->v[i].id == 0) {
			seterr(err, errsz, "%s %zu has id 0", what, i);
			return -1;
		}
	}
	qsort(m->v, n, sizeof *m->v, id_cmp);
	for (size_t i = 1; i < n; i++)
		if (m->v[i].id == m->v[i - 1].id) {
			seterr(err, errsz, "two %ss have id %" PRIu64, what, m->v[i].id);
			return -1;
		}
	return 0;
}

static uint64_t mapping_id(const void *r, size_t i)
{
	return ((Perftools__Profiles__Mapping *const *)r)[i]->id;
}
static uint64_t location_id(const void *r, size_t i)
{
	return ((Perftools__Profiles__Location *const *)r)[i]->id;
}
static uint64_t function_id(const void *r, size_t i)
{
	return ((Perftools__Profiles__Function *const *)r)[i]->id;
}

/* A string index: an int64 that must name an entry of the string table. */
#define STR_OK(pb, x) ((x) >= 0 && (uint64_t)(x) < (pb)->n_string_table)

static int check_strings(const Perftools__Profiles__Profile *pb, char *err, size_t errsz)
{
	if (pb->n_string_table == 0 || pb->string_table[0][0]) {
		seterr(err, errsz, "the string table does not start with \"\"");
		return -1;
	}
	int ok = STR_OK(pb, pb->drop_frames) && STR_OK(pb, pb->keep_frames) &&
	         STR_OK(pb, pb->default_sample_type) &&
	         (!pb->period_type ||
	          (STR_OK(pb, pb->period_type->type) && STR_OK(pb, pb->period_type->unit)));
	for (size_t i = 0; ok && i < pb->n_sample_type; i++)
		ok = STR_OK(pb, pb->sample_type[i]->type) && STR_OK(pb, pb->sample_type[i]->unit);
	for (size_t i = 0; ok && i < pb->n_comment; i++)
		ok = STR_OK(pb, pb->comment[i]);
	for (size_t i = 0; ok && i < pb->n_mapping; i++)
		ok = STR_OK(pb, pb->mapping[i]->filename) && STR_OK(pb, pb->mapping[i]->build_id);
	for (size_t i = 0; ok && i < pb->n_function; i++) {
		const Perftools__Profiles__Function *f = pb->function[i];
		ok = STR_OK(pb, f->name) && STR_OK(pb, f->system_name) && STR_OK(pb, f->filename);
	}
	for (size_t i = 0; ok && i < pb->n_sample; i++)
		for (size_t j = 0; ok && j < pb->sample[i]->n_label; j++) {
			const Perftools__Profiles__Label *l = pb->sample[i]->label[j];
			ok = STR_OK(pb, l->key) && STR_OK(pb, l->str) && STR_OK(pb, l->num_unit);
		}
	if (!ok)
		seterr(err, errsz, "a string index is outside the string table (%zu strings)",
		       pb->n_string_table);
	return ok ? 0 : -1;
}

static int check_refs(prof_pprof *p, char *err, size_t errsz)
{
	const Perftools__Profiles__Profile *pb = p->pb;
	for (size_t i = 0; i < pb->n_location; i++) {
		const Perftools__Profiles__Location *l = pb->location[i];
		if (l->mapping_id && prof_id_find(&p->maps, l->mapping_id) == SIZE_MAX) {
			seterr(err, errsz, "location %" PRIu64 " names mapping %" PRIu64
			       ", which the profile does not have", l->id, l->mapping_id);
			return -1;
		}
		for (size_t j = 0; j < l->n_line; j++)
			if (prof_id_find(&p->funcs, l->line[j]->function_id) == SIZE_MAX) {
				seterr(err, errsz, "location %" PRIu64 " names function %" PRIu64
				       ", which the profile does not have", l->id,
				       l->line[j]->function_id);
				return -1;
			}
	}
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		if (s->n_value != pb->n_sample_type) {
			seterr(err, errsz, "sample %zu has %zu values for %zu sample types", i,
			       s->n_value, pb->n_sample_type);
			return -1;
		}
		for (size_t j = 0; j < s->n_location_id; j++)
			if (prof_id_find(&p->locs, s->location_id[j]) == SIZE_MAX) {
				seterr(err, errsz, "sample %zu names location %" PRIu64
				       ", which the profile does not have", i, s->location_id[j]);
				return -1;
			}
	}
	return 0;
}

static int check_profile(prof_pprof *p, char *err, size_t errsz)
{
	const Perftools__Profiles__Profile *pb = p->pb;
	if (check_strings(pb, err, errsz) < 0 ||
	    idmap_build(&p->maps, pb->n_mapping, mapping_id, pb->mapping, "mapping", err, errsz) < 0 ||
	    idmap_build(&p->locs, pb->n_location, location_id, pb->location, "location", err,
	                errsz) < 0 ||
	    prof_pprof_index_functions(p, err, errsz) < 0)
		return -1;
	return check_refs(p, err, errsz);
}

int prof_pprof_index_functions(prof_pprof *p, char *err, size_t errsz)
{
	const Perftools__Profiles__Profile *pb = p->pb;
	return idmap_build(&p->funcs, pb->n_function, function_id, pb->function, "function", err,
	                   errsz);
}

int prof_pprof_read(const char *path, prof_pprof **out, char *err, size_t errsz)
{
	unsigned char *raw = NULL, *msg = NULL;
	size_t rawlen = 0, msglen = 0;
	if (read_all(path, &raw, &rawlen, err, errsz) < 0)
		return -1;
	if (rawlen == 0) { /* would decode as a profile with nothing in it */
		free(raw);
		seterr(err, errsz, "empty file");
		return -1;
	}
	if (rawlen >= 2 && raw[0] == 0x1f && raw[1] == 0x8b) {
		int rc = gunzip(raw, rawlen, &msg, &msglen, err, errsz);
		free(raw);
		if (rc < 0)
			return -1;
	} else {
		msg = raw;
		msglen = rawlen;
	}
	prof_pprof *p = calloc(1, sizeof *p);
	struct budget bud = { 0, PPROF_DECODE_FLOOR + PPROF_DECODE_FACTOR * msglen, 0 };
	ProtobufCAllocator alloc = { budget_alloc, budget_free, &bud };
	if (p)
		p->pb = perftools__profiles__profile__unpack(&alloc, msglen, msg);
	free(msg);
	if (!p || !p->pb) {
		if (!p)
			seterr(err, errsz, "out of memory");
		else if (bud.over)
			seterr(err, errsz, "needs more than %zu MiB of memory decoded (%zu MiB of protobuf; "
			       "the limit is 64 MiB + %d times its size)", bud.limit >> 20,
			       msglen >> 20, PPROF_DECODE_FACTOR);
		else
			seterr(err, errsz, "not a pprof profile (protobuf decoding failed)");
		free(p);
		return -1;
	}
	if (check_profile(p, err, errsz) < 0) {
		prof_pprof_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

/* Put the unpacked message's own arrays back, so that protobuf-c frees
 * exactly what it allocated. */
static void restore_unpacked(prof_pprof *p)
{
	Perftools__Profiles__Profile *pb = p->pb;
	if (p->replaced) {
		free(pb->string_table);
		free(pb->function);
		pb->string_table = p->orig_strings;
		pb->n_string_table = p->orig_nstrings;
		pb->function = p->orig_funcs;
		pb->n_function = p->orig_nfuncs;
	}
	for (size_t i = 0; p->saved && i < pb->n_location; i++)
		if (p->saved[i].changed) {
			pb->location[i]->line = p->saved[i].line;
			pb->location[i]->n_line = p->saved[i].n_line;
		}
}

void prof_pprof_free(prof_pprof *p)
{
	if (!p)
		return;
	if (p->pb) {
		restore_unpacked(p);
		perftools__profiles__profile__free_unpacked(p->pb, NULL);
	}
	for (size_t i = 0; i < p->nimages; i++)
		symdb_image_close(p->images[i]);
	free(p->images);
	free(p->saved);
	free(p->maps.v);
	free(p->locs.v);
	free(p->funcs.v);
	arena_free(p->arena);
	free(p);
}

/* ---- bytes out -------------------------------------------------------------- */

/* Level 1: the output is usually read once and soon; at a 1M-sample
 * profile the default level costs several times the symbolization. */
static int gzip_buf(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen)
{
	z_stream z = { 0 };
	if (deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	size_t cap = deflateBound(&z, inlen > UINT32_MAX ? UINT32_MAX : (uLong)inlen) + 64, n = 0;
	unsigned char *b = malloc(cap);
	int rc = b ? Z_OK : Z_MEM_ERROR;
	z.next_in = (unsigned char *)in;
	while (rc == Z_OK) {
		if (n == cap) {
			unsigned char *nb = realloc(b, cap *= 2);
			if (!nb) {
				rc = Z_MEM_ERROR;
				break;
			}
			b = nb;
		}
		uInt before = z_window(&z, in, inlen, b, n, cap);
		/* Z_FINISH only once the rest of in fits in one call */
		rc = deflate(&z, z.next_in + z.avail_in < in + inlen ? Z_NO_FLUSH : Z_FINISH);
		n += before - z.avail_out;
	}
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(b);
		return -ENOMEM;
	}
	*out = b;
	*outlen = n;
	return 0;
}

int prof_pprof_write(const prof_pprof *p, unsigned char **buf, size_t *len)
{
	size_t n = perftools__profiles__profile__get_packed_size(p->pb);
	unsigned char *raw = malloc(n ? n : 1);
	if (!raw)
		return -ENOMEM;
	perftools__profiles__profile__pack(p->pb, raw);
	int rc = gzip_buf(raw, n, buf, len);
	free(raw);
	return rc;
}

/* ---- folded stacks ---------------------------------------------------------- */

size_t prof_pprof_value_index(const prof_pprof *p)
{
	const Perftools__Profiles__Profile *pb = p->pb;
	if (pb->default_sample_type > 0) {
		const char *want = pb->string_table[pb->default_sample_type];
		for (size_t i = 0; i < pb->n_sample_type; i++)
			if (!strcmp(pb->string_table[pb->sample_type[i]->type], want))
				return i;
	}
	return pb->n_sample_type - 1;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Frames of one location, outermost first, appended at fr[*n]. */
static void fold_location(const prof_pprof *p, const Perftools__Profiles__Location *l,
                          prof_frame *fr, size_t *n, char *namebuf, size_t namesz)
{
	const Perftools__Profiles__Profile *pb = p->pb;
	size_t mi = l->mapping_id ? prof_id_find(&p->maps, l->mapping_id) : SIZE_MAX;
	const Perftools__Profiles__Mapping *m = mi == SIZE_MAX ? NULL : pb->mapping[mi];
	const char *file = m ? pb->string_table[m->filename] : "";
	const char *module = file[0] ? base_name(file) : NULL;
	uint8_t kind = !strncmp(file, "[kernel", 7) ? PROF_KERNEL : PROF_USER;
	if (l->n_line == 0) {
		if (module && l->address >= m->memory_start)
			snprintf(namebuf, namesz, "%s+0x%" PRIx64, module,
			         l->address - m->memory_start + m->file_offset);
		else
			snprintf(namebuf, namesz, "[unknown]");
		fr[(*n)++] = (prof_frame){ .name = namebuf, .kind = PROF_UNKNOWN, .module = module };
		return;
	}
	for (size_t j = l->n_line; j-- > 0;) {
		const Perftools__Profiles__Line *ln = l->line[j];
		const Perftools__Profiles__Function *f =
			pb->function[prof_id_find(&p->funcs, ln->function_id)];
		const char *name = pb->string_table[f->name];
		if (!name[0])
			name = pb->string_table[f->system_name];
		const char *src = pb->string_table[f->filename];
		/* No line: a box per function, as pprof's own graphs are by
		 * default; a line per box would split a function's box at
		 * every sampled line and every call site. */
		fr[(*n)++] = (prof_frame){ .name = name[0] ? name : "[unknown]",
			                   .file = src[0] ? src : NULL, .kind = kind,
			                   .inlined = j + 1 < l->n_line, .module = module };
	}
}

int prof_pprof_fold(const prof_pprof *p, prof_folded *f, const char **unit)
{
	const Perftools__Profiles__Profile *pb = p->pb;
	*unit = "samples";
	if (pb->n_sample_type == 0)
		return 0;
	size_t vi = prof_pprof_value_index(p);
	*unit = pb->string_table[pb->sample_type[vi]->unit];
	if (!(*unit)[0])
		*unit = "samples";
	prof_frame *fr = NULL;
	char *names = NULL; /* one "[unknown]"/"MODULE+0xOFF" buffer per frame */
	size_t cap = 0;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		size_t need = 0;
		for (size_t j = 0; j < s->n_location_id; j++)
			need += pb->location[prof_id_find(&p->locs, s->location_id[j])]->n_line + 1;
		if (need > cap) {
			prof_frame *nf = realloc(fr, need * sizeof *fr);
			char *nn = nf ? realloc(names, need * 128) : NULL;
			if (nf)
				fr = nf;
			if (!nn) {
				rc = -ENOMEM;
				break;
			}
			names = nn;
			cap = need;
		}
		if (s->value[vi] <= 0)
			continue;
		size_t n = 0;
		for (size_t j = s->n_location_id; j-- > 0;)
			fold_location(p, pb->location[prof_id_find(&p->locs, s->location_id[j])], fr, &n,
			              names + n * 128, 128);
		rc = prof_folded_add(f, fr, n, (uint64_t)s->value[vi]);
	}
	free(fr);
	free(names);
	return rc;
}
