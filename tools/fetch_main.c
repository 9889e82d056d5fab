/* SPDX-License-Identifier: MIT */
/*
 * fetch_main.c - the symdb-fetch executable (SPEC §12.9): the only symdb
 * process that touches the network.  libsymdb (reader/fetch_spawn.c) starts
 * it once per source and kills it when the fetch's deadline passes, so a
 * server that accepts and never answers, a resolver that hangs or a bug in
 * libcurl or libdebuginfod costs the library at most its deadline and never
 * its address space.  It links libcurl and libdebuginfod and nothing of
 * symdb's but the password masking of format_url.c (symdb_url.h): what it downloads is not parsed here but written, byte for byte,
 * into descriptors the library created in DB/tmp, and judged there.
 *
 *   symdb-fetch [--max-bytes N] [--progress] url URL
 *       GET URL (http/https) into descriptor 3.
 *   symdb-fetch [--max-bytes N] [--progress] debuginfod HEX
 *       libdebuginfod's executable of build-id HEX into descriptor 3 and
 *       its debuginfo into descriptor 4, from DEBUGINFOD_URLS, caching in
 *       DEBUGINFOD_CACHE_PATH (the library sets both, and nothing else).
 *
 * It answers with one line on standard output (a pipe to the library):
 * "found BYTES" (url), "found EXE_BYTES DEBUG_BYTES" (debuginfod, 0 for a
 * file the servers do not have), "missing" when every server answered that
 * it has no such file, or "error REASON"; exit status 0, 2, 1 alike.
 *
 * Before it fetches anything it enters its sandbox (fetch_sandbox.c): it
 * may then write files only under the debuginfod cache, execute none, and
 * start no process.  symdb-fetch-test (built with the tests only) takes
 * `--test-hook exec|fork|tiocsti|read:PATH|write:PATH|connect:PORT|bind:PORT`
 * (PORT on 127.0.0.1), tried right after the sandbox is entered, so that
 * the tests can see each part hold.
 */
#define _GNU_SOURCE /* prctl, getppid */
#include <curl/curl.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fetch_sandbox.h"
#include "symdb_url.h"

#ifdef SYMDB_FETCH_TEST_HOOKS
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#endif

#define FETCH_OUT 3       /* the download, or debuginfod's executable */
#define FETCH_OUT_DEBUG 4 /* debuginfod's debuginfo */

enum { FETCH_FOUND = 0, FETCH_ERROR = 1, FETCH_MISSING = 2 };

/* The proxy variables the library hands the fetcher (reader/fetch_api.c),
 * under the one spelling libcurl reads for every scheme. */
static const char *const fetch_proxy_vars[] = { "http_proxy", "https_proxy", "all_proxy" };

struct fetch_args {
	uint64_t max_bytes;
	int progress; /* a progress line on stderr, when it is a terminal */
	const char *mode, *what;
	const char *hook; /* symdb-fetch-test's --test-hook, else NULL */
};

/*
 * A proxy's value may hold a password ("http://user:secret@host:3128"),
 * and libcurl repeats a value it cannot use in its error text ("Unsupported
 * proxy scheme for '...'"), cut at CURL_ERROR_SIZE, which the library
 * would print and log.  So in every status line, wherever a proxy value's
 * user part shows up to its password ("user:", with or without the scheme
 * before it), the
 * password after it - or all of the rest of the line, when the value was
 * cut inside the password - becomes "***".  The password is what lies
 * between the user part's first ':' and the authority's last '@', as URL
 * parsers split it.  A value without a password is no secret and stays.
 * (no_proxy holds host names only.)
 */
static void fetch_redact(char *line, size_t sz)
{
	for (size_t i = 0; i < sizeof fetch_proxy_vars / sizeof fetch_proxy_vars[0]; i++) {
		const char *v = getenv(fetch_proxy_vars[i]), *u, *at = NULL, *colon;
		if (!v || !*v)
			continue;
		u = strstr(v, "://");
		u = u ? u + 3 : v;
		for (const char *c = u; *c && *c != '/'; c++) /* the authority's last '@' */
			if (*c == '@')
				at = c;
		if (!at || !(colon = memchr(u, ':', (size_t)(at - u))))
			continue;
		size_t pl = (size_t)(at - colon - 1);
		/* "user:" alone: also where the scheme shows before it */
		symdb_url_mask_after(line, sz, u, (size_t)(colon + 1 - u), colon + 1, pl);
	}
}

