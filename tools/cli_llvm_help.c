/* SPDX-License-Identifier: MIT */
/*
 * cli_llvm_help.c - --help and --version of the llvm-symbolizer
 * personality.  --help has llvm-symbolizer-14's shape (OVERVIEW, USAGE, the
 * same option spellings in the same groups and order, columns laid out as
 * OptTable::printHelp lays them out, the @FILE line last), so that people
 * and scripts that read it find what they know; the descriptions are
 * symdb's, and say where an option has no effect here.  symdb's own
 * options follow in a group of their own.
 */
#include "cli_llvm.h"

#include <string.h>

#include "cli_demangle.h"
#include "symdb.h"

struct help_line {
	const char *spelling, *text;
};

static const struct help_line general[] = {
	{ "--addresses", "Print each address before what it resolves to" },
	{ "--adjust-vma=<offset>", "Subtract <offset> from each address before resolving it" },
	{ "-a", "Same as --addresses" },
	{ "--basenames", "Print file names without their directories" },
	{ "-C", "Same as --demangle" },
	{ "--debug-file-directory=<dir>",
	  "Where the images of --build-id and BUILDID: lines are looked for "
	  "(<dir>/.build-id/XX/REST.debug; default /usr/lib/debug)" },
	{ "-demangle=false", "Same as --no-demangle" },
	{ "-demangle=true", "Same as --demangle" },
	{ "--demangle", "Demangle C++ and Rust names (the default)" },
	{ "--dia", "Accepted; no effect (a Windows PDB reader)" },
	{ "--dwp=<file>", "Accepted; no effect (symdb picks .dwp files when it indexes)" },
	{ "-e=<file>", "Same as --obj" },
	{ "--exe=<file>", "Same as --obj" },
	{ "--exe <file>", "Same as --obj" },
	{ "-e <file>", "Same as --obj" },
	{ "-f=<value>", "Same as --functions=" },
	{ "--fallback-debug-path=<dir>",
	  "Accepted; no effect (symdb picks debug files when it indexes)" },
	{ "--functions=<value>", "Function names: linkage (the default), short or none" },
	{ "--functions", "Print function names (linkage names)" },
	{ "-f", "Same as --functions" },
	{ "--help", "Print this help" },
	{ "--inlines", "Print the inlined frames of each address too (the default)" },
	{ "--inlining=false", "Same as --no-inlines" },
	{ "--inlining=true", "Same as --inlines" },
	{ "--inlining", "Same as --inlines" },
	{ "-i", "Same as --inlines" },
	{ "--no-demangle", "Print names as they are stored" },
	{ "--no-inlines", "Print only the outermost frame of each address" },
	{ "--no-untag-addresses", "Accepted; no effect on ELF files, as in llvm-symbolizer-14" },
	{ "--obj=<file>",
	  "The binary the addresses belong to (without it, each input line names its binary "
	  "first)" },
	{ "--output-style=style", "Output style: LLVM, GNU or JSON" },
	{ "--pretty-print", "One line per frame: name at file:line:column" },
	{ "--print-address", "Same as --addresses" },
	{ "--print-source-context-lines=<value>",
	  "Print <value> lines of source around each line (from the file, else from source "
	  "embedded in the DWARF)" },
	{ "-p", "Same as --pretty-print" },
	{ "--relative-address", "Accepted; no effect on ELF files, as in llvm-symbolizer-14" },
	{ "--relativenames", "Print file names relative to their compilation directory" },
	{ "-s", "Same as --basenames" },
	{ "--verbose", "Print every known fact about each frame" },
	{ "--version", "Print the version" },
	{ "-v", "Same as --version" },
};

static const struct help_line macho[] = {
	{ "--default-arch=<value>", "The slice of a universal Mach-O file (e.g. x86_64, arm64)" },
	{ "--dsym-hint=<dir>", "Accepted; no effect (symdb finds .dSYM bundles when it indexes)" },
};

static const struct help_line own[] = {
	{ "--db=<dir>",
	  "The database (default: $SYMDB_DIR, else $XDG_CACHE_HOME/symdb, else ~/.cache/symdb)" },
	{ "--uuid=<hex>", "The image by its UUID instead of --obj" },
	{ "--build-id=<hex>",
	  "The image by its build-id instead of --obj (LLVM 15's; in the database, else under "
	  "--debug-file-directory, else fetched)" },
	{ "--addr-kind=<kind>", "vaddr (the default), offset, fileoff or runtime" },
	{ "--load-address=<addr>", "Where the image was loaded (--addr-kind=runtime)" },
	{ "--verify", "Verify every table checksum of each index file opened" },
	{ "--no-verify", "Header and directory checks only (the default)" },
	{ "--no-build", "Do not index a file met unindexed (first sight)" },
	{ "--arch=<value>", "Same as --default-arch" },
};

/* OptTable::printHelp's layout: names up to 23 characters set the
 * column; a longer one gets a line of its own. */
static void print_group(FILE *f, const char *title, const struct help_line *l, size_t n)
{
	size_t width = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(l[i].spelling);
		if (len <= 23 && len > width)
			width = len;
	}
	fprintf(f, "%s:\n", title);
	for (size_t i = 0; i < n; i++) {
		int pad = (int)width - (int)strlen(l[i].spelling);
		fprintf(f, "  %s", l[i].spelling);
		if (pad < 0) {
			fputc('\n', f);
			pad = (int)width + 2;
		}
		fprintf(f, "%*s%s\n", pad + 1, "", l[i].text);
	}
}

void cli_llvm_help(FILE *f)
{
	fputs("OVERVIEW: llvm-symbolizer\n\n"
	      "USAGE: llvm-symbolizer [options] addresses...\n\n",
	      f);
	print_group(f, "OPTIONS", general, sizeof(general) / sizeof(general[0]));
	fputc('\n', f);
	print_group(f, "llvm-symbolizer Mach-O Specific Options", macho,
	            sizeof(macho) / sizeof(macho[0]));
	fputc('\n', f);
	print_group(f, "symdb options (symdb answers from its index database; see 'symdb help query')",
	            own, sizeof(own) / sizeof(own[0]));
	fputs("\nPass @FILE as argument to read options from FILE.\n", f);
}

#define LLVM_STR2(x) #x
#define LLVM_STR(x) LLVM_STR2(x)

/*
 * llvm-symbolizer-14 prints its tool name, then "<vendor> LLVM version
 * 14.0.6" and indented build facts.  Scripts match "LLVM version N" to learn
 * which options and output to expect; symdb answers as llvm-symbolizer-14
 * does, so the line says LLVM version 14.0.6 -- preceded by "symdb" where
 * LLVM puts its vendor, so that nobody takes it for an LLVM build -- and the
 * indented lines give symdb's own versions.
 */
void cli_llvm_version(FILE *f)
{
	fprintf(f,
	        "llvm-symbolizer\n"
	        "symdb LLVM version 14.0.6 compatible\n"
	        "  symdb %s (library %s, demangler %s)\n"
	        "  Answers from symdb's index database, as llvm-symbolizer-14 would.\n",
	        LLVM_STR(SYMDB_VERSION_MAJOR) "." LLVM_STR(SYMDB_VERSION_MINOR) "." LLVM_STR(
	                SYMDB_VERSION_PATCH),
	        symdb_version_string(), cli_demangler_kind());
}
