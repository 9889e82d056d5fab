/* SPDX-License-Identifier: MIT */
/*
 * cli_live_kernel.h - `symdb query --kernel`: kernel addresses through
 * symdb_kernel_symbolize() (kallsyms, the vmlinux, modules), printed in
 * the query's output style.  Its sources are options, so that a saved
 * kernel or a test fixture can stand in for the running one.
 */
#ifndef SYMDB_CLI_LIVE_KERNEL_H
#define SYMDB_CLI_LIVE_KERNEL_H

#include "cli_util.h"

#define CLI_KERNEL_DEBUG_DIRS 16

struct cli_kernel_src {
	int on;           /* --kernel */
	int no_dwarf;     /* --kallsyms-only */
	const char *kallsyms, *notes, *modules, *sysfs_module, *release, *root;
	const char *debug_dirs[CLI_KERNEL_DEBUG_DIRS + 1]; /* --debug-dir, NULL-terminated */
	int ndebug, too_many;
	int any;          /* some source option was given (they need --kernel) */
};

struct query;
/* After the options: check them together and make the query a kernel one;
 * 0 or minus an exit code (reported). */
CLI_HIDDEN int cli_kernel_check(struct query *q);
/* The query's run hook for --kernel: answers addrs[0..naddr) or stdin. */
CLI_HIDDEN int cli_kernel_run(struct query *q, char **addrs, int naddr);

#endif /* SYMDB_CLI_LIVE_KERNEL_H */
