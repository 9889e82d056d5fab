/* SPDX-License-Identifier: MIT */
/*
 * ix_cage.c - the cage, and the commit of staged images (SPEC §12.5).
 *
 * The cage: the ELF, Mach-O and DWARF parsers (libelf, libdwarf, our own)
 * are the code that reads untrusted bytes in depth, and libdwarf may abort()
 * on an error it does not handle.  With SYMDB_BUILD_ISOLATE they run in the
 * symdb-indexer executable, started per input with posix_spawn; it sets its
 * own RLIMIT_AS / RLIMIT_FSIZE (memory and output), RLIMIT_CPU and
 * RLIMIT_CORE 0 from its arguments before it parses anything, and the
 * parent enforces a wall-clock deadline.  It writes each image's index file
 * to DB/tmp/UUIDHEX.cage-PID-N.XXXXXX and sends one record per image
 * (format_report.h) on descriptor 3, then an end record with its status.
 *
 * The parent never trusts what it reads: a record's temp path must be the
 * name the indexer was told to use; the file must be a regular file with
 * one link; it is opened with every checksum verified and every invariant
 * checked (symdb_image_verify), its UUID must be one the parent computed
 * from the input with the reader's (fuzzed) code.  Only then is it
 * published (ix_publish_tmp), from the parent, which owns the catalog.
 * Whatever the indexer left behind - a record it never sent, a crash
 * mid-write - carries its tag and is removed by name.
 *
 * posix_spawn (a vfork-like clone, then exec) runs no code of ours in the
 * child, so it is safe from a threaded process whatever its allocator.  The
 * child gets stdio with stdout on /dev/null (libdwarf prints there before
 * it aborts), its report pipe as descriptor 3, and nothing else: other
 * workers' pipes reach EOF when their own indexers exit.  The indexer sets
 * PR_SET_PDEATHSIG and checks its parent, so it dies with the thread (so
 * the builder) that started it.
 */
#define _GNU_SOURCE /* pipe2, sigdescr_np, posix_spawn_file_actions_addclosefrom_np */
#include "ix_cage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format_header.h"
#include "format_report.h"
#include "fmt_macho.h"
#include "ix_dwarf_par.h"

#include <xxhash.h>

#define IX_CAGE_MIN_MEMORY (8ull << 30)
#define IX_CAGE_MIN_TIMEOUT 120u
#define IX_CAGE_FD 3 /* the indexer's report descriptor */

extern char **environ;

/* ---- leftovers -------------------------------------------------------------- */

/* Remove STAGING/<anything><tag>.XXXXXX except the files st lists. */
static void cage_remove_tagged(const ix_stager *st)
{
	char f[4096 + 260];
	const char *tag = st->tag;
	size_t tl = strlen(tag);
	struct dirent *de;
	DIR *dp;

	if (!tl)
		return;
	dp = opendir(st->dir);
	while (dp && (de = readdir(dp)) != NULL) {
		const char *t = strstr(de->d_name, tag);
		if (!t || t[tl] != '.')
			continue;
		snprintf(f, sizeof f, "%s/%s", st->dir, de->d_name);
		unsigned i = 0;
		while (i < st->n && strcmp(st->img[i].tmp, f) != 0)
			i++;
		if (i == st->n)
			unlink(f);
	}
	if (dp)
		closedir(dp);
}

void ix_stage_discard(ix_stager *st)
{
	for (unsigned i = 0; i < st->n; i++)
		if (st->img[i].tmp[0])
			unlink(st->img[i].tmp);
	st->n = 0;
	cage_remove_tagged(st);
}

/* ---- the parent ----------------------------------------------------------- */

struct cage_run {
	ix_stager *st;
	const char *path;
	pid_t pid;
	unsigned timeout;
	uint64_t cpu; /* RLIMIT_CPU: the timeout times the walk's threads */
	int64_t deadline; /* cage_now_ms() by which the indexer must be done */
	uint64_t memory;
	int got_end, end_rc, timed_out, bad_report;
	char end_msg[FMT_REPORT_MSG_SZ];
	char *eb;
	size_t ebsz;
};

static int64_t cage_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A record's temp path must be exactly the name the indexer was told to
 * use: STAGING/UUIDHEX<tag>.XXXXXX for the record's UUID. */
