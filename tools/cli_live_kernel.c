/* SPDX-License-Identifier: MIT */
/*
 * cli_live_kernel.c - `symdb query --kernel [ADDR...]`: kernel runtime
 * addresses (as perf, bpftrace or a stack in dmesg show them) answered by
 * symdb_kernel_symbolize(): file:line and inline frames from the running
 * kernel's vmlinux or a module's file when one is found (indexed on first
 * sight), the kallsyms symbol otherwise, printed in the query's output
 * style.  Addresses are hex, with or without 0x (kallsyms and perf print
 * them without); a line that is not one is echoed, as llvm-symbolizer
 * echoes what it cannot parse.  Input is read with read(2) and each batch
 * is the complete lines that have arrived, as for other queries.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_live_kernel.h"
#include "cli_query.h"

#define KBATCH 4096 /* addresses per library call */

struct kbatch {
	uint64_t addr[KBATCH];
	const char *text[KBATCH]; /* the line, for echoing an invalid one */
	size_t len[KBATCH];
	int valid[KBATCH];
	int data[KBATCH];         /* a DATA request */
	symdb_kernel_result res[KBATCH];
	/* the valid addresses of the batch, their lines, their answers */
	uint64_t qaddr[KBATCH];
	size_t idx[KBATCH];
	symdb_kernel_result qres[KBATCH];
	size_t n;
};

/* Hex with or without 0x; spaces around it and a "CODE " or "DATA "
 * prefix allowed (*data set for the latter). */
static int parse_addr(const char *s, size_t n, uint64_t *out, int *data)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		n--;
	*data = n > 5 && !memcmp(s, "DATA ", 5);
	if (n > 5 && (!memcmp(s, "CODE ", 5) || *data)) {
		s += 5, n -= 5;
		while (n && *s == ' ')
			s++, n--;
	}
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2, n -= 2;
	if (n == 0 || n > 16)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		int c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0'
		        : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                               : -1;
		if (d < 0)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* The frames one result prints (cli_query_print.c's rules for an image:
 * every frame with --inlines, else the innermost with the outermost's
 * symbol-table name), or the kallsyms symbol alone. */
static size_t result_lines(struct query *q, const symdb_kernel_result *r)
{
	size_t n = r->nframes ? r->nframes : 1;
	q->li = cli_query_grow(q->li, &q->li_cap, n, sizeof(*q->li));
	if (!r->nframes) {
		memset(q->li, 0, sizeof(*q->li));
		if (q->pr.fn_kind != CLI_FN_NONE)
			q->li[0].name = r->sym_name;
		q->li[0].has_start = r->sym_name != NULL;
		q->li[0].start = r->sym_addr;
		return 1;
	}
	if (q->inlines) {
		for (size_t i = 0; i < n; i++)
			cli_query_line_info(q, &r->frames[i], &q->li[i]);
		return n;
	}
	cli_query_line_info(q, &r->frames[0], &q->li[0]);
	const symdb_frame *outer = &r->frames[r->nframes - 1];
	if (q->pr.style != CLI_STYLE_GNU && q->pr.fn_kind == CLI_FN_LINKAGE &&
	    (outer->flags & SYMDB_FRAME_FROM_SYMTAB)) {
		q->li[0].name = outer->name;
		q->li[0].start = outer->start_addr;
		q->li[0].has_start = 1;
	}
	return 1;
}

/* JSON ModuleName: the image that answered, else perf's names for the
 * kernel's symbol table and a module's. */
static const char *module_name(const symdb_kernel_result *r, char *buf, size_t n)
{
	if (r->image) {
		symdb_image_info info;
		info.sz = sizeof info;
		if (symdb_image_get_info(r->image, &info) == 0 && info.image_name)
			return info.image_name;
	}
	if (r->module) {
		snprintf(buf, n, "[%s]", r->module);
		return buf;
	}
	return "[kernel.kallsyms]";
}

static int flush_batch(struct query *q, symdb_kernel *k, struct kbatch *b)
{
	size_t m = 0;
	for (size_t i = 0; i < b->n; i++)
		if (b->valid[i]) {
			b->idx[m] = i;
			b->qaddr[m++] = b->addr[i];
		}
	char err[512] = "";
	SYMDB_OPTS(symdb_symbolize_opts, o, .flags = q->lib_demangle ? SYMDB_SYMBOLIZE_DEMANGLE : 0u,
	           .errbuf = err, .errbuf_sz = sizeof err);
	int rc = symdb_kernel_symbolize(k, q->sym, b->qaddr, m, b->qres, sizeof b->qres[0], &o);
	if (rc < 0) {
		cli_err_lib("kernel", rc, err);
		return rc;
	}
	for (size_t j = 0; j < m; j++)
		b->res[b->idx[j]] = b->qres[j];
	char mod[256];
	for (size_t i = 0; i < b->n; i++) {
		if (!b->valid[i]) {
			q->pr.module = "[kernel.kallsyms]";
			cli_print_invalid(&q->pr, b->text[i], b->len[i]);
			continue;
		}
		const symdb_kernel_result *r = &b->res[i];
		q->pr.module = module_name(r, mod, sizeof mod);
		if (b->data[i]) { /* kallsyms' D, B, R... symbols: name, start, size */
			cli_print_data(&q->pr, b->addr[i], r->sym_name, r->sym_name ? r->sym_addr : 0,
			               r->sym_name ? r->sym_size : 0);
			continue;
		}
		size_t n = result_lines(q, r);
		cli_print_code(&q->pr, b->addr[i], q->li, n);
	}
	b->n = 0;
	return 0;
}

