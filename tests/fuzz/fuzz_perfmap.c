/* SPDX-License-Identifier: MIT */
/*
 * fuzz_perfmap.c - libFuzzer target for the perf-map and jitdump readers
 * (symdb_perfmap_*): the input after its first byte is the file, cut in two
 * at a point that byte chooses; the first part is opened, the second appended and the map
 * refreshed (the JIT wrote more), then the whole file is rewritten
 * shorter and refreshed again (a reread).  After each read, addresses taken
 * from the input are looked up and every answer is checked: the address
 * lies in the entry's range (a size of 0: its start), its name is a
 * NUL-terminated string that is read whole, and the counts add up (entries
 * plus skipped lines never exceed the lines read).
 */
#define _GNU_SOURCE /* memfd_create */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "symdb.h"

#define NADDR 32

static void check_map(const symdb_perfmap *m, const uint8_t *data, size_t size)
{
	SYMDB_OPTS(symdb_perfmap_stats, st);
	if (symdb_perfmap_get_stats(m, &st) != 0 || st.entries + st.skipped > st.lines)
		abort();
	for (size_t i = 0; i < NADDR; i++) {
		uint64_t a = 0;
		size_t at = size ? (i * 131) % size : 0;
		if (size >= 8 && at + 8 <= size)
			memcpy(&a, data + at, 8);
		if (i & 1)
			a &= 0xffffu; /* small addresses: where hex text lands */
		SYMDB_OPTS(symdb_perfmap_sym, s);
		int rc = symdb_perfmap_lookup(m, a, &s);
		if (rc == SYMDB_E_NOT_FOUND)
			continue;
		if (rc != 0 || !s.name)
			abort();
		volatile size_t n = strlen(s.name); /* ASan: the whole string is ours */
		(void)n;
		if (s.size ? (a < s.start || a - s.start >= s.size) : a != s.start)
			abort();
		if (s.line == 0 || s.line > st.lines)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	if (size < 2)
		return 0;
	size_t cut = (size_t)data[0] * (size - 1) / 256; /* the rest is the file */
	data++, size--;
	int fd = fz_file(data, cut, path, sizeof path);
	if (fd < 0)
		return 0;
	SYMDB_OPTS(symdb_perfmap_opts, o, .max_line = 64 + data[size - 1]);
	symdb_perfmap *m = NULL;
	if (symdb_perfmap_open(path, &o, &m) == 0) {
		check_map(m, data, size);
		if (write(fd, data + cut, size - cut) == (ssize_t)(size - cut) &&
		    symdb_perfmap_refresh(m, NULL) >= 0)
			check_map(m, data, size);
		/* rewritten shorter: the first bytes again, then garbage */
		if (ftruncate(fd, 0) == 0 && pwrite(fd, data, cut / 2, 0) == (ssize_t)(cut / 2) &&
		    symdb_perfmap_refresh(m, NULL) >= 0)
			check_map(m, data, size);
		symdb_perfmap_close(m);
	}
	close(fd);
	return 0;
}
