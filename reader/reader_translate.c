/* SPDX-License-Identifier: MIT */
/*
 * reader_translate.c - symdb_image_translate(): turn the address conventions
 * of SPEC §10 (offset from the image base, ELF file offset, runtime address
 * plus load address) into the virtual addresses that symdb_resolve_batch()
 * takes.  Anything that maps nowhere becomes SYMDB_ADDR_INVALID, which
 * resolves to "not found".
 */
#include "reader_internal.h"
#include "symdb_endian.h"

/* SPEC §10.3: the first SEGMENTS record, in table order, whose file range
 * holds `off`. */
static uint64_t from_fileoff(const symdb_image *img, uint64_t off)
{
	uint64_t i;

	for (i = 0; i < img->nsegs; i++) {
		const uint8_t *s = img->segs + i * FMT_SEG_SIZE;
		uint64_t fo = fmt_be64(s + FMT_SEG_FILEOFF), fs = fmt_be64(s + FMT_SEG_FILESZ);
		if (off >= fo && off - fo < fs)
			return off - fo + fmt_be64(s + FMT_SEG_VADDR);
	}
	return SYMDB_ADDR_INVALID;
}

static uint64_t translate_one(const symdb_image *img, enum symdb_addr_kind kind, uint64_t load,
                              uint64_t a)
{
	if (a == SYMDB_ADDR_INVALID)
		return a;
	switch (kind) {
	case SYMDB_ADDR_VADDR: return a;
	case SYMDB_ADDR_OFFSET:
		return a > UINT64_MAX - 1 - img->base ? SYMDB_ADDR_INVALID : a + img->base;
	case SYMDB_ADDR_FILEOFF: return from_fileoff(img, a);
	case SYMDB_ADDR_RUNTIME:
		if (a < load || a - load > UINT64_MAX - 1 - img->base)
			return SYMDB_ADDR_INVALID;
		return a - load + img->base;
	}
	return SYMDB_ADDR_INVALID;
}

int symdb_image_translate(const symdb_image *img, enum symdb_addr_kind kind, uint64_t load_address,
                          const uint64_t *in, uint64_t *out, size_t n)
{
	size_t i;

	if (!img || (n && (!in || !out)))
		return SYMDB_E_INVAL;
	if (kind != SYMDB_ADDR_VADDR && kind != SYMDB_ADDR_OFFSET && kind != SYMDB_ADDR_FILEOFF &&
	    kind != SYMDB_ADDR_RUNTIME)
		return SYMDB_E_INVAL;
	for (i = 0; i < n; i++)
		out[i] = translate_one(img, kind, load_address, in[i]);
	return 0;
}
