/* SPDX-License-Identifier: MIT */
/*
 * cli_target.c - an image named on the command line by UUID, unique UUID
 * prefix or binary path (see cli_target.h).  The prefix search is the
 * library's (symdb_lookup_prefix, a range scan of the catalog); this file
 * only words its outcomes the CLI's way.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli_target.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#define CLI_AMBIGUOUS_SHOWN 16 /* matches named in an ambiguity error */

int cli_is_uuid_arg(const char *arg)
{
	int digits = 0;

	for (; *arg; arg++) {
		if ((*arg >= '0' && *arg <= '9') || (*arg >= 'a' && *arg <= 'f') ||
		    (*arg >= 'A' && *arg <= 'F'))
			digits++;
		else if (*arg != '-')
			return 0;
	}
	return digits > 0;
}

static size_t count_digits(const char *arg)
{
	size_t n = 0;

	for (; *arg; arg++)
		n += *arg != '-';
	return n;
}

/* "UUID (NAME), UUID (NAME)..." for an ambiguity error. */
static void name_matches(symdb *db, const symdb_uuid *m, int n, char *buf, size_t bufsz)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && i < CLI_AMBIGUOUS_SHOWN && len < bufsz; i++) {
		char hex[2 * SYMDB_UUID_MAX + 1], names[2 * 65536];
		symdb_entry e = { .sz = sizeof e };
		symdb_uuid_format(&m[i], hex);
		int ok = symdb_lookup(db, &m[i], &e, names, sizeof names) == 0 && e.image_name;
		len += (size_t)snprintf(buf + len, bufsz - len, "%s%s%s%s%s", i ? ", " : "", hex,
		                        ok ? " (" : "", ok ? e.image_name : "", ok ? ")" : "");
	}
	if (n > CLI_AMBIGUOUS_SHOWN && len < bufsz)
		snprintf(buf + len, bufsz - len, ", and %d more", n - CLI_AMBIGUOUS_SHOWN);
}

int cli_uuid_resolve(symdb *db, const char *arg, symdb_uuid *out)
{
	symdb_uuid m[CLI_AMBIGUOUS_SHOWN];
	size_t nd = count_digits(arg);

	if (!cli_is_uuid_arg(arg) || nd > 2 * SYMDB_UUID_MAX) {
		cli_err(arg, "not a UUID (8 to 64 hex digits)");
		return -CLI_EXIT_USAGE;
	}
	if (nd < SYMDB_UUID_PREFIX_MIN) {
		/* A whole UUID this short (a 2-byte build-id) is still taken. */
		symdb_entry e = { .sz = sizeof e };
		char names[2 * 65536];
		if (symdb_uuid_parse(arg, out) == 0 &&
		    symdb_lookup(db, out, &e, names, sizeof names) == 0) {
			out->kind = e.uuid.kind;
			return 0;
		}
		cli_err(arg, "UUID prefix too short: give at least %d hex digits",
		        SYMDB_UUID_PREFIX_MIN);
		return -CLI_EXIT_USAGE;
	}
	int n = symdb_lookup_prefix(db, arg, m, CLI_AMBIGUOUS_SHOWN);
	if (n < 0) {
		cli_err_lib(arg, n, NULL);
		return -cli_exit_for(n);
	}
	if (n == 0) {
		cli_err(arg, "not in the database");
		return -CLI_EXIT_FAILED;
	}
	if (n > 1) {
		char list[4096];
		name_matches(db, m, n, list, sizeof list);
		cli_err(arg, "ambiguous UUID prefix: %d images match: %s", n, list);
		return -CLI_EXIT_FAILED;
	}
	*out = m[0];
	return 0;
}

int cli_target_uuids(symdb *db, const char *arg, symdb_uuid *out, size_t max)
{
	symdb_file_image im[64];
	struct stat st;
	char err[512] = "";

	if (cli_is_uuid_arg(arg) && stat(arg, &st) != 0) {
		int rc = max ? cli_uuid_resolve(db, arg, out) : -CLI_EXIT_USAGE;
		return rc < 0 ? rc : 1;
	}
	if (stat(arg, &st) != 0) {
		/* rm has always rejected such an argument as a usage error. */
		cli_err(arg, "no such file, and not a UUID");
		return -CLI_EXIT_USAGE;
	}
	int n = symdb_file_uuids(arg, CLI_EB_OPTS(err, sizeof err), im, sizeof im / sizeof im[0],
	                         sizeof im[0]);
	if (n < 0) {
		cli_err_lib(arg, n, err);
		return -CLI_EXIT_FAILED;
	}
	if (n == 0) {
		cli_err(arg, "no image in this file");
		return -CLI_EXIT_FAILED;
	}
	if ((size_t)n > max)
		n = (int)max;
	for (int i = 0; i < n; i++)
		out[i] = im[i].uuid;
	return n;
}