/* The one status line (standard output is the library's pipe). */
static int fetch_say(int code, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fetch_redact(line, sizeof line);
	symdb_url_mask(line, sizeof line); /* a source's URL that libcurl repeats */
	/* One line whatever the reason says: the library reads one. */
	for (char *p = line; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	printf("%s\n", line);
	fflush(stdout);
	return code;
}

static void fetch_progress_line(const char *what, uint64_t done, uint64_t total)
{
	/* At most 4 lines a second: libcurl calls back for every buffer (about
	 * 2,600 redraws in 3 s were measured).  The one piece of mutable state
	 * of this single-threaded, single-fetch process. */
	static struct timespec last;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((last.tv_sec || last.tv_nsec) &&
	    (now.tv_sec - last.tv_sec) * 1000000000L + (now.tv_nsec - last.tv_nsec) < 250000000L)
		return;
	last = now;
	if (total)
		fprintf(stderr, "\rsymdb-fetch: %s: %" PRIu64 " of %" PRIu64 " KiB", what,
		        done >> 10, total >> 10);
	else
		fprintf(stderr, "\rsymdb-fetch: %s: %" PRIu64 " KiB", what, done >> 10);
}

/* ---- url: one GET --------------------------------------------------------- */

struct fetch_get {
	const struct fetch_args *a;
	uint64_t bytes;
	int too_big, write_err;
};

static size_t fetch_get_write(char *p, size_t sz, size_t n, void *arg)
{
	struct fetch_get *g = arg;
	size_t len = sz * n;

	if (g->bytes + len > g->a->max_bytes) {
		g->too_big = 1;
		return 0; /* libcurl stops: CURLE_WRITE_ERROR */
	}
	for (size_t off = 0; off < len;) {
		ssize_t w = write(FETCH_OUT, p + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			g->write_err = errno ? errno : EIO;
			return 0;
		}
		off += (size_t)w;
	}
	g->bytes += len;
	return len;
}

static int fetch_get_progress(void *arg, curl_off_t total, curl_off_t now, curl_off_t ut,
                              curl_off_t un)
{
	const struct fetch_get *g = arg;

	(void)ut;
	(void)un;
	if (g->a->progress && now > (1 << 20))
		fetch_progress_line(g->a->what, (uint64_t)now, (uint64_t)total);
	return 0;
}

static int fetch_url(const struct fetch_args *a)
{
	struct fetch_get g = { .a = a };
	char err[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURL *c;
	CURLcode rc;

	if (strncmp(a->what, "http://", 7) != 0 && strncmp(a->what, "https://", 8) != 0)
		return fetch_say(FETCH_ERROR, "error not an http:// or https:// URL");
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0 || !(c = curl_easy_init()))
		return fetch_say(FETCH_ERROR, "error cannot start libcurl");
	curl_easy_setopt(c, CURLOPT_URL, a->what);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(c, CURLOPT_FAILONERROR, 0L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fetch_get_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &g);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)a->max_bytes);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "symdb-fetch");
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, fetch_get_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, &g);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	if (a->progress && g.bytes > (1 << 20))
		fputc('\n', stderr);
	/* A 404 or 410 is the store saying it has no such image: the only
	 * answer that is remembered as a negative one. */
	if (status == 404 || status == 410)
		return fetch_say(FETCH_MISSING, "missing");
	if (g.too_big || rc == CURLE_FILESIZE_EXCEEDED)
		return fetch_say(FETCH_ERROR, "error larger than %" PRIu64 " bytes", a->max_bytes);
	if (g.write_err)
		return fetch_say(FETCH_ERROR, "error cannot write the download: %s",
		                 strerror(g.write_err));
	if (rc != CURLE_OK)
		return fetch_say(FETCH_ERROR, "error %s", err[0] ? err : curl_easy_strerror(rc));
	if (status != 200)
		return fetch_say(FETCH_ERROR, "error HTTP status %ld", status);
	return fetch_say(FETCH_FOUND, "found %" PRIu64, g.bytes);
}

/* ---- debuginfod ------------------------------------------------------------ */

