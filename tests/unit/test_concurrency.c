/* SPDX-License-Identifier: MIT */
/*
 * test_concurrency.c - the library's locking rules (symdb.h "Threads"):
 *
 *  (a) a symdb_list() callback that opens images while another thread opens
 *      images and another PROCESS grows the catalog map (MDB_MAP_RESIZED in
 *      this one); and a callback that calls symdb_mark_used() on a nearly
 *      full map (MDB_MAP_FULL, the map grows inside the listing);
 *  (b) an image superseded by a re-index and closed after symdb_close(): its
 *      last close must not touch the freed handle (AddressSanitizer and
 *      valgrind see the use-after-free; also closed from threads racing
 *      symdb_close under ThreadSanitizer);
 *  (c) an open racing a re-index between the publisher's rename and its
 *      catalog commit waits for the commit instead of reporting
 *      SYMDB_E_CORRUPT; a file that really differs is still reported;
 *  (d) a thaw in progress (its on_decompress hook blocked) does not block
 *      an open or close of another image on the same handle, nor a second
 *      opener of the same image;
 *  (e) writes on a handle while its catalog is replaced and refreshed 150
 *      times: the refresh frees the environment it swaps out, and a write
 *      that looked at it after its commit read freed memory (seen by
 *      AddressSanitizer in about half of the runs of 60 replacements).
 *
 * A deadlock must fail, not hang: a watchdog thread ends the process with
 * exit 1 naming the part that was running.  Orderings are established with
 * semaphores, not sleeps, except where noted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "catalog_internal.h"
#include "check.h"
#include "rd_catalog.h"
#include "rd_synth.h"
#include "reader_internal.h"
#include "symdb.h"
#include "symdb_endian.h"

static char dbdir[400];
static const char *g_part = "setup";
static time_t g_deadline; /* 0: no part running */

/* The watchdog is a thread, not alarm(): ThreadSanitizer defers signals to
 * a thread blocked in pthread_mutex_lock, which is where a deadlock sits. */
static void *watchdog(void *arg)
{
	(void)arg;
	for (;;) {
		time_t d = __atomic_load_n(&g_deadline, __ATOMIC_ACQUIRE);
		if (d && time(NULL) > d) {
			fprintf(stderr, "test_concurrency: watchdog: part '%s' still running after "
			        "its time limit (deadlock?)\n",
			        __atomic_load_n(&g_part, __ATOMIC_ACQUIRE));
			_exit(1);
		}
		sleep(1);
	}
	return NULL;
}

static void part(const char *name, unsigned seconds)
{
	__atomic_store_n(&g_part, name, __ATOMIC_RELEASE);
	fprintf(stderr, "-- %s\n", name);
	__atomic_store_n(&g_deadline, time(NULL) + (time_t)seconds, __ATOMIC_RELEASE);
}

/* ---- publishing (SPEC §12.5 layout) ---------------------------------------- */

static void rel_of(const uint8_t *uuid, char *rel, size_t n, char *sub, size_t subn)
{
	char hex[41];
	int i;

	for (i = 0; i < 20; i++)
		sprintf(hex + 2 * i, "%02x", uuid[i]);
	snprintf(sub, subn, "%s/images/%.2s", dbdir, hex);
	snprintf(rel, n, "images/%.2s/%s.symdb", hex, hex);
}

static void fill_entry(rd_cat_entry *e, const uint8_t *uuid, const char *rel, size_t len,
                       uint64_t hsum, const char *name)
{
	memset(e, 0, sizeof *e);
	memcpy(e->uuid, uuid, 20);
	e->uuid_len = 20;
	e->uuid_kind = FMT_UUID_GNU_BUILD_ID;
	e->object_format = FMT_OBJ_ELF;
	e->machine = 62;
	e->file_size = len;
	e->header_sum = hsum;
	e->built_at = 1700000000;
	e->file = rel;
	e->image_name = name;
}

/* Write the image file of uuid (aside, then renamed over, as the publisher
 * does) and, if cat, commit its entry.  Returns the entry in *e. */
