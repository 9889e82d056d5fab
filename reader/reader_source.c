/* SPDX-License-Identifier: MIT */
/*
 * reader_source.c - symdb_image_file_source(): embedded source by file
 * (SPEC §7.3.1).  FILE_SOURCES is keyed by the string reference of a FILES
 * record's Path, and a frame's file points at that string in the mapping, so
 * the pointer's offset in the pool is the key: a binary search, no
 * allocation, no string comparison.  A damaged table (unsorted, references
 * past the pool) can only make the search miss or find another string of
 * the pool: every string of the pool ends inside it (SPEC §8).
 */
#include <stdint.h>
#include <string.h>

#include "reader_internal.h"
#include "symdb_endian.h"

int symdb_image_file_source(const symdb_image *img, const char *file, const char **text,
                            size_t *len)
{
	if (!img || !file || !text)
		return SYMDB_E_INVAL;
	uintptr_t p = (uintptr_t)file, b = (uintptr_t)img->strs;
	if (!img->fsrcs || !img->strs || p < b || p - b >= img->nstrs)
		return 0;
	uint32_t key = (uint32_t)(p - b);
	uint64_t lo = 0, hi = img->nfsrcs;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const uint8_t *r = img->fsrcs + mid * FMT_FSRC_SIZE;
		uint32_t k = fmt_be32(r + FMT_FSRC_PATH);
		if (k < key) {
			lo = mid + 1;
		} else if (k > key) {
			hi = mid;
		} else {
			uint32_t s = fmt_be32(r + FMT_FSRC_SOURCE);
			if (s >= img->nstrs)
				return 0;
			*text = (const char *)img->strs + s;
			if (len)
				*len = strlen(*text);
			return 1;
		}
	}
	return 0;
}
