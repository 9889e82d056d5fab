/* SPDX-License-Identifier: MIT */
/*
 * The CLI's demangler handle (see cli_demangle.h): a reusable buffer over
 * the library's symdb_demangle().
 */
#include "cli_demangle.h"

#include <stdlib.h>

#include "symdb.h"

void cli_demangler_init(struct cli_demangler *d)
{
	d->cap = 256;
	d->buf = malloc(d->cap);
	if (!d->buf)
		d->cap = 0;
}

void cli_demangler_fini(struct cli_demangler *d)
{
	free(d->buf);
	d->buf = NULL;
	d->cap = 0;
}

const char *cli_demangler_kind(void)
{
	return symdb_demangler_kind();
}

const char *cli_demangle(struct cli_demangler *d, const char *name)
{
	if (name[0] != '_' && name[0] != '?')
		return name; /* cheap exit for C names */
	if (!d->buf)
		return name;
	if (symdb_demangle(name, &d->buf, &d->cap) != 1)
		return name;
	d->demangled++;
	return d->buf;
}
