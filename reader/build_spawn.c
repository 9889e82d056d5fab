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
 * parent enforces a wall-clock deadline.
 *
 * The indexer is given descriptors, never paths (SPEC §12.5): the input
 * and its debug file candidates as the builder opened them
 * (build_inputs.c), and one output file per expected image, created here
 * as DB/tmp/UUIDHEX.cage-PID-N.XXXXXX.  It writes each image's index file
 * into the output of its UUID and sends one record per image
 * (format_report.h) on descriptor 3, then an end record with its status.
 *
 * The parent never trusts what it reads: a record must name an output not
 * named before, of the record's UUID; the file is read back through the
 * parent's own descriptor (publish_commit.c), must be a regular file with
 * one link, is checked with every checksum and invariant
 * (symdb_image_verify), and its UUID must be one the parent computed from
 * the input with the reader's (fuzzed) code.  Only then is it published,
 * from the parent, which owns the catalog.  An output never reported is
 * removed; so is anything else carrying the indexer's tag.
 *
 * posix_spawn (a vfork-like clone, then exec) runs no code of ours in the
 * child, so it is safe from a threaded process whatever its allocator.  The
 * child gets stderr, stdin and stdout on /dev/null (libdwarf prints there
 * before it aborts), its report pipe as descriptor 3, the build's files as
 * 4, 5, ... and nothing else: other workers' pipes reach EOF when their own
 * indexers exit.  It gets no environment and a process group of its own,
 * which a timeout kills whole.  The indexer sets PR_SET_PDEATHSIG and
 * checks its parent, so it dies with the thread (so the builder) that
 * started it, then confines itself with more limits and a seccomp filter
 * (tools/indexer_sandbox.c); a call the filter forbids kills it by SIGSYS
 * after an end record naming the call, which cage_judge reports.
 *
 * A fetch's cancel flag (symdb_fetch_opts.cancel) ends a run the way the
 * deadline does: the waits below look at it every CAGE_TICK_MS, kill the
 * group, reap the indexer and remove what it staged.
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
#include <sys/resource.h>
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
/* How often the waits look at the cancel flag: a signal handler in another
 * thread (a server stopping) does not interrupt this thread's poll. */
#define CAGE_TICK_MS 100
#define CAGE_STR_(x) #x
#define CAGE_STR(x) CAGE_STR_(x)

/* ---- leftovers -------------------------------------------------------------- */

/* Remove tmp, a file in STAGING (DB/tmp), through STAGING's descriptor:
 * DB/tmp is never followed (SPEC §12.1). */
