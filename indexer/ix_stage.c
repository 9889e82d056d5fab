/* SPDX-License-Identifier: MIT */
/*
 * ix_stage.c - the indexer's half of a build (SPEC §12.5): parse one input,
 * write each image's index file as a temp file in the staging directory,
 * and report it.  In the symdb-indexer executable (symdb_indexer_run) every
 * image becomes a record on the report descriptor (format_report.h), then
 * one end record carries the status; the parent trusts none of it and
 * re-verifies every file before it publishes it.  Nothing here touches a
 * catalog.
 */
#define _GNU_SOURCE /* sync_file_range */
#include "ix_stage.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format_io.h"
#include "format_layout.h"
#include "format_report.h"

/* One record on fd (format_report.h). */
static int stage_send(int fd, uint32_t magic, int rc, const ix_staged *img, const char *msg)
{
	uint8_t buf[FMT_REPORT_SIZE];
	fmt_report *r = calloc(1, sizeof *r); /* 9 KiB: off the stack */
	int ret;

	if (!r)
		return -ENOMEM;
	r->magic = magic;
	r->status = rc;
	if (img) {
		r->uuid_kind = img->uuid.kind;
		r->uuid_len = img->uuid.len;
		memcpy(r->uuid, img->uuid.bytes, img->uuid.len);
		r->output = (uint16_t)img->output;
		snprintf(r->arch, sizeof r->arch, "%s", img->arch);
		snprintf(r->debug_path, sizeof r->debug_path, "%s", img->debug_path);
	}
	snprintf(r->msg, sizeof r->msg, "%s", msg ? msg : "");
	fmt_report_encode(r, buf);
	free(r);
	ret = fmt_write_full(fd, buf, sizeof buf);
	return ret;
}

/* Lowercase hex of id (SPEC §12.1), the start of its file names. */
static void stage_hex(const ix_uuid *id, char hex[2 * FMT_UUID_MAX + 1])
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned i = 0; i < id->len; i++) {
		hex[2 * i] = digits[id->bytes[i] >> 4];
		hex[2 * i + 1] = digits[id->bytes[i] & 15];
	}
	hex[2 * id->len] = 0;
}

int ix_write_fd(int fd, const ix_output *out, char *eb, size_t ebsz)
{
	int rc = 0;

	/* The builder created it empty; a second image for one output never
	 * gets here (ix_stage_image), so this only guards a reused file. */
	if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		rc = -errno;
	if (rc == 0)
		rc = fmt_wplan_write(&out->plan, fd);
	if (rc)
		return fmt_err(eb, ebsz, rc, "cannot write index file: %s", strerror(-rc));
	/* Advisory: the builder's fsync before the rename then finds the
	 * work done or under way. */
	(void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	return 0;
}

/* The output the builder created for id: the first not yet written whose
 * UUID is id's.  -1 if there is none. */
static int stage_output(ix_stager *st, const ix_uuid *id)
{
	char hex[2 * FMT_UUID_MAX + 1];

	stage_hex(id, hex);
	for (unsigned i = 0; i < st->noutputs && i < IX_MAX_IMAGES; i++)
		if (st->outputs[i].fd >= 0 && st->outputs[i].uuid &&
		    !strcmp(st->outputs[i].uuid, hex) && !(st->used[i / 64] >> (i % 64) & 1))
			return (int)i;
	return -1;
}

int ix_stage_image(ix_stager *st, const ix_image *img, const ix_output *out, const char *arch,
                   const char *debug_path, char *eb, size_t ebsz)
{
	char hex[2 * FMT_UUID_MAX + 1];
	ix_staged *r;
	int rc, k;

	if (st->n >= IX_MAX_IMAGES)
		return fmt_err(eb, ebsz, SYMDB_E_TOO_BIG, "more than %d images in one input",
		               IX_MAX_IMAGES);
	if (img->uuid.len == 0 || img->uuid.len > FMT_UUID_MAX)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "image has no UUID");
	k = stage_output(st, &img->uuid);
	if (k < 0) {
		stage_hex(&img->uuid, hex);
		return fmt_err(eb, ebsz, SYMDB_E_INVAL,
		               "image %s: no output file given for this UUID", hex);
	}
	r = &st->img[st->n];
	memset(r, 0, sizeof *r);
	r->uuid = img->uuid;
	r->output = (unsigned)k;
	snprintf(r->arch, sizeof r->arch, "%s", arch ? arch : "");
	snprintf(r->debug_path, sizeof r->debug_path, "%s", debug_path ? debug_path : "");
	rc = ix_write_fd(st->outputs[k].fd, out, eb, ebsz);
	if (rc)
		return rc;
	st->used[k / 64] |= 1ull << (k % 64);
	st->n++;
	if (st->fd < 0)
		return 0;
	/* After the write and before the report: a test's failure here
	 * exercises the parent's cleanup by tag too. */
	if (st->test_hook && (rc = st->test_hook(eb, ebsz)) != 0)
		return rc;
	rc = stage_send(st->fd, FMT_REPORT_IMAGE, 0, r, NULL);
	return rc ? fmt_err(eb, ebsz, rc, "cannot report to the parent: %s", strerror(-rc)) : 0;
}

