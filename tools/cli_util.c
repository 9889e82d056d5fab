/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the symdb subcommands: the buffered output stream that
 * all results go through, the one-line error format, the mapping from
 * library error codes to exit codes, and llvm-compatible number and option
 * parsing.  Nothing here is specific to one subcommand.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli_util.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "symdb.h"

/* ---- the environment ------------------------------------------------------ */

int cli_default_dir(char *buf, size_t bufsz)
{
	return symdb_default_dir(getenv("SYMDB_DIR"), getenv("XDG_CACHE_HOME"), getenv("HOME"),
	                         buf, bufsz);
}

const char *cli_db_dir(const char *db_dir)
{
	static char dir[4096];

	if (db_dir)
		return db_dir;
	return cli_default_dir(dir, sizeof dir) == 0 ? dir : NULL;
}

uint64_t cli_now(void)
{
	const char *s = getenv("SYMDB_NOW");
	char *end;

	if (s && *s) {
		unsigned long long v = strtoull(s, &end, 10);
		if (*end == 0)
			return (uint64_t)v;
	}
	return (uint64_t)time(NULL);
}

const char *cli_helper_exe(const char *env_name, const char *name, char *buf, size_t sz)
{
	const char *env = getenv(env_name);
	size_t len = strlen(name);
	ssize_t n;
	char *slash;

	if (env && env[0])
		return env;
	n = readlink("/proc/self/exe", buf, sz - 1);
	if (n <= 0 || (size_t)n >= sz - 1)
		return NULL;
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash || (size_t)(slash - buf) + 1 + len + 1 > sz)
		return NULL;
	memcpy(slash + 1, name, len + 1);
	return access(buf, X_OK) == 0 ? buf : NULL;
}

int cli_write_all(int fd, const void *p, size_t n)
{
	const size_t chunk = (size_t)1 << 20;
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n < chunk ? n : chunk);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* symdb_open_opts.on_decompress for $SYMDB_THAW_LOG: one O_APPEND write per
 * line, so the lines of threads and processes never mix. */
static void thaw_log(const char *file, int on_disk, void *arg)
{
	char line[4200];
	int fd, n = snprintf(line, sizeof line, "%s %s\n", on_disk ? "thawed" : "memory", file);

	if (n <= 0 || (size_t)n >= sizeof line)
		return;
	fd = open(arg, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0) { /* a test's counter: nothing to do */
	}
	close(fd);
}

int cli_open_db(const char *db_dir, symdb_open_opts *o, symdb **db)
{
	const char *log = getenv("SYMDB_THAW_LOG");

	if (log && *log) {
		o->on_decompress = thaw_log;
		o->on_decompress_arg = (void *)log;
	}
	return symdb_open(cli_db_dir(db_dir), o, db);
}

unsigned cli_verify_flag(int choice)
{
	const char *env = getenv("SYMDB_OPEN_VERIFY_CHECKSUMS");

	if (choice == 0)
		choice = env && *env && strcmp(env, "0") != 0;
	return choice > 0 ? SYMDB_OPEN_VERIFY_CHECKSUMS : 0u;
}

int cli_out_init(struct cli_out *o, FILE *f, size_t cap)
{
	o->buf = malloc(cap);
	o->len = 0;
	o->cap = o->buf ? cap : 0;
	o->f = f;
	o->failed = 0;
	o->flushed = 0;
	return o->buf ? 0 : -ENOMEM;
}

/*
 * o's bytes to its file, with write(2) straight from o->buf once stdio's
 * own buffer is empty: fwrite would copy the tail that is not a multiple of
 * its block size into that buffer, and write it with one more call (two
 * write(2) calls and a copy per flush of symdb query's output).
 */
static void out_write(struct cli_out *o)
{
	int fd = fileno(o->f);
	if (fd < 0 || fflush(o->f) != 0) {
		if (fwrite(o->buf, 1, o->len, o->f) != o->len)
			o->failed = 1;
		return;
	}
	if (cli_write_all(fd, o->buf, o->len) < 0)
		o->failed = 1;
}

void cli_out_flush(struct cli_out *o)
{
	if (!o->f)
		return;
	if (o->len)
		out_write(o);
	o->flushed += o->len;
	o->len = 0;
	if (fflush(o->f) != 0)
		o->failed = 1;
}

int cli_out_fini(struct cli_out *o)
{
	cli_out_flush(o);
	free(o->buf);
	o->buf = NULL;
	o->cap = 0;
	return o->failed ? -1 : 0;
}

