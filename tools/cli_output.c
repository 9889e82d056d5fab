/* SPDX-License-Identifier: MIT */
/*
 * llvm-symbolizer-14's output styles, reproduced byte for byte.
 *
 * Plain styles (LLVM, GNU) follow its PlainPrinterBase: an optional address
 * header ("0x<hex>" then "\n", or ": " with --pretty-print), per frame a
 * function line (unless --functions=none; "??" when unknown; " at " instead
 * of the newline and an " (inlined by) " prefix on outer frames when pretty),
 * then "file:line:column" (LLVM) or "file:line" plus " (discriminator N)"
 * (GNU), "??" for an unknown file.  LLVM ends each request with a blank line,
 * GNU does not.
 *
 * JSON follows llvm::json's writer: object keys in sorted order, strings
 * escaped as llvm::json::OStream does (\" \\ \t \n \r, other control bytes as
 * \u00XX) after invalid UTF-8 is replaced by U+FFFD per maximal subpart, and
 * with --pretty-print a two-space indentation.  Addresses from argv make one
 * array printed at the end; each stdin line makes one object per line.
 */
#include "cli_output.h"

#include <assert.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

/* Per generation: a table at most half full, so 64 Ki names, and their
 * demangled text.  A C++ name demangles to 500 bytes on average in a large
 * image, so the arena is what fills first there. */
#ifndef CLI_NAME_ARENA /* a test build makes it small (tests/unit/test_cli_names.c) */
/* 24 MiB holds the distinct names of a large C++ image's profile (30 MB
 * of names over two generations): 8 MiB cost 1.33-1.55x the CPU there by
 * demangling names again (README "Memory"). */
#define CLI_NAME_ARENA (24u << 20)    /* touched only as far as it is used */
#endif

void cli_printer_init(struct cli_printer *p, struct cli_out *out)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->style = CLI_STYLE_LLVM;
	p->fn_kind = CLI_FN_LINKAGE;
	p->path_kind = CLI_PATH_ABSOLUTE;
	p->demangle = 1;
	cli_demangler_init(&p->dm);
}

void cli_printer_fini(struct cli_printer *p)
{
	cli_demangler_fini(&p->dm);
	cli_source_fini(&p->src);
	cli_name_cold_fini(&p->names.cold);
	for (int i = 0; i < 2; i++) {
		free(p->names.gen[i].slot);
		free(p->names.gen[i].arena);
	}
	free(p->paths);
	p->paths = NULL;
	memset(&p->names, 0, sizeof(p->names));
}

/* ---- demangling, cached by name pointer ------------------------------ */

void cli_printer_names_to_huge(struct cli_printer *p)
{
	p->names.huge = 1;
	for (int i = 0; i < 2; i++) {
		struct cli_name_gen *g = &p->names.gen[i];
		if (!g->slot || g->huge)
			continue;
		/* slots name arena bytes by offset: both move as they are */
		const size_t sb = CLI_NAME_SLOTS * sizeof(*g->slot);
		struct cli_name_slot *slot = cli_big_realloc(g->slot, sb, sb);
		char *arena = slot ? cli_big_realloc(g->arena, g->alen, CLI_NAME_ARENA) : NULL;
		if (slot)
			g->slot = slot;
		if (arena)
			g->arena = arena;
		g->huge = 1; /* (out of memory: what did not move stays, not retried) */
	}
}

static void gen_clear(struct cli_name_gen *g)
{
	if (g->slot)
		memset(g->slot, 0, CLI_NAME_SLOTS * sizeof(*g->slot));
	g->used = g->alen = 0;
}

void cli_printer_forget_names(struct cli_printer *p)
{
	gen_clear(&p->names.gen[0]);
	gen_clear(&p->names.gen[1]);
	cli_name_cold_clear(&p->names.cold);
	if (p->paths)
		memset(p->paths, 0, CLI_PATH_SLOTS * sizeof(*p->paths));
}

/* The slot of name in g, or the empty slot where it would go (NULL when g
 * has no table). */
static inline struct cli_name_slot *gen_probe(struct cli_name_gen *g, const char *name)
{
	if (!g->slot)
		return NULL;
	size_t h = cli_name_hash(name);
	while (g->slot[h].key && g->slot[h].key != name)
		h = (h + 1) & (CLI_NAME_SLOTS - 1);
	return &g->slot[h];
}

/* A generation's tables: calloc and malloc of this size map fresh pages,
 * so only the slots and bytes used are ever touched; a long run's are in
 * huge pages (cli_printer_names_to_huge), the slots cleared at once. */
static void gen_alloc(struct cli_name_gen *g, int huge)
{
	const size_t sb = CLI_NAME_SLOTS * sizeof(*g->slot);
	if (!huge) {
		g->slot = calloc(1, sb);
		g->arena = malloc(CLI_NAME_ARENA);
		return;
	}
	g->slot = cli_big_zalloc(sb);
	g->arena = cli_big_realloc(NULL, 0, CLI_NAME_ARENA);
	g->huge = 1;
}

/* Whether g can take one more name of len bytes (allocating it on first
 * use); -1 without memory. */
