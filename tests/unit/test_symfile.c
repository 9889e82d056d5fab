/* SPDX-License-Identifier: MIT */
/*
 * test_symfile.c - unit tests of the STT_FILE fallback (SPEC §7.2.1, §11
 * step 6), end to end: ix_elf.c records the STT_FILE name in force for each
 * local symbol of this test program (crtstuff.c for the CRT's helpers, this
 * file for a static function, nothing for globals or for locals after the
 * linker's empty STT_FILE); ix_tables.c keeps each survivor's own name through
 * the alias reduction and writes SYMBOL_FILES only when a name exists; the
 * reader gives an outermost frame without a file that name (and only then),
 * rejects a table whose Count differs from SYMBOLS, and turns a reference past
 * the string pool into SYMDB_E_CORRUPT for that address and a verify error.
 * The reader half uses rd_synth.h, independent of the writer.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "format_header.h"
#include "ix_emit.h"
#include "rd_synth.h"
#include "symdb.h"
#include "symdb_build.h"

static const char *self;

/* A local function of this file: its STT_FILE is this file's. */
__attribute__((noinline, used)) static int symfile_probe(int x)
{
	return x * 7 + 3;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* ---- ix_elf.c on this executable ---------------------------------------- */

static const ix_symbol *find_sym(const ix_image *img, const char *strs, const char *name)
{
	size_t i;

	for (i = 0; i < img->symbols.n; i++)
		if (!strcmp(strs + IX_AT(&img->symbols, ix_symbol, i).name, name))
			return &IX_AT(&img->symbols, ix_symbol, i);
	return NULL;
}

static void test_elf_self(uint64_t *crt_addr)
{
	ix_image img;
	char err[512] = "";
	const ix_symbol *s;
	const char *strs;
	size_t len;

	*crt_addr = 0;
	CHECK(ix_image_init(&img) == 0);
	{
		int sfd = open(self, O_RDONLY | O_CLOEXEC);
		CHECK(sfd >= 0);
		CHECK_RC(ix_elf_load(&img, sfd, self, err, sizeof err));
		close(sfd);
	}
	strs = (const char *)ix_str_bytes(img.strings, &len);
	s = find_sym(&img, strs, "symfile_probe");
	CHECK(s && (s->flags & FMT_SYMF_LOCAL) && s->file && ends_with(strs + s->file, "test_symfile.c"));
	s = find_sym(&img, strs, "main");
	CHECK(s && !(s->flags & FMT_SYMF_LOCAL) && s->file == 0);
	/* GCC's crtstuff.c helpers (absent with other toolchains) */
	s = find_sym(&img, strs, "deregister_tm_clones");
	if (s) {
		CHECK(s->file && strcmp(strs + s->file, "crtstuff.c") == 0);
		*crt_addr = s->addr;
	}
	/* the linker's own locals follow an STT_FILE with an empty name */
	s = find_sym(&img, strs, "_DYNAMIC");
	if (s && (s->flags & FMT_SYMF_LOCAL))
		CHECK(s->file == 0);
	ix_image_free(&img);
	(void)symfile_probe(1);
}

/* ---- ix_tables.c: reduction and emission -------------------------------- */

static void make_image(ix_image *img, int with_files)
{
	static const struct { uint64_t addr, size; const char *name, *file; } syms[] = {
		/* aliases: the last of the largest size wins, with its own file */
		{ 0x401000, 8, "local_a", "a.c" }, { 0x401000, 8, "global_a", NULL },
		{ 0x401100, 4, "local_b", "b.S" }, { 0x401100, 2, "alias_b", "other.c" },
		{ 0x401200, 4, "global_c", NULL },
	};
	ix_segment *sg;
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
	memcpy(img->uuid.bytes, "\x05\x06\x07\x08", 4);
	img->image_name = ix_str_addz(img->strings, "a.out");
	sg = ix_vec_push(&img->segments);
	sg->vaddr = 0x400000;
	sg->memsz = sg->filesz = 0x2000;
	sg->flags = FMT_SEGF_R | FMT_SEGF_X;
	for (i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		y = ix_vec_push(&img->symbols);
		y->addr = syms[i].addr;
		y->size = syms[i].size;
		y->name = ix_str_addz(img->strings, syms[i].name);
		y->flags = FMT_SYMF_FUNC | (syms[i].file ? FMT_SYMF_LOCAL : 0);
		y->order = i + 1;
		if (with_files && syms[i].file)
			y->file = ix_str_addz(img->strings, syms[i].file);
	}
}

static uint8_t *encode(ix_image *img, ix_output *out, uint64_t *size)
{
	char path[] = "/tmp/symdb-test-symfile-XXXXXX", err[256] = "";
	int fd;
	uint8_t *buf = NULL;

	CHECK_RC(ix_tables_build(img, out, err, sizeof err));
	fd = mkstemp(path);
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

static void test_tables(int with_files)
{
	ix_image img;
	ix_output *out = calloc(1, sizeof *out);
	char err[256] = "";
	uint64_t size = 0;
	uint8_t *buf;
	fmt_view v;

	make_image(&img, with_files);
	buf = encode(&img, out, &size);
	CHECK(buf != NULL);
	if (!buf)
		goto done;
	CHECK_RC(fmt_view_parse(buf, size, &v, err, sizeof err));
	CHECK(v.version_major == FMT_VERSION_MAJOR && v.version_minor == FMT_VERSION_MINOR);
	CHECK(v.t[FMT_T_SYMBOLS].count == 3);
	if (!with_files) {
		CHECK(v.t[FMT_T_SYMBOL_FILES].p == NULL);
		goto done;
	}
	const fmt_table *t = &v.t[FMT_T_SYMBOL_FILES];
	const char *strs = (const char *)v.t[FMT_T_STRINGS].p;
	CHECK(t->p && t->count == 3 && t->record_size == FMT_SYMFILE_SIZE &&
	      (t->flags & FMT_TABLE_OPTIONAL));
	if (t->p && t->count == 3) {
		CHECK(fmt_be32(t->p) == 0);                         /* global_a won */
		CHECK(!strcmp(strs + fmt_be32(t->p + 4), "b.S"));  /* local_b, the larger */
		CHECK(fmt_be32(t->p + 8) == 0);                     /* global_c */
	}
done:
	free(buf);
	ix_output_free(out);
	free(out);
	ix_image_free(&img);
}

/* ---- the reader on synthetic files --------------------------------------- */

#define BASE 0x1000u

struct synth {
	synth_buf strs, segs, saddr, syms, sfiles;
	synth_buf files, fns, iaddr, imap, nodes, laddr, rows;
};

static void sym(struct synth *s, uint32_t off, uint64_t size, const char *name, uint32_t file)
{
	fmt_put32(synth_grow(&s->saddr, 4), off);
	uint8_t *r = synth_grow(&s->syms, FMT_SYM_SIZE);
	fmt_put64(r + FMT_SYM_LENGTH, size);
	fmt_put32(r + FMT_SYM_NAME, synth_str(&s->strs, name));
	fmt_put32(synth_grow(&s->sfiles, 4), file);
}

static void row(struct synth *s, uint32_t off, uint32_t file, uint32_t line)
{
	fmt_put32(synth_grow(&s->laddr, 4), off);
	uint8_t *r = synth_grow(&s->rows, FMT_ROW_SIZE);
	fmt_put32(r + FMT_ROW_FILE, file);
	fmt_put32(r + FMT_ROW_LINE, line);
}

#define TBL(k, rs, b, fl) { (k), (fl), (rs), (b).p, (b).n, (rs) ? (b).n / (rs) : (b).n }

/* Symbols: 0x100 local_a (crtstuff.c), 0x200 global_b (none), 0x300 local_c
 * (asm.S; a line row covers 0x300..0x310), 0x400 bad (reference past the
 * pool).  sfiles_count overrides SYMBOL_FILES' Count (0: keep). */
static symdb_image *open_synth(int with_table, uint64_t sfiles_count, char *eb, size_t ebsz,
                               int *rc)
{
	struct synth s;
	synth_hdr h;
	uint32_t crt, asmf;
	size_t len;
	uint8_t *f;
	char path[256];
	symdb_image *img = NULL;
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = eb, .errbuf_sz = ebsz);

	memset(&s, 0, sizeof s);
	memset(&h, 0, sizeof h);
	synth_str(&s.strs, "");
	h.image_name = synth_str(&s.strs, "img");
	crt = synth_str(&s.strs, "crtstuff.c");
	asmf = synth_str(&s.strs, "asm.S");
	uint32_t path_c = synth_str(&s.strs, "/src/c.c");
	sym(&s, 0x100, 0x10, "local_a", crt);
	sym(&s, 0x200, 0x10, "global_b", 0);
	sym(&s, 0x300, 0x20, "local_c", asmf);
	sym(&s, 0x400, 0x10, "bad", 0x7FFFFFF0u);
	uint8_t *r = synth_grow(&s.segs, FMT_SEG_SIZE);
	fmt_put64(r + FMT_SEG_VADDR, BASE);
	fmt_put64(r + FMT_SEG_MEMSZ, 0x1000);
	fmt_put64(r + FMT_SEG_FILESZ, 0x1000);
	fmt_put32(r + FMT_SEG_FLAGS, FMT_SEGF_R | FMT_SEGF_X);
	/* DWARF: one file, no functions, one empty inline interval, one row */
	r = synth_grow(&s.files, FMT_FILE_SIZE);
	fmt_put32(r + FMT_FILE_PATH, path_c);
	fmt_put32(r + FMT_FILE_RELATIVE, path_c + 5);
	fmt_put32(r + FMT_FILE_BASE, path_c + 5);
	fmt_put32(synth_grow(&s.iaddr, 4), 0);
	fmt_put32(synth_grow(&s.imap, 4), FMT_NONE);
	row(&s, 0x300, 0, 7);
	row(&s, 0x310, FMT_NONE, 0);
	h.flags = FMT_FLAG_HAS_DWARF;
	h.address_size = 4;
	h.uuid_len = 4;
	memcpy(h.uuid, "\x0a\x0b\x0c\x0d", 4);
	h.base_address = BASE;
	synth_table t[] = {
		TBL(FMT_T_STRINGS, 0, s.strs, 0),         TBL(FMT_T_SEGMENTS, FMT_SEG_SIZE, s.segs, 0),
		TBL(FMT_T_SYMBOL_ADDRS, 4, s.saddr, 0),   TBL(FMT_T_SYMBOLS, FMT_SYM_SIZE, s.syms, 0),
		TBL(FMT_T_FILES, FMT_FILE_SIZE, s.files, 0), TBL(FMT_T_FUNCTIONS, FMT_FN_SIZE, s.fns, 0),
		TBL(FMT_T_INLINE_ADDRS, 4, s.iaddr, 0),   TBL(FMT_T_INLINE_MAP, 4, s.imap, 0),
		TBL(FMT_T_INLINE_NODES, FMT_NODE_SIZE, s.nodes, 0),
		TBL(FMT_T_LINE_ADDRS, 4, s.laddr, 0),     TBL(FMT_T_LINE_ROWS, FMT_ROW_SIZE, s.rows, 0),
		TBL(FMT_T_SYMBOL_FILES, 4, s.sfiles, FMT_TABLE_OPTIONAL),
	};
	unsigned nt = sizeof t / sizeof t[0] - (with_table ? 0 : 1);
	if (sfiles_count) { /* a shorter table over the same bytes */
		t[nt - 1].count = sfiles_count;
		t[nt - 1].length = sfiles_count * 4;
	}
	f = synth_file(&h, t, nt, &len);
	*rc = -1;
	if (synth_write_tmp(f, len, path, sizeof path) == 0) {
		*rc = symdb_image_open_file(path, &o, &img);
		unlink(path);
	}
	free(f);
	free(s.strs.p); free(s.segs.p); free(s.saddr.p); free(s.syms.p); free(s.sfiles.p);
	free(s.files.p); free(s.fns.p); free(s.iaddr.p); free(s.imap.p); free(s.nodes.p);
	free(s.laddr.p); free(s.rows.p);
	return img;
}

static void test_reader(void)
{
	static const uint64_t a[] = { BASE + 0x105, BASE + 0x205, BASE + 0x305, BASE + 0x318,
	                              BASE + 0x405 };
	symdb_frame fr[16];
	symdb_result r[5];
	char eb[256] = "";
	int rc;
	symdb_image *img = open_synth(1, 0, eb, sizeof eb, &rc);

	CHECK(rc == 0 && img);
	if (!img) {
		fprintf(stderr, "open: %s\n", eb);
		return;
	}
	CHECK(symdb_resolve_batch(img, a, 5, fr, 16, sizeof(symdb_frame),
	                          r, sizeof(symdb_result)) == 5);
	/* no DWARF at all: the STT_FILE name, line 0, no HAS_LINE */
	const symdb_frame *f = &fr[r[0].first];
	CHECK(r[0].status == 0 && r[0].count == 1 && !strcmp(f->name, "local_a"));
	CHECK(f->file && !strcmp(f->file, "crtstuff.c") && f->file_rel == f->file);
	CHECK((f->flags & SYMDB_FRAME_FILE_FROM_SYMTAB) && !(f->flags & SYMDB_FRAME_HAS_LINE));
	CHECK(f->line == 0 && f->column == 0);
	/* a symbol without one stays unknown */
	f = &fr[r[1].first];
	CHECK(r[1].status == 0 && r[1].count == 1 && f->file == NULL &&
	      !(f->flags & SYMDB_FRAME_FILE_FROM_SYMTAB));
	/* a line row wins */
	f = &fr[r[2].first];
	CHECK(r[2].status == 0 && f->file && !strcmp(f->file, "/src/c.c") && f->line == 7 &&
	      !(f->flags & SYMDB_FRAME_FILE_FROM_SYMTAB));
	/* past the row, inside the same symbol: the symbol's file */
	f = &fr[r[3].first];
	CHECK(r[3].status == 0 && f->file && !strcmp(f->file, "asm.S") &&
	      (f->flags & SYMDB_FRAME_FILE_FROM_SYMTAB));
	/* a reference past the pool */
	CHECK(r[4].status == SYMDB_E_CORRUPT && r[4].count == 0);
	CHECK(symdb_image_verify(img, EB_OPTS(eb, sizeof eb)) == SYMDB_E_CORRUPT &&
	      strstr(eb, "SYMBOL_FILES") != NULL);
	symdb_image_close(img);

	/* without the table (a 1.0 file): no file */
	img = open_synth(0, 0, eb, sizeof eb, &rc);
	CHECK(rc == 0 && img);
	if (img) {
		CHECK(symdb_resolve_batch(img, a, 5, fr, 16, sizeof(symdb_frame),
		                          r, sizeof(symdb_result)) == 5);
		CHECK(r[0].status == 0 && fr[r[0].first].file == NULL);
		CHECK(r[4].status == 0);
		symdb_image_close(img);
	}

	/* Count must equal SYMBOLS' */
	eb[0] = 0;
	img = open_synth(1, 3, eb, sizeof eb, &rc);
	CHECK(rc == SYMDB_E_CORRUPT && !img && strstr(eb, "SYMBOL_FILES") != NULL);
	symdb_image_close(img);
}

/* ---- indexer to reader, on this executable ------------------------------- */

static void test_end_to_end(uint64_t crt_addr)
{
	char dir[] = "/tmp/symdb-test-symfile-db-XXXXXX", err[512] = "", cmd[128];
	symdb_build_result br;
	symdb_builder *b;
	symdb_image *img = NULL;
	symdb_frame fr[8];
	symdb_result r;
	SYMDB_OPTS(symdb_build_opts, o, .indexer_path = SYMDB_TEST_INDEXER,
	           .errbuf = err, .errbuf_sz = sizeof err);
	SYMDB_OPTS(symdb_open_opts, oo, .errbuf = err, .errbuf_sz = sizeof err);

	if (!crt_addr || !mkdtemp(dir))
		return; /* not a GCC crtstuff.c executable */
	CHECK_RC(symdb_builder_open(dir, &o, &b));
	br.sz = sizeof br;
	CHECK_RC(symdb_builder_add(b, self, &o, &br));
	symdb_builder_close(b);
	CHECK_RC(symdb_image_open_file(br.index_path, &oo, &img));
	if (img) {
		CHECK(symdb_resolve_batch(img, &crt_addr, 1, fr, 8, sizeof(symdb_frame),
		                          &r, sizeof(symdb_result)) == 1);
		CHECK(r.status == 0 && r.count >= 1);
		if (r.count) {
			const symdb_frame *f = &fr[r.first + r.count - 1];
			CHECK(f->file && !strcmp(f->file, "crtstuff.c"));
			CHECK(!strcmp(f->name, "deregister_tm_clones"));
		}
		symdb_image_close(img);
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

int main(int argc, char **argv)
{
	uint64_t crt_addr;

	(void)argc;
	self = argv[0];
	test_elf_self(&crt_addr);
	test_tables(1);
	test_tables(0);
	test_reader();
	test_end_to_end(crt_addr);
	return check_exit();
}
