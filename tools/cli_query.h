/* SPDX-License-Identifier: MIT */
/*
 * cli_query.h - what the files of `symdb query` share:
 *   cmd_query.c        the command: a batch through symdb_symbolize()
 *   cli_query_input.c  requests from the arguments and stdin
 *   cli_query_print.c  what each frame shows; bodies and printing
 *   cli_query_cache.c  the body cache across batches
 *   cli_query_opts.c   options
 *   cli_query_open.c   the database and the images
 *   cli_addr2line.c    the same machinery behind GNU addr2line's options and input
 */
#ifndef SYMDB_CLI_QUERY_H
#define SYMDB_CLI_QUERY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cli_fetch.h"
#include "cli_live_kernel.h"
#include "cli_output.h"
#include "cli_util.h"
#include "symdb.h"

/* REQ_CACHED: a CODE request whose body the body cache held. */
enum req_kind { REQ_INVALID, REQ_CODE, REQ_DATA, REQ_FRAME, REQ_CACHED };

/* A piece of query.text (32 bits: half the cache lines when printing). */
struct text_span {
	uint32_t off, len;
};

struct request {
	const char *text; /* the line as llvm-symbolizer echoes it */
	size_t len;
	uint64_t addr;    /* as given (printed by --addresses) */
	int kind;
	uint32_t mod;     /* index into query.mods */
	struct text_span body; /* REQ_CACHED: its body in query.text */
	const char *jit_name; /* --pid: JIT code named by its perf map (cli_live_jit.c) */
	uint64_t jit_start, jit_size;
};

/*
 * Bodies of earlier batches by address, for a run's fixed options (vaddr
 * requests, a style whose bodies stand apart): of one image with
 * --obj/--uuid, by image and address on a per-line stream (plain styles;
 * not for --pid or --kernel): a profile sends the same few thousand
 * addresses in every batch, and a hit skips sorting, resolving and
 * formatting.  Open addressing over a table allocated once; between
 * batches, when half full or when query.text, which holds the bodies,
 * passes CACHE_TEXT_MAX, it keeps only the bodies hit since it was last
 * full (cli_query_cache.c); switched off for the rest of the run when a
 * batch hits less than a quarter of the time (on a per-line stream, once
 * it has been full), or as soon as a batch that began with an empty cache
 * filled it (a uniform set of short lines: one batch fills it, the next
 * would clear it), since probing and filling would only cost.
 */
#define CACHE_SLOTS (1u << 17)           /* 2 MiB of slots */
#define CACHE_TEXT_MAX (16u << 20)
#define CACHE_EMPTY UINT64_MAX           /* never a key: see cache_key */
#define CACHE_SLOT_EMPTY 0               /* ~CACHE_EMPTY: a slot never used */

struct cache_slot {
	uint64_t key;            /* ~ the key: CACHE_SLOT_EMPTY in a zeroed slot */
	struct text_span body;
};

struct body_cache {
	struct cache_slot *slot; /* CACHE_SLOTS, NULL when off */
	size_t used;
	size_t lookups, hits;    /* of the current batch */
	int cold;                /* the current batch began with it empty */
	int huge;                /* slot is in huge pages */
	/* cache_keep_hot's room for the kept slots and bodies, made at its
	 * first call and kept to the end of the run (NULL until then) */
	struct cache_slot *keep;
	char *keep_text;
};

/*
 * An image named by requests.  With --obj/--uuid there is one, opened up
 * front; without them every input line names its module, as llvm-symbolizer
 * accepts ("MODULE ADDR", sanitizers' protocol), and each module is opened
 * on first use and kept for the rest of the run.
 */
struct module {
	char *name;       /* as given: JSON ModuleName, error messages; for a
	                   * build-id, its hex in upper case, as llvm prints it */
	size_t len;
	int build_id;     /* a "BUILDID:HEX" module: opened by its build-id */
	int id_missing;   /* ... that no source has: said again at each request */
	symdb_image *img; /* NULL until opened, or when opening failed */
	int state;        /* 0 not tried, 1 open, < 0 the error */
	char *error;      /* why it failed (JSON Error.Message) */
	int ctx_img;      /* img is the symbolizer context's: not closed here */
	int error_shown;  /* JSON: its Error was printed (once, as llvm's) */
};

