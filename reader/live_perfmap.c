/* SPDX-License-Identifier: MIT */
/*
 * live_perfmap.c - perf maps (/tmp/perf-PID.map): the symbol files JITs write
 * for code that has no file (V8/Node --perf-basic-prof, the JVM's perf-map
 * agents, Python 3.12 -X perf), read the way perf 6.1 reads them
 * (tools/perf/util/symbol.c dso__load_perf_map) and answered from a sorted,
 * non-overlapping table with a binary search.
 *
 * A line is "START SIZE NAME\n": START and SIZE hex (perf's strtoull(16):
 * an optional 0x), NAME the rest of the line after one separator byte.
 * perf accepts almost anything (a line with no number is a symbol at 0);
 * here a line that is not that shape is skipped and counted: no digits,
 * more than 64 bits, START + SIZE past 2^64, a NUL byte, a name perf itself
 * drops (shorter than 3 bytes: its "len + 2 >= line_len" test) or a line
 * longer than the caller's limit.  A last line without its newline is a
 * line the JIT is still writing: it is left for the next refresh.
 *
 * Sizes of zero answer their start address only (perf: end = start).
 * Overlapping entries: perf inserts every line into an rb-tree keyed by
 * start and returns the first node on the search path that contains the
 * address, which depends on the tree's shape.  The JIT's meaning is clear
 * though: a later line describes code written later at those addresses, so
 * the latest line covering an address answers it, and an earlier entry
 * still answers the addresses no later line covers.
 *
 * The file grows while the process runs and may be rewritten (a new file
 * under the same name, or truncated and written again): a refresh reads
 * only the bytes appended since the last read, and reads the whole file
 * again when its inode changed, it shrank, or its first bytes differ.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live_perfmap.h"
#include "reader_internal.h"

#define PM_DEFAULT_MAX_LINE 4096
#define PM_CHUNK (64u * 1024)

/* ---- the entries ------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 256;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		n *= 2;
	}
	void *np = realloc(*p, n * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = n;
	return 0;
}

static void stats_reset(symdb_perfmap *m)
{
	uint64_t rereads = m->st.rereads;
	memset(&m->st, 0, sizeof m->st);
	m->st.rereads = rereads;
	m->nent = 0;
	m->nseg = 0;
	m->names_len = 0;
	m->offset = 0;
	m->lineno = 0;
	m->skipping = 0;
	m->skip = 0;
	m->kind = PM_UNKNOWN;
	m->swapped = 0;
	m->broken = 0;
	m->head_len = 0;
}

int pm_add(symdb_perfmap *m, uint64_t start, uint64_t size, const char *name, size_t len,
           uint64_t tag)
{
	if (len > UINT32_MAX || m->names_len + len + 1 > UINT32_MAX || start + size < start ||
	    (size == 0 && start == UINT64_MAX)) {
		pm_bad(m);
		return 0;
	}
	if (grow((void **)&m->names, &m->names_cap, m->names_len + len + 1, 1) < 0 ||
	    grow((void **)&m->ent, &m->ent_cap, m->nent + 1, sizeof *m->ent) < 0)
		return -ENOMEM;
	memcpy(m->names + m->names_len, name, len);
	m->names[m->names_len + len] = '\0';
	m->ent[m->nent++] = (struct pm_entry){ .start = start, .size = size, .line = m->lineno,
		                               .tag = tag, .name = (uint32_t)m->names_len };
	m->names_len += len + 1;
	m->st.entries++;
	m->st.zero_size += size == 0;
	return 0;
}

void pm_bad(symdb_perfmap *m)
{
	m->st.skipped++;
	if (!m->st.first_skipped_line)
		m->st.first_skipped_line = m->lineno;
}

/* Hex digits as strtoull(16) after perf's skip: an optional 0x, then at
 * least one digit; 1 and the value, or 0 (none, or past 64 bits). */
