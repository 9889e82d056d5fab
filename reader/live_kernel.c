/* SPDX-License-Identifier: MIT */
/*
 * live_kernel.c - the running kernel's symbols from /proc/kallsyms: the
 * handle (symdb_kernel_open/close/get_info) and one sorted table searched
 * by symdb_kernel_lookup() and the batches of live_kernel_sym.c.
 *
 * The table is what perf builds from kallsyms (tools/perf/util/symbol.c:
 * dso__load_kallsyms): the symbol types it keeps, duplicates at one address
 * reduced by its choose_best_symbol() rules, and ends inferred by its
 * symbols__fixup_end(), so that an address names the same function in
 * `perf report` and here.  Reading a line costs a few comparisons; no
 * allocation per line (names go to one growing arena).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "format_header.h"
#include "live_kernel.h"
#include "reader_symbolize.h" /* rd_sym_grow */

#define PAGE 4096u

/* ---- reading kallsyms ---------------------------------------------------- */

/* perf's symbol_type__filter(): text, weak, data and bss, either case.
 * Read-only data, absolute and other types are neither sampled code nor
 * boundaries perf uses. */
static int kept_type(char t)
{
	t = (char)toupper((unsigned char)t);
	return t == 'T' || t == 'W' || t == 'D' || t == 'B';
}

uint16_t lk_module_intern(symdb_kernel *k, const char *name, size_t len)
{
	for (size_t i = k->nmods; i-- > 0;) /* kallsyms lists a module's symbols together */
		if (strlen(k->mods[i].name) == len && !memcmp(k->mods[i].name, name, len))
			return (uint16_t)(i + 1);
	if (k->nmods >= UINT16_MAX)
		return 0;
	struct lk_module *m = realloc(k->mods, (k->nmods + 1) * sizeof(*m));
	if (!m)
		return 0;
	k->mods = m;
	m = &k->mods[k->nmods];
	memset(m, 0, sizeof(*m));
	if (!(m->name = strndup(name, len)))
		return 0;
	m->text_end = UINT64_MAX;
	return (uint16_t)++k->nmods;
}

/*
 * One line, "ADDR TYPE NAME" or "ADDR TYPE NAME\t[MODULE]" (the kernel's
 * s_show() format): 1 when kept, 0 when skipped as a type perf drops, -1 when
 * malformed, -ENOMEM.  *zero tells whether the address read as 0.
 */
static int parse_line(symdb_kernel *k, char *line, size_t len, size_t *names_cap,
                      size_t *syms_cap, int *zero)
{
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	char *p = line;
	uint64_t addr = 0;
	size_t digits = 0;
	for (; isxdigit((unsigned char)*p); p++, digits++) {
		int c = tolower((unsigned char)*p);
		addr = addr << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
	}
	if (digits == 0 || digits > 16 || p[0] != ' ' || !isalpha((unsigned char)p[1]) ||
	    p[2] != ' ')
		return -1;
	char type = p[1];
	char *name = p + 3;
	size_t nlen = strcspn(name, "\t ");
	if (nlen == 0)
		return -1;
	char *rest = name + nlen;
	const char *mod = NULL;
	size_t mlen = 0;
	if (*rest) {
		if (rest[0] != '\t' || rest[1] != '[')
			return -1;
		mod = rest + 2;
		mlen = strcspn(mod, "]");
		if (mlen == 0 || mod[mlen] != ']')
			return -1;
	}
	*zero = addr == 0;
	if (!mod && nlen == 6 && !memcmp(name, "_stext", 6))
		k->k_stext = addr;
	if (!mod && nlen == 5 && !memcmp(name, "_text", 5))
		k->k_text = addr;
	/* ARM's mapping symbols ($a, $d, $x) mark code kinds, not functions. */
	if (!kept_type(type) || name[0] == '$')
		return 0;
	uint16_t mi = 0;
	if (mod && !(mi = lk_module_intern(k, mod, mlen)))
		return -ENOMEM;
	if (rd_sym_grow(&k->names, names_cap, k->names_len + nlen + 1, 1) < 0 ||
	    rd_sym_grow(&k->syms, syms_cap, k->nsyms + 1, sizeof(*k->syms)) < 0)
		return -ENOMEM;
	if (k->names_len > UINT32_MAX - nlen - 1)
		return -ENOMEM;
	memcpy(k->names + k->names_len, name, nlen);
	k->names[k->names_len + nlen] = '\0';
	k->syms[k->nsyms++] = (struct lk_sym){ .addr = addr, .name = (uint32_t)k->names_len,
		                               .mod = mi, .type = type };
	k->names_len += nlen + 1;
	return 1;
}

