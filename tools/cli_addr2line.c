/* SPDX-License-Identifier: MIT */
/*
 * cli_addr2line.c - `symdb addr2line`, and symdb run under the name
 * addr2line: a drop-in for GNU addr2line over symdb query's machinery
 * (cmd_query.c: the same module opening, batches through symdb_symbolize,
 * printers and body cache), so that tools which run "addr2line" from PATH,
 * perf above all, are answered from the index.
 *
 * What is whose:
 *   - the command line is GNU addr2line's (binutils 2.40, getopt_long with
 *     its option string and long names; -b, -r, -R accepted and ignored),
 *     after @FILE arguments are replaced by FILE's words;
 *   - a line that is an address as llvm-addr2line-14 reads one (spaces,
 *     one token of hex digits with or without 0x, the rest ignored) is
 *     answered byte for byte as llvm-addr2line-14 answers it: GNU's output
 *     format with llvm's correct DWARF 5 file names;
 *   - any other line gets GNU's answer.  llvm-addr2line echoes such lines,
 *     and perf 6.1, which sends "ADDR\n,\n" and reads until the "??" /
 *     "??:0" that GNU gives its "," line, then waits forever.  GNU reads
 *     every line as an address: strtoul(line, 16) when it starts (after
 *     white space) with a hex digit, otherwise a symbol name with an
 *     optional "+OFFSET" (strtoul base 0), 0 when the name is unknown.
 *     With -a its address header is GNU's, zero-padded to the ELF class's
 *     width ("0x0000000000000000").
 * Every batch of input is answered and flushed before the next read, so a
 * client that writes one request and waits for its answer gets it.
 */
#define _GNU_SOURCE /* getopt_long */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_addr2line.h"
#include "cli_addr2line_elf.h"
#include "cli_llvm.h"
#include "cli_query.h"

struct a2l {
	struct query q; /* first: the run hook is handed &a2l.q */
	const char *prog;
	unsigned vma_digits;  /* GNU's -a width: 16, or 8 for ELF32 */
	uint64_t vma_mask;    /* GNU masks its addresses to the ELF class */
	struct cli_a2l_syms syms; /* the -e file's symbol table, read on first use */
	int syms_state;           /* 0 not read, 1 read (or absent) */
	struct cli_a2l_range *secs; /* its allocated sections, read on first use */
	size_t nsecs;
	int secs_state;
	int section;              /* -j given: addresses are offsets into it */
	uint64_t section_size;    /* its size, 0 when it is not loaded */
	char last_name[64];       /* the last name looked up and its value: perf */
	size_t last_len;          /* sends the same "," after every address */
	uint64_t last_value;
	int last_found;           /* -1 no last name, 0 not found, 1 found */
};

/* ---- the command line ------------------------------------------------- */

static const char usage_text[] =
	" Convert addresses into line number/file name pairs.\n"
	" If no addresses are specified on the command line, they will be read from stdin\n"
	" The options are:\n"
	"  @<file>                Read options from <file>\n"
	"  -a --addresses         Show addresses\n"
	"  -b --target=<bfdname>  Set the binary file format (accepted, ignored)\n"
	"  -e --exe=<executable>  Set the input file name (default is a.out)\n"
	"  -i --inlines           Unwind inlined functions\n"
	"  -j --section=<name>    Read section-relative offsets instead of addresses\n"
	"  -p --pretty-print      Make the output easier to read for humans\n"
	"  -s --basenames         Strip directory names\n"
	"  -f --functions         Show function names\n"
	"  -C --demangle[=style]  Demangle function names\n"
	"  -R --recurse-limit     Enable a limit on recursion whilst demangling.  [Default]\n"
	"  -r --no-recurse-limit  Disable a limit on recursion whilst demangling\n"
	"  -h --help              Display this information\n"
	"  -v --version           Display the program's version\n"
	"\n";

static int usage(const char *prog, FILE *f, int status)
{
	fprintf(f, "Usage: %s [option(s)] [addr(s)]\n%s", prog, usage_text);
	fprintf(f, "%s: answers from the symdb database ($SYMDB_DIR, else ~/.cache/symdb);\n"
	           "  addresses as llvm-addr2line-14 answers them (see 'symdb help addr2line')\n",
	        prog);
	return status;
}