/* A module in the table by name (cli_query_input.c): 32 bits of its name's
 * hash and where its key is in query.mod_keys, in 8-byte units (0 = empty). */
struct module_slot {
	uint32_t tag, ref;
};

struct module_files;

#define QUERY_BUILD_ID_DIRS 16

struct query {
	const char *obj, *uuid_hex;
	const char *build_id_hex; /* --build-id HEX (LLVM 15's): module 0 is its BUILDID: module */
	const char *perf_map;   /* --perf-map FILE: answered by cli_live_perfmap.c */
	const char *arch;       /* --arch: a slice of a universal Mach-O file */
	const char *image_name; /* for --output-style=atos */
	enum symdb_addr_kind kind;
	uint64_t load_address, adjust_vma;
	int load_given; /* --load-address was given (0 is a valid load address) */
	int inlines;
	int verify;     /* --verify 1, --no-verify -1, neither 0 (cli_verify_flag) */
	int no_build;   /* --no-build: no indexing on first sight */
	int lib_demangle; /* the library demangles (the printer then does not) */
	symdb_image *img;
	struct cli_printer pr;
	int damaged; /* some address hit a damaged record */
	int per_line;       /* no --obj/--uuid: each line names its module */
	int module_failed;  /* some module could not be opened */
	symdb *db;
	symdb_symbolizer *sym;
	struct module *mods;
	size_t nmods, mods_cap, last_mod;
	struct module_slot *mod_slot; /* modules by name (cli_query_intern_module) */
	size_t mod_slots;
	unsigned char *mod_keys; /* their keys: hash, length, index, name */
	size_t mod_keys_len, mod_keys_cap;
	/* By module: while it is open, its image's number in the body cache's
	 * keys (the index + 1 of the first module that had that image), else
	 * 0.  Apart from struct module so that the body cache's lookups, one
	 * per line of a stream over thousands of modules, read 4 bytes a
	 * module, which stay in the cache, instead of one line of mods each. */
	uint32_t *mod_tag;
	size_t mod_tag_cap;
	/* By tag - 1: an address + 1 of that image whose body was cached
	 * (probe_images, cmd_query.c), 0 for none; and the tags that have one. */
	uint64_t *tag_probe;
	size_t tag_probe_cap;
	uint32_t *probed;
	size_t nprobed, probed_cap;
	struct module_files *files; /* modules' images by file (cli_query_open.c) */

	/* per-batch arrays, grown as needed and reused */
	struct request *req;
	size_t nreq, req_cap;
	symdb_request *sreq;     /* the CODE/DATA requests, for the library */
	uint32_t *pos;           /* request index -> its index in res */
	uint32_t *spos;          /* sreq index -> request index */
	symdb_symbolized *res;   /* the library's answers: by sreq index, or in
	                            its order (q->apart, kept only for DATA requests) */
	size_t arr_cap, res_cap;
	size_t nsorted;          /* sreq[0..nsorted) is the last batch's */
	struct cli_line_info *li;
	size_t li_cap;
	struct cli_out text;      /* CODE bodies of the batch (format_bodies),
	                             and of earlier ones while the cache holds them */
	struct body_cache cache;
	struct text_span *body;   /* by request: its body in text (apart) */
	size_t body_cap;
	int apart;                /* the batch's CODE bodies are formatted apart,
	                             in the library's order, then printed */
	int apart_failed;         /* ... and text outgrew its bound */
	size_t text_mark;         /* text.len when the window's bodies began */
	size_t text_max;          /* their bound, set then */
	size_t out_per_req;       /* bytes printed per request, last window */
	size_t window;            /* requests per window (cli_query_run_batch) */
	/* --pid: addresses are runtime addresses of a live process, placed
	 * per batch by cli_live_prepare() (cli_live_pid.c), each request's
	 * module the file mapped there and its address xaddr[i], a vaddr. */
	int pid;
	struct cli_live *live;
	uint64_t *xaddr;
	size_t xaddr_cap;
	/* Reads and answers the requests (NULL: llvm-symbolizer's, from
	 * addrs[0..naddr) or stdin); another front end's own input syntax. */
	int (*run)(struct query *q, char **addrs, int naddr);
	struct cli_kernel_src ksrc; /* --kernel and its sources (cli_live_kernel.c) */
	struct cli_fetch fetch;     /* --upstream, --debuginfod ... (cli_fetch.h) */
	/* --debug-file-directory: where "BUILDID:" modules missing from the
	 * database are looked for (DIR/.build-id/XX/REST.debug), as llvm's;
	 * none given: /usr/lib/debug */
	const char *build_id_dirs[QUERY_BUILD_ID_DIRS];
	int nbuild_id_dirs, build_id_dirs_over;
	size_t stdin_buf;           /* bytes of stdin per batch (0: STDIN_BUF) */
	/* The indexer first sight runs (cli_query_indexer, read once by
	 * cli_query_create_sym: not a readlink per module), NULL for the
	 * library's installed one; indexer_buf holds it. */
	const char *indexer;
	char indexer_buf[4096];
	/* The index pages kept mapped (cli_query_mem.c): /proc/self/statm
	 * (-1: not kept), the file-backed pages before the first lookup, the
	 * budget in pages, the pages right after the last trim (-1: none
	 * yet), and how many times images were trimmed. */
	int statm_fd;
	long map_base, map_budget, map_after;
	size_t map_trims;
	int long_run;               /* a batch had QUERY_LONG_BATCH requests (cli_query_mem.c) */
};

