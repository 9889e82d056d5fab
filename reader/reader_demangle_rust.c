/* SPDX-License-Identifier: MIT */
/*
 * reader_demangle_rust.c - how much LLVM 14's Rust v0 demangler would print,
 * found before letting it print.
 *
 * llvm::rustDemangle() limits its recursion (500 levels) but not its output:
 * a back reference ("B" <base-62-number>) replays an earlier path, type or
 * const, and one that refers to a tuple of two back references to the
 * previous one doubles the output at every step, so a 200-byte "_R" name
 * makes megabytes and a 400-byte one more than memory holds.  The demangler
 * prints as it parses (no tree to measure), so this file walks the same
 * grammar the same way (RFC 2603, as LLVM 14's RustDemangle.cpp reads it,
 * printing suppressed where LLVM suppresses it), adding up the bytes LLVM
 * would print instead of printing them, and stops as soon as the sum passes
 * the output budget or the steps pass the work budget.  Only the sum
 * matters: where the walk finds the name invalid it stops, and LLVM, which
 * stops there too, is left to say so.
 */
#include <stdint.h>
#include <string.h>

#include "reader_demangle.h"

/* LLVM's own recursion limit (RustDemangle.cpp, MaxRecursionLevel). */
#define RS_MAX_LEVEL 500
/* LLVM decodes a punycode identifier by inserting into its output, a cost
 * quadratic in the identifier's length; real identifiers are short. */
#define RS_PUNYCODE_MAX 4096

struct rs {
	const char *in; /* after "_R", up to the first '.' */
	size_t len, pos;
	size_t level, bound_lifetimes;
	int print, error, over;
	uint64_t out, out_max; /* bytes LLVM would print so far, budget */
	uint64_t work, work_max;
};

enum { RS_NOT_IN_TYPE, RS_IN_TYPE };

static void rs_emit(struct rs *r, uint64_t n)
{
	if (r->error || !r->print)
		return;
	r->out += n;
	if (r->out > r->out_max)
		r->over = r->error = 1;
}

static int rs_step(struct rs *r, uint64_t n)
{
	r->work += n;
	if (r->work > r->work_max)
		r->over = r->error = 1;
	return !r->error;
}

static char rs_look(const struct rs *r)
{
	return r->error || r->pos >= r->len ? 0 : r->in[r->pos];
}

static char rs_consume(struct rs *r)
{
	if (r->error || r->pos >= r->len) {
		r->error = 1;
		return 0;
	}
	rs_step(r, 1);
	return r->in[r->pos++];
}

