/* SPDX-License-Identifier: MIT */
/*
 * test_writer.c - unit tests of the writer side: the indexer's containers
 * (ix_vec, the deduplicating string pool), ix_tables.c (symbol reduction of
 * SPEC §7.2, Address_Size choice, DWARF tables only with HAS_DWARF, interval
 * clipping at Base_Address, rejection of an inconsistent DWARF model) and
 * format_writer.c (layout, checksums, padding, argument checks, write errors).
 * Every file written is read back through format_header.c's validator, the
 * same code the reader trusts.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "format_header.h"
#include "format_writer.h"
#include "ix_emit.h"

static void test_vec_and_strings(void)
{
	ix_vec v;
	ix_strtab *t = ix_str_new();
	size_t len, i;
	const uint8_t *p;
	char name[32];
	uint32_t refs[20000];

	ix_vec_init(&v, sizeof(uint64_t));
	for (i = 0; i < 1000; i++) {
		uint64_t *x = ix_vec_push(&v);

		CHECK(x && *x == 0);
		if (x)
			*x = i;
	}
	CHECK(v.n == 1000 && IX_AT(&v, uint64_t, 999) == 999);
	ix_vec_free(&v);
	CHECK(v.n == 0 && v.p == NULL);

	CHECK(t != NULL);
	if (!t)
		return;
	CHECK(ix_str_addz(t, "") == 0);
	uint32_t a = ix_str_addz(t, "abc"), b = ix_str_addz(t, "ab"), c = ix_str_add(t, "abcd", 3);
	CHECK(a == 1 && b != a && c == a);
	CHECK(ix_str_add(t, "ab\0zz", 5) == b); /* ends at the first NUL */
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof name, "sym_%zu", i);
		refs[i] = ix_str_addz(t, name);
	}
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof name, "sym_%zu", i);
		if (ix_str_addz(t, name) != refs[i]) {
			CHECK(!"dedup after rehash");
			break;
		}
	}
	p = ix_str_bytes(t, &len);
	CHECK(p[0] == 0 && p[len - 1] == 0);
	CHECK(strcmp((const char *)p + refs[12345], "sym_12345") == 0);
	ix_str_free(t);
}

/* A small image by hand: base 0x400000, aliases, a symbol past 4 GiB when
 * `far`, and optionally a minimal DWARF model. */
static void make_image(ix_image *img, int far, int dwarf)
{
	static const struct { uint64_t addr, size; const char *name; } syms[] = {
		{ 0x401000, 0x10, "f_small" },  { 0x401000, 0x20, "f_big" },
		{ 0x401000, 0x20, "f_big_later" }, { 0x401000, 0, "f_nosize" },
		{ 0x401100, 0x8, "g" },         { 0x3ff000, 0x8, "below_base" },
	};
	ix_segment *s;
	ix_symbol *y;
	size_t i;

	CHECK(ix_image_init(img) == 0);
	img->object_format = FMT_OBJ_ELF;
	img->object_class = 64;
	img->object_endian = 1;
	img->object_type = 2;
	img->machine = 62;
	img->base_address = 0x400000;
	img->uuid.len = 4;
	img->uuid.kind = FMT_UUID_GNU_BUILD_ID;
	memcpy(img->uuid.bytes, "\x01\x02\x03\x04", 4);
	img->image_name = ix_str_addz(img->strings, "a.out");
	s = ix_vec_push(&img->segments);
	s->vaddr = 0x400000;
	s->memsz = s->filesz = 0x2000;
	s->flags = FMT_SEGF_R | FMT_SEGF_X;
	for (i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		if (syms[i].addr < img->base_address)
			continue; /* ix_elf drops these; here we just skip */
		y = ix_vec_push(&img->symbols);
		y->addr = syms[i].addr;
		y->size = syms[i].size;
		y->name = ix_str_addz(img->strings, syms[i].name);
		y->flags = FMT_SYMF_FUNC;
		y->order = i;
	}
	if (far) {
		y = ix_vec_push(&img->symbols);
		y->addr = 0x400000 + 0x100000000ull;
		y->name = ix_str_addz(img->strings, "far");
		y->order = 99;
	}
	if (!dwarf)
		return;
	img->header_flags |= FMT_FLAG_HAS_DWARF;
	ix_file *f = ix_vec_push(&img->files);
	f->path = ix_str_addz(img->strings, "/src/a.c");
	f->relative = f->path + 5;
	f->base = f->path + 5;
	ix_function *fn = ix_vec_push(&img->functions);
	fn->die_offset = 0x2a;
	fn->name = fn->linkage_name = ix_str_addz(img->strings, "f");
	fn->decl_file = 0;
	ix_node *nd = ix_vec_push(&img->nodes);
	nd->parent = FMT_NONE;
	nd->function = 0;
	nd->call_file = FMT_NONE;
	nd->flags = FMT_NODEF_HAS_LOW_PC;
	nd->low_pc = 0x401000;
	/* intervals starting below the base must be clipped to it */
	static const uint64_t ia[] = { 0x3ff000, 0x401000, 0x401020 };
	static const uint32_t in[] = { FMT_NONE, 0, FMT_NONE };
	for (i = 0; i < 3; i++) {
		ix_imap *m = ix_vec_push(&img->imap);
		m->addr = ia[i];
		m->node = in[i];
	}
	static const uint64_t ra[] = { 0x3ffff0, 0x401000 + 0x10, 0x401020 };
	for (i = 0; i < 3; i++) {
		ix_row *r = ix_vec_push(&img->rows);
		r->addr = ra[i];
		r->file = i == 2 ? FMT_NONE : 0;
		r->line = (uint32_t)(10 + i);
	}
}

