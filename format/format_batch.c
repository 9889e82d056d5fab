/* SPDX-License-Identifier: MIT */
/*
 * format_batch.c - the binary batch messages of `symdb serve` (SPEC §16):
 * request and response, each decoded by one validating pass that trusts no
 * count, and encoded by a writer (requests, into the caller's buffer) and an
 * encoder (responses, with a string table deduplicated by a hash of the
 * bytes).  The decoders allocate nothing; the encoder allocates only through
 * the caller's realloc function.
 */
#include "symdb_batch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "format_header.h"
#include "symdb_endian.h"

/* The library's addr kinds (symdb.h enum symdb_addr_kind: vaddr, offset,
 * fileoff, runtime); format/ cannot include symdb.h. */
#define ADDR_KIND_RUNTIME 3u
#define ADDR_KIND_MAX     3u

/* The smallest module record: its head and a one-byte id (§16.3). */
#define MODULE_MIN (SYMDB_BATCH_MODULE_HEAD_SIZE + 1u)

/* ---- options and errors ----------------------------------------------------- */

/* The caller's options, as far as its sz reaches; past it, zero.  A tail
 * beyond what this library knows must be zero (libbpf's OPTS_VALID). */
static int take_opts(const symdb_batch_opts *in, symdb_batch_opts *o)
{
	memset(o, 0, sizeof *o);
	if (!in)
		return 0;
	if (in->sz < offsetof(symdb_batch_opts, errbuf_sz) + sizeof in->errbuf_sz)
		return SYMDB_E_INVAL;
	memcpy(o, in, in->sz < sizeof *o ? in->sz : sizeof *o);
	for (size_t i = sizeof *o; i < in->sz; i++)
		if (((const uint8_t *)in)[i])
			return SYMDB_E_INVAL;
	if (o->flags || o->reserved_)
		return SYMDB_E_INVAL;
	return 0;
}

__attribute__((format(printf, 3, 4))) static int fail(const symdb_batch_opts *o, int rc,
                                                      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rc = fmt_verr(o->errbuf, o->errbuf_sz, rc, fmt, ap);
	va_end(ap);
	return rc;
}

static int check_version(const symdb_batch_opts *o, const uint8_t *p, const char *magic,
                         const char *what)
{
	if (memcmp(p, magic, 4) != 0)
		return fail(o, SYMDB_E_INVAL, "%s: bad magic (want '%s')", what, magic);
	if (p[4] != SYMDB_BATCH_VERSION_MAJOR)
		return fail(o, SYMDB_E_VERSION, "%s: version %u.%u (this reader knows %u.x)", what,
		            p[4], p[5], SYMDB_BATCH_VERSION_MAJOR);
	return 0;
}

/* ---- requests: decoding ------------------------------------------------------ */

static int check_limits(const symdb_batch_opts *o, const symdb_batch_request *rq)
{
	uint64_t items = (uint64_t)rq->naddrs + rq->nframes;

	if (o->max_modules && rq->nmodules > o->max_modules)
		return fail(o, SYMDB_E_TOO_BIG, "request: %u modules (limit %u)", rq->nmodules,
		            o->max_modules);
	if (o->max_stacks && rq->nstacks > o->max_stacks)
		return fail(o, SYMDB_E_TOO_BIG, "request: %u stacks (limit %u)", rq->nstacks,
		            o->max_stacks);
	if (o->max_addresses && items > o->max_addresses)
		return fail(o, SYMDB_E_TOO_BIG, "request: %llu addresses and stack frames (limit %u)",
		            (unsigned long long)items, o->max_addresses);
	return 0;
}

/* Arch names are identifiers ("x86_64", "arm64e"): nothing a log or a path
 * could misread. */
static bool arch_ok(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
		      (p[i] >= '0' && p[i] <= '9') || p[i] == '_'))
			return false;
	return true;
}

/* Module record at p[0..left): its fields into m and its size, or 0 with
 * the reason in o's errbuf (rc set). */
static size_t read_module(const symdb_batch_opts *o, const uint8_t *p, size_t left, size_t at,
                          uint32_t i, symdb_batch_module *m, int *rc)
{
	size_t need;

	*rc = SYMDB_E_INVAL;
	if (left < SYMDB_BATCH_MODULE_HEAD_SIZE) {
		fail(o, *rc, "request: module %u at offset %zu: truncated", i, at);
		return 0;
	}
	m->id_kind = p[0];
	m->addr_kind = p[1];
	m->id_len = fmt_be16(p + 2);
	m->arch_len = p[4];
	m->load_address = fmt_be64(p + 8);
	m->naddrs = fmt_be32(p + 16);
	if (m->id_kind < SYMDB_BATCH_ID_BUILD_ID || m->id_kind > SYMDB_BATCH_ID_PATH) {
		fail(o, *rc, "request: module %u: unknown Id_Kind %u", i, m->id_kind);
		return 0;
	}
	if (m->addr_kind > ADDR_KIND_MAX) {
		fail(o, *rc, "request: module %u: unknown Addr_Kind %u", i, m->addr_kind);
		return 0;
	}
	if (p[5] | p[6] | p[7]) {
		fail(o, *rc, "request: module %u: Reserved is not zero", i);
		return 0;
	}
	if (m->addr_kind != ADDR_KIND_RUNTIME && m->load_address) {
		fail(o, *rc, "request: module %u: Load_Address set for Addr_Kind %u", i, m->addr_kind);
		return 0;
	}
	if (m->id_len == 0 ||
	    m->id_len > (m->id_kind == SYMDB_BATCH_ID_PATH ? SYMDB_BATCH_PATH_MAX : SYMDB_BATCH_ID_MAX)) {
		fail(o, *rc, "request: module %u: Id_Length %u out of range for Id_Kind %u", i,
		     m->id_len, m->id_kind);
		return 0;
	}
	if (m->arch_len > SYMDB_BATCH_ARCH_MAX) {
		fail(o, *rc, "request: module %u: Arch_Length %u above %u", i, m->arch_len,
		     SYMDB_BATCH_ARCH_MAX);
		return 0;
	}
	need = SYMDB_BATCH_MODULE_HEAD_SIZE + m->id_len + m->arch_len + 8 * (uint64_t)m->naddrs;
	if (need > left) {
		fail(o, *rc, "request: module %u at offset %zu: %zu bytes declared, %zu left", i, at,
		     need, left);
		return 0;
	}
	m->id = p + SYMDB_BATCH_MODULE_HEAD_SIZE;
	m->arch = m->id + m->id_len;
	m->addrs_be = m->arch + m->arch_len;
	if (m->id_kind == SYMDB_BATCH_ID_PATH && memchr(m->id, 0, m->id_len)) {
		fail(o, *rc, "request: module %u: path holds a NUL byte", i);
		return 0;
	}
	if (!arch_ok(m->arch, m->arch_len)) {
		fail(o, *rc, "request: module %u: Arch is not [A-Za-z0-9_]", i);
		return 0;
	}
	*rc = 0;
	return need;
}