static int gen_room(struct cli_name_cache *c, struct cli_name_gen *g, size_t len)
{
	if (!g->slot) {
		gen_alloc(g, c->huge);
		if (!g->slot || !g->arena) {
			free(g->slot);
			free(g->arena);
			g->slot = NULL;
			g->arena = NULL;
			return -1;
		}
	}
	return g->used + 1 <= CLI_NAME_SLOTS / 2 && len <= CLI_NAME_ARENA - g->alen;
}

/* The shown name of a slot of g. */
static const char *slot_text(const struct cli_name_gen *g, const struct cli_name_slot *s)
{
	return s->off == UINT32_MAX ? s->key : g->arena + s->off;
}

/*
 * Before generation g is dropped: its demangled names that the current
 * generation does not hold go to the compressed store, from which they
 * come back for a decompression instead of a demangling.  Only names that
 * leave both generations pay for their compression, so a run whose names
 * fit in the generations never makes the store.
 */
static void gen_keep_cold(struct cli_name_cache *c, const struct cli_name_gen *g)
{
	if (!g->slot)
		return;
	for (size_t i = 0; i < CLI_NAME_SLOTS && !c->cold.full; i++) {
		const struct cli_name_slot *s = &g->slot[i];
		if (!s->key || s->off == UINT32_MAX)
			continue; /* (empty, or shown as itself: no demangling to save) */
		const struct cli_name_slot *cur = gen_probe(&c->gen[1], s->key);
		if (cur && cur->key)
			continue;
		cli_name_cold_put(&c->cold, s->key, g->arena + s->off, s->len);
	}
}

/*
 * Put name, shown as d (d == name: as itself; len bytes, plain flag in
 * len), into the current generation, starting a new one when it is full.
 * d must not point into the previous generation's arena (it is reused).
 * Returns the slot, or NULL when it cannot be cached (no memory, or a name
 * longer than an arena).
 */
static const struct cli_name_slot *names_insert(struct cli_name_cache *c, const char *name,
                                                const char *d, uint32_t len)
{
	size_t bytes = d == name ? 0 : (len & ~CLI_NAME_PLAIN) + 1;
	int room = gen_room(c, &c->gen[0], bytes);
	if (room < 0 || bytes > CLI_NAME_ARENA)
		return NULL;
	if (!room) {
		struct cli_name_gen old = c->gen[1];
		c->gen[1] = c->gen[0];
		c->gen[0] = old;
		gen_keep_cold(c, &c->gen[0]);
		gen_clear(&c->gen[0]);
		if (gen_room(c, &c->gen[0], bytes) <= 0)
			return NULL;
	}
	struct cli_name_gen *g = &c->gen[0];
	struct cli_name_slot *s = gen_probe(g, name);
	s->key = name;
	s->len = len;
	s->off = bytes ? (uint32_t)g->alen : UINT32_MAX;
	if (bytes)
		memcpy(g->arena + g->alen, d, bytes);
	g->alen += bytes;
	g->used++;
	return s;
}

/* A shown name: its bytes, length, and whether it has no control character. */
struct shown {
	const char *s;
	size_t len;
	int plain;
};

static struct shown shown_of(const char *s)
{
	size_t n = strlen(s);
	return (struct shown){ s, n, cli_text_plain(s, n, CLI_TEXT_CTRL) == n };
}

/*
 * cli_demangle(), remembered per name pointer (p->stable_names only) for
 * the whole run with the shown name's length and escaping: a name is
 * demangled once however often and in however many batches it is printed,
 * unless more distinct names than two generations hold are printed
 * between two of its printings.  Names that do not demangle (C names, or
 * all of them without demangling) are cached too, as themselves: their
 * length and escaping then cost one probe of a slot the caller prefetched
 * instead of a strlen and a scan per printed frame.
 */
static __attribute__((noinline)) struct shown cached_demangle_miss(struct cli_printer *p,
                                                                 const char *name)
{
	struct cli_name_cache *c = &p->names;
	struct shown d;
	const struct cli_name_slot *s = gen_probe(&c->gen[1], name);
	if (s && s->key) {
		/* Copied out first: inserting may reuse the previous arena. */
		const char *t = slot_text(&c->gen[1], s);
		if (t == name) {
			d = (struct shown){ name, s->len & ~CLI_NAME_PLAIN,
				            (s->len & CLI_NAME_PLAIN) != 0 };
		} else {
			uint32_t len = s->len;
			size_t n = (len & ~CLI_NAME_PLAIN) + 1;
			if (p->dm.cap < n) {
				char *nb = realloc(p->dm.buf, n);
				if (!nb)
					return shown_of(t);
				p->dm.buf = nb;
				p->dm.cap = n;
			}
			memcpy(p->dm.buf, t, n);
			d = (struct shown){ p->dm.buf, n - 1, (len & CLI_NAME_PLAIN) != 0 };
		}
	} else if (p->demangle && (name[0] == '_' || name[0] == '?')) {
		uint32_t len;
		if (cli_name_cold_get(&c->cold, name, &p->dm.buf, &p->dm.cap, &len))
			d = (struct shown){ p->dm.buf, len & ~CLI_NAME_PLAIN,
				            (len & CLI_NAME_PLAIN) != 0 };
		else
			d = shown_of(cli_demangle(&p->dm, name));
	} else {
		d = shown_of(name);
	}
	if (d.len >= CLI_NAME_PLAIN)
		return d;
	s = names_insert(c, name, d.s, (uint32_t)d.len | (d.plain ? CLI_NAME_PLAIN : 0));
	if (!s)
		return d;
	/* The arena copy, since d may be the demangler's buffer. */
	return (struct shown){ slot_text(&c->gen[0], s), d.len, d.plain };
}

