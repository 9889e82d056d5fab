/* SPDX-License-Identifier: MIT */
/*
 * pair_api DB FILE: which stored symbol table symdb_image_open_binary()
 * gives for FILE (SPEC §7.2.2), as "names=N alt=A missing=M": N the
 * SYMDB_OPEN_NAMES_* flag symdb_file_symbol_table() reads from FILE
 * (symtab, dynsym or none), A symdb_image_info.alt_symbols, M
 * .symbols_missing.  Public header and shared library only.  Exit 1 when
 * the image cannot be opened.
 */
#include <stdio.h>

#include "symdb.h"

int main(int argc, char **argv)
{
	char err[512] = "";
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = err, .errbuf_sz = sizeof err);
	SYMDB_OPTS(symdb_image_info, info);
	symdb_image *img = NULL;
	symdb *db = NULL;
	unsigned names;

	if (argc != 3) {
		fprintf(stderr, "usage: pair_api DB FILE\n");
		return 2;
	}
	names = symdb_file_symbol_table(argv[2]);
	if (symdb_open(argv[1], &o, &db) || symdb_image_open_binary(db, argv[2], &o, &img) ||
	    symdb_image_get_info(img, &info)) {
		fprintf(stderr, "pair_api: %s: %s\n", argv[2], err);
		symdb_close(db);
		return 1;
	}
	printf("names=%s alt=%u missing=%u\n",
	       names == SYMDB_OPEN_NAMES_SYMTAB   ? "symtab"
	       : names == SYMDB_OPEN_NAMES_DYNSYM ? "dynsym"
	                                          : "none",
	       info.alt_symbols, info.symbols_missing);
	symdb_image_close(img);
	symdb_close(db);
	return 0;
}
