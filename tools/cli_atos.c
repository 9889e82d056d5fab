/* SPDX-License-Identifier: MIT */
/*
 * cli_atos.c - atos-style output (see cli_atos.h).
 *
 * atos(1) prints "func (in image) (file:line)" when full debug information
 * covers the address and "func (in image) + offset" when only the symbol
 * table does; an address it cannot convert is "reprinted unchanged".  The
 * file is the basename of the source path (atos -fullPath is not offered).
 * With -i every inlined frame gets a line, innermost first, each at the
 * location where the next one out called it; plain atos prints only the
 * outermost, concrete function.
 */
#include "cli_atos.h"

#include <string.h>

static const char *atos_base(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* The name of frame i: the outermost takes the symbol-table name when one
 * covers the address (as the frames already carry it). */
static const char *atos_name(struct cli_demangler *dm, const symdb_result *r,
                             const symdb_frame *f, size_t i)
{
	const char *n = f[i].name;

	if (i + 1 == r->count && r->sym_name)
		n = r->sym_name;
	if (!n || !*n)
		return NULL;
	return cli_demangle(dm, n);
}

/* The start an offset counts from: the symbol covering the address (atos's
 * "+ offset" is an offset into a symbol, also for an inlined frame without a
 * line), else the frame's own start. */
static int atos_start(const symdb_result *r, const symdb_frame *f, size_t i, uint64_t *start)
{
	if (r->sym_name) {
		*start = r->sym_addr;
		return 1;
	}
	if (i < r->count && (f[i].flags & SYMDB_FRAME_HAS_START)) {
		*start = f[i].start_addr;
		return 1;
	}
	return 0;
}

int cli_atos_frame(struct cli_out *o, struct cli_demangler *dm, const char *image,
                   uint64_t vaddr, const symdb_result *r, const symdb_frame *f, size_t i)
{
	const char *name = NULL;
	uint64_t start = 0;

	if (r->count)
		name = atos_name(dm, r, f, i);
	else if (r->sym_name && *r->sym_name)
		name = cli_demangle(dm, r->sym_name);
	if (!name)
		return 0;
	/* names and files from the index may hold anything: one frame, one line */
	cli_out_text(o, name, strlen(name), CLI_TEXT_CTRL);
	cli_out_str(o, " (in ");
	cli_out_text(o, image, strlen(image), CLI_TEXT_CTRL);
	cli_out_chr(o, ')');
	if (r->count && f[i].file && f[i].line) {
		const char *base = atos_base(f[i].file);
		cli_out_str(o, " (");
		cli_out_text(o, base, strlen(base), CLI_TEXT_CTRL);
		cli_out_chr(o, ':');
		cli_out_u64(o, f[i].line);
		cli_out_chr(o, ')');
		return 1;
	}
	if (!atos_start(r, f, i, &start) || vaddr < start)
		start = vaddr;
	cli_out_str(o, " + ");
	cli_out_u64(o, vaddr - start);
	return 1;
}

void cli_atos_print(struct cli_out *o, struct cli_demangler *dm, const char *image,
                    uint64_t given, uint64_t vaddr, const symdb_result *r,
                    const symdb_frame *frames, int inlines)
{
	size_t first = 0, n = r->count ? r->count : 1;

	if (!inlines)
		first = n - 1;
	for (size_t i = first; i < n; i++) {
		if (!cli_atos_frame(o, dm, image, vaddr, r, frames, i)) {
			if (i + 1 < n)
				continue; /* an unnamed inner frame: nothing to show */
			cli_out_str(o, "0x");
			cli_out_hex(o, given);
		}
		cli_out_chr(o, '\n');
	}
}
