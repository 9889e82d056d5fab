/* SPDX-License-Identifier: MIT */
/*
 * test_open.c - unit tests of the reader's database side: symdb_open() on a
 * fresh database, symdb_image_open_uuid() through the catalog (one shared,
 * reference-counted mapping per UUID, also when eight threads race to open
 * and resolve), the catalog/file consistency check of SPEC §12.3,
 * NOT_INDEXED, symdb_list()/symdb_lookup(), symdb_default_dir(), and
 * symdb_file_uuid() on real ELF files: the build-id note, the SPEC §5.2
 * fallback (identical for a stripped copy), and truncated or bit-flipped
 * inputs (which must fail cleanly, never crash).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "rd_catalog.h"
#include "rd_synth.h"
#include "symdb.h"
#include "symdb_endian.h"

static char dbdir[400];

/* Publish an image file + catalog entry the way SPEC §12.5 lays them out.
 * `sum_delta` != 0 records a wrong Header_Checksum in the catalog. */
static void publish(rd_catalog *cat, const uint8_t *uuid, const char *sym, uint64_t sum_delta)
{
	char hex[41], rel[128], path[800];
	rd_cat_entry e;
	uint8_t *f;
	size_t len;
	int i;

	for (i = 0; i < 20; i++)
		sprintf(hex + 2 * i, "%02x", uuid[i]);
	snprintf(rel, sizeof rel, "images/%.2s", hex);
	snprintf(path, sizeof path, "%s/%s", dbdir, rel);
	mkdir(path, 0755);
	snprintf(rel, sizeof rel, "images/%.2s/%s.symdb", hex, hex);
	snprintf(path, sizeof path, "%s/%s", dbdir, rel);
	f = synth_minimal_image(uuid, sym, &len);
	CHECK(synth_replace_file(path, f, len) == 0);
	memset(&e, 0, sizeof e);
	memcpy(e.uuid, uuid, 20);
	e.uuid_len = 20;
	e.uuid_kind = FMT_UUID_GNU_BUILD_ID;
	e.object_format = FMT_OBJ_ELF;
	e.machine = 62;
	e.file_size = len;
	e.header_sum = fmt_be64(f + FMT_H_CHECKSUM) + sum_delta;
	e.built_at = 1700000000;
	e.file = rel;
	e.image_name = "prog";
	CHECK(rd_catalog_put(cat, &e, 0) == 0);
	free(f);
}

static symdb *g_db;
static symdb_uuid g_id;

static void *racer(void *arg)
{
	symdb_image **out = arg;
	uint64_t a = 0x401010;
	symdb_frame fr[4];
	symdb_result r;

	if (symdb_image_open_uuid(g_db, &g_id, NULL, out) != 0)
		return NULL;
	if (symdb_resolve_batch(*out, &a, 1, fr, 4, sizeof(symdb_frame),
	                        &r, sizeof(symdb_result)) != 1 || !r.sym_name ||
	    strcmp(r.sym_name, "main") != 0)
		*out = NULL; /* counted as a failure by the caller (leaks one ref) */
	return NULL;
}

static int count_entry(const symdb_entry *e, void *arg)
{
	(*(int *)arg)++;
	return strcmp(e->image_name, "prog") == 0 && e->file_size > 0 ? 0 : -1;
}