/* A hit in the current generation inline (most printed frames), the rest
 * apart. */
static inline struct shown cached_demangle(struct cli_printer *p, const char *name)
{
	struct cli_name_gen *g = &p->names.gen[0];
	const struct cli_name_slot *s = gen_probe(g, name);
	if (s && s->key)
		return (struct shown){ slot_text(g, s), s->len & ~CLI_NAME_PLAIN,
			               (s->len & CLI_NAME_PLAIN) != 0 };
	return cached_demangle_miss(p, name);
}

/* The name a frame shows (s NULL when unknown). */
static inline struct shown shown_name(struct cli_printer *p, const char *name)
{
	if (!name)
		return (struct shown){ NULL, 0, 1 };
	if (p->stable_names)
		return cached_demangle(p, name);
	/* Only '_' and '?' names can demangle (symdb_demangle's own cheap
	 * exit): C names skip the call. */
	if (!p->demangle || (name[0] != '_' && name[0] != '?'))
		return shown_of(name);
	return shown_of(cli_demangle(&p->dm, name));
}

static const char *display_name(struct cli_printer *p, const char *name)
{
	return shown_name(p, name).s;
}

/* The last path component, like llvm::sys::path::filename (posix). */
static const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return path;
	if (slash[1] == '\0')
		return slash == path ? "/" : ".";
	return slash + 1;
}

static const char *display_path(const struct cli_printer *p, const char *abs, const char *rel)
{
	if (!abs)
		return NULL;
	switch (p->path_kind) {
	case CLI_PATH_RELATIVE:
		return rel ? rel : abs;
	case CLI_PATH_BASENAME:
		return path_basename(abs);
	default:
		return abs;
	}
}

/* A path's length and escaping, remembered per pointer (stable_names):
 * a program has a few thousand source files, printed once per frame.
 * shown_path_miss measures a path its slot s does not hold yet. */
static __attribute__((noinline)) struct shown shown_path_miss(struct cli_path_slot *s,
                                                            const char *path)
{
	struct shown d = shown_of(path);
	if (d.len < CLI_NAME_PLAIN) {
		s->key = path;
		s->len = (uint32_t)d.len | (d.plain ? CLI_NAME_PLAIN : 0);
	}
	return d;
}

static inline struct shown shown_path(struct cli_printer *p, const char *path)
{
	if (!p->stable_names || (!p->paths && !(p->paths = calloc(CLI_PATH_SLOTS,
	                                                            sizeof(*p->paths)))))
		return shown_of(path);
	struct cli_path_slot *s = &p->paths[cli_name_hash(path) & (CLI_PATH_SLOTS - 1)];
	if (s->key != path)
		return shown_path_miss(s, path);
	return (struct shown){ path, s->len & ~CLI_NAME_PLAIN, (s->len & CLI_NAME_PLAIN) != 0 };
}

/* The file a frame prints.  An STT_FILE name goes out as the symbol table
 * spells it: llvm-symbolizer 14 applies the path options to DWARF names only. */
static const char *line_path(const struct cli_printer *p, const struct cli_line_info *li)
{
	return li->file_verbatim ? li->file : display_path(p, li->file, li->file_rel);
}

/* ---- UTF-8 repair and JSON strings ---------------------------------- */

/*
 * Length of the well-formed UTF-8 sequence at s (Unicode 6.3 Table 3-7), or
 * 0 when it is ill-formed, with *subpart set to the length of its maximal
 * subpart (Unicode D93b), which is what one U+FFFD replaces.
 */
static size_t utf8_seq(const unsigned char *s, size_t n, size_t *subpart)
{
	unsigned char b = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xBF; /* range of the second byte */
	if (b < 0x80)
		return 1;
	if (b >= 0xC2 && b <= 0xDF)
		len = 2;
	else if (b >= 0xE0 && b <= 0xEF) {
		len = 3;
		if (b == 0xE0)
			lo = 0xA0;
		else if (b == 0xED)
			hi = 0x9F;
	} else if (b >= 0xF0 && b <= 0xF4) {
		len = 4;
		if (b == 0xF0)
			lo = 0x90;
		else if (b == 0xF4)
			hi = 0x8F;
	} else {
		*subpart = 1;
		return 0;
	}
	size_t i = 1;
	for (; i < len && i < n; i++) {
		unsigned char c = s[i];
		unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
		if (c < l || c > h)
			break;
	}
	if (i == len)
		return len;
	*subpart = i;
	return 0;
}

