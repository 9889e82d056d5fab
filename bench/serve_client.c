/* SPDX-License-Identifier: MIT */
/*
 * serve_client: the load benchmark's client for `symdb serve` (driven by
 * bench/serve_load.sh; loopback only).  Two commands:
 *
 *   serve_client encode --id HEX [--stack] [--batch N] --addrs FILE --out PREFIX
 *       Binary requests (application/x-symdb-batch, symdb_batch.h's
 *       writer): the addresses of FILE ("0x..." a line) in batches of N
 *       (default 1000), one module named by build-id HEX, vaddr, default
 *       options; PREFIX.0000.bin, PREFIX.0001.bin, ...  With --stack each
 *       batch is one stack of N frames (and no module addresses).
 *
 *   serve_client run --connect HOST:PORT --type CONTENT-TYPE
 *       [--path /v1/symbolize] [--conns C] [--seconds S] [--requests N]
 *       [--items K] [--out FILE] [--check-binary] BODY...
 *       C connections (one thread each, keep-alive, closed loop: the next
 *       request leaves when the answer is in) send the BODY files round
 *       robin for S seconds (default 10) or N requests in all.  Each
 *       request's latency is from its first byte written to the last byte
 *       of its answer read.  Answers are appended to FILE (default: read
 *       and dropped).  Prints one line of key=value: requests, items (K
 *       per request: addresses), wall seconds, requests/s, items/s, p50,
 *       p90, p99 and max latency in microseconds, non-200 answers, and the
 *       client's own CPU (rusage).  --check-binary parses each answer with
 *       symdb_batch_response_parse() (costs client CPU: for checks, not
 *       for the figures).
 *
 *   serve_client pipe --addrs FILE [--batch N] [--out FILE] -- CMD...
 *       The same work through ONE long-running process fed over a pipe
 *       (`symdb query`, llvm-symbolizer-14, in --output-style=JSON, one
 *       output line per address): CMD is started once, then per batch of N
 *       addresses (default 1000) the batch is written to its stdin and its
 *       N answer lines read from its stdout (both flush when their input
 *       runs dry) and appended to FILE.  Prints the same line as run, with
 *       the child's CPU (wait4 rusage) as server_user_s/server_sys_s.
 *
 * Plain sockets and HTTP/1.1 by hand: the point is to cost the server's
 * side, not to measure a client library.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "symdb_batch.h"

static void die(const char *what, const char *why)
{
	fprintf(stderr, "serve_client: %s: %s\n", what, why);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		die(path, strerror(errno));
	do {
		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 16;
			p = realloc(p, cap + 1);
			if (!p)
				die(path, "out of memory");
		}
		r = fread(p + n, 1, cap - n, f);
		n += r;
	} while (r);
	fclose(f);
	p[n] = 0;
	*len = n;
	return p;
}

/* ---- encode ---------------------------------------------------------------- */

static size_t parse_hex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = strlen(hex) / 2;

	if (n == 0 || n > cap || strlen(hex) % 2)
		die(hex, "not an even number of hex digits (2..64)");
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			die(hex, "not hex");
		out[i] = (uint8_t)v;
	}
	return n;
}

static uint64_t *read_addrs(const char *path, size_t *n)
{
	size_t len, cap = 1024;
	char *text = read_file(path, &len), *s = text, *end;
	uint64_t *a = malloc(cap * sizeof *a);

	*n = 0;
	while (a && *s) {
		uint64_t v = strtoull(s, &end, 16);

		if (end == s)
			break;
		if (*n == cap)
			a = realloc(a, (cap *= 2) * sizeof *a);
		if (a)
			a[(*n)++] = v;
		s = end + strspn(end, " \t\r\n");
	}
	if (!a)
		die(path, "out of memory");
	free(text);
	return a;
}

/* One request of n addresses: as the module's addresses, or as one stack. */
static void encode_one(const uint8_t *id, size_t id_len, const uint64_t *addrs, uint32_t n,
                       bool stack, const char *path)
{
	symdb_batch_module m = { .id_kind = SYMDB_BATCH_ID_BUILD_ID, .addr_kind = 0,
	                         .id_len = (uint16_t)id_len, .id = id, .naddrs = stack ? 0 : n };
	unsigned flags = SYMDB_BATCH_DEMANGLE | SYMDB_BATCH_INLINES;
	uint32_t *mods = calloc(n, sizeof *mods);
	symdb_batch_writer w = { 0 };
	uint8_t *buf = NULL;
	size_t len = 0;
	FILE *f;

	for (int pass = 0; pass < 2; pass++) {
		memset(&w, 0, sizeof w);
		symdb_batch_writer_begin(&w, buf, len, flags, 1, stack ? 0 : n, stack ? 1 : 0,
		                         stack ? n : 0);
		symdb_batch_writer_module(&w, &m, addrs);
		if (stack)
			symdb_batch_writer_stack(&w, mods, addrs, n);
		if (pass == 0) {
			/* the first pass measures */
			buf = malloc(w.len);
			len = w.len;
		}
	}
	if (symdb_batch_writer_end(&w, &len) < 0)
		die(path, "symdb_batch_writer failed");
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f))
		die(path, strerror(errno));
	free(buf);
	free(mods);
}