/* "KIND:HEX", the builder's UUID of an ELF input (SPEC §12.5). */
static int stage_parse_uuid(const char *s, ix_uuid *id)
{
	unsigned kind = 0;
	size_t n;

	memset(id, 0, sizeof *id);
	if (!s)
		return 0;
	while (*s >= '0' && *s <= '9' && kind < 256)
		kind = kind * 10 + (unsigned)(*s++ - '0');
	if (*s++ != ':' || kind == 0 || kind > 255)
		return SYMDB_E_INVAL;
	n = strlen(s);
	if (n == 0 || n % 2 || n / 2 > FMT_UUID_MAX || strspn(s, "0123456789abcdef") != n)
		return SYMDB_E_INVAL;
	for (size_t i = 0; i < n / 2; i++) {
		char byte[3] = { s[2 * i], s[2 * i + 1], 0 };
		id->bytes[i] = (uint8_t)strtoul(byte, NULL, 16);
	}
	id->len = (uint8_t)(n / 2);
	id->kind = (uint8_t)kind;
	return 0;
}

static int stage_job(ix_stager *st, const symdb_indexer_job *job, char *eb, size_t ebsz)
{
	const symdb_indexer_file none = { -1, NULL };
	ix_opts o = { .flags = job->flags, .threads = job->threads, .cpus = job->cpus,
	              .debug = job->debug, .debuglinks = job->debuglinks,
	              .ndebuglinks = job->debuglinks ? job->ndebuglinks : 0,
	              .companion = job->companion, .dwos = job->dwos,
	              .ndwos = job->dwos ? job->ndwos : 0, .dwp = job->dwp,
	              .want_fd = job->report_fd, .errbuf = eb, .errbuf_sz = ebsz };
	const char *name;

	/* A zeroed job means no debug file, not descriptor 0. */
	if (o.debug.fd <= 0 && !o.debug.name)
		o.debug = none;
	if (o.companion.fd <= 0 && !o.companion.name)
		o.companion = none;
	if (o.dwp.fd <= 0 && !o.dwp.name)
		o.dwp = none;
	memset(st, 0, sizeof *st);
	st->fd = job->report_fd;
	st->test_hook = job->test_hook;
	st->outputs = job->outputs;
	st->noutputs = job->outputs ? job->noutputs : 0;
	if (!job->inputs || job->ninputs == 0)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "no input");
	if (st->noutputs == 0)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "no output file");
	name = job->inputs[0].name ? job->inputs[0].name : "";
	if (stage_parse_uuid(job->uuid, &st->elf_uuid) != 0)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "%s: bad UUID \"%s\"", name, job->uuid);
	return ix_stage_input(st, job->inputs, job->ninputs, &o);
}

void symdb_indexer_prepare(void)
{
	ix_elf_init();
}

size_t symdb_indexer_end_record(unsigned char *buf, size_t sz, int status, const char *msg)
{
	static fmt_report r; /* 9 KiB: not on a signal handler's stack */

	memset(&r, 0, sizeof r);
	r.magic = FMT_REPORT_END;
	r.status = status;
	for (size_t i = 0; msg && msg[i] && i + 1 < sizeof r.msg; i++)
		r.msg[i] = msg[i]; /* no snprintf: not async-signal-safe */
	if (sz < FMT_REPORT_SIZE)
		return 0;
	fmt_report_encode(&r, buf);
	return FMT_REPORT_SIZE;
}

int symdb_indexer_run(const symdb_indexer_job *job)
{
	static ix_stager st; /* ~600 KiB: one per process */
	char eb[FMT_REPORT_MSG_SZ] = "";
	int rc = stage_job(&st, job, eb, sizeof eb);

	if (stage_send(job->report_fd, FMT_REPORT_END, rc, NULL, eb) != 0)
		return 125;
	return fmt_report_exit_status(rc);
}