/* Write the plan to a temp file and read it back into memory. */
static uint8_t *write_and_read(const ix_output *out, uint64_t *size)
{
	char path[] = "/tmp/symdb-test-writer-XXXXXX";
	int fd = mkstemp(path);
	uint8_t *buf = NULL;

	if (fd < 0)
		return NULL;
	unlink(path);
	if (fmt_wplan_write(&out->plan, fd) == 0) {
		off_t n = lseek(fd, 0, SEEK_END);

		buf = malloc((size_t)n);
		if (buf && pread(fd, buf, (size_t)n, 0) == n)
			*size = (uint64_t)n;
	}
	close(fd);
	return buf;
}

static void test_tables(int far, int dwarf)
{
	ix_image img;
	ix_output *out = calloc(1, sizeof *out);
	char err[256] = "";
	fmt_view v;
	uint64_t size = 0;
	uint8_t *buf;

	make_image(&img, far, dwarf);
	CHECK_RC(ix_tables_build(&img, out, err, sizeof err));
	CHECK(out->address_size == (far ? 8u : 4u));
	/* four aliases at 0x401000 reduce to the last of the largest size */
	CHECK(out->nsymbols == (far ? 3u : 2u));
	buf = write_and_read(out, &size);
	CHECK(buf && size == out->plan.file_size);
	if (!buf)
		goto done;
	CHECK_RC(fmt_view_parse(buf, size, &v, err, sizeof err));
	if (err[0])
		fprintf(stderr, "parse: %s\n", err);
	CHECK_RC(fmt_view_check_sums(&v, err, sizeof err));
	CHECK_RC(fmt_view_check_padding(&v, err, sizeof err));
	CHECK(v.address_size == out->address_size && v.base_address == 0x400000);
	CHECK(v.has_dwarf == dwarf && ((v.flags & FMT_FLAG_HAS_DWARF) != 0) == dwarf);
	CHECK(v.t[FMT_T_BUILD_INFO].p && (v.t[FMT_T_BUILD_INFO].flags & FMT_TABLE_OPTIONAL));
	const fmt_table *sa = &v.t[FMT_T_SYMBOL_ADDRS], *sy = &v.t[FMT_T_SYMBOLS];
	CHECK(sa->count == out->nsymbols && sy->count == out->nsymbols);
	if (sa->count >= 2) {
		const char *strs = (const char *)v.t[FMT_T_STRINGS].p;

		CHECK(fmt_be_addr(sa->p, v.address_size, 0) == 0x1000);
		CHECK(fmt_be64(sy->p + FMT_SYM_LENGTH) == 0x20);
		CHECK(strcmp(strs + fmt_be32(sy->p + FMT_SYM_NAME), "f_big_later") == 0);
		CHECK(fmt_be_addr(sa->p, v.address_size, 1) == 0x1100);
		CHECK(strcmp(strs + fmt_be32(v.base + FMT_H_IMAGE_NAME), "a.out") == 0);
	}
	if (dwarf) {
		const fmt_table *ia = &v.t[FMT_T_INLINE_ADDRS], *la = &v.t[FMT_T_LINE_ADDRS];

		/* [0x3ff000, 0x401000) maps to NONE and starts below the base: it
		 * is clipped to start at the base; the line row at 0x3ffff0 too */
		CHECK(v.t[FMT_T_INLINE_MAP].count == 3 && v.t[FMT_T_LINE_ROWS].count == 3);
		CHECK(ia->count == 1 && fmt_be64(ia->p + FMT_BLK_FIRST) == 0);
		CHECK(la->count == 1 && fmt_be64(la->p + FMT_BLK_FIRST) == 0);
		const fmt_table *nd = &v.t[FMT_T_INLINE_NODES];
		fmt_packed pk;
		const char *why;
		CHECK(fmt_packed_parse(nd->p, nd->length, nd->count, FMT_PN_COUNT, FMT_PN_WIDE, &pk,
		                       &why) == 0 &&
		      fmt_packed_get(&pk, 0, FMT_PN_LOW_PC) == 0x1000);
	} else {
		for (unsigned k = FMT_T_FILES; k <= FMT_T_LINE_ROWS; k++)
			CHECK(v.t[k].p == NULL);
	}
	free(buf);
done:
	ix_output_free(out);
	free(out);
	ix_image_free(&img);
}

