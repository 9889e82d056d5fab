/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the symdb command-line tool: exit codes, the one-line
 * error format ("symdb: <path>: <reason>" on stderr), a large output buffer
 * that every result goes through (one write(2) per ~256 KiB instead of one
 * stdio call per field), number parsing, and the subcommand entry points.
 * The CLI uses only the public headers symdb.h and symdb_build.h.
 */
#ifndef SYMDB_CLI_UTIL_H
#define SYMDB_CLI_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct symdb;
struct symdb_open_opts;

#if defined(__GNUC__)
#define CLI_HIDDEN __attribute__((visibility("hidden")))
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_HIDDEN
#define CLI_PRINTF(a, b)
#endif

/* Exit codes, documented in `symdb --help`. */
enum cli_exit {
	CLI_EXIT_OK = 0,        /* everything worked */
	CLI_EXIT_FAILED = 1,    /* some input failed or was not found */
	CLI_EXIT_USAGE = 2,     /* bad command line */
	CLI_EXIT_DATABASE = 3,  /* missing, read-only or damaged catalog */
	CLI_EXIT_DAMAGED = 4    /* damaged index file */
};

/* Options every subcommand shares. */
/* ---- the environment: the library reads none, the CLI maps it ---- */

/* symdb_default_dir() from $SYMDB_DIR, $XDG_CACHE_HOME, $HOME. */
CLI_HIDDEN int cli_default_dir(char *buf, size_t bufsz);
/* db_dir (--db) if given, else the default directory (a static buffer),
 * else NULL: symdb_open() then reports that there is none. */
CLI_HIDDEN const char *cli_db_dir(const char *db_dir);
/* The clock of the life-cycle commands: $SYMDB_NOW (decimal unix seconds,
 * for tests and replays) when set, else time(2). */
CLI_HIDDEN uint64_t cli_now(void);
/* A helper executable of this build (symdb-indexer, symdb-fetch): $env_name
 * when set and not empty (tests point at their build this way), else NAME
 * beside this executable (a build tree or a moved install runs its own, in
 * buf), else NULL for the library's installed one. */
CLI_HIDDEN const char *cli_helper_exe(const char *env_name, const char *name, char *buf,
                                      size_t sz);

/* Write all n bytes of p to fd (EINTR and short writes retried), at most
 * 1 MiB per write(2) so that no single call copies a whole large mapping:
 * 0, or -errno.  Any thread. */
CLI_HIDDEN int cli_write_all(int fd, const void *p, size_t n);
/* realloc(p, new_bytes), except that a block of 2 MiB or more is a new
 * 2 MiB-aligned one asking for transparent huge pages, p's first
 * old_bytes copied and p freed.  The result is freed by free(); NULL when
 * out of memory (p then untouched).  Any thread. */
CLI_HIDDEN void *cli_big_realloc(void *p, size_t old_bytes, size_t new_bytes);
/* cli_big_realloc(NULL, 0, bytes), zeroed.  Any thread. */
CLI_HIDDEN void *cli_big_zalloc(size_t bytes);
/* Fix glibc's mmap threshold (cli_bigbuf.c says why): once, at the start
 * of main, before any other thread. */
CLI_HIDDEN void cli_big_init(void);
/* symdb_open() on cli_db_dir(db_dir), with $SYMDB_THAW_LOG mapped into o:
 * when set, it names a file to which every decompression of a cold image
 * appends one line, "thawed FILE" or "memory FILE" (tests count them). */
CLI_HIDDEN int cli_open_db(const char *db_dir, struct symdb_open_opts *o, struct symdb **db);
/* The verification policy (SPEC §9) for commands that answer from index
 * files: SYMDB_OPEN_VERIFY_CHECKSUMS when choice > 0 (--verify), or when
 * choice is 0 (no option given) and $SYMDB_OPEN_VERIFY_CHECKSUMS is set to
 * anything but "" or "0"; else 0: open checks the header and directory only
 * (O(1) pages), and `symdb verify` is what reads every table. */
CLI_HIDDEN unsigned cli_verify_flag(int choice);

/* Options that carry only an errbuf, for the library calls that take them. */
#define CLI_EB_OPTS(buf, size) \
	(&(symdb_open_opts){ .sz = sizeof(symdb_open_opts), .errbuf = (buf), .errbuf_sz = (size) })

