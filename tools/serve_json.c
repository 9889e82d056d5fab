/* SPDX-License-Identifier: MIT */
/*
 * serve_json.c - POST /v1/symbolize with application/json: the request is
 * parsed with json-c (strict RFC 8259, UTF-8 validated, nesting bounded by
 * lim.max_depth), every field's type checked with the JSON path of a bad
 * one in the 400, turned into a struct serve_batch, run, and the answer
 * written by hand into a serve_buf as the results come in.  The formats are
 * README's "symdb serve" API reference; what each field means is there.
 *
 * The body's values are counted before json-c builds its tree: a body that
 * holds more values than the address, module and stack limits allow is a
 * 413 without the tree (some hundred bytes per value) ever being built.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_fault.h"
#include "serve_batch.h"
#include "serve_cache.h"

/* The biggest response we write: it is built in memory (the core sends
 * whole bodies), so this bounds a request's memory.  A request whose answer
 * would pass it is a 413: the client splits the batch. */
#define JSON_MAX_RESPONSE (256ull << 20)

/* ---- request ---------------------------------------------------------------- */

struct jreq {
	json_object *root;
	struct serve_batch b;
	struct serve_module *mods;
	uint64_t *addrs;
	struct serve_stack_frame *frames;
	struct serve_stack *stacks;
	unsigned status;               /* HTTP status of a refused request */
	char err[300];
};

static unsigned refuse(struct jreq *r, unsigned status, const char *fmt, ...) CLI_PRINTF(3, 4);

static unsigned refuse(struct jreq *r, unsigned status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->status = status;
	return status;
}

/*
 * An upper bound on the values in the body: every value but the first of a
 * container follows a comma, so values <= commas + containers + 1.  Only
 * brackets and commas outside strings count.  A quote outside a string
 * (json-c 0.16 takes single-quoted strings even when strict) is reported
 * through *squote, as its offset + 1.
 */
static uint64_t count_values(const char *s, size_t n, size_t *squote)
{
	uint64_t v = 1;
	bool in_str = false;
	*squote = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == ',' || c == '[' || c == '{') {
			v++;
		} else if (c == '\'' && !*squote) {
			*squote = i + 1;
		}
	}
	return v;
}

/* How many values a request within the limits can hold: an address or a
 * stack frame is at most three ([module, "0x.."]), a module at most 16
 * (its keys and values), a stack one, plus the top level and options. */
static uint64_t max_values(const struct serve_limits *lim)
{
	return 3 * (uint64_t)lim->max_addresses + 16 * (uint64_t)lim->max_modules +
	       (uint64_t)lim->max_stacks + 64;
}

static const char *type_name(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null: return "null";
	case json_type_boolean: return "a boolean";
	case json_type_double:
	case json_type_int: return "a number";
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	case json_type_string: return "a string";
	}
	return "a value";
}