/* Bytes that cannot be copied into a JSON string as they are: control
 * characters, '"', '\\', and everything non-ASCII (UTF-8 is validated). */
#define C4(x) x, x, x, x
#define C16(x) C4(x), C4(x), C4(x), C4(x)
static const unsigned char json_special[256] = {
	C16(1), C16(1),                                   /* 0x00-0x1f */
	0, 0, 1, C4(0), C4(0), C4(0), 0,                  /* 0x20-0x2f: '"' */
	C16(0), C16(0),                                   /* 0x30-0x4f */
	C4(0), C4(0), C4(0), 1, 0, 0, 0,                  /* 0x50-0x5f: '\\' */
	C16(0), C16(0),                                   /* 0x60-0x7f */
	C16(1), C16(1), C16(1), C16(1), C16(1), C16(1), C16(1), C16(1),
};
#undef C16
#undef C4

/* The end of the run of bytes from s[i] that need no escaping: 16 at a
 * time where SSE2 is there (names are most of the bytes JSON prints). */
static size_t json_plain_run(const unsigned char *s, size_t i, size_t n)
{
#ifdef __SSE2__
	const __m128i below = _mm_set1_epi8(0x1f), quote = _mm_set1_epi8('"'),
		      bslash = _mm_set1_epi8('\\');
	for (; i + 16 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		/* movemask's sign bits are the non-ASCII bytes */
		__m128i bad = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(x, below), x),
		                           _mm_or_si128(_mm_cmpeq_epi8(x, quote),
		                                        _mm_cmpeq_epi8(x, bslash)));
		unsigned mask = (unsigned)_mm_movemask_epi8(_mm_or_si128(bad, x));
		if (mask)
			return i + (size_t)__builtin_ctz(mask);
	}
#endif
	while (i < n && !json_special[s[i]])
		i++;
	return i;
}

/* The escaped bytes of a JSON string literal, without the quotes. */
static void json_body(struct cli_out *o, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n) {
		/* Copy the longest run that needs no escaping in one go. */
		size_t run = json_plain_run(s, i, n);
		if (run > i) {
			cli_out_mem(o, str + i, run - i);
			i = run;
			if (i == n)
				break;
		}
		unsigned char c = s[i];
		if (c >= 0x80) {
			size_t sub = 1, len = utf8_seq(s + i, n - i, &sub);
			if (len) {
				cli_out_mem(o, str + i, len);
				i += len;
			} else {
				cli_out_mem(o, "\xEF\xBF\xBD", 3);
				i += sub;
			}
			continue;
		}
		i++;
		if (c == '"' || c == '\\') {
			cli_out_chr(o, '\\');
			cli_out_chr(o, (char)c);
		} else if (c >= 0x20) {
			cli_out_chr(o, (char)c);
		} else if (c == '\t') {
			cli_out_mem(o, "\\t", 2);
		} else if (c == '\n') {
			cli_out_mem(o, "\\n", 2);
		} else if (c == '\r') {
			cli_out_mem(o, "\\r", 2);
		} else {
			char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			cli_out_mem(o, u, 6);
		}
	}
}

void cli_json_string(struct cli_out *o, const char *str, size_t n)
{
	cli_out_chr(o, '"');
	json_body(o, str, n);
	cli_out_chr(o, '"');
}

/* ---- a streaming JSON writer shaped like llvm::json::OStream --------- */

static void j_newline(struct cli_printer *p)
{
	if (!p->pretty)
		return;
	cli_out_chr(p->out, '\n');
	for (unsigned i = 0; i < p->jdepth * 2; i++)
		cli_out_chr(p->out, ' ');
}

/* Before any value: a separator when this level already holds one. */
static void j_value_begin(struct cli_printer *p, int in_array)
{
	if (!in_array)
		return;
	if (p->jhas[p->jdepth])
		cli_out_chr(p->out, ',');
	if (p->jdepth > 0)
		j_newline(p);
	p->jhas[p->jdepth] = 1;
}

static void j_open(struct cli_printer *p, char c)
{
	cli_out_chr(p->out, c);
	p->jdepth++;
	p->jhas[p->jdepth] = 0;
}

static void j_close(struct cli_printer *p, char c)
{
	int had = p->jhas[p->jdepth];
	p->jdepth--;
	if (had)
		j_newline(p);
	cli_out_chr(p->out, c);
}

static void j_key(struct cli_printer *p, const char *key)
{
	if (p->jhas[p->jdepth])
		cli_out_chr(p->out, ',');
	j_newline(p);
	p->jhas[p->jdepth] = 1;
	/* Keys are constant ASCII identifiers: no escaping needed. */
	cli_out_chr(p->out, '"');
	cli_out_str(p->out, key);
	cli_out_mem(p->out, "\":", 2);
	if (p->pretty)
		cli_out_chr(p->out, ' ');
}

static void j_kv_str(struct cli_printer *p, const char *key, const char *val)
{
	j_key(p, key);
	cli_json_string(p->out, val ? val : "", val ? strlen(val) : 0);
}