static void test_catalog_open(void)
{
	uint8_t u1[20], u2[20];
	char eb[512], names[1024];
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = eb, .errbuf_sz = sizeof eb);
	rd_catalog *cat = NULL;
	symdb_image *a = NULL, *b = NULL, *imgs[8];
	pthread_t th[8];
	symdb_entry ent;
	symdb *db = NULL;
	int i, n = 0;

	memset(u1, 0x11, 20);
	memset(u2, 0x22, 20);
	CHECK(symdb_open(dbdir, &o, &db) == -ENOENT); /* no database yet */
	CHECK(rd_catalog_open(dbdir, RD_CAT_WRITE | RD_CAT_CREATE, &cat, eb, sizeof eb) == 0);
	if (!cat)
		return;
	publish(cat, u1, "main", 0);
	publish(cat, u2, "main", 1);
	rd_catalog_close(cat);

	CHECK(symdb_open(dbdir, &o, &db) == 0);
	if (!db)
		return;
	CHECK(strcmp(symdb_dir(db), dbdir) == 0);
	memcpy(g_id.bytes, u1, 20);
	g_id.len = 20;
	CHECK(symdb_image_open_uuid(db, &g_id, &o, &a) == 0);
	CHECK(symdb_image_open_uuid(db, &g_id, &o, &b) == 0);
	CHECK(a && a == b); /* one mapping, two references */
	symdb_image_close(b);
	/* Eight threads race to open the same image and resolve on it. */
	g_db = db;
	for (i = 0; i < 8; i++) {
		imgs[i] = NULL;
		pthread_create(&th[i], NULL, racer, &imgs[i]);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		CHECK(imgs[i] == a);
	}
	for (i = 0; i < 8; i++)
		symdb_image_close(imgs[i]);
	symdb_image_close(a);
	/* After the last close the next open maps afresh, and still works. */
	CHECK(symdb_image_open_uuid(db, &g_id, &o, &a) == 0);
	symdb_image_close(a);

	/* The catalog's Header_Checksum disagrees with the file's. */
	memcpy(g_id.bytes, u2, 20);
	CHECK(symdb_image_open_uuid(db, &g_id, &o, &b) == SYMDB_E_CORRUPT && !b);
	CHECK(strstr(eb, "catalog") != NULL && strstr(eb, dbdir) != NULL);
	/* Unknown UUID. */
	memset(g_id.bytes, 0x33, 20);
	CHECK(symdb_image_open_uuid(db, &g_id, &o, &b) == SYMDB_E_NOT_INDEXED);
	CHECK(strstr(eb, "3333") != NULL);
	/* Unknown option flags. */
	o.flags = 0x80;
	CHECK(symdb_image_open_uuid(db, &g_id, &o, &b) == SYMDB_E_INVAL);
	o.flags = 0;

	CHECK(symdb_list(db, count_entry, &n) == 0 && n == 2);
	memcpy(g_id.bytes, u1, 20);
	ent.sz = sizeof ent;
	CHECK(symdb_lookup(db, &g_id, &ent, names, sizeof names) == 0);
	CHECK(strcmp(ent.image_name, "prog") == 0 && ent.built_at == 1700000000);
	CHECK(ent.uuid.len == 20 && memcmp(ent.uuid.bytes, u1, 20) == 0);
	memset(g_id.bytes, 0x44, 20);
	ent.sz = sizeof ent;
	CHECK(symdb_lookup(db, &g_id, &ent, names, sizeof names) == SYMDB_E_NOT_INDEXED);

	/* Re-index behind an open image: the holder keeps the old mapping, the
	 * next open maps the new file (SPEC §12.5). */
	memcpy(g_id.bytes, u1, 20);
	CHECK(symdb_image_open_uuid(db, &g_id, &o, &a) == 0);
	CHECK(rd_catalog_open(dbdir, RD_CAT_WRITE, &cat, eb, sizeof eb) == 0);
	if (cat) {
		publish(cat, u1, "main_v2", 0);
		rd_catalog_close(cat);
	}
	CHECK(symdb_image_open_uuid(db, &g_id, &o, &b) == 0);
	CHECK(a && b && a != b);
	if (a && b) {
		uint64_t addr = 0x401010;
		symdb_frame fr[2];
		symdb_result r;
		CHECK(symdb_resolve_batch(a, &addr, 1, fr, 2, sizeof(symdb_frame), &r,
		                          sizeof(symdb_result)) == 1 &&
		      strcmp(r.sym_name, "main") == 0);
		CHECK(symdb_resolve_batch(b, &addr, 1, fr, 2, sizeof(symdb_frame),
		                          &r, sizeof(symdb_result)) == 1 &&
		      strcmp(r.sym_name, "main_v2") == 0);
	}
	symdb_image_close(a);
	CHECK(symdb_image_open_uuid(db, &g_id, &o, &a) == 0 && a == b);
	symdb_image_close(a);
	symdb_image_close(b);

	/* An image outliving its db (the header says don't; it must not crash). */
	memcpy(g_id.bytes, u1, 20);
	CHECK(symdb_image_open_uuid(db, &g_id, &o, &a) == 0);
	symdb_close(db);
	symdb_image_close(a);
}

