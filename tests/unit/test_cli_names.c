/* SPDX-License-Identifier: MIT */
/*
 * test_cli_names: the demangled-name cache of `symdb query`'s printer
 * (tools/cli_output.c) built with tiny generations (64 names, 4 KiB of text
 * each), so that a run of a few thousand frames fills and rotates them
 * hundreds of times and copies names forward from the previous generation.
 * Every printed name must be llvm-cxxfilt-14's demangling of the mangled
 * name printed (C names and names it cannot demangle come back as they
 * are), whatever the order: a hot set printed over and over, cold names in
 * between, and the cache dropped once midway (as after a faulted mapping).
 * Seeded (printed), so a failure replays.
 *
 * Built twice: as test_cli_names, whose compressed store (cli_name_cold.c)
 * holds every name, so each name must be demangled once however often the
 * generations rotate; and as test_cli_names_full (COLD_FILLS), whose store
 * fills after a few names, so that names are demangled again and must
 * still print right.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli_output.h"

#define NNAMES 600
#define NPRINTS 20000
#define SEED 20261126u

/* symdb_main.c's, which cli_util.c refers to; never called here. */
void cli_usage(FILE *f, const char *cmd)
{
	(void)f;
	(void)cmd;
}

static char names[NNAMES][96];
static char *want[NNAMES];

static uint32_t rng = SEED;
static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

/* Mangled names of several lengths, some C names and one that is not a
 * valid mangling (printed as is). */
static void make_names(void)
{
	for (int i = 0; i < NNAMES; i++) {
		switch (i % 5) {
		case 0: snprintf(names[i], sizeof names[i], "_ZN2ns4f%03dEv", i); break;
		case 1: snprintf(names[i], sizeof names[i], "_ZN3abc3defIiE6g%04dEPKcm", i); break;
		case 2: snprintf(names[i], sizeof names[i],
		                 "_ZNSt6vectorIiSaIiEE9push_%04dERKi", i); break;
		case 3: snprintf(names[i], sizeof names[i], "c_name_%d", i); break;
		default: snprintf(names[i], sizeof names[i], "_Zbad%d", i); break;
		}
	}
}

/* want[i]: llvm-cxxfilt-14's answer for names[i]; 0, or -1 without it. */
static int oracle(void)
{
	char in[] = "/tmp/test_cli_names.XXXXXX";
	int fd = mkstemp(in);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	for (int i = 0; i < NNAMES; i++)
		fprintf(f, "%s\n", names[i]);
	fclose(f);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "llvm-cxxfilt-14 <%s 2>/dev/null", in);
	FILE *p = popen(cmd, "r");
	char line[4096];
	int n = 0;
	while (p && n < NNAMES && fgets(line, sizeof line, p)) {
		line[strcspn(line, "\n")] = 0;
		want[n++] = strdup(line);
	}
	int rc = p ? pclose(p) : -1;
	remove(in);
	return rc == 0 && n == NNAMES ? 0 : -1;
}

/* Print names[i] as a frame and check the name line. */
static void print_one(struct cli_printer *p, struct cli_out *o, int i)
{
	struct cli_line_info li;
	memset(&li, 0, sizeof li);
	li.name = names[i];
	o->len = 0;
	cli_print_code(p, 0, &li, 1);
	size_t wl = strlen(want[i]);
	int ok = o->len > wl && memcmp(o->buf, want[i], wl) == 0 && o->buf[wl] == '\n';
	CHECK(ok);
	if (!ok)
		fprintf(stderr, "  name %d (%s): got \"%.*s\", want \"%s\" (seed %u)\n", i, names[i],
		        (int)strcspn(o->buf, "\n"), o->buf, want[i], SEED);
}

int main(void)
{
	make_names();
	if (oracle() < 0) {
		check_skip("llvm-cxxfilt-14 is not there or failed");
		return check_exit();
	}
	struct cli_out o;
	struct cli_printer p;
	CHECK(cli_out_init(&o, NULL, 4096) == 0);
	cli_printer_init(&p, &o);
	p.stable_names = 1;
	static char printed[NNAMES];
	size_t distinct = 0; /* names printed since the cache was dropped that demangle */
	for (int k = 0; k < NPRINTS && check_failures < 10; k++) {
		/* three in four prints from a hot set of 40 names */
		int i = next_rand() % 4 ? (int)(next_rand() % 40) : (int)(next_rand() % NNAMES);
		print_one(&p, &o, i);
		if (!printed[i] && strcmp(want[i], names[i]) != 0)
			distinct++;
		printed[i] = 1;
		if (k == NPRINTS / 2) {
#ifndef COLD_FILLS
			/* each name demangled once, the generations having
			 * rotated hundreds of times */
			CHECK(p.dm.demangled == distinct);
			if (p.dm.demangled != distinct)
				fprintf(stderr, "  %zu names demangled %zu times\n", distinct,
				        p.dm.demangled);
#else
			CHECK(p.dm.demangled > distinct); /* (the store did fill) */
#endif
			cli_printer_forget_names(&p);
			memset(printed, 0, sizeof printed);
			distinct = 0;
			p.dm.demangled = 0;
		}
	}
#ifndef COLD_FILLS
	CHECK(p.dm.demangled == distinct); /* and once again after the drop */
#endif
	cli_printer_fini(&p);
	cli_out_fini(&o);
	for (int i = 0; i < NNAMES; i++)
		free(want[i]);
	return check_exit();
}