/* "0x" and 1..16 hex digits (either case). */
static bool parse_hex_addr(json_object *v, uint64_t *out)
{
	if (!json_object_is_type(v, json_type_string))
		return false;
	const char *s = json_object_get_string(v);
	size_t n = (size_t)json_object_get_string_len(v);
	if (n < 3 || n > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return false;
	uint64_t a = 0;
	for (size_t i = 2; i < n; i++) {
		unsigned c = (unsigned char)s[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			return false;
		a = a << 4 | d;
	}
	*out = a;
	return true;
}

static unsigned bad_addr(struct jreq *r, const char *where, json_object *v)
{
	if (!json_object_is_type(v, json_type_string))
		return refuse(r, 400, "%s: expected a string, got %s", where, type_name(v));
	return refuse(r, 400, "%s: expected a hex address \"0x...\" of at most 16 digits", where);
}

static unsigned parse_options(struct jreq *r, json_object *o)
{
	struct serve_options *opt = &r->b.opt;
	if (!json_object_is_type(o, json_type_object))
		return refuse(r, 400, "options: expected an object, got %s", type_name(o));
	json_object_object_foreach(o, key, v) {
		bool *flag = !strcmp(key, "demangle") ? &opt->demangle
		             : !strcmp(key, "inlines") ? &opt->inlines
		                                       : NULL;
		if (flag) {
			if (!json_object_is_type(v, json_type_boolean))
				return refuse(r, 400, "options.%s: expected true or false, got %s", key,
				              type_name(v));
			*flag = json_object_get_boolean(v);
		} else if (!strcmp(key, "functions")) {
			const char *s = json_object_is_type(v, json_type_string)
			                        ? json_object_get_string(v)
			                        : NULL;
			if (s && !strcmp(s, "linkage"))
				opt->functions = SERVE_FN_LINKAGE;
			else if (s && !strcmp(s, "short"))
				opt->functions = SERVE_FN_SHORT;
			else if (s && !strcmp(s, "none"))
				opt->functions = SERVE_FN_NONE;
			else
				return refuse(r, 400,
				              "options.functions: expected \"linkage\", \"short\" or \"none\"");
		} else {
			return refuse(r, 400, "options.%.60s: unknown field", key);
		}
	}
	return 0;
}

static const char *const ref_keys[] = { "build_id", "uuid", "path" };

static unsigned parse_addr_kind(struct jreq *r, uint32_t i, json_object *v, struct serve_module *m)
{
	static const char *const kinds[] = { "vaddr", "offset", "fileoff", "runtime" };
	const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
	for (unsigned k = 0; k < 4; k++)
		if (!strcmp(s, kinds[k])) {
			m->addr_kind = (enum symdb_addr_kind)k;
			return 0;
		}
	return refuse(r, 400,
	              "modules[%u].addr_kind: expected \"vaddr\", \"offset\", \"fileoff\" or \"runtime\"",
	              i);
}

/* The image reference: exactly one of build_id, uuid, path. */
static unsigned parse_ref(struct jreq *r, uint32_t i, json_object *mo, struct serve_module *m,
                          const struct serve_server *srv)
{
	int seen = 0;
	for (unsigned k = 0; k < 3; k++) {
		json_object *v;
		if (!json_object_object_get_ex(mo, ref_keys[k], &v))
			continue;
		if (seen++)
			return refuse(r, 400, "modules[%u]: more than one of build_id, uuid, path", i);
		if (!json_object_is_type(v, json_type_string))
			return refuse(r, 400, "modules[%u].%s: expected a string, got %s", i, ref_keys[k],
			              type_name(v));
		m->ref = (enum serve_ref)k;
		m->id = json_object_get_string(v);
		size_t n = (size_t)json_object_get_string_len(v);
		if (k != SERVE_REF_PATH && !serve_hex_id_valid(m->id, n))
			return refuse(r, 400,
			              "modules[%u].%s: expected 2 to 64 lowercase hex digits, an even "
			              "number of them",
			              i, ref_keys[k]);
		if (k == SERVE_REF_PATH && !srv->allow_paths)
			return refuse(r, 400, "modules[%u].path: path modules are not accepted by this "
			                      "server (it listens beyond loopback); use build_id or uuid", i);
		if (k == SERVE_REF_PATH && (n == 0 || strlen(m->id) != n))
			return refuse(r, 400, "modules[%u].path: expected a non-empty path without NUL", i);
	}
	if (!seen)
		return refuse(r, 400, "modules[%u]: one of build_id, uuid or path is required", i);
	return 0;
}

static unsigned parse_module(struct jreq *r, uint32_t i, json_object *mo, uint32_t *next_addr,
                             const struct serve_server *srv)
{
	struct serve_module *m = &r->mods[i];
	unsigned rc;
	bool have_load = false;
	m->addr_kind = SYMDB_ADDR_VADDR;
	m->first = *next_addr;
	if ((rc = parse_ref(r, i, mo, m, srv)))
		return rc;
	json_object_object_foreach(mo, key, v) {
		if (!strcmp(key, "build_id") || !strcmp(key, "uuid") || !strcmp(key, "path")) {
			continue;
		} else if (!strcmp(key, "arch")) {
			if (!json_object_is_type(v, json_type_string))
				return refuse(r, 400, "modules[%u].arch: expected a string, got %s", i,
				              type_name(v));
			m->arch = json_object_get_string(v);
		} else if (!strcmp(key, "addr_kind")) {
			if ((rc = parse_addr_kind(r, i, v, m)))
				return rc;
		} else if (!strcmp(key, "load_address")) {
			char where[64];
			snprintf(where, sizeof(where), "modules[%u].load_address", i);
			if (!parse_hex_addr(v, &m->load_address))
				return bad_addr(r, where, v);
			have_load = true;
		} else if (!strcmp(key, "addresses")) {
			size_t n = json_object_array_length(v);
			for (size_t k = 0; k < n; k++) {
				json_object *a = json_object_array_get_idx(v, k);
				if (!parse_hex_addr(a, &r->addrs[*next_addr + k])) {
					char where[80];
					snprintf(where, sizeof(where), "modules[%u].addresses[%zu]", i, k);
					return bad_addr(r, where, a);
				}
			}
			m->count = (uint32_t)n;
		} else {
			return refuse(r, 400, "modules[%u].%.60s: unknown field", i, key);
		}
	}
	if (have_load != (m->addr_kind == SYMDB_ADDR_RUNTIME))
		return refuse(r, 400, "modules[%u].load_address: %s", i,
		              have_load ? "only with addr_kind \"runtime\""
		                        : "required with addr_kind \"runtime\"");
	*next_addr += m->count;
	return 0;
}

/* One stack: an array of [module index, "0x..."] pairs. */
static unsigned parse_stack(struct jreq *r, uint32_t i, json_object *so, uint32_t *next_frame)
{
	size_t n = json_object_array_length(so);
	r->stacks[i].first = *next_frame;
	for (size_t k = 0; k < n; k++) {
		json_object *f = json_object_array_get_idx(so, k);
		struct serve_stack_frame *fr = &r->frames[*next_frame + k];
		char where[80];
		if (!json_object_is_type(f, json_type_array))
			return refuse(r, 400, "stacks[%u][%zu]: expected [module, \"0x...\"], got %s", i, k,
			              type_name(f));
		if (json_object_array_length(f) != 2)
			return refuse(r, 400,
			              "stacks[%u][%zu]: expected [module, \"0x...\"], got an array of length "
			              "%zu", i, k, json_object_array_length(f));
		json_object *mi = json_object_array_get_idx(f, 0);
		int64_t mod = json_object_get_int64(mi);
		if (!json_object_is_type(mi, json_type_int))
			return refuse(r, 400,
			              "stacks[%u][%zu][0]: expected a module index (an integer below %u), "
			              "got %s", i, k, r->b.nmodules,
			              json_object_is_type(mi, json_type_double) ? "a fraction" : type_name(mi));
		if (mod < 0 || mod >= r->b.nmodules)
			return refuse(r, 400,
			              "stacks[%u][%zu][0]: module index %lld names no module (the request "
			              "has %u, from 0)", i, k, (long long)mod, r->b.nmodules);
		fr->module = (uint32_t)mod;
		snprintf(where, sizeof(where), "stacks[%u][%zu][1]", i, k);
		if (!parse_hex_addr(json_object_array_get_idx(f, 1), &fr->addr))
			return bad_addr(r, where, json_object_array_get_idx(f, 1));
	}
	r->stacks[i].count = (uint32_t)n;
	*next_frame += (uint32_t)n;
	return 0;
}

/* Counts the addresses and frames (types of the arrays checked on the way)
 * and applies the limits before anything is allocated. */
static unsigned count_items(struct jreq *r, json_object *mods, json_object *stacks,
                            const struct serve_limits *lim, uint64_t *naddrs, uint64_t *nframes)
{
	size_t nm = json_object_array_length(mods);
	if (nm > lim->max_modules)
		return refuse(r, 413, "modules: %zu modules, more than the limit of %u (--max-modules)",
		              nm, lim->max_modules);
	for (size_t i = 0; i < nm; i++) {
		json_object *mo = json_object_array_get_idx(mods, i), *a;
		if (!json_object_is_type(mo, json_type_object))
			return refuse(r, 400, "modules[%zu]: expected an object, got %s", i, type_name(mo));
		if (!json_object_object_get_ex(mo, "addresses", &a))
			continue;
		if (!json_object_is_type(a, json_type_array))
			return refuse(r, 400, "modules[%zu].addresses: expected an array, got %s", i,
			              type_name(a));
		*naddrs += json_object_array_length(a);
	}
	size_t ns = stacks ? json_object_array_length(stacks) : 0;
	if (ns > lim->max_stacks)
		return refuse(r, 413, "stacks: %zu stacks, more than the limit of %u (--max-stacks)", ns,
		              lim->max_stacks);
	for (size_t i = 0; i < ns; i++) {
		json_object *so = json_object_array_get_idx(stacks, i);
		if (!json_object_is_type(so, json_type_array))
			return refuse(r, 400, "stacks[%zu]: expected an array, got %s", i, type_name(so));
		*nframes += json_object_array_length(so);
	}
	if (*naddrs + *nframes > lim->max_addresses)
		return refuse(r, 413,
		              "too many addresses: %llu, more than the limit of %u (--max-addresses; "
		              "stack frames count)",
		              (unsigned long long)(*naddrs + *nframes), lim->max_addresses);
	return 0;
}

static unsigned parse_top(struct jreq *r, const struct serve_server *srv)
{
	json_object *mods = NULL, *stacks = NULL, *opts = NULL;
	if (!json_object_is_type(r->root, json_type_object))
		return refuse(r, 400, "the request: expected an object, got %s", type_name(r->root));
	json_object_object_foreach(r->root, key, v) {
		if (!strcmp(key, "modules"))
			mods = v;
		else if (!strcmp(key, "stacks"))
			stacks = v;
		else if (!strcmp(key, "options"))
			opts = v;
		else
			return refuse(r, 400, "%.60s: unknown field", key);
	}
	if (!mods || !json_object_is_type(mods, json_type_array))
		return refuse(r, 400, "modules: expected an array, got %s",
		              mods ? type_name(mods) : "nothing");
	if (stacks && !json_object_is_type(stacks, json_type_array))
		return refuse(r, 400, "stacks: expected an array, got %s", type_name(stacks));
	unsigned rc;
	r->b.opt = (struct serve_options){ .demangle = true, .inlines = true,
		                           .functions = SERVE_FN_LINKAGE };
	if (opts && (rc = parse_options(r, opts)))
		return rc;
	uint64_t naddrs = 0, nframes = 0;
	if ((rc = count_items(r, mods, stacks, &srv->lim, &naddrs, &nframes)))
		return rc;
	r->b.nmodules = (uint32_t)json_object_array_length(mods);
	r->b.nstacks = stacks ? (uint32_t)json_object_array_length(stacks) : 0;
	r->mods = calloc(r->b.nmodules + 1, sizeof(*r->mods));
	r->addrs = calloc(naddrs + 1, sizeof(*r->addrs));
	r->stacks = calloc(r->b.nstacks + 1, sizeof(*r->stacks));
	r->frames = calloc(nframes + 1, sizeof(*r->frames));
	if (!r->mods || !r->addrs || !r->stacks || !r->frames)
		return refuse(r, 503, "out of memory for %llu addresses",
		              (unsigned long long)(naddrs + nframes));
	uint32_t next = 0;
	for (uint32_t i = 0; i < r->b.nmodules; i++)
		if ((rc = parse_module(r, i, json_object_array_get_idx(mods, i), &next, srv)))
			return rc;
	next = 0;
	for (uint32_t i = 0; i < r->b.nstacks; i++)
		if ((rc = parse_stack(r, i, json_object_array_get_idx(stacks, i), &next)))
			return rc;
	r->b.modules = r->mods;
	r->b.addrs = r->addrs;
	r->b.naddrs = (uint32_t)naddrs;
	r->b.frames = r->frames;
	r->b.nframes = (uint32_t)nframes;
	r->b.stacks = r->stacks;
	return 0;
}

/* The value of 4 hex digits at s, or -1. */
static long hex4(const char *s)
{
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int c = (unsigned char)s[i], d = c >= '0' && c <= '9'   ? c - '0'
		                                 : c >= 'a' && c <= 'f' ? c - 'a' + 10
		                                 : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                                                        : -1;
		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

/*
 * The offset of a \u escape of a UTF-16 surrogate that is not half of a
 * pair (RFC 8259 §8.2: such a string is not Unicode text) in the strings of
 * s[0..n), or SIZE_MAX.  json-c would replace it with U+FFFD, which
 * silently changes a path or a build-id.  Malformed escapes are left to
 * json-c's own error.
 */
static size_t lone_surrogate(const char *s, size_t n)
{
	int in_string = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"') {
			in_string = !in_string;
			continue;
		}
		if (!in_string || s[i] != '\\' || i + 1 >= n)
			continue;
		if (s[i + 1] != 'u' || n - i < 6) {
			i++; /* \" \\ \n ...: the escaped byte is no quote */
			continue;
		}
		long u = hex4(s + i + 2);
		if (u >= 0xdc00 && u <= 0xdfff)
			return i;
		if (u >= 0xd800 && u <= 0xdbff) {
			long lo = n - i >= 12 && s[i + 6] == '\\' && s[i + 7] == 'u' ? hex4(s + i + 8) : -1;
			if (lo < 0xdc00 || lo > 0xdfff)
				return i;
			i += 6;
		}
		i += 5;
	}
	return SIZE_MAX;
}

static unsigned parse_request(struct jreq *r, const struct serve_request *rq)
{
	const struct serve_server *srv = rq->srv;
	if (rq->body_len > INT_MAX)
		return refuse(r, 413, "body: larger than json-c parses (2 GiB)");
	size_t squote;
	if (count_values(rq->body, rq->body_len, &squote) > max_values(&srv->lim))
		return refuse(r, 413,
		              "too many addresses: the body holds more values than --max-addresses "
		              "(%u), --max-modules (%u) and --max-stacks (%u) allow",
		              srv->lim.max_addresses, srv->lim.max_modules, srv->lim.max_stacks);
	if (squote)
		return refuse(r, 400, "body: malformed JSON at byte %zu: a single quote", squote - 1);
	size_t lone = rq->body ? lone_surrogate(rq->body, rq->body_len) : SIZE_MAX;
	if (lone != SIZE_MAX)
		return refuse(r, 400, "body: malformed JSON at byte %zu: a lone UTF-16 surrogate "
		              "(\\u%.4s is half of a pair)", lone, rq->body + lone + 2);
	unsigned depth = srv->lim.max_depth ? srv->lim.max_depth : 32;
	struct json_tokener *tok = json_tokener_new_ex((int)(depth > INT_MAX ? INT_MAX : depth));
	if (!tok)
		return refuse(r, 503, "out of memory for the JSON parser");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	r->root = json_tokener_parse_ex(tok, rq->body ? rq->body : "", (int)rq->body_len);
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	if (e == json_tokener_continue) {
		/* The whole body was read: a number or a literal at its very end
		 * ("1", "true") is complete once json-c sees the end of input. */
		r->root = json_tokener_parse_ex(tok, "", 1);
		e = json_tokener_get_error(tok);
		end = rq->body_len;
		if (e != json_tokener_success)
			e = json_tokener_continue; /* cut short: "incomplete" below */
	}
	json_tokener_free(tok);
	if (e == json_tokener_error_depth)
		return refuse(r, 400, "body: JSON nested deeper than %u levels (--max-depth)", depth);
	if (e == json_tokener_continue)
		return refuse(r, 400, "body: incomplete JSON (%zu bytes)", rq->body_len);
	if (e == json_tokener_success && !r->root)
		return refuse(r, 400, "the request: expected an object, got null");
	if (e != json_tokener_success)
		return refuse(r, 400, "body: malformed JSON at byte %zu: %s", end,
		              json_tokener_error_desc(e));
	for (size_t i = end; i < rq->body_len; i++)
		if (!strchr(" \t\r\n", rq->body[i]))
			return refuse(r, 400, "body: data after the JSON value at byte %zu", i);
	return parse_top(r, srv);
}

static void jreq_free(struct jreq *r)
{
	json_object_put(r->root);
	free(r->mods);
	free(r->addrs);
	free(r->frames);
	free(r->stacks);
}

/* ---- response ----------------------------------------------------------------- */

/* The text of a recent frame array, by the library's frames pointer: equal
 * results share their frames (symdb_resolve_batch()), and then their text
 * is copied instead of formatted again.  Pointers are valid for one chunk,
 * so entries of an older chunk (gen) never match. */
struct frames_memo {
	const symdb_frame *frames;
	const char *sym;               /* shown when !inlines: part of the text */
	uint32_t n, gen;
	size_t off, len;
};

struct jw {
	struct serve_buf *o;
	const struct serve_batch *b;
	struct serve_cache *cache;
	uint32_t mod;                  /* modules opened so far */
	bool in_mod, first_result;
	bool modules_done;
	uint32_t stack;                /* stacks opened so far */
	bool in_stack;
	bool keep;                     /* the open stack's results may be cached */
	unsigned long faults;          /* cli_fault_count() when the chunk's writing began */
	bool faulted;                  /* a fault while writing: strings may be zeros */
	size_t stack_at;               /* where its text starts in o */
	struct serve_buf hits;         /* cached stack texts */
	size_t *hit_off, *hit_len;
	uint32_t *dup;                 /* serve_cache_lookup_stacks(): i, or the earlier equal stack */
	size_t *text_off, *text_len;   /* where each stack written so far is in o */
	struct serve_frame *fr;
	size_t frcap;
	struct frames_memo memo[256];
	uint32_t gen;                  /* chunks seen */
};

/*
 * The per-address writers reserve the worst case of a result's text once
 * and then write through a cursor without further checks: a response is
 * mostly these few fields repeated, and a bounds check and a call per
 * field cost more than the formatting.
 */

/* Room for n more bytes at the end of o (serve_buf's growth: doubling, the
 * limit and oom), or NULL. */
static char *room(struct serve_buf *o, size_t n)
{
	if (o->oom)
		return NULL;
	if (o->cap - o->len >= n)
		return o->p + o->len;
	if (n > SIZE_MAX / 2 - o->len || (o->limit && o->len + n > o->limit)) {
		o->oom = true;
		return NULL;
	}
	size_t cap = o->cap ? o->cap : 4096;
	while (cap < o->len + n)
		cap *= 2;
	char *p = realloc(o->p, cap);
	if (!p) {
		o->oom = true;
		return NULL;
	}
	o->p = p;
	o->cap = cap;
	return o->p + o->len;
}

static void done(struct serve_buf *o, const char *d)
{
	o->len = (size_t)(d - o->p);
}

#define LIT(d, lit) (memcpy((d), lit, sizeof(lit) - 1), (d) + sizeof(lit) - 1)

/* "0x..." with its quotes: at most 20 bytes. */
static char *w_hex(char *d, uint64_t v)
{
	char s[16];
	int n = 0;
	do
		s[15 - n++] = "0123456789abcdef"[v & 15];
	while ((v >>= 4));
	d = LIT(d, "\"0x");
	memcpy(d, s + 16 - n, (size_t)n);
	d += n;
	*d++ = '"';
	return d;
}

/* At most 20 bytes. */
static char *w_u64(char *d, uint64_t v)
{
	char s[20];
	int n = 0;
	do
		s[19 - n++] = (char)('0' + v % 10);
	while ((v /= 10));
	memcpy(d, s + 20 - n, (size_t)n);
	return d + n;
}

/* A string (room: 6 * n + 2) or null (4). */
static char *w_str(char *d, const char *s, size_t n)
{
	return s ? serve_buf_json_raw(d, s, n) : LIT(d, "null");
}

static size_t len0(const char *s)
{
	return s ? strlen(s) : 0;
}

static void put_frame(struct serve_buf *o, const struct serve_frame *f, bool comma)
{
	size_t lf = len0(f->function), lfile = len0(f->file), ls = len0(f->start_file);
	if (lf + lfile + ls > (SIZE_MAX - 512) / 6) {
		o->oom = true;
		return;
	}
	char *d = room(o, 512 + 6 * (lf + lfile + ls));
	if (!d)
		return;
	if (comma)
		*d++ = ',';
	d = LIT(d, "{\"function\":");
	d = w_str(d, f->function, lf);
	d = LIT(d, ",\"file\":");
	d = w_str(d, f->file, lfile);
	d = LIT(d, ",\"line\":");
	d = w_u64(d, f->line);
	d = LIT(d, ",\"column\":");
	d = w_u64(d, f->column);
	d = LIT(d, ",\"discriminator\":");
	d = w_u64(d, f->discriminator);
	d = LIT(d, ",\"start_address\":");
	d = f->has_start ? w_hex(d, f->start) : LIT(d, "null");
	d = LIT(d, ",\"start_file\":");
	d = w_str(d, f->start_file, ls);
	d = LIT(d, ",\"start_line\":");
	d = w_u64(d, f->start_line);
	d = f->inlined ? LIT(d, ",\"inlined\":true}") : LIT(d, ",\"inlined\":false}");
	done(o, d);
}

/* The frames of one result, inside its "frames" array: formatted, or
 * copied from an earlier result with the same library frames. */
static void put_frames(struct jw *w, const struct serve_result *res)
{
	struct serve_buf *o = w->o;
	if (res->status != SERVE_OK || !res->nframes)
		return;
	const char *sym = w->b->opt.inlines ? NULL : res->sym_name;
	size_t slot = ((uintptr_t)res->frames >> 4 ^ (uintptr_t)res->frames >> 12) & 255;
	struct frames_memo *m = &w->memo[slot];
	if (m->gen == w->gen && m->frames == res->frames && m->n == res->nframes && m->sym == sym) {
		char *d = room(o, m->len); /* may move o->p: copy after it */
		if (d) {
			memcpy(d, o->p + m->off, m->len);
			done(o, d + m->len);
		}
		return;
	}
	size_t at = o->len;
	size_t n = serve_result_frames(&w->b->opt, res, w->fr);
	for (size_t i = 0; i < n; i++)
		put_frame(o, &w->fr[i], i > 0);
	*m = (struct frames_memo){ .frames = res->frames, .sym = sym, .n = res->nframes,
		               .gen = w->gen, .off = at, .len = o->len - at };
}

/* One result object: address, status, frames, symbol. */
static int put_result(struct jw *w, uint64_t addr, const struct serve_result *res)
{
	struct serve_buf *o = w->o;
	size_t need = res->nframes ? res->nframes : 1;
	if (need > w->frcap) {
		struct serve_frame *p = realloc(w->fr, need * sizeof(*p));
		if (!p)
			return -1;
		w->fr = p;
		w->frcap = need;
	}
	char *d = room(o, 96);
	if (!d)
		return -1;
	d = LIT(d, "{\"address\":");
	d = w_hex(d, addr);
	d = LIT(d, ",\"status\":\"");
	const char *st = serve_status_name(res->status);
	size_t sl = strlen(st);
	memcpy(d, st, sl);
	d = LIT(d + sl, "\",\"frames\":[");
	done(o, d);
	put_frames(w, res);
	bool sym = res->status == SERVE_OK && res->sym_name && res->vaddr != SYMDB_ADDR_INVALID;
	size_t ln = sym ? strlen(res->sym_name) : 0;
	if (ln > (SIZE_MAX - 256) / 6 || !(d = room(o, 256 + 6 * ln)))
		return -1;
	d = LIT(d, "],\"symbol\":");
	if (sym) {
		d = LIT(d, "{\"name\":");
		d = serve_buf_json_raw(d, res->sym_name, ln);
		d = LIT(d, ",\"start\":");
		d = w_hex(d, res->sym_addr);
		d = LIT(d, ",\"size\":");
		d = w_u64(d, res->sym_size);
		d = LIT(d, ",\"offset\":");
		d = w_u64(d, res->vaddr - res->sym_addr + res->top);
		d = LIT(d, "}}");
	} else {
		d = LIT(d, "null}");
	}
	done(o, d);
	return 0;
}

#define PUT_LIT(o, lit) serve_buf_put((o), lit, sizeof(lit) - 1)

static void open_module(struct jw *w)
{
	const struct serve_module *m = &w->b->modules[w->mod];
	struct serve_buf *o = w->o;
	if (w->mod)
		PUT_LIT(o, ",");
	PUT_LIT(o, "{\"");
	serve_buf_str(o, ref_keys[m->ref]);
	PUT_LIT(o, "\":");
	serve_buf_json_str(o, m->id, strlen(m->id));
	PUT_LIT(o, ",\"status\":\"");
	serve_buf_str(o, serve_status_name(m->status));
	PUT_LIT(o, "\"");
	if (m->status == SERVE_OK) {
		char hex[2 * SYMDB_UUID_MAX + 1];
		symdb_uuid_format(&m->uuid, hex);
		PUT_LIT(o, ",\"image_id\":\"");
		serve_buf_str(o, hex);
		PUT_LIT(o, "\"");
	} else if (serve_module_error(m)) {
		PUT_LIT(o, ",\"error\":");
		const char *e = serve_module_error(m);
		serve_buf_json_str(o, e, strlen(e));
	}
	PUT_LIT(o, ",\"results\":[");
	w->mod++;
	w->in_mod = true;
	w->first_result = true;
}

static void close_module(struct jw *w)
{
	PUT_LIT(w->o, "]}");
	w->in_mod = false;
}

/* Closes the modules array: every module not yet written is (with no
 * results left, only those without addresses remain). */
static void finish_modules(struct jw *w)
{
	if (w->modules_done)
		return;
	if (w->in_mod)
		close_module(w);
	while (w->mod < w->b->nmodules) {
		open_module(w);
		close_module(w);
	}
	PUT_LIT(w->o, "]");
	if (w->b->nstacks)
		PUT_LIT(w->o, ",\"stacks\":[");
	w->modules_done = true;
}

static void close_stack(struct jw *w)
{
	struct serve_buf *o = w->o;
	PUT_LIT(o, "]");
	w->in_stack = false;
	w->text_len[w->stack - 1] = o->len - w->stack_at;
	const struct serve_stack *st = &w->b->stacks[w->stack - 1];
	/* (a fault while it was written may have made strings of it zeros) */
	if (st->cached || !w->keep || !w->cache || o->oom || w->faulted ||
	    cli_fault_count() != w->faults)
		return;
	struct serve_cache_key k;
	if (serve_cache_stack_key(&k, w->b, st, SERVE_CACHE_JSON))
		serve_cache_put(w->cache, &k, o->p + w->stack_at, o->len - w->stack_at);
	serve_cache_key_release(&k);
}

/* Opens the next stack; a cached one is written whole, from the cache or
 * from the text of the earlier stack it equals. */
static void open_stack(struct jw *w)
{
	struct serve_buf *o = w->o;
	uint32_t i = w->stack++;
	if (i)
		PUT_LIT(o, ",");
	w->stack_at = w->text_off[i] = o->len;
	w->in_stack = true;
	w->keep = true;
	w->first_result = true;
	if (!w->b->stacks[i].cached) {
		PUT_LIT(o, "[");
		return;
	}
	uint32_t j = w->dup[i];
	if (j == i) {
		serve_buf_put(o, w->hits.p + w->hit_off[i], w->hit_len[i]);
	} else {
		char *d = room(o, w->text_len[j]); /* may move o->p: copy after it */
		if (d) {
			memcpy(d, o->p + w->text_off[j], w->text_len[j]);
			done(o, d + w->text_len[j]);
		}
	}
	w->text_len[i] = o->len - w->text_off[i];
	w->in_stack = false;
}

static void finish_stacks(struct jw *w)
{
	if (w->in_stack)
		close_stack(w);
	while (w->stack < w->b->nstacks) {
		open_stack(w);
		if (w->in_stack)
			close_stack(w);
	}
	if (w->b->nstacks)
		PUT_LIT(w->o, "]");
}

static int put_address(struct jw *w, uint32_t item, const struct serve_result *res)
{
	const struct serve_batch *b = w->b;
	while (!w->in_mod || item >= b->modules[w->mod - 1].first + b->modules[w->mod - 1].count) {
		if (w->in_mod)
			close_module(w);
		open_module(w);
	}
	if (!w->first_result)
		PUT_LIT(w->o, ",");
	w->first_result = false;
	return put_result(w, b->addrs[item], res);
}

static int put_stack_frame(struct jw *w, uint32_t f, const struct serve_result *res)
{
	const struct serve_batch *b = w->b;
	finish_modules(w);
	while (w->stack == 0 || f >= b->stacks[w->stack - 1].first + b->stacks[w->stack - 1].count) {
		if (w->in_stack)
			close_stack(w);
		open_stack(w);
	}
	if (b->stacks[w->stack - 1].cached)
		return 0;
	if (!w->first_result)
		PUT_LIT(w->o, ",");
	w->first_result = false;
	w->keep = w->keep && serve_cache_results_keepable(res, 1);
	return put_result(w, b->frames[f].addr, res);
}

static int on_chunk(void *arg, const struct serve_batch *b, uint32_t first, uint32_t count,
                    const struct serve_result *res)
{
	struct jw *w = arg;
	w->gen++; /* the previous chunk's frames pointers are stale */
	/* A fault before now (while resolving) made the library's answers
	 * "damaged"; one while the strings are written is told by the count. */
	w->faults = cli_fault_count();
	for (uint32_t k = 0; k < count; k++) {
		uint32_t item = first + k;
		int rc = item < b->naddrs ? put_address(w, item, &res[k])
		                          : put_stack_frame(w, item - b->naddrs, &res[k]);
		if (rc || w->o->oom)
			return -1;
	}
	w->faulted = w->faulted || cli_fault_count() != w->faults;
	return 0;
}

/*
 * Before resolving, every stack whose answer is known already is marked
 * cached (its frames are not resolved): one the cache holds (its text kept
 * in hits), or one equal to an earlier stack of this request (dup: its
 * text is copied from that stack's once written).
 */
static int lookup_stacks(struct jw *w, struct serve_batch *b, struct serve_metrics *m)
{
	uint32_t n = b->nstacks;
	if (!n)
		return 0;
	w->hit_off = calloc(n, sizeof(*w->hit_off));
	w->hit_len = calloc(n, sizeof(*w->hit_len));
	w->text_off = calloc(n, sizeof(*w->text_off));
	w->text_len = calloc(n, sizeof(*w->text_len));
	w->dup = malloc(n * sizeof(*w->dup));
	if (!w->hit_off || !w->hit_len || !w->text_off || !w->text_len || !w->dup)
		return -ENOMEM;
	return serve_cache_lookup_stacks(w->cache, m, b, SERVE_CACHE_JSON, w->dup, &w->hits,
	                                 w->hit_off, w->hit_len);
}

static void jw_free(struct jw *w)
{
	serve_buf_free(&w->hits);
	free(w->hit_off);
	free(w->hit_len);
	free(w->text_off);
	free(w->text_len);
	free(w->dup);
	free(w->fr);
}

/* Runs the batch and writes the response into o; 0, or an HTTP status with
 * err set, or 0 with *handoff (it would wait for a fetch: serve.h). */
static unsigned answer(struct serve_request *rq, struct serve_batch *b, struct serve_buf *o,
                       char *err, size_t errsz, bool *handoff)
{
	struct jw w = { .o = o, .b = b, .cache = rq->srv->cache };
	struct serve_run *run = NULL;
	int rc = serve_batch_open(rq->srv, b, rq->deadline_ns, rq->wait, &run, err, errsz);
	if (rc == -EWOULDBLOCK) {
		*handoff = true;
		return 0;
	}
	if (rc == 0 && (rc = lookup_stacks(&w, b, rq->srv->metrics)) != 0)
		snprintf(err, errsz, "the stack cache: %s", strerror(-rc));
	if (rc == 0) {
		PUT_LIT(o, "{\"modules\":[");
		rc = serve_batch_resolve(run, b, rq->deadline_ns, on_chunk, &w);
		if (rc == 0) {
			finish_modules(&w);
			finish_stacks(&w);
			PUT_LIT(o, "}");
		} else if (rc != -ECANCELED) {
			snprintf(err, errsz, "symbolizing: %s", symdb_strerror(rc));
		}
	}
	serve_batch_close(run);
	jw_free(&w);
	if (rc == 0 && w.faulted) {
		/* An index file was truncated while its strings were being
		 * written: some may be zeros.  Its image is damaged now, and the
		 * next request answers "damaged" for it. */
		snprintf(err, errsz, "an index file changed while it was read (truncated?); ask again");
		return 503;
	}
	if (rc == -ECANCELED || (rc == 0 && o->oom)) {
		bool big = o->cap >= JSON_MAX_RESPONSE / 2; /* else realloc failed early */
		snprintf(err, errsz, big ? "the answer: more than %llu MiB; send fewer addresses per request"
		                         : "out of memory writing the answer (%llu MiB at most)",
		         (unsigned long long)(JSON_MAX_RESPONSE >> 20));
		return big ? 413 : 503;
	}
	if (rc == -ENOMEM)
		return 503;
	return rc ? 500 : 0;
}

void serve_json_handle(struct serve_request *rq, struct serve_reply *out)
{
	struct jreq r = { .status = 0 };
	struct serve_buf o = { .limit = JSON_MAX_RESPONSE };
	char err[300] = "";
	bool handoff = false;
	unsigned code = parse_request(&r, rq);
	if (!code && (code = answer(rq, &r.b, &o, err, sizeof(err), &handoff)) != 0)
		snprintf(r.err, sizeof(r.err), "%s", err);
	if (handoff) {
		serve_buf_free(&o);
		out->handoff = true;
	} else if (code) {
		serve_buf_free(&o);
		serve_reply_error(out, code, "%s", r.err);
		if (code == 503)
			out->retry_after = 1;
	} else {
		out->status = 200;
		out->content_type = "application/json";
		out->body = serve_buf_take(&o, &out->len);
		out->addresses = (uint64_t)r.b.naddrs + r.b.nframes;
	}
	jreq_free(&r);
}