/*
 * stdin is read STDIN_BUF bytes at most per batch; llvm-symbolizer's own
 * input (cli_query_run_stdin) STDIN_BUF_PIECES, but BATCH_LINES requests at
 * most: per-line modules' lines are long (a path each), and a batch of
 * them is split among images, so a bigger one lets each image's sorted
 * run be long enough to pay for its sort and lookups, while the requests
 * (72 bytes each) stay bounded however short the lines.
 */
#define STDIN_BUF (512u << 10)
#define STDIN_BUF_PIECES (4u << 20)
#define STDIN_CHUNK (256u << 10) /* read and taken at once, while cached */
#define BATCH_LINES 98304u

/*
 * A batch is answered in windows of requests, each resolved by one library
 * call, its bodies formatted in the library's order and printed in input
 * order before the next window starts: what a batch holds in memory (its
 * bodies, the library's arrays and frames) is then one window's, whatever
 * the batch.  The window is sized from the bytes per body of the last one
 * (the first is WINDOW_FIRST) so that its bodies come to about WINDOW_TEXT
 * (a deeply inlined C++ image formats kilobytes per address, a C one a
 * hundred bytes): big enough that its sorted addresses lie close together
 * (lookups cost more per address in a sparser window); a window whose
 * bodies pass WINDOW_TEXT_MAX all the same (huge names) is printed
 * directly from its results instead.  Once the body cache is off (a
 * uniform input: cli_query_cache_review), its share of the bodies' budget
 * (CACHE_TEXT_MAX) is the window's too: WINDOW_TEXT_ALONE, bounded by
 * WINDOW_TEXT_ALONE_MAX.  A window of a style that formats apart but
 * printed straight from its results (cli_query_apart: kilobytes per
 * address and no body cache) makes no text: the next one is sized so that
 * its results and frames come to about WINDOW_TEXT, at most
 * WINDOW_DIRECT_MAX requests.  That bound is the largest window the text
 * sizing gave such windows (WINDOW_TEXT_ALONE at 1 KiB an address), so a
 * window whose addresses have far more frames than the last one's (deeply
 * inlined code after shallow) holds no more than it could before.  Styles
 * that never format apart (atos, JSON of argv addresses) keep
 * WINDOW_FIRST.
 */
#define WINDOW_MIN 256u
#define WINDOW_MAX 98304u
#define WINDOW_TEXT (12u << 20)
#define WINDOW_TEXT_MAX (16u << 20)
#define WINDOW_TEXT_ALONE (24u << 20)
#define WINDOW_TEXT_ALONE_MAX (CACHE_TEXT_MAX + WINDOW_TEXT_MAX)
#define WINDOW_FIRST 4096u /* until a window has measured the bodies */
#define WINDOW_DIRECT_MAX (WINDOW_TEXT_ALONE / 1024u) /* 24,576 requests */
#define PREFETCH_AHEAD 16 /* requests: how far ahead random reads are started */
#define LLVM_LINE_MAX 1023 /* fgets(buf, 1024, stdin) in llvm-symbolizer.cpp */

