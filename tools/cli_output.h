/* SPDX-License-Identifier: MIT */
/*
 * The printers of `symdb query`: llvm-symbolizer-14's LLVM, GNU and JSON
 * output styles, byte for byte (its DIPrinter: function line, "file:line:col",
 * blank-line footers, "(inlined by)" pretty form, verbose form, and JSON with
 * sorted keys).  The query code selects what each frame shows (inlines or
 * not, symbol-table override); the printer only formats.
 */
#ifndef SYMDB_CLI_OUTPUT_H
#define SYMDB_CLI_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "cli_demangle.h"
#include "cli_source.h"
#include "cli_util.h"
#include "symdb.h"

enum cli_style { CLI_STYLE_LLVM, CLI_STYLE_GNU, CLI_STYLE_JSON, CLI_STYLE_ATOS /* cli_atos.c */ };
enum cli_fn_kind { CLI_FN_NONE, CLI_FN_SHORT, CLI_FN_LINKAGE };
enum cli_path_kind { CLI_PATH_ABSOLUTE, CLI_PATH_RELATIVE, CLI_PATH_BASENAME };

/* One frame as printed (llvm's DILineInfo).  NULL strings are unknown. */
struct cli_line_info {
	const char *name;
	const char *file, *file_rel;           /* absolute and comp-dir relative */
	const char *decl_file, *decl_file_rel; /* the function's declaration */
	uint32_t line, column, discriminator, decl_line;
	uint64_t start;
	int has_start;
	int file_verbatim; /* file is an STT_FILE name: no --basenames/--relativenames */
	const char *source; /* the line table's embedded source of file, or NULL */
	size_t source_len;
};

/*
 * Demangled names by name pointer, for names that live as long as the
 * printer and never change (strings in an index mapping, which symdb query
 * keeps open for the whole run): one demangling per distinct name instead
 * of one per printed frame, and the shown name's length and whether it
 * needs escaping, so that a cached name is printed with one memcpy.
 * Memory is bounded (cli_output.c, CLI_NAME_*) whatever the image: two
 * generations, each an open-addressing table and an arena of fixed size;
 * when the current one is full the previous one is dropped and the current
 * one becomes the previous one, whose names a lookup copies back into the
 * current one.  A name printed over and over thus stays cached, however
 * many names an image has (a large C++ image has hundreds of thousands of
 * them, most printed rarely).
 */
struct cli_name_slot {
	const char *key; /* NULL = empty */
	uint32_t off;    /* into arena, or UINT32_MAX: shows as key itself */
	uint32_t len;    /* the shown name's length | CLI_NAME_PLAIN */
};

#define CLI_NAME_PLAIN 0x80000000u /* no control character to escape */
#ifndef CLI_NAME_SLOTS /* a test build makes it small (tests/unit/test_cli_names.c) */
#define CLI_NAME_SLOTS (1u << 17)    /* per generation: 2 MiB of slots */
#endif
#define CLI_PATH_SLOTS 4096u         /* struct cli_path_slot, direct-mapped */