static int cmd_encode(int argc, char **argv)
{
	const char *hex = NULL, *addrs_path = NULL, *prefix = NULL;
	uint8_t id[SYMDB_BATCH_ID_MAX];
	size_t id_len, n;
	uint32_t batch = 1000;
	bool stack = false;
	uint64_t *addrs;
	char path[4096];

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--id") && i + 1 < argc)
			hex = argv[++i];
		else if (!strcmp(argv[i], "--addrs") && i + 1 < argc)
			addrs_path = argv[++i];
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			prefix = argv[++i];
		else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
			batch = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--stack"))
			stack = true;
		else
			die(argv[i], "unknown argument of encode");
	}
	if (!hex || !addrs_path || !prefix || !batch)
		die("encode", "needs --id, --addrs and --out");
	id_len = parse_hex(hex, id, sizeof id);
	addrs = read_addrs(addrs_path, &n);
	for (size_t at = 0, k = 0; at + batch <= n; at += batch, k++) {
		snprintf(path, sizeof path, "%s.%04zu.bin", prefix, k);
		encode_one(id, id_len, addrs + at, batch, stack, path);
	}
	free(addrs);
	return 0;
}

/* ---- run ------------------------------------------------------------------------ */

struct body {
	char *head;       /* the request line and headers */
	size_t head_len;
	char *data;
	size_t len;
};

static struct {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	struct body *bodies;
	size_t nbodies;
	uint64_t stop_ns;
	long max_requests;
	bool check_binary;
	FILE *out;
	pthread_mutex_t out_mu;
} cfg;

static atomic_long requests_started;

struct conn {
	pthread_t thread;
	unsigned index;
	uint64_t *lat;
	size_t nlat, cap;
	long bad_status, bad_body;
	char *buf;
	size_t buf_cap;
};

/* write(2) of all n bytes to a pipe. */
static void send_all_fd(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("write", w < 0 ? strerror(errno) : "pipe closed");
		p += w;
		n -= (size_t)w;
	}
}

