/* SPDX-License-Identifier: MIT */
/*
 * rel_identify FILE SECONDS: identify FILE over and over for SECONDS, as a
 * server naming path modules does (symdb_file_uuid, symdb_file_uuids,
 * symdb_file_symbol_table), while rewrite.sh rewrites FILE in place in
 * another process (same inode: truncated, then written).  Each call must
 * return, an id or an error; before, reading FILE through a mapping died of
 * SIGBUS when FILE shrank under it.  Prints how many calls answered and how
 * many failed (both must be > 0 for the race to have been run).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "symdb.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: rel_identify FILE SECONDS\n");
		return 2;
	}
	const char *path = argv[1];
	double until = now_s() + atof(argv[2]);
	unsigned long ok = 0, failed = 0;
	symdb_file_image im[8];
	symdb_uuid id;

	while (now_s() < until) {
		if (symdb_file_uuid(path, NULL, &id) == 0)
			ok++;
		else
			failed++;
		if (symdb_file_uuids(path, NULL, im, 8, sizeof im[0]) > 0)
			ok++;
		else
			failed++;
		(void)symdb_file_symbol_table(path);
	}
	printf("identified %lu, failed %lu\n", ok, failed);
	return 0;
}