static void test_bad_model(void)
{
	ix_image img;
	ix_output *out = calloc(1, sizeof *out);
	char err[256] = "";

	make_image(&img, 0, 1);
	IX_AT(&img.nodes, ix_node, 0).parent = 0; /* parent must be < own index */
	CHECK(ix_tables_build(&img, out, err, sizeof err) == SYMDB_E_INVAL);
	CHECK(strstr(err, "INLINE_NODES") != NULL);
	ix_output_free(out);
	ix_image_free(&img);
	memset(out, 0, sizeof *out);
	make_image(&img, 0, 1);
	IX_AT(&img.rows, ix_row, 2).file = 0; /* no NONE sentinel */
	CHECK(ix_tables_build(&img, out, err, sizeof err) == SYMDB_E_INVAL);
	ix_output_free(out);
	ix_image_free(&img);
	free(out);
}

static void test_plan_checks(void)
{
	static const uint8_t strs[] = { 0, 'a', 0 }, nonul[] = { 0, 'a' };
	uint8_t rec[64] = { 0 };
	fmt_whdr h;
	fmt_wtable t[FMT_MAX_TABLES + 1];
	fmt_wplan *p = calloc(1, sizeof *p);
	char err[256];
	int fd;

	memset(&h, 0, sizeof h);
	h.address_size = 4;
	h.uuid_len = 1;
	memset(t, 0, sizeof t);
	t[0] = (fmt_wtable){ FMT_T_STRINGS, 0, strs, 3, 3 };
	t[1] = (fmt_wtable){ FMT_T_SEGMENTS, 0, rec, FMT_SEG_SIZE, 1 };
	CHECK(fmt_wplan_build(p, &h, t, 2, err, sizeof err) == 0);
	/* strings first in kind order even when given second */
	CHECK(p->t[0].kind == FMT_T_STRINGS && p->offset[0] == 128 + 2 * 40);
	CHECK(p->offset[1] % 8 == 0 && p->file_size == p->offset[1] + FMT_SEG_SIZE);
	fd = open("/dev/full", O_WRONLY);
	if (fd >= 0) {
		CHECK(fmt_wplan_write(p, fd) == -ENOSPC);
		close(fd);
	}
	t[1] = (fmt_wtable){ FMT_T_STRINGS, 0, strs, 3, 3 };
	CHECK(fmt_wplan_build(p, &h, t, 2, err, sizeof err) == SYMDB_E_INVAL);
	t[1] = (fmt_wtable){ FMT_T_SEGMENTS, 0, rec, FMT_SEG_SIZE + 1, 1 };
	CHECK(fmt_wplan_build(p, &h, t, 2, err, sizeof err) == SYMDB_E_INVAL);
	t[1] = (fmt_wtable){ 40, 0, rec, 8, 1 }; /* unknown and required */
	CHECK(fmt_wplan_build(p, &h, t, 2, err, sizeof err) == SYMDB_E_INVAL);
	t[1] = (fmt_wtable){ 40, FMT_TABLE_OPTIONAL, rec, 8, 8 };
	CHECK(fmt_wplan_build(p, &h, t, 2, err, sizeof err) == 0);
	t[0] = (fmt_wtable){ FMT_T_STRINGS, 0, nonul, 2, 2 };
	CHECK(fmt_wplan_build(p, &h, t, 1, err, sizeof err) == SYMDB_E_INVAL);
	t[0] = (fmt_wtable){ FMT_T_STRINGS, 0, strs, 3, 3 };
	h.address_size = 3;
	CHECK(fmt_wplan_build(p, &h, t, 1, err, sizeof err) == SYMDB_E_INVAL);
	h.address_size = 8;
	h.uuid_len = 33;
	CHECK(fmt_wplan_build(p, &h, t, 1, err, sizeof err) == SYMDB_E_INVAL);
	h.uuid_len = 1;
	CHECK(fmt_wplan_build(p, &h, t, FMT_MAX_TABLES + 1, err, sizeof err) == SYMDB_E_TOO_BIG);
	free(p);
}

int main(void)
{
	test_vec_and_strings();
	test_tables(0, 0);
	test_tables(1, 0);
	test_tables(0, 1);
	test_tables(1, 1);
	test_bad_model();
	test_plan_checks();
	return check_exit();
}