/*
 * Make room for `need` more bytes.  A stream flushes what is buffered and
 * grows only when a single piece is larger than the whole buffer (a huge
 * demangled name); an in-memory buffer (f == NULL) keeps its bytes and
 * grows by doubling.
 */
void cli_out_grow(struct cli_out *o, size_t need)
{
	if (o->f) {
		if (o->len)
			out_write(o);
		o->flushed += o->len;
		o->len = 0;
	}
	if (need <= o->cap - o->len)
		return;
	size_t cap = o->cap ? o->cap : 4096;
	while (cap - o->len < need)
		cap *= 2;
	char *nb = o->f ? realloc(o->buf, cap) : cli_big_realloc(o->buf, o->len, cap);
	if (!nb) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	o->buf = nb;
	o->cap = cap;
}

void cli_out_u64(struct cli_out *o, uint64_t v)
{
	/* Written in place, two digits at a time from a table: line and
	 * column numbers are most of what the printers format. */
	static const char pairs[201] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	size_t n;
	if (v < 100) {
		n = v < 10 ? 1 : 2;
	} else if (v < 10000) {
		n = v < 1000 ? 3 : 4;
	} else {
		n = 4;
		for (uint64_t t = v / 10000; t; t /= 10)
			n++;
	}
	if (o->cap - o->len < n)
		cli_out_grow(o, n);
	char *d = o->buf + o->len + n;
	o->len += n;
	while (v >= 100) {
		unsigned k = (unsigned)(v % 100) * 2;
		v /= 100;
		*--d = pairs[k + 1];
		*--d = pairs[k];
	}
	if (v >= 10) {
		*--d = pairs[2 * v + 1];
		*--d = pairs[2 * v];
	} else {
		*--d = (char)('0' + v);
	}
}

void cli_out_hex(struct cli_out *o, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	size_t n = sizeof(tmp);
	do {
		tmp[--n] = digits[v & 15];
		v >>= 4;
	} while (v);
	cli_out_mem(o, tmp + n, sizeof(tmp) - n);
}

void cli_out_fmt(struct cli_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	if (o->cap - o->len < (size_t)n + 1)
		cli_out_grow(o, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(o->buf + o->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->len += (size_t)n;
}

/* ---- names in line-oriented output ----------------------------------- */

/* The length of the valid UTF-8 sequence at s (2 to 4 bytes; RFC 3629: no
 * overlong forms, surrogates or code points past U+10FFFF), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		lo = c == 0xe0 ? 0xa0 : lo;
		hi = c == 0xed ? 0x9f : hi;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		lo = c == 0xf0 ? 0x90 : lo;
		hi = c == 0xf4 ? 0x8f : hi;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* Bytes at s that a strict escape copies as they are (a character), or 0
 * when s[0] is escaped.  C1 controls (U+0080-U+009F, encoded C2 80-C2 9F)
 * are escaped too: some terminals take U+009B as CSI. */
static size_t strict_unit(const unsigned char *s, size_t n)
{
	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f && s[0] != '\\';
	if (s[0] == 0xc2 && n >= 2 && s[1] < 0xa0)
		return 0;
	return utf8_seq(s, n);
}

static int lib_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* Bytes of an escape that CLI_TEXT_LIB copies at s ("\\", "\n", "\t",
 * "\r", "\xNN" with lowercase hex digits, as cli_out_text writes them), or
 * 0. */
static size_t lib_escape(const unsigned char *s, size_t n)
{
	if (s[0] != '\\' || n < 2)
		return 0;
	if (s[1] == '\\' || s[1] == 'n' || s[1] == 't' || s[1] == 'r')
		return 2;
	if (s[1] == 'x' && n >= 4 && lib_hex(s[2]) && lib_hex(s[3]))
		return 4;
	return 0;
}

size_t cli_text_plain(const char *s, size_t n, enum cli_text_mode m)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	if (m == CLI_TEXT_CTRL) {
#ifdef __SSE2__
		/* 16 bytes per step: query's printers scan every name and
		 * path they print (gigabytes for a large C++ image). */
		const __m128i below = _mm_set1_epi8(0x1f), del = _mm_set1_epi8(0x7f);
		for (; i + 16 <= n; i += 16) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(u + i));
			__m128i bad = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(x, below), x),
			                           _mm_cmpeq_epi8(x, del));
			unsigned mask = (unsigned)_mm_movemask_epi8(bad);
			if (mask)
				return i + (size_t)__builtin_ctz(mask);
		}