/* The stacks from rq->stacks_off_ to the end: every frame's module exists,
 * the frames add up, nothing follows. */
static int walk_stacks(const symdb_batch_opts *o, const symdb_batch_request *rq)
{
	const uint8_t *p = rq->msg;
	size_t off = rq->stacks_off_;
	uint64_t frames = 0;

	for (uint32_t s = 0; s < rq->nstacks; s++) {
		uint32_t n;

		if (rq->len - off < SYMDB_BATCH_STACK_HEAD_SIZE)
			return fail(o, SYMDB_E_INVAL, "request: stack %u at offset %zu: truncated", s, off);
		n = fmt_be32(p + off);
		off += SYMDB_BATCH_STACK_HEAD_SIZE;
		if (n > rq->nframes - frames)
			return fail(o, SYMDB_E_INVAL, "request: stack %u: more frames than Frame_Count %u",
			            s, rq->nframes);
		if ((uint64_t)n * SYMDB_BATCH_STACK_FRAME_SIZE > rq->len - off)
			return fail(o, SYMDB_E_INVAL, "request: stack %u at offset %zu: truncated", s,
			            off);
		for (uint32_t k = 0; k < n; k++, off += SYMDB_BATCH_STACK_FRAME_SIZE)
			if (fmt_be32(p + off) >= rq->nmodules)
				return fail(o, SYMDB_E_INVAL,
				            "request: stack %u frame %u: Module_Index %u, only %u modules", s,
				            k, fmt_be32(p + off), rq->nmodules);
		frames += n;
	}
	if (frames != rq->nframes)
		return fail(o, SYMDB_E_INVAL, "request: stacks hold %llu frames, Frame_Count says %u",
		            (unsigned long long)frames, rq->nframes);
	if (off != rq->len)
		return fail(o, SYMDB_E_INVAL, "request: %zu bytes after the last stack", rq->len - off);
	return 0;
}

static int walk_modules(const symdb_batch_opts *o, symdb_batch_request *rq)
{
	size_t off = SYMDB_BATCH_REQUEST_HEADER_SIZE;
	uint64_t addrs = 0;
	symdb_batch_module m;
	int rc;

	for (uint32_t i = 0; i < rq->nmodules; i++) {
		size_t n = read_module(o, rq->msg + off, rq->len - off, off, i, &m, &rc);

		if (!n)
			return rc;
		addrs += m.naddrs;
		if (addrs > rq->naddrs)
			return fail(o, SYMDB_E_INVAL,
			            "request: module %u: more addresses than Address_Count %u", i,
			            rq->naddrs);
		off += n;
	}
	if (addrs != rq->naddrs)
		return fail(o, SYMDB_E_INVAL, "request: modules hold %llu addresses, Address_Count says %u",
		            (unsigned long long)addrs, rq->naddrs);
	rq->stacks_off_ = off;
	return 0;
}

