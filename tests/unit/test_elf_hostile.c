/* SPDX-License-Identifier: MIT */
/*
 * test_elf_hostile.c - ix_elf.c against hostile input.  The test writes a
 * small ELF image itself (ELF64 little-endian and ELF32 big-endian: header,
 * one PT_LOAD, .text, .symtab, .strtab, .shstrtab), checks what the loader
 * makes of it, then runs a fixed-seed mutation sweep: random byte changes
 * (biased to the headers) and truncations.  Every mutant must be either
 * rejected with a one-line reason naming the file, or accepted and turned
 * into an index file that format_header.c's validator accepts, checksums and
 * padding included.  Run under -fsanitize=address,undefined this is also
 * the "never read outside the file" check.
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

#define SEED 20261122u
#define ITERATIONS 3000

struct fx {
	int is64, be;
	uint8_t b[2048];
	size_t n;
};

static void put(struct fx *f, size_t off, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++) {
		unsigned shift = 8 * (f->be ? size - 1 - i : i);

		f->b[off + i] = (uint8_t)(v >> shift);
	}
}

/* Class-dependent field: 4 bytes in ELF32, 8 in ELF64. */
static void putw(struct fx *f, size_t off, uint64_t v)
{
	put(f, off, v, f->is64 ? 8 : 4);
}

static const char strtab[] = "\0alpha\0beta\0gamma";
static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";

static void fx_sym(struct fx *f, size_t off, uint32_t name, uint64_t value, uint64_t size,
                   uint8_t info, uint16_t shndx)
{
	put(f, off, name, 4);
	if (f->is64) {
		f->b[off + 4] = info;
		put(f, off + 6, shndx, 2);
		put(f, off + 8, value, 8);
		put(f, off + 16, size, 8);
	} else {
		put(f, off + 4, value, 4);
		put(f, off + 8, size, 4);
		f->b[off + 12] = info;
		put(f, off + 14, shndx, 2);
	}
}

static void fx_shdr(struct fx *f, size_t off, uint32_t name, uint32_t type, uint64_t addr,
                    uint64_t offset, uint64_t size, uint32_t link, uint64_t entsize)
{
	unsigned w = f->is64 ? 8 : 4;

	put(f, off, name, 4);
	put(f, off + 4, type, 4);
	putw(f, off + 8 + w, addr);
	putw(f, off + 8 + 2 * w, offset);
	putw(f, off + 8 + 3 * w, size);
	put(f, off + 8 + 4 * w, link, 4);
	putw(f, off + 16 + 5 * w, entsize);
}

static void fx_build(struct fx *f, int is64, int be)
{
	size_t eh = is64 ? 64 : 52, ph = is64 ? 56 : 32, se = is64 ? 24 : 16;
	size_t sh = is64 ? 64 : 40, sym = eh + ph, str = sym + 4 * se;
	size_t shs = str + sizeof strtab, shoff = (shs + sizeof shstr + 7) & ~(size_t)7;

	memset(f, 0, sizeof *f);
	f->is64 = is64;
	f->be = be;
	f->n = shoff + 5 * sh;
	memcpy(f->b, "\x7f" "ELF", 4);
	f->b[4] = is64 ? 2 : 1;
	f->b[5] = be ? 2 : 1;
	f->b[6] = 1;
	put(f, 16, 2, 2);                     /* ET_EXEC */
	put(f, 18, is64 ? 62 : 20, 2);        /* EM_X86_64 / EM_PPC */
	put(f, 20, 1, 4);
	putw(f, 24, 0x401000);                /* e_entry */
	putw(f, is64 ? 32 : 28, eh);          /* e_phoff */
	putw(f, is64 ? 40 : 32, shoff);       /* e_shoff */
	put(f, is64 ? 52 : 40, eh, 2);
	put(f, is64 ? 54 : 42, ph, 2);
	put(f, is64 ? 56 : 44, 1, 2);
	put(f, is64 ? 58 : 46, sh, 2);
	put(f, is64 ? 60 : 48, 5, 2);
	put(f, is64 ? 62 : 50, 4, 2);
	/* PT_LOAD covering the whole file at 0x400000, R+X */
	put(f, eh, 1, 4);
	if (is64) {
		put(f, eh + 4, 5, 4);
		put(f, eh + 16, 0x400000, 8);
		put(f, eh + 32, f->n, 8);
		put(f, eh + 40, 0x2000, 8);
	} else {
		put(f, eh + 8, 0x400000, 4);
		put(f, eh + 16, f->n, 4);
		put(f, eh + 20, 0x2000, 4);
		put(f, eh + 24, 5, 4);
	}
	fx_sym(f, sym + se, 1, 0x401000, 16, 0x12, 1);  /* alpha: GLOBAL FUNC */
	fx_sym(f, sym + 2 * se, 7, 0x401010, 8, 0x11, 1); /* beta: GLOBAL OBJECT */
	fx_sym(f, sym + 3 * se, 12, 0x401020, 0, 0x00, 1); /* gamma: LOCAL NOTYPE */
	memcpy(f->b + str, strtab, sizeof strtab);
	memcpy(f->b + shs, shstr, sizeof shstr);
	fx_shdr(f, shoff + sh, 1, 1, 0x401000, 0, 0x100, 0, 0);
	fx_shdr(f, shoff + 2 * sh, 7, 2, 0, sym, 4 * se, 3, se);
	fx_shdr(f, shoff + 3 * sh, 15, 3, 0, str, sizeof strtab, 0, 0);
	fx_shdr(f, shoff + 4 * sh, 23, 3, 0, shs, sizeof shstr, 0, 0);
}