static void stage_unlink(const publish_stager *st, const char *tmp)
{
	int fd = open(st->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	const char *base = strrchr(tmp, '/');

	if (fd >= 0) {
		unlinkat(fd, base ? base + 1 : tmp, 0);
		close(fd);
	}
}

/* Remove STAGING/<anything><tag>.XXXXXX except the files st lists. */
static void cage_remove_tagged(const publish_stager *st)
{
	char f[4096 + 260];
	const char *tag = st->tag;
	size_t tl = strlen(tag);
	struct dirent *de;
	DIR *dp;
	int fd;

	if (!tl)
		return;
	/* DB/tmp by its descriptor, never followed (SPEC §12.1). */
	fd = open(st->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	dp = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dp && fd >= 0)
		close(fd);
	while (dp && (de = readdir(dp)) != NULL) {
		const char *t = strstr(de->d_name, tag);
		if (!t || t[tl] != '.')
			continue;
		snprintf(f, sizeof f, "%s/%s", st->dir, de->d_name);
		unsigned i = 0;
		while (i < st->n && strcmp(st->img[i].tmp, f) != 0)
			i++;
		if (i == st->n)
			unlinkat(fd, de->d_name, 0);
	}
	if (dp)
		closedir(dp);
}

void build_stage_discard(publish_stager *st)
{
	for (unsigned i = 0; i < st->n; i++) {
		if (st->img[i].tmp[0])
			stage_unlink(st, st->img[i].tmp);
		if (st->img[i].fd >= 0)
			close(st->img[i].fd);
		st->img[i].tmp[0] = 0;
		st->img[i].fd = -1;
	}
	st->n = 0;
	cage_remove_tagged(st);
}

/* ---- the parent ----------------------------------------------------------- */

/* Split DWARF (SPEC §12.5): the .dwo paths the indexer asked for (want
 * records), and those this process opened for the second run. */
struct cage_dwo {
	char (*want)[FMT_REPORT_PATH_SZ];
	unsigned nwant;
	publish_fd *fds;
	unsigned nfds;
	int pass; /* the second run: the indexer asks for nothing more */
};

struct cage_run {
	publish_stager *st;
	struct cage_dwo *dwo;
	const char *path;
	const publish_input *in;
	pid_t pid;
	unsigned timeout;
	uint64_t cpu; /* RLIMIT_CPU: the timeout times the walk's threads */
	int64_t deadline; /* cage_now_ms() by which the indexer must be done */
	const volatile sig_atomic_t *cancel; /* killed too once *cancel != 0 (or NULL) */
	uint64_t memory;
	int got_end, end_rc, timed_out, cancelled, bad_report;
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

/* Whether *cancel is set, loaded atomically as rd_fetch_cancelled() does:
 * another thread stores it. */
static int cage_cancel_set(const volatile sig_atomic_t *cancel)
{
	return cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED) != 0;
}

/* A record must name an output we created, not named before, for the
 * record's UUID. */
static int cage_output_ok(const struct cage_run *c, const fmt_report *r)
{
	const publish_staged *s;

	if (r->output >= c->st->n)
		return 0;
	s = &c->st->img[r->output];
	return !s->reported && r->uuid_len != 0 && r->uuid_len == s->uuid.len &&
	       !memcmp(r->uuid, s->uuid.bytes, r->uuid_len);
}

/* An image record, as the commit reads it: its output now holds an index. */
static void cage_staged(publish_staged *s, const fmt_report *r)
{
	s->reported = 1;
	snprintf(s->arch, sizeof s->arch, "%s", r->arch);
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
		/* The message came from the untrusted side: escaped into one
		 * line, as fmt_err would (the indexer's own fmt_err escaped it
		 * already, and escaping again changes nothing then). */
		fmt_escape(c->end_msg, sizeof c->end_msg, m.msg, strnlen(m.msg, sizeof m.msg));
	} else if (m.magic == FMT_REPORT_IMAGE && !c->got_end && cage_output_ok(c, &m)) {
		cage_staged(&c->st->img[m.output], &m);
	} else if (m.magic == FMT_REPORT_WANT && !c->got_end && !c->dwo->pass &&
	           c->dwo->nwant < FMT_REPORT_MAX_WANTS && m.debug_path[0]) {
		struct cage_dwo *d = c->dwo;
		if (!d->want)
			d->want = malloc(FMT_REPORT_MAX_WANTS * sizeof *d->want);
		if (d->want)
			memcpy(d->want[d->nwant++], m.debug_path, sizeof *d->want);
	} else {
		c->bad_report = 1;
	}
}

/* Read records until EOF, a bad record, the deadline or the cancel flag. */
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
		if (cage_cancel_set(c->cancel)) {
			c->cancelled = 1;
			break;
		}
		if (c->cancel && left > CAGE_TICK_MS)
			left = CAGE_TICK_MS;
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

#define CAGE_VIOLATION "indexer violated its sandbox: "

/* The end record's "indexer violated its sandbox: NAME" (indexer_sandbox.c)
 * is believed only as that prefix and a syscall name's characters. */
static int cage_violation_msg(const struct cage_run *c)
{
	const char *n = c->end_msg + sizeof CAGE_VIOLATION - 1;

	return c->got_end && !strncmp(c->end_msg, CAGE_VIOLATION, sizeof CAGE_VIOLATION - 1) &&
	       n[0] && strlen(n) < 40 &&
	       strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789_ -") == strlen(n);
}

