/* SPDX-License-Identifier: MIT */
/*
 * format_report.h - the records the indexer executable (symdb-indexer) writes
 * to its report descriptor (SPEC §12.5): one per staged image, then one end
 * record with its status.  The parent reads them as untrusted bytes, so the
 * layout is fixed and big-endian, independent of either side's structs.
 *
 *   off  size  field
 *     0     4  magic: FMT_REPORT_IMAGE ("SYI1"), FMT_REPORT_WANT ("SYIW")
 *              or FMT_REPORT_END ("SYIE")
 *     4     4  status (signed): 0 or a negative symdb/errno code (end record)
 *     8     1  UUID kind (SPEC §5.2)
 *     9     1  UUID length, 0..32
 *    10     2  output: 0-based position of the --output written
 *    12    32  UUID bytes, zero past the length
 *    44    16  architecture, NUL-padded ("" for ELF)
 *    60  4096  separate debug file used, NUL-padded ("" if none); in a
 *              want record the split DWARF file's path (SPEC §12.5)
 *  4156  1024  one-line reason (end record), NUL-padded
 *  5180        end
 *
 * Decoding NUL-terminates every string whatever the bytes say.
 */
#ifndef SYMDB_FORMAT_REPORT_H
#define SYMDB_FORMAT_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "format_header.h"

#define FMT_REPORT_IMAGE 0x53594931u /* "SYI1": one staged image */
#define FMT_REPORT_END 0x53594945u   /* "SYIE": the indexer's status */
/* "SYIW": a split DWARF file (.dwo) a skeleton unit names and the job did
 * not pass; before the end record, at most FMT_REPORT_MAX_WANTS. */
#define FMT_REPORT_WANT 0x53594957u
#define FMT_REPORT_MAX_WANTS 1000

#define FMT_REPORT_ARCH_SZ 16
#define FMT_REPORT_PATH_SZ 4096
#define FMT_REPORT_MSG_SZ 1024
#define FMT_REPORT_SIZE (60 + FMT_REPORT_PATH_SZ + FMT_REPORT_MSG_SZ)
/* At most this many image records in one report (FMT_MO_MAX_SLICES). */
#define FMT_REPORT_MAX_IMAGES 64

/* A record, decoded. */
typedef struct fmt_report {
	uint32_t magic;
	int32_t status;
	uint8_t uuid_kind, uuid_len;
	uint16_t output; /* image records: which --output holds the file */
	uint8_t uuid[FMT_UUID_MAX];
	char arch[FMT_REPORT_ARCH_SZ];
	char debug_path[FMT_REPORT_PATH_SZ];
	char msg[FMT_REPORT_MSG_SZ];
} fmt_report;

/* Encode r into buf (strings longer than their field are cut). */
FMT_HIDDEN void fmt_report_encode(const fmt_report *r, uint8_t buf[FMT_REPORT_SIZE]);

/* Decode buf into r; 0, or SYMDB_E_CORRUPT for an unknown magic or a UUID
 * length past 32. */
FMT_HIDDEN int fmt_report_decode(const uint8_t buf[FMT_REPORT_SIZE], fmt_report *r);

/* The indexer's exit status for a staging result: 0 for success, else the
 * code's magnitude when it fits an exit status (1..125), else 125.  The
 * parent trusts an end record only when the exit status agrees with it. */
FMT_HIDDEN int fmt_report_exit_status(int status);

#endif /* SYMDB_FORMAT_REPORT_H */
