/* SPDX-License-Identifier: MIT */
/*
 * format_report.c - encode and decode the indexer's report records
 * (format_report.h, SPEC §12.5).
 */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include "format_report.h"

#include <string.h>

#include "symdb_endian.h"
#include "symdb_errors.h"

#define REP_KIND 8
#define REP_UUID_LEN 9
#define REP_UUID 12
#define REP_ARCH 44
#define REP_OUTPUT 10
#define REP_DEBUG 60
#define REP_MSG (REP_DEBUG + FMT_REPORT_PATH_SZ)

_Static_assert(REP_MSG + FMT_REPORT_MSG_SZ == FMT_REPORT_SIZE, "report layout");

/* A NUL-padded field; the last byte is always NUL. */
static void rep_put_str(uint8_t *dst, size_t sz, const char *s)
{
	size_t n = strnlen(s, sz - 1);

	memcpy(dst, s, n);
	memset(dst + n, 0, sz - n);
}

static void rep_get_str(char *dst, size_t sz, const uint8_t *src)
{
	memcpy(dst, src, sz);
	dst[sz - 1] = 0;
}

void fmt_report_encode(const fmt_report *r, uint8_t buf[FMT_REPORT_SIZE])
{
	uint8_t len = r->uuid_len <= FMT_UUID_MAX ? r->uuid_len : 0;

	memset(buf, 0, REP_ARCH);
	fmt_put32(buf, r->magic);
	fmt_put32(buf + 4, (uint32_t)r->status);
	buf[REP_KIND] = r->uuid_kind;
	buf[REP_UUID_LEN] = len;
	buf[REP_OUTPUT] = (uint8_t)(r->output >> 8);
	buf[REP_OUTPUT + 1] = (uint8_t)r->output;
	memcpy(buf + REP_UUID, r->uuid, len);
	rep_put_str(buf + REP_ARCH, FMT_REPORT_ARCH_SZ, r->arch);
	rep_put_str(buf + REP_DEBUG, FMT_REPORT_PATH_SZ, r->debug_path);
	rep_put_str(buf + REP_MSG, FMT_REPORT_MSG_SZ, r->msg);
}

int fmt_report_decode(const uint8_t buf[FMT_REPORT_SIZE], fmt_report *r)
{
	memset(r, 0, sizeof *r);
	r->magic = fmt_be32(buf);
	r->status = (int32_t)fmt_be32(buf + 4);
	r->uuid_kind = buf[REP_KIND];
	r->uuid_len = buf[REP_UUID_LEN];
	r->output = (uint16_t)(buf[REP_OUTPUT] << 8 | buf[REP_OUTPUT + 1]);
	if ((r->magic != FMT_REPORT_IMAGE && r->magic != FMT_REPORT_END &&
	     r->magic != FMT_REPORT_WANT) ||
	    r->uuid_len > FMT_UUID_MAX)
		return SYMDB_E_CORRUPT;
	memcpy(r->uuid, buf + REP_UUID, r->uuid_len);
	rep_get_str(r->arch, sizeof r->arch, buf + REP_ARCH);
	rep_get_str(r->debug_path, sizeof r->debug_path, buf + REP_DEBUG);
	rep_get_str(r->msg, sizeof r->msg, buf + REP_MSG);
	return 0;
}

int fmt_report_exit_status(int status)
{
	if (status == 0)
		return 0;
	return status < 0 && status >= -125 ? -status : 125;
}
