/* SPDX-License-Identifier: MIT */
/*
 * --print-source-context-lines=N for `symdb query`: the lines of source
 * around a frame's line, read from disk at print time and formatted exactly
 * as llvm-symbolizer-14's SourceCode does ("NN >: text" for the line itself,
 * "NN  : text" around it, numbers right-aligned to ceil(log10(last line))
 * digits, a trailing \r dropped).  The last file read is cached, since
 * consecutive frames usually share a file.
 */
#ifndef SYMDB_CLI_SOURCE_H
#define SYMDB_CLI_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "cli_util.h"

struct cli_source {
	int lines;            /* N; <= 0 disables */
	char *path;           /* the cached file, or NULL */
	char *data;           /* its bytes, NULL when unreadable */
	size_t len;
	char *out;            /* the formatted context of the last call */
	size_t out_len, out_cap;
};

CLI_HIDDEN void cli_source_fini(struct cli_source *s);

/*
 * Format the context of file:line into s->out (s->out_len bytes, 0 when the
 * file cannot be read, the range lies past its end, or lines <= 0).
 */
CLI_HIDDEN void cli_source_format(struct cli_source *s, const char *file, int64_t line);
/* The same from text[0..len): source embedded in the DWARF (-gembed-source),
 * which llvm-symbolizer-14 uses instead of the file when the line table has
 * it for the line's file. */
CLI_HIDDEN void cli_source_format_text(struct cli_source *s, const char *text, size_t len,
                                       int64_t line);

#endif /* SYMDB_CLI_SOURCE_H */
