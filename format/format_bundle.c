/* SPDX-License-Identifier: MIT */
/*
 * format_bundle.c - the export bundle's records (SPEC §12.7), encoded and
 * decoded.  The decoder is a state machine over fixed fields (magic,
 * UUID_Length, UUID, File_Size) and the variable data between them; a field
 * split across calls is gathered in d->field, data is passed through.
 */
#include "format_bundle.h"

#include <stdio.h>
#include <string.h>

#include "symdb_endian.h"
#include "symdb_errors.h"

enum { ST_MAGIC, ST_LEN, ST_UUID, ST_SIZE, ST_DATA, ST_END };

size_t fmt_bundle_put_magic(uint8_t *out)
{
	memcpy(out, FMT_BUNDLE_MAGIC, FMT_BUNDLE_MAGIC_SIZE);
	return FMT_BUNDLE_MAGIC_SIZE;
}

size_t fmt_bundle_put_record(uint8_t *out, const uint8_t *uuid, size_t uuid_len,
                             uint64_t file_size)
{
	if (uuid_len == 0 || uuid_len > FMT_BUNDLE_UUID_MAX)
		return 0;
	out[0] = (uint8_t)uuid_len;
	memcpy(out + 1, uuid, uuid_len);
	fmt_put64(out + 1 + uuid_len, file_size);
	return 1 + uuid_len + 8;
}

size_t fmt_bundle_put_end(uint8_t *out)
{
	out[0] = 0;
	return 1;
}

static void expect(fmt_bundle_dec *d, int state, size_t need)
{
	d->state = state;
	d->have = 0;
	d->need = need;
}

static int reject(fmt_bundle_dec *d, const char *why)
{
	snprintf(d->why, sizeof d->why, "%s", why);
	return SYMDB_E_CORRUPT;
}

void fmt_bundle_dec_init(fmt_bundle_dec *d)
{
	memset(d, 0, sizeof *d);
	expect(d, ST_MAGIC, FMT_BUNDLE_MAGIC_SIZE);
}

/* A fixed field is complete: act on it. */
static int field_done(fmt_bundle_dec *d)
{
	switch (d->state) {
	case ST_MAGIC:
		if (memcmp(d->field, FMT_BUNDLE_MAGIC, FMT_BUNDLE_MAGIC_SIZE) != 0)
			return reject(d, "not a symdb bundle (bad magic)");
		expect(d, ST_LEN, 1);
		return FMT_BUNDLE_MORE;
	case ST_LEN:
		if (d->field[0] == 0) {
			expect(d, ST_END, 0);
			return FMT_BUNDLE_END;
		}
		if (d->field[0] > FMT_BUNDLE_UUID_MAX)
			return reject(d, "UUID longer than 32 bytes");
		if (d->nimages == FMT_BUNDLE_MAX_IMAGES)
			return reject(d, "more than 65536 images");
		d->uuid_len = d->field[0];
		expect(d, ST_UUID, d->uuid_len);
		return FMT_BUNDLE_MORE;
	case ST_UUID:
		memcpy(d->uuid, d->field, d->uuid_len);
		expect(d, ST_SIZE, 8);
		return FMT_BUNDLE_MORE;
	case ST_SIZE:
		d->file_size = fmt_be64(d->field);
		if (d->file_size > FMT_BUNDLE_MAX_FILE)
			return reject(d, "an image declares more than 16 GiB");
		d->nimages++;
		d->left = d->file_size;
		d->state = ST_DATA;
		return FMT_BUNDLE_IMAGE;
	}
	return reject(d, "data after the end record");
}

int fmt_bundle_decode(fmt_bundle_dec *d, const uint8_t *p, size_t n, size_t *used,
                      const uint8_t **data, size_t *len)
{
	size_t k;

	*used = 0;
	*data = NULL;
	*len = 0;
	if (d->state == ST_DATA) {
		if (d->left == 0) {
			expect(d, ST_LEN, 1);
			return FMT_BUNDLE_IMAGE_END;
		}
		if (n == 0)
			return FMT_BUNDLE_MORE;
		k = d->left < n ? (size_t)d->left : n;
		d->left -= k;
		*used = k;
		*data = p;
		*len = k;
		return FMT_BUNDLE_DATA;
	}
	while (*used < n) {
		if (d->state == ST_END)
			return reject(d, "data after the end record");
		k = d->need - d->have < n - *used ? d->need - d->have : n - *used;
		memcpy(d->field + d->have, p + *used, k);
		d->have += k;
		*used += k;
		if (d->have == d->need) {
			int ev = field_done(d);
			if (ev != FMT_BUNDLE_MORE)
				return ev;
		}
	}
	return FMT_BUNDLE_MORE;
}

int fmt_bundle_finish(fmt_bundle_dec *d)
{
	return d->state == ST_END ? 0 : reject(d, "truncated (no end record)");
}

int fmt_bundle_check_frame(const uint8_t *head, size_t n, char *why, size_t why_sz)
{
	if (n > FMT_BUNDLE_LZ4_FLG_OFFSET &&
	    (head[FMT_BUNDLE_LZ4_FLG_OFFSET] & FMT_BUNDLE_LZ4_FLG_CHECKSUMS) ==
	            FMT_BUNDLE_LZ4_FLG_CHECKSUMS)
		return 0;
	snprintf(why, why_sz, "LZ4 frame without block and content checksums");
	return SYMDB_E_CORRUPT;
}