/* libdebuginfod remembers a miss as an empty file in its cache for
 * cache_miss_s (600 s by default).  The library's own negative cache
 * (DB/misses, SPEC §12.9) decides when a build-id is asked for again, so
 * libdebuginfod's entry for this build-id is dropped first. */
static void fetch_forget_dbgd_miss(const char *cache, const char *hex, const char *kind)
{
	char p[4096];
	struct stat st;

	if (!cache || snprintf(p, sizeof p, "%s/%s/%s", cache, hex, kind) >= (int)sizeof p)
		return;
	if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(p);
}

static int fetch_dbgd_progress(debuginfod_client *c, long done, long total)
{
	const struct fetch_args *a = debuginfod_get_user_data(c);

	if (a->progress && done > (1 << 20))
		fetch_progress_line(a->what, (uint64_t)done, total > 0 ? (uint64_t)total : 0);
	return 0;
}

/* Copy libdebuginfod's cache file into out: *bytes, or -errno. */
static int fetch_copy(int in, int out, uint64_t max, uint64_t *bytes)
{
	char buf[1 << 16];
	ssize_t n;

	*bytes = 0;
	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (*bytes + (uint64_t)n > max)
			return -EFBIG;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			off += w;
		}
		*bytes += (uint64_t)n;
	}
	return 0;
}

/* One kind of file: 1 found (*bytes), 0 missing, or -errno. */
static int fetch_dbgd_one(debuginfod_client *c, const struct fetch_args *a, const char *kind,
                          int out, uint64_t *bytes)
{
	unsigned char id[64];
	size_t len = strlen(a->what) / 2;
	int fd, rc;

	*bytes = 0;
	for (size_t i = 0; i < len; i++)
		sscanf(a->what + 2 * i, "%2hhx", &id[i]);
	fetch_forget_dbgd_miss(getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR), a->what, kind);
	fd = strcmp(kind, "executable") == 0
	             ? debuginfod_find_executable(c, id, (int)len, NULL)
	             : debuginfod_find_debuginfo(c, id, (int)len, NULL);
	if (a->progress && isatty(2))
		fputs("\r\033[K", stderr);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	/* The descriptor may be at the end of what libdebuginfod wrote. */
	rc = lseek(fd, 0, SEEK_SET) < 0 ? -errno : fetch_copy(fd, out, a->max_bytes, bytes);
	close(fd);
	return rc < 0 ? rc : *bytes > 0;
}

static int fetch_debuginfod(const struct fetch_args *a)
{
	uint64_t exe = 0, dbg = 0;
	size_t n = strlen(a->what);
	debuginfod_client *c;
	int r1, r2;

	if (n < 2 || n > 128 || n % 2 || strspn(a->what, "0123456789abcdef") != n)
		return fetch_say(FETCH_ERROR, "error not a build-id in lowercase hex: %s", a->what);
	if (!(c = debuginfod_begin()))
		return fetch_say(FETCH_ERROR, "error cannot start libdebuginfod");
	debuginfod_set_user_data(c, (void *)a);
	debuginfod_set_progressfn(c, fetch_dbgd_progress);
	r1 = fetch_dbgd_one(c, a, "executable", FETCH_OUT, &exe);
	r2 = fetch_dbgd_one(c, a, "debuginfo", FETCH_OUT_DEBUG, &dbg);
	debuginfod_end(c);
	/* Either failing (not "not found") fails the fetch: an executable
	 * published without the debuginfo that failed would answer without
	 * lines, and an image in the database is not fetched again. */
	if (r1 < 0 || r2 < 0)
		return fetch_say(FETCH_ERROR, "error %s%s", r1 < 0 ? "executable: " : "debuginfo: ",
		                 strerror(-(r1 < 0 ? r1 : r2)));
	if (r1 > 0 || r2 > 0)
		return fetch_say(FETCH_FOUND, "found %" PRIu64 " %" PRIu64, exe, dbg);
	return fetch_say(FETCH_MISSING, "missing");
}

/* ---- main ------------------------------------------------------------------ */

static int fetch_usage(void)
{
	return fetch_say(FETCH_ERROR,
	                 "error usage: symdb-fetch [--max-bytes N] [--progress] "
	                 "url URL | debuginfod HEX");
}

static int fetch_parse(int argc, char **argv, struct fetch_args *a)
{
	int i = 1;

	a->max_bytes = 4ull << 30;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--progress") == 0)
			a->progress = 1;
		else if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc)
			a->max_bytes = strtoull(argv[++i], NULL, 10);