#endif
		while (i < n && u[i] >= 0x20 && u[i] != 0x7f)
			i++;
		return i;
	}
	while (i < n) {
		if (u[i] >= 0x20 && u[i] < 0x7f && u[i] != '\\') {
			i++;
			continue;
		}
		size_t k = m == CLI_TEXT_LIB ? lib_escape(u + i, n - i) : 0;
		if (!k)
			k = strict_unit(u + i, n - i);
		if (!k)
			break;
		i += k;
	}
	return i;
}

void cli_out_text(struct cli_out *o, const char *s, size_t n, enum cli_text_mode m)
{
	static const char hex[] = "0123456789abcdef";

	for (;;) {
		size_t k = cli_text_plain(s, n, m);
		cli_out_mem(o, s, k);
		s += k;
		n -= k;
		if (!n)
			return;
		unsigned char c = (unsigned char)*s++;
		n--;
		char e[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };
		char named = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : c == '\\' ? '\\' : 0;
		if (named)
			e[1] = named;
		cli_out_mem(o, e, named ? 2 : 4);
	}
}

/* Format into o, escaped in mode m; a final newline of the text is kept as
 * the end of the record when keep_nl. */
static void out_vline(struct cli_out *o, int keep_nl, enum cli_text_mode m, const char *fmt,
                      va_list ap)
{
	char small[512], *t = small;
	va_list aq;

	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n <= 0)
		return;
	if ((size_t)n >= sizeof small && !(t = malloc((size_t)n + 1))) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
	vsnprintf(t, (size_t)n + 1, fmt, ap);
	size_t len = (size_t)n;
	int nl = keep_nl && t[len - 1] == '\n';
	cli_out_text(o, t, len - (size_t)nl, m);
	if (nl)
		cli_out_chr(o, '\n');
	if (t != small)
		free(t);
}

void cli_out_line(struct cli_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	out_vline(o, 1, CLI_TEXT_STRICT, fmt, ap);
	va_end(ap);
}

/* An in-memory cli_out, or exit: these are a few hundred bytes. */
static void mem_init(struct cli_out *m)
{
	if (cli_out_init(m, NULL, 256) < 0) {
		fputs("symdb: out of memory\n", stderr);
		exit(CLI_EXIT_FAILED);
	}
}

void cli_print_line(const char *fmt, ...)
{
	struct cli_out m;
	va_list ap;

	mem_init(&m);
	va_start(ap, fmt);
	out_vline(&m, 1, CLI_TEXT_STRICT, fmt, ap);
	va_end(ap);
	fwrite(m.buf, 1, m.len, stdout);
	free(m.buf);
}

/* One line of fmt, escaped in mode, as a malloc'd C string. */
static char *line_vdup(enum cli_text_mode mode, const char *fmt, va_list ap)
{
	struct cli_out m;

	mem_init(&m);
	out_vline(&m, 1, mode, fmt, ap);
	cli_out_chr(&m, '\0');
	return m.buf;
}

char *cli_line_dup(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = line_vdup(CLI_TEXT_STRICT, fmt, ap);
	va_end(ap);
	return s;
}

void cli_out_lib_line(struct cli_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	out_vline(o, 1, CLI_TEXT_LIB, fmt, ap);
	va_end(ap);
}

char *cli_lib_line_dup(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = line_vdup(CLI_TEXT_LIB, fmt, ap);
	va_end(ap);
	return s;
}

void cli_err(const char *what, const char *fmt, ...)
{
	struct cli_out m;
	va_list ap;

	mem_init(&m);
	cli_out_mem(&m, "symdb: ", 7);
	if (what) {
		cli_out_text(&m, what, strlen(what), CLI_TEXT_STRICT);
		cli_out_mem(&m, ": ", 2);
	}
	va_start(ap, fmt);
	out_vline(&m, 0, CLI_TEXT_LIB, fmt, ap);
	va_end(ap);
	cli_out_chr(&m, '\n');
	/* one write: the lines of parallel builds never mix */
	fwrite(m.buf, 1, m.len, stderr);
	free(m.buf);
}

/* path escaped as the library escapes it in an errbuf (CLI_TEXT_LIB);
 * malloc'd. */
static char *lib_escaped(const char *path)
{
	struct cli_out m;

	mem_init(&m);
	cli_out_text(&m, path, strlen(path), CLI_TEXT_LIB);
	cli_out_chr(&m, '\0');
	return m.buf;
}

