/* SPDX-License-Identifier: MIT */
/*
 * ix_cage.c - staging, the cage, and the commit of staged images
 * (SPEC §12.5).
 *
 * The cage: the ELF, Mach-O and DWARF parsers (libelf, libdwarf, our own)
 * are the code that reads untrusted bytes in depth, and libdwarf may abort()
 * on an error it does not handle.  With SYMDB_BUILD_ISOLATE they run in a
 * child forked per input, under RLIMIT_AS / RLIMIT_FSIZE (memory and output),
 * RLIMIT_CPU and a wall-clock deadline, with RLIMIT_CORE 0.  The child writes
 * each image's index file to DB/tmp/UUIDHEX.cage-PID.XXXXXX and sends one
 * fixed-layout record per image over a pipe, then an end record with its
 * status.  Parent and child are the same executable image, so the records
 * are plain structs; the parent still checks every field it uses.
 *
 * The parent never trusts what it reads: a record's temp path must be the
 * name the child was told to use; the file must be a regular file with one
 * link; it is opened with every checksum verified and every invariant
 * checked (symdb_image_verify), its UUID must be one the parent computed
 * from the input with the reader's (fuzzed) code.  Only then is it published
 * (ix_publish_tmp), from the parent, which owns the catalog.  Whatever the
 * child left behind - a record it never sent, a crash mid-write - carries
 * its tag and is removed by name before the child is reaped (so its PID,
 * and with it the tag, cannot have been reused yet).
 *
 * Forking from a threaded process: the child runs only malloc (glibc resets
 * its arenas' locks in the child), its own descriptors, snprintf, and the
 * parsers; libelf's pthread_once is run before the fork; the child never
 * touches LMDB.  It closes every inherited descriptor but stdio and its pipe,
 * so the pipes of other workers' children reach EOF when those children
 * exit, not when this one does.  PR_SET_PDEATHSIG kills it when the forking
 * thread (so the builder) dies; getppid() closes the race with a parent that
 * died before the prctl.
 */
#define _GNU_SOURCE /* close_range, pipe2, sigdescr_np */
#include "ix_cage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format_header.h"
#include "fmt_macho.h"
#include "ix_dwarf_par.h"

#include <xxhash.h>

#if defined(__SANITIZE_ADDRESS__)
#define IX_CAGE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IX_CAGE_ASAN 1
#endif
#endif

#define IX_CAGE_IMAGE 0x53594931u /* "SYI1": one staged image */
#define IX_CAGE_END 0x53594945u   /* "SYIE": the child's status */
#define IX_CAGE_MIN_MEMORY (8ull << 30)
#define IX_CAGE_MIN_TIMEOUT 120u
#define IX_CAGE_FD 3

typedef struct ix_cage_msg {
	uint32_t magic;
	int32_t rc;
	ix_staged img;
	char msg[1024];
} ix_cage_msg;

/* ---- staging -------------------------------------------------------------- */

static int cage_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -errno;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int cage_send(int fd, uint32_t magic, int rc, const ix_staged *img, const char *msg)
{
	ix_cage_msg m;

	memset(&m, 0, sizeof m);
	m.magic = magic;
	m.rc = rc;
	if (img)
		m.img = *img;
	snprintf(m.msg, sizeof m.msg, "%s", msg ? msg : "");
	return cage_write_all(fd, &m, sizeof m);
}

/* Test-only failures of the child (SYMDB_TEST_CAGE_CRASH, documented in
 * README "Tests"): fired after a temp file is written and before it is
 * reported, so the parent's cleanup by tag is exercised too. */
static int cage_test_hook(const char *what, char *eb, size_t ebsz)
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
	if (st->test_hook && (rc = cage_test_hook(st->test_hook, eb, ebsz)) != 0)
		return rc;
	rc = cage_send(st->fd, IX_CAGE_IMAGE, 0, r, NULL);
	return rc ? fmt_err(eb, ebsz, rc, "cannot report to the parent: %s", symdb_strerror(rc))
	          : 0;
}

/* Remove DB/tmp/<anything><tag>.XXXXXX (tag ".cage-PID") except the files
 * st lists. */