#ifdef SYMDB_FETCH_TEST_HOOKS
		else if (strcmp(argv[i], "--test-hook") == 0 && i + 1 < argc)
			a->hook = argv[++i];
#endif
		else
			return -1;
	}
	if (argc - i != 2)
		return -1;
	a->mode = argv[i];
	a->what = argv[i + 1];
	a->progress = a->progress && isatty(STDERR_FILENO);
	return 0;
}

#ifdef SYMDB_FETCH_TEST_HOOKS
/* A TCP connect to (conn) or bind of 127.0.0.1:port, which the sandbox
 * refuses unless port is a source's or a proxy's (connect only). */
static int fetch_test_tcp(int conn, const char *port)
{
	const char *what = conn ? "connect to" : "bind";
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r, e;

	if (fd < 0)
		return fetch_say(FETCH_ERROR, "error test hook: socket: %s", strerror(errno));
	sin.sin_port = htons((uint16_t)strtoul(port, NULL, 10));
	r = conn ? connect(fd, (struct sockaddr *)&sin, sizeof sin)
	         : bind(fd, (struct sockaddr *)&sin, sizeof sin);
	e = errno;
	close(fd);
	if (r == 0)
		return fetch_say(FETCH_ERROR, "error test hook: could %s port %s", what, port);
	return fetch_say(FETCH_ERROR, "error test hook: cannot %s port %s: %s", what, port,
	                 strerror(e));
}

/* What the sandbox must stop, tried on purpose: exec and fork die by
 * SIGSYS (their status line is the handler's); a write says whether it
 * was refused. */
static int fetch_test_hook(const char *hook)
{
	if (strcmp(hook, "exec") == 0) {
		execl("/bin/true", "true", (char *)NULL);
		return fetch_say(FETCH_ERROR, "error test hook: exec: %s", strerror(errno));
	}
	if (strcmp(hook, "fork") == 0) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		return fetch_say(FETCH_ERROR, "error test hook: fork: %s",
		                 pid < 0 ? strerror(errno) : "started a process");
	}
	if (strcmp(hook, "tiocsti") == 0) {
		char c = 'x';
		ioctl(STDIN_FILENO, TIOCSTI, &c);
		return fetch_say(FETCH_ERROR, "error test hook: tiocsti: %s", strerror(errno));
	}
	if (strncmp(hook, "read:", 5) == 0) {
		int fd = open(hook + 5, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			return fetch_say(FETCH_ERROR, "error test hook: read %s", hook + 5);
		}
		return fetch_say(FETCH_ERROR, "error test hook: cannot read %s: %s", hook + 5,
		                 strerror(errno));
	}
	if (strncmp(hook, "write:", 6) == 0) {
		int fd = open(hook + 6, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			return fetch_say(FETCH_ERROR, "error test hook: wrote %s", hook + 6);
		}
		return fetch_say(FETCH_ERROR, "error test hook: cannot write %s: %s", hook + 6,
		                 strerror(errno));
	}
	if (strncmp(hook, "connect:", 8) == 0)
		return fetch_test_tcp(1, hook + 8);
	if (strncmp(hook, "bind:", 5) == 0)
		return fetch_test_tcp(0, hook + 5);
	return 0; /* an unknown hook: fetch as usual */
}
#endif

/*
 * The TCP ports the sandbox lets the fetcher connect to: 80 and 443, where
 * a redirect to the same store over HTTPS or to a content network leads,
 * 53, for a resolver's answer too long for UDP, each proxy's
 * (fetch_proxy_vars; and 1080, libcurl's default, for one that names no
 * port) and each source's (the URL, or every entry of DEBUGINFOD_URLS).
 * No other port, on any host: a server's redirect cannot make the fetcher
 * reach a database's or an admin port.  A URL that does not parse adds
 * nothing (libcurl refuses it too).
 */
#define FETCH_PORTS_MAX 64
struct fetch_ports {
	uint16_t port[FETCH_PORTS_MAX];
	size_t n;
};

/* 0, or -E2BIG when FETCH_PORTS_MAX distinct ports are taken. */
static int ports_add(struct fetch_ports *s, unsigned long port)
{
	if (port == 0 || port > 65535)
		return 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->port[i] == port)
			return 0;
	if (s->n == FETCH_PORTS_MAX)
		return -E2BIG;
	s->port[s->n++] = (uint16_t)port;
	return 0;
}