static void test_default_dir(void)
{
	char buf[256];

	/* Pure: the values are arguments, never the environment. */
	setenv("SYMDB_DIR", "/env/db", 1);
	CHECK(symdb_default_dir("/x/db", "/c", "/h", buf, sizeof buf) == 0 &&
	      strcmp(buf, "/x/db") == 0);
	CHECK(symdb_default_dir("/x/db", NULL, NULL, buf, 3) == -ENAMETOOLONG);
	CHECK(symdb_default_dir(NULL, "/c", "/h", buf, sizeof buf) == 0 &&
	      strcmp(buf, "/c/symdb") == 0);
	CHECK(symdb_default_dir("", "relative", "/h", buf, sizeof buf) == 0 &&
	      strcmp(buf, "/h/.cache/symdb") == 0);
	CHECK(symdb_default_dir(NULL, "", "/h", buf, sizeof buf) == 0 &&
	      strcmp(buf, "/h/.cache/symdb") == 0);
	CHECK(symdb_default_dir(NULL, NULL, "", buf, sizeof buf) == -ENOENT);
	CHECK(symdb_default_dir(NULL, NULL, NULL, buf, sizeof buf) == -ENOENT);
	unsetenv("SYMDB_DIR");
	{
		symdb *db = NULL;
		CHECK(symdb_open(NULL, NULL, &db) == -ENOENT && !db);
	}
}

static int run(const char *cmd)
{
	int rc = system(cmd);
	return rc == 0 ? 0 : -1;
}

/* Copy the first `len` bytes of src to dst, optionally flipping one byte. */
static void write_prefix(const uint8_t *src, size_t len, const char *dst, long flip)
{
	FILE *fp = fopen(dst, "wb");
	uint8_t *copy = malloc(len ? len : 1);

	memcpy(copy, src, len);
	if (flip >= 0 && (size_t)flip < len)
		copy[flip] ^= 0xff;
	if (fp) {
		fwrite(copy, 1, len, fp);
		fclose(fp);
	}
	free(copy);
}