/* A killed indexer: one line naming the input and the signal.  SIGSYS is
 * the seccomp filter's: the indexer made a call it does not allow. */
static int cage_judge_signal(struct cage_run *c, int sig)
{
	const char *p = c->path;
	const char *d = sigdescr_np(sig);

	if (!d)
		d = "unknown signal";
	if (sig == SIGSYS && cage_violation_msg(c))
		return fmt_err(c->eb, c->ebsz, SYMDB_E_BAD_OBJECT, "%s: %s", p, c->end_msg);
	if (sig == SIGSYS)
		return fmt_err(c->eb, c->ebsz, SYMDB_E_BAD_OBJECT,
		               "%s: " CAGE_VIOLATION "signal %d (%s)", p, sig, d);
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
	struct rlimit r;
	uint64_t mem = c->memory;

	/* The indexer can only lower the limit it inherits: under a lower
	 * one of ours (ulimit -v), that is the one it ran out of. */
	if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY && r.rlim_cur < mem)
		mem = r.rlim_cur;
	cage_size(lim, sizeof lim, mem);
	if (c->cancelled)
		return fmt_err(c->eb, c->ebsz, -EINTR, "%s: interrupted", p);
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

/* Limits for one input (symdb_build.h: 0 = scaled defaults).  The floors
 * leave room for a small stripped binary whose separate debug file is large
 * (the parent does not look for it: that is parsing). */
static void cage_limits(const publish_input *in, const symdb_build_opts *o, uint64_t *memory,
                        unsigned *timeout)
{
	uint64_t size = in->size; /* the file, or every DWARF file of a bundle */

	*memory = o->memory_limit;
	if (!*memory)
		*memory = size > CAGE_MIN_MEMORY / 64 ? size * 64 : CAGE_MIN_MEMORY;
	*timeout = o->timeout_s;
	if (!*timeout)
		*timeout = CAGE_MIN_TIMEOUT + (unsigned)((size >> 20) > 86400 ? 86400 : size >> 20);
}

/* The online CPUs, for the indexer's automatic thread count (--cpus): it
 * reads nothing of /sys itself. */
static unsigned cage_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 4096 ? 4096 : (unsigned)n;
}

/* The most threads the indexer's DWARF walk may use: the rule of
 * ix_dwarf_shards (ix_dwarf_par.c) for an input of unknown size - the
 * caller's count, at most 64; by default the online CPUs, at most 8. */
static uint64_t cage_walk_threads(unsigned threads)
{
	unsigned n = threads;

	if (!n)
		n = cage_cpus() > 8 ? 8 : cage_cpus();
	return (uint64_t)(n > 64 ? 64 : n);
}

/* Kill the indexer and its process group (cage_spawn): whatever it started
 * where no seccomp filter stopped it dies with it.  Never after the reap:
 * until then the PID, so the group ID, cannot be reused. */
static void cage_kill(const struct cage_run *c)
{
	if (c->pid > 1 && kill(-c->pid, SIGKILL) < 0)
		kill(c->pid, SIGKILL);
}

