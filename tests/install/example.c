/* SPDX-License-Identifier: MIT */
/*
 * example.c: the library example of README.md, as a complete program that
 * the install test compiles against an installed symdb (pkg-config and CMake
 * find_package) and runs.  Usage: example BINARY ADDR...  (addresses in hex,
 * any order: it sorts them, as symdb_resolve_batch requires).
 */
#include <stdio.h>
#include <stdlib.h>
#include <symdb.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	symdb *db;
	symdb_image *img;
	char err[256] = "";
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof err);
	uint64_t addrs[64];
	symdb_frame frames[256];
	symdb_result res[64];
	size_t n = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: example BINARY ADDR...\n");
		return 2;
	}
	for (int i = 2; i < argc && n < 64; i++)
		addrs[n++] = strtoull(argv[i], NULL, 16);
	qsort(addrs, n, sizeof addrs[0], cmp_u64);
	char dir[4096];
	if (symdb_default_dir(getenv("SYMDB_DIR"), getenv("XDG_CACHE_HOME"), getenv("HOME"), dir,
	                      sizeof dir) < 0 ||
	    symdb_open(dir, &o, &db) < 0 ||                  /* default database */
	    symdb_image_open_binary(db, argv[1], &o, &img) < 0) {
		fprintf(stderr, "symdb: %s: %s\n", argv[1], err);
		return 1;
	}
	ptrdiff_t done = symdb_resolve_batch(img, addrs, n, frames, 256, sizeof(symdb_frame),
	                                     res, sizeof(symdb_result));
	for (ptrdiff_t i = 0; i < done; i++)
		for (uint32_t f = res[i].first; f < res[i].first + res[i].count; f++)
			printf("0x%llx %s\n", (unsigned long long)addrs[i],
			       frames[f].name ? frames[f].name : "??");
	symdb_image_close(img);                             /* frame strings die here */
	symdb_close(db);
	return done < 0 ? 1 : 0;
}