/* The slot a name's probe starts at (also for the path slots, masked). */
static inline size_t cli_name_hash(const char *name)
{
	return (size_t)(((uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15ull) >> 32) &
	       (CLI_NAME_SLOTS - 1);
}

/* A path as printed (stable_names): its length | CLI_NAME_PLAIN, by pointer. */
struct cli_path_slot {
	const char *key;
	uint32_t len;
};

struct cli_name_gen {
	struct cli_name_slot *slot; /* CLI_NAME_SLOTS entries, NULL until used */
	size_t used;
	char *arena;                /* CLI_NAME_ARENA bytes */
	size_t alen;
	int huge;                   /* slot and arena are in huge pages */
};

/* Demangled names that left both generations, LZ4-compressed
 * (cli_name_cold.c): decompressed from here instead of demangled again. */
#ifndef CLI_COLD_SLOTS /* a test build makes it small (tests/unit/test_cli_names.c) */
#define CLI_COLD_SLOTS (1u << 18) /* 4 MiB of slots, at most 3/4 used */
#endif
struct cli_cold_slot {
	const char *key; /* NULL = empty */
	uint32_t off;    /* its record in the arena */
	uint32_t clen;   /* the record's compressed bytes */
};

struct cli_name_cold {
	struct cli_cold_slot *slot; /* CLI_COLD_SLOTS entries, NULL until used */
	size_t used;
	char *arena;                /* CLI_COLD_ARENA bytes */
	size_t alen;
	int full;                   /* no more names are added */
};

struct cli_name_cache {
	struct cli_name_gen gen[2]; /* [0] the current generation, [1] the previous */
	struct cli_name_cold cold;
	int huge;                   /* tables made from now on go to huge pages */
};

/* The shown text of name from c into *buf (grown as needed, NUL-terminated)
 * and its length | CLI_NAME_PLAIN into *len: 1, or 0 when c does not hold
 * it. */
CLI_HIDDEN int cli_name_cold_get(const struct cli_name_cold *c, const char *name, char **buf,
                                 size_t *cap, uint32_t *len);
/* Keep name's shown text (len: its length | CLI_NAME_PLAIN), unless c is
 * full or holds it already. */
CLI_HIDDEN void cli_name_cold_put(struct cli_name_cold *c, const char *name, const char *text,
                                  uint32_t len);
/* Forget every name (the memory stays). */
CLI_HIDDEN void cli_name_cold_clear(struct cli_name_cold *c);
CLI_HIDDEN void cli_name_cold_fini(struct cli_name_cold *c);

struct cli_printer {
	struct cli_out *out;
	struct cli_demangler dm;
	enum cli_style style;
	enum cli_fn_kind fn_kind;
	enum cli_path_kind path_kind;
	int demangle, print_address, pretty, verbose;
	const char *module;   /* JSON ModuleName */
	int json_list;        /* addresses from argv: one JSON array at the end */
	/* JSON writer state (llvm::json::OStream's): a has-value flag per level */
	unsigned jdepth;
	unsigned char jhas[16];
	struct cli_source src; /* --print-source-context-lines */
	int stable_names;      /* names outlive the printer: cache demangling */
	struct cli_name_cache names;
	struct cli_path_slot *paths; /* CLI_PATH_SLOTS, NULL until used */
};

/* Start loading the cache slot of a name about to be printed: the slots
 * are read at random, one cache miss per frame otherwise. */
static inline __attribute__((always_inline)) void
cli_printer_prefetch_name(const struct cli_printer *p, const char *name)
{
	if (p->names.gen[0].slot && name)
		__builtin_prefetch(&p->names.gen[0].slot[cli_name_hash(name)]);
}

CLI_HIDDEN void cli_printer_init(struct cli_printer *p, struct cli_out *out);
CLI_HIDDEN void cli_printer_fini(struct cli_printer *p);
/* Drop the demangled names cached so far (stable_names): the mapping some
 * of them point into has faulted, its bytes are no longer the names. */
CLI_HIDDEN void cli_printer_forget_names(struct cli_printer *p);
/* Move the demangled-name cache's tables to huge pages (cli_bigbuf.c), for
 * a run long enough to fill them; they stay where they are without memory.
 * Between prints only. */
CLI_HIDDEN void cli_printer_names_to_huge(struct cli_printer *p);

/* Before the first and after the last request (the JSON array of argv mode). */
CLI_HIDDEN void cli_print_begin(struct cli_printer *p);
CLI_HIDDEN void cli_print_end(struct cli_printer *p);

/* An input line that is not a command: echoed (JSON: an Error object). */
CLI_HIDDEN void cli_print_invalid(struct cli_printer *p, const char *line, size_t len);

/* A CODE request: frames innermost first, n >= 1. */
CLI_HIDDEN void cli_print_code(struct cli_printer *p, uint64_t addr,
                               const struct cli_line_info *frames, size_t n);

/*
 * A CODE request in two steps, for a caller that prints many requests with
 * the same frames or formats them in another order than it prints them:
 * the body (everything after the address header) depends on the frames,
 * the module (JSON) and the options only.  cli_code_body_apart() says
 * whether the style allows it (not a JSON list, where a request's text
 * depends on its place); cli_format_code_body() appends the body to o (an
 * in-memory cli_out), and cli_print_code_body() prints a request as
 * cli_print_code would, from its address and such a body.
 */
CLI_HIDDEN int cli_code_body_apart(const struct cli_printer *p);
CLI_HIDDEN void cli_format_code_body(struct cli_printer *p, struct cli_out *o,
                                     const struct cli_line_info *frames, size_t n);
CLI_HIDDEN void cli_print_code_body(struct cli_printer *p, uint64_t addr, const char *body,
                                    size_t len);

/*
 * A CODE body in the plain styles straight from the frames, for a caller
 * that holds them in another form than struct cli_line_info: when
 * cli_plain_frames_direct() (no --verbose, source context, --functions
 * other than linkage, or path rewriting: each frame shows its own name and
 * file), the body of frames f[0..n), n >= 1, is cli_format_plain_frame()
 * of each (inlined: i > 0) then cli_format_plain_end().  A frame whose
 * name or file needs escaping returns -1 having written nothing: the
 * caller then formats the body through cli_format_code_body() instead.
 */
CLI_HIDDEN int cli_plain_frames_direct(const struct cli_printer *p);
CLI_HIDDEN int cli_format_plain_frame(struct cli_printer *p, struct cli_out *o, const char *name,
                                      const char *file, uint32_t line, uint32_t column,
                                      uint32_t discriminator, int inlined);
CLI_HIDDEN void cli_format_plain_end(const struct cli_printer *p, struct cli_out *o);
/* The whole body of frames f[0..n), n >= 1, as above (frame i > 0
 * inlined), in one call: 0, or -1 with nothing written.  o is an
 * in-memory cli_out (a stream's buffer may be flushed midway). */
CLI_HIDDEN int cli_format_plain_frames(struct cli_printer *p, struct cli_out *o,
                                       const symdb_frame *f, size_t n);

/* A DATA request: the symbol covering addr (name NULL when none). */
CLI_HIDDEN void cli_print_data(struct cli_printer *p, uint64_t addr, const char *name,
                               uint64_t start, uint64_t size);

/* A FRAME request: symdb stores no local variables, so this is always the
 * "no locals" answer. */
CLI_HIDDEN void cli_print_frame_cmd(struct cli_printer *p, uint64_t addr);

/* A request whose module could not be opened: JSON prints an Error object
 * (plain styles print the empty result instead, through cli_print_code). */
CLI_HIDDEN void cli_print_error(struct cli_printer *p, uint64_t addr, const char *msg);

/* Write s as a JSON string literal, fixing invalid UTF-8 like llvm::json. */
CLI_HIDDEN void cli_json_string(struct cli_out *o, const char *s, size_t n);

#endif /* SYMDB_CLI_OUTPUT_H */