static int cage_path_ok(const struct cage_run *c, const fmt_report *r)
{
	char hex[2 * FMT_UUID_MAX + 1], want[4200];
	symdb_uuid id;
	size_t wl;

	if (r->uuid_len == 0)
		return 0;
	memset(&id, 0, sizeof id);
	id.len = r->uuid_len;
	memcpy(id.bytes, r->uuid, r->uuid_len);
	symdb_uuid_format(&id, hex);
	wl = (size_t)snprintf(want, sizeof want, "%s/%s%s.", c->st->dir, hex, c->st->tag);
	return wl < sizeof want && !strncmp(r->tmp, want, wl) && strlen(r->tmp) == wl + 6 &&
	       !strchr(r->tmp + wl, '/');
}

/* An image record, as the commit reads it. */
static void cage_staged(ix_staged *s, const fmt_report *r)
{
	memset(s, 0, sizeof *s);
	s->uuid.len = r->uuid_len;
	s->uuid.kind = r->uuid_kind;
	memcpy(s->uuid.bytes, r->uuid, r->uuid_len);
	snprintf(s->arch, sizeof s->arch, "%s", r->arch);
	snprintf(s->tmp, sizeof s->tmp, "%s", r->tmp);
	snprintf(s->debug_path, sizeof s->debug_path, "%s", r->debug_path);
}

/* One complete record from the indexer. */
static void cage_take(struct cage_run *c, const uint8_t *buf)
{
	fmt_report m;

	if (fmt_report_decode(buf, &m) != 0) {
		c->bad_report = 1;
	} else if (m.magic == FMT_REPORT_END && !c->got_end) {
		c->got_end = 1;
		c->end_rc = m.status > 0 ? SYMDB_E_BAD_OBJECT : m.status;
		/* One line: the message came from the untrusted side. */
		for (char *p = m.msg; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
		snprintf(c->end_msg, sizeof c->end_msg, "%s", m.msg);
	} else if (m.magic == FMT_REPORT_IMAGE && !c->got_end &&
	           c->st->n < SYMDB_BUILD_MAX_IMAGES && cage_path_ok(c, &m)) {
		cage_staged(&c->st->img[c->st->n++], &m);
	} else {
		c->bad_report = 1;
	}
}

/* Read records until EOF, a bad record or the deadline. */
static void cage_collect(struct cage_run *c, int fd)
{
	uint8_t *m = malloc(FMT_REPORT_SIZE);
	const int64_t deadline = c->deadline;
	size_t have = 0;

	if (!m) {
		c->bad_report = 1;
		return;
	}
	while (!c->bad_report) {
		int64_t left = deadline - cage_now_ms();
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;
		int pr;

		if (left <= 0) {
			c->timed_out = 1;
			break;
		}
		pr = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0) {
			c->bad_report = 1;
			break;
		}
		if (pr == 0)
			continue;
		n = read(fd, m + have, FMT_REPORT_SIZE - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (have)
				c->bad_report = 1; /* a torn record */
			break;
		}
		have += (size_t)n;
		if (have == FMT_REPORT_SIZE) {
			cage_take(c, m);
			have = 0;
		}
	}
	free(m);
}

static void cage_size(char *buf, size_t sz, uint64_t v)
{
	if (v && v % (1ull << 30) == 0)
		snprintf(buf, sz, "%llu GiB", (unsigned long long)(v >> 30));
	else if (v && v % (1ull << 20) == 0)
		snprintf(buf, sz, "%llu MiB", (unsigned long long)(v >> 20));
	else
		snprintf(buf, sz, "%llu bytes", (unsigned long long)v);
}