static void j_kv_u64(struct cli_printer *p, const char *key, uint64_t v)
{
	j_key(p, key);
	cli_out_u64(p->out, v);
}

static void j_kv_hex(struct cli_printer *p, const char *key, uint64_t v)
{
	j_key(p, key);
	cli_out_mem(p->out, "\"0x", 3);
	cli_out_hex(p->out, v);
	cli_out_chr(p->out, '"');
}

/* Start one request object: a list element, or a top-level value. */
static void j_request_begin(struct cli_printer *p)
{
	if (p->json_list)
		j_value_begin(p, 1);
	j_open(p, '{');
}

static void j_request_end(struct cli_printer *p)
{
	j_close(p, '}');
	if (!p->json_list)
		cli_out_chr(p->out, '\n');
}

void cli_print_begin(struct cli_printer *p)
{
	p->jdepth = 0;
	p->jhas[0] = 0;
	if (p->style == CLI_STYLE_JSON && p->json_list)
		j_open(p, '[');
}

void cli_print_end(struct cli_printer *p)
{
	if (p->style == CLI_STYLE_JSON && p->json_list) {
		j_close(p, ']');
		cli_out_chr(p->out, '\n');
	}
}

/* ---- plain styles ---------------------------------------------------- */

static void plain_header(struct cli_printer *p, uint64_t addr)
{
	if (!p->print_address)
		return;
	cli_out_mem(p->out, "0x", 2);
	cli_out_hex(p->out, addr);
	if (p->pretty)
		cli_out_mem(p->out, ": ", 2);
	else
		cli_out_chr(p->out, '\n');
}

static void plain_footer(struct cli_printer *p)
{
	if (p->style == CLI_STYLE_LLVM)
		cli_out_chr(p->out, '\n');
}

static void plain_function(struct cli_printer *p, const char *name, int inlined)
{
	if (p->fn_kind == CLI_FN_NONE)
		return;
	if (p->pretty && inlined)
		cli_out_str(p->out, " (inlined by) ");
	if (!name)
		name = "??";
	cli_out_text(p->out, name, strlen(name), CLI_TEXT_CTRL);
	if (p->pretty)
		cli_out_mem(p->out, " at ", 4);
	else
		cli_out_chr(p->out, '\n');
}

static void plain_verbose(struct cli_printer *p, const char *file, const struct cli_line_info *li)
{
	struct cli_out *o = p->out;
	cli_out_str(o, "  Filename: ");
	cli_out_text(o, file, strlen(file), CLI_TEXT_CTRL);
	cli_out_chr(o, '\n');
	if (li->decl_line) {
		const char *df = display_path(p, li->decl_file, li->decl_file_rel);
		cli_out_str(o, "  Function start filename: ");
		if (df)
			cli_out_text(o, df, strlen(df), CLI_TEXT_CTRL);
		cli_out_str(o, "\n  Function start line: ");
		cli_out_u64(o, li->decl_line);
		cli_out_chr(o, '\n');
	}
	if (p->style == CLI_STYLE_LLVM && li->has_start) {
		cli_out_str(o, "  Function start address: 0x");
		cli_out_hex(o, li->start);
		cli_out_chr(o, '\n');
	}
	cli_out_str(o, "  Line: ");
	cli_out_u64(o, li->line);
	cli_out_str(o, "\n  Column: ");
	cli_out_u64(o, li->column);
	cli_out_chr(o, '\n');
	if (li->discriminator) {
		cli_out_str(o, "  Discriminator: ");
		cli_out_u64(o, li->discriminator);
		cli_out_chr(o, '\n');
	}
}

static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* put_u32 for v >= 10000. */
static char *put_u32_long(char *d, uint32_t v)
{
	unsigned n = 5 + (v >= 100000) + (v >= 1000000) + (v >= 10000000) + (v >= 100000000) +
	             (v >= 1000000000);
	char *end = d + n;
	d = end;
	while (v >= 100) {
		unsigned k = (v % 100) * 2;
		v /= 100;
		*--d = digit_pairs[k + 1];
		*--d = digit_pairs[k];
	}
	if (v >= 10) {
		*--d = digit_pairs[2 * v + 1];
		*--d = digit_pairs[2 * v];
	} else {
		*--d = (char)('0' + v);
	}
	return end;
}

/* Decimal digits of v at d; returns the end.  Lines and columns are most
 * of the numbers the plain styles print, and nearly all are below 10000:
 * those take a branch or two and two-digit stores from a table. */
static inline char *put_u32(char *d, uint32_t v)
{
	if (v < 100) {
		if (v < 10) {
			*d = (char)('0' + v);
			return d + 1;
		}
		memcpy(d, digit_pairs + 2 * v, 2);
		return d + 2;
	}
	if (v >= 10000)
		return put_u32_long(d, v);
	unsigned hi = v / 100, lo = v % 100;
	if (hi < 10) {
		*d = (char)('0' + hi);
		memcpy(d + 1, digit_pairs + 2 * lo, 2);
		return d + 3;
	}
	memcpy(d, digit_pairs + 2 * hi, 2);
	memcpy(d + 2, digit_pairs + 2 * lo, 2);
	return d + 4;
}