static void cage_remove_tagged(const ix_stager *st)
{
	char tmpdir[4096], f[4096 + 260];
	const char *tag = st->tag;
	size_t tl = strlen(tag);
	struct dirent *de;
	DIR *dp;

	if (!tl || (size_t)snprintf(tmpdir, sizeof tmpdir, "%s/tmp", st->dir) >= sizeof tmpdir)
		return;
	dp = opendir(tmpdir);
	while (dp && (de = readdir(dp)) != NULL) {
		const char *t = strstr(de->d_name, tag);
		if (!t || t[tl] != '.')
			continue;
		snprintf(f, sizeof f, "%s/%s", tmpdir, de->d_name);
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

/* ---- the child ------------------------------------------------------------ */

static void cage_limit(int res, uint64_t v)
{
	struct rlimit r = { (rlim_t)v, (rlim_t)v };
	setrlimit(res, &r);
}

/* This process's address-space size (VmSize), which a forked child
 * inherits; 0 when /proc is not there. */
static uint64_t cage_vm_size(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%llu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

static _Noreturn void cage_child(ix_stager *st, const char *path, const symdb_build_opts *o,
                                 int wfd, pid_t parent, uint64_t memory, uint64_t inherited,
                                 uint64_t cpu)
{
	char eb[1024] = "";
	symdb_build_opts co = *o;
	int nul, rc;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	if (wfd != IX_CAGE_FD && dup2(wfd, IX_CAGE_FD) < 0)
		_exit(127);
	/* Inherited descriptors (other workers' pipes, directory locks, LMDB)
	 * must not outlive the parse in here. */
	if (close_range(IX_CAGE_FD + 1, ~0u, 0) < 0) {
		long max = sysconf(_SC_OPEN_MAX);
		for (long fd = IX_CAGE_FD + 1; fd < (max > 0 ? max : 65536); fd++)
			close((int)fd);
	}
	/* libdwarf prints on stdout before it aborts: keep stdout clean. */
	nul = open("/dev/null", O_WRONLY);
	if (nul >= 0) {
		dup2(nul, STDOUT_FILENO);
		if (nul != STDOUT_FILENO)
			close(nul);
	}
	cage_limit(RLIMIT_CORE, 0);
	cage_limit(RLIMIT_CPU, cpu);
#ifndef IX_CAGE_ASAN
	/* The limit is for the parse: the address space inherited from the
	 * parent (thread stacks, malloc arenas, the LMDB map) comes on top. */
	cage_limit(RLIMIT_AS, memory + inherited);
#else
	(void)inherited;
#endif
	/* The index is built in memory before it is written, so its size is
	 * bounded by the address-space limit: reuse it for the output. */
	cage_limit(RLIMIT_FSIZE, memory);
	signal(SIGXFSZ, SIG_IGN); /* write() fails with EFBIG instead */
	signal(SIGPIPE, SIG_IGN);
	st->fd = IX_CAGE_FD;
	snprintf(st->tag, sizeof st->tag, ".cage-%ld", (long)getpid());
	st->test_hook = getenv("SYMDB_TEST_CAGE_CRASH");
	co.errbuf = eb;
	co.errbuf_sz = sizeof eb;
	co.flags &= ~SYMDB_BUILD_ISOLATE;
	rc = ix_stage_input(st, path, &co);
	cage_send(IX_CAGE_FD, IX_CAGE_END, rc, NULL, eb);
	_exit(0);
}

/* ---- the parent ----------------------------------------------------------- */

struct cage_run {
	ix_stager *st;
	const char *path;
	pid_t pid;
	unsigned timeout;
	uint64_t cpu; /* RLIMIT_CPU: the timeout times the walk's threads */
	int64_t deadline; /* cage_now_ms() by which the child must be done */
	uint64_t memory;
	int got_end, end_rc, timed_out, bad_report;
	char end_msg[1024];
	char *eb;
	size_t ebsz;
};

static int64_t cage_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A record's temp path must be exactly the name the child was told to use:
 * DIR/tmp/UUIDHEX.cage-PID.XXXXXX for the record's UUID. */
static int cage_path_ok(const struct cage_run *c, const ix_staged *r)
{
	char hex[2 * FMT_UUID_MAX + 1], want[4200];
	size_t wl;

	if (r->uuid.len == 0 || r->uuid.len > FMT_UUID_MAX)
		return 0;
	symdb_uuid_format(&r->uuid, hex);
	wl = (size_t)snprintf(want, sizeof want, "%s/tmp/%s%s.", c->st->dir, hex, c->st->tag);
	return wl < sizeof want && !strncmp(r->tmp, want, wl) && strlen(r->tmp) == wl + 6 &&
	       !strchr(r->tmp + wl, '/');
}

static void cage_terminate(ix_staged *r)
{
	r->arch[sizeof r->arch - 1] = 0;
	r->tmp[sizeof r->tmp - 1] = 0;
	r->debug_path[sizeof r->debug_path - 1] = 0;
}

/* One complete record from the child. */
static void cage_take(struct cage_run *c, ix_cage_msg *m)
{
	cage_terminate(&m->img);
	m->msg[sizeof m->msg - 1] = 0;
	if (m->magic == IX_CAGE_END && !c->got_end) {
		c->got_end = 1;
		c->end_rc = m->rc > 0 ? SYMDB_E_BAD_OBJECT : m->rc;
		/* One line: the message came from the untrusted side. */
		for (char *p = m->msg; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
		snprintf(c->end_msg, sizeof c->end_msg, "%s", m->msg);
	} else if (m->magic == IX_CAGE_IMAGE && !c->got_end &&
	           c->st->n < SYMDB_BUILD_MAX_IMAGES && cage_path_ok(c, &m->img)) {
		c->st->img[c->st->n++] = m->img;
	} else {
		c->bad_report = 1;
	}
}

/* Read records until EOF, a bad record or the deadline. */
static void cage_collect(struct cage_run *c, int fd)
{
	ix_cage_msg *m = malloc(sizeof *m);
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
		n = read(fd, (char *)m + have, sizeof *m - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (have)
				c->bad_report = 1; /* a torn record */
			break;
		}
		have += (size_t)n;
		if (have == sizeof *m) {
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

/* Map how the child ended to one line naming the input. */
static int cage_judge(struct cage_run *c, const siginfo_t *si)
{
	const char *p = c->path;
	char lim[64];

	cage_size(lim, sizeof lim, c->memory);
	if (c->timed_out)
		return fmt_err(c->eb, c->ebsz, -ETIMEDOUT, "%s: indexer timed out after %u s", p,
		               c->timeout);
	if (si->si_code == CLD_KILLED || si->si_code == CLD_DUMPED) {
		int sig = si->si_status;
		const char *d = sigdescr_np(sig);
		if (!d)
			d = "unknown signal";
		if (sig == SIGXCPU)
			return fmt_err(c->eb, c->ebsz, -ETIMEDOUT,
			               "%s: indexer exceeded its CPU-time limit of %u s: signal %d (%s)",
			               p, (unsigned)c->cpu, sig, d);
		if (sig == SIGABRT)
			return fmt_err(c->eb, c->ebsz, SYMDB_E_BAD_OBJECT,
			               "%s: indexer aborted (libdwarf abort): signal %d (%s)", p, sig, d);
		if (sig == SIGKILL)
			return fmt_err(c->eb, c->ebsz, SYMDB_E_BAD_OBJECT,
			               "%s: indexer was killed: signal %d (%s)", p, sig, d);
		return fmt_err(c->eb, c->ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: indexer crashed: signal %d (%s)", p, sig, d);
	}
	if (si->si_code == CLD_EXITED && si->si_status != 0)
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

/* Wait for the child to end without reaping it (the tag cleanup needs its
 * PID to stay ours).  A child that closed its pipe but keeps running is
 * given until the deadline, then killed: EOF is not an exit. */
static void cage_wait(struct cage_run *c, siginfo_t *si)
{
	long nap = 100 * 1000; /* ns; doubles up to 50 ms: a child exits right after EOF */

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

int ix_cage_run(ix_stager *st, const char *path, const symdb_build_opts *o)
{
	struct cage_run c;
	siginfo_t si;
	pid_t self = getpid();
	uint64_t inherited;
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
	if (pipe2(p, O_CLOEXEC) < 0)
		return fmt_err(c.eb, c.ebsz, -errno, "%s: cannot create a pipe: %s", path,
		               strerror(errno));
	ix_elf_init();
	inherited = cage_vm_size();
	c.pid = fork();
	if (c.pid < 0) {
		rc = -errno;
		close(p[0]);
		close(p[1]);
		return fmt_err(c.eb, c.ebsz, rc, "%s: cannot fork the indexer: %s", path,
		               strerror(-rc));
	}
	if (c.pid == 0) {
		close(p[0]);
		cage_child(st, path, o, p[1], self, c.memory, inherited, c.cpu);
	}
	close(p[1]);
	snprintf(st->tag, sizeof st->tag, ".cage-%ld", (long)c.pid);
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
	/* Reaped: the PID, and so the tag, may now name another builder's
	 * child.  Later discards remove only the files reported to us. */
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
