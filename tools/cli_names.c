/* SPDX-License-Identifier: MIT */
/*
 * Human-readable names for the numbers `symdb list` and `symdb info` print:
 * machine types (ELF e_machine, Mach-O cputype) and timestamps.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

#include "cli_util.h"

/* ELF e_machine values (ELF gABI, "Machine Information") and Mach-O CPU
 * types (mach/machine.h: CPU_ARCH_ABI64 = 0x01000000). */
const char *cli_machine_name(unsigned object_format, uint32_t machine, char *buf, size_t bufsz)
{
	static const struct {
		unsigned fmt;
		uint32_t m;
		const char *name;
	} names[] = {
		{ 1, 3, "i386" },     { 1, 8, "mips" },       { 1, 20, "ppc" },
		{ 1, 21, "ppc64" },   { 1, 22, "s390" },      { 1, 40, "arm" },
		{ 1, 62, "x86_64" },  { 1, 183, "aarch64" },  { 1, 243, "riscv" },
		{ 1, 258, "loongarch" }, { 2, 7, "i386" },    { 2, 12, "arm" },
		{ 2, 0x01000007, "x86_64" }, { 2, 0x0100000c, "arm64" },
		{ 2, 0x0200000c, "arm64_32" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].fmt == object_format && names[i].m == machine)
			return names[i].name;
	snprintf(buf, bufsz, "%s-%u", object_format == 2 ? "macho" : "elf", machine);
	return buf;
}

/* ISO 8601 UTC, "-" for 0. */
const char *cli_time_name(uint64_t t, char *buf, size_t bufsz)
{
	if (!t)
		return "-";
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || !strftime(buf, bufsz, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, bufsz, "%llu", (unsigned long long)t);
	return buf;
}