int symdb_batch_request_parse(const void *msg, size_t len, const symdb_batch_opts *opts,
                              symdb_batch_request *out)
{
	const uint8_t *p = msg;
	symdb_batch_opts o;
	symdb_batch_request rq = { 0 };
	uint64_t least;
	int rc;

	if ((rc = take_opts(opts, &o)) < 0 || !out || (!msg && len))
		return rc < 0 ? rc : SYMDB_E_INVAL;
	if (len < SYMDB_BATCH_REQUEST_HEADER_SIZE)
		return fail(&o, SYMDB_E_INVAL, "request: %zu bytes, shorter than its %u-byte header", len,
		            SYMDB_BATCH_REQUEST_HEADER_SIZE);
	if ((rc = check_version(&o, p, SYMDB_BATCH_REQUEST_MAGIC, "request")) < 0)
		return rc;
	rq.msg = p;
	rq.len = len;
	rq.version_minor = p[5];
	rq.flags = fmt_be16(p + 6);
	rq.nmodules = fmt_be32(p + 8);
	rq.naddrs = fmt_be32(p + 12);
	rq.nstacks = fmt_be32(p + 16);
	rq.nframes = fmt_be32(p + 20);
	if (rq.flags & ~SYMDB_BATCH_REQUEST_FLAGS)
		return fail(&o, SYMDB_E_INVAL, "request: unknown Flags bits 0x%x",
		            rq.flags & ~SYMDB_BATCH_REQUEST_FLAGS);
	if ((rq.flags & SYMDB_BATCH_FUNCTIONS_MASK) >> SYMDB_BATCH_FUNCTIONS_SHIFT > SYMDB_BATCH_FN_NONE)
		return fail(&o, SYMDB_E_INVAL, "request: Flags: unknown Functions value 3");
	if ((rc = check_limits(&o, &rq)) < 0)
		return rc;
	/* §16.3: the counts must fit the length before anything is walked or
	 * sized from them (u32 counts times small sizes: no u64 overflow). */
	least = SYMDB_BATCH_REQUEST_HEADER_SIZE + (uint64_t)rq.nmodules * MODULE_MIN +
	        (uint64_t)rq.naddrs * 8 + (uint64_t)rq.nstacks * SYMDB_BATCH_STACK_HEAD_SIZE +
	        (uint64_t)rq.nframes * SYMDB_BATCH_STACK_FRAME_SIZE;
	if (least > len)
		return fail(&o, SYMDB_E_INVAL,
		            "request: its counts need at least %llu bytes, the message has %zu",
		            (unsigned long long)least, len);
	if ((rc = walk_modules(&o, &rq)) < 0 || (rc = walk_stacks(&o, &rq)) < 0)
		return rc;
	*out = rq;
	return 0;
}

ptrdiff_t symdb_batch_request_modules(const symdb_batch_request *rq, symdb_batch_module *mods,
                                      size_t cap)
{
	symdb_batch_opts o = { 0 };
	size_t off = SYMDB_BATCH_REQUEST_HEADER_SIZE;
	int rc;

	if (!rq || (!mods && rq->nmodules) || cap < rq->nmodules)
		return SYMDB_E_INVAL;
	for (uint32_t i = 0; i < rq->nmodules; i++) {
		size_t n = read_module(&o, rq->msg + off, rq->len - off, off, i, &mods[i], &rc);

		if (!n) /* the message changed since it was parsed */
			return rc;
		off += n;
	}
	return rq->nmodules;
}

void symdb_batch_module_addrs(const symdb_batch_module *m, uint64_t *out)
{
	for (uint32_t i = 0; i < m->naddrs; i++)
		out[i] = fmt_be64(m->addrs_be + 8 * (size_t)i);
}

int symdb_batch_request_stacks(const symdb_batch_request *rq, uint32_t *counts, uint32_t *modules,
                               uint64_t *addrs)
{
	const uint8_t *p;
	size_t off, k = 0;

	if (!rq || (rq->nstacks && !counts) || (rq->nframes && (!modules || !addrs)))
		return SYMDB_E_INVAL;
	p = rq->msg;
	off = rq->stacks_off_;
	for (uint32_t s = 0; s < rq->nstacks; s++) {
		counts[s] = fmt_be32(p + off);
		off += SYMDB_BATCH_STACK_HEAD_SIZE;
		for (uint32_t j = 0; j < counts[s]; j++, k++, off += SYMDB_BATCH_STACK_FRAME_SIZE) {
			modules[k] = fmt_be32(p + off);
			addrs[k] = fmt_be64(p + off + 4);
		}
	}
	return 0;
}

/* ---- requests: writing ------------------------------------------------------- */

/* n bytes at the writer's end, or NULL when measuring or out of room (then
 * err is set for the latter); len advances either way. */
static uint8_t *w_take(symdb_batch_writer *w, size_t n)
{
	uint8_t *p = NULL;

	if (w->buf && w->len + n <= w->cap)
		p = w->buf + w->len;
	else if (w->buf && !w->err)
		w->err = SYMDB_E_TOO_BIG;
	w->len += n;
	return p;
}

static int w_fail(symdb_batch_writer *w, int rc)
{
	if (!w->err)
		w->err = rc;
	return w->err;
}

int symdb_batch_writer_begin(symdb_batch_writer *w, void *buf, size_t cap, unsigned flags,
                             uint32_t nmodules, uint32_t naddrs, uint32_t nstacks, uint32_t nframes)
{
	uint8_t *p;

	if (!w)
		return SYMDB_E_INVAL;
	memset(w, 0, sizeof *w);
	w->buf = buf;
	w->cap = buf ? cap : 0;
	if ((flags & ~SYMDB_BATCH_REQUEST_FLAGS) ||
	    (flags & SYMDB_BATCH_FUNCTIONS_MASK) >> SYMDB_BATCH_FUNCTIONS_SHIFT > SYMDB_BATCH_FN_NONE)
		return w_fail(w, SYMDB_E_INVAL);
	w->nmodules_ = w->modules_left_ = nmodules;
	w->addrs_left_ = naddrs;
	w->stacks_left_ = nstacks;
	w->frames_left_ = nframes;
	if ((p = w_take(w, SYMDB_BATCH_REQUEST_HEADER_SIZE))) {
		memcpy(p, SYMDB_BATCH_REQUEST_MAGIC, 4);
		p[4] = SYMDB_BATCH_VERSION_MAJOR;
		p[5] = SYMDB_BATCH_VERSION_MINOR;
		fmt_put16(p + 6, (uint16_t)flags);
		fmt_put32(p + 8, nmodules);
		fmt_put32(p + 12, naddrs);
		fmt_put32(p + 16, nstacks);
		fmt_put32(p + 20, nframes);
	}
	return w->err;
}

