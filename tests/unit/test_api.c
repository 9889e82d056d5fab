/* SPDX-License-Identifier: MIT */
/*
 * test_api.c - the rules that let the public API grow without breaking its
 * callers (symdb.h, SYMDB_OPTS):
 *
 * - caller-allocated outputs carry their size (symdb_frame and symdb_result
 *   through frame_sz/result_sz, symdb_file_image through elem_sz,
 *   symdb_image_info and symdb_build_result through their sz field): a caller built against an older, smaller struct
 *   (here a prefix of the current one) gets its prefix and nothing past it,
 *   and one built against a newer, larger struct (the current one plus a
 *   sentinel tail) gets every known field with its tail untouched;
 * - options structs are validated both ways: a smaller sz reads the missing
 *   fields as zero, a larger sz is accepted when the unknown tail is zero and
 *   refused with SYMDB_E_INVAL and a reason when it is not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rd_synth.h"
#include "symdb.h"
#include "symdb_build.h"
#include "symdb_endian.h"

#define SENTINEL 0x5aa55aa55aa55aa5ull

static char path[512];

/* A minimal image: symbol `main` at 0x401000 (size 0x40), no DWARF. */
static void write_image(void)
{
	uint8_t uuid[20], *f;
	size_t len;

	memset(uuid, 0xab, sizeof uuid);
	f = synth_minimal_image(uuid, "main", &len);
	CHECK(synth_write_tmp(f, len, path, sizeof path) == 0);
	free(f);
}

/* What a caller built against an older header knows: a prefix. */
typedef struct old_frame {
	const char *name;
	const char *short_name;
} old_frame;
typedef struct old_result {
	uint32_t first, count;
	int status;
} old_result;
/* What a caller built against a newer header knows: more. */
typedef struct new_frame {
	symdb_frame f;
	uint64_t tail[3];
} new_frame;
typedef struct new_result {
	symdb_result r;
	uint64_t tail[2];
} new_result;

static void test_resolve_sizes(symdb_image *img)
{
	uint64_t addrs[3] = { 0x401000, 0x401010, 0x402000 };

	{ /* older, smaller: the library writes each element's prefix only */
		struct {
			old_frame fr[3];
			uint64_t guard_f;
			old_result res[3];
			uint64_t guard_r;
		} o;
		memset(&o, 0xee, sizeof o);
		/* the cast is what an old caller's header made of its own struct */
		CHECK(symdb_resolve_batch(img, addrs, 3, (symdb_frame *)(void *)o.fr, 3,
		                          sizeof(old_frame), (symdb_result *)(void *)o.res,
		                          sizeof(old_result)) == 3);
		CHECK(o.res[0].status == 0 && o.res[0].count == 1 && o.res[0].first == 0);
		CHECK(o.res[1].status == 0 && o.res[1].count == 1);
		CHECK(o.res[2].status == SYMDB_E_NOT_FOUND && o.res[2].count == 0);
		CHECK(o.fr[o.res[1].first].name && strcmp(o.fr[o.res[1].first].name, "main") == 0);
		CHECK(o.guard_f == 0xeeeeeeeeeeeeeeeeull);
		CHECK(o.guard_r == 0xeeeeeeeeeeeeeeeeull);
	}
	{ /* newer, larger: every known field, the unknown tail untouched */
		new_frame fr[2];
		new_result res[3];
		for (int i = 0; i < 2; i++)
			fr[i].tail[0] = fr[i].tail[1] = fr[i].tail[2] = SENTINEL;
		for (int i = 0; i < 3; i++)
			res[i].tail[0] = res[i].tail[1] = SENTINEL;
		CHECK(symdb_resolve_batch(img, addrs, 3, &fr[0].f, 2, sizeof(new_frame), &res[0].r,
		                          sizeof(new_result)) == 3);
		CHECK(res[0].r.status == 0 && res[0].r.sym_name &&
		      strcmp(res[0].r.sym_name, "main") == 0 && res[0].r.sym_addr == 0x401000 &&
		      res[0].r.sym_size == 0x40);
		CHECK(res[2].r.status == SYMDB_E_NOT_FOUND);
		CHECK(fr[res[1].r.first].f.name && strcmp(fr[res[1].r.first].f.name, "main") == 0);
		CHECK(fr[res[1].r.first].f.flags & SYMDB_FRAME_FROM_SYMTAB);
		for (int i = 0; i < 2; i++)
			CHECK(fr[i].tail[0] == SENTINEL && fr[i].tail[1] == SENTINEL &&
			      fr[i].tail[2] == SENTINEL);
		for (int i = 0; i < 3; i++)
			CHECK(res[i].tail[0] == SENTINEL && res[i].tail[1] == SENTINEL);
	}
	{ /* a zero size is a caller bug */
		symdb_frame fr[2];
		symdb_result res[3];
		CHECK(symdb_resolve_batch(img, addrs, 3, fr, 2, 0, res, sizeof res[0]) ==
		      SYMDB_E_INVAL);
		CHECK(symdb_resolve_batch(img, addrs, 3, fr, 2, sizeof fr[0], res, 0) ==
		      SYMDB_E_INVAL);
	}
}