static int rs_consume_if(struct rs *r, char c)
{
	if (r->error || r->pos >= r->len || r->in[r->pos] != c)
		return 0;
	r->pos++;
	return 1;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_lower(char c) { return c >= 'a' && c <= 'z'; }
static int is_upper(char c) { return c >= 'A' && c <= 'Z'; }

static unsigned decimal_digits(uint64_t v)
{
	unsigned n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static uint64_t rs_base62(struct rs *r)
{
	if (rs_consume_if(r, '_'))
		return 0;
	uint64_t v = 0;
	for (;;) {
		char c = rs_consume(r);
		uint64_t d;
		if (c == '_')
			break;
		if (is_digit(c))
			d = (uint64_t)(c - '0');
		else if (is_lower(c))
			d = 10 + (uint64_t)(c - 'a');
		else if (is_upper(c))
			d = 36 + (uint64_t)(c - 'A');
		else {
			r->error = 1;
			return 0;
		}
		if (v > (UINT64_MAX - d) / 62) {
			r->error = 1;
			return 0;
		}
		v = v * 62 + d;
	}
	if (v == UINT64_MAX) {
		r->error = 1;
		return 0;
	}
	return v + 1;
}

static uint64_t rs_opt_base62(struct rs *r, char tag)
{
	if (!rs_consume_if(r, tag))
		return 0;
	uint64_t n = rs_base62(r);
	if (r->error || n == UINT64_MAX) {
		r->error = 1;
		return 0;
	}
	return n + 1;
}

static uint64_t rs_decimal(struct rs *r)
{
	char c = rs_look(r);
	if (!is_digit(c)) {
		r->error = 1;
		return 0;
	}
	if (c == '0') {
		rs_consume(r);
		return 0;
	}
	uint64_t v = 0;
	while (is_digit(rs_look(r))) {
		uint64_t d = (uint64_t)(rs_consume(r) - '0');
		if (v > (UINT64_MAX - d) / 10) {
			r->error = 1;
			return 0;
		}
		v = v * 10 + d;
	}
	return v;
}

/* Hex digits up to '_': their count (0 on error) and value (low 64 bits). */
static size_t rs_hex(struct rs *r, uint64_t *value)
{
	size_t start = r->pos;
	uint64_t v = 0;
	char c0 = rs_look(r);
	if (!(is_digit(c0) || (c0 >= 'a' && c0 <= 'f')))
		r->error = 1;
	if (rs_consume_if(r, '0')) {
		if (!rs_consume_if(r, '_'))
			r->error = 1;
	} else {
		while (!r->error && !rs_consume_if(r, '_')) {
			char c = rs_consume(r);
			if (is_digit(c))
				v = v * 16 + (uint64_t)(c - '0');
			else if (c >= 'a' && c <= 'f')
				v = v * 16 + 10 + (uint64_t)(c - 'a');
			else
				r->error = 1;
		}
	}
	*value = v;
	return r->error ? 0 : r->pos - 1 - start;
}

struct rs_ident {
	size_t len;
	int punycode;
};

static struct rs_ident rs_identifier(struct rs *r)
{
	struct rs_ident id = {0, rs_consume_if(r, 'u')};
	uint64_t bytes = rs_decimal(r);
	rs_consume_if(r, '_');
	if (r->error || bytes > r->len - r->pos) {
		r->error = 1;
		return (struct rs_ident){0, 0};
	}
	for (size_t i = 0; i < bytes; i++) {
		char c = r->in[r->pos + i];
		if (!(is_digit(c) || is_lower(c) || is_upper(c) || c == '_')) {
			r->error = 1;
			return (struct rs_ident){0, 0};
		}
	}
	r->pos += bytes;
	rs_step(r, bytes);
	id.len = bytes;
	return id;
}

static void rs_print_ident(struct rs *r, struct rs_ident id)
{
	if (r->error || !r->print)
		return;
	/* Punycode: up to 4 bytes per code point while decoding. */
	if (id.punycode && id.len > RS_PUNYCODE_MAX)
		r->over = r->error = 1;
	rs_emit(r, id.punycode ? 4 * (uint64_t)id.len : id.len);
}

static void rs_lifetime(struct rs *r, uint64_t index)
{
	if (index == 0) {
		rs_emit(r, 2);
		return;
	}
	if (index - 1 >= r->bound_lifetimes) {
		r->error = 1;
		return;
	}
	uint64_t depth = r->bound_lifetimes - index;
	rs_emit(r, depth < 26 ? 2 : 2 + decimal_digits(depth - 25));
}

static void rs_binder(struct rs *r)
{
	uint64_t n = rs_opt_base62(r, 'G');
	if (r->error || n == 0)
		return;
	if (n >= r->len - r->bound_lifetimes) {
		r->error = 1;
		return;
	}
	rs_emit(r, 4 + 2);
	for (uint64_t i = 0; i != n && rs_step(r, 1); i++) {
		r->bound_lifetimes++;
		if (i > 0)
			rs_emit(r, 2);
		rs_lifetime(r, 1);
	}
}

static int rs_path(struct rs *r, int in_type, int leave_open);
static void rs_type(struct rs *r);
static void rs_const(struct rs *r);

/* A back reference, replayed only when printing (as LLVM does). */
static int rs_backref(struct rs *r, int what, int in_type, int leave_open)
{
	uint64_t target = rs_base62(r);
	if (r->error || target >= r->pos) {
		r->error = 1;
		return 0;
	}
	if (!r->print)
		return 0;
	size_t saved = r->pos;
	int open = 0;
	r->pos = (size_t)target;
	if (what == 'p')
		open = rs_path(r, in_type, leave_open);
	else if (what == 't')
		rs_type(r);
	else
		rs_const(r);
	r->pos = saved;
	return open;
}

static int rs_enter(struct rs *r)
{
	if (r->error || r->level >= RS_MAX_LEVEL || !rs_step(r, 1)) {
		r->error = 1;
		return 0;
	}
	r->level++;
	return 1;
}

static void rs_generic_arg(struct rs *r)
{
	if (rs_consume_if(r, 'L'))
		rs_lifetime(r, rs_base62(r));
	else if (rs_consume_if(r, 'K'))
		rs_const(r);
	else
		rs_type(r);
}

static void rs_impl_path(struct rs *r, int in_type)
{
	int saved = r->print;
	r->print = 0;
	rs_opt_base62(r, 's');
	rs_path(r, in_type, 0);
	r->print = saved;
}

static int rs_path(struct rs *r, int in_type, int leave_open)
{
	if (!rs_enter(r))
		return 0;
	int open = 0;
	char c = rs_consume(r);
	switch (c) {
	case 'C':
		rs_opt_base62(r, 's');
		rs_print_ident(r, rs_identifier(r));
		break;
	case 'M':
		rs_impl_path(r, in_type);
		rs_emit(r, 1);
		rs_type(r);
		rs_emit(r, 1);
		break;
	case 'X':
	case 'Y': /* "<" type " as " path ">", after an unprinted impl path */
		if (c == 'X')
			rs_impl_path(r, in_type);
		rs_emit(r, 1);
		rs_type(r);
		rs_emit(r, 4);
		rs_path(r, RS_IN_TYPE, 0);
		rs_emit(r, 1);
		break;
	case 'N': {
		char ns = rs_consume(r);
		if (!is_lower(ns) && !is_upper(ns)) {
			r->error = 1;
			break;
		}
		rs_path(r, in_type, 0);
		uint64_t dis = rs_opt_base62(r, 's');
		struct rs_ident id = rs_identifier(r);
		if (is_upper(ns)) {
			rs_emit(r, 3 + (ns == 'C' ? 7 : ns == 'S' ? 4 : 1));
			if (id.len) {
				rs_emit(r, 1);
				rs_print_ident(r, id);
			}
			rs_emit(r, 1 + decimal_digits(dis) + 1);
		} else if (id.len) {
			rs_emit(r, 2);
			rs_print_ident(r, id);
		}
		break;
	}
	case 'I':
		rs_path(r, in_type, 0);
		rs_emit(r, in_type == RS_NOT_IN_TYPE ? 3 : 1);
		for (size_t i = 0; !r->error && !rs_consume_if(r, 'E'); i++) {
			if (i > 0)
				rs_emit(r, 2);
			rs_generic_arg(r);
		}
		if (leave_open)
			open = 1;
		else
			rs_emit(r, 1);
		break;
	case 'B':
		open = rs_backref(r, 'p', in_type, leave_open);
		break;
	default:
		r->error = 1;
		break;
	}
	r->level--;
	return open;
}

/* Printed length of a basic type, or 0 when c is not one. */
static unsigned rs_basic(char c)
{
	switch (c) {
	case 'p': case 'z': return 1;
	case 'a': case 'h': case 'u': return 2;
	case 'd': case 'e': case 'f': case 'l': case 'm': case 's': case 't':
	case 'v': case 'x': case 'y': return 3;
	case 'b': case 'c': case 'n': case 'o': return 4;
	case 'i': case 'j': return 5;
	default: return 0;
	}
}

static void rs_fn_sig(struct rs *r)
{
	size_t saved = r->bound_lifetimes;
	rs_binder(r);
	if (rs_consume_if(r, 'U'))
		rs_emit(r, 7); /* "unsafe " */
	if (rs_consume_if(r, 'K')) {
		rs_emit(r, 8); /* extern " */
		if (rs_consume_if(r, 'C')) {
			rs_emit(r, 1);
		} else {
			struct rs_ident id = rs_identifier(r);
			if (id.punycode)
				r->error = 1;
			rs_emit(r, id.len);
		}
		rs_emit(r, 2);
	}
	rs_emit(r, 3); /* "fn(" */
	for (size_t i = 0; !r->error && !rs_consume_if(r, 'E'); i++) {
		if (i > 0)
			rs_emit(r, 2);
		rs_type(r);
	}
	rs_emit(r, 1);
	if (!rs_consume_if(r, 'u')) {
		rs_emit(r, 4); /* " -> " */
		rs_type(r);
	}
	r->bound_lifetimes = saved;
}

static void rs_dyn_trait(struct rs *r)
{
	int open = rs_path(r, RS_IN_TYPE, 1);
	while (!r->error && rs_consume_if(r, 'p')) {
		rs_emit(r, open ? 2 : 1);
		open = 1;
		rs_emit(r, rs_identifier(r).len);
		rs_emit(r, 3);
		rs_type(r);
	}
	if (open)
		rs_emit(r, 1);
}

static void rs_dyn_bounds(struct rs *r)
{
	size_t saved = r->bound_lifetimes;
	rs_emit(r, 4); /* "dyn " */
	rs_binder(r);
	for (size_t i = 0; !r->error && !rs_consume_if(r, 'E'); i++) {
		if (i > 0)
			rs_emit(r, 3);
		rs_dyn_trait(r);
	}
	r->bound_lifetimes = saved;
}

static void rs_type(struct rs *r)
{
	if (!rs_enter(r))
		return;
	size_t start = r->pos;
	char c = rs_consume(r);
	unsigned basic = rs_basic(c);
	if (basic) {
		rs_emit(r, basic);
		r->level--;
		return;
	}
	switch (c) {
	case 'A':
		rs_emit(r, 1);
		rs_type(r);
		rs_emit(r, 2);
		rs_const(r);
		rs_emit(r, 1);
		break;
	case 'S':
		rs_emit(r, 1);
		rs_type(r);
		rs_emit(r, 1);
		break;
	case 'T': {
		size_t i = 0;
		rs_emit(r, 1);
		for (; !r->error && !rs_consume_if(r, 'E'); i++) {
			if (i > 0)
				rs_emit(r, 2);
			rs_type(r);
		}
		rs_emit(r, i == 1 ? 2 : 1);
		break;
	}
	case 'R':
	case 'Q':
		rs_emit(r, 1);
		if (rs_consume_if(r, 'L')) {
			uint64_t lt = rs_base62(r);
			if (lt) {
				rs_lifetime(r, lt);
				rs_emit(r, 1);
			}
		}
		if (c == 'Q')
			rs_emit(r, 4);
		rs_type(r);
		break;
	case 'P':
		rs_emit(r, 7); /* "*const " */
		rs_type(r);
		break;
	case 'O':
		rs_emit(r, 5); /* "*mut " */
		rs_type(r);
		break;
	case 'F':
		rs_fn_sig(r);
		break;
	case 'D':
		rs_dyn_bounds(r);
		if (rs_consume_if(r, 'L')) {
			uint64_t lt = rs_base62(r);
			if (lt) {
				rs_emit(r, 3);
				rs_lifetime(r, lt);
			}
		} else {
			r->error = 1;
		}
		break;
	case 'B':
		rs_backref(r, 't', 0, 0);
		break;
	default:
		r->pos = start;
		rs_path(r, RS_IN_TYPE, 0);
		break;
	}
	r->level--;
}

static void rs_const(struct rs *r)
{
	if (!rs_enter(r))
		return;
	char c = rs_consume(r);
	uint64_t v;
	size_t n;
	switch (c) {
	case 'a': case 's': case 'l': case 'x': case 'n': case 'i':
	case 'h': case 't': case 'm': case 'y': case 'o': case 'j':
		if (rs_consume_if(r, 'n'))
			rs_emit(r, 1);
		n = rs_hex(r, &v);
		rs_emit(r, n <= 16 ? decimal_digits(v) : 2 + n);
		break;
	case 'b':
		n = rs_hex(r, &v);
		if (n == 1 && v <= 1)
			rs_emit(r, v ? 4 : 5);
		else
			r->error = 1;
		break;
	case 'c':
		n = rs_hex(r, &v);
		if (r->error || n > 6)
			r->error = 1;
		else if (v == '\t' || v == '\r' || v == '\n' || v == '\\' || v == '\'')
			rs_emit(r, 4);
		else if (v == '"' || (v >= 0x20 && v <= 0x7e))
			rs_emit(r, 3);
		else
			rs_emit(r, 2 + 3 + n + 1);
		break;
	case 'p':
		rs_emit(r, 1);
		break;
	case 'B':
		rs_backref(r, 'c', 0, 0);
		break;
	default:
		r->error = 1;
		break;
	}
	r->level--;
}

int rd_rust_demangle_fits(const char *name, size_t len, const struct rd_demangle_limits *lim)
{
	if (len < 2 || name[0] != '_' || name[1] != 'R')
		return 1;
	const char *dot = memchr(name + 2, '.', len - 2);
	struct rs r = {
		.in = name + 2,
		.len = dot ? (size_t)(dot - (name + 2)) : len - 2,
		.print = 1,
		.out_max = lim->output_max,
		/* Steps: each input byte a few times over (a parse without
		 * back references takes under two per byte), plus one per
		 * byte printed; a name that replays much while printing
		 * little is refused too. */
		.work_max = lim->output_max + 4 * (uint64_t)len,
	};
	rs_path(&r, RS_NOT_IN_TYPE, 0);
	if (!r.error && r.pos != r.len) {
		r.print = 0; /* the instantiating crate */
		rs_path(&r, RS_NOT_IN_TYPE, 0);
	}
	if (!r.error && r.pos == r.len && dot)
		rs_emit(&r, 3 + (uint64_t)(len - (size_t)(dot - name)));
	return !r.over;
}