/* The length of the next request piece of buf[0..avail), as llvm-symbolizer's
 * fgets cuts it (through the newline, or LLVM_LINE_MAX bytes), or 0 when
 * the piece is not complete yet (no newline, fewer bytes, not at eof). */
static inline size_t cli_llvm_piece_len(const char *buf, size_t avail, int eof)
{
	size_t lim = avail < LLVM_LINE_MAX ? avail : LLVM_LINE_MAX;
	const char *nl = memchr(buf, '\n', lim);
	if (nl)
		return (size_t)(nl - buf) + 1;
	if (avail >= LLVM_LINE_MAX)
		return LLVM_LINE_MAX;
	return eof ? avail : 0;
}

/*
 * The memory budget of `symdb query` (README "Memory"), what its caches and
 * buffers may hold at most whatever the batch, the input and the image:
 *   names     2 generations x (2 MiB of slots + CLI_NAME_ARENA 24 MiB) 52 MiB
 *             + their compressed store (cli_name_cold.c: 4 MiB of slots
 *               + CLI_COLD_ARENA 24 MiB), made only when they overflow  28 MiB
 *   bodies    CACHE_TEXT_MAX + WINDOW_TEXT_MAX (one buffer)           32 MiB
 *             (the cache off: WINDOW_TEXT_ALONE_MAX, the same)
 *             + 8.5 MiB while the body cache keeps its hot bodies
 *   input     STDIN_BUF_PIECES + BATCH_LINES requests                 ~11 MiB
 *   index     pages mapped past the start: QUERY_MAP_BUDGET            16 MiB
 *             (cli_query_mem.c; not kept when one window maps more)
 * plus the window's arrays and frames (a few MiB; about WINDOW_TEXT of
 * results and frames for a window printed straight from its results, at
 * most WINDOW_DIRECT_MAX requests' whatever their frames).  A large C++ image's
 * distinct demangled names (59 MB on one) are more than the generations
 * hold; compressed (17 MB there) they fit in the store, so each is
 * demangled once.  Past the store, names printed rarely are demangled
 * again.
 */
#ifndef QUERY_MAP_BUDGET
#define QUERY_MAP_BUDGET (16u << 20)
#endif

/* parse_query_args: help was printed, exit 0. */
#define HELP_SHOWN (-1000)

/* realloc p to hold need elements (capacity doubling from 64); exits on OOM.
 * The check is inline: it runs per request and per result. */
CLI_HIDDEN void *cli_query_grow_to(void *p, size_t *cap, size_t need, size_t elem);
static inline void *cli_query_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	return need <= *cap ? p : cli_query_grow_to(p, cap, need, elem);
}

/* cli_query_input.c */
/* The index of module name[0..len), added on first sight. */
CLI_HIDDEN uint32_t cli_query_intern_module(struct query *q, const char *name, size_t len);
/* The module of build-id hex[0..n) (a "BUILDID:" module), interned in *mod;
 * 0, or -1 when hex is empty or not hex digits. */
CLI_HIDDEN int cli_query_intern_build_id(struct query *q, const char *hex, size_t n,
                                         uint32_t *mod);
/* A request line's kind from its "CODE "/"DATA "/"FRAME " prefix (none:
 * REQ_CODE), stepping *s and *n past the prefix. */
CLI_HIDDEN int cli_query_req_kind(const char **s, size_t *n);
/* The address token of s[0..n) after leading delimiters: 0, or non-zero when it
 * is not a number (non-zero: the request is invalid). */
CLI_HIDDEN int cli_query_req_addr(const char *s, size_t n, uint64_t *addr);
CLI_HIDDEN int cli_query_run_stdin(struct query *q);
/* Both front ends' stdin loop: read what stdin has, up to q->stdin_buf
 * bytes (0: STDIN_BUF); after each read, take(arg, buf, len, eof) turns
 * the complete lines of buf[0..len) into requests (buf has one spare byte
 * past len for a NUL) and returns the bytes it used (< 0: an error,
 * returned), then the batch is answered and flushed (cli_query_run_batch)
 * and the unused tail kept for the next read, or, when take stopped at
 * BATCH_LINES requests, taken next with only what stdin has already.  Answering per read
 * is what lets a pipe client that writes one line and waits get its
 * answer. */