static int write_tmp(const uint8_t *p, size_t n, char *path)
{
	int fd;

	strcpy(path, "/tmp/symdb-test-elf-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, p, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Load, emit, write and validate.  Returns 1 accepted, 0 rejected, -1 a
 * broken contract (message printed). */
static int run_one(const uint8_t *p, size_t n, ix_image *img)
{
	char path[64], err[512] = "", tmpl[] = "/tmp/symdb-test-elfout-XXXXXX";
	ix_output *out = calloc(1, sizeof *out);
	uint8_t *file = NULL;
	fmt_view v;
	int rc, fd, ret = -1;
	off_t sz;

	if (!out || write_tmp(p, n, path) < 0)
		goto done;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	rc = ix_elf_load(img, fd, path, err, sizeof err);
	if (fd >= 0)
		close(fd);
	if (rc) {
		ret = strncmp(err, path, strlen(path)) == 0 && !strchr(err, '\n') ? 0 : -1;
		if (ret < 0)
			fprintf(stderr, "bad reason for rc %d: '%s'\n", rc, err);
		goto done;
	}
	img->uuid.len = 1;
	img->uuid.kind = FMT_UUID_GNU_BUILD_ID;
	if (ix_tables_build(img, out, err, sizeof err) != 0) {
		ret = 0; /* e.g. nothing to emit is fine as a clean rejection */
		goto done;
	}
	fd = mkstemp(tmpl);
	if (fd < 0)
		goto done;
	unlink(tmpl);
	if (fmt_wplan_write(&out->plan, fd) == 0 && (sz = lseek(fd, 0, SEEK_END)) > 0 &&
	    (file = malloc((size_t)sz)) && pread(fd, file, (size_t)sz, 0) == sz &&
	    fmt_view_parse(file, (uint64_t)sz, &v, err, sizeof err) == 0 &&
	    fmt_view_check_sums(&v, err, sizeof err) == 0 &&
	    fmt_view_check_padding(&v, err, sizeof err) == 0)
		ret = 1;
	else
		fprintf(stderr, "accepted input gave an invalid index: %s\n", err);
	close(fd);
done:
	if (path[0])
		unlink(path);
	free(file);
	ix_output_free(out);
	free(out);
	return ret;
}

static void check_model(struct fx *f)
{
	ix_image img;
	const char *s;
	size_t len;

	CHECK(ix_image_init(&img) == 0);
	CHECK(run_one(f->b, f->n, &img) == 1);
	s = (const char *)ix_str_bytes(img.strings, &len);
	CHECK(img.base_address == 0x400000 && img.segments.n == 1);
	CHECK(img.object_class == (f->is64 ? 64 : 32) && img.object_endian == (f->be ? 2 : 1));
	CHECK(img.symbols.n == 3);
	if (img.symbols.n == 3) {
		const ix_symbol *y = img.symbols.p; /* sorted by ix_tables_build */

		CHECK(strcmp(s + y[0].name, "alpha") == 0 && y[0].size == 16 &&
		      y[0].flags == FMT_SYMF_FUNC);
		CHECK(strcmp(s + y[1].name, "beta") == 0 && y[1].flags == FMT_SYMF_OBJECT);
		CHECK(strcmp(s + y[2].name, "gamma") == 0 &&
		      y[2].flags == (FMT_SYMF_NOTYPE | FMT_SYMF_LOCAL));
	}
	ix_image_free(&img);
}

static void sweep(const struct fx *f, unsigned seed)
{
	uint8_t m[sizeof f->b];
	unsigned accepted = 0, rejected = 0, broken = 0, seed0 = seed;

	for (int it = 0; it < ITERATIONS; it++) {
		ix_image img;
		size_t n = f->n;
		int k = 1 + (int)(rand_r(&seed) % 4), r;

		memcpy(m, f->b, f->n);
		while (k--) {
			size_t pos = rand_r(&seed) % 2 ? (size_t)(rand_r(&seed) % 64) : rand_r(&seed) % f->n;

			m[pos] = (uint8_t)rand_r(&seed);
		}
		if (rand_r(&seed) % 8 == 0)
			n = rand_r(&seed) % f->n;
		if (ix_image_init(&img) < 0)
			break;
		r = run_one(m, n, &img);
		ix_image_free(&img);
		accepted += r == 1;
		rejected += r == 0;
		broken += r < 0;
	}
	printf("ELF%d %s: %u mutants accepted, %u rejected, %u broken (seed %u)\n",
	       f->is64 ? 64 : 32, f->be ? "BE" : "LE", accepted, rejected, broken, seed0);
	CHECK(broken == 0);
	CHECK(accepted > 0 && rejected > 0);
}

int main(void)
{
	static struct fx f;

	fx_build(&f, 1, 0);
	check_model(&f);
	sweep(&f, SEED);
	fx_build(&f, 0, 1);
	check_model(&f);
	sweep(&f, SEED + 1);
	return check_exit();
}
