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
#define _POSIX_C_SOURCE 200809L
#include "ix_cage.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format_report.h"
#include "symdb_indexer.h"

static int stage_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

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
		snprintf(r->arch, sizeof r->arch, "%s", img->arch);
		snprintf(r->tmp, sizeof r->tmp, "%s", img->tmp);
		snprintf(r->debug_path, sizeof r->debug_path, "%s", img->debug_path);
	}
	snprintf(r->msg, sizeof r->msg, "%s", msg ? msg : "");
	fmt_report_encode(r, buf);
	free(r);
	ret = stage_write_all(fd, buf, sizeof buf);
	return ret;
}

/* Test-only failures (symdb_indexer_job.test_hook, which the executable
 * takes from SYMDB_TEST_CAGE_CRASH): fired after a temp file is written and
 * before it is reported, so the parent's cleanup by tag is exercised too. */
static int stage_test_hook(const char *what, char *eb, size_t ebsz)
{
	if (!strcmp(what, "segv")) {
		signal(SIGSEGV, SIG_DFL); /* past a sanitizer's handler */
		raise(SIGSEGV);
	} else if (!strcmp(what, "abort")) {
		abort();
	} else if (!strcmp(what, "hang")) {
		for (;;)
			pause();
	} else if (!strcmp(what, "oom")) {
		/* Reserve (never touch) address space until RLIMIT_AS says no,
		 * as a runaway allocation in a parser would. */
		void *chunks[4096];
		size_t n = 0;
		while (n < 4096 && (chunks[n] = malloc(256u << 20)) != NULL)
			n++;
		while (n)
			free(chunks[--n]);
		return fmt_err(eb, ebsz, -ENOMEM, "out of memory");
	}
	return 0;
}

int ix_stage_image(ix_stager *st, const ix_image *img, const ix_output *out, const char *arch,
                   const char *debug_path, char *eb, size_t ebsz)
{
	ix_staged *r;
	int rc;

	if (st->n >= SYMDB_BUILD_MAX_IMAGES)
		return fmt_err(eb, ebsz, SYMDB_E_TOO_BIG, "more than %d images in one input",
		               SYMDB_BUILD_MAX_IMAGES);
	r = &st->img[st->n];
	memset(r, 0, sizeof *r);
	r->uuid = img->uuid;
	snprintf(r->arch, sizeof r->arch, "%s", arch ? arch : "");
	snprintf(r->debug_path, sizeof r->debug_path, "%s", debug_path ? debug_path : "");
	rc = ix_write_tmp(st->dir, &img->uuid, st->tag, out, r->tmp, sizeof r->tmp, eb, ebsz);
	if (rc)
		return rc;
	st->n++;
	if (st->fd < 0)
		return 0;
	if (st->test_hook && (rc = stage_test_hook(st->test_hook, eb, ebsz)) != 0)
		return rc;
	rc = stage_send(st->fd, FMT_REPORT_IMAGE, 0, r, NULL);
	return rc ? fmt_err(eb, ebsz, rc, "cannot report to the parent: %s", strerror(-rc)) : 0;
}

int symdb_indexer_run(const symdb_indexer_job *job)
{
	static ix_stager st; /* ~600 KiB: one per process */
	char eb[FMT_REPORT_MSG_SZ] = "";
	SYMDB_OPTS(symdb_build_opts, o, .errbuf = eb, .errbuf_sz = sizeof eb);
	int rc;

	memset(&st, 0, sizeof st);
	st.fd = job->report_fd;
	st.test_hook = job->test_hook;
	if ((size_t)snprintf(st.dir, sizeof st.dir, "%s", job->staging_dir) >= sizeof st.dir ||
	    (size_t)snprintf(st.tag, sizeof st.tag, "%s", job->tag ? job->tag : "") >=
	            sizeof st.tag)
		rc = fmt_err(eb, sizeof eb, -ENAMETOOLONG, "%s: staging path or tag too long",
		             job->input);
	else {
		o.flags = (job->flags & SYMDB_INDEXER_NO_DWARF) ? SYMDB_BUILD_NO_DWARF : 0;
		o.threads = job->threads;
		o.debug_dir = job->debug_dir;
		rc = ix_stage_input(&st, job->input, &o);
	}
	if (stage_send(job->report_fd, FMT_REPORT_END, rc, NULL, eb) != 0)
		return 125;
	return fmt_report_exit_status(rc);
}