struct cli_global {
	const char *db_dir; /* --db DIR, or NULL for symdb_default_dir() */
	int llvm_symbolizer; /* run as llvm-symbolizer: its option words (cli_llvm.h) */
};

/* A growable output buffer in front of one FILE, or (f == NULL) a buffer
 * in memory that only grows, which the caller reads and empties. */
struct cli_out {
	char *buf;
	size_t len, cap;
	FILE *f;
	int failed; /* a write error happened (EPIPE, ENOSPC) */
	uint64_t flushed; /* bytes handed to f so far: flushed + len is the
	                     stream position, which lets a caller tell whether
	                     text it just wrote is still all in buf */
};

CLI_HIDDEN int cli_out_init(struct cli_out *o, FILE *f, size_t cap);
CLI_HIDDEN void cli_out_flush(struct cli_out *o);
/* Flushes and frees; returns 0, or -1 if any write failed. */
CLI_HIDDEN int cli_out_fini(struct cli_out *o);
CLI_HIDDEN void cli_out_grow(struct cli_out *o, size_t need);

static inline void cli_out_mem(struct cli_out *o, const char *s, size_t n)
{
	if (o->cap - o->len < n)
		cli_out_grow(o, n);
	if (n) {
		memcpy(o->buf + o->len, s, n);
		o->len += n;
	}
}

static inline void cli_out_str(struct cli_out *o, const char *s)
{
	cli_out_mem(o, s, strlen(s));
}

static inline void cli_out_chr(struct cli_out *o, char c)
{
	if (o->len == o->cap)
		cli_out_grow(o, 1);
	o->buf[o->len++] = c;
}

CLI_HIDDEN void cli_out_u64(struct cli_out *o, uint64_t v);     /* decimal */
CLI_HIDDEN void cli_out_hex(struct cli_out *o, uint64_t v);     /* lowercase, no 0x */
CLI_HIDDEN void cli_out_fmt(struct cli_out *o, const char *fmt, ...) CLI_PRINTF(2, 3);

/*
 * Names in line-oriented output (README "Names in output").  Every name,
 * path and library reason that a human or a line parser reads goes through
 * cli_out_text(), so that one record stays one line and no terminal escape
 * sequence from a file name or a symbol reaches the terminal:
 *   CLI_TEXT_CTRL    bytes 0x00-0x1f and 0x7f become \t \n \r or \xNN, the
 *                    rest is copied (query's llvm-symbolizer styles: a name
 *                    without control characters stays byte-identical)
 *   CLI_TEXT_STRICT  also '\' becomes \\, and bytes that are not valid UTF-8
 *                    or that encode a C1 control (U+0080-U+009F) become \xNN,
 *                    so the output is valid UTF-8 and the escaping reversible
 *   CLI_TEXT_LIB     STRICT, but a backslash that starts one of these escapes
 *                    is copied with it: for text holding the library's error
 *                    text, which comes escaped this way (symdb.h "Conventions"),
 *                    so that it is not escaped twice (a path with a newline
 *                    shows as \n, as before the library escaped it)
 */
enum cli_text_mode { CLI_TEXT_CTRL, CLI_TEXT_STRICT, CLI_TEXT_LIB };
CLI_HIDDEN void cli_out_text(struct cli_out *o, const char *s, size_t n, enum cli_text_mode m);
/* The length of s's longest prefix that cli_out_text() copies unchanged. */
CLI_HIDDEN size_t cli_text_plain(const char *s, size_t n, enum cli_text_mode m);
/* Format one record and append it strictly escaped; a trailing newline of
 * fmt's output is kept as the record's end. */
CLI_HIDDEN void cli_out_line(struct cli_out *o, const char *fmt, ...) CLI_PRINTF(2, 3);
/* cli_out_line() to stdout (through stdio, for the commands that print one
 * line at a time with printf). */
CLI_HIDDEN void cli_print_line(const char *fmt, ...) CLI_PRINTF(1, 2);
/* cli_out_line() into a new malloc'd string; NULL when out of memory. */
CLI_HIDDEN char *cli_line_dup(const char *fmt, ...) CLI_PRINTF(1, 2);
/* cli_out_line() and cli_line_dup() in CLI_TEXT_LIB mode, for a record
 * holding a library errbuf. */
