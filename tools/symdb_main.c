/* SPDX-License-Identifier: MIT */
/*
 * `symdb`: the command-line tool.  This file holds the subcommand table, the
 * global options (--db DIR, --help, --version) and every help text; each
 * subcommand lives in its own cmd_*.c.  Exit codes are listed in the main
 * help and are the same for every subcommand.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_addr2line.h"
#include "cli_demangle.h"
#include "cli_maint.h"
#include "cli_util.h"
#include "profile.h"
#include "symdb.h"

/*
 * `symdb serve` runs in symdb-serve, this same program with the server
 * linked in (SYMDB_WITH_SERVE), installed beside symdb: libmicrohttpd and
 * the TLS stack it loads (GnuTLS, p11-kit, nettle, ...) cost about 4 ms of
 * every start, and only the process that serves needs them.  In symdb the
 * entry has no function: main() executes symdb-serve with its own argv
 * (exec_server).
 */
#ifdef SYMDB_WITH_SERVE
#define SERVE_RUN cli_cmd_serve
#else
#define SERVE_RUN NULL
#endif

struct subcommand {
	const char *name;
	int (*run)(const struct cli_global *g, int argc, char **argv);
	const char *summary;
	const char *usage;
};

static const struct subcommand commands[] = {
	{ "build", cli_cmd_build, "index binaries into the database",
	  "usage: symdb build [--db DIR] [-r] [--force] [-j N] [--threads N] [--debug-dir DIR] [--no-dwarf]\n"
	  "                   [--no-isolate] [--timeout SECONDS] [--memory-limit SIZE] FILE...\n"
	  "\n"
	  "Index each FILE (ELF executable, shared object or .debug file) and publish\n"
	  "its index file in the database.  Each FILE is parsed in a separate,\n"
	  "resource-limited process; its output is verified before it is published.\n"
	  "An image already indexed (same UUID) from the same contents is skipped; from\n"
	  "different contents it is replaced when only the new input has DWARF, and is\n"
	  "otherwise a conflict (exit status 1) unless --force.  One line per file on\n"
	  "stdout, in argument order:\n"
	  "  indexed UUID FILE [(debug file PATH)]\n"
	  "  indexed UUID FILE (replaced an index without DWARF)\n"
	  "  skipped UUID FILE (already indexed)\n"
	  "A Mach-O FILE (thin or universal, or a .dSYM bundle) gives one image per\n"
	  "architecture, keyed by its LC_UUID, one line each:\n"
	  "  indexed UUID FILE (ARCH)\n"
	  "A binary's DWARF is taken from FILE.dSYM beside it when the UUIDs match.\n"
	  "Failures print 'symdb: FILE: reason' on stderr; the other files are still\n"
	  "indexed and the exit status is 1.\n"
	  "A directory FILE needs -r; then every ELF and Mach-O file under it is\n"
	  "indexed (links followed to files, never to directories), every other\n"
	  "file is skipped with 'ignored PATH (why)' (not a failure), and a last line\n"
	  "says 'summary: N indexed, N already indexed, N failed, N skipped ...'.\n"
	  "\n"
	  "  -r, --recursive  index the object files under each directory FILE\n"
	  "  --db DIR         database directory (default: $SYMDB_DIR, else\n"
	  "                   $XDG_CACHE_HOME/symdb, else ~/.cache/symdb); created if needed\n"
	  "  --force          re-index even if the UUID is already in the database\n"
	  "  -j N, --jobs N   index N files in parallel (default 1)\n"
	  "  --threads N      threads reading one file's DWARF (default: the online CPUs,\n"
	  "                   at most 8, shared among the -j files); the index is\n"
	  "                   byte-identical whatever N\n"
	  "  --debug-dir DIR  also look for separate debug files (by build-id) in DIR\n"
	  "  --no-dwarf       index symbol tables only\n"
	  "  --no-isolate     accepted; every input is parsed by symdb-indexer\n"
	  "  --timeout S      give up on a FILE after S seconds (default 120 + 1 per MiB)\n"
	  "  --memory-limit SIZE  address-space limit of the indexer process, e.g. 2G\n"
	  "                   (default: the larger of 8G and 64 times the FILE's size)\n"
	  "  -q, --quiet      no per-file lines on stdout\n"
	  "  --build-id HEX   fetch image HEX from the sources below and publish it (no FILE\n"
	  "                   needed; repeatable): 'imported HEX (upstream URL)', 'indexed HEX\n"
	  "                   (debuginfod URL)' or 'skipped HEX (already indexed)'; with\n"
	  "                   --force HEX is fetched anew even when indexed (a damaged index)\n"
	  "  --upstream URL   an upstream index store: URL/symdb/v1/XX/HEX.symdb (repeatable,\n"
	  "                   tried in order, before debuginfod; env SYMDB_UPSTREAM)\n"
	  "  --debuginfod URL a debuginfod server (repeatable; env DEBUGINFOD_URLS)\n"
	  "  --fetch-timeout S  deadline of one fetch, all sources (default 30; env\n"
	  "                   DEBUGINFOD_TIMEOUT)\n"
	  "  --negative-ttl S remember 'no source has it' S seconds (default 600)\n"
	  "  --no-fetch       fetch nothing, whatever the environment says\n"
	  "                   (proxies: env http_proxy, https_proxy, all_proxy, no_proxy)\n" },
	{ "query", cli_cmd_query, "resolve addresses like llvm-symbolizer --obj",
	  "usage: symdb query [--db DIR] [--obj FILE | --uuid UUID | --build-id HEX | --pid PID]\n"
	  "                   [options] [ADDR...]\n"
	  "\n"
	  "Resolve addresses of one indexed image and print what `llvm-symbolizer-14\n"
	  "--obj FILE` prints, byte for byte.  Addresses come from the arguments, else\n"
	  "one per line from stdin (llvm-symbolizer's batch syntax: 0x hex, 0 octal,\n"
	  "decimal; optional CODE/DATA/FRAME prefix; unparsable lines are echoed).\n"
	  "Without --obj, --uuid and --build-id each request names its binary first, as for\n"
	  "llvm-symbolizer: 'FILE ADDR' or '\"FILE\" ADDR' (the sanitizers' protocol),\n"
	  "'FILE:PATH ADDR', or 'BUILDID:HEX ADDR' (llvm-symbolizer 15's syntax: the\n"
	  "database's image of that build-id, else one found under\n"
	  "--debug-file-directory, else fetched).  A FILE the database lacks is\n"
	  "indexed on first sight, unless --no-build.\n"
	  "\n"
	  "  --obj FILE, --exe FILE, -e FILE\n"
	  "                   the binary whose addresses these are (found by its build-id)\n"
	  "  --uuid UUID      the image's UUID, or a unique prefix of 8+ hex digits,\n"
	  "                   instead of a file; JSON ModuleName is UUID as given\n"
	  "  --build-id HEX   llvm-symbolizer 15's: the image of exactly this build-id,\n"
	  "                   as for 'BUILDID:HEX' lines (llvm-symbolizer-16's answers)\n"
	  "  --pid PID        the addresses are runtime addresses of live process PID:\n"
	  "                   each is placed in its mapping (/proc/PID/maps), and the file\n"
	  "                   mapped there (or the vDSO) is indexed on first sight\n"
	  "  --db DIR         database directory\n"
	  "  --addr-kind K    vaddr (default), offset (from the image base), fileoff\n"
	  "                   (ELF file offset), runtime (needs --load-address)\n"
	  "  --load-address X where the image base was mapped (--addr-kind runtime)\n"
	  "  --relative-address  accepted; a no-op, as in llvm-symbolizer-14 for ELF\n"
	  "  --adjust-vma X   subtract X from every address first\n"
	  "  --verify         verify every table checksum of each index file opened\n"
	  "                   (reads the whole file; $SYMDB_OPEN_VERIFY_CHECKSUMS=1\n"
	  "                   too).  Default: header and directory only ('symdb\n"
	  "                   verify' checks every table); --no-verify: the default\n"
	  "  --no-build       do not index a FILE met unindexed (indexed on first sight)\n"
	  "  --upstream URL, --debuginfod URL, --fetch-timeout S, --negative-ttl S,\n"
	  "  --no-fetch       fetch a --uuid or build-id image the database lacks (see\n"
	  "                   'symdb help build')\n"
	  "  --perf-map FILE  runtime addresses of JIT code, named by a perf map\n"
	  "                   (/tmp/perf-PID.map) or a jitdump (jit-PID.dump); no\n"
	  "                   database; refreshed when an address is not in it\n"
	  "The running kernel (symdb query --kernel [ADDR...]): runtime kernel addresses,\n"
	  "hex with or without 0x, answered from the vmlinux with the kernel's build-id\n"
	  "(file:line, inline frames; KASLR from _stext), a module's .ko for its .text,\n"
	  "else /proc/kallsyms (symbol only):\n"
	  "  --kernel         the addresses are the running kernel's\n"
	  "  --kallsyms-only  look for no vmlinux and no module file\n"
	  "  --debug-dir DIR  look for the vmlinux and .ko files in DIR first (repeatable)\n"
	  "  --kallsyms FILE, --kernel-notes FILE, --kernel-modules FILE,\n"
	  "  --sysfs-module DIR, --kernel-release REL, --kernel-root DIR\n"
	  "                   read these instead of /proc/kallsyms, /sys/kernel/notes,\n"
	  "                   /proc/modules, /sys/module, uname -r, and / (the root of\n"
	  "                   /usr/lib/debug, /boot, /lib/modules)\n"
	  "llvm-symbolizer options:\n"
	  "  --output-style=LLVM|GNU|JSON\n"
	  "  --inlines, -i / --no-inlines   print inlined frames (default on)\n"
	  "  --functions[=linkage|short|none], -f   function names (default linkage)\n"
	  "  --demangle, -C / --no-demangle        demangle names (default on)\n"
	  "  --basenames, -s  strip directories      --relativenames  strip comp dir\n"
	  "  --addresses, --print-address, -a      print the address first\n"
	  "  --pretty-print, -p                     one line per frame\n"
	  "  --verbose                              llvm-symbolizer's verbose form\n"
	  "  --print-source-context-lines=N         N lines of source around each line\n"
	  "  --debug-file-directory=DIR           where --build-id's and BUILDID: lines'\n"
	  "                   images are (DIR/.build-id/XX/REST.debug; default\n"
	  "                   /usr/lib/debug)\n"
	  "  --dwp, --fallback-debug-path, --dsym-hint, --dia,\n"
	  "  --untag-addresses, --no-untag-addresses, --use-symbol-table=true\n"
	  "                   accepted, no effect: debug files are chosen by symdb build\n"
	  "  --default-arch=ARCH, --arch=ARCH     the slice of a universal Mach-O file\n"
	  "  --version, -v                        llvm-symbolizer's version shape\n"
	  "Options are parsed as llvm-symbolizer-14 parses them: --x=V or --x V,\n"
	  "grouped letters (-apCs), @FILE reads more arguments from FILE (GNU\n"
	  "quoting; nested; a missing FILE stays an argument); '--' ends options.\n"
	  "DATA requests print the covering symbol; FRAME requests always print the\n"
	  "'no locals' answer (symdb stores no variable information).\n"
	  "Run as llvm-symbolizer (a link to symdb), it also reads\n"
	  "$LLVM_SYMBOLIZER_OPTS, and its errors and --help are llvm-symbolizer-14's.\n" },
	{ "addr2line", cli_cmd_addr2line, "GNU addr2line's options, llvm-addr2line's answers",
	  "usage: symdb addr2line [-a] [-b BFDNAME] [-C] [-e FILE] [-f] [-i] [-j SECTION]\n"
	  "                       [-p] [-r] [-R] [-s] [-h] [-v] [ADDR...]\n"
	  "\n"
	  "GNU addr2line (binutils 2.40) over the database, also run as symdb under\n"
	  "the name addr2line (a symlink first in PATH: perf runs 'addr2line -e FILE\n"
	  "-i -f').  FILE (default a.out) must be indexed.  Addresses are hex, with or\n"
	  "without 0x, from the arguments or one per line from stdin; each is answered\n"
	  "as llvm-addr2line-14 answers it.  A line that is not an address gets GNU's\n"
	  "answer (its leading hex digits, else a symbol[+offset], else 0: '?\?' and\n"
	  "'??:0' for perf's ',' end marker).  Every batch is flushed at once.\n"
	  "Options are GNU's: -a/--addresses, -b/--target (ignored), -C/--demangle[=S],\n"
	  "-e/--exe, -f/--functions, -i/--inlines, -j/--section (offsets into that\n"
	  "section), -p/--pretty-print, -s/--basenames, -r/-R (ignored), -h, -v.\n"
	  "The database is $SYMDB_DIR, else ~/.cache/symdb ('symdb --db DIR addr2line').\n" },
	{ "list", cli_cmd_list, "list the indexed images",
	  "usage: symdb list [--db DIR] [--name PATTERN] [--machine NAME] [--older-than AGE]\n"
	  "                  [--json]\n"
	  "\n"
	  "One line per indexed image, in UUID order:\n"
	  "  UUID MACHINE INDEX-BYTES BUILT-AT(UTC) PATH\n"
	  "PATH is the file it was built from (an imported or reindexed image: its\n"
	  "image name).\n"
	  "\n"
	  "  --name PATTERN    image name or path contains PATTERN (a glob if it\n"
	  "                    has * ? or [)\n"
	  "  --machine NAME    x86_64, aarch64, arm64, ...\n"
	  "  --older-than AGE  last used (as 'symdb gc' counts it) more than AGE ago\n"
	  "                    (30d, 12h, 2w, 3600); the clock is $SYMDB_NOW when set\n"
	  "  --json            one JSON document: {\"images\":[{...}, ...]}\n" },
	{ "info", cli_cmd_info, "describe and verify one index file",
	  "usage: symdb info [--db DIR] UUID|PREFIX|FILE|INDEX.symdb\n"
	  "\n"
	  "Print the header facts, table counts and build counters of one image's\n"
	  "index file, and verify every table checksum and invariant.  The image is\n"
	  "named by UUID, by a unique UUID PREFIX (8+ hex digits), by the indexed\n"
	  "binary FILE (its build-id), or by an index file path ending in .symdb.\n"
	  "A damaged file is reported and exits 4.\n" },
	{ "perf", cmd_perf, "symbolize `perf script` samples into folded stacks and a flame graph",
	  "usage: symdb perf [--db DIR] [IN|-] [-o OUT] [--svg FILE] [--title TEXT] [--period]\n"
	  "                  [--no-comm] [--no-annotate] [--build-ids FILE] [--perf-map-dir DIR]\n"
	  "                  [--debug-dir DIR] [--buildid-dir DIR] [--no-debug-names]\n"
	  "                  [--no-build] [-q]\n"
	  "\n"
	  "Read the text of `perf script` (IN, or stdin) and write its samples as folded\n"
	  "stacks, 'comm;root;...;leaf COUNT' per line, symbolized by symdb: files by\n"
	  "their offsets (indexed on first sight), the kernel from the running kernel\n"
	  "(its vmlinux when found, else /proc/kallsyms), the vDSO from this process's,\n"
	  "JIT code from the process's perf map.  Each distinct address is resolved once.\n"
	  "Inline frames are frames of their own.  Run perf script without symbols\n"
	  "and without its own inline frames:\n"
	  "  perf script --no-inline -F comm,pid,tid,time,period,event,ip,dso \\\n"
	  "      --show-mmap-events -i perf.data | symdb perf -o out.folded --svg out.svg\n"
	  "A summary line goes to stderr; progress too, on a terminal.\n"
	  "\n"
	  "  -o, --output OUT    the folded stacks (default stdout)\n"
	  "  --svg FILE          also an interactive flame graph (one SVG file)\n"
	  "  --title TEXT        the flame graph's title\n"
	  "  --period            weigh samples by their period (default: count them)\n"
	  "  --no-comm           no process name as the root frame\n"
	  "  --no-annotate       bare names: no _[k] (kernel), _[j] (JIT), _[i] (inlined)\n"
	  "  --build-ids FILE    `perf buildid-list -i perf.data` output: a file whose\n"
	  "                      build-id changed since is answered by that build-id\n"
	  "  --perf-map-dir DIR  where perf-PID.map files are (default /tmp)\n"
	  "  --debug-dir DIR     where debug files are found by build-id, as perf finds\n"
	  "                      them (default /usr/lib/debug): a file with one is\n"
	  "                      named from its symbol table, as perf names it\n"
	  "  --buildid-dir DIR   perf's build-id cache (default $HOME/.debug): a file\n"
	  "                      rebuilt or removed since is read from perf's copy\n"
	  "                      of the recorded build, DIR/.build-id/XX/REST/elf\n"
	  "  --no-debug-names    name functions from the binary's own symbol table\n"
	  "                      (and DWARF), as llvm-symbolizer does\n"
	  "  --no-build          do not index files met unindexed\n"
	  "  -q, --quiet         no progress, no summary\n"
	  "  --upstream URL, --debuginfod URL, --fetch-timeout S, --negative-ttl S,\n"
	  "  --no-fetch          fetch a DSO asked about by build-id that the database\n"
	  "                      lacks (as 'symdb query'; env SYMDB_UPSTREAM,\n"
	  "                      DEBUGINFOD_URLS)\n" },
	{ "symbolicate", cli_cmd_symbolicate, "symbolicate an Apple crash report",
	  "usage: symdb symbolicate [--db DIR] [--stack] [-i] [REPORT|-]\n"
	  "\n"
	  "Symbolicate an Apple crash report (classic .crash text or JSON .ips) from\n"
	  "the database: each image is found by the UUID of its Binary Images /\n"
	  "usedImages entry and its frames are resolved at its load address.\n"
	  ".crash frames become 'N IMAGE 0xADDR func + offset (file:line)'; .ips\n"
	  "frames gain \"symbol\", \"symbolLocation\", \"sourceFile\", \"sourceLine\".\n"
	  "An iOS 'Last Exception Backtrace:' address list is expanded into frame\n"
	  "lines.  Every other byte is copied; images not in the database are left\n"
	  "as they were and listed on stderr.\n"
	  "\n"
	  "  --stack   input lines 'IMAGE UUID LOAD-ADDRESS ADDRESS'; output in atos\n"
	  "            format, one line per address (a line of an image not in the\n"
	  "            database is echoed)\n"
	  "  -i        with --stack: inlined frames too, innermost first (atos -i)\n" },
	{ "pprof", cmd_pprof, "symbolize a pprof profile (profile.proto, gzip'd)",
	  "usage: symdb pprof [--db DIR] IN [-o OUT] [--force] [--svg FILE] [--no-build] [fetch]\n"
	  "\n"
	  "Read a pprof profile (IN, or - for stdin; gzip'd or plain protobuf),\n"
	  "symbolize every location whose mapping names an image symdb can answer\n"
	  "for (its file, if the file's build-id is the mapping's, indexed on\n"
	  "first sight; else its build-id in the database) with all inline frames\n"
	  "as Lines, innermost first, and write the profile gzip'd to OUT\n"
	  "(default stdout, never a terminal).  Each distinct address is resolved\n"
	  "once.  A malformed or truncated profile is one line\n"
	  "on stderr, exit 1, and no output file: OUT and FILE are written beside\n"
	  "their names and renamed into place only when complete.  One summary\n"
	  "line on stderr: samples, locations, addresses resolved, the share of\n"
	  "sample weight fully symbolized, unknown images.\n"
	  "\n"
	  "  -o, --output OUT  write the symbolized profile to OUT\n"
	  "  --force           symbolize locations that already have Lines again\n"
	  "  --svg FILE        also draw the samples as a flame graph (SVG)\n"
	  "  --no-build        never index a file on first sight: build-ids and files\n"
	  "                    already in the database only\n"
	  "  --upstream URL, --debuginfod URL, --fetch-timeout S, --negative-ttl S,\n"
	  "  --no-fetch        fetch a mapping's build-id that no file and not the\n"
	  "                    database has (as 'symdb query'; env SYMDB_UPSTREAM,\n"
	  "                    DEBUGINFOD_URLS); after one fetch times out, no more\n"
	  "                    are tried this run\n" },
	{ "serve", SERVE_RUN, "answer symbolization batches over HTTP",
	  "usage: symdb serve [--db DIR] [--listen ADDR] [--threads N] [--log FILE] [options]\n"
	  "\n"
	  "Run a long-lived HTTP/1.1 service (libmicrohttpd, a thread pool, keep-alive)\n"
	  "that answers batches of addresses from the database, which it opens once.\n"
	  "Endpoints: POST /v1/symbolize (JSON or application/x-symdb-batch),\n"
	  "POST /v1/images, GET /v1/images/ID[/index], GET /healthz, GET /metrics\n"
	  "(README \"symdb serve\").  One line on stderr once it listens:\n"
	  "  symdb: serve: listening on ADDR (database DIR, N threads)\n"
	  "Each request is one access-log line (key=value, every byte outside\n"
	  "printable ASCII escaped as \\xNN).  SIGTERM or SIGINT: stop accepting,\n"
	  "answer 503 to new requests, let the ones in flight finish (at most\n"
	  "--deadline-ms), exit 0.  SIGHUP reopens the --log FILE; nothing else is\n"
	  "re-read.  A missing or unwritable database exits 3.\n"
	  "\n"
	  "  --listen ADDR      HOST:PORT, [IPV6]:PORT or unix:/PATH (default\n"
	  "                     127.0.0.1:8630; port 0 picks a free one).  A unix\n"
	  "                     socket gets mode 0600; an existing file there is\n"
	  "                     replaced only if it is a socket nobody listens on\n"
	  "  --allow-paths      accept \"path\" modules on a non-loopback listener\n"
	  "                     (on loopback and unix: always accepted)\n"
	  "  --verify           verify every table checksum of each image opened\n"
	  "                     (reads the whole file; also with\n"
	  "                     $SYMDB_OPEN_VERIFY_CHECKSUMS=1); default: header and\n"
	  "                     directory only\n"
	  "  --threads N        libmicrohttpd pool threads (default: online CPUs, 2..64)\n"
	  "  --log FILE         access log: FILE (appended), - for stderr (default),\n"
	  "                     or none\n"
	  "  --indexer PATH     the symdb-indexer for uploads (default: beside symdb)\n"
	  "  --tmp-dir DIR      where uploads are streamed (default: DB/tmp)\n"
	  "limits (N and MS: at least 1; SIZE: 64M, 2G or bytes):\n"
	  "  --max-body SIZE         body of POST /v1/symbolize (64M); a larger\n"
	  "                          Content-Length gets 413 before a byte is read\n"
	  "  --max-upload SIZE       body of POST /v1/images (2G)\n"
	  "  --max-modules N         modules per request (1024)\n"
	  "  --max-addresses N       addresses per request, stack frames included (1000000)\n"
	  "  --max-stacks N          stacks per request (100000)\n"
	  "  --max-depth N           JSON nesting depth (32)\n"
	  "  --deadline-ms MS        per request, from its headers to its answer (30000)\n"
	  "  --max-concurrent N      requests in flight; beyond: 503 + Retry-After (64)\n"
	  "  --header-timeout-ms MS  from the connection (or the previous answer plus\n"
	  "                          --idle-timeout) to the end of the headers (10000)\n"
	  "  --body-timeout-ms MS    from the end of the headers to the end of the\n"
	  "                          body (60000)\n"
	  "  --idle-timeout S        an idle keep-alive connection, or a client that\n"
	  "                          stops reading its answer, is closed after S (30)\n"
	  "  --max-connections N     open connections, idle ones included (1024)\n"
	  "  --max-header-bytes SIZE memory per connection for the request line and\n"
	  "                          headers (32K; larger headers are refused)\n"
	  "  --max-indexers N        concurrent symdb-indexer runs for uploads (2)\n"
	  "  --cache-size SIZE       memory of the stack cache; 0 = no cache (64M)\n"
	  "fetching unknown build-ids (README \"Fetching unknown images\"):\n"
	  "  --upstream URL          an upstream index store (repeatable, in order)\n"
	  "  --debuginfod URL        a debuginfod server (repeatable)\n"
	  "  --fetch-timeout S       one fetch, every source (30)\n"
	  "  --negative-ttl S        how long 'no source has it' is remembered (600)\n"
	  "  --no-fetch              fetch nothing, whatever the environment says\n"
	  "                          (proxies: env http_proxy, https_proxy, all_proxy,\n"
	  "                          no_proxy)\n"
	  "  --max-fetches N         concurrent fetches (4)\n"
	  "  --fetch-budget-ms MS    a request's wait for its fetches; then its\n"
	  "                          modules still being fetched are 'pending' (2000)\n"
	  "  --max-fetch-waiters N   requests waiting for fetches at once (each on a\n"
	  "                          thread of its own); more answer 'pending' at\n"
	  "                          once (32)\n" },
	{ "verify", cli_cmd_verify, "check every image, orphan and leftover; --repair",
	  "usage: symdb verify [--db DIR] [--repair] [--grace AGE]\n"
	  "\n"
	  "Check the whole database: every catalog entry against its index file\n"
	  "(exists, size and header checksum as recorded, every table checksum,\n"
	  "sort order and references), every file under DB/images/ against the\n"
	  "catalog (orphans) and DB/tmp/ for leftovers of builds that died.  One\n"
	  "line per finding ('damaged UUID FILE: reason', 'orphan FILE', 'leftover\n"
	  "FILE'), then a summary line ending in clean, repaired or damaged.\n"
	  "\n"
	  "  --repair     remove what is damaged, orphaned or left over (never a\n"
	  "               valid image); a damaged image loses its entry and file\n"
	  "  --grace AGE  orphans and temp files younger than AGE (default 1h; 90m,\n"
	  "               2h, 3600) may belong to a build in progress: only listed\n"
	  "\n"
	  "verify exits 0 when clean, 5 when it found damage and repaired all of\n"
	  "it, 4 when damage remains.\n" },
	{ "rm", cli_cmd_rm, "remove images from the database",
	  "usage: symdb rm [--db DIR] UUID|PREFIX|FILE...\n"
	  "\n"
	  "Remove each image: its catalog entry, then its index file.  Processes\n"
	  "that have the file mapped keep using it.  'removed UUID' per image.\n"
	  "An image is named by UUID, unique UUID PREFIX (8+ hex digits), or the\n"
	  "binary FILE it was built from (every slice of a universal file).\n" },
	{ "gc", cli_cmd_gc, "expire unused images, trim to a size, clean leftovers",
	  "usage: symdb gc [--db DIR] [--unused-for AGE] [--max-size SIZE] [--grace AGE]\n"
	  "                [--miss-age AGE] [-n]\n"
	  "\n"
	  "Remove leftovers of builds that died and orphan index files (older than\n"
	  "--grace) and negative fetch answers older than --miss-age, then expire\n"
	  "images.  An image's last use is the last time\n"
	  "'symdb query' resolved it (recorded at most once a day), else when it\n"
	  "was built.  The clock is $SYMDB_NOW (unix seconds) when set.\n"
	  "\n"
	  "  --unused-for AGE  remove images not used for AGE (45d, 12h, 2w, 3600)\n"
	  "  --max-size SIZE   then remove least recently used images until the index\n"
	  "                    files total at most SIZE (50G, 512M, 64K, bytes)\n"
	  "  --grace AGE       leave stray files younger than AGE (default 1h)\n"
	  "  --miss-age AGE    forget negative fetch answers (DB/misses) older than AGE\n"
	  "                    (default 1d; 0 forgets them all)\n"
	  "  -n, --dry-run     only print what would be removed\n" },
	{ "compact", cli_cmd_compact, "move images unused for a while into cold storage (LZ4)",
	  "usage: symdb compact [--db DIR] --unused-for AGE [-n]\n"
	  "\n"
	  "Replace the index file of every image not queried for AGE (else not\n"
	  "rebuilt for AGE: the same last use as 'symdb gc') by its LZ4 form\n"
	  "images/XX/UUID.symdb.lz4 (SPEC §12.8).  The catalog is unchanged; the\n"
	  "first query of a compacted image decompresses it back, once.  Images\n"
	  "already compact are skipped.  One line per image:\n"
	  "  compacted UUID NAME (BEFORE -> AFTER bytes, PERCENT, last used TIME)\n"
	  "then the totals.  The clock is $SYMDB_NOW (unix seconds) when set.\n"
	  "\n"
	  "  --unused-for AGE  compact images not used for AGE (45d, 12h, 2w, 3600)\n"
	  "  -n, --dry-run     only print what would be compacted\n" },
	{ "export", cli_cmd_export, "write indexed images as a bundle to stdout, or into a store tree",
	  "usage: symdb export [--db DIR] UUID|PREFIX|FILE...|--all > BUNDLE\n"
	  "       symdb export [--db DIR] --tree TREE [UUID|PREFIX|FILE...|--all]\n"
	  "\n"
	  "Write the index files of the images (--all: every indexed image) as one\n"
	  "LZ4 frame with content and block checksums (SPEC §12.7), for 'symdb\n"
	  "import' on another machine.\n"
	  "Every image is verified first; nothing is written if one is missing or\n"
	  "damaged.  Refuses to write to a terminal.\n"
	  "\n"
	  "With --tree, write each image (default: every one) as the file\n"
	  "TREE/symdb/v1/XX/UUID.symdb of an upstream store (SPEC §12.9), which any\n"
	  "static HTTP server with TREE as its root serves to '--upstream URL'.\n"
	  "Each is verified, then written to a temporary file and renamed; one\n"
	  "already there is skipped.  One line per image:\n"
	  "  exported UUID symdb/v1/XX/UUID.symdb (SIZE bytes)\n"
	  "  skipped UUID (already in the tree)\n"
	  "A damaged image is named on stderr and skipped (exit status 4).\n" },
	{ "import", cli_cmd_import, "publish the images of a bundle",
	  "usage: symdb import [--db DIR] [--force] [-q] [BUNDLE|-] < BUNDLE\n"
	  "\n"
	  "Read a bundle written by 'symdb export' (from BUNDLE or stdin), check\n"
	  "its checksums and verify every image fully, and only then publish each\n"
	  "one as 'symdb build' does.  BUNDLE may also be one index file (as\n"
	  "'symdb serve' sends it: GET /v1/images/ID/index), verified the same way.\n"
	  "One line per image:\n"
	  "  imported UUID\n"
	  "  skipped UUID (already indexed)\n"
	  "A damaged or truncated bundle is rejected with one line on stderr and\n"
	  "nothing is imported (exit status 4).\n"
	  "\n"
	  "  --force      replace images that are already indexed\n"
	  "  -q, --quiet  no per-image lines on stdout\n" },
	{ "flame", cmd_flame, "render folded stacks as an interactive SVG flame graph",
	  "usage: symdb flame [-o OUT.svg] [--title T] [--subtitle S] [--unit U] [--width PX]\n"
	  "                   [--min-width PX] FOLDED\n"
	  "\n"
	  "Read folded stacks, one 'root;...;leaf COUNT' line per stack (the format of\n"
	  "`symdb perf`, perf's and flamegraph.pl's stackcollapse tools; '-' is stdin;\n"
	  "frame suffixes _[k] kernel, _[j] JIT, _[i] inlined), and write one\n"
	  "self-contained SVG flame graph: root at the bottom, width by count; click a\n"
	  "frame to zoom, 'Reset zoom' or Escape to go back; the search box (or '/')\n"
	  "highlights frames matching a regular expression and shows their share;\n"
	  "hovering shows name, file:line, module and count.  Colours: user red to\n"
	  "yellow, kernel orange-brown, JIT green, unknown grey, inlined lighter and\n"
	  "outlined.  Nothing is fetched when it is viewed.  A bad line is one error\n"
	  "'symdb: FILE:LINE: reason' and no output.\n"
	  "\n"
	  "  -o, --output, --svg OUT  the SVG file (default stdout), replaced atomically\n"
	  "  --title T        title (default \"Flame Graph\")\n"
	  "  --subtitle S     second line (default: the total and the number of stacks)\n"
	  "  --unit U         what COUNT counts (default samples)\n"
	  "  --width PX       image width (default 1200)\n"
	  "  --min-width PX   leave out frames narrower than PX pixels (default 0.1)\n" },
	{ "reindex", cli_cmd_reindex, "rebuild the catalog from the index files",
	  "usage: symdb reindex [--db DIR] [-q]\n"
	  "\n"
	  "Rebuild the catalog (DB/catalog) from the index files under DB/images,\n"
	  "after it was lost or deleted (SPEC §12.6).  Every file is verified as\n"
	  "'symdb verify' does; a damaged one is skipped with one line on stderr\n"
	  "and left for 'verify --repair'.  The valid ones replace the catalog's\n"
	  "entries in one transaction; their build time becomes the file's mtime.\n"
	  "A damaged catalog is moved aside first (DB/catalog.damaged-TIME).\n"
	  "\n"
	  "reindex exits 0 when every file was valid, 4 when some were skipped.\n" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char exit_codes[] =
	"exit status:\n"
	"  0  success\n"
	"  1  some input failed or was not found\n"
	"  2  usage error\n"
	"  3  database error (missing, read-only or damaged catalog)\n"
	"  4  damaged index file\n"
	"  5  verify --repair found damage and removed all of it\n";

static void main_usage(FILE *f)
{
	fputs("usage: symdb [--db DIR] COMMAND [ARGS...]\n"
	      "       symdb help COMMAND | --help | --version\n"
	      "\n"
	      "An mmap-indexed on-disk symbol database.\n"
	      "\n"
	      "commands:\n",
	      f);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
	fputs("\n"
	      "  --db DIR   the database directory, for every command (default:\n"
	      "             $SYMDB_DIR, else $XDG_CACHE_HOME/symdb, else ~/.cache/symdb)\n"
	      "\n",
	      f);
	fputs(exit_codes, f);
	fputs("Errors are one line on stderr: 'symdb: <path>: <reason>'.  Control\n"
	      "characters in names print escaped (\\n, \\x1b; README \"Names in output\").\n"
	      "Run under the name llvm-symbolizer (a link; 'cmake --install' makes\n"
	      "libexec/symdb/llvm-symbolizer), symdb is 'symdb query' on the default\n"
	      "database with llvm-symbolizer-14's options, --help and --version.\n",
	      f);
}

static const struct subcommand *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

void cli_usage(FILE *f, const char *cmd)
{
	const struct subcommand *c = cmd ? find_command(cmd) : NULL;
	if (!c) {
		main_usage(f);
		return;
	}
	fputs(c->usage, f);
	fputs("\n", f);
	fputs(exit_codes, f);
}

#define CLI_STR2(x) #x
#define CLI_STR(x) CLI_STR2(x)
#define CLI_VERSION \
	CLI_STR(SYMDB_VERSION_MAJOR) "." CLI_STR(SYMDB_VERSION_MINOR) "." CLI_STR(SYMDB_VERSION_PATCH)

static int print_version(void)
{
	printf("symdb %s (library %s, demangler %s)\n", CLI_VERSION,
	       symdb_version_string(), cli_demangler_kind());
	return CLI_EXIT_OK;
}

static int help_command(int argc, char **argv)
{
	if (argc < 2) {
		main_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!find_command(argv[1])) {
		cli_err(NULL, "no such command '%s' (see 'symdb --help')", argv[1]);
		return CLI_EXIT_USAGE;
	}
	cli_usage(stdout, argv[1]);
	return CLI_EXIT_OK;
}

/*
 * Installed (or linked) under a name that starts with "llvm-symbolizer"
 * ("llvm-symbolizer", "llvm-symbolizer-14"), symdb is `symdb query` on the
 * default database ($SYMDB_DIR...) with llvm-symbolizer-14's command line
 * (cli_llvm.h), so that tools which run "llvm-symbolizer" by name (the
 * sanitizers' ASAN_SYMBOLIZER_PATH, pprof) use it.
 */
static int called_as_llvm_symbolizer(const char *argv0)
{
	const char *base = strrchr(argv0, '/');
	base = base ? base + 1 : argv0;
	return strncmp(base, "llvm-symbolizer", 15) == 0;
}

/* One line per personality: the name symdb was run under -> its command. */
static const struct {
	int (*match)(const char *argv0);
	int (*run)(const struct cli_global *g, int argc, char **argv);
	int llvm_symbolizer;
} personalities[] = {
	{ called_as_llvm_symbolizer, cli_cmd_query, 1 },
	{ cli_called_as_addr2line, cli_cmd_addr2line, 0 },
};

#ifndef SYMDB_WITH_SERVE
/* `symdb serve` in symdb: the same command line, run by symdb-serve
 * ($SYMDB_SERVE if set, as the tests' $SYMDB_INDEXER).  A $SYMDB_SERVE
 * that names this very program (which has no server) is refused rather
 * than executed again and again. */
static int exec_server(char **argv)
{
	char buf[4096];
	struct stat self, target;
	const char *exe = cli_helper_exe("SYMDB_SERVE", "symdb-serve", buf, sizeof(buf));
	if (!exe) {
		cli_err("symdb-serve", "not found, or not executable, beside this symdb");
		return CLI_EXIT_FAILED;
	}
	if (stat("/proc/self/exe", &self) == 0 && stat(exe, &target) == 0 &&
	    self.st_dev == target.st_dev && self.st_ino == target.st_ino) {
		cli_err(exe, "is this symdb, which has no server: $SYMDB_SERVE must name symdb-serve");
		return CLI_EXIT_FAILED;
	}
	execv(exe, argv);
	cli_err(exe, "cannot run: %s", strerror(errno));
	return CLI_EXIT_FAILED;
}

/* Whether `symdb serve ARGS` asks for its usage (-h or --help before any
 * "--"): answered here from the same table, so that it needs no
 * symdb-serve (a node that only queries has none installed). */
static int serve_wants_help(int argc, char **argv)
{
	for (int k = 1; k < argc && strcmp(argv[k], "--") != 0; k++)
		if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help"))
			return 1;
	return 0;
}
#endif

int main(int argc, char **argv)
{
	struct cli_global g = { .db_dir = NULL };
	int i = 1;
	cli_big_init();
	for (size_t k = 0; argc > 0 && k < sizeof(personalities) / sizeof(personalities[0]); k++)
		if (personalities[k].match(argv[0])) {
			g.llvm_symbolizer = personalities[k].llvm_symbolizer;
			return personalities[k].run(&g, argc, argv);
		}
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *v;
		int m = cli_opt_value(argc, argv, &i, "--db", &v);
		if (m < 0)
			return CLI_EXIT_USAGE;
		if (m > 0) {
			g.db_dir = v;
			continue;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			main_usage(stdout);
			return CLI_EXIT_OK;
		}
		if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version"))
			return print_version();
		cli_err(NULL, "unknown option '%s' (see 'symdb --help')", argv[i]);
		return CLI_EXIT_USAGE;
	}
	if (i >= argc) {
		main_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[i], "help"))
		return help_command(argc - i, argv + i);
	const struct subcommand *c = find_command(argv[i]);
	if (!c) {
		cli_err(NULL, "no such command '%s' (see 'symdb --help')", argv[i]);
		return CLI_EXIT_USAGE;
	}
#ifndef SYMDB_WITH_SERVE
	if (!strcmp(c->name, "serve") && serve_wants_help(argc - i, argv + i)) {
		cli_usage(stdout, "serve");
		return CLI_EXIT_OK;
	}
	if (!strcmp(c->name, "serve"))
		return exec_server(argv);
#endif
	return c->run(&g, argc - i, argv + i);
}
