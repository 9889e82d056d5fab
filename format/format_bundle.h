/* SPDX-License-Identifier: MIT */
/*
 * format_bundle.h - the content of an export bundle (SPEC §12.7): the
 * magic, one record per image (UUID length, UUID, File_Size big-endian,
 * the index file's bytes) and the end record, plus the LZ4 frame flags a
 * bundle must carry.  The LZ4 framing itself is the caller's (reader/):
 * format/ depends on libc only.
 *
 * Encoding writes the fixed fields into a caller's buffer; decoding is a
 * push parser fed the decompressed bytes in any split, which never trusts a
 * declared size: it hands the index file's bytes back as they arrive, so
 * the caller can stream them to disk.  Every rejection carries a one-line
 * reason.
 *
 * Internal: not installed.
 */
#ifndef SYMDB_FORMAT_BUNDLE_H
#define SYMDB_FORMAT_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#define FMT_HIDDEN __attribute__((visibility("hidden")))

#define FMT_BUNDLE_MAGIC       "SYMDBBN1" /* §12.7: the first 8 bytes */
#define FMT_BUNDLE_MAGIC_SIZE  8u
#define FMT_BUNDLE_UUID_MAX    32u        /* §12.7: UUID_Length 1-32 */
/* §12.7 reader limits: more is a damaged bundle, not a reason to fill a disk. */
#define FMT_BUNDLE_MAX_FILE    (16ull << 30)
#define FMT_BUNDLE_MAX_IMAGES  65536u
/* The longest record head: UUID_Length, UUID, File_Size. */
#define FMT_BUNDLE_RECORD_MAX  (1u + FMT_BUNDLE_UUID_MAX + 8u)

/* §12.7: the LZ4 frame's FLG byte (the 5th byte of the frame, LZ4 Frame
 * Format 1.6.x) must set Block_Checksum (0x10) and Content_Checksum (0x04). */
#define FMT_BUNDLE_LZ4_FLG_OFFSET    4u
#define FMT_BUNDLE_LZ4_FLG_CHECKSUMS 0x14u

/* ---- encoding ------------------------------------------------------------ */

/* Writes the magic into out[0..8).  Returns 8. */
FMT_HIDDEN size_t fmt_bundle_put_magic(uint8_t *out);

/* Writes the head of one image's record (UUID_Length, UUID, File_Size) into
 * out (FMT_BUNDLE_RECORD_MAX bytes).  Returns its length, or 0 when
 * uuid_len is not 1-32. */
FMT_HIDDEN size_t fmt_bundle_put_record(uint8_t *out, const uint8_t *uuid, size_t uuid_len,
                                        uint64_t file_size);

/* Writes the end record into out[0].  Returns 1. */
FMT_HIDDEN size_t fmt_bundle_put_end(uint8_t *out);

/* ---- decoding ------------------------------------------------------------ */

typedef enum fmt_bundle_event {
	FMT_BUNDLE_MORE,      /* every byte given was used: feed more */
	FMT_BUNDLE_IMAGE,     /* a record head: uuid, uuid_len, file_size are set */
	FMT_BUNDLE_DATA,      /* the next bytes of the current image's index file */
	FMT_BUNDLE_IMAGE_END, /* the current image is complete */
	FMT_BUNDLE_END,       /* the end record */
} fmt_bundle_event;

typedef struct fmt_bundle_dec {
	int state;
	uint8_t field[FMT_BUNDLE_MAGIC_SIZE + FMT_BUNDLE_UUID_MAX];
	size_t have, need;  /* bytes of the current fixed field */
	uint64_t left;      /* data bytes of the current image still to come */
	uint32_t nimages;   /* records seen */
	uint8_t uuid[FMT_BUNDLE_UUID_MAX];
	size_t uuid_len;
	uint64_t file_size;
	char why[96];       /* the reason of a rejection */
} fmt_bundle_dec;

FMT_HIDDEN void fmt_bundle_dec_init(fmt_bundle_dec *d);

/* Decodes from p[0..n): sets *used to the bytes taken and returns the next
 * event (>= 0).  For FMT_BUNDLE_DATA, *data and *len give the bytes (inside
 * p; *used counts them).  Returns SYMDB_E_CORRUPT with a one-line reason in
 * d->why when the bytes are not a bundle: bad magic, a UUID longer than 32
 * bytes, more than 65536 images, a File_Size above 16 GiB, bytes after the
 * end record.  Call again with the rest until FMT_BUNDLE_MORE. */
FMT_HIDDEN int fmt_bundle_decode(fmt_bundle_dec *d, const uint8_t *p, size_t n, size_t *used,
                                 const uint8_t **data, size_t *len);

/* The input has ended: 0 after the end record, else SYMDB_E_CORRUPT with
 * "truncated (no end record)" in d->why. */
FMT_HIDDEN int fmt_bundle_finish(fmt_bundle_dec *d);

/* The LZ4 frame's first bytes (head[0..n)): 0 when its FLG byte sets both
 * checksums, else SYMDB_E_CORRUPT with a one-line reason in why. */
FMT_HIDDEN int fmt_bundle_check_frame(const uint8_t *head, size_t n, char *why,
                                      size_t why_sz);

#endif /* SYMDB_FORMAT_BUNDLE_H */