static bool module_ok(const symdb_batch_module *m)
{
	size_t max = m->id_kind == SYMDB_BATCH_ID_PATH ? SYMDB_BATCH_PATH_MAX : SYMDB_BATCH_ID_MAX;

	return m->id_kind >= SYMDB_BATCH_ID_BUILD_ID && m->id_kind <= SYMDB_BATCH_ID_PATH &&
	       m->addr_kind <= ADDR_KIND_MAX && m->id_len >= 1 && m->id_len <= max && m->id &&
	       (m->id_kind != SYMDB_BATCH_ID_PATH || !memchr(m->id, 0, m->id_len)) &&
	       m->arch_len <= SYMDB_BATCH_ARCH_MAX && (!m->arch_len || m->arch) &&
	       arch_ok(m->arch, m->arch_len) &&
	       (m->addr_kind == ADDR_KIND_RUNTIME || !m->load_address);
}

int symdb_batch_writer_module(symdb_batch_writer *w, const symdb_batch_module *m,
                              const uint64_t *addrs)
{
	uint8_t *p;

	if (!w || w->err)
		return w ? w->err : SYMDB_E_INVAL;
	if (!m || !module_ok(m) || (m->naddrs && !addrs) || !w->modules_left_ ||
	    m->naddrs > w->addrs_left_)
		return w_fail(w, SYMDB_E_INVAL);
	w->modules_left_--;
	w->addrs_left_ -= m->naddrs;
	if ((p = w_take(w, SYMDB_BATCH_MODULE_HEAD_SIZE + (size_t)m->id_len + m->arch_len +
	                       8 * (size_t)m->naddrs))) {
		memset(p, 0, SYMDB_BATCH_MODULE_HEAD_SIZE);
		p[0] = m->id_kind;
		p[1] = m->addr_kind;
		fmt_put16(p + 2, m->id_len);
		p[4] = m->arch_len;
		fmt_put64(p + 8, m->load_address);
		fmt_put32(p + 16, m->naddrs);
		p += SYMDB_BATCH_MODULE_HEAD_SIZE;
		memcpy(p, m->id, m->id_len);
		p += m->id_len;
		if (m->arch_len)
			memcpy(p, m->arch, m->arch_len);
		p += m->arch_len;
		for (uint32_t i = 0; i < m->naddrs; i++)
			fmt_put64(p + 8 * (size_t)i, addrs[i]);
	}
	return w->err;
}

int symdb_batch_writer_stack(symdb_batch_writer *w, const uint32_t *modules, const uint64_t *addrs,
                             uint32_t nframes)
{
	uint8_t *p;

	if (!w || w->err)
		return w ? w->err : SYMDB_E_INVAL;
	if ((nframes && (!modules || !addrs)) || w->modules_left_ || !w->stacks_left_ ||
	    nframes > w->frames_left_)
		return w_fail(w, SYMDB_E_INVAL);
	for (uint32_t k = 0; k < nframes; k++)
		if (modules[k] >= w->nmodules_)
			return w_fail(w, SYMDB_E_INVAL);
	w->stacks_left_--;
	w->frames_left_ -= nframes;
	if ((p = w_take(w, SYMDB_BATCH_STACK_HEAD_SIZE + SYMDB_BATCH_STACK_FRAME_SIZE * (size_t)nframes))) {
		fmt_put32(p, nframes);
		p += SYMDB_BATCH_STACK_HEAD_SIZE;
		for (uint32_t k = 0; k < nframes; k++, p += SYMDB_BATCH_STACK_FRAME_SIZE) {
			fmt_put32(p, modules[k]);
			fmt_put64(p + 4, addrs[k]);
		}
	}
	return w->err;
}

int symdb_batch_writer_end(symdb_batch_writer *w, size_t *len)
{
	if (!w)
		return SYMDB_E_INVAL;
	if (!w->err && (w->modules_left_ || w->addrs_left_ || w->stacks_left_ || w->frames_left_))
		w->err = SYMDB_E_INVAL;
	if (len)
		*len = w->len;
	return w->err;
}

/* ---- responses: decoding ----------------------------------------------------- */

static int check_ref(const symdb_batch_opts *o, const symdb_batch_response *r, const char *rec,
                     uint32_t k, uint32_t ref, const char *field)
{
	if (ref != SYMDB_BATCH_NONE && ref >= r->string_bytes)
		return fail(o, SYMDB_E_INVAL, "response: %s %u: %s %u past the %u-byte string table",
		            rec, k, field, ref, r->string_bytes);
	return 0;
}

static bool zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* §16.4 module records: their fields, and the results they declare. */
static int walk_modules_out(const symdb_batch_opts *o, const symdb_batch_response *r,
                            uint64_t *results)
{
	for (uint32_t i = 0; i < r->nmodules; i++) {
		const uint8_t *m = r->msg + SYMDB_BATCH_RESPONSE_HEADER_SIZE +
		                   SYMDB_BATCH_MODULE_RECORD_SIZE * (size_t)i;
		int rc;

		if (fmt_be16(m + 2) || fmt_be32(m + 12))
			return fail(o, SYMDB_E_INVAL, "response: module %u: Reserved is not zero", i);
		if (m[1] > SYMDB_BATCH_ID_MAX || !zero(m + 16 + m[1], SYMDB_BATCH_ID_MAX - m[1]))
			return fail(o, SYMDB_E_INVAL, "response: module %u: Image_Id_Length %u, or "
			            "Image_Id not zero-padded", i, m[1]);
		if ((rc = check_ref(o, r, "module", i, fmt_be32(m + 8), "Error")) < 0)
			return rc;
		*results += fmt_be32(m + 4);
	}
	return 0;
}