static int read_hex(const char **sp, const char *end, uint64_t *out)
{
	const char *s = *sp;
	if (end - s > 2 && s[0] == '0' && (s[1] | 0x20) == 'x')
		s += 2;
	uint64_t v = 0;
	const char *d = s;
	for (; s < end; s++) {
		unsigned c = (unsigned char)*s, x;
		if (c >= '0' && c <= '9')
			x = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			x = (c | 0x20) - 'a' + 10;
		else
			break;
		if (v >> 60)
			return 0;
		v = v << 4 | x;
	}
	if (s == d)
		return 0;
	*sp = s;
	*out = v;
	return 1;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One complete line s[0..n) (no newline): an entry, or a count. */
static int take_line(symdb_perfmap *m, const char *s, size_t n)
{
	const char *e = s + n, *p = s;
	uint64_t start, size;
	m->lineno++;
	m->st.lines++;
	if (memchr(s, '\0', n))
		goto bad;
	while (p < e && is_blank(*p))
		p++;
	if (!read_hex(&p, e, &start) || p == e || !is_blank(*p))
		goto bad;
	while (p < e && is_blank(*p))
		p++;
	if (!read_hex(&p, e, &size) || p == e || !is_blank(*p))
		goto bad;
	p++; /* perf skips exactly one byte: the name keeps further blanks */
	if (e - p < 3 || start + size < start || (size == 0 && start == UINT64_MAX))
		goto bad;
	return pm_add(m, start, size, p, (size_t)(e - p), 0);
bad:
	pm_bad(m);
	return 0;
}

/* ---- the lookup table -------------------------------------------------- */

/* Entries are flattened into segments: the sorted, disjoint address ranges
 * each answered by one entry, the latest line covering them.  A sweep over
 * the entries' boundaries keeps the covering entries in a max-heap of line
 * order; an entry whose end has passed is dropped when it reaches the top. */

struct pm_event {
	uint64_t at;
	uint32_t ent;
	uint32_t is_end;
};

static int cmp_event(const void *a, const void *b)
{
	const struct pm_event *x = a, *y = b;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return (x->ent > y->ent) - (x->ent < y->ent);
}

static uint64_t ent_end(const struct pm_entry *e)
{
	/* A zero size covers its start only; start + 1 cannot wrap (take_line). */
	return e->size ? e->start + e->size : e->start + 1;
}

static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;
	while (i && h[(i - 1) / 2] < v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	uint32_t v = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

static void emit(symdb_perfmap *m, uint64_t from, uint64_t to, uint32_t ent)
{
	struct pm_seg *last = m->nseg ? &m->seg[m->nseg - 1] : NULL;
	if (last && last->ent == ent && last->end == from) {
		last->end = to;
		return;
	}
	m->seg[m->nseg++] = (struct pm_seg){ .start = from, .end = to, .ent = ent };
}

static int flatten(symdb_perfmap *m)
{
	size_t n = m->nent, nh = 0;
	m->nseg = 0;
	m->st.shadowed = 0;
	if (!n)
		return 0;
	if (n > UINT32_MAX / 2)
		return -ENOMEM;
	struct pm_event *ev = malloc(2 * n * sizeof *ev);
	uint32_t *heap = malloc(n * sizeof *heap);
	unsigned char *won = calloc(n, 1);
	/* Each event adds at most one segment (2n - 1 at most). */
	int rc = !ev || !heap || !won ? -ENOMEM
	                             : grow((void **)&m->seg, &m->seg_cap, 2 * n, sizeof *m->seg);
	if (rc == 0) {
		for (size_t i = 0; i < n; i++) {
			ev[2 * i] = (struct pm_event){ m->ent[i].start, (uint32_t)i, 0 };
			ev[2 * i + 1] = (struct pm_event){ ent_end(&m->ent[i]), (uint32_t)i, 1 };
		}
		qsort(ev, 2 * n, sizeof *ev, cmp_event);
		for (size_t k = 0; k < 2 * n;) {
			uint64_t at = ev[k].at;
			for (; k < 2 * n && ev[k].at == at; k++)
				if (!ev[k].is_end)
					heap_push(heap, &nh, ev[k].ent);
			while (nh && ent_end(&m->ent[heap[0]]) <= at)
				heap_pop(heap, &nh);
			if (nh && k < 2 * n) {
				emit(m, at, ev[k].at, heap[0]);
				won[heap[0]] = 1;
			}
		}
		for (size_t i = 0; i < n; i++)
			m->st.shadowed += !won[i];
	}
	free(ev);
	free(heap);
	free(won);
	return rc;
}

/* ---- reading ----------------------------------------------------------- */

/* Take every complete line of buf[0..len); returns the bytes used (up to
 * the start of an unterminated last line). */
static ptrdiff_t take_lines(symdb_perfmap *m, const char *buf, size_t len)
{
	size_t off = 0;
	while (off < len) {
		const char *nl = memchr(buf + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - buf) - off : len - off;
		if (m->skipping) {
			/* the rest of a line already counted as too long */
			off += n + (nl != NULL);
			m->skipping = !nl;
			continue;
		}
		if (n > m->max_line) {
			m->lineno++;
			m->st.lines++;
			m->st.skipped++;
			m->st.long_lines++;
			if (!m->st.first_skipped_line)
				m->st.first_skipped_line = m->lineno;
			off += n + (nl != NULL);
			m->skipping = !nl;
			continue;
		}
		if (!nl)
			break;
		int rc = take_line(m, buf + off, n);
		if (rc < 0)
			return rc;
		off += n + 1;
	}
	return (ptrdiff_t)off;
}

/* The format, from the file's first bytes (buf at offset 0): a jitdump
 * starts with its magic in either byte order; anything else is text. */
static void decide_kind(symdb_perfmap *m, const char *buf, size_t have)
{
	uint32_t magic;
	if (m->kind != PM_UNKNOWN || have < sizeof magic)
		return;
	memcpy(&magic, buf, sizeof magic);
	m->kind = magic == PM_JITDUMP_MAGIC || magic == PM_JITDUMP_MAGIC_SW ? PM_JITDUMP : PM_TEXT;
}

static ptrdiff_t take_some(symdb_perfmap *m, const char *buf, size_t have, uint64_t pos)
{
	if (m->kind == PM_JITDUMP)
		return pm_jitdump_take(m, (const unsigned char *)buf, have, pos);
	return take_lines(m, buf, have);
}

/* Read fd from m->offset to its end, a chunk at a time; a line (record)
 * may span chunks: the buffer keeps the unfinished tail, and the rest of a
 * jitdump record taken by its name only is passed over (m->skip). */
static int read_appended(symdb_perfmap *m, int fd, uint64_t size)
{
	size_t cap = PM_CHUNK + m->max_line + 1, have = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	uint64_t pos = m->offset; /* the file offset of buf[0] */
	int rc = 0;
	for (;;) {
		if (m->skip && !have) {
			uint64_t n = size - pos < m->skip ? size - pos : m->skip;
			pos += n;
			m->skip -= n;
			if (m->skip)
				break; /* not written yet */
		}
		ssize_t r = 0;
		if (pos + have < size) {
			size_t want = cap - have;
			if (want > size - pos - have)
				want = (size_t)(size - pos - have);
			r = pread(fd, buf + have, want, (off_t)(pos + have));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				rc = -errno;
				break;
			}
		}
		have += (size_t)r;
		if (pos == 0)
			decide_kind(m, buf, have);
		ptrdiff_t used = take_some(m, buf, have, pos);
		if (used < 0) {
			rc = (int)used;
			break;
		}
		memmove(buf, buf + used, have - (size_t)used);
		have -= (size_t)used;
		pos += (uint64_t)used;
		if (r == 0 && !m->skip)
			break; /* EOF (or the size seen by fstat): the tail waits */
	}
	m->st.pending = have;
	m->offset = pos;
	m->st.bytes = pos;
	free(buf);
	return rc;
}

/* Whether the file's first bytes are still the ones read before. */
static int same_head(const symdb_perfmap *m, int fd)
{
	char now[PM_HEAD];
	if (!m->head_len)
		return 1;
	ssize_t r = pread(fd, now, m->head_len, 0);
	return r == (ssize_t)m->head_len && memcmp(now, m->head, m->head_len) == 0;
}

static void keep_head(symdb_perfmap *m, int fd)
{
	size_t want = m->offset < PM_HEAD ? (size_t)m->offset : PM_HEAD;
	if (want <= m->head_len)
		return;
	ssize_t r = pread(fd, m->head, want, 0);
	m->head_len = r > 0 ? (size_t)r : 0;
}

/* 0 nothing new, 1 appended lines read, 2 read whole again; or < 0. */
static int pm_load(symdb_perfmap *m, char *eb, size_t ebsz)
{
	/* O_NONBLOCK: a FIFO at the path opens at once (refused below as not
	 * a regular file) instead of waiting for a writer forever. */
	int fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fmt_err(eb, ebsz, -errno, "%s: %s", m->path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int rc = -errno;
		close(fd);
		return fmt_err(eb, ebsz, rc, "%s: fstat: %s", m->path, strerror(-rc));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "%s: not a regular file", m->path);
	}
	int what = 1;
	if (m->loaded && (st.st_dev != m->dev || st.st_ino != m->ino ||
	                  (uint64_t)st.st_size < m->offset + m->st.pending || !same_head(m, fd))) {
		stats_reset(m);
		m->st.rereads++;
		what = 2;
	} else if (m->loaded && (uint64_t)st.st_size == m->offset + m->st.pending) {
		close(fd);
		return 0;
	}
	size_t before = m->nent;
	int rc = read_appended(m, fd, (uint64_t)st.st_size);
	if (rc == 0 && (m->nent != before || what == 2 || !m->loaded))
		rc = flatten(m);
	if (rc == 0)
		keep_head(m, fd);
	close(fd);
	if (rc < 0) {
		/* A half-read table must not answer: start over next time. */
		stats_reset(m);
		m->loaded = 0;
		return fmt_err(eb, ebsz, rc, "%s: %s", m->path, symdb_strerror(rc));
	}
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	m->loaded = 1;
	return what;
}