/* The largest number of bytes plain_frame_fast writes besides the name and
 * the file: " (inlined by) ", " at ", ":" line, ":" column or
 * " (discriminator " N ")", "\n". */
#define PLAIN_FRAME_FIXED 64

/*
 * n bytes from s to d, reading and writing no byte outside either: 16 at a
 * time, the last 16 (8, 4) overlapping the previous ones.  C names and
 * paths are 10 to 128 bytes: inline, this is a few moves where memcpy is a
 * call through the PLT and a dispatch on the size, twice per printed frame;
 * longer ones (demangled C++) are memcpy's, which moves 32 bytes a step.
 */
static inline __attribute__((always_inline)) void copy_text(char *d, const char *s, size_t n)
{
	if (n > 128) {
		memcpy(d, s, n);
	} else if (n >= 16) {
#ifdef __SSE2__
		for (size_t i = 0; i + 16 < n; i += 16)
			_mm_storeu_si128((__m128i *)(void *)(d + i),
			                 _mm_loadu_si128((const __m128i *)(const void *)(s + i)));
		_mm_storeu_si128((__m128i *)(void *)(d + n - 16),
		                 _mm_loadu_si128((const __m128i *)(const void *)(s + n - 16)));
#else
		memcpy(d, s, n);
#endif
	} else if (n >= 8) {
		uint64_t a, b;
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		memcpy(d, &a, 4);
		memcpy(d + n - 4, &b, 4);
	} else if (n) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
}

/*
 * A frame in the plain styles without --verbose and source context: the
 * function line and "file:line:column" (LLVM) or "file:line" with an
 * optional discriminator (GNU).  The same bytes as plain_function and
 * plain_frame's general path, written into the buffer after one capacity
 * check instead of one per piece.  Returns -1, having written nothing,
 * when the name or the file has a control character to escape.
 */
static inline __attribute__((always_inline)) int
plain_frame_direct(struct cli_printer *p, struct cli_out *o, const char *name, const char *file,
                   uint32_t line, uint32_t column, uint32_t discriminator, int inlined)
{
	size_t nl = 0, fl;
	if (p->fn_kind != CLI_FN_NONE) {
		struct shown sn = shown_name(p, name);
		if (!sn.s)
			sn = (struct shown){ "??", 2, 1 };
		if (!sn.plain)
			return -1;
		name = sn.s;
		nl = sn.len;
	} else {
		name = NULL;
	}
	struct shown sf = file ? shown_path(p, file) : (struct shown){ "??", 2, 1 };
	if (!sf.plain)
		return -1;
	file = sf.s;
	fl = sf.len;
	size_t need = nl + fl + PLAIN_FRAME_FIXED;
	if (o->cap - o->len < need)
		cli_out_grow(o, need);
	char *d = o->buf + o->len;
	if (name) {
		if (p->pretty && inlined) {
			memcpy(d, " (inlined by) ", 14);
			d += 14;
		}
		copy_text(d, name, nl);
		d += nl;
		if (p->pretty) {
			memcpy(d, " at ", 4);
			d += 4;
		} else {
			*d++ = '\n';
		}
	}
	copy_text(d, file, fl);
	d += fl;
	*d++ = ':';
	d = put_u32(d, line);
	if (p->style == CLI_STYLE_LLVM) {
		*d++ = ':';
		d = put_u32(d, column);
	} else if (discriminator) {
		memcpy(d, " (discriminator ", 16);
		d = put_u32(d + 16, discriminator);
		*d++ = ')';
	}
	*d++ = '\n';
	o->len = (size_t)(d - o->buf);
	return 0;
}

int cli_format_plain_frame(struct cli_printer *p, struct cli_out *o, const char *name,
                           const char *file, uint32_t line, uint32_t column,
                           uint32_t discriminator, int inlined)
{
	return plain_frame_direct(p, o, name, file, line, column, discriminator, inlined);
}

/* cli_format_plain_frames() one frame at a time, for what the loop below
 * does not take. */
static int plain_frames_each(struct cli_printer *p, struct cli_out *o, const symdb_frame *f,
                             size_t n)
{
	size_t start = o->len;
	for (size_t i = 0; i < n; i++) {
		if (plain_frame_direct(p, o, f[i].name, f[i].file, f[i].line, f[i].column,
		                       f[i].discriminator, i > 0) < 0) {
			o->len = start;
			return -1;
		}
	}
	if (p->style == CLI_STYLE_LLVM)
		cli_out_chr(o, '\n');
	return 0;
}

/*
 * The bodies of uniform addresses are most of what symdb query formats:
 * millions of frames, each a cached name and a cached path copied and two
 * numbers.  This is plain_frame_direct for the LLVM style without
 * --pretty-print and with stable names, with the options and the buffer
 * in locals: the compiler must otherwise reload them after every byte
 * stored (a char store may alias anything).
 */