static void publish(rd_catalog *cat, const uint8_t *uuid, const char *sym, rd_cat_entry *e,
                    char *rel, size_t reln)
{
	char sub[600], path[800];
	uint8_t *f;
	size_t len;

	rel_of(uuid, rel, reln, sub, sizeof sub);
	mkdir(sub, 0755);
	snprintf(path, sizeof path, "%s/%s", dbdir, rel);
	f = synth_minimal_image(uuid, sym, &len);
	CHECK(synth_replace_file(path, f, len) == 0);
	fill_entry(e, uuid, rel, len, fmt_be64(f + FMT_H_CHECKSUM), "prog");
	if (cat)
		CHECK(rd_catalog_put(cat, e, 0) == 0);
	free(f);
}

static void publish_simple(rd_catalog *cat, const uint8_t *uuid, const char *sym)
{
	char rel[128];
	rd_cat_entry e;

	publish(cat, uuid, sym, &e, rel, sizeof rel);
}

static const char *resolve_name(const symdb_image *img)
{
	uint64_t a = 0x401010;
	symdb_frame fr[2];
	symdb_result r;

	if (symdb_resolve_batch(img, &a, 1, fr, 2, sizeof(symdb_frame), &r,
	                        sizeof(symdb_result)) != 1)
		return "(error)";
	return r.sym_name ? r.sym_name : "(none)";
}

static void uuid_of(symdb_uuid *id, uint8_t byte)
{
	memset(id, 0, sizeof *id);
	memset(id->bytes, byte, 20);
	id->len = 20;
}

/* Catalog entries that name no file (`filler`), with long file strings so
 * that few of them fill pages: the map grows quickly. */
static int put_fillers(rd_catalog *c, unsigned first, unsigned n)
{
	char file[3001];
	rd_cat_entry e;
	uint8_t u[20];
	unsigned i;

	memset(file, 'f', sizeof file - 1);
	file[sizeof file - 1] = 0;
	for (i = first; i < first + n; i++) {
		memset(u, 0xF0, sizeof u);
		fmt_put32(u + 16, i);
		fill_entry(&e, u, file, 4096, 1, "filler");
		if (rd_catalog_put(c, &e, 0) != 0)
			return -1;
	}
	return 0;
}

/* The second process of part (a): open the catalog read-write and add
 * entries until its map is at least `mib` MiB and used past the first MiB:
 * the first process then gets MDB_MAP_RESIZED at its next transaction. */
static int grow_main(const char *dir, unsigned mib)
{
	char eb[300];
	rd_catalog *c = NULL;
	MDB_envinfo info;
	MDB_stat st;
	unsigned i = 0;

	if (rd_catalog_open(dir, RD_CAT_WRITE, &c, eb, sizeof eb) != 0) {
		fprintf(stderr, "grow: %s\n", eb);
		return 1;
	}
	for (;;) {
		if (mdb_env_info(c->e->env, &info) || mdb_env_stat(c->e->env, &st))
			return 1;
		if (info.me_mapsize >= (size_t)mib << 20 &&
		    (info.me_last_pgno + 1) * (size_t)st.ms_psize > (size_t)2 << 20)
			break;
		if (put_fillers(c, i, 16) != 0)
			return 1;
		i += 16;
	}
	rd_catalog_close(c);
	return 0;
}

static char self_exe[PATH_MAX];

