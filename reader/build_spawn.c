/* SPDX-License-Identifier: MIT */
/*
 * build_spawn.c - the cage (SPEC §12.5): run the symdb-indexer executable
 * on one input and collect what it staged.
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
 * published (publish_commit.c), from the parent, which owns the catalog.
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
#include "publish_internal.h"

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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format_header.h"
#include "format_layout.h"
#include "format_report.h"

#define CAGE_MIN_MEMORY (8ull << 30)
#define CAGE_MIN_TIMEOUT 120u
#define CAGE_FD 3 /* the indexer's report descriptor */

extern char **environ;

/* ---- leftovers -------------------------------------------------------------- */

/* Remove STAGING/<anything><tag>.XXXXXX except the files st lists. */
static void cage_remove_tagged(const publish_stager *st)
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

void build_stage_discard(publish_stager *st)
{
	for (unsigned i = 0; i < st->n; i++)
		if (st->img[i].tmp[0])
			unlink(st->img[i].tmp);
	st->n = 0;
	cage_remove_tagged(st);
}

/* ---- the parent ----------------------------------------------------------- */

struct cage_run {
	publish_stager *st;
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
	if (fmt_layout_staged(want, sizeof want, c->st->dir, hex, c->st->tag))
		return 0;
	/* the same name up to mkstemp's six characters, which must not add a
	 * directory */
	wl = strlen(want) - (sizeof FMT_LAYOUT_TMP_SUFFIX - 2);
	return !strncmp(r->tmp, want, wl) && strlen(r->tmp) == strlen(want) &&
	       !strchr(r->tmp + wl, '/');
}

/* An image record, as the commit reads it. */
static void cage_staged(publish_staged *s, const fmt_report *r)
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
		*memory = size > CAGE_MIN_MEMORY / 64 ? size * 64 : CAGE_MIN_MEMORY;
	*timeout = o->timeout_s;
	if (!*timeout)
		*timeout = CAGE_MIN_TIMEOUT + (unsigned)((size >> 20) > 86400 ? 86400 : size >> 20);
}

/* The most threads the indexer's DWARF walk may use: the rule of
 * ix_dwarf_shards (ix_dwarf_par.c) for an input of unknown size - the
 * caller's count, at most 64; by default the online CPUs, at most 8. */
static uint64_t cage_walk_threads(unsigned threads)
{
	long n = threads;

	if (!n) {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		n = n < 1 ? 1 : n > 8 ? 8 : n;
	}
	return (uint64_t)(n > 64 ? 64 : n);
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
	char uuid[8 + 2 * SYMDB_UUID_MAX];
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

/* --uuid KIND:HEX: the UUID this process computed for an ELF input, so
 * the indexer needs no identity code of its own and both sides agree. */
static void cage_arg_uuid(struct cage_argv *a, const publish_expect *ex)
{
	char hex[2 * SYMDB_UUID_MAX + 1];

	if (ex->is_macho || ex->n != 1)
		return;
	symdb_uuid_format(&ex->uuid[0], hex);
	snprintf(a->uuid, sizeof a->uuid, "%u:%s", (unsigned)ex->uuid[0].kind, hex);
	cage_arg(a, "--uuid");
	cage_arg(a, a->uuid);
}

static void cage_argv_build(struct cage_argv *a, const struct cage_run *c,
                            const publish_expect *ex, const symdb_build_opts *o)
{
	memset(a, 0, sizeof *a);
	cage_arg(a, cage_exe(o));
	cage_arg_num(a, "--report-fd", CAGE_FD);
	cage_arg(a, "--tag");
	cage_arg(a, c->st->tag);
	cage_arg_num(a, "--parent", (unsigned long long)getpid());
	cage_arg_num(a, "--cpu-limit", c->cpu);
	cage_arg_num(a, "--memory-limit", c->memory);
	cage_arg_uuid(a, ex);
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
static int cage_spawn(struct cage_run *c, const publish_expect *ex, const symdb_build_opts *o,
                      int wfd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	struct cage_argv a;
	sigset_t none;
	int rc;

	cage_argv_build(&a, c, ex, o);
	sigemptyset(&none);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_adddup2(&fa, wfd, CAGE_FD);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, CAGE_FD + 1);
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
static void cage_tag(publish_stager *st)
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
	if (p[1] <= CAGE_FD) {
		int w = fcntl(p[1], F_DUPFD_CLOEXEC, CAGE_FD + 1);
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

int build_spawn_run(publish_stager *st, const char *path, const publish_expect *ex,
                    const symdb_build_opts *o)
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
	c.cpu = (uint64_t)c.timeout * cage_walk_threads(o->threads);
	c.deadline = cage_now_ms() + (int64_t)c.timeout * 1000;
	cage_tag(st);
	rc = cage_pipe(p);
	if (rc)
		return fmt_err(c.eb, c.ebsz, rc, "%s: cannot create a pipe: %s", path,
		               strerror(-rc));
	rc = cage_spawn(&c, ex, o, p[1]);
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
		build_stage_discard(st);
	else
		cage_remove_tagged(st); /* written but never reported */
	while (waitpid(c.pid, NULL, 0) < 0 && errno == EINTR)
		;
	/* Later discards remove only the files reported to us. */
	st->tag[0] = 0;
	return rc;
}
