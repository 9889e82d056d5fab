/* SPDX-License-Identifier: MIT */
/*
 * live_jitdump.c - perf's jitdump format (jit-PID.dump, tools/perf/util/
 * jitdump.h; written by V8/Node --perf-prof, the JVM's perf agent,
 * Python 3.12 -X perf_jit), read into the same table as a perf map: each
 * JIT_CODE_LOAD record is an entry (code_addr, code_size, name), each
 * JIT_CODE_MOVE a copy of the latest load with its code_index at the new
 * address.  Records of other kinds (debug info, unwinding info, close)
 * are passed over.
 *
 * Layout, in the writer's byte order (the magic tells which): a header
 * (magic "jItD", version 1, its own total_size, e_machine, pad, pid,
 * timestamp[, flags]), then records, each a 16-byte prefix (id,
 * total_size, timestamp) and its body.  A code load's body is pid, tid,
 * vma, code_addr, code_size, code_index, the NUL-terminated name and the
 * code bytes; only the name is needed, so the code bytes of a record
 * longer than the read buffer are passed over (m->skip) instead of read.
 *
 * The file is written while the JIT runs: a record whose name has not
 * arrived yet waits for the next read.  A record size below the prefix, or
 * a header that is not one, cannot be resynchronised: the rest of the file
 * is ignored (one skipped record) until it is read whole again.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "live_perfmap.h"

#define JD_HEADER_MIN 32    /* the header before `flags` was added */
#define JD_HEADER_MAX 4096
#define JD_PREFIX 16
#define JD_LOAD_FIXED 56    /* prefix + pid, tid, vma, code_addr, code_size, code_index */
#define JD_MOVE_FIXED 64    /* prefix + pid, tid, vma, old, new, code_size, code_index */

enum { JIT_CODE_LOAD = 0, JIT_CODE_MOVE = 1 };

static uint32_t rd32(const symdb_perfmap *m, const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return m->swapped ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const symdb_perfmap *m, const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return m->swapped ? __builtin_bswap64(v) : v;
}

static void give_up(symdb_perfmap *m)
{
	m->lineno++;
	m->st.lines++;
	pm_bad(m);
	m->broken = 1;
}

/* The header at buf[0..len): its size, 0 while incomplete, -1 if it is
 * not a jitdump header. */
static long take_header(symdb_perfmap *m, const unsigned char *buf, size_t len)
{
	if (len < 12)
		return 0;
	uint32_t magic;
	memcpy(&magic, buf, sizeof magic);
	m->swapped = magic == PM_JITDUMP_MAGIC_SW;
	uint32_t size = rd32(m, buf + 8);
	if ((magic != PM_JITDUMP_MAGIC && magic != PM_JITDUMP_MAGIC_SW) || rd32(m, buf + 4) != 1 ||
	    size < JD_HEADER_MIN || size > JD_HEADER_MAX)
		return -1;
	return len < size ? 0 : (long)size;
}

/* A move: the latest load of that code_index, at its new address. */
static int take_move(symdb_perfmap *m, const unsigned char *r)
{
	uint64_t to = rd64(m, r + 40), size = rd64(m, r + 48), index = rd64(m, r + 56);
	for (size_t i = m->nent; i-- > 0;)
		if (m->ent[i].tag == index) {
			char *name = strdup(m->names + m->ent[i].name);
			if (!name)
				return -ENOMEM;
			int rc = pm_add(m, to, size, name, strlen(name), index);
			free(name);
			return rc;
		}
	pm_bad(m);
	return 0;
}

/*
 * The record at r[0..avail) whose total size is `total`: 1 taken, 0 not
 * complete enough yet (wait), or -ENOMEM.  A load needs its name's NUL
 * within max_line bytes; one without is skipped (counted).
 */
static int take_record(symdb_perfmap *m, const unsigned char *r, size_t avail, uint32_t total)
{
	uint32_t id = rd32(m, r);
	size_t need = id == JIT_CODE_LOAD ? JD_LOAD_FIXED : id == JIT_CODE_MOVE ? JD_MOVE_FIXED : 0;
	if (need && total < need + (id == JIT_CODE_LOAD)) {
		m->lineno++;
		m->st.lines++;
		pm_bad(m);
		return 1;
	}
	size_t have = avail < total ? avail : total;
	if (have < need)
		return 0;
	if (id == JIT_CODE_LOAD) {
		size_t lim = total - JD_LOAD_FIXED;
		if (lim > m->max_line + 1)
			lim = m->max_line + 1;
		size_t look = have - JD_LOAD_FIXED < lim ? have - JD_LOAD_FIXED : lim;
		const unsigned char *nul = memchr(r + JD_LOAD_FIXED, '\0', look);
		if (!nul && look < lim)
			return 0;
		m->lineno++;
		m->st.lines++;
		if (!nul) {
			m->st.long_lines++;
			pm_bad(m);
			return 1;
		}
		return pm_add(m, rd64(m, r + 32), rd64(m, r + 40), (const char *)r + JD_LOAD_FIXED,
		              (size_t)(nul - (r + JD_LOAD_FIXED)), rd64(m, r + 48)) < 0 ? -ENOMEM : 1;
	}
	m->lineno++;
	m->st.lines++;
	if (id == JIT_CODE_MOVE)
		return take_move(m, r) < 0 ? -ENOMEM : 1;
	return 1; /* debug info, unwinding info, close, newer kinds: not symbols */
}

ptrdiff_t pm_jitdump_take(symdb_perfmap *m, const unsigned char *buf, size_t len,
                          uint64_t file_off)
{
	size_t off = 0;
	if (m->broken)
		return (ptrdiff_t)len;
	if (file_off == 0) {
		long h = take_header(m, buf, len);
		if (h < 0) {
			give_up(m);
			return (ptrdiff_t)len;
		}
		if (h == 0)
			return 0;
		off = (size_t)h;
	}
	while (len - off >= JD_PREFIX) {
		uint32_t total = rd32(m, buf + off + 4);
		if (total < JD_PREFIX) {
			give_up(m);
			return (ptrdiff_t)len;
		}
		int rc = take_record(m, buf + off, len - off, total);
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
		if (total > len - off) {
			m->skip = total - (len - off);
			return (ptrdiff_t)len;
		}
		off += total;
	}
	return (ptrdiff_t)off;
}