static int add_line(struct query *q, symdb_kernel *k, struct kbatch *b, const char *s, size_t n)
{
	b->text[b->n] = s;
	b->len[b->n] = n && s[n - 1] == '\n' ? n - 1 : n;
	b->valid[b->n] = parse_addr(s, n, &b->addr[b->n], &b->data[b->n]) == 0;
	return ++b->n == KBATCH ? flush_batch(q, k, b) : 0;
}

static int run_stdin(struct query *q, symdb_kernel *k, struct kbatch *b)
{
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	int rc = 0, eof = 0;
	while (rc == 0 && !eof) {
		if (len == cap) { /* a line longer than the buffer: cut it */
			rc = add_line(q, k, b, buf, len);
			len = 0;
		}
		ssize_t r = read(0, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			break;
		}
		eof = r == 0;
		len += (size_t)r;
		size_t start = 0;
		for (size_t i = 0; rc == 0 && i < len; i++)
			if (buf[i] == '\n') {
				rc = add_line(q, k, b, buf + start, i + 1 - start);
				start = i + 1;
			}
		if (rc == 0 && eof && start < len) {
			rc = add_line(q, k, b, buf + start, len - start);
			start = len;
		}
		/* Answer what arrived before reading on: the lines point into buf. */
		if (rc == 0 && b->n)
			rc = flush_batch(q, k, b);
		cli_out_flush(q->pr.out);
		memmove(buf, buf + start, len - start);
		len -= start;
	}
	free(buf);
	return rc;
}

int cli_kernel_run(struct query *q, char **addrs, int naddr)
{
	const struct cli_kernel_src *ks = &q->ksrc;
	char err[1024] = "";
	SYMDB_OPTS(symdb_kernel_opts, o, .flags = ks->no_dwarf ? SYMDB_KERNEL_NO_DWARF : 0u,
	           .errbuf = err, .errbuf_sz = sizeof err, .kallsyms = ks->kallsyms,
	           .notes = ks->notes, .modules = ks->modules, .sysfs_module = ks->sysfs_module,
	           .release = ks->release, .root = ks->root,
	           .debug_dirs = ks->ndebug ? ks->debug_dirs : NULL);
	symdb_kernel *k = NULL;
	int rc = symdb_kernel_open(&o, &k);
	if (rc < 0) {
		cli_err_lib("kernel", rc, err);
		return rc;
	}
	struct kbatch *b = calloc(1, sizeof(*b));
	if (!b) {
		symdb_kernel_close(k);
		return -ENOMEM;
	}
	if (naddr > 0) {
		for (int i = 0; rc == 0 && i < naddr; i++)
			rc = add_line(q, k, b, addrs[i], strlen(addrs[i]));
		if (rc == 0 && b->n)
			rc = flush_batch(q, k, b);
	} else {
		rc = run_stdin(q, k, b);
	}
	free(b);
	symdb_kernel_close(k);
	return rc;
}

int cli_kernel_check(struct query *q)
{
	const struct cli_kernel_src *ks = &q->ksrc;
	const char *why = NULL;
	if (!ks->on)
		why = "--kallsyms, --kallsyms-only, --kernel-notes, --kernel-modules, --sysfs-module, "
		      "--kernel-release, --kernel-root and --debug-dir need --kernel";
	else if (q->obj || q->uuid_hex || q->build_id_hex || q->perf_map)
		why = "give only one of --kernel, --perf-map FILE, --obj FILE, --uuid HEX and "
		      "--build-id HEX";
	else if (q->pr.style == CLI_STYLE_ATOS)
		why = "--output-style=atos needs --obj FILE or --uuid HEX";
	else if (q->kind != SYMDB_ADDR_VADDR || q->load_given || q->adjust_vma)
		why = "--kernel takes runtime kernel addresses: no --addr-kind, --load-address or "
		      "--adjust-vma";
	else if (ks->too_many)
		why = "at most 16 --debug-dir";
	if (why) {
		cli_err(NULL, "query: %s", why);
		return -CLI_EXIT_USAGE;
	}
	q->per_line = 1;
	q->run = cli_kernel_run;
	return 0;
}