/* §16.4 result records: fields, frames only on OK, the frames they declare. */
static int walk_results(const symdb_batch_opts *o, const symdb_batch_response *r, uint64_t *frames)
{
	for (uint32_t i = 0; i < r->nresults; i++) {
		const uint8_t *q = r->msg + r->results_off_ + SYMDB_BATCH_RESULT_RECORD_SIZE * (size_t)i;
		uint32_t n = fmt_be32(q + 4), sym = fmt_be32(q + 8);
		int rc;

		if (q[1] | q[2] | q[3] || fmt_be32(q + 12))
			return fail(o, SYMDB_E_INVAL, "response: result %u: Reserved is not zero", i);
		if (n && q[0] != SYMDB_BATCH_OK)
			return fail(o, SYMDB_E_INVAL, "response: result %u: status %u with %u frames", i,
			            q[0], n);
		if (sym == SYMDB_BATCH_NONE && !zero(q + 16, 24))
			return fail(o, SYMDB_E_INVAL, "response: result %u: symbol fields without a Symbol",
			            i);
		if ((rc = check_ref(o, r, "result", i, sym, "Symbol")) < 0)
			return rc;
		*frames += n;
	}
	return 0;
}

static int walk_frames(const symdb_batch_opts *o, const symdb_batch_response *r)
{
	static const char *const names[] = { "Function", "File", "Start_File" };

	for (uint32_t k = 0; k < r->nframes; k++) {
		const uint8_t *f = r->msg + r->frames_off_ + SYMDB_BATCH_FRAME_RECORD_SIZE * (size_t)k;
		uint32_t flags = fmt_be32(f + 28);
		int rc;

		for (int j = 0; j < 3; j++)
			if ((rc = check_ref(o, r, "frame", k, fmt_be32(f + 4 * j), names[j])) < 0)
				return rc;
		if (flags & ~SYMDB_BATCH_FRAME_FLAGS)
			return fail(o, SYMDB_E_INVAL, "response: frame %u: unknown Flags bits 0x%x", k,
			            flags & ~SYMDB_BATCH_FRAME_FLAGS);
		if (!(flags & SYMDB_BATCH_FRAME_HAS_START) && fmt_be64(f + 32))
			return fail(o, SYMDB_E_INVAL, "response: frame %u: Start without HAS_START", k);
	}
	return 0;
}

/* The sums: module and stack records against Result_Count, result
 * records against Frame_Count. */
static int walk_response(const symdb_batch_opts *o, const symdb_batch_response *r)
{
	uint64_t results = 0, frames = 0;
	int rc;

	if ((rc = walk_modules_out(o, r, &results)) < 0)
		return rc;
	for (uint32_t i = 0; i < r->nstacks; i++)
		results += fmt_be32(r->msg + r->stacks_off_ + 4 * (size_t)i);
	if (results != r->nresults)
		return fail(o, SYMDB_E_INVAL, "response: modules and stacks hold %llu results, "
		            "Result_Count says %u", (unsigned long long)results, r->nresults);
	if ((rc = walk_results(o, r, &frames)) < 0)
		return rc;
	if (frames != r->nframes)
		return fail(o, SYMDB_E_INVAL, "response: results hold %llu frames, Frame_Count says %u",
		            (unsigned long long)frames, r->nframes);
	return walk_frames(o, r);
}

int symdb_batch_response_parse(const void *msg, size_t len, const symdb_batch_opts *opts,
                               symdb_batch_response *out)
{
	const uint8_t *p = msg;
	symdb_batch_opts o;
	symdb_batch_response r = { 0 };
	uint64_t want;
	int rc;

	if ((rc = take_opts(opts, &o)) < 0 || !out || (!msg && len))
		return rc < 0 ? rc : SYMDB_E_INVAL;
	if (len < SYMDB_BATCH_RESPONSE_HEADER_SIZE)
		return fail(&o, SYMDB_E_INVAL, "response: %zu bytes, shorter than its %u-byte header",
		            len, SYMDB_BATCH_RESPONSE_HEADER_SIZE);
	if ((rc = check_version(&o, p, SYMDB_BATCH_RESPONSE_MAGIC, "response")) < 0)
		return rc;
	if (fmt_be16(p + 6) || fmt_be32(p + 28))
		return fail(&o, SYMDB_E_INVAL, "response: Flags or Reserved is not zero");
	r.msg = p;
	r.len = len;
	r.version_minor = p[5];
	r.nmodules = fmt_be32(p + 8);
	r.nstacks = fmt_be32(p + 12);
	r.nresults = fmt_be32(p + 16);
	r.nframes = fmt_be32(p + 20);
	r.string_bytes = fmt_be32(p + 24);
	/* §16.4: the length is exactly what the counts say (no u64 overflow:
	 * u32 counts times sizes below 64). */
	want = SYMDB_BATCH_RESPONSE_HEADER_SIZE + (uint64_t)r.nmodules * SYMDB_BATCH_MODULE_RECORD_SIZE +
	       (uint64_t)r.nstacks * SYMDB_BATCH_STACK_RECORD_SIZE +
	       (uint64_t)r.nresults * SYMDB_BATCH_RESULT_RECORD_SIZE +
	       (uint64_t)r.nframes * SYMDB_BATCH_FRAME_RECORD_SIZE + r.string_bytes;
	if (want != len)
		return fail(&o, SYMDB_E_INVAL, "response: its counts give %llu bytes, the message has %zu",
		            (unsigned long long)want, len);
	r.stacks_off_ = SYMDB_BATCH_RESPONSE_HEADER_SIZE + (size_t)r.nmodules * SYMDB_BATCH_MODULE_RECORD_SIZE;
	r.results_off_ = r.stacks_off_ + (size_t)r.nstacks * SYMDB_BATCH_STACK_RECORD_SIZE;
	r.frames_off_ = r.results_off_ + (size_t)r.nresults * SYMDB_BATCH_RESULT_RECORD_SIZE;
	r.strings_off_ = r.frames_off_ + (size_t)r.nframes * SYMDB_BATCH_FRAME_RECORD_SIZE;
	if (r.string_bytes == SYMDB_BATCH_NONE)
		return fail(&o, SYMDB_E_INVAL, "response: String_Bytes is 0xffffffff");
	if (r.string_bytes && p[len - 1] != 0)
		return fail(&o, SYMDB_E_INVAL, "response: the string table does not end in NUL");
	if ((rc = walk_response(&o, &r)) < 0)
		return rc;
	*out = r;
	return 0;
}