/* The port of url, or of its scheme when it names none (a proxy: an
 * address without a scheme is http://, and 1080 is allowed too): 0, or a
 * negative errno. */
static int ports_add_url(struct fetch_ports *s, const char *url, int proxy)
{
	CURLU *u = curl_url();
	char *port = NULL;
	int rc = 0;

	if (!u)
		return -ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, url, CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME) ==
	    CURLUE_OK) {
		int named = curl_url_get(u, CURLUPART_PORT, &port, 0) == CURLUE_OK;
		if (!named && curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK)
			port = NULL;
		if (port)
			rc = ports_add(s, strtoul(port, NULL, 10));
		if (rc == 0 && !named && proxy)
			rc = ports_add(s, 1080);
	}
	curl_free(port);
	curl_url_cleanup(u);
	return rc;
}

/* Every entry of the whitespace-separated list urls. */
static int ports_add_list(struct fetch_ports *s, const char *urls)
{
	char *list = strdup(urls), *save = NULL;
	int rc = list ? 0 : -ENOMEM;

	for (char *t = list ? strtok_r(list, " \t\n", &save) : NULL; t && rc == 0;
	     t = strtok_r(NULL, " \t\n", &save))
		rc = ports_add_url(s, t, 0);
	free(list);
	return rc;
}

/* 0, or a negative errno (no memory, too many ports). */
static int fetch_ports(const struct fetch_args *a, struct fetch_ports *s)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	int rc;

	s->n = 0;
	if ((rc = ports_add(s, 80)) || (rc = ports_add(s, 443)) || (rc = ports_add(s, 53)))
		return rc;
	for (size_t i = 0; i < sizeof fetch_proxy_vars / sizeof fetch_proxy_vars[0]; i++) {
		const char *p = getenv(fetch_proxy_vars[i]);
		if (p && *p && (rc = ports_add_url(s, p, 1)) != 0)
			return rc;
	}
	if (strcmp(a->mode, "url") == 0)
		return ports_add_url(s, a->what, 0);
	return urls ? ports_add_list(s, urls) : 0;
}

/* The sandbox, before anything comes off the network: 0, or the status
 * line's code when it could not be entered (nothing is fetched then). */
static int fetch_enter_sandbox(const struct fetch_args *a)
{
	/* debuginfod mode: libdebuginfod's cache is the one tree it writes */
	const char *cache = getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR);
	const char *rw = strcmp(a->mode, "debuginfod") == 0 && cache && *cache ? cache : NULL;
	struct fetch_ports ports;
	char why[512] = "";
	int rc;

	if ((rc = fetch_ports(a, &ports)) == -E2BIG)
		return fetch_say(FETCH_ERROR, "error cannot enter the sandbox: more than %d ports to allow",
		                 FETCH_PORTS_MAX);
	if (rc != 0)
		return fetch_say(FETCH_ERROR, "error cannot enter the sandbox: %s", strerror(-rc));
	rc = fetch_sandbox_enter(rw, ports.port, ports.n, why, sizeof why);

	if (rc < 0)
		return fetch_say(FETCH_ERROR, "error cannot enter the sandbox: %s", why);
	if (rc > 0)
		fprintf(stderr, "symdb-fetch: warning: sandbox incomplete: %s\n", why);
	return 0;
}

int main(int argc, char **argv)
{
	struct fetch_args a = { 0 };
	struct rlimit core = { 0, 0 };
	int rc;

	/* Dies with the library thread that started it, even one killed. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setrlimit(RLIMIT_CORE, &core);
	signal(SIGPIPE, SIG_IGN);
	if (fetch_parse(argc, argv, &a) < 0)
		return fetch_usage();
	if ((rc = fetch_enter_sandbox(&a)) != 0)
		return rc;
#ifdef SYMDB_FETCH_TEST_HOOKS
	if (a.hook && (rc = fetch_test_hook(a.hook)) != 0)
		return rc;
#endif
	if (strcmp(a.mode, "url") == 0)
		return fetch_url(&a);
	if (strcmp(a.mode, "debuginfod") == 0)
		return fetch_debuginfod(&a);
	return fetch_usage();
}