/* Wait for the indexer to end without reaping it (the tag cleanup runs
 * first).  One that closed its pipe but keeps running is given until the
 * deadline or the cancel flag, then killed: EOF is not an exit. */
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
		if (!c->timed_out && !c->cancelled && cage_now_ms() >= c->deadline) {
			c->timed_out = 1;
			cage_kill(c);
		}
		if (!c->timed_out && !c->cancelled && cage_cancel_set(c->cancel)) {
			c->cancelled = 1;
			cage_kill(c);
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

/* The descriptors the indexer gets, in command-line order: descriptor
 * CAGE_FD + 1 + i is src[i]. */
#define CAGE_MAX_FDS                                                                       \
	(PUBLISH_MAX_DSYM_FILES + 3 + PUBLISH_MAX_LINKS + SYMDB_BUILD_MAX_IMAGES + PUBLISH_MAX_DWOS)

/* symdb-indexer's command line (SPEC §12.5) and its descriptors; the
 * strings live in num, own and uuid. */
struct cage_argv {
	char *v[32 + 2 * CAGE_MAX_FDS];
	char num[8][32];
	char uuid[8 + 2 * SYMDB_UUID_MAX];
	char *own[CAGE_MAX_FDS];
	int src[CAGE_MAX_FDS];
	unsigned n, k, nfd;
	int nomem;
};

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

/* OPT FD:NAME for our descriptor fd, which the child sees as the next
 * number after the report descriptor. */
static void cage_arg_fd(struct cage_argv *a, const char *opt, int fd, const char *name)
{
	const int child_fd = CAGE_FD + 1 + (int)a->nfd;
	size_t len = strlen(name) + 16;
	char *s = malloc(len);

	if (!s) {
		a->nomem = 1;
		return;
	}
	snprintf(s, len, "%d:%s", child_fd, name);
	a->own[a->nfd] = s;
	a->src[a->nfd++] = fd;
	cage_arg(a, opt);
	cage_arg(a, s);
}

static void cage_argv_free(struct cage_argv *a)
{
	for (unsigned i = 0; i < a->nfd; i++)
		free(a->own[i]);
	a->nfd = 0;
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

/* The build's files: input(s), debug candidates, outputs. */
static void cage_argv_files(struct cage_argv *a, const struct cage_run *c)
{
	const publish_input *in = c->in;
	char hex[2 * SYMDB_UUID_MAX + 1];

	if (in->in.fd >= 0)
		cage_arg_fd(a, "--input", in->in.fd, c->path);
	else
		cage_arg(a, "--dsym");
	for (unsigned i = 0; in->in.fd < 0 && i < in->nfiles; i++)
		cage_arg_fd(a, "--input", in->files[i].fd, in->files[i].name);
	if (in->debug.fd >= 0)
		cage_arg_fd(a, "--debug", in->debug.fd, in->debug.name);
	for (unsigned i = 0; i < in->nlinks; i++)
		cage_arg_fd(a, "--debuglink", in->links[i].fd, in->links[i].name);
	if (in->companion.fd >= 0)
		cage_arg_fd(a, "--companion", in->companion.fd, in->companion.name);
	if (in->dwp.fd >= 0)
		cage_arg_fd(a, "--dwp", in->dwp.fd, in->dwp.name);
	if (c->dwo->pass)
		cage_arg(a, "--dwo-pass");
	for (unsigned i = 0; i < c->dwo->nfds; i++)
		cage_arg_fd(a, "--dwo", c->dwo->fds[i].fd, c->dwo->fds[i].name);
	for (unsigned i = 0; i < c->st->n; i++) {
		symdb_uuid_format(&c->st->img[i].uuid, hex);
		cage_arg_fd(a, "--output", c->st->img[i].fd, hex);
	}
}

static void cage_argv_build(struct cage_argv *a, const struct cage_run *c,
                            const publish_expect *ex, const symdb_build_opts *o)
{
	memset(a, 0, sizeof *a);
	cage_arg(a, cage_exe(o));
	cage_arg_num(a, "--report-fd", CAGE_FD);
	cage_arg_num(a, "--parent", (unsigned long long)getpid());
	cage_arg_num(a, "--cpu-limit", c->cpu);
	cage_arg_num(a, "--memory-limit", c->memory);
	cage_arg_num(a, "--threads", o->threads);
	cage_arg_num(a, "--cpus", cage_cpus());
	cage_arg_uuid(a, ex);
	if (o->flags & SYMDB_BUILD_NO_DWARF)
		cage_arg(a, "--no-dwarf");
	cage_argv_files(a, c);
	a->v[a->n] = NULL;
}

/* Copies of the descriptors above every number the child will see them
 * as, so that one dup2 never overwrites another's source.  Returns 0 or
 * -errno (then none is left open). */
static int cage_fds_lift(struct cage_argv *a, int *lifted)
{
	const int floor = CAGE_FD + 1 + (int)a->nfd;

	for (unsigned i = 0; i < a->nfd; i++) {
		lifted[i] = fcntl(a->src[i], F_DUPFD_CLOEXEC, floor);
		if (lifted[i] < 0) {
			int rc = -errno;
			while (i--)
				close(lifted[i]);
			return rc;
		}
	}
	return 0;
}

/* Start symdb-indexer with wfd as its descriptor 3, the build's files as 4,
 * 5, ..., stdin and stdout on /dev/null, no other descriptor of ours, no
 * environment, and in a process group of its own.  Returns 0 or -errno.
 *
 * The environment is empty: nothing of the caller's (LD_PRELOAD,
 * LD_LIBRARY_PATH, MALLOC_*, locale, secrets) reaches the process that
 * parses untrusted bytes, and no variable can change what it does.  Its own
 * group lets the parent kill everything the indexer started on a timeout
 * (where the kernel has no seccomp to stop it from starting anything); a
 * process outside the terminal's foreground group must not read the
 * terminal, hence stdin on /dev/null too. */
static int cage_spawn(struct cage_run *c, const publish_expect *ex, const symdb_build_opts *o,
                      int wfd)
{
	static char *const no_env[] = { NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	struct cage_argv *a = malloc(sizeof *a);
	int lifted[CAGE_MAX_FDS];
	sigset_t none;
	int rc;

	if (!a)
		return -ENOMEM;
	cage_argv_build(a, c, ex, o);
	rc = a->nomem ? -ENOMEM : cage_fds_lift(a, lifted);
	if (rc) {
		cage_argv_free(a);
		free(a);
		return rc;
	}
	sigemptyset(&none);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_adddup2(&fa, wfd, CAGE_FD);
	for (unsigned i = 0; i < a->nfd; i++)
		posix_spawn_file_actions_adddup2(&fa, lifted[i], CAGE_FD + 1 + (int)i);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, CAGE_FD + 1 + (int)a->nfd);
	/* The calling thread may block signals the indexer must not. */
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
	rc = -posix_spawn(&c->pid, a->v[0], &fa, &at, a->v, no_env);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	for (unsigned i = 0; i < a->nfd; i++)
		close(lifted[i]);
	cage_argv_free(a);
	free(a);
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

/* Six characters for a temp name: the clock and a counter, mixed
 * (splitmix64); O_EXCL makes a collision a retry, never a shared file. */
static void cage_suffix(char out[7])
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static atomic_ullong seq;
	struct timespec ts;
	uint64_t x;

	clock_gettime(CLOCK_REALTIME, &ts);
	x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 40 ^
	    (atomic_fetch_add(&seq, 1) + 1) * 0x9e3779b97f4a7c15ull;
	x = (x ^ x >> 30) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ x >> 27) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	for (int i = 0; i < 6; i++, x /= sizeof abc - 1)
		out[i] = abc[x % (sizeof abc - 1)];
	out[6] = 0;
}

/* Create the output file of one expected image in DB/tmp (dir open as
 * tmp): DB/tmp/UUIDHEX<tag>.XXXXXX, new (O_EXCL), never through a symlink,
 * mode 0644 whatever the umask (index files are public, read-only data). */
static int cage_output(publish_stager *st, int tmp, publish_staged *s, char *eb, size_t ebsz)
{
	char hex[2 * SYMDB_UUID_MAX + 1], *x;
	int rc = 0;

	symdb_uuid_format(&s->uuid, hex);
	if (fmt_layout_staged(s->tmp, sizeof s->tmp, st->dir, hex, st->tag))
		return fmt_err(eb, ebsz, -ENAMETOOLONG, "%s: path too long", st->dir);
	x = s->tmp + strlen(s->tmp) - 6;
	for (int tries = 0; tries < 100; tries++) {
		cage_suffix(x);
		s->fd = openat(tmp, strrchr(s->tmp, '/') + 1,
		               O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (s->fd >= 0 || errno != EEXIST)
			break;
	}
	if (s->fd < 0 || fchmod(s->fd, 0644) < 0)
		rc = -errno;
	if (rc) {
		if (s->fd >= 0) {
			close(s->fd);
			unlinkat(tmp, strrchr(s->tmp, '/') + 1, 0);
		}
		s->fd = -1;
		s->tmp[0] = 0;
		return fmt_err(eb, ebsz, rc, "%s: cannot create temporary file: %s", st->dir,
		               strerror(-rc));
	}
	return 0;
}

/* One output per UUID of ex, as st->img[0 .. ex->n). */
static int cage_outputs(publish_stager *st, const publish_expect *ex, char *eb, size_t ebsz)
{
	/* O_NOFOLLOW: DB/tmp is never followed (SPEC §12.1); the builder
	 * judged its owner before (db_dir.h). */
	int tmp = open(st->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rc = 0;

	if (tmp < 0) {
		rc = -errno;
		return fmt_err(eb, ebsz, rc, "%s: cannot open directory: %s", st->dir,
		               strerror(-rc));
	}
	for (unsigned i = 0; rc == 0 && i < ex->n && i < SYMDB_BUILD_MAX_IMAGES; i++) {
		publish_staged *s = &st->img[i];
		memset(s, 0, sizeof *s);
		s->uuid = ex->uuid[i];
		s->fd = -1;
		st->n = i + 1;
		rc = cage_output(st, tmp, s, eb, ebsz);
	}
	close(tmp);
	return rc;
}

/* Keep the reported outputs, in order, for the commit; remove the rest. */
static void cage_keep_reported(publish_stager *st)
{
	unsigned n = 0;

	for (unsigned i = 0; i < st->n; i++) {
		publish_staged *s = &st->img[i];
		if (!s->reported) {
			stage_unlink(st, s->tmp);
			close(s->fd);
			continue;
		}
		if (n != i)
			st->img[n] = *s;
		n++;
	}
	st->n = n;
}

static int cage_once(publish_stager *st, const char *path, const publish_input *in,
                     const publish_expect *ex, const symdb_build_opts *o, struct cage_dwo *dwo,
                     const volatile sig_atomic_t *cancel)
{
	struct cage_run c;
	siginfo_t si;
	int p[2], rc;

	memset(&c, 0, sizeof c);
	c.st = st;
	c.dwo = dwo;
	c.path = path;
	c.in = in;
	c.eb = o->errbuf;
	c.ebsz = o->errbuf_sz;
	c.cancel = cancel;
	cage_limits(in, o, &c.memory, &c.timeout);
	/* CPU time adds up over the DWARF walk's threads (ix_dwarf_par.c): the
	 * wall-clock deadline is the timeout; RLIMIT_CPU is only a backstop and
	 * must not fire first on a parallel build. */
	c.cpu = (uint64_t)c.timeout * cage_walk_threads(o->threads);
	cage_tag(st);
	st->n = 0;
	if (ex->n == 0)
		return fmt_err(c.eb, c.ebsz, SYMDB_E_BAD_OBJECT, "%s: no image to index", path);
	if (cage_cancel_set(cancel))
		return fmt_err(c.eb, c.ebsz, -EINTR, "%s: interrupted", path);
	rc = cage_outputs(st, ex, c.eb, c.ebsz);
	if (rc == 0 && (rc = cage_pipe(p)) != 0)
		fmt_err(c.eb, c.ebsz, rc, "%s: cannot create a pipe: %s", path, strerror(-rc));
	if (rc) {
		build_stage_discard(st);
		st->tag[0] = 0;
		return rc;
	}
	c.deadline = cage_now_ms() + (int64_t)c.timeout * 1000;
	rc = cage_spawn(&c, ex, o, p[1]);
	close(p[1]);
	if (rc) {
		close(p[0]);
		build_stage_discard(st);
		st->tag[0] = 0;
		return fmt_err(c.eb, c.ebsz, rc, "%s: cannot start the indexer %s: %s", path,
		               cage_exe(o), strerror(-rc));
	}
	cage_collect(&c, p[0]);
	close(p[0]);
	if (c.timed_out || c.cancelled || c.bad_report)
		cage_kill(&c);
	cage_wait(&c, &si);
	/* Nothing the indexer started outlives it (it is still unreaped). */
	if (si.si_pid == c.pid)
		cage_kill(&c);
	rc = cage_judge(&c, &si);
	if (rc) {
		build_stage_discard(st);
	} else {
		cage_keep_reported(st);
		cage_remove_tagged(st); /* anything else carrying the tag */
	}
	while (waitpid(c.pid, NULL, 0) < 0 && errno == EINTR)
		;
	/* Later discards remove only the files reported to us. */
	st->tag[0] = 0;
	return rc;
}

/* One warning line for st (symdb_build_result.warnings); lines that do not
 * fit are counted in the last one.  path is the indexer's, from the DWARF
 * of the input: escaped as errbuf text is, so that it stays one line. */
static void cage_warn(publish_stager *st, unsigned *dropped, const char *path, const char *why)
{
	char esc[sizeof st->warnings];
	size_t len = strlen(st->warnings), room = sizeof st->warnings - len;

	fmt_escape(esc, sizeof esc, path, strlen(path));
	int n = snprintf(st->warnings + len, room, "%s: split DWARF file %s\n", esc, why);

	if (n < 0 || (size_t)n >= room - 80) {
		st->warnings[len] = 0;
		++*dropped;
	}
}

/* Open what the indexer asked for, as the other inputs are opened
 * (build_input_dwo); each file not opened is one warning line. */
static void cage_dwo_open(struct cage_dwo *d, publish_stager *st, const publish_input *in)
{
	unsigned dropped = 0;
	const char *why;

	st->warnings[0] = 0;
	d->fds = calloc(PUBLISH_MAX_DWOS, sizeof *d->fds);
	for (unsigned i = 0; i < d->nwant; i++) {
		if (!d->fds || d->nfds == PUBLISH_MAX_DWOS) {
			cage_warn(st, &dropped, d->want[i],
			          "not read: more than " CAGE_STR(PUBLISH_MAX_DWOS)
			          " .dwo files (a .dwp package has no limit)");
			continue;
		}
		if (build_input_dwo(in, &d->fds[d->nfds], d->want[i], &why))
			d->nfds++;
		else
			cage_warn(st, &dropped, d->want[i], why);
	}
	if (dropped) {
		size_t len = strlen(st->warnings);
		snprintf(st->warnings + len, sizeof st->warnings - len,
		         "%u more split DWARF files not read\n", dropped);
	}
}

static void cage_dwo_free(struct cage_dwo *d)
{
	for (unsigned i = 0; d->fds && i < d->nfds; i++)
		close(d->fds[i].fd);
	free(d->fds);
	free(d->want);
}

/*
 * Split DWARF takes two runs (SPEC §12.5): the parent parses no DWARF, so
 * only the indexer knows which .dwo files the skeleton units name.  The
 * first run indexes as if they were all missing - which is exactly the
 * answer when they are, the skeletons' line tables - and asks for each
 * path in a want record.  The builder opens what it can, and only when it
 * opened one does a second run, given those descriptors, replace the
 * first one's output.  A program without split DWARF runs once.
 */
int build_spawn_run(publish_stager *st, const char *path, const publish_input *in,
                    const publish_expect *ex, const symdb_build_opts *o,
                    const volatile sig_atomic_t *cancel)
{
	struct cage_dwo d;
	int rc;

	memset(&d, 0, sizeof d);
	st->warnings[0] = 0;
	rc = cage_once(st, path, in, ex, o, &d, cancel);
	if (rc == 0 && d.nwant) {
		cage_dwo_open(&d, st, in);
		if (d.nfds) {
			build_stage_discard(st);
			d.pass = 1;
			rc = cage_once(st, path, in, ex, o, &d, cancel);
		}
	}
	cage_dwo_free(&d);
	return rc;
}
