/* SPDX-License-Identifier: MIT */
/*
 * symdb_endian.h - big-endian loads and stores (SPEC §3: every integer in a
 * symdb file and in a catalog key or value is big-endian).
 *
 * Access goes through memcpy so that unaligned and aliasing-unsafe reads are
 * well defined; compilers turn the memcpy plus bswap into a single load
 * instruction (zstd's MEM_readBE32 makes the same trade).  Never cast a struct
 * over the mapping.
 */
#ifndef SYMDB_ENDIAN_H
#define SYMDB_ENDIAN_H

#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define FMT_HOST_BE 1
#else
#define FMT_HOST_BE 0
#endif

static inline uint16_t fmt_bswap16(uint16_t v) { return (uint16_t)((v >> 8) | (v << 8)); }
static inline uint32_t fmt_bswap32(uint32_t v) { return __builtin_bswap32(v); }
static inline uint64_t fmt_bswap64(uint64_t v) { return __builtin_bswap64(v); }

static inline uint16_t fmt_be16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof v);
	return FMT_HOST_BE ? v : fmt_bswap16(v);
}

static inline uint32_t fmt_be32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return FMT_HOST_BE ? v : fmt_bswap32(v);
}

static inline uint64_t fmt_be64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return FMT_HOST_BE ? v : fmt_bswap64(v);
}

static inline void fmt_put16(void *p, uint16_t v)
{
	v = FMT_HOST_BE ? v : fmt_bswap16(v);
	memcpy(p, &v, sizeof v);
}

static inline void fmt_put32(void *p, uint32_t v)
{
	v = FMT_HOST_BE ? v : fmt_bswap32(v);
	memcpy(p, &v, sizeof v);
}

static inline void fmt_put64(void *p, uint64_t v)
{
	v = FMT_HOST_BE ? v : fmt_bswap64(v);
	memcpy(p, &v, sizeof v);
}

/* An address column entry: Address_Size (4 or 8) bytes wide (SPEC §5). */
static inline uint64_t fmt_be_addr(const uint8_t *col, unsigned width, uint64_t i)
{
	return width == 4 ? fmt_be32(col + 4 * i) : fmt_be64(col + 8 * i);
}

static inline void fmt_put_addr(uint8_t *col, unsigned width, uint64_t i, uint64_t v)
{
	if (width == 4)
		fmt_put32(col + 4 * i, (uint32_t)v);
	else
		fmt_put64(col + 8 * i, v);
}

#endif /* SYMDB_ENDIAN_H */