/* A killed indexer: one line naming the input and the signal. */
static int cage_judge_signal(struct cage_run *c, int sig)
{
	const char *p = c->path;
	const char *d = sigdescr_np(sig);

	if (!d)
		d = "unknown signal";
	if (sig == SIGXCPU)
		return fmt_err(c->eb, c->ebsz, -ETIMEDOUT,
		               "%s: indexer exceeded its CPU-time limit of %u s: signal %d (%s)", p,
		               (unsigned)c->cpu, sig, d);
	if (sig == SIGABRT)
		return fmt_err(c->eb, c->ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: indexer aborted (libdwarf abort): signal %d (%s)", p, sig, d);
	if (sig == SIGKILL)
		return fmt_err(c->eb, c->ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: indexer was killed: signal %d (%s)", p, sig, d);
	return fmt_err(c->eb, c->ebsz, SYMDB_E_BAD_OBJECT, "%s: indexer crashed: signal %d (%s)",
	               p, sig, d);
}

/* Map how the indexer ended to one line naming the input.  Its exit status
 * is the end record's code (format_report.h); any other status means it
 * never got to report. */
static int cage_judge(struct cage_run *c, const siginfo_t *si)
{
	const char *p = c->path;
	char lim[64];

	cage_size(lim, sizeof lim, c->memory);
	if (c->timed_out)
		return fmt_err(c->eb, c->ebsz, -ETIMEDOUT, "%s: indexer timed out after %u s", p,
		               c->timeout);
	if (si->si_code == CLD_KILLED || si->si_code == CLD_DUMPED)
		return cage_judge_signal(c, si->si_status);
	if (si->si_code == CLD_EXITED && si->si_status != 0 &&
	    !(c->got_end && si->si_status == fmt_report_exit_status(c->end_rc)))
		return fmt_err(c->eb, c->ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: indexer exited with status %d", p, si->si_status);
	if (c->bad_report || !c->got_end)
		return fmt_err(c->eb, c->ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: indexer sent a malformed report", p);
	if (c->end_rc == -ENOMEM)
		return fmt_err(c->eb, c->ebsz, -ENOMEM,
		               "%s: indexer ran out of memory (address-space limit %s)", p, lim);
	if (c->end_rc) {
		if (!c->end_msg[0])
			return fmt_err(c->eb, c->ebsz, c->end_rc, "%s: %s", p,
			               symdb_strerror(c->end_rc));
		return fmt_err(c->eb, c->ebsz, c->end_rc, "%s", c->end_msg);
	}
	return 0;
}

/* Bytes of input: the file, or every file of a .dSYM bundle's DWARF dir. */
static uint64_t cage_input_size(const char *path)
{
	char sub[4096], f[4096 + 260];
	struct dirent *de;
	struct stat st;
	uint64_t size = 0;
	DIR *dp;

	if (stat(path, &st) != 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	if ((size_t)snprintf(sub, sizeof sub, "%s/Contents/Resources/DWARF", path) >= sizeof sub)
		return 0;
	dp = opendir(sub);
	while (dp && (de = readdir(dp)) != NULL) {
		snprintf(f, sizeof f, "%s/%s", sub, de->d_name);
		if (de->d_name[0] != '.' && stat(f, &st) == 0 && S_ISREG(st.st_mode))
			size += (uint64_t)st.st_size;
	}
	if (dp)
		closedir(dp);
	return size;
}

/* Limits for one input (symdb_build.h: 0 = scaled defaults).  The floors
 * leave room for a small stripped binary whose separate debug file is large
 * (the parent does not look for it: that is parsing). */
static void cage_limits(const char *path, const symdb_build_opts *o, uint64_t *memory,
                        unsigned *timeout)
{
	uint64_t size = cage_input_size(path);

	*memory = o->memory_limit;
	if (!*memory)
		*memory = size > IX_CAGE_MIN_MEMORY / 64 ? size * 64 : IX_CAGE_MIN_MEMORY;
	*timeout = o->timeout_s;
	if (!*timeout)
		*timeout = IX_CAGE_MIN_TIMEOUT + (unsigned)((size >> 20) > 86400 ? 86400 : size >> 20);
}

/* Wait for the indexer to end without reaping it (the tag cleanup runs
 * first).  One that closed its pipe but keeps running is given until the
 * deadline, then killed: EOF is not an exit. */
static void cage_wait(struct cage_run *c, siginfo_t *si)
{
	long nap = 100 * 1000; /* ns; doubles up to 50 ms: it exits right after EOF */

	for (;;) {
		memset(si, 0, sizeof *si);
		if (waitid(P_PID, (id_t)c->pid, si, WEXITED | WNOWAIT | WNOHANG) < 0) {
			if (errno == EINTR)
				continue;
			return; /* ECHILD: reaped by someone else; judged by its records */
		}
		if (si->si_pid == c->pid)
			return;
		if (!c->timed_out && cage_now_ms() >= c->deadline) {
			c->timed_out = 1;
			kill(c->pid, SIGKILL);
		}
		struct timespec ts = { 0, nap };
		nanosleep(&ts, NULL);
		if (nap < 50 * 1000 * 1000)
			nap *= 2;
	}
}

/* The indexer executable: the caller's, else the installed one. */
static const char *cage_exe(const symdb_build_opts *o)
{
	return o->indexer_path && o->indexer_path[0] ? o->indexer_path : SYMDB_INDEXER_DEFAULT;
}

/* symdb-indexer's command line (SPEC §12.5); strings live in num and
 * input. */
struct cage_argv {
	char *v[32];
	char num[8][32];
	char input[4096];
	unsigned n, k;
};

/* The input as the indexer must name it: /proc/self/ is this process in
 * here and the indexer in there, so it becomes /proc/PID/ (same file, same
 * basename, so the same Image_Name). */
static const char *cage_input(struct cage_argv *a, const char *path)
{
	static const char self[] = "/proc/self/";

	if (strncmp(path, self, sizeof self - 1) != 0 ||
	    (size_t)snprintf(a->input, sizeof a->input, "/proc/%ld/%s", (long)getpid(),
	                     path + sizeof self - 1) >= sizeof a->input)
		return path;
	return a->input;
}

static void cage_arg(struct cage_argv *a, const char *s)
{
	a->v[a->n++] = (char *)s;
}

static void cage_arg_num(struct cage_argv *a, const char *opt, unsigned long long v)
{
	snprintf(a->num[a->k], sizeof a->num[0], "%llu", v);
	cage_arg(a, opt);
	cage_arg(a, a->num[a->k++]);
}

static void cage_argv_build(struct cage_argv *a, const struct cage_run *c,
                            const symdb_build_opts *o)
{
	memset(a, 0, sizeof *a);
	cage_arg(a, cage_exe(o));
	cage_arg_num(a, "--report-fd", IX_CAGE_FD);
	cage_arg(a, "--tag");
	cage_arg(a, c->st->tag);
	cage_arg_num(a, "--parent", (unsigned long long)getpid());
	cage_arg_num(a, "--cpu-limit", c->cpu);
	cage_arg_num(a, "--memory-limit", c->memory);
	if (o->threads)
		cage_arg_num(a, "--threads", o->threads);
	if (o->flags & SYMDB_BUILD_NO_DWARF)
		cage_arg(a, "--no-dwarf");
	if (o->debug_dir) {
		cage_arg(a, "--debug-dir");
		cage_arg(a, o->debug_dir);
	}
	cage_arg(a, "--");
	cage_arg(a, cage_input(a, c->path));
	cage_arg(a, c->st->dir);
	a->v[a->n] = NULL;
}

/* Start symdb-indexer with wfd as its descriptor 3, stdout on /dev/null
 * and no other descriptor of ours.  Returns 0 or -errno. */
static int cage_spawn(struct cage_run *c, const symdb_build_opts *o, int wfd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	struct cage_argv a;
	sigset_t none;
	int rc;

	cage_argv_build(&a, c, o);
	sigemptyset(&none);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_adddup2(&fa, wfd, IX_CAGE_FD);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, IX_CAGE_FD + 1);
	/* The calling thread may block signals the indexer must not. */
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
	rc = -posix_spawn(&c->pid, a.v[0], &fa, &at, a.v, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

/* A tag no other indexer of any live process uses: this process's PID and
 * a counter. */
static void cage_tag(ix_stager *st)
{
	static atomic_uint seq;

	snprintf(st->tag, sizeof st->tag, ".cage-%ld-%u", (long)getpid(),
	         atomic_fetch_add(&seq, 1) + 1);
}

/* The pipe, its write end above descriptor 3 (a dup2 onto itself would
 * keep close-on-exec). */
static int cage_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	if (p[1] <= IX_CAGE_FD) {
		int w = fcntl(p[1], F_DUPFD_CLOEXEC, IX_CAGE_FD + 1);
		if (w < 0) {
			int rc = -errno;
			close(p[0]);
			close(p[1]);
			return rc;
		}
		close(p[1]);
		p[1] = w;
	}
	return 0;
}

int ix_cage_run(ix_stager *st, const char *path, const symdb_build_opts *o)
{
	struct cage_run c;
	siginfo_t si;
	int p[2], rc;

	memset(&c, 0, sizeof c);
	c.st = st;
	c.path = path;
	c.eb = o->errbuf;
	c.ebsz = o->errbuf_sz;
	cage_limits(path, o, &c.memory, &c.timeout);
	/* CPU time adds up over the DWARF walk's threads (ix_dwarf_par.c): the
	 * wall-clock deadline is the timeout; RLIMIT_CPU is only a backstop and
	 * must not fire first on a parallel build. */
	c.cpu = (uint64_t)c.timeout * ix_dwarf_shards(o->threads, SIZE_MAX, UINT64_MAX);
	c.deadline = cage_now_ms() + (int64_t)c.timeout * 1000;
	cage_tag(st);
	rc = cage_pipe(p);
	if (rc)
		return fmt_err(c.eb, c.ebsz, rc, "%s: cannot create a pipe: %s", path,
		               strerror(-rc));
	rc = cage_spawn(&c, o, p[1]);
	close(p[1]);
	if (rc) {
		close(p[0]);
		st->tag[0] = 0;
		return fmt_err(c.eb, c.ebsz, rc, "%s: cannot start the indexer %s: %s", path,
		               cage_exe(o), strerror(-rc));
	}
	cage_collect(&c, p[0]);
	close(p[0]);
	if (c.timed_out || c.bad_report)
		kill(c.pid, SIGKILL);
	cage_wait(&c, &si);
	rc = cage_judge(&c, &si);
	if (rc)
		ix_stage_discard(st);
	else
		cage_remove_tagged(st); /* written but never reported */
	while (waitpid(c.pid, NULL, 0) < 0 && errno == EINTR)
		;
	/* Later discards remove only the files reported to us. */
	st->tag[0] = 0;
	return rc;
}

/* ---- commit: verification and the same-build-id policy ------------------- */

/* The existing index of id: 0 absent; 2 entry whose file is missing or of
 * another size (rebuild, replace); 1 intact, *oi filled (*oimg open). */
static int stage_existing_forms(const rd_cat_entry *e, symdb_image **oimg, symdb_image_info *oi,
                                const char *ipath);

static int stage_existing(rd_catalog *cat, const symdb_uuid *id, symdb_image **oimg,
                          symdb_image_info *oi, char *ipath, size_t ipath_sz)
{
	rd_cat_entry e;
	char buf[1024], dir[4096];
	int lock, rc;

	*oimg = NULL;
	ipath[0] = 0;
	if (rd_catalog_get(cat, id->bytes, id->len, &e, buf, sizeof buf) != 0)
		return 0;
	snprintf(ipath, ipath_sz, "%s/%s", rd_catalog_dir(cat), e.file);
	/* Under the directory lock (SPEC §12.8): a compaction or thaw between
	 * looking for one form and the other must not read as "missing",
	 * which would replace an intact index unconditionally. */
	snprintf(dir, sizeof dir, "%s", ipath);
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = 0;
	lock = rd_images_dir_lock(dir);
	rc = stage_existing_forms(&e, oimg, oi, ipath);
	rd_images_dir_unlock(lock);
	if (rc == 2)
		ipath[0] = 0;
	return rc;
}

/* stage_existing's look at both forms of e's file (ipath). */
static int stage_existing_forms(const rd_cat_entry *e, symdb_image **oimg, symdb_image_info *oi,
                                const char *ipath)
{
	struct stat st;

	if (stat(ipath, &st) == 0 && (uint64_t)st.st_size == e->file_size) {
		if (symdb_image_open_file(ipath, NULL, oimg) == 0) {
			symdb_image_get_info(*oimg, oi);
			return 1;
		}
	} else if (ix_cold_indexed(ipath, e->file_size)) {
		/* Compacted (§12.8): its facts come from the cold form,
		 * decompressed in memory; nothing is thawed on disk. */
		char lz[4096 + 8];
		snprintf(lz, sizeof lz, "%s.lz4", ipath);
		if (symdb_image_open_file(lz, NULL, oimg) == 0) {
			symdb_image_get_info(*oimg, oi);
			return 1;
		}
	}
	return 2;
}

/* Was the existing index built from these bytes?  An input is identified by
 * Source_XXH3 and, when a separate debug file was used, Debug_XXH3 (§7.7):
 * a stripped binary and its .debug file share a build-id, and an index of
 * either, built with the other, is the same image.  An index without
 * Source_XXH3 (an older writer) is taken as the same, as before. */
static int stage_same(const symdb_image_info *oi, uint64_t src, uint64_t dbg)
{
	uint64_t os, od;

	if (oi->nbuild_info <= FMT_BI_SOURCE_XXH3 || !oi->build_info[FMT_BI_SOURCE_XXH3])
		return 1;
	os = oi->build_info[FMT_BI_SOURCE_XXH3];
	od = oi->nbuild_info > FMT_BI_DEBUG_XXH3 ? oi->build_info[FMT_BI_DEBUG_XXH3] : 0;
	return src == os || (od && src == od) || (dbg && (dbg == os || dbg == od));
}

/* Open and check one staged file as untrusted input.  symdb_image_verify
 * checks every table checksum before anything else, so open is not asked to
 * (SYMDB_OPEN_VERIFY_CHECKSUMS would hash the whole file a second time);
 * open alone already validates every offset and length, as for any reader. */
static int stage_verify(const ix_staged *r, const ix_expect *ex, int verify, const char *path,
                        symdb_image **img, symdb_image_info *info, char *eb, size_t ebsz)
{
	SYMDB_OPTS(symdb_open_opts, oo, .flags = 0);
	char why[512] = "";
	struct stat st;
	unsigned k;
	int rc;

	*img = NULL;
	oo.errbuf = why;
	oo.errbuf_sz = sizeof why;
	if (lstat(r->tmp, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "%s: indexer output rejected: %s is not a plain file", path, r->tmp);
	rc = symdb_image_open_file(r->tmp, &oo, img);
	if (rc == 0 && verify)
		rc = symdb_image_verify(*img, why, sizeof why);
	if (rc)
		return fmt_err(eb, ebsz, rc, "%s: indexer output rejected: %s", path,
		               why[0] ? why : symdb_strerror(rc));
	symdb_image_get_info(*img, info);
	for (k = 0; k < ex->n; k++)
		if (ex->uuid[k].len == info->uuid.len &&
		    !memcmp(ex->uuid[k].bytes, info->uuid.bytes, info->uuid.len))
			break;
	if (info->file_size != (uint64_t)st.st_size || k == ex->n ||
	    info->uuid.len != r->uuid.len || memcmp(info->uuid.bytes, r->uuid.bytes, r->uuid.len))
		return fmt_err(eb, ebsz, SYMDB_E_CORRUPT,
		               "%s: indexer output rejected: %s", path,
		               k == ex->n ? "UUID is not one of the input's"
		                          : "size or UUID differs from its report");
	return 0;
}

enum stage_action { ST_PUBLISH, ST_REPLACE, ST_UPGRADE, ST_SAME, ST_RICHER, ST_CONFLICT };

/* How much an image carries (§12.5): 2 DWARF; 1 a full symbol table; 0 only
 * .dynsym (a fully stripped file).  An index of an earlier writer (no
 * Symbol_Source) without DWARF counts as 1. */
static int stage_rank(const symdb_image_info *i)
{
	if (i->flags & FMT_FLAG_HAS_DWARF)
		return 2;
	if (i->nbuild_info > FMT_BI_SYMBOL_SOURCE &&
	    i->build_info[FMT_BI_SYMBOL_SOURCE] == FMT_BI_SYMSRC_DYNSYM)
		return 0;
	return 1;
}

static enum stage_action stage_decide(rd_catalog *cat, const symdb_image_info *ni,
                                      const symdb_build_opts *o, char *ipath, size_t ipath_sz,
                                      symdb_image_info *oi)
{
	symdb_image *oimg = NULL;
	enum stage_action a;
	int state = stage_existing(cat, &ni->uuid, &oimg, oi, ipath, ipath_sz);
	const int nr = stage_rank(ni);

	if (state != 1)
		a = state == 0 ? ST_PUBLISH : ST_REPLACE;
	else if (o->flags & SYMDB_BUILD_FORCE)
		a = ST_REPLACE;
	else if (stage_same(oi, ni->build_info[FMT_BI_SOURCE_XXH3],
	                    ni->build_info[FMT_BI_DEBUG_XXH3]))
		a = ST_SAME;
	else if (nr > stage_rank(oi))
		a = ST_UPGRADE; /* strictly more: DWARF, or a full symbol table */
	else if (nr < stage_rank(oi))
		a = ST_RICHER;  /* the index already carries more */
	else
		a = ST_CONFLICT;
	symdb_image_close(oimg); /* oi's numbers stay; its strings are not used */
	return a;
}

static void stage_fill(symdb_build_result *res, unsigned i, const ix_staged *r,
                       const symdb_image_info *info, int skipped, int replaced,
                       const char *ipath, const symdb_image_info *oi, int is_macho)
{
	if (is_macho) {
		symdb_build_image *bi = &res->images[i];
		bi->uuid = info->uuid;
		bi->skipped = skipped;
		bi->replaced = replaced;
		snprintf(bi->arch, sizeof bi->arch, "%s", r->arch);
		res->nimages = i + 1;
	}
	if (i)
		return;
	res->uuid = info->uuid;
	res->skipped = skipped;
	res->replaced = replaced;
	snprintf(res->index_path, sizeof res->index_path, "%s", ipath);
	if (skipped) {
		res->file_size = oi->file_size;
		return;
	}
	res->file_size = info->file_size;
	res->nsymbols = info->nsymbols;
	res->nline_rows = info->nline_rows;
	res->ninline_nodes = info->ninline_nodes;
	snprintf(res->debug_path, sizeof res->debug_path, "%s", r->debug_path);
}

/* Apply the policy to one verified image and publish it. */
static int stage_publish_one(rd_catalog *cat, ix_staged *r, symdb_image *img,
                             const symdb_image_info *info, unsigned i, const char *path,
                             const ix_expect *ex, const symdb_build_opts *o,
                             symdb_build_result *res)
{
	char ipath[4096], hex[2 * SYMDB_UUID_MAX + 1];
	symdb_image_info oi;
	rd_cat_entry e;
	int rc, raced = 0;
	enum stage_action a;

	memset(&oi, 0, sizeof oi);
	a = stage_decide(cat, info, o, ipath, sizeof ipath, &oi);
	(void)img;
	if (a == ST_SAME || a == ST_RICHER || a == ST_CONFLICT) {
		unlink(r->tmp);
		r->tmp[0] = 0;
		stage_fill(res, i, r, info, 1, 0, ipath, &oi, ex->is_macho);
		if (a != ST_CONFLICT)
			return 0;
		symdb_uuid_format(&info->uuid, hex);
		return fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_EXISTS,
		               "%s: build-id %s is already indexed from different contents "
		               "(%llu bytes, xxh3 %016llx); kept the existing index "
		               "(use --force to replace)",
		               path, hex, (unsigned long long)oi.build_info[FMT_BI_SOURCE_SIZE],
		               (unsigned long long)oi.build_info[FMT_BI_SOURCE_XXH3]);
	}
	rc = ix_entry_from_file(r->tmp, info, &e);
	if (rc) {
		unlink(r->tmp);
		r->tmp[0] = 0;
		return fmt_err(o->errbuf, o->errbuf_sz, rc, "%s: cannot read header: %s", path,
		               symdb_strerror(rc));
	}
	rc = ix_publish_tmp(cat, &e, r->tmp, a == ST_PUBLISH, &raced, ipath, sizeof ipath,
	                    o->errbuf, o->errbuf_sz);
	r->tmp[0] = 0; /* renamed or removed */
	if (rc == 0)
		stage_fill(res, i, r, info, raced,
		           a != ST_UPGRADE ? 0 : stage_rank(&oi) == 0 && stage_rank(info) == 1 ? 2 : 1,
		           ipath, &oi, ex->is_macho);
	return rc;
}

int ix_stage_commit(rd_catalog *cat, ix_stager *st, const char *path, const ix_expect *ex,
                    const symdb_build_opts *o, int verify, symdb_build_result *res)
{
	symdb_image *img[SYMDB_BUILD_MAX_IMAGES] = { 0 };
	symdb_image_info *info = calloc(SYMDB_BUILD_MAX_IMAGES, sizeof *info);
	int rc = 0, first = 0;
	unsigned i, k;

	if (!info)
		rc = fmt_err(o->errbuf, o->errbuf_sz, -ENOMEM, "%s: out of memory", path);
	else if (st->n == 0)
		rc = fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_BAD_OBJECT,
		             "%s: indexer produced no image", path);
	else if (!ex->is_macho && st->n != 1)
		rc = fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_CORRUPT,
		             "%s: indexer output rejected: %u images for one ELF file", path, st->n);
	/* All or nothing: every image is checked before any is published. */
	for (i = 0; rc == 0 && i < st->n; i++) {
		rc = stage_verify(&st->img[i], ex, verify, path, &img[i], &info[i], o->errbuf,
		                  o->errbuf_sz);
		for (k = 0; rc == 0 && k < i; k++)
			if (info[k].uuid.len == info[i].uuid.len &&
			    !memcmp(info[k].uuid.bytes, info[i].uuid.bytes, info[i].uuid.len))
				rc = fmt_err(o->errbuf, o->errbuf_sz, SYMDB_E_CORRUPT,
				             "%s: indexer output rejected: one UUID twice", path);
	}
	/* A conflict keeps that image's index and goes on with the others; the
	 * first conflict's message is the one reported. */
	for (i = 0; rc == 0 && i < st->n; i++) {
		char keep[1024] = "";
		int r1;
		if (first && o->errbuf_sz)
			snprintf(keep, sizeof keep, "%s", o->errbuf);
		r1 = stage_publish_one(cat, &st->img[i], img[i], &info[i], i, path, ex, o, res);
		if (r1 == SYMDB_E_EXISTS) {
			if (first && o->errbuf_sz)
				snprintf(o->errbuf, o->errbuf_sz, "%s", keep);
			first = 1;
		} else if (r1) {
			rc = r1;
		}
	}
	for (i = 0; i < SYMDB_BUILD_MAX_IMAGES; i++)
		symdb_image_close(img[i]);
	free(info);
	ix_stage_discard(st);
	return rc ? rc : first ? SYMDB_E_EXISTS : 0;
}

/* ---- the fast path ----------------------------------------------------------- */

/* XXH3 of each image's bytes: the file for ELF, each slice for Mach-O (the
 * same bytes a thin file extracted from a universal one has). */
static int stage_hashes(const char *path, const ix_expect *ex, uint64_t *h)
{
	fmt_mo_slice sl[FMT_MO_MAX_SLICES];
	struct stat st;
	uint8_t *p;
	int fd, n, rc = 0;

	if (!ex->is_macho)
		return ix_file_xxh3(path, NULL, &h[0]) == 0 && ex->n == 1;
	if (ex->is_dsym)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || st.st_size < 8) {
		close(fd);
		return 0;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 0;
	n = fmt_mo_slices(p, (uint64_t)st.st_size, sl, FMT_MO_MAX_SLICES, path, NULL, 0);
	if (n > 0 && (unsigned)n == ex->n) {
		for (int i = 0; i < n; i++)
			h[i] = XXH3_64bits(p + sl[i].offset, (size_t)sl[i].size);
		rc = 1;
	}
	munmap(p, (size_t)st.st_size);
	return rc;
}

int ix_stage_unchanged(rd_catalog *cat, const char *path, const ix_expect *ex,
                       symdb_build_result *res)
{
	uint64_t h[SYMDB_BUILD_MAX_IMAGES];
	char ipath[4096], dsym[4200], buf[1024];
	symdb_image_info oi;
	symdb_image *oimg;
	rd_cat_entry e;
	unsigned i;

	if (ex->n == 0)
		return 0;
	/* Hashing is a pass over the whole input (7 ms for 23 MB): a first
	 * build, which has no entry to compare with, skips it. */
	for (i = 0; i < ex->n; i++)
		if (rd_catalog_get(cat, ex->uuid[i].bytes, ex->uuid[i].len, &e, buf, sizeof buf) != 0)
			return 0;
	if (!stage_hashes(path, ex, h))
		return 0;
	/* A companion BINARY.dSYM may bring DWARF the index lacks. */
	snprintf(dsym, sizeof dsym, "%s.dSYM", path);
	for (i = 0; i < ex->n; i++) {
		int state = stage_existing(cat, &ex->uuid[i], &oimg, &oi, ipath, sizeof ipath);
		int same = state == 1 && stage_same(&oi, h[i], 0) &&
		           !(ex->is_macho && !(oi.flags & FMT_FLAG_HAS_DWARF) &&
		             access(dsym, F_OK) == 0);
		symdb_image_close(oimg);
		if (!same)
			return 0;
		if (ex->is_macho) {
			res->images[i].uuid = ex->uuid[i];
			res->images[i].skipped = 1;
			memcpy(res->images[i].arch, ex->arch[i], sizeof res->images[i].arch);
			res->images[i].arch[sizeof res->images[i].arch - 1] = 0;
			res->nimages = i + 1;
		}
		if (i == 0) {
			res->uuid = ex->uuid[0];
			res->skipped = 1;
			res->file_size = oi.file_size;
			snprintf(res->index_path, sizeof res->index_path, "%s", ipath);
		}
	}
	return 1;
}