static int version(const char *prog)
{
	printf("%s (symdb) %d.%d.%d\n"
	       "symdb library %s.  GNU addr2line's options and output format, llvm-addr2line's\n"
	       "file names; answers come from the symdb database.\n",
	       prog, SYMDB_VERSION_MAJOR, SYMDB_VERSION_MINOR, SYMDB_VERSION_PATCH,
	       symdb_version_string());
	return CLI_EXIT_OK;
}

/* The demangling styles libiberty's cplus_demangle_name_to_style knows. */
static int known_style(const char *s)
{
	static const char *const styles[] = { "none", "auto", "gnu-v3", "java",
		                              "gnat", "dlang", "rust" };
	for (size_t i = 0; i < sizeof(styles) / sizeof(styles[0]); i++)
		if (strcmp(s, styles[i]) == 0)
			return 1;
	return 0;
}

static const struct option long_opts[] = {
	{ "addresses", no_argument, NULL, 'a' },
	{ "basenames", no_argument, NULL, 's' },
	{ "demangle", optional_argument, NULL, 'C' },
	{ "exe", required_argument, NULL, 'e' },
	{ "functions", no_argument, NULL, 'f' },
	{ "inlines", no_argument, NULL, 'i' },
	{ "pretty-print", no_argument, NULL, 'p' },
	{ "recurse-limit", no_argument, NULL, 'R' },
	{ "recursion-limit", no_argument, NULL, 'R' },
	{ "no-recurse-limit", no_argument, NULL, 'r' },
	{ "no-recursion-limit", no_argument, NULL, 'r' },
	{ "section", required_argument, NULL, 'j' },
	{ "target", required_argument, NULL, 'b' },
	{ "help", no_argument, NULL, 'H' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* Returns -1 to go on, else the exit status.  *section is -j's name. */
static int parse_args(struct a2l *a, int argc, char **argv, const char **section)
{
	struct query *q = &a->q;
	int c, style_none = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ab:Ce:rRsfHhij:pVv", long_opts, NULL)) != -1) {
		switch (c) {
		case 'a': q->pr.print_address = 1; break;
		case 'b': break; /* the index knows the format */
		case 'C':
			if (optarg && !known_style(optarg)) {
				fprintf(stderr, "%s: unknown demangling style `%s'\n", a->prog, optarg);
				return CLI_EXIT_FAILED;
			}
			/* GNU keeps the last style named, and "none" demangles
			 * nothing whatever -C comes after it (binutils 2.40) */
			if (optarg)
				style_none = !strcmp(optarg, "none");
			q->pr.demangle = 1;
			break;
		case 'e': q->obj = optarg; break;
		case 'f': q->pr.fn_kind = CLI_FN_LINKAGE; break;
		case 'i': q->inlines = 1; break;
		case 'j': *section = optarg; break;
		case 'p': q->pr.pretty = 1; break;
		case 's': q->pr.path_kind = CLI_PATH_BASENAME; break;
		case 'r': case 'R': break; /* symdb's demangler is always bounded */
		case 'h': case 'H': return usage(a->prog, stdout, CLI_EXIT_OK);
		case 'v': case 'V': return version(a->prog);
		default: return usage(a->prog, stderr, CLI_EXIT_FAILED);
		}
	}
	if (style_none)
		q->pr.demangle = 0;
	return -1;
}

/* GNU's checks of the file before anything is read, in its words (an ELF
 * file that cannot be indexed is answered "??" as by symdb query). */
static int check_file(const struct a2l *a, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		if (errno == ENOENT)
			fprintf(stderr, "%s: '%s': No such file\n", a->prog, path);
		else
			fprintf(stderr, "%s: %s: %s\n", a->prog, path, strerror(errno));
		return CLI_EXIT_FAILED;
	}
	if (S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: Warning: '%s' is a directory\n", a->prog, path);
		return CLI_EXIT_FAILED;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: Warning: '%s' is not an ordinary file\n", a->prog, path);
		return CLI_EXIT_FAILED;
	}
	struct cli_a2l_section sec;
	if (cli_a2l_section(path, "", &sec) == -ENOEXEC) {
		fprintf(stderr, "%s: %s: file format not recognized\n", a->prog, path);
		return CLI_EXIT_FAILED;
	}
	return 0;
}