static void test_file_uuid(void)
{
	char eb[512], p1[600], p2[640], cmd[4096];
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = eb, .errbuf_sz = sizeof eb);
	symdb_uuid id, id2;
	uint8_t *self;
	size_t len, i;
	FILE *fp;
	long k;

	/* Our own executable has a GNU build-id (gcc + GNU ld / lld). */
	CHECK(symdb_file_uuid("/proc/self/exe", &o, &id) == 0);
	CHECK(id.kind == SYMDB_UUID_GNU_BUILD_ID && id.len >= 8);
	/* Compare with readelf's view of the same note. */
	snprintf(p1, sizeof p1, "%s/self.id", dbdir);
	snprintf(cmd, sizeof cmd,
	         "readelf -n /proc/%d/exe 2>/dev/null | sed -n 's/.*Build ID: *//p' > %s",
	         (int)getpid(), p1);
	if (run(cmd) == 0 && (fp = fopen(p1, "r")) != NULL) {
		char hex[80] = "", mine[65];
		if (fscanf(fp, "%79s", hex) == 1) {
			symdb_uuid_format(&id, mine);
			CHECK(strcmp(hex, mine) == 0);
		} else {
			check_skip("readelf -n printed no build-id: not compared");
		}
		fclose(fp);
	} else {
		check_skip("readelf unavailable: build-id not compared");
	}
	/* Without the note: fallback, and a stripped copy keeps the identity
	 * (SPEC §5.2 masks the section-header fields strip rewrites). */
	snprintf(p1, sizeof p1, "%s/nobid", dbdir);
	snprintf(p2, sizeof p2, "%s/nobid.stripped", dbdir);
	snprintf(cmd, sizeof cmd,
	         "printf 'int main(void){return 0;}\\n' | cc -g -x c - -o %s "
	         "-Wl,--build-id=none 2>/dev/null && strip -o %s %s", p1, p2, p1);
	if (run(cmd) == 0) {
		CHECK(symdb_file_uuid(p1, &o, &id) == 0);
		CHECK(id.kind == SYMDB_UUID_FALLBACK && id.len == 16);
		CHECK(symdb_file_uuid(p2, &o, &id2) == 0);
		CHECK(id2.kind == SYMDB_UUID_FALLBACK && memcmp(id.bytes, id2.bytes, 16) == 0);
	} else {
		check_skip("cc or strip unavailable: fallback identity not tested");
	}
	/* Mach-O: LC_UUID, compared with llvm-otool's view of it. */
	snprintf(p1, sizeof p1, "%s/m.macho", dbdir);
	snprintf(p2, sizeof p2, "%s/m.uuid", dbdir);
	snprintf(cmd, sizeof cmd,
	         "printf 'int main(void){return 0;}\\n' | clang-14 --target=x86_64-apple-macos11 "
	         "-x c -c - -o %s.o 2>/dev/null && ld64.lld-14 -arch x86_64 -platform_version "
	         "macos 11.0 11.0 -e _main -o %s %s.o 2>/dev/null && llvm-otool-14 -l %s | "
	         "sed -n 's/^ *uuid //p' | tr -d '-' | tr A-F a-f > %s", p1, p1, p1, p1, p2);
	if (run(cmd) == 0 && (fp = fopen(p2, "r")) != NULL) {
		char hex[80] = "", mine[65];
		CHECK(symdb_file_uuid(p1, &o, &id) == 0 && id.kind == SYMDB_UUID_MACHO);
		symdb_uuid_format(&id, mine);
		CHECK(fscanf(fp, "%79s", hex) == 1 && strcmp(hex, mine) == 0);
		fclose(fp);
		/* The object file has no LC_UUID. */
		snprintf(p2, sizeof p2, "%s.o", p1);
		CHECK(symdb_file_uuid(p2, &o, &id) == SYMDB_E_NO_UUID);
	} else {
		check_skip("clang-14, ld64.lld-14 or llvm-otool-14 unavailable: Mach-O LC_UUID not tested");
	}
	CHECK(symdb_file_uuid("/nonexistent", &o, &id) == -ENOENT);
	snprintf(p1, sizeof p1, "%s/notelf", dbdir);
	write_prefix((const uint8_t *)"hello, world", 12, p1, -1);
	CHECK(symdb_file_uuid(p1, &o, &id) == SYMDB_E_BAD_OBJECT);

	/* Hostile inputs: prefixes and byte flips of our executable. */
	fp = fopen("/proc/self/exe", "rb");
	self = malloc(1 << 24);
	len = fp && self ? fread(self, 1, 1 << 24, fp) : 0;
	if (fp)
		fclose(fp);
	for (i = 0; i < 64 && len; i++) {
		size_t cut = i < 32 ? i * 31 : len * (i - 32) / 32;
		write_prefix(self, cut, p1, -1);
		(void)symdb_file_uuid(p1, &o, &id); /* any code; must not crash */
	}
	for (k = 0; k < 2048 && (size_t)k < len; k += 3) {
		write_prefix(self, len, p1, k);
		(void)symdb_file_uuid(p1, &o, &id);
	}
	free(self);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char cmd[600];

	snprintf(dbdir, sizeof dbdir, "%s/test_open.%d",
	         tmp && *tmp && access(tmp, W_OK) == 0 ? tmp : "/tmp", (int)getpid());
	test_catalog_open();
	test_default_dir();
	test_file_uuid();
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dbdir);
	(void)system(cmd);
	return check_exit();
}