CLI_HIDDEN int cli_query_stdin_loop(struct query *q,
                                    ptrdiff_t (*take)(void *arg, char *buf, size_t len, int eof),
                                    void *arg);
CLI_HIDDEN int cli_query_run_args(struct query *q, char **addrs, int naddrs);

/* cmd_query.c: a query's life, for symdb query and the front ends that
 * share it.  setup: zeroed, defaults, stdout through out (exits on OOM);
 * execute: after the options are in q, open the database and the image,
 * answer addrs[0..naddr) or stdin, return the exit code; finish: flush and
 * free, returning ex or a write error's code. */
CLI_HIDDEN void cli_query_setup(struct query *q, struct cli_out *out);
CLI_HIDDEN int cli_query_execute(struct query *q, const struct cli_global *g, char **addrs,
                                 int naddr);
CLI_HIDDEN int cli_query_finish(struct query *q, struct cli_out *out, int ex);
/* cmd_query.c: resolve and print the requests read so far. */
CLI_HIDDEN int cli_query_run_batch(struct query *q);
/* Module mod's index mapping faulted (its file was truncated while the query
 * ran: symdb_fault_recover): say so once on stderr and treat the module as
 * one that could not be opened from now on (its image stays mapped until
 * exit: results and names may point into it). */
#define DAMAGED_MSG "index file changed while in use (truncated?)"
CLI_HIDDEN void cli_query_module_damaged(struct query *q, uint32_t mod);

/* cli_live_perfmap.c: `symdb query --perf-map FILE`; returns the exit code. */
CLI_HIDDEN int cli_live_perfmap_execute(struct query *q, char **addrs, int naddr);
/* cli_live_pid.c: --pid.  prepare: place the batch's addresses in q->pid's
 * mappings (modules, q->xaddr); 0 or an error (reported).  free: its state. */
CLI_HIDDEN int cli_live_prepare(struct query *q);
CLI_HIDDEN void cli_live_free(struct query *q);
/* cli_live_jit.c: --pid's jit_lookup (symdb_proc_opts) from the process's
 * perf map; *arg is its state.  batch: before each batch (the names of
 * the last one are freed); free: at the end. */
CLI_HIDDEN symdb_proc_jit_fn cli_live_jit_fn(void **arg);
CLI_HIDDEN void cli_live_jit_batch(void *arg);
CLI_HIDDEN void cli_live_jit_free(void *arg);

/* cli_query_print.c */
/* What frame f shows under q's --functions (name, start, file) as
 * llvm-symbolizer chooses it; li is overwritten and borrows f's strings. */
CLI_HIDDEN void cli_query_line_info(const struct query *q, const symdb_frame *f,
                                    struct cli_line_info *li);
/* Whether the next window's CODE bodies are formatted apart (q->apart). */
CLI_HIDDEN int cli_query_apart(const struct query *q);
CLI_HIDDEN void cli_query_format_begin(struct query *q);
CLI_HIDDEN void cli_query_format_results(void *arg, const symdb_symbolized *res,
                                         const uint32_t *order, size_t first, size_t count);
CLI_HIDDEN void cli_query_print_batch(struct query *q);

/* Whether module i holds its image itself rather than as another path to
 * a file an earlier module opened (its tag then names that one): what is
 * done once per image (marking it used, trimming it) is done for the
 * holder only. */
static inline int cli_query_owns_image(const struct query *q, size_t i)
{
	uint32_t tag = i < q->mod_tag_cap ? q->mod_tag[i] : 0;
	return !tag || tag == i + 1;
}

/* cli_query_cache.c */
/*
 * On a per-line stream a body is keyed by its image and its address: the
 * image's tag (query.mod_tag) above CACHE_TAG_SHIFT bits of the address as
 * the library was asked for it.  Two paths to one image then share their
 * bodies (the same frames print the same text in the plain styles; JSON
 * names the module in its body and is not cached on such a stream).  A key
 * that does not fit (an address of 2^40 or more, over 2^23 images) is
 * CACHE_EMPTY: not cached.
 */