/*
 * -j NAME: addresses are offsets into that section.  Requests keep the
 * offset (GNU's -a prints it) and the section's address is added when
 * resolving, through --adjust-vma's subtraction.  GNU looks an offset up
 * in that section only: past its end, or in a section not loaded, it is
 * not found.  A relocatable object's sections all start at 0 and the
 * index holds one answer per address (SPEC §7.8: the first executable
 * section's lines, every section's symbols), not one per section: an
 * offset into another section would be answered from the wrong one, so
 * -j is refused for such a file rather than answered wrongly.
 */
static int apply_section(struct a2l *a, const char *name)
{
	struct cli_a2l_section sec;
	int rc = cli_a2l_section(a->q.obj, name, &sec);
	if (rc < 0) {
		fprintf(stderr, "%s: %s: cannot find section %s\n", a->prog, a->q.obj, name);
		return CLI_EXIT_FAILED;
	}
	if (sec.relocatable) {
		fprintf(stderr,
		        "%s: %s: -j %s: not supported for a relocatable object (its sections "
		        "share addresses in the index)\n",
		        a->prog, a->q.obj, name);
		return CLI_EXIT_FAILED;
	}
	a->q.adjust_vma = (uint64_t)0 - sec.addr;
	a->section = 1;
	a->section_size = sec.alloc ? sec.size : 0;
	return 0;
}

/* ---- reading a line ----------------------------------------------------- */

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * llvm-addr2line-14's address (llvm-symbolizer.cpp parseCommand in addr2line
 * mode): ' ', '\r', '\n' skipped, the token up to the next of them, an
 * optional 0x/0X, then StringRef::getAsInteger(16): hex digits only, at
 * least one, no overflow.  Returns 0 with *out set, or -1.
 */