/* ---- the API ----------------------------------------------------------- */

#define RD_OPTS_LAST_symdb_perfmap_opts max_line

static int pm_open(const char *path, const symdb_perfmap_opts *opts, symdb_perfmap **out)
{
	unsigned flags;
	char *eb;
	size_t ebsz;
	if (!out)
		return SYMDB_E_INVAL;
	*out = NULL;
	int rc = rd_opts_prefix(opts, RD_OPTS_END(symdb_perfmap_opts), SYMDB_PERFMAP_IN_ROOT,
	                        &flags, &eb, &ebsz);
	if (rc < 0)
		return rc;
	symdb_perfmap *m = calloc(1, sizeof *m);
	if (!m || !(m->path = strdup(path))) {
		free(m);
		return fmt_err(eb, ebsz, -ENOMEM, "%s: out of memory", path);
	}
	size_t max_line = 0;
	if (opts && opts->sz >= offsetof(symdb_perfmap_opts, max_line) + sizeof(size_t))
		max_line = opts->max_line;
	m->max_line = max_line ? max_line : PM_DEFAULT_MAX_LINE;
	if ((rc = pm_load(m, eb, ebsz)) < 0) {
		symdb_perfmap_close(m);
		return rc;
	}
	*out = m;
	return 0;
}

int symdb_perfmap_open(const char *path, const symdb_perfmap_opts *opts, symdb_perfmap **out)
{
	if (!path || !*path)
		return SYMDB_E_INVAL;
	return pm_open(path, opts, out);
}