CLI_HIDDEN void cli_out_lib_line(struct cli_out *o, const char *fmt, ...) CLI_PRINTF(2, 3);
CLI_HIDDEN char *cli_lib_line_dup(const char *fmt, ...) CLI_PRINTF(1, 2);

/* "symdb: <what>: <reason>\n" on stderr, escaped as one line: what
 * strictly, the reason (often a library errbuf, or carrying a path) in
 * CLI_TEXT_LIB mode; what may be NULL.  Never truncated. */
CLI_HIDDEN void cli_err(const char *what, const char *fmt, ...) CLI_PRINTF(2, 3);
/* Report a library failure: prefers errbuf (when it already names `what`,
 * it is printed as is), else symdb_strerror(rc). */
CLI_HIDDEN void cli_err_lib(const char *what, int rc, const char *errbuf);
/* The reason in a library errbuf "HEAD...TAIL: reason" that names path
 * shortened in the middle (format_header.h's fmt_err: path was too long
 * for errbuf), else NULL.  path is raw: it is compared escaped. */
CLI_HIDDEN const char *cli_reason_for(const char *errbuf, const char *path);
/* When a library errbuf starts with path (raw; compared escaped, as the
 * library escapes it) followed by one of the bytes in `after`: the length
 * of that escaped path; else 0. */
CLI_HIDDEN size_t cli_errbuf_names(const char *errbuf, const char *path, const char *after);
/* Exit code for a library error. */
CLI_HIDDEN int cli_exit_for(int rc);

/* Parse an unsigned integer like LLVM's StringRef::getAsInteger(radix 0):
 * 0x/0X hex, 0b/0B binary, 0o octal, leading-0 octal, else decimal; the whole
 * [s, s+n) must be consumed and fit in 64 bits.  Returns 0 or -1. */
CLI_HIDDEN int cli_parse_u64(const char *s, size_t n, uint64_t *out);

/* Match an option that takes a value, spelled "NAME VALUE" or "NAME=VALUE"
 * (and "-eVALUE" when NAME is a one-letter "-e").  Returns 1 on a match with
 * *val set (advancing *i past a separate value), 0 when argv[*i] is not this
 * option, -1 when the value is missing (an error is printed). */
CLI_HIDDEN int cli_opt_value(int argc, char **argv, int *i, const char *name,
                             const char **val);

/* The options every database command takes: --db DIR (sets g->db_dir) and
 * -h/--help (prints the help of `cmd` to stdout).  Returns CLI_OPT_NONE when
 * argv[*i] is neither, CLI_OPT_TAKEN for --db (advancing *i past a separate
 * value), CLI_OPT_HELP once the help is printed, or -1 when --db has no
 * value (an error is printed). */
enum { CLI_OPT_NONE = 0, CLI_OPT_TAKEN = 1, CLI_OPT_HELP = 2 };
CLI_HIDDEN int cli_opt_common(struct cli_global *g, const char *cmd, int argc, char **argv,
                              int *i);

/* "x86_64", "aarch64"... or "elf-N"; buf is used for unknown ones. */
CLI_HIDDEN const char *cli_machine_name(unsigned object_format, uint32_t machine, char *buf,
                                        size_t bufsz);
/* "2026-11-22T01:02:03Z" (UTC), or "-" for 0. */
CLI_HIDDEN const char *cli_time_name(uint64_t t, char *buf, size_t bufsz);

/* Subcommands. argv[0] is the subcommand name. */
CLI_HIDDEN int cli_cmd_build(const struct cli_global *g, int argc, char **argv);
CLI_HIDDEN int cli_cmd_query(const struct cli_global *g, int argc, char **argv);
CLI_HIDDEN int cli_cmd_list(const struct cli_global *g, int argc, char **argv);
CLI_HIDDEN int cli_cmd_info(const struct cli_global *g, int argc, char **argv);
CLI_HIDDEN int cli_cmd_symbolicate(const struct cli_global *g, int argc, char **argv);
CLI_HIDDEN int cli_cmd_serve(const struct cli_global *g, int argc, char **argv); /* serve_main.c */

/* Per-command help texts (symdb_main.c). */
CLI_HIDDEN void cli_usage(FILE *f, const char *cmd);

#endif /* SYMDB_CLI_UTIL_H */
