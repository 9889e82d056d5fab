/* SPDX-License-Identifier: MIT */
/*
 * format_writer.c - lay out and write an index file (SPEC §4-§6, §9).
 *
 * Layout, as symdb 1.0 writes it: the 128-byte header, the directory right
 * after it, then the tables in kind order, each at the next multiple of 8
 * with zero padding in between.  The plan is computed before any byte is
 * written, so the header (which holds File_Size and the Header_Checksum over
 * the directory, which holds every table checksum) is written first and the
 * file is produced in one sequential pass.  Offsets, lengths and sizes are
 * u64 throughout: nothing here has a 4 GiB ceiling.
 */
#include "format_writer.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "format_header.h"
#include "format_io.h"
#include "symdb_errors.h"

static int cmp_kind(const void *a, const void *b)
{
	const fmt_wtable *x = a, *y = b;

	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

static int check_header(const fmt_whdr *h, char *eb, size_t ebsz)
{
	if (h->address_size != 4 && h->address_size != 8)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "Address_Size %u is not 4 or 8",
		               (unsigned)h->address_size);
	if (h->uuid_len == 0 || h->uuid_len > FMT_UUID_MAX)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "UUID_Length %u is not 1..32",
		               (unsigned)h->uuid_len);
	if (h->flags & ~FMT_FLAGS_KNOWN)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "unknown header flags 0x%x",
		               (unsigned)h->flags);
	return 0;
}

static int check_table(const fmt_wtable *t, unsigned address_size, char *eb, size_t ebsz)
{
	int rs = fmt_record_size(t->kind, address_size);

	if (rs < 0 && !(t->flags & FMT_TABLE_OPTIONAL))
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "table kind %u is unknown and required",
		               (unsigned)t->kind);
	if (t->flags & ~FMT_TABLE_FLAGS_KNOWN)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "table %s: unknown flags",
		               fmt_table_name(t->kind));
	if (t->length && !t->data)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "table %s: no data",
		               fmt_table_name(t->kind));
	if (rs > 0 && (t->count > UINT64_MAX / (unsigned)rs || t->count * (unsigned)rs != t->length))
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "table %s: Length %llu != Count %llu x %d",
		               fmt_table_name(t->kind), (unsigned long long)t->length,
		               (unsigned long long)t->count, rs);
	if (t->kind != FMT_T_STRINGS)
		return 0;
	if (t->length != t->count || t->length == 0 || t->data[0] != 0 ||
	    t->data[t->length - 1] != 0)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL,
		               "STRINGS must be non-empty and start and end with NUL");
	if (t->length > 0xFFFFFFFFull)
		return fmt_err(eb, ebsz, SYMDB_E_TOO_BIG, "string pool is over 4 GiB");
	return 0;
}

static void put_header(uint8_t *b, const fmt_whdr *h, unsigned ntables, uint64_t file_size)
{
	memset(b, 0, FMT_HEADER_SIZE);
	memcpy(b + FMT_H_MAGIC, FMT_MAGIC, FMT_MAGIC_LEN);
	fmt_put16(b + FMT_H_VERSION_MAJOR, FMT_VERSION_MAJOR);
	fmt_put16(b + FMT_H_VERSION_MINOR, FMT_VERSION_MINOR);
	fmt_put32(b + FMT_H_HEADER_SIZE, FMT_HEADER_SIZE);
	fmt_put64(b + FMT_H_FILE_SIZE, file_size);
	fmt_put32(b + FMT_H_FLAGS, h->flags);
	b[FMT_H_OBJECT_FORMAT] = h->object_format;
	b[FMT_H_ADDRESS_SIZE] = h->address_size;
	b[FMT_H_UUID_KIND] = h->uuid_kind;
	b[FMT_H_UUID_LENGTH] = h->uuid_len;
	memcpy(b + FMT_H_UUID, h->uuid, h->uuid_len);
	fmt_put32(b + FMT_H_MACHINE, h->machine);
	fmt_put32(b + FMT_H_MACHINE_SUB, h->machine_sub);
	b[FMT_H_OBJECT_CLASS] = h->object_class;
	b[FMT_H_OBJECT_ENDIAN] = h->object_endian;
	fmt_put16(b + FMT_H_OBJECT_TYPE, h->object_type);
	fmt_put32(b + FMT_H_IMAGE_NAME, h->image_name);
	fmt_put64(b + FMT_H_BASE_ADDRESS, h->base_address);
	fmt_put32(b + FMT_H_TABLE_COUNT, ntables);
	fmt_put64(b + FMT_H_DIR_OFFSET, FMT_HEADER_SIZE);
}