size_t cli_errbuf_names(const char *errbuf, const char *path, const char *after)
{
	char *ep = lib_escaped(path);
	size_t el = strlen(ep);
	int yes = el && strncmp(errbuf, ep, el) == 0 && errbuf[el] && strchr(after, errbuf[el]);

	free(ep);
	return yes ? el : 0;
}

/* cli_reason_for() with path escaped already. */
static const char *reason_for(const char *errbuf, const char *path)
{
	size_t pl = strlen(path);
	/* the library's "HEAD...TAIL: reason" for a path too long for errbuf */
	const char *dots = strstr(errbuf, "...");
	if (!dots || strncmp(errbuf, path, (size_t)(dots - errbuf)) != 0)
		return NULL;
	for (const char *c = strstr(dots + 3, ": "); c; c = strstr(c + 1, ": ")) {
		size_t tl = (size_t)(c - (dots + 3));
		if (tl <= pl && memcmp(dots + 3, path + pl - tl, tl) == 0)
			return c + 2;
	}
	return NULL;
}

const char *cli_reason_for(const char *errbuf, const char *path)
{
	char *ep = lib_escaped(path);
	const char *reason = reason_for(errbuf, ep);

	free(ep);
	return reason;
}

void cli_err_lib(const char *what, int rc, const char *errbuf)
{
	if (!errbuf || !errbuf[0]) {
		cli_err(what, "%s", symdb_strerror(rc));
		return;
	}
	/* The library's reasons usually name the file (or one inside the
	 * directory `what`) already. */
	const char *reason = what ? cli_reason_for(errbuf, what) : NULL;
	if (!what || cli_errbuf_names(errbuf, what, ":/"))
		cli_err(NULL, "%s", errbuf);
	else if (reason)
		cli_err(what, "%s", reason);
	else
		cli_err(what, "%s", errbuf);
}

int cli_exit_for(int rc)
{
	switch (rc) {
	case SYMDB_E_FORMAT:
	case SYMDB_E_VERSION:
	case SYMDB_E_CORRUPT:
	case SYMDB_E_CHECKSUM:
		return CLI_EXIT_DAMAGED;
	case SYMDB_E_CATALOG:
	case SYMDB_E_READONLY:
	case SYMDB_E_NETFS:
		return CLI_EXIT_DATABASE;
	case SYMDB_E_INVAL:
		return CLI_EXIT_USAGE;
	default:
		return CLI_EXIT_FAILED;
	}
}

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	return 99;
}

/* LLVM's GetAutoSenseRadix + consumeUnsignedInteger, for byte identity with
 * llvm-symbolizer's address parsing (invalid lines are echoed, not parsed). */
int cli_parse_u64(const char *s, size_t n, uint64_t *out)
{
	unsigned radix = 10;
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		radix = 16, s += 2, n -= 2;
	else if (n >= 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
		radix = 2, s += 2, n -= 2;
	else if (n >= 2 && s[0] == '0' && s[1] == 'o')
		radix = 8, s += 2, n -= 2;
	else if (n >= 2 && s[0] == '0' && s[1] >= '0' && s[1] <= '9')
		radix = 8, s += 1, n -= 1;
	if (n == 0)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		int d = digit_value(s[i]);
		if (d >= (int)radix)
			return -1;
		if (v > (UINT64_MAX - (uint64_t)d) / radix)
			return -1;
		v = v * radix + (uint64_t)d;
	}
	*out = v;
	return 0;
}

int cli_opt_value(int argc, char **argv, int *i, const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t nl = strlen(name);
	if (strncmp(a, name, nl) != 0)
		return 0;
	if (a[nl] == '=') {
		*val = a + nl + 1;
		return 1;
	}
	if (a[nl] == '\0') {
		if (*i + 1 >= argc) {
			cli_err(NULL, "option '%s' needs a value", name);
			return -1;
		}
		*val = argv[++*i];
		return 1;
	}
	/* One-letter short options also take a joined value: -eFILE. */
	if (nl == 2 && name[0] == '-' && name[1] != '-') {
		*val = a + nl;
		return 1;
	}
	return 0;
}

int cli_opt_common(struct cli_global *g, const char *cmd, int argc, char **argv, int *i)
{
	const char *v;
	int m = cli_opt_value(argc, argv, i, "--db", &v);

	if (m < 0)
		return -1;
	if (m > 0) {
		g->db_dir = v;
		return CLI_OPT_TAKEN;
	}
	if (!strcmp(argv[*i], "-h") || !strcmp(argv[*i], "--help")) {
		cli_usage(stdout, cmd);
		return CLI_OPT_HELP;
	}
	return CLI_OPT_NONE;
}
