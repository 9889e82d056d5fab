/* SPDX-License-Identifier: MIT */
/*
 * live_kernel_sym.c - symdb_kernel_symbolize(): a batch of kernel runtime
 * addresses, each named by kallsyms first (a binary search), then asked of
 * the image that can say more: the vmlinux at address - KASLR offset, or a
 * module's file at the offset into its .text (SPEC §7.8 indexes a .ko's
 * sections at 0).  The image requests go to the symbolizer in one
 * symdb_symbolize() call, which indexes an image on first sight, groups by
 * image and sorts; an address whose image gives no frames keeps its
 * kallsyms answer.  The buffers are the handle's and are reused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format_header.h"
#include "live_kernel.h"

static int reserve(symdb_kernel *k, size_t n)
{
	if (n <= k->cap)
		return 0;
	symdb_request *rq = realloc(k->req, n * sizeof(*rq));
	if (rq)
		k->req = rq;
	symdb_symbolized *rs = realloc(k->res, n * sizeof(*rs));
	if (rs)
		k->res = rs;
	uint32_t *ro = realloc(k->req_of, n * sizeof(*ro));
	if (ro)
		k->req_of = ro;
	const struct lk_sym **fd = realloc(k->found, n * sizeof(*fd));
	if (fd)
		k->found = fd;
	if (!rq || !rs || !ro || !fd)
		return -ENOMEM;
	k->cap = n;
	return 0;
}

/* The image path and address that may answer addr (covered by s, or by
 * nothing): the vmlinux for the kernel image, the module's file for its
 * .text; NULL when kallsyms is all there is. */
static const char *image_for(const symdb_kernel *k, const struct lk_sym *s, uint64_t addr,
                             uint64_t *debug_addr)
{
	if (!s || s->mod == 0) {
		if (!k->vmlinux || addr < k->kaslr)
			return NULL;
		*debug_addr = addr - k->kaslr;
		return k->vmlinux;
	}
	const struct lk_module *m = &k->mods[s->mod - 1];
	if (!m->file || addr < m->text || addr >= m->text_end)
		return NULL;
	*debug_addr = addr - m->text;
	return m->file;
}

static void kallsyms_answer(const symdb_kernel *k, const struct lk_sym *s,
                            symdb_kernel_result *r)
{
	memset(r, 0, sizeof(*r));
	r->debug_addr = SYMDB_ADDR_INVALID;
	if (!s) {
		r->status = SYMDB_SYM_NO_SYMBOL;
		return;
	}
	r->status = SYMDB_SYM_OK;
	r->source = SYMDB_KERNEL_SRC_KALLSYMS;
	r->sym_name = k->names + s->name;
	r->sym_addr = s->addr;
	r->sym_size = s->end - s->addr;
	r->module = s->mod ? k->mods[s->mod - 1].name : NULL;
}

/* Find address i's symbol and queue its image request, if it has one. */
static size_t queue(symdb_kernel *k, int images, size_t i, uint64_t addr, size_t m)
{
	const struct lk_sym *s = k->found[i] = lk_find(k, addr);
	uint64_t da = 0;
	const char *path = images ? image_for(k, s, addr, &da) : NULL;
	k->req_of[i] = UINT32_MAX;
	if (!path)
		return m;
	k->req[m] = (symdb_request){ .image_ref = SYMDB_IMAGE_PATH,
		                     .addr_kind = SYMDB_ADDR_VADDR,
		                     .image.path = path,
		                     .addr = da };
	k->req_of[i] = (uint32_t)m;
	return m + 1;
}

int symdb_kernel_symbolize(symdb_kernel *k, symdb_symbolizer *s, const uint64_t *addrs,
                           size_t n, symdb_kernel_result *results, size_t result_sz,
                           const symdb_symbolize_opts *opts)
{
	unsigned flags;
	char *eb;
	size_t ebsz;
	int rc = rd_opts_prefix(opts, RD_OPTS_END(symdb_symbolize_opts), SYMDB_SYMBOLIZE_DEMANGLE,
	                        &flags, &eb, &ebsz);
	if (rc)
		return rc;
	if (!k || (n && (!addrs || !results)) || result_sz == 0 || n > UINT32_MAX)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "symdb_kernel_symbolize: bad argument");
	if (reserve(k, n) < 0)
		return fmt_err(eb, ebsz, -ENOMEM, "symdb_kernel_symbolize: out of memory");
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		m = queue(k, s != NULL, i, addrs[i], m);
	size_t frame_sz = sizeof(symdb_frame);
	if (m) {
		SYMDB_OPTS(symdb_symbolize_opts, so, .flags = flags, .errbuf = eb,
		           .errbuf_sz = ebsz, .frame_sz = frame_sz);
		if ((rc = symdb_symbolize(s, k->req, m, k->res, &so)) < 0)
			return rc;
	}
	for (size_t i = 0; i < n; i++) {
		symdb_kernel_result r;
		kallsyms_answer(k, k->found[i], &r);
		uint32_t q = k->req_of[i];
		if (q != UINT32_MAX) {
			const symdb_symbolized *x = &k->res[q];
			r.debug_addr = k->req[q].addr;
			if (x->status == SYMDB_SYM_OK && x->nframes) {
				r.status = SYMDB_SYM_OK;
				r.source = r.module ? SYMDB_KERNEL_SRC_MODULE : SYMDB_KERNEL_SRC_VMLINUX;
				r.nframes = x->nframes;
				r.frames = x->frames;
				r.image = x->image;
			} else {
				r.error = x->error ? x->error : SYMDB_E_NOT_FOUND;
			}
		}
		memcpy((char *)results + i * result_sz, &r, result_sz < sizeof r ? result_sz : sizeof r);
	}
	return 0;
}