static int llvm_address(const char *s, size_t n, uint64_t *out)
{
	size_t i = 0, end;
	while (i < n && (s[i] == ' ' || s[i] == '\r' || s[i] == '\n'))
		i++;
	for (end = i; end < n && s[end] != ' ' && s[end] != '\r' && s[end] != '\n'; end++)
		;
	if (end - i >= 2 && s[i] == '0' && (s[i + 1] | 0x20) == 'x')
		i += 2;
	if (i == end)
		return -1;
	uint64_t v = 0;
	for (; i < end; i++) {
		int d = hex_digit((unsigned char)s[i]);
		if (d < 0 || v >> 60)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

static int is_space(int c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* A symbol's value by name, from the -e file's table (read once); the
 * last answer is remembered. */
static int lookup_symbol(struct a2l *a, const char *name, size_t len, uint64_t *value)
{
	if (a->last_found >= 0 && len == a->last_len && memcmp(name, a->last_name, len) == 0) {
		*value = a->last_value;
		return a->last_found ? 0 : -1;
	}
	if (!a->syms_state) {
		cli_a2l_syms_load(a->q.obj, &a->syms);
		a->syms_state = 1;
	}
	int rc = cli_a2l_symbol(&a->syms, name, len, value);
	if (len < sizeof(a->last_name)) {
		memcpy(a->last_name, name, len);
		a->last_len = len;
		a->last_value = rc == 0 ? *value : 0;
		a->last_found = rc == 0;
	}
	return rc == 0 ? 0 : -1;
}

/*
 * GNU addr2line's address for a line llvm-addr2line does not read as one;
 * s is NUL-terminated.  Measured on binutils 2.40 (symbol names as
 * addresses arrived in 2.39): a line with a '+' is SYMBOL+OFFSET unless it
 * starts with a decimal digit, a line without one is a hex number when it
 * starts with a hex digit ("foo" is 0xf) and a SYMBOL otherwise; numbers
 * are read by strtoull (leading white space, optional 0x, saturating, the
 * rest ignored), OFFSET by strtoull base 0, and an unknown SYMBOL is 0.
 * White space before it is skipped; a name ends at white space or '+'.
 */
static uint64_t gnu_address(struct a2l *a, const char *s)
{
	while (is_space((unsigned char)*s))
		s++;
	const char *plus = strchr(s, '+');
	int number = plus ? (*s >= '0' && *s <= '9') : hex_digit((unsigned char)*s) >= 0;
	if (number)
		return strtoull(s, NULL, 16) & a->vma_mask;
	size_t len = 0;
	while (s[len] && s[len] != '+' && !is_space((unsigned char)s[len]))
		len++;
	uint64_t value;
	if (lookup_symbol(a, s, len, &value) < 0)
		return 0;
	if (plus)
		value += strtoull(plus + 1, NULL, 0);
	return value & a->vma_mask;
}

/* ---- answering -------------------------------------------------------- */

static void add_request(struct query *q, const char *s, size_t n, uint64_t addr)
{
	q->req = cli_query_grow(q->req, &q->req_cap, q->nreq + 1, sizeof(*q->req));
	struct request *r = &q->req[q->nreq++];
	memset(r, 0, sizeof(*r));
	r->text = s;
	r->len = n;
	r->addr = addr;
	r->kind = REQ_CODE;
}

static int run_pending(struct query *q)
{
	int rc = q->nreq ? cli_query_run_batch(q) : 0;
	cli_out_flush(q->pr.out);
	return rc;
}

/* Whether GNU addr2line would look addr up at all: it searches the
 * allocated sections only, and answers "not found" outside them. */
static int in_section(struct a2l *a, uint64_t addr)
{
	if (!a->secs_state) {
		cli_a2l_alloc_sections(a->q.obj, &a->secs, &a->nsecs);
		a->secs_state = 1;
	}
	for (size_t i = 0; i < a->nsecs; i++)
		if (addr >= a->secs[i].start && addr - a->secs[i].start < a->secs[i].size)
			return 1;
	return 0;
}

/*
 * A line answered as GNU's address alone, after the requests before it:
 * with -a its header is GNU's (zero-padded), printed here instead of by
 * the printer.  Outside every allocated section the answer is GNU's "not
 * found" ("??" and "??:0", pretty "?? ??:0"); inside one, the address is
 * resolved as any other.
 */
static int add_gnu_line(struct a2l *a, const char *s, size_t n, uint64_t addr, int inside)
{
	struct query *q = &a->q;
	struct cli_out *o = q->pr.out;
	int rc = run_pending(q);
	if (rc < 0)
		return rc;
	int header = q->pr.print_address;
	if (header)
		cli_out_fmt(o, "0x%0*llx%s", (int)a->vma_digits, (unsigned long long)addr,
		            q->pr.pretty ? ": " : "\n");
	if (!inside) {
		if (q->pr.fn_kind != CLI_FN_NONE)
			cli_out_str(o, q->pr.pretty ? "?? " : "??\n");
		cli_out_str(o, "??:0\n");
		cli_out_flush(o);
		return 0;
	}
	q->pr.print_address = 0;
	add_request(q, s, n, addr);
	rc = run_pending(q);
	q->pr.print_address = header;
	return rc;
}

/* One input line s[0..n) (NUL-terminated at n): an address joins the
 * batch, another line is answered as GNU's address. */
static int add_line(struct a2l *a, const char *s, size_t n)
{
	struct query *q = &a->q;
	uint64_t addr;
	int llvm = llvm_address(s, n, &addr) == 0;
	if (a->section) { /* no -j in llvm-addr2line: GNU's answer, line by line */
		if (!llvm)
			addr = gnu_address(a, s);
		addr &= a->vma_mask;
		return add_gnu_line(a, s, n, addr, addr < a->section_size);
	}
	if (llvm) {
		add_request(q, s, n, addr);
		return 0;
	}
	addr = gnu_address(a, s);
	int inside = in_section(a, addr - q->adjust_vma); /* -j: the section's address added */
	if (inside && !q->pr.print_address) {
		add_request(q, s, n, addr);
		return 0;
	}
	return add_gnu_line(a, s, n, addr, inside);
}

/* A fgets()-sized piece of input as llvm-symbolizer takes it: up to the
 * first NUL, every \r and \n removed, in place.  Returns the new length. */
static size_t clean_piece(char *s, size_t n)
{
	char *nul = memchr(s, '\0', n);
	if (nul)
		n = (size_t)(nul - s);
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] != '\r' && s[i] != '\n')
			s[w++] = s[i];
	return w;
}

/* cli_query_stdin_loop()'s take: the complete lines of buf[0..len) (at EOF the tail too) as requests;
 * returns the bytes taken, or a negative error.  Each piece is cut at
 * LLVM_LINE_MAX as llvm-symbolizer's fgets cuts it, and NUL-terminated in
 * place (over its newline, or in the buffer's spare byte). */
static ptrdiff_t take_lines(void *arg, char *buf, size_t len, int eof)
{
	struct a2l *a = arg;
	size_t off = 0;
	while (off < len) {
		size_t avail = len - off;
		size_t take = cli_llvm_piece_len(buf + off, avail, eof);
		if (!take)
			break;
		size_t n = clean_piece(buf + off, take);
		char saved = buf[off + n];
		buf[off + n] = '\0';
		int rc = add_line(a, buf + off, n);
		if (rc < 0)
			return rc;
		/* The piece's text stays in the batch: only a cut piece had a
		 * byte of the next line overwritten; give it back. */
		if (n == take)
			buf[off + n] = saved;
		off += take;
	}
	return (ptrdiff_t)off;
}

static int run(struct query *q, char **addrs, int naddr)
{
	struct a2l *a = (struct a2l *)q;
	symdb_image_info info;
	info.sz = sizeof info;
	if (q->img && symdb_image_get_info(q->img, &info) == 0 && info.object_class == 32) {
		a->vma_digits = 8;
		a->vma_mask = UINT32_MAX;
	}
	if (naddr == 0)
		return cli_query_stdin_loop(q, take_lines, a);
	for (int i = 0; i < naddr; i++) {
		int rc = add_line(a, addrs[i], strlen(addrs[i]));
		if (rc < 0)
			return rc;
	}
	return run_pending(q);
}

int cli_called_as_addr2line(const char *argv0)
{
	const char *base = strrchr(argv0, '/');
	base = base ? base + 1 : argv0;
	size_t n = strlen(base);
	if (strcmp(base, "addr2line") == 0)
		return 1;
	return n > 10 && strcmp(base + n - 10, "-addr2line") == 0 &&
	       strncmp(base, "llvm-", 5) != 0;
}

/* argv with every "@FILE" replaced by FILE's words, as binutils'
 * expandargv and llvm-addr2line (cl::ExpandResponseFiles) both do: a
 * new argv (program name first, NULL-terminated) in *out, *outc words;
 * the caller frees (*out)[1..*outc) and *out. */
static int expand_response_files(int argc, char **argv, char ***out, int *outc)
{
	char **words;
	int n;
	if (cli_llvm_expand_args(NULL, argc - 1, argv + 1, &words, &n) < 0)
		return -1; /* (said) */
	char **v = malloc(((size_t)n + 2) * sizeof(*v));
	if (!v) {
		cli_llvm_args_free(words, n);
		fputs("symdb: out of memory\n", stderr);
		return -1;
	}
	v[0] = argv[0];
	memcpy(v + 1, words, (size_t)n * sizeof(*v));
	v[n + 1] = NULL;
	free(words);
	*out = v;
	*outc = n + 1;
	return 0;
}

int cli_cmd_addr2line(const struct cli_global *g, int argc, char **argv)
{
	struct a2l a;
	struct cli_out out;
	if (expand_response_files(argc, argv, &argv, &argc) < 0)
		return CLI_EXIT_FAILED;
	cli_query_setup(&a.q, &out);
	const char *slash = strrchr(argv[0], '/');
	a.prog = slash ? slash + 1 : argv[0];
	argv[0] = (char *)a.prog; /* getopt's messages name it, as GNU's do */
	a.vma_digits = 16;
	a.vma_mask = UINT64_MAX;
	memset(&a.syms, 0, sizeof(a.syms));
	a.syms_state = 0;
	a.secs = NULL;
	a.nsecs = 0;
	a.secs_state = 0;
	a.section = 0;
	a.section_size = 0;
	a.last_found = -1;
	/* GNU addr2line's defaults, which llvm-addr2line shares. */
	a.q.pr.style = CLI_STYLE_GNU;
	a.q.pr.fn_kind = CLI_FN_NONE;
	a.q.pr.demangle = 0;
	a.q.inlines = 0;
	a.q.obj = "a.out";
	a.q.run = run;
	const char *section = NULL;
	int ex = parse_args(&a, argc, argv, &section); /* >= 0: help, version, error */
	if (ex >= 0)
		goto done;
	ex = check_file(&a, a.q.obj);
	if (ex == 0 && section)
		ex = apply_section(&a, section);
	if (ex == 0)
		ex = cli_query_execute(&a.q, g, argv + optind, argc - optind);
done:
	cli_a2l_syms_free(&a.syms);
	free(a.secs);
	ex = cli_query_finish(&a.q, &out, ex);
	for (int i = 1; i < argc; i++) /* (getopt permuted them, no more) */
		free(argv[i]);
	free(argv);
	return ex;
}
