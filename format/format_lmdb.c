/* SPDX-License-Identifier: MIT */
/*
 * format_lmdb.c - read LMDB's meta pages of a catalog data.mdb without
 * LMDB, to refuse a truncated file before LMDB maps it (SPEC §12.1,
 * "Catalog file check"; the layout is in format_lmdb.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "format_lmdb.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "format_io.h"

int fmt_lmdb_meta_decode(const uint8_t *page, size_t len, fmt_lmdb_meta *m, const char **why)
{
	uint32_t ps;

	if (len < FMT_LMDB_META_END) {
		*why = "meta page is short";
		return -1;
	}
	if (!(fmt_lmdb_u16(page + FMT_LMDB_OFF_FLAGS) & FMT_LMDB_P_META)) {
		*why = "not an LMDB file (no meta page)";
		return -1;
	}
	if (fmt_lmdb_u32(page + FMT_LMDB_OFF_MAGIC) != FMT_LMDB_MAGIC) {
		*why = "not an LMDB file (bad magic)";
		return -1;
	}
	if (fmt_lmdb_u32(page + FMT_LMDB_OFF_VERSION) != FMT_LMDB_DATA_VERSION) {
		*why = "LMDB data version is not 1";
		return -1;
	}
	ps = fmt_lmdb_u32(page + FMT_LMDB_OFF_PSIZE);
	m->psize = ps;
	m->last_pg = fmt_lmdb_word(page + FMT_LMDB_OFF_LAST_PG);
	m->txnid = fmt_lmdb_word(page + FMT_LMDB_OFF_TXNID);
	/* 2^40 pages of 64 KiB is far past any map: a larger number is damage,
	 * and the bound keeps (last_pg + 1) * psize from overflowing. */
	if (m->last_pg < 1 || m->last_pg >= (1ull << 40)) {
		*why = "meta page names an impossible last page";
		return -1;
	}
	return 0;
}

/* Read and decode the meta at offset off; 1 if the file ends first. */
static int lmdb_read_meta(int fd, uint64_t off, fmt_lmdb_meta *m, const char **why)
{
	uint8_t page[FMT_LMDB_META_END];
	ptrdiff_t got = fmt_pread_full(fd, page, sizeof page, off);

	if (got < 0)
		return (int)got;
	if ((size_t)got < sizeof page)
		return 1;
	return fmt_lmdb_meta_decode(page, sizeof page, m, why) ? 2 : 0;
}

int fmt_lmdb_check_fd(int fd, fmt_lmdb_check *out)
{
	fmt_lmdb_meta m0 = { 0 }, m1 = { 0 }, *cur = &m0;
	struct stat st;
	int rc;

	memset(out, 0, sizeof *out);
	rc = lmdb_read_meta(fd, 0, &m0, &out->why);
	if (rc == 0 && !fmt_lmdb_psize_ok(m0.psize)) {
		out->why = "meta page names an impossible page size";
		rc = 2;
	}
	if (rc == 0) {
		out->psize = m0.psize;
		out->need = 2 * (uint64_t)m0.psize;
		/* LMDB takes the page size from page 0 and finds page 1 by it. */
		rc = lmdb_read_meta(fd, m0.psize, &m1, &out->why);
		if (rc == 1 && (m0.last_pg + 1) * m0.psize > out->need)
			out->need = (m0.last_pg + 1) * m0.psize;
	}
	if (rc < 0 || rc == 2)
		return rc;
	if (rc == 0 && m1.psize != m0.psize) {
		/* LMDB maps by the newer meta's page size: a flipped byte in
		 * either would have it read past the file. */
		out->why = "the two meta pages name different page sizes";
		return 2;
	}
	if (rc == 0) {
		if (m1.txnid > m0.txnid)
			cur = &m1;
		out->need = (cur->last_pg + 1) * m0.psize;
	}
	/* The size last: a commit writes its pages before the meta naming them,
	 * so a size taken after the metas covers whatever they name. */
	if (fstat(fd, &st) < 0)
		return -errno;
	out->size = (uint64_t)st.st_size;
	if (rc == 1 || out->size < out->need)
		return 1;
	return 0;
}