static const char *string_at(const symdb_batch_response *r, uint32_t ref)
{
	return ref == SYMDB_BATCH_NONE ? NULL : (const char *)r->msg + r->strings_off_ + ref;
}

void symdb_batch_response_module(const symdb_batch_response *r, uint32_t i,
                                 symdb_batch_module_result *out)
{
	const uint8_t *m = r->msg + SYMDB_BATCH_RESPONSE_HEADER_SIZE +
	                   SYMDB_BATCH_MODULE_RECORD_SIZE * (size_t)i;

	out->status = m[0];
	out->image_id_len = m[1];
	out->nresults = fmt_be32(m + 4);
	out->error = string_at(r, fmt_be32(m + 8));
	memcpy(out->image_id, m + 16, SYMDB_BATCH_ID_MAX);
}

void symdb_batch_response_stack(const symdb_batch_response *r, uint32_t i, uint32_t *nresults)
{
	*nresults = fmt_be32(r->msg + r->stacks_off_ + 4 * (size_t)i);
}

void symdb_batch_response_result(const symdb_batch_response *r, uint32_t i,
                                 symdb_batch_result *out)
{
	const uint8_t *q = r->msg + r->results_off_ + SYMDB_BATCH_RESULT_RECORD_SIZE * (size_t)i;

	out->status = q[0];
	out->nframes = fmt_be32(q + 4);
	out->sym_name = string_at(r, fmt_be32(q + 8));
	out->sym_start = fmt_be64(q + 16);
	out->sym_size = fmt_be64(q + 24);
	out->sym_offset = fmt_be64(q + 32);
}

void symdb_batch_response_frame(const symdb_batch_response *r, uint32_t k, symdb_batch_frame *out)
{
	const uint8_t *f = r->msg + r->frames_off_ + SYMDB_BATCH_FRAME_RECORD_SIZE * (size_t)k;

	out->function = string_at(r, fmt_be32(f));
	out->file = string_at(r, fmt_be32(f + 4));
	out->start_file = string_at(r, fmt_be32(f + 8));
	out->line = fmt_be32(f + 12);
	out->column = fmt_be32(f + 16);
	out->discriminator = fmt_be32(f + 20);
	out->start_line = fmt_be32(f + 24);
	out->flags = fmt_be32(f + 28);
	out->reserved_ = 0;
	out->start = fmt_be64(f + 32);
}

/* ---- responses: encoding ----------------------------------------------------- */

/* A growable byte array through the caller's realloc. */
struct bytes {
	uint8_t *p;
	size_t len, cap;
};

/* One string of the table: where it is and a hash to reject most misses
 * without touching the bytes.  A slot is in use when its gen is the
 * encoder's: a new response empties the table in O(1) by a new gen (a
 * table grown by one large response is not cleared for every small one). */
struct slot {
	uint32_t hash, off, len, gen;
};

struct symdb_batch_encoder {
	void *(*realloc_fn)(void *ctx, void *p, size_t n);
	void *realloc_ctx;
	uint64_t max_bytes;
	uint32_t nmodules, nstacks, modules_done, stacks_done;
	uint64_t results_declared, results_done;
	uint32_t nframes;
	int err;
	struct bytes modules, stacks, results, frames, strings;
	struct slot *slots;
	size_t nslots, nstrings;   /* nslots: a power of two, or 0 */
	uint32_t gen;              /* slots of this gen are in use; never 0 */
};

static void *std_realloc(void *ctx, void *p, size_t n)
{
	(void)ctx;
	if (!n) {
		free(p);
		return NULL;
	}
	return realloc(p, n);
}

static int e_fail(symdb_batch_encoder *e, int rc)
{
	if (!e->err)
		e->err = rc;
	return e->err;
}

static size_t e_total(const symdb_batch_encoder *e)
{
	return SYMDB_BATCH_RESPONSE_HEADER_SIZE + e->modules.len + e->stacks.len + e->results.len +
	       e->frames.len + e->strings.len;
}