int cli_format_plain_frames(struct cli_printer *p, struct cli_out *o, const symdb_frame *f,
                            size_t n)
{
	if (!p->stable_names || p->pretty || p->style != CLI_STYLE_LLVM ||
	    p->fn_kind != CLI_FN_LINKAGE ||
	    (!p->paths && !(p->paths = calloc(CLI_PATH_SLOTS, sizeof(*p->paths)))))
		return plain_frames_each(p, o, f, n);
	struct cli_path_slot *paths = p->paths;
	size_t start = o->len;
	for (size_t i = 0; i < n; i++) {
		const char *name = f[i].name, *file = f[i].file;
		struct shown sn = name ? cached_demangle(p, name) : (struct shown){ "??", 2, 1 };
		struct shown sf = { "??", 2, 1 };
		if (file) {
			struct cli_path_slot *ps =
				&paths[cli_name_hash(file) & (CLI_PATH_SLOTS - 1)];
			if (ps->key == file)
				sf = (struct shown){ file, ps->len & ~CLI_NAME_PLAIN,
					             (ps->len & CLI_NAME_PLAIN) != 0 };
			else
				sf = shown_path_miss(ps, file);
		}
		if (!sn.plain || !sf.plain) {
			o->len = start;
			return -1;
		}
		size_t need = sn.len + sf.len + PLAIN_FRAME_FIXED;
		if (o->cap - o->len < need)
			cli_out_grow(o, need);
		char *d = o->buf + o->len;
		uint32_t line = f[i].line, column = f[i].column;
		copy_text(d, sn.s, sn.len);
		d += sn.len;
		*d++ = '\n';
		copy_text(d, sf.s, sf.len);
		d += sf.len;
		*d++ = ':';
		d = put_u32(d, line);
		*d++ = ':';
		d = put_u32(d, column);
		*d++ = '\n';
		o->len = (size_t)(d - o->buf);
	}
	cli_out_chr(o, '\n');
	return 0;
}

int cli_plain_frames_direct(const struct cli_printer *p)
{
	return (p->style == CLI_STYLE_LLVM || p->style == CLI_STYLE_GNU) && !p->verbose &&
	       p->src.lines <= 0 && p->fn_kind == CLI_FN_LINKAGE && p->path_kind == CLI_PATH_ABSOLUTE;
}

void cli_format_plain_end(const struct cli_printer *p, struct cli_out *o)
{
	if (p->style == CLI_STYLE_LLVM)
		cli_out_chr(o, '\n');
}

static int plain_frame_fast(struct cli_printer *p, const struct cli_line_info *li, int inlined)
{
	return cli_format_plain_frame(p, p->out, li->name, line_path(p, li), li->line, li->column,
	                              li->discriminator, inlined);
}

static void plain_frame(struct cli_printer *p, const struct cli_line_info *li, int inlined)
{
	struct cli_out *o = p->out;
	if (!p->verbose && p->src.lines <= 0 && plain_frame_fast(p, li, inlined) == 0)
		return;
	plain_function(p, display_name(p, li->name), inlined);
	const char *file = line_path(p, li);
	if (!file)
		file = "??";
	if (p->verbose) {
		plain_verbose(p, file, li);
		return;
	}
	cli_out_text(o, file, strlen(file), CLI_TEXT_CTRL);
	cli_out_chr(o, ':');
	cli_out_u64(o, li->line);
	if (p->style == CLI_STYLE_LLVM) {
		cli_out_chr(o, ':');
		cli_out_u64(o, li->column);
	} else if (li->discriminator) {
		cli_out_str(o, " (discriminator ");
		cli_out_u64(o, li->discriminator);
		cli_out_chr(o, ')');
	}
	cli_out_chr(o, '\n');
	if (p->src.lines > 0) {
		/* llvm reads the name as printed: "??" included. */
		if (li->source)
			cli_source_format_text(&p->src, li->source, li->source_len, li->line);
		else
			cli_source_format(&p->src, file, li->line);
		cli_out_mem(o, p->src.out, p->src.out_len);
	}
}

/* ---- requests -------------------------------------------------------- */

void cli_print_invalid(struct cli_printer *p, const char *line, size_t len)
{
	if (p->style != CLI_STYLE_JSON) {
		cli_out_mem(p->out, line, len);
		cli_out_chr(p->out, '\n');
		return;
	}
	static const char prefix[] = "unable to parse arguments: ";
	j_request_begin(p);
	j_key(p, "Error");
	j_open(p, '{');
	j_key(p, "Message");
	cli_out_chr(p->out, '"');
	json_body(p->out, prefix, sizeof(prefix) - 1);
	json_body(p->out, line, len);
	cli_out_chr(p->out, '"');
	j_close(p, '}');
	j_kv_str(p, "ModuleName", p->module);
	j_request_end(p);
}