static void test_info_sizes(symdb_image *img)
{
	struct {
		struct { size_t sz; symdb_uuid uuid; } info; /* an older prefix */
		uint64_t guard;
	} o;
	struct {
		symdb_image_info info;
		uint64_t tail[4];
	} n;
	symdb_image_info cur;

	memset(&o, 0xee, sizeof o);
	o.info.sz = sizeof o.info;
	CHECK(symdb_image_get_info(img, (symdb_image_info *)&o.info) == 0);
	CHECK(o.info.sz == sizeof o.info && o.info.uuid.len == 20 && o.info.uuid.bytes[0] == 0xab);
	CHECK(o.guard == 0xeeeeeeeeeeeeeeeeull);

	memset(&n, 0, sizeof n);
	n.info.sz = sizeof n;
	n.tail[0] = n.tail[3] = SENTINEL;
	CHECK(symdb_image_get_info(img, &n.info) == 0);
	CHECK(n.info.sz == sizeof(symdb_image_info)); /* what was filled */
	CHECK(n.info.nsymbols == 1 && n.info.base_address == 0x400000 && n.info.image_name &&
	      strcmp(n.info.image_name, "prog") == 0);
	CHECK(n.tail[0] == SENTINEL && n.tail[3] == SENTINEL);

	cur.sz = 0;
	CHECK(symdb_image_get_info(img, &cur) == SYMDB_E_INVAL);
	CHECK(symdb_image_get_info(img, NULL) == SYMDB_E_INVAL);
}