/* n more bytes at the end of b (uninitialised), or NULL with e->err set. */
static uint8_t *grow(symdb_batch_encoder *e, struct bytes *b, size_t n)
{
	uint8_t *p;

	if (e->max_bytes && e_total(e) + n > e->max_bytes) {
		e_fail(e, SYMDB_E_TOO_BIG);
		return NULL;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->len + n)
			cap *= 2;
		if (!(p = e->realloc_fn(e->realloc_ctx, b->p, cap))) {
			e_fail(e, -ENOMEM);
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	p = b->p + b->len;
	b->len += n;
	return p;
}

int symdb_batch_encoder_create(const symdb_batch_encoder_opts *opts, symdb_batch_encoder **out)
{
	symdb_batch_encoder_opts o = { 0 };
	symdb_batch_encoder *e;

	if (!out)
		return SYMDB_E_INVAL;
	*out = NULL;
	if (opts) {
		if (opts->sz < offsetof(symdb_batch_encoder_opts, flags) + sizeof opts->flags)
			return SYMDB_E_INVAL;
		memcpy(&o, opts, opts->sz < sizeof o ? opts->sz : sizeof o);
		for (size_t i = sizeof o; i < opts->sz; i++)
			if (((const uint8_t *)opts)[i])
				return SYMDB_E_INVAL;
		if (o.flags)
			return SYMDB_E_INVAL;
	}
	if (!o.realloc_fn)
		o.realloc_fn = std_realloc;
	if (!(e = o.realloc_fn(o.realloc_ctx, NULL, sizeof *e)))
		return -ENOMEM;
	memset(e, 0, sizeof *e);
	e->realloc_fn = o.realloc_fn;
	e->realloc_ctx = o.realloc_ctx;
	e->max_bytes = o.max_bytes;
	e->gen = 1;
	*out = e;
	return 0;
}

void symdb_batch_encoder_free(symdb_batch_encoder *e)
{
	if (!e)
		return;
	void *mem[] = { e->modules.p, e->stacks.p, e->results.p, e->frames.p, e->strings.p,
	                e->slots, e };

	for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
		if (mem[i])
			e->realloc_fn(e->realloc_ctx, mem[i], 0);
}

int symdb_batch_encode_begin(symdb_batch_encoder *e, uint32_t nmodules, uint32_t nstacks)
{
	if (!e)
		return SYMDB_E_INVAL;
	e->err = 0;
	e->modules.len = e->stacks.len = e->results.len = e->frames.len = e->strings.len = 0;
	e->nmodules = nmodules;
	e->nstacks = nstacks;
	e->modules_done = e->stacks_done = 0;
	e->results_declared = e->results_done = 0;
	e->nframes = 0;
	e->nstrings = 0;
	if (++e->gen == 0) { /* wrapped: slots of an old gen 1 would read as used */
		if (e->nslots)
			memset(e->slots, 0, e->nslots * sizeof *e->slots);
		e->gen = 1;
	}
	return 0;
}

static int intern(symdb_batch_encoder *e, const char *s, uint32_t *ref);

int symdb_batch_encode_module(symdb_batch_encoder *e, const symdb_batch_module_result *m)
{
	uint32_t error;
	uint8_t *p;

	if (!e || e->err)
		return e ? e->err : SYMDB_E_INVAL;
	if (!m || e->modules_done == e->nmodules || m->image_id_len > SYMDB_BATCH_ID_MAX)
		return e_fail(e, SYMDB_E_INVAL);
	if (intern(e, m->error, &error) < 0 ||
	    !(p = grow(e, &e->modules, SYMDB_BATCH_MODULE_RECORD_SIZE)))
		return e->err;
	memset(p, 0, SYMDB_BATCH_MODULE_RECORD_SIZE);
	p[0] = m->status;
	p[1] = m->image_id_len;
	fmt_put32(p + 4, m->nresults);
	fmt_put32(p + 8, error);
	memcpy(p + 16, m->image_id, m->image_id_len);
	e->modules_done++;
	e->results_declared += m->nresults;
	return 0;
}

int symdb_batch_encode_stack(symdb_batch_encoder *e, uint32_t nresults)
{
	uint8_t *p;

	if (!e || e->err)
		return e ? e->err : SYMDB_E_INVAL;
	if (e->stacks_done == e->nstacks)
		return e_fail(e, SYMDB_E_INVAL);
	if (!(p = grow(e, &e->stacks, SYMDB_BATCH_STACK_RECORD_SIZE)))
		return e->err;
	fmt_put32(p, nresults);
	e->stacks_done++;
	e->results_declared += nresults;
	return 0;
}

/* Doubles the table (or makes the first) and re-inserts every string. */
static int rehash(symdb_batch_encoder *e)
{
	size_t n = e->nslots ? e->nslots * 2 : 1024;
	struct slot *s = e->realloc_fn(e->realloc_ctx, NULL, n * sizeof *s);

	if (!s)
		return e_fail(e, -ENOMEM);
	memset(s, 0, n * sizeof *s);
	for (size_t i = 0; i < e->nslots; i++) {
		size_t j;

		if (e->slots[i].gen != e->gen)
			continue;
		for (j = e->slots[i].hash & (n - 1); s[j].gen == e->gen; j = (j + 1) & (n - 1))
			;
		s[j] = e->slots[i];
	}
	if (e->slots)
		e->realloc_fn(e->realloc_ctx, e->slots, 0);
	e->slots = s;
	e->nslots = n;
	return 0;
}

/* The string table offset of s, adding it the first time it is seen:
 * open addressing keyed by XXH3 of the bytes, so a name repeated over many
 * results costs one hash and one compare. */
static int intern(symdb_batch_encoder *e, const char *s, uint32_t *ref)
{
	size_t len, j;
	uint32_t h;
	uint8_t *p;

	if (!s) {
		*ref = SYMDB_BATCH_NONE;
		return 0;
	}
	len = strlen(s);
	if ((e->nstrings + 1) * 2 > e->nslots && rehash(e) < 0)
		return e->err;
	h = (uint32_t)XXH3_64bits(s, len);
	for (j = h & (e->nslots - 1); e->slots[j].gen == e->gen; j = (j + 1) & (e->nslots - 1)) {
		const struct slot *t = &e->slots[j];

		if (t->hash == h && t->len == len && memcmp(e->strings.p + t->off, s, len) == 0) {
			*ref = t->off;
			return 0;
		}
	}
	/* Offsets are u32 and NONE is reserved (§16.4). */
	if (e->strings.len + len + 1 >= SYMDB_BATCH_NONE)
		return e_fail(e, SYMDB_E_TOO_BIG);
	*ref = (uint32_t)e->strings.len;
	if (!(p = grow(e, &e->strings, len + 1)))
		return e->err;
	memcpy(p, s, len + 1);
	e->slots[j] = (struct slot){ .hash = h, .off = *ref, .len = (uint32_t)len, .gen = e->gen };
	e->nstrings++;
	return 0;
}

static int put_frame(symdb_batch_encoder *e, const symdb_batch_frame *f)
{
	uint32_t fn, file, sfile;
	uint8_t *p;
	bool start = f->flags & SYMDB_BATCH_FRAME_HAS_START;

	if (f->flags & ~SYMDB_BATCH_FRAME_FLAGS)
		return e_fail(e, SYMDB_E_INVAL);
	if (intern(e, f->function, &fn) < 0 || intern(e, f->file, &file) < 0 ||
	    intern(e, f->start_file, &sfile) < 0)
		return e->err;
	if (!(p = grow(e, &e->frames, SYMDB_BATCH_FRAME_RECORD_SIZE)))
		return e->err;
	fmt_put32(p, fn);
	fmt_put32(p + 4, file);
	fmt_put32(p + 8, sfile);
	fmt_put32(p + 12, f->line);
	fmt_put32(p + 16, f->column);
	fmt_put32(p + 20, f->discriminator);
	fmt_put32(p + 24, f->start_line);
	fmt_put32(p + 28, f->flags);
	fmt_put64(p + 32, start ? f->start : 0);
	return 0;
}

int symdb_batch_encode_result(symdb_batch_encoder *e, const symdb_batch_result *r,
                              const symdb_batch_frame *frames, uint32_t nframes)
{
	uint32_t sym;
	uint8_t *p;

	if (!e || e->err)
		return e ? e->err : SYMDB_E_INVAL;
	if (!r || (nframes && (!frames || r->status != SYMDB_BATCH_OK)))
		return e_fail(e, SYMDB_E_INVAL);
	if (nframes > UINT32_MAX - e->nframes || e->results_done == UINT32_MAX)
		return e_fail(e, SYMDB_E_TOO_BIG);
	if (intern(e, r->sym_name, &sym) < 0 ||
	    !(p = grow(e, &e->results, SYMDB_BATCH_RESULT_RECORD_SIZE)))
		return e->err;
	memset(p, 0, SYMDB_BATCH_RESULT_RECORD_SIZE);
	p[0] = r->status;
	fmt_put32(p + 4, nframes);
	fmt_put32(p + 8, sym);
	if (r->sym_name) {
		fmt_put64(p + 16, r->sym_start);
		fmt_put64(p + 24, r->sym_size);
		fmt_put64(p + 32, r->sym_offset);
	}
	for (uint32_t k = 0; k < nframes; k++)
		if (put_frame(e, &frames[k]) < 0)
			return e->err;
	e->nframes += nframes;
	e->results_done++;
	return 0;
}

int symdb_batch_encode_size(const symdb_batch_encoder *e, size_t *size)
{
	if (!e || !size)
		return SYMDB_E_INVAL;
	if (e->err)
		return e->err;
	if (e->modules_done != e->nmodules || e->stacks_done != e->nstacks ||
	    e->results_done != e->results_declared)
		return SYMDB_E_INVAL;
	*size = e_total(e);
	return 0;
}

static uint8_t *put_bytes(uint8_t *p, const struct bytes *b)
{
	if (b->len)
		memcpy(p, b->p, b->len);
	return p + b->len;
}

int symdb_batch_encode_finish(const symdb_batch_encoder *e, void *out, size_t size)
{
	size_t need;
	uint8_t *p = out;
	int rc;

	if ((rc = symdb_batch_encode_size(e, &need)) < 0)
		return rc;
	if (!out || size < need)
		return SYMDB_E_TOO_BIG;
	memcpy(p, SYMDB_BATCH_RESPONSE_MAGIC, 4);
	p[4] = SYMDB_BATCH_VERSION_MAJOR;
	p[5] = SYMDB_BATCH_VERSION_MINOR;
	fmt_put16(p + 6, 0);
	fmt_put32(p + 8, e->nmodules);
	fmt_put32(p + 12, e->nstacks);
	fmt_put32(p + 16, (uint32_t)e->results_done);
	fmt_put32(p + 20, e->nframes);
	fmt_put32(p + 24, (uint32_t)e->strings.len);
	fmt_put32(p + 28, 0);
	p += SYMDB_BATCH_RESPONSE_HEADER_SIZE;
	p = put_bytes(p, &e->modules);
	p = put_bytes(p, &e->stacks);
	p = put_bytes(p, &e->results);
	p = put_bytes(p, &e->frames);
	put_bytes(p, &e->strings);
	return 0;
}