/* The first line of a /proc/sys file, or "?". */
static void read_sysctl(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	if (!f || !fgets(buf, (int)n, f))
		snprintf(buf, n, "?");
	buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

static int read_kallsyms(symdb_kernel *k, const struct lk_opts *o)
{
	/* A regular file (procfs's is one, of size 0): a directory, FIFO or
	 * device is refused before a read could fail or block. */
	struct stat st;
	int fd = open(o->kallsyms, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return fmt_err(o->eb, o->ebsz, -errno, "%s: %s", o->kallsyms, symdb_strerror(-errno));
	if (fstat(fd, &st) < 0) {
		int rc = -errno;
		close(fd);
		return fmt_err(o->eb, o->ebsz, rc, "%s: %s", o->kallsyms, symdb_strerror(rc));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fmt_err(o->eb, o->ebsz, S_ISDIR(st.st_mode) ? -EISDIR : SYMDB_E_BAD_OBJECT,
		               "%s: not a regular file", o->kallsyms);
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return fmt_err(o->eb, o->ebsz, -ENOMEM, "%s: out of memory", o->kallsyms);
	}
	char *line = NULL;
	size_t lcap = 0, names_cap = 0, syms_cap = 0, lines = 0, zeros = 0;
	ssize_t n;
	int rc = 0;
	errno = 0; /* what a read error leaves is its reason */
	while ((n = getline(&line, &lcap, f)) >= 0) {
		int zero = 0;
		int r = parse_line(k, line, (size_t)n, &names_cap, &syms_cap, &zero);
		if (r == -ENOMEM) {
			rc = fmt_err(o->eb, o->ebsz, -ENOMEM, "%s: out of memory", o->kallsyms);
			break;
		}
		if (r < 0) {
			k->skipped++;
			continue;
		}
		lines++;
		zeros += zero;
	}
	if (rc == 0 && ferror(f)) {
		int e = errno ? errno : EIO;
		rc = fmt_err(o->eb, o->ebsz, -e, "%s: %s", o->kallsyms, symdb_strerror(-e));
	}
	free(line);
	fclose(f);
	if (rc)
		return rc;
	if (lines && zeros == lines) {
		/* The kernel prints 0 for every address to a reader it does not
		 * trust (kptr_restrict, CAP_SYSLOG): answering from such a
		 * table would name the first symbol for everything. */
		char kr[16], pp[16];
		read_sysctl("/proc/sys/kernel/kptr_restrict", kr, sizeof kr);
		read_sysctl("/proc/sys/kernel/perf_event_paranoid", pp, sizeof pp);
		return fmt_err(o->eb, o->ebsz, -EACCES,
		               "%s: every address reads as 0: the kernel hides them from this user "
		               "(kptr_restrict=%s, perf_event_paranoid=%s; they show with CAP_SYSLOG, "
		               "or to all with kptr_restrict=0 and perf_event_paranoid<=1)",
		               o->kallsyms, kr, pp);
	}
	if (k->nsyms == 0)
		return fmt_err(o->eb, o->ebsz, SYMDB_E_BAD_OBJECT, "%s: no symbols (%zu lines skipped)",
		               o->kallsyms, k->skipped);
	return 0;
}

/* ---- sorting, duplicates, ends ------------------------------------------- */

static int by_addr(const void *a, const void *b)
{
	const struct lk_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name; /* file order */
}

static size_t underscores(const char *s)
{
	size_t n = 0;
	while (s[n] == '_')
		n++;
	return n;
}

/* perf's kallsyms2elf_binding(): 'W' weak, upper case global, else local. */
static int binding_rank(char t)
{
	return t == 'W' ? 1 : isupper((unsigned char)t) ? 2 : 0;
}

/* perf's choose_best_symbol() for two symbols at one address (all of zero
 * size when read from kallsyms): non-weak, then global, then fewer leading
 * underscores, then the longer name, then the first. */
static int better(const symdb_kernel *k, const struct lk_sym *a, const struct lk_sym *b)
{
	int wa = a->type == 'W', wb = b->type == 'W';
	if (wa != wb)
		return wb;
	int ga = binding_rank(a->type) == 2, gb = binding_rank(b->type) == 2;
	if (ga != gb)
		return ga;
	const char *na = k->names + a->name, *nb = k->names + b->name;
	size_t ua = underscores(na), ub = underscores(nb);
	if (ua != ub)
		return ua < ub;
	size_t la = strlen(na), lb = strlen(nb);
	if (la != lb)
		return la > lb;
	return 0;
}

/* roundup(a + 4096, 4096): the end perf gives a last symbol. */
static uint64_t next_page_end(uint64_t a)
{
	uint64_t r = (a + 2 * (uint64_t)PAGE - 1) & ~(uint64_t)(PAGE - 1);
	return r < a ? UINT64_MAX : r;
}

/* Sort, keep the best symbol of each address, infer ends (symbols__fixup_end
 * with is_kallsyms): up to the next symbol, except that the last symbol of
 * the kernel image or of a module, and the last of all, end at the next
 * page boundary past one more page. */
static void finish_table(symdb_kernel *k)
{
	qsort(k->syms, k->nsyms, sizeof(*k->syms), by_addr);
	size_t w = 0;
	for (size_t i = 0; i < k->nsyms; i++) {
		if (w && k->syms[w - 1].addr == k->syms[i].addr) {
			if (better(k, &k->syms[i], &k->syms[w - 1]))
				k->syms[w - 1] = k->syms[i];
			continue;
		}
		k->syms[w++] = k->syms[i];
	}
	k->nsyms = w;
	for (size_t i = 0; i < w; i++) {
		struct lk_sym *s = &k->syms[i];
		if (i + 1 < w && s->mod == k->syms[i + 1].mod)
			s->end = k->syms[i + 1].addr;
		else
			s->end = next_page_end(s->addr);
		/* Never past the next symbol: the table stays disjoint. */
		if (i + 1 < w && s->end > k->syms[i + 1].addr)
			s->end = k->syms[i + 1].addr;
	}
}

const struct lk_sym *lk_find(const symdb_kernel *k, uint64_t addr)
{
	size_t lo = 0, hi = k->nsyms; /* first symbol above addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct lk_sym *s = &k->syms[lo - 1];
	return addr < s->end ? s : NULL;
}

/* ---- the handle ---------------------------------------------------------- */

static int get_opts(const symdb_kernel_opts *in, struct lk_opts *o)
{
	memset(o, 0, sizeof(*o));
	int rc = rd_opts_prefix(in, RD_OPTS_END(symdb_kernel_opts), SYMDB_KERNEL_NO_DWARF,
	                        &o->flags, &o->eb, &o->ebsz);
	if (rc)
		return rc;
	symdb_kernel_opts c;
	memset(&c, 0, sizeof c);
	if (in)
		memcpy(&c, in, in->sz < sizeof c ? in->sz : sizeof c);
	o->kallsyms = c.kallsyms ? c.kallsyms : "/proc/kallsyms";
	o->notes = c.notes ? c.notes : "/sys/kernel/notes";
	o->modules = c.modules ? c.modules : "/proc/modules";
	o->sysfs_module = c.sysfs_module ? c.sysfs_module : "/sys/module";
	o->root = c.root ? c.root : "/";
	o->release = c.release;
	o->debug_dirs = c.debug_dirs;
	return 0;
}

int symdb_kernel_open(const symdb_kernel_opts *opts, symdb_kernel **out)
{
	struct lk_opts o;
	int rc = get_opts(opts, &o);
	if (rc)
		return rc;
	if (!out)
		return fmt_err(o.eb, o.ebsz, SYMDB_E_INVAL, "symdb_kernel_open: NULL argument");
	*out = NULL;
	symdb_kernel *k = calloc(1, sizeof(*k));
	if (!k)
		return fmt_err(o.eb, o.ebsz, -ENOMEM, "symdb_kernel_open: out of memory");
	struct utsname u;
	const char *rel = o.release ? o.release : uname(&u) == 0 ? u.release : "";
	if (!(k->release = strdup(rel)))
		rc = fmt_err(o.eb, o.ebsz, -ENOMEM, "symdb_kernel_open: out of memory");
	if (rc == 0)
		rc = read_kallsyms(k, &o);
	if (rc == 0) {
		finish_table(k);
		strcpy(k->no_vmlinux, "not looked for");
		if (!(o.flags & SYMDB_KERNEL_NO_DWARF) &&
		    ((rc = lk_find_vmlinux(k, &o)) < 0 || (rc = lk_find_modules(k, &o)) < 0))
			rc = fmt_err(o.eb, o.ebsz, rc, "symdb_kernel_open: %s", strerror(-rc));
	}
	if (rc) {
		symdb_kernel_close(k);
		return rc;
	}
	*out = k;
	return 0;
}

void symdb_kernel_close(symdb_kernel *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nmods; i++) {
		free(k->mods[i].name);
		free(k->mods[i].file);
	}
	free(k->mods);
	free(k->syms);
	free(k->names);
	free(k->vmlinux);
	free(k->release);
	free(k->req);
	free(k->res);
	free(k->req_of);
	free(k->found);
	free(k);
}

int symdb_kernel_get_info(const symdb_kernel *k, symdb_kernel_info *out)
{
	if (!k || !out || out->sz == 0)
		return SYMDB_E_INVAL;
	symdb_kernel_info i;
	memset(&i, 0, sizeof i);
	i.sz = out->sz;
	i.nsyms = k->nsyms;
	i.skipped_lines = k->skipped;
	i.nmodules = k->nmods_listed;
	i.nmodule_files = k->nmod_files;
	i.vmlinux = k->vmlinux;
	i.kaslr_offset = k->kaslr;
	i.build_id = k->build_id;
	i.no_vmlinux = k->vmlinux ? "" : k->no_vmlinux;
	memcpy(out, &i, out->sz < sizeof i ? out->sz : sizeof i);
	return 0;
}

int symdb_kernel_lookup(const symdb_kernel *k, uint64_t addr, const char **name,
                        uint64_t *start, uint64_t *size, const char **module)
{
	if (!k || !name)
		return SYMDB_E_INVAL;
	const struct lk_sym *s = lk_find(k, addr);
	if (!s)
		return SYMDB_E_NOT_FOUND;
	*name = k->names + s->name;
	if (start)
		*start = s->addr;
	if (size)
		*size = s->end - s->addr;
	if (module)
		*module = s->mod ? k->mods[s->mod - 1].name : NULL;
	return 0;
}