#define CACHE_TAG_SHIFT 40
static inline uint64_t cli_query_cache_key_tagged(uint32_t tag, uint64_t vaddr)
{
	if (!tag || tag >= (1u << 23) || vaddr >> CACHE_TAG_SHIFT)
		return CACHE_EMPTY;
	return (uint64_t)tag << CACHE_TAG_SHIFT | vaddr;
}
/* cmd_query.c: cache body as result r's, the answer to sreq[k]
 * (cli_query_format_results); on a per-line stream, also note its address
 * as one to probe r's image with (probe_images). */
CLI_HIDDEN void cli_query_cache_result(struct query *q, const symdb_symbolized *r, uint32_t k,
                                       struct text_span body);
/* The slot a key's probe starts at (inline: called per result). */
static inline size_t cli_query_cache_hash(uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & (CACHE_SLOTS - 1);
}
CLI_HIDDEN void cli_query_cache_insert(struct query *q, uint64_t key, struct text_span body);
CLI_HIDDEN void cli_query_cache_init(struct query *q);
CLI_HIDDEN void cli_query_cache_lookup(struct query *q);
CLI_HIDDEN void cli_query_cache_review(struct query *q);

/* cli_query_mem.c: the index pages kept mapped, bounded (QUERY_MAP_BUDGET).
 * init: before the first lookup; check: after each window, trims every
 * open image when they are over the budget; fini: at the end. */
CLI_HIDDEN void cli_query_mem_init(struct query *q);
CLI_HIDDEN void cli_query_mem_fini(struct query *q);
CLI_HIDDEN void cli_query_mem_check(struct query *q);
/* Before each batch of n requests: from the first batch of a long run on,
 * the body cache and the name cache are in huge pages (cli_bigbuf.c). */
CLI_HIDDEN void cli_query_mem_batch(struct query *q, size_t n);

/* cli_query_opts.c: 0, HELP_SHOWN, or minus an exit code. */
/* The addresses given as arguments come back in *addrs[0..*naddrs), valid
 * until exit. */
CLI_HIDDEN int cli_query_parse_args(struct query *q, struct cli_global *g, int argc, char **argv,
                                    char ***addrs, int *naddrs);

/* cli_query_open.c */
/* The database; unless no_build, a missing one is created, and one that
 * cannot be had leaves *db NULL after one warning (indexes are then made
 * privately).  0 or minus an exit code. */
CLI_HIDDEN int cli_query_open_db(const struct cli_global *g, int no_build, symdb **db);
/* q->sym, indexing on first sight unless no_build; 0 or an error (reported). */
CLI_HIDDEN int cli_query_create_sym(struct query *q, int no_build);
/* The symdb-indexer first sight runs ($SYMDB_INDEXER, else the one beside
 * this executable, else NULL: the installed one); buf holds the path. */
CLI_HIDDEN const char *cli_query_indexer(char *buf, size_t sz);
/* cli_query_open_named(): failed as llvm-symbolizer-14 fails on that file
 * (reported in its words; the exit status stays 0). */
#define OPEN_AS_LLVM (-1001)
CLI_HIDDEN int cli_query_open_named(struct query *q, const char *obj, const char *uuid_hex,
                                    symdb_image **img, char *msg, size_t msz);
/* Set module mod's entry of q->mod_tag (grown as needed: --pid adds
 * modules of its own). */
CLI_HIDDEN void cli_query_set_tag(struct query *q, size_t mod, uint32_t tag);
/* A request of "BUILDID:" module m, whose image was not found: says so on
 * stderr again, as llvm-symbolizer does at each request (not for JSON). */
CLI_HIDDEN void cli_query_build_id_missing(const struct query *q, const struct module *m);
/* Record cli_query_open_named()'s outcome rc (msg: its reason) in m. */
CLI_HIDDEN void cli_query_module_opened(struct query *q, struct module *m, int rc,
                                        const char *msg);
CLI_HIDDEN symdb_image *cli_query_module_image(struct query *q, struct module *m);
/* Free what cli_query_module_image() remembers of files. */
CLI_HIDDEN void cli_query_files_free(struct query *q);

#endif /* SYMDB_CLI_QUERY_H */