static void put_dir_entry(uint8_t *e, const fmt_wtable *t, unsigned address_size,
                          uint64_t offset)
{
	int rs = fmt_record_size(t->kind, address_size);

	fmt_put32(e + FMT_D_KIND, t->kind);
	fmt_put16(e + FMT_D_FLAGS, t->flags);
	fmt_put16(e + FMT_D_RECORD_SIZE, (uint16_t)(rs > 0 ? rs : 0));
	fmt_put64(e + FMT_D_OFFSET, offset);
	fmt_put64(e + FMT_D_LENGTH, t->length);
	fmt_put64(e + FMT_D_COUNT, t->count);
	fmt_put64(e + FMT_D_CHECKSUM, XXH3_64bits(t->data, (size_t)t->length));
}

int fmt_wplan_build(fmt_wplan *p, const fmt_whdr *h, const fmt_wtable *t, unsigned n,
                    char *eb, size_t ebsz)
{
	uint64_t off;
	unsigned i;
	int rc;

	if (n > FMT_MAX_TABLES)
		return fmt_err(eb, ebsz, SYMDB_E_TOO_BIG, "%u tables, at most %u", n,
		               FMT_MAX_TABLES);
	rc = check_header(h, eb, ebsz);
	memset(p, 0, sizeof *p);
	if (n)
		memcpy(p->t, t, n * sizeof *t);
	p->ntables = n;
	qsort(p->t, n, sizeof *p->t, cmp_kind);
	for (i = 0; rc == 0 && i < n; i++) {
		if (i && p->t[i].kind == p->t[i - 1].kind)
			return fmt_err(eb, ebsz, SYMDB_E_INVAL, "table %s given twice",
			               fmt_table_name(p->t[i].kind));
		rc = check_table(&p->t[i], h->address_size, eb, ebsz);
	}
	if (rc)
		return rc;
	p->head_len = FMT_HEADER_SIZE + (uint64_t)n * FMT_DIR_ENTRY_SIZE;
	off = p->head_len;
	for (i = 0; i < n; i++) {
		off = (off + FMT_TABLE_ALIGN - 1) & ~(uint64_t)(FMT_TABLE_ALIGN - 1);
		p->offset[i] = off;
		put_dir_entry(p->head + FMT_HEADER_SIZE + i * FMT_DIR_ENTRY_SIZE, &p->t[i],
		              h->address_size, off);
		off += p->t[i].length;
	}
	p->file_size = off;
	put_header(p->head, h, n, p->file_size);
	p->header_checksum = fmt_header_checksum(p->head, p->head + FMT_HEADER_SIZE, n);
	fmt_put64(p->head + FMT_H_CHECKSUM, p->header_checksum);
	return 0;
}

int fmt_wplan_write(const fmt_wplan *p, int fd)
{
	static const uint8_t zeros[FMT_TABLE_ALIGN];
	uint64_t pos = p->head_len;
	unsigned i;
	int rc;

	rc = fmt_write_full(fd, p->head, (size_t)p->head_len);
	for (i = 0; rc == 0 && i < p->ntables; i++) {
		rc = fmt_write_full(fd, zeros, (size_t)(p->offset[i] - pos));
		if (rc == 0)
			rc = fmt_write_full(fd, p->t[i].data, (size_t)p->t[i].length);
		pos = p->offset[i] + p->t[i].length;
	}
	return rc;
}
