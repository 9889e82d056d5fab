/* SPDX-License-Identifier: MIT */
/*
 * live_proc_maps.c - a process's mapping table: /proc/PID/maps parsed into
 * sorted mappings, and /proc/PID/stat's start time, which with the pid
 * names a process uniquely (a pid is reused, a (pid, start time) pair is
 * not within one boot).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "format_header.h"
#include "live_proc_internal.h"

/* The whole of a small procfs file into *buf (grown; NUL-terminated).
 * procfs files have no size, so read until EOF. */
static int read_all(const char *path, char **buf, size_t *cap, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	for (;;) {
		if (*cap - n < 4096) {
			size_t nc = *cap ? *cap * 2 : 16384;
			char *nb = realloc(*buf, nc);
			if (!nb) {
				close(fd);
				return -ENOMEM;
			}
			*buf = nb;
			*cap = nc;
		}
		ssize_t r = read(fd, *buf + n, *cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int rc = -errno;
			close(fd);
			return rc;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	(*buf)[n] = 0;
	*len = n;
	return 0;
}

/* A process that is gone reads as ENOENT (its directory) or ESRCH (a file
 * opened just before it was reaped): both are "no such process". */
static int gone(int rc)
{
	return rc == -ENOENT || rc == -ESRCH ? -ESRCH : rc;
}

int lp_read_start_time(const char *proc_dir, int pid, uint64_t *out)
{
	char path[4200], buf[4096];
	snprintf(path, sizeof path, "%s/%d/stat", proc_dir, pid);
	/* A stack buffer: this runs once per batch, and must not allocate.
	 * The line is a few hundred bytes (comm is at most 16). */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gone(-errno);
	ssize_t n;
	do
		n = read(fd, buf, sizeof buf - 1);
	while (n < 0 && errno == EINTR);
	int rc = n < 0 ? gone(-errno) : 0;
	close(fd);
	if (rc < 0)
		return rc;
	buf[n] = 0;
	/* comm (field 2) may hold spaces and ')': the fields resume after the
	 * last ')'; starttime is field 22, the 20th after it. */
	char *p = strrchr(buf, ')');
	int field = 2;
	while (p && *p) {
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (++field == 22) {
			*out = strtoull(p, NULL, 10);
			return 0;
		}
	}
	return -EPROTO;
}

static int parse_hex(const char **sp, uint64_t *out)
{
	const char *s = *sp;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 16);
	if (end == s || errno)
		return -1;
	*out = v;
	*sp = end;
	return 0;
}

/* "start-end perms offset major:minor inode   path" */
static int parse_line(struct lp_table *t, const char *s, const char *eol)
{
	uint64_t start, end, off, maj, min, ino;
	char perms[5];
	if (parse_hex(&s, &start) || *s++ != '-' || parse_hex(&s, &end) || *s++ != ' ')
		return -EPROTO;
	if (eol - s < 5)
		return -EPROTO;
	memcpy(perms, s, 4);
	s += 5;
	if (parse_hex(&s, &off) || *s++ != ' ' || parse_hex(&s, &maj) || *s++ != ':' ||
	    parse_hex(&s, &min) || *s++ != ' ')
		return -EPROTO;
	char *e;
	ino = strtoull(s, &e, 10);
	s = e;
	while (s < eol && *s == ' ')
		s++;
	uint32_t prot = (perms[0] == 'r' ? SYMDB_MAP_READ : 0u) |
	                (perms[1] == 'w' ? SYMDB_MAP_WRITE : 0u) |
	                (perms[2] == 'x' ? SYMDB_MAP_EXEC : 0u);
	return lp_table_add(t, start, end, off, makedev((unsigned)maj, (unsigned)min), ino, prot,
	                    s, (size_t)(eol - s));
}

int lp_read_maps(const char *proc_dir, int pid, char **buf, size_t *cap, size_t *len,
                 char *errbuf, size_t errbuf_sz)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%d/maps", proc_dir, pid);
	int rc = read_all(path, buf, cap, len);
	/* A zombie (or a kernel thread) has an empty maps file. */
	if (rc == 0 && *len == 0)
		rc = -ESRCH;
	if (rc < 0) {
		rc = gone(rc);
		return fmt_err(errbuf, errbuf_sz, rc, "%s: %s", path,
		               rc == -ESRCH ? "no such process" : symdb_strerror(rc));
	}
	return 0;
}

int lp_parse_maps(struct lp_table *t, const char *buf, size_t len)
{
	int rc = 0;
	lp_table_clear(t);
	for (const char *s = buf; rc == 0 && s < buf + len;) {
		const char *eol = memchr(s, '\n', (size_t)(buf + len - s));
		if (!eol)
			eol = buf + len;
		rc = parse_line(t, s, eol);
		s = eol + 1;
	}
	if (rc < 0) {
		lp_table_clear(t);
		return rc;
	}
	lp_table_sort(t);
	return 0;
}

int lp_table_add(struct lp_table *t, uint64_t start, uint64_t end, uint64_t pgoff, uint64_t dev,
                 uint64_t ino, uint32_t prot, const char *path, size_t path_len)
{
	if (t->nmap == t->map_cap) {
		size_t nc = t->map_cap ? t->map_cap * 2 : 64;
		struct lp_map *nm = realloc(t->map, nc * sizeof *nm);
		if (!nm)
			return -ENOMEM;
		t->map = nm;
		t->map_cap = nc;
	}
	uint32_t off = UINT32_MAX;
	if (path && path_len) {
		if (t->strs_len + path_len + 1 > t->strs_cap) {
			size_t nc = t->strs_cap ? t->strs_cap : 4096;
			while (nc < t->strs_len + path_len + 1)
				nc *= 2;
			char *ns = realloc(t->strs, nc);
			if (!ns)
				return -ENOMEM;
			t->strs = ns;
			t->strs_cap = nc;
		}
		if (t->strs_len + path_len + 1 > UINT32_MAX)
			return -ENOMEM;
		off = (uint32_t)t->strs_len;
		memcpy(t->strs + off, path, path_len);
		t->strs[off + path_len] = 0;
		t->strs_len += path_len + 1;
	}
	t->map[t->nmap++] = (struct lp_map){ .start = start, .end = end, .pgoff = pgoff,
		                             .dev = dev, .ino = ino, .prot = prot, .path = off };
	return 0;
}

static int map_cmp(const void *a, const void *b)
{
	const struct lp_map *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

void lp_table_sort(struct lp_table *t)
{
	/* /proc/PID/maps is sorted already: this is one check then */
	for (size_t i = 1; i < t->nmap; i++)
		if (t->map[i - 1].start > t->map[i].start) {
			qsort(t->map, t->nmap, sizeof *t->map, map_cmp);
			return;
		}
}

struct lp_map *lp_table_find(struct lp_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nmap;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->map[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	struct lp_map *m = &t->map[lo - 1];
	return addr < m->end ? m : NULL;
}

void lp_table_clear(struct lp_table *t)
{
	t->nmap = 0;
	t->strs_len = 0;
}

void lp_table_free(struct lp_table *t)
{
	free(t->map);
	free(t->strs);
	free(t->raw);
	memset(t, 0, sizeof *t);
}