static int connect_once(void)
{
	int fd = socket(cfg.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		die("socket", strerror(errno));
	if (connect(fd, (struct sockaddr *)&cfg.addr, cfg.addr_len))
		die("connect", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("send", w < 0 ? strerror(errno) : "connection closed");
		p += w;
		n -= (size_t)w;
	}
}

/* Reads more into c->buf[*len..]; dies on EOF or error. */
static void read_more(int fd, struct conn *c, size_t *len)
{
	ssize_t r;

	if (*len == c->buf_cap) {
		c->buf_cap *= 2;
		c->buf = realloc(c->buf, c->buf_cap + 1);
		if (!c->buf)
			die("read", "out of memory");
	}
	do
		r = recv(fd, c->buf + *len, c->buf_cap - *len, 0);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		die("recv", r < 0 ? strerror(errno) : "connection closed by the server");
	*len += (size_t)r;
	c->buf[*len] = 0;
}

/* The body of a chunked answer, de-chunked in place from c->buf + at;
 * returns its length. */
static size_t read_chunked(int fd, struct conn *c, size_t at, size_t *len)
{
	size_t out = at, pos = at;

	for (;;) {
		char *eol, *end;
		size_t size;

		while (!(eol = memmem(c->buf + pos, *len - pos, "\r\n", 2)))
			read_more(fd, c, len);
		size = strtoul(c->buf + pos, &end, 16);
		pos = (size_t)(eol - c->buf) + 2;
		while (*len < pos + size + 2)
			read_more(fd, c, len);
		memmove(c->buf + out, c->buf + pos, size);
		out += size;
		pos += size + 2;
		if (!size)
			return out - at; /* trailers are not used by the server */
	}
}

/* One request and its whole answer; the body is left in c->buf at *body. */
static int exchange(int fd, struct conn *c, const struct body *b, size_t *body, size_t *blen)
{
	size_t len = 0, hl;
	char *eoh, *cl;
	int status;

	send_all(fd, b->head, b->head_len);
	send_all(fd, b->data, b->len);
	while (!(eoh = len ? strstr(c->buf, "\r\n\r\n") : NULL))
		read_more(fd, c, &len);
	hl = (size_t)(eoh - c->buf) + 4;
	if (sscanf(c->buf, "HTTP/1.%*d %d", &status) != 1)
		die("answer", "no HTTP status line");
	*eoh = 0;
	cl = strcasestr(c->buf, "\r\ncontent-length:");
	*body = hl;
	if (cl) {
		*blen = strtoul(cl + 17, NULL, 10);
		while (len < hl + *blen)
			read_more(fd, c, &len);
	} else if (strcasestr(c->buf, "\r\ntransfer-encoding: chunked")) {
		*blen = read_chunked(fd, c, hl, &len);
	} else {
		die("answer", "neither Content-Length nor chunked");
	}
	return status;
}

static void record(struct conn *c, uint64_t ns)
{
	if (c->nlat == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 4096;
		c->lat = realloc(c->lat, c->cap * sizeof *c->lat);
		if (!c->lat)
			die("latencies", "out of memory");
	}
	c->lat[c->nlat++] = ns;
}

static void check_answer(struct conn *c, int status, const char *body, size_t len)
{
	symdb_batch_response r;

	if (status != 200) {
		if (c->bad_status++ == 0)
			fprintf(stderr, "serve_client: HTTP %d: %.200s\n", status, body);
		return;
	}
	if (cfg.check_binary && symdb_batch_response_parse(body, len, NULL, &r) < 0)
		c->bad_body++;
	if (cfg.out) {
		pthread_mutex_lock(&cfg.out_mu);
		fwrite(body, 1, len, cfg.out);
		pthread_mutex_unlock(&cfg.out_mu);
	}
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	int fd = connect_once();
	size_t next = c->index;

	c->buf_cap = 1 << 16;
	c->buf = malloc(c->buf_cap + 1);
	for (;;) {
		const struct body *b = &cfg.bodies[next++ % cfg.nbodies];
		uint64_t t0;
		size_t body, blen;
		int status;

		if (cfg.max_requests ? atomic_fetch_add(&requests_started, 1) >= cfg.max_requests
		                     : now_ns() >= cfg.stop_ns)
			break;
		t0 = now_ns();
		status = exchange(fd, c, b, &body, &blen);
		record(c, now_ns() - t0);
		check_answer(c, status, c->buf + body, blen);
	}
	close(fd);
	free(c->buf);
	return NULL;
}

static void resolve(const char *hostport)
{
	char host[256];
	const char *colon = strrchr(hostport, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	size_t hl;

	if (!colon || (size_t)(colon - hostport) >= sizeof host)
		die(hostport, "not HOST:PORT");
	hl = (size_t)(colon - hostport);
	if (hostport[0] == '[' && hl >= 2) /* [v6]:port */
		memcpy(host, hostport + 1, hl -= 2);
	else
		memcpy(host, hostport, hl);
	host[hl] = 0;
	if (getaddrinfo(host, colon + 1, &hints, &ai))
		die(hostport, "cannot resolve");
	memcpy(&cfg.addr, ai->ai_addr, ai->ai_addrlen);
	cfg.addr_len = ai->ai_addrlen;
	freeaddrinfo(ai);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint64_t *v, size_t n, double p)
{
	size_t i = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);

	return n ? (double)v[i] / 1000.0 : 0;
}

static void report(struct conn *cs, unsigned nconns, double wall, long items)
{
	size_t n = 0;
	long bad_status = 0, bad_body = 0;
	uint64_t *all;
	struct rusage ru;

	for (unsigned i = 0; i < nconns; i++)
		n += cs[i].nlat;
	all = malloc((n ? n : 1) * sizeof *all);
	n = 0;
	for (unsigned i = 0; i < nconns; i++) {
		memcpy(all + n, cs[i].lat, cs[i].nlat * sizeof *all);
		n += cs[i].nlat;
		bad_status += cs[i].bad_status;
		bad_body += cs[i].bad_body;
	}
	qsort(all, n, sizeof *all, cmp_u64);
	getrusage(RUSAGE_SELF, &ru);
	printf("requests=%zu items=%ld wall_s=%.6f req_per_s=%.1f items_per_s=%.1f "
	       "p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f non200=%ld bad_body=%ld "
	       "client_user_s=%.6f client_sys_s=%.6f\n",
	       n, (long)n * items, wall, (double)n / wall, (double)n * (double)items / wall,
	       pct(all, n, 50), pct(all, n, 90), pct(all, n, 99), n ? (double)all[n - 1] / 1000.0 : 0,
	       bad_status, bad_body, (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	free(all);
}

static void load_bodies(char **paths, size_t n, const char *path, const char *type)
{
	cfg.bodies = calloc(n, sizeof *cfg.bodies);
	if (!cfg.bodies)
		die("bodies", "out of memory");
	for (size_t i = 0; i < n; i++) {
		struct body *b = &cfg.bodies[i];

		b->data = read_file(paths[i], &b->len);
		b->head_len = (size_t)asprintf(&b->head,
		                               "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		                               "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n",
		                               path, type, b->len);
	}
	cfg.nbodies = n;
}

static int cmd_run(int argc, char **argv)
{
	const char *hostport = NULL, *type = NULL, *path = "/v1/symbolize", *out = NULL;
	unsigned nconns = 2;
	double seconds = 10;
	long items = 1000;
	struct conn *cs;
	uint64_t t0;
	int i;

	for (i = 2; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--connect") && i + 1 < argc)
			hostport = argv[++i];
		else if (!strcmp(argv[i], "--type") && i + 1 < argc)
			type = argv[++i];
		else if (!strcmp(argv[i], "--path") && i + 1 < argc)
			path = argv[++i];
		else if (!strcmp(argv[i], "--conns") && i + 1 < argc)
			nconns = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--requests") && i + 1 < argc)
			cfg.max_requests = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--items") && i + 1 < argc)
			items = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--check-binary"))
			cfg.check_binary = true;
		else
			die(argv[i], "unknown argument of run");
	}
	if (!hostport || !type || i == argc || !nconns)
		die("run", "needs --connect, --type and at least one body file");
	resolve(hostport);
	load_bodies(argv + i, (size_t)(argc - i), path, type);
	if (out && !(cfg.out = fopen(out, "wb")))
		die(out, strerror(errno));
	pthread_mutex_init(&cfg.out_mu, NULL);
	cs = calloc(nconns, sizeof *cs);
	t0 = now_ns();
	cfg.stop_ns = t0 + (uint64_t)(seconds * 1e9);
	for (unsigned k = 0; k < nconns; k++) {
		cs[k].index = k;
		if (pthread_create(&cs[k].thread, NULL, conn_main, &cs[k]))
			die("pthread_create", "failed");
	}
	for (unsigned k = 0; k < nconns; k++)
		pthread_join(cs[k].thread, NULL);
	report(cs, nconns, (double)(now_ns() - t0) / 1e9, items);
	if (cfg.out && fclose(cfg.out))
		die(out, strerror(errno));
	return 0;
}

/* ---- pipe -------------------------------------------------------------------- */

static pid_t spawn(char **cmd, int *to_child, int *from_child)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		die("pipe", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork", strerror(errno));
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*to_child = in[1];
	*from_child = out[0];
	return pid;
}

/* Reads until n more newlines came; appends what it read to f. */
static void read_lines(int fd, long n, char *buf, size_t cap, FILE *f)
{
	while (n > 0) {
		ssize_t r = read(fd, buf, cap);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("pipe", "the child stopped answering");
		for (ssize_t i = 0; i < r; i++)
			n -= buf[i] == '\n';
		if (f)
			fwrite(buf, 1, (size_t)r, f);
	}
}

static int cmd_pipe(int argc, char **argv)
{
	const char *addrs_path = NULL, *out = NULL;
	long batch = 1000;
	int i, to, from, status;
	size_t len, nbatches, cap = 1 << 20;
	char *text, *buf = malloc(cap), *s;
	struct conn c = { 0 };
	struct rusage ru;
	uint64_t t0;
	FILE *f = NULL;
	pid_t pid;

	for (i = 2; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--addrs") && i + 1 < argc)
			addrs_path = argv[++i];
		else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
			batch = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out = argv[++i];
		else
			die(argv[i], "unknown argument of pipe");
	}
	if (!addrs_path || i + 1 >= argc || batch <= 0)
		die("pipe", "needs --addrs FILE -- CMD...");
	if (out && !(f = fopen(out, "wb")))
		die(out, strerror(errno));
	text = read_file(addrs_path, &len);
	signal(SIGPIPE, SIG_IGN);
	pid = spawn(argv + i + 1, &to, &from);
	t0 = now_ns();
	s = text;
	for (nbatches = 0; *s; nbatches++) {
		char *end = s;
		long n = 0;
		uint64_t b0 = now_ns();

		while (*end && n < batch)
			n += *end++ == '\n';
		send_all_fd(to, s, (size_t)(end - s));
		read_lines(from, n, buf, cap, f);
		record(&c, now_ns() - b0);
		if (n < batch)
			break;
		s = end;
	}
	close(to);
	while (read(from, buf, cap) > 0)
		;
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) > 1)
		die(argv[i + 1], "did not exit cleanly");
	report(&c, 1, (double)(now_ns() - t0) / 1e9, batch);
	printf("server_user_s=%.6f server_sys_s=%.6f\n",
	       (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	if (f && fclose(f))
		die(out, strerror(errno));
	free(text);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "encode"))
		return cmd_encode(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "run"))
		return cmd_run(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "pipe"))
		return cmd_pipe(argc, argv);
	fprintf(stderr, "usage: serve_client encode|run|pipe ... (see the comment at the top of serve_client.c)\n");
	return 2;
}