static int run_grower(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		execl(self_exe, self_exe, "grow", dbdir, "4", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- (a) listing while the map grows ------------------------------------------ */

static symdb *g_db;
static sem_t g_started, g_go;

static int open_close(symdb *db, uint8_t byte)
{
	symdb_image *img = NULL;
	symdb_uuid id;
	int rc;

	uuid_of(&id, byte);
	rc = symdb_image_open_uuid(db, &id, NULL, &img);
	if (rc == 0 && strcmp(resolve_name(img), "main") != 0)
		rc = -1;
	symdb_image_close(img);
	return rc;
}

struct list_arg {
	int first, opened, failed;
};

static int lister_cb(const symdb_entry *e, void *argp)
{
	struct list_arg *a = argp;

	if (a->first) {
		a->first = 0;
		sem_post(&g_started);
		while (sem_wait(&g_go) != 0)
			;
	}
	if (strcmp(e->image_name, "prog") == 0) {
		symdb_image *img = NULL;
		if (symdb_image_open_uuid(g_db, &e->uuid, NULL, &img) == 0)
			a->opened++;
		else
			a->failed++;
		symdb_image_close(img);
	}
	return 0;
}

static void *lister(void *argp)
{
	struct list_arg *a = argp;

	if (symdb_list(g_db, lister_cb, a) != 0)
		a->failed++;
	return NULL;
}

static void *opener(void *argp)
{
	int *failed = argp, i;

	for (i = 0; i < 40; i++)
		if (open_close(g_db, (uint8_t)(0x10 * (1 + i % 4))) != 0)
			(*failed)++;
	return NULL;
}

static void test_list_while_map_grows(void)
{
	struct list_arg la = { 1, 0, 0 };
	int ofailed = 0, rc;
	pthread_t tl, to;

	part("list callback opens images while another process grows the map", 60);
	CHECK(symdb_open(dbdir, NULL, &g_db) == 0);
	if (!g_db)
		return;
	CHECK(open_close(g_db, 0x10) == 0); /* the map at its current size */
	pthread_create(&tl, NULL, lister, &la);
	while (sem_wait(&g_started) != 0)
		;
	/* The lister is inside its callback.  Another process grows the map. */
	rc = run_grower();
	CHECK(rc == 0);
	pthread_create(&to, NULL, opener, &ofailed);
	sem_post(&g_go);
	pthread_join(tl, NULL);
	pthread_join(to, NULL);
	CHECK(la.failed == 0 && la.opened == 4);
	CHECK(ofailed == 0);
	symdb_close(g_db);
	g_db = NULL;
}

struct mark_arg {
	symdb *db;
	int marked, failed;
};

static int mark_cb(const symdb_entry *e, void *argp)
{
	struct mark_arg *a = argp;

	if (symdb_mark_used(a->db, &e->uuid, 1700000000 + (uint64_t)a->marked) == 0)
		a->marked++;
	else
		a->failed++;
	return 0;
}

/* Fill the map until fewer than `margin` pages are left, without growing
 * it past what is needed. */
static int fill_near_full(rd_catalog *c, unsigned margin)
{
	MDB_envinfo info;
	MDB_stat st;
	unsigned i = 100000;

	for (;;) {
		if (mdb_env_info(c->e->env, &info) || mdb_env_stat(c->e->env, &st))
			return -1;
		if (info.me_mapsize / st.ms_psize - (info.me_last_pgno + 1) < margin)
			return 0;
		if (put_fillers(c, i++, 1) != 0)
			return -1;
	}
}

static void test_mark_used_from_list(void)
{
	SYMDB_OPTS(symdb_open_opts, w, .flags = SYMDB_OPEN_WRITE);
	struct mark_arg a = { NULL, 0, 0 };
	MDB_envinfo before, after;
	int rc;

	part("list callback marks every image used on a nearly full map", 60);
	CHECK(symdb_open(dbdir, &w, &a.db) == 0);
	if (!a.db)
		return;
	CHECK(fill_near_full(a.db->cat, 6) == 0);
	mdb_env_info(a.db->cat->e->env, &before);
	rc = symdb_list(a.db, mark_cb, &a);
	CHECK(rc == 0);
	mdb_env_info(a.db->cat->e->env, &after);
	CHECK(a.failed == 0 && a.marked > 100);
	/* The listing's own writes had to grow the map: the case under test. */
	CHECK(after.me_mapsize > before.me_mapsize);
	fprintf(stderr, "   %d images marked; map %zu -> %zu bytes\n", a.marked,
	        (size_t)before.me_mapsize, (size_t)after.me_mapsize);
	symdb_close(a.db);
}

/* ---- (b) a superseded image closed after its handle -------------------------- */

struct closer {
	symdb_image *img;
	sem_t *go;
};

static void *close_later(void *argp)
{
	struct closer *c = argp;

	while (sem_wait(c->go) != 0)
		;
	symdb_image_close(c->img);
	return NULL;
}

static void test_superseded_outlives_db(void)
{
	symdb_image *a = NULL, *b = NULL, *imgs[8];
	struct closer cl[8];
	rd_catalog *cat = NULL;
	char eb[300];
	pthread_t th[8];
	sem_t go;
	symdb_uuid id;
	symdb *db = NULL;
	int i;

	part("superseded image closed after symdb_close", 30);
	uuid_of(&id, 0x50);
	CHECK(rd_catalog_open(dbdir, RD_CAT_WRITE, &cat, eb, sizeof eb) == 0);
	if (!cat)
		return;
	publish_simple(cat, id.bytes, "main");
	CHECK(symdb_open(dbdir, NULL, &db) == 0);
	if (!db) {
		rd_catalog_close(cat);
		return;
	}
	CHECK(symdb_image_open_uuid(db, &id, NULL, &a) == 0);
	publish_simple(cat, id.bytes, "main_v2"); /* re-index: a new file */
	CHECK(symdb_image_open_uuid(db, &id, NULL, &b) == 0);
	CHECK(a && b && a != b);
	symdb_close(db);
	/* a was superseded by b: its last close must not touch db. */
	if (a)
		CHECK(strcmp(resolve_name(a), "main") == 0);
	symdb_image_close(a);
	if (b)
		CHECK(strcmp(resolve_name(b), "main_v2") == 0);
	symdb_image_close(b);

	/* The same, with the closes racing symdb_close from other threads
	 * (ThreadSanitizer checks the handle's state is not freed under them). */
	CHECK(symdb_open(dbdir, NULL, &db) == 0);
	sem_init(&go, 0, 0);
	for (i = 0; i < 8; i++) {
		imgs[i] = NULL;
		if (i == 4)
			publish_simple(cat, id.bytes, i & 1 ? "main" : "main_v2");
		if (db)
			CHECK(symdb_image_open_uuid(db, &id, NULL, &imgs[i]) == 0);
		cl[i] = (struct closer){ imgs[i], &go };
		pthread_create(&th[i], NULL, close_later, &cl[i]);
	}
	for (i = 0; i < 8; i++)
		sem_post(&go);
	symdb_close(db);
	for (i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	sem_destroy(&go);
	rd_catalog_close(cat);
}

/* ---- (c) an open racing a re-index ------------------------------------------- */

struct race_open {
	symdb *db;
	symdb_uuid id;
	symdb_image *img;
	int rc;
	char eb[400];
};

static void *open_one(void *argp)
{
	struct race_open *r = argp;
	SYMDB_OPTS(symdb_open_opts, o, .errbuf = r->eb, .errbuf_sz = sizeof r->eb);

	r->rc = symdb_image_open_uuid(r->db, &r->id, &o, &r->img);
	return NULL;
}

static void test_open_during_reindex(void)
{
	struct race_open r;
	rd_catalog *cat = NULL;
	char eb[300], rel[128], sub[600];
	rd_cat_entry e;
	pthread_t th;
	int lock;

	part("open between a publisher's rename and its commit", 30);
	memset(&r, 0, sizeof r);
	uuid_of(&r.id, 0x60);
	CHECK(rd_catalog_open(dbdir, RD_CAT_WRITE, &cat, eb, sizeof eb) == 0);
	if (!cat)
		return;
	publish_simple(cat, r.id.bytes, "main");
	CHECK(symdb_open(dbdir, NULL, &r.db) == 0);
	if (!r.db) {
		rd_catalog_close(cat);
		return;
	}
	/* A publisher: the directory lock, the new file renamed into place,
	 * and (only later) the catalog commit (SPEC §12.5). */
	rel_of(r.id.bytes, rel, sizeof rel, sub, sizeof sub);
	snprintf(sub, sizeof sub, "%s/%s", dbdir, rel);
	lock = rd_dir_lock(sub); /* the lock publish_file.c takes */
	CHECK(lock >= 0);
	publish(NULL, r.id.bytes, "main_v2", &e, rel, sizeof rel);
	pthread_create(&th, NULL, open_one, &r);
	/* Time for an open that does not wait to fail (today's SYMDB_E_CORRUPT);
	 * an open that waits passes either way. */
	usleep(200 * 1000);
	CHECK(rd_catalog_put(cat, &e, 0) == 0);
	rd_dir_unlock(lock);
	pthread_join(th, NULL);
	CHECK(r.rc == 0);
	if (r.rc)
		fprintf(stderr, "   open failed: %s\n", r.eb);
	if (r.img)
		CHECK(strcmp(resolve_name(r.img), "main_v2") == 0);
	symdb_image_close(r.img);
	r.img = NULL;

	/* A file that really differs from its entry is still reported. */
	e.header_sum ^= 1;
	CHECK(rd_catalog_put(cat, &e, 0) == 0);
	open_one(&r);
	CHECK(r.rc == SYMDB_E_CORRUPT && !r.img);
	CHECK(strstr(r.eb, "catalog") != NULL);
	symdb_image_close(r.img);
	symdb_close(r.db);
	rd_catalog_close(cat);
}

/* ---- (d) a slow thaw ------------------------------------------------------------ */

static sem_t g_thawing, g_release;
static int g_thaws;

static void slow_hook(const char *file, int on_disk, void *arg)
{
	(void)file;
	(void)on_disk;
	(void)arg;
	__atomic_add_fetch(&g_thaws, 1, __ATOMIC_RELAXED);
	sem_post(&g_thawing);
	while (sem_wait(&g_release) != 0)
		;
}

static void count_hook(const char *file, int on_disk, void *arg)
{
	(void)file;
	(void)on_disk;
	__atomic_add_fetch((int *)arg, 1, __ATOMIC_RELAXED);
}

struct thaw_open {
	symdb *db;
	uint8_t byte;
	int rc;
	const char *name;
};

static void *thaw_opener(void *argp)
{
	struct thaw_open *t = argp;
	SYMDB_OPTS(symdb_open_opts, o, .on_decompress = slow_hook);
	symdb_image *img = NULL;
	symdb_uuid id;

	uuid_of(&id, t->byte);
	t->rc = symdb_image_open_uuid(t->db, &id, &o, &img);
	t->name = img ? (strcmp(resolve_name(img), "main") == 0 ? "main" : "wrong") : NULL;
	symdb_image_close(img);
	return NULL;
}

static void test_slow_thaw(void)
{
	SYMDB_OPTS(symdb_open_opts, w, .flags = SYMDB_OPEN_WRITE);
	struct thaw_open t = { NULL, 0x70, -1, NULL };
	symdb_image *hot = NULL, *same = NULL;
	rd_catalog *cat = NULL;
	symdb_uuid id;
	char eb[300];
	int other_thaws = 0;
	pthread_t th;

	part("a thaw in progress and other opens on the same handle", 30);
	CHECK(rd_catalog_open(dbdir, RD_CAT_WRITE, &cat, eb, sizeof eb) == 0);
	if (!cat)
		return;
	uuid_of(&id, 0x70);
	publish_simple(cat, id.bytes, "main");
	rd_catalog_close(cat);
	CHECK(symdb_open(dbdir, &w, &t.db) == 0);
	if (!t.db)
		return;
	uuid_of(&id, 0x70);
	CHECK(symdb_image_compact(t.db, &id, NULL, NULL) == 0);
	uuid_of(&id, 0x20);
	CHECK(symdb_image_open_uuid(t.db, &id, NULL, &hot) == 0); /* open before the thaw */
	pthread_create(&th, NULL, thaw_opener, &t);
	while (sem_wait(&g_thawing) != 0)
		;
	/* The thaw's open is still running (its hook waits for g_release). */
	CHECK(open_close(t.db, 0x30) == 0);
	symdb_image_close(hot); /* a close on the handle */
	/* A second opener of the same image gets it without decompressing. */
	{
		SYMDB_OPTS(symdb_open_opts, o, .on_decompress = count_hook,
		           .on_decompress_arg = &other_thaws);
		uuid_of(&id, 0x70);
		CHECK(symdb_image_open_uuid(t.db, &id, &o, &same) == 0);
		if (same)
			CHECK(strcmp(resolve_name(same), "main") == 0);
		symdb_image_close(same);
	}
	sem_post(&g_release);
	pthread_join(th, NULL);
	CHECK(t.rc == 0 && t.name && strcmp(t.name, "main") == 0);
	CHECK(g_thaws == 1 && other_thaws == 0);
	symdb_close(t.db);
}

/* ---- (e) writes racing the refresh of a replaced catalog --------------------- */

struct refresh_race {
	rd_catalog *c;
	int stop; /* atomic */
	unsigned puts;
};

static void *refresh_race_writer(void *arg)
{
	struct refresh_race *r = arg;
	for (unsigned i = 1; !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE); i++) {
		uint8_t u[20];
		memset(u, 0x55, sizeof u);
		u[0] = (uint8_t)i, u[1] = (uint8_t)(i >> 8);
		rd_cat_entry e = { .uuid_len = 20, .uuid_kind = FMT_UUID_GNU_BUILD_ID,
			           .object_format = FMT_OBJ_ELF, .machine = 62, .file_size = 1,
			           .file = "images/55/x.symdb", .image_name = "x" };
		memcpy(e.uuid, u, sizeof u);
		if (rd_catalog_put(r->c, &e, 0) == 0)
			r->puts++;
	}
	return NULL;
}

static void test_write_during_refresh(void)
{
	char dir[512], other[600], from[1400], to[700], eb[300];
	struct refresh_race r = { NULL, 0, 0 };
	pthread_t t;
	int swaps = 0;

	part("writes while the catalog is replaced and refreshed", 120);
	snprintf(dir, sizeof dir, "%s.refresh", dbdir);
	CHECK(rd_catalog_open(dir, RD_CAT_CREATE, &r.c, eb, sizeof eb) == 0);
	if (!r.c)
		return;
	CHECK(pthread_create(&t, NULL, refresh_race_writer, &r) == 0);
	for (int k = 0; k < 150; k++) {
		rd_catalog *n = NULL;
		/* a new catalog made apart, renamed over DB/catalog */
		snprintf(other, sizeof other, "%s.new%d", dir, k);
		CHECK(rd_catalog_open(other, RD_CAT_CREATE, &n, eb, sizeof eb) == 0);
		rd_catalog_close(n);
		snprintf(from, sizeof from, "%s/catalog", dir);
		snprintf(to, sizeof to, "%s/catalog.old%d", dir, k);
		CHECK(rename(from, to) == 0);
		snprintf(from, sizeof from, "%s/catalog", other);
		snprintf(to, sizeof to, "%s/catalog", dir);
		CHECK(rename(from, to) == 0);
		swaps += rd_catalog_refresh(r.c, 1);
		usleep(1000);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	rd_catalog_close(r.c);
	fprintf(stderr, "   %d refreshes swapped, %u writes\n", swaps, r.puts);
	CHECK(swaps > 0 && r.puts > 0);
	snprintf(from, sizeof from, "rm -rf '%s' '%s'.new*", dir, dir);
	(void)system(from);
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	rd_catalog *cat = NULL;
	char cmd[600], eb[300];
	pthread_t wd;
	ssize_t n;

	if (argc == 4 && strcmp(argv[1], "grow") == 0)
		return grow_main(argv[2], (unsigned)atoi(argv[3]));
	pthread_create(&wd, NULL, watchdog, NULL);
	pthread_detach(wd);
	n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
	if (n <= 0)
		return 77;
	self_exe[n] = 0;
	sem_init(&g_started, 0, 0);
	sem_init(&g_go, 0, 0);
	sem_init(&g_thawing, 0, 0);
	sem_init(&g_release, 0, 0);
	snprintf(dbdir, sizeof dbdir, "%s/test_concurrency.%d",
	         tmp && *tmp && access(tmp, W_OK) == 0 ? tmp : "/tmp", (int)getpid());
	CHECK(rd_catalog_open(dbdir, RD_CAT_WRITE | RD_CAT_CREATE, &cat, eb, sizeof eb) == 0);
	if (!cat)
		return check_exit();
	for (int b = 0x10; b <= 0x40; b += 0x10) {
		uint8_t u[20];
		memset(u, b, sizeof u);
		publish_simple(cat, u, "main");
	}
	rd_catalog_close(cat);

	/* An argument selects parts (e.g. "bd"), for running one alone. */
#define WANT(c) (argc < 2 || strchr(argv[1], (c)))
	if (WANT('a'))
		test_list_while_map_grows();
	if (WANT('m'))
		test_mark_used_from_list();
	if (WANT('b'))
		test_superseded_outlives_db();
	if (WANT('c'))
		test_open_during_reindex();
	if (WANT('d'))
		test_slow_thaw();
	if (WANT('e'))
		test_write_during_refresh();
	__atomic_store_n(&g_deadline, 0, __ATOMIC_RELEASE);

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dbdir);
	(void)system(cmd);
	return check_exit();
}