static void test_build_result_sizes(void)
{
	const char *tmp = getenv("TMPDIR");
	char db[600], cmd[700], err[256];
	SYMDB_OPTS(symdb_build_opts, o, .flags = SYMDB_BUILD_NO_DWARF, .errbuf = err,
	           .errbuf_sz = sizeof err, .indexer_path = SYMDB_TEST_INDEXER);
	symdb_builder *b;
	struct {
		struct { size_t sz; symdb_uuid uuid; int skipped; } r; /* older prefix */
		uint64_t guard;
	} old;
	static struct {
		symdb_build_result r;
		uint64_t tail[2];
	} nw;

	snprintf(db, sizeof db, "%s/test_api.%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	CHECK_RC(symdb_builder_open(db, &o, &b));
	if (!b)
		return;
	memset(&old, 0xee, sizeof old);
	old.r.sz = sizeof old.r;
	CHECK_RC(symdb_builder_add(b, "/proc/self/exe", &o, (symdb_build_result *)&old.r));
	CHECK(old.r.sz == sizeof old.r && old.r.skipped == 0 && old.r.uuid.len > 0);
	CHECK(old.guard == 0xeeeeeeeeeeeeeeeeull);

	nw.r.sz = sizeof nw;
	nw.tail[0] = nw.tail[1] = SENTINEL;
	CHECK_RC(symdb_builder_add(b, "/proc/self/exe", &o, &nw.r));
	CHECK(nw.r.sz == sizeof(symdb_build_result) && nw.r.skipped == 1 &&
	      nw.r.uuid.len == old.r.uuid.len);
	CHECK(nw.tail[0] == SENTINEL && nw.tail[1] == SENTINEL);

	nw.r.sz = 0;
	CHECK(symdb_builder_add(b, "/proc/self/exe", &o, &nw.r) == SYMDB_E_INVAL);
	symdb_builder_close(b);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", db);
	(void)system(cmd);
}

static void test_opts_sizes(void)
{
	char err[256];
	symdb_image *img = NULL;

	{ /* older, smaller: errbuf and flags are past sz, so they read as zero */
		symdb_open_opts o;
		memset(err, 'x', sizeof err);
		o.sz = offsetof(symdb_open_opts, errbuf);
		o.flags = 0;
		o.errbuf = err;
		o.errbuf_sz = sizeof err;
		CHECK(symdb_image_open_file("/nonexistent/x.symdb", &o, &img) == -ENOENT);
		CHECK(err[0] == 'x'); /* errbuf is not this caller's field */
		o.sz = sizeof o.sz;
		o.flags = 0x8000; /* an unknown bit, but past sz: never read */
		CHECK(symdb_image_open_file(path, &o, &img) == 0);
		symdb_image_close(img);
		o.sz = 0; /* not even sz itself */
		CHECK(symdb_image_open_file(path, &o, &img) == SYMDB_E_INVAL);
	}
	{ /* newer, larger */
		struct {
			symdb_open_opts o;
			uint64_t added[2];
		} n;
		memset(&n, 0, sizeof n);
		n.o.sz = sizeof n;
		n.o.errbuf = err;
		n.o.errbuf_sz = sizeof err;
		CHECK(symdb_image_open_file(path, &n.o, &img) == 0); /* zero tail */
		symdb_image_close(img);
		img = NULL;
		n.added[1] = 1;
		err[0] = 0;
		CHECK(symdb_image_open_file(path, &n.o, &img) == SYMDB_E_INVAL && !img);
		CHECK(strstr(err, "non-zero byte at offset") != NULL);
		fprintf(stderr, "larger opts refused: %s\n", err);
	}
}

/* symdb_file_uuids() on this test's own executable (one ELF image): an older,
 * smaller element gets its prefix only, a newer, larger one keeps its tail. */
static void test_file_image_sizes(void)
{
	struct old_image {
		symdb_uuid uuid; /* an older prefix */
		uint32_t cputype;
	};
	struct {
		struct old_image im;
		uint64_t guard;
	} o[2];
	struct {
		symdb_file_image im;
		uint64_t tail[4];
	} n[2];
	symdb_uuid want;

	CHECK(symdb_file_uuid("/proc/self/exe", NULL, &want) == 0);
	memset(o, 0xee, sizeof o);
	CHECK(symdb_file_uuids("/proc/self/exe", NULL, (symdb_file_image *)(void *)o, 2,
	                       sizeof o[0].im) == 1);
	CHECK(memcmp(&o[0].im.uuid, &want, sizeof want) == 0 && o[0].im.cputype == 0);
	CHECK(o[0].guard == 0xeeeeeeeeeeeeeeeeull); /* past the old element: untouched */
	CHECK(o[1].im.cputype == 0xeeeeeeeeu);       /* past the count: untouched */

	memset(n, 0, sizeof n);
	n[0].tail[0] = n[0].tail[3] = n[1].tail[0] = SENTINEL;
	CHECK(symdb_file_uuids("/proc/self/exe", NULL, &n[0].im, 2, sizeof n[0]) == 1);
	CHECK(memcmp(&n[0].im.uuid, &want, sizeof want) == 0 && n[0].im.arch[0] == 0);
	CHECK(n[0].tail[0] == SENTINEL && n[0].tail[3] == SENTINEL && n[1].tail[0] == SENTINEL);

	CHECK(symdb_file_uuids("/proc/self/exe", NULL, &n[0].im, 2, 0) == SYMDB_E_INVAL);
}

int main(void)
{
	symdb_image *img = NULL;

	write_image();
	CHECK_RC(symdb_image_open_file(path, NULL, &img));
	if (img) {
		test_resolve_sizes(img);
		test_info_sizes(img);
		symdb_image_close(img);
	}
	test_opts_sizes();
	test_file_image_sizes();
	test_build_result_sizes();
	unlink(path);
	return check_exit();
}