/* The pid the process sees itself as: the last NSpid of /proc/PID/status
 * (a JIT in a container names its map after that one); pid when the
 * kernel does not say. */
static int ns_pid(int pid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	FILE *f = fopen(path, "re");
	int nspid = pid;
	if (!f)
		return pid;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *s = line + 6, *end;
			for (;;) {
				long v = strtol(s, &end, 10);
				if (end == s)
					break;
				if (v > 0 && v <= INT32_MAX)
					nspid = (int)v;
				s = end;
			}
			break;
		}
	fclose(f);
	return nspid;
}

/* When process pid started, in seconds since the epoch (rounded down), or
 * 0 when the kernel does not say: field 22 of /proc/PID/stat (clock ticks
 * since boot) plus btime of /proc/stat. */
static uint64_t process_start(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* comm may hold spaces and ')' */
	unsigned long long ticks = 0, btime = 0;
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &ticks) != 1)
		return 0;
	if (!(f = fopen("/proc/stat", "re")))
		return 0;
	while (fgets(buf, sizeof buf, f))
		if (sscanf(buf, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	long hz = sysconf(_SC_CLK_TCK);
	return btime && hz > 0 ? btime + ticks / (unsigned long long)hz : 0;
}

/* A map last written before its process started was left by an earlier
 * process with the same pid: its addresses mean nothing here.  (A live
 * JIT's map is written after its process starts; one second of slack for
 * the rounding of both clocks.) */
static int left_by_earlier(int pid, const char *path)
{
	struct stat st;
	uint64_t start = process_start(pid);
	return start && stat(path, &st) == 0 && (uint64_t)st.st_mtime + 1 < start;
}

int symdb_perfmap_open_pid(int pid, const symdb_perfmap_opts *opts, symdb_perfmap **out)
{
	unsigned flags;
	char *eb;
	size_t ebsz;
	if (out)
		*out = NULL;
	int rc = rd_opts_prefix(opts, RD_OPTS_END(symdb_perfmap_opts), SYMDB_PERFMAP_IN_ROOT,
	                        &flags, &eb, &ebsz);
	if (rc < 0)
		return rc;
	if (pid <= 0 || !out)
		return fmt_err(eb, ebsz, SYMDB_E_INVAL, "pid %d: not a process id", pid);
	const char *dir = "/tmp";
	if (opts && opts->sz >= offsetof(symdb_perfmap_opts, dir) + sizeof(char *) && opts->dir)
		dir = opts->dir;
	char path[4096];
	int n;
	if (flags & SYMDB_PERFMAP_IN_ROOT)
		n = snprintf(path, sizeof path, "/proc/%d/root%s%s/perf-%d.map", pid,
		             dir[0] == '/' ? "" : "/", dir, ns_pid(pid));
	else
		n = snprintf(path, sizeof path, "%s/perf-%d.map", dir, pid);
	if (n < 0 || (size_t)n >= sizeof path)
		return fmt_err(eb, ebsz, -ENAMETOOLONG, "%s: path too long", dir);
	if (left_by_earlier(pid, path))
		return fmt_err(eb, ebsz, -ESTALE,
		               "%s: written before process %d started (left by an earlier "
		               "process with this pid)", path, pid);
	return pm_open(path, opts, out);
}

int symdb_perfmap_refresh(symdb_perfmap *m, const symdb_perfmap_opts *opts)
{
	unsigned flags;
	char *eb;
	size_t ebsz;
	int rc = rd_opts_prefix(opts, RD_OPTS_END(symdb_perfmap_opts), SYMDB_PERFMAP_IN_ROOT,
	                        &flags, &eb, &ebsz);
	if (rc < 0)
		return rc;
	if (!m)
		return SYMDB_E_INVAL;
	return pm_load(m, eb, ebsz);
}

int symdb_perfmap_lookup(const symdb_perfmap *m, uint64_t addr, symdb_perfmap_sym *out)
{
	if (!m || !out || out->sz < sizeof out->sz)
		return SYMDB_E_INVAL;
	size_t lo = 0, hi = m->nseg;
	while (lo < hi) { /* the first segment starting past addr */
		size_t mid = lo + (hi - lo) / 2;
		if (m->seg[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= m->seg[lo - 1].end)
		return SYMDB_E_NOT_FOUND;
	const struct pm_entry *e = &m->ent[m->seg[lo - 1].ent];
	symdb_perfmap_sym full = { .sz = sizeof full, .name = m->names + e->name,
		                   .start = e->start, .size = e->size, .line = e->line };
	return rd_out_put(out, &full, sizeof full);
}

int symdb_perfmap_get_stats(const symdb_perfmap *m, symdb_perfmap_stats *out)
{
	if (!m)
		return SYMDB_E_INVAL;
	symdb_perfmap_stats full = m->st;
	full.sz = sizeof full;
	return rd_out_put(out, &full, sizeof full);
}

const char *symdb_perfmap_path(const symdb_perfmap *m)
{
	return m ? m->path : NULL;
}

void symdb_perfmap_close(symdb_perfmap *m)
{
	if (!m)
		return;
	free(m->path);
	free(m->names);
	free(m->ent);
	free(m->seg);
	free(m);
}