static void json_frame(struct cli_printer *p, const struct cli_line_info *li)
{
	j_value_begin(p, 1);
	j_open(p, '{');
	j_kv_u64(p, "Column", li->column);
	j_kv_u64(p, "Discriminator", li->discriminator);
	const char *file = line_path(p, li);
	j_kv_str(p, "FileName", file);
	struct shown fn = shown_name(p, li->name);
	j_key(p, "FunctionName");
	cli_json_string(p->out, fn.s ? fn.s : "", fn.len);
	j_kv_u64(p, "Line", li->line);
	if (p->src.lines > 0) {
		/* An unknown file is DILineInfo::BadString to llvm. */
		if (li->source)
			cli_source_format_text(&p->src, li->source, li->source_len, li->line);
		else
			cli_source_format(&p->src, file ? file : "<invalid>", li->line);
		if (p->src.out_len) {
			j_key(p, "Source");
			cli_json_string(p->out, p->src.out, p->src.out_len);
		}
	}
	if (li->has_start)
		j_kv_hex(p, "StartAddress", li->start);
	else
		j_kv_str(p, "StartAddress", "");
	j_kv_str(p, "StartFileName", display_path(p, li->decl_file, li->decl_file_rel));
	j_kv_u64(p, "StartLine", li->decl_line);
	j_close(p, '}');
}

/* A CODE request is a header, which shows the address, and a body, which
 * depends on the frames only (and on the module, for JSON). */
static void code_header(struct cli_printer *p, uint64_t addr)
{
	if (p->style == CLI_STYLE_JSON) {
		j_request_begin(p);
		j_kv_hex(p, "Address", addr);
	} else {
		plain_header(p, addr);
	}
}

static void code_body(struct cli_printer *p, const struct cli_line_info *frames, size_t n)
{
	if (p->style == CLI_STYLE_JSON) {
		j_kv_str(p, "ModuleName", p->module);
		j_key(p, "Symbol");
		j_open(p, '[');
		for (size_t i = 0; i < n; i++)
			json_frame(p, &frames[i]);
		j_close(p, ']');
		j_request_end(p);
		return;
	}
	for (size_t i = 0; i < n; i++)
		plain_frame(p, &frames[i], i > 0);
	plain_footer(p);
}

void cli_print_code(struct cli_printer *p, uint64_t addr, const struct cli_line_info *frames,
                    size_t n)
{
	code_header(p, addr);
	code_body(p, frames, n);
}

/* ---- CODE bodies formatted apart ------------------------------------- */

int cli_code_body_apart(const struct cli_printer *p)
{
	return p->style == CLI_STYLE_LLVM || p->style == CLI_STYLE_GNU ||
	       (p->style == CLI_STYLE_JSON && !p->json_list);
}

void cli_format_code_body(struct cli_printer *p, struct cli_out *o,
                          const struct cli_line_info *frames, size_t n)
{
	assert(cli_code_body_apart(p));
	struct cli_out *stream = p->out;
	unsigned depth = p->jdepth;
	/* The JSON writer as code_header leaves it: inside the request
	 * object, which already holds "Address". */
	if (p->style == CLI_STYLE_JSON) {
		p->jdepth++;
		p->jhas[p->jdepth] = 1;
	}
	p->out = o;
	code_body(p, frames, n);
	p->out = stream;
	p->jdepth = depth;
}

void cli_print_code_body(struct cli_printer *p, uint64_t addr, const char *body, size_t len)
{
	unsigned depth = p->jdepth;
	code_header(p, addr);
	cli_out_mem(p->out, body, len);
	p->jdepth = depth; /* where the body left it when it was formatted */
}

void cli_print_data(struct cli_printer *p, uint64_t addr, const char *name, uint64_t start,
                    uint64_t size)
{
	const char *shown = display_name(p, name);
	if (p->style == CLI_STYLE_JSON) {
		j_request_begin(p);
		j_kv_hex(p, "Address", addr);
		j_key(p, "Data");
		j_open(p, '{');
		j_kv_str(p, "Name", shown);
		j_kv_hex(p, "Size", size);
		j_kv_hex(p, "Start", start);
		j_close(p, '}');
		j_kv_str(p, "ModuleName", p->module);
		j_request_end(p);
		return;
	}
	plain_header(p, addr);
	if (!shown)
		shown = "??";
	cli_out_text(p->out, shown, strlen(shown), CLI_TEXT_CTRL);
	cli_out_chr(p->out, '\n');
	cli_out_u64(p->out, start);
	cli_out_chr(p->out, ' ');
	cli_out_u64(p->out, size);
	cli_out_chr(p->out, '\n');
	plain_footer(p);
}

void cli_print_error(struct cli_printer *p, uint64_t addr, const char *msg)
{
	j_request_begin(p);
	j_kv_hex(p, "Address", addr);
	j_key(p, "Error");
	j_open(p, '{');
	j_kv_str(p, "Message", msg);
	j_close(p, '}');
	j_kv_str(p, "ModuleName", p->module);
	j_request_end(p);
}

void cli_print_frame_cmd(struct cli_printer *p, uint64_t addr)
{
	if (p->style == CLI_STYLE_JSON) {
		j_request_begin(p);
		j_kv_hex(p, "Address", addr);
		j_key(p, "Frame");
		j_open(p, '[');
		j_close(p, ']');
		j_kv_str(p, "ModuleName", p->module);
		j_request_end(p);
		return;
	}
	plain_header(p, addr);
	cli_out_mem(p->out, "??\n", 3);
	plain_footer(p);
}
