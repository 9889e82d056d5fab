/* SPDX-License-Identifier: MIT */
/*
 * test_fault.c - an index file truncated under a live reader (issue 12,
 * defect 8).  Two images are indexed and opened; one file is truncated to
 * its first page; with the SIGBUS handler symdb.h documents installed,
 * resolving it gives SYMDB_E_CORRUPT for every address instead of killing
 * the process, symdb_symbolize() gives SYMDB_SYM_DAMAGED, the next open
 * reports the truncation, and the other image answers exactly as before.
 * Without the handler (or with a library that does not recover) the
 * process dies of SIGBUS in the first resolve after the truncation.
 *
 * Under AddressSanitizer: ASan installs its own SIGBUS handler at start-up
 * (handle_sigbus=1), and sigaction() replaces it because
 * allow_user_segv_handler defaults to 1; nothing needs ASAN_OPTIONS (with
 * allow_user_segv_handler=0 or handle_sigbus=2 ASan keeps its handler and
 * reports the SIGBUS: checked by hand).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "reader_internal.h"
#include "symdb_endian.h"
#include "symdb_build.h"

/* The handler of symdb.h (symdb_fault_recover). */
static _Atomic(symdb *) fault_db;
static atomic_int recovered;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (symdb_fault_recover(atomic_load(&fault_db), si->si_addr) > 0) {
		atomic_fetch_add(&recovered, 1);
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_handler(symdb *db)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	atomic_store(&fault_db, db);
	CHECK(sigaction(SIGBUS, &sa, NULL) == 0);
}

/* Every symbol start of img, as vaddrs (sorted: SYMBOL_ADDRS is). */
static size_t symbol_addrs(const symdb_image *img, uint64_t **out)
{
	uint64_t n = img->nsyms;
	*out = calloc(n ? n : 1, sizeof **out);
	for (uint64_t i = 0; i < n; i++)
		(*out)[i] = fmt_be_addr(img->saddr, img->aw, i) + img->base;
	return (size_t)n;
}

/* Resolve addrs; count results of each status; names copied into a string
 * "name|name|..." (for comparing two runs), when names is given. */
static void resolve_all(const symdb_image *img, const uint64_t *addrs, size_t n, size_t *ok,
                        size_t *corrupt, char **names)
{
	symdb_frame *fr = calloc(65536, sizeof *fr);
	symdb_result *res = calloc(n ? n : 1, sizeof *res);
	size_t done = 0, cap = 0, len = 0;
	*ok = *corrupt = 0;
	if (names)
		*names = NULL;
	while (done < n) {
		ptrdiff_t k = symdb_resolve_batch(img, addrs + done, n - done, fr, 65536,
		                                  sizeof *fr, res + done, sizeof *res);
		CHECK_RC(k);
		if (k <= 0)
			break;
		for (size_t i = done; i < done + (size_t)k; i++) {
			*ok += res[i].status == 0;
			*corrupt += res[i].status == SYMDB_E_CORRUPT;
			if (res[i].status == SYMDB_E_CORRUPT)
				CHECK(res[i].count == 0 && !res[i].sym_name);
			const char *nm = res[i].sym_name ? res[i].sym_name : "-";
			if (!names)
				continue;
			size_t l = strlen(nm);
			if (len + l + 2 > cap) {
				cap = 2 * (len + l + 2);
				*names = realloc(*names, cap);
			}
			memcpy(*names + len, nm, l);
			len += l;
			(*names)[len++] = '|';
			(*names)[len] = 0;
		}
		done += (size_t)k;
	}
	free(fr);
	free(res);
}

/* One symdb_symbolize() call: the address of each image by UUID; the
 * statuses and errors of both. */
static void symbolize_both(symdb_symbolizer *s, const symdb_uuid *ida, uint64_t a,
                           const symdb_uuid *idb, uint64_t b, symdb_symbolized out[2])
{
	symdb_request rq[2] = {
		{ .image_ref = SYMDB_IMAGE_UUID, .image.uuid = ida, .addr = a },
		{ .image_ref = SYMDB_IMAGE_UUID, .image.uuid = idb, .addr = b },
	};
	CHECK_RC(symdb_symbolize(s, rq, 2, out, NULL));
}

/* Another thread opens, resolves and closes image B over and over (each
 * last close clears a slot of the table, each open fills one) while the
 * main thread's reads of A fault: the handler's search meets slots being
 * written, and B's answers never change. */
struct churn {
	symdb *db;
	const symdb_uuid *id;
	const char *names;   /* B's names, as first resolved */
	atomic_int stop;
	int rounds, wrong;
};

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	while (!atomic_load(&c->stop) || c->rounds < 20) {
		symdb_image *img = NULL;
		uint64_t *addrs;
		size_t ok, bad;
		char *names = NULL;
		if (symdb_image_open_uuid(c->db, c->id, NULL, &img) != 0) {
			c->wrong++;
			break;
		}
		size_t n = symbol_addrs(img, &addrs);
		resolve_all(img, addrs, n, &ok, &bad, &names);
		c->wrong += ok != n || !names || strcmp(names, c->names) != 0;
		free(names);
		free(addrs);
		symdb_image_close(img);
		c->rounds++;
	}
	return NULL;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char dir[600], cmd[700], err[512] = "", path[PATH_MAX];
	SYMDB_OPTS(symdb_build_opts, bo, .errbuf = err, .errbuf_sz = sizeof err,
	           .indexer_path = SYMDB_TEST_INDEXER);
	SYMDB_OPTS(symdb_build_result, ra);
	SYMDB_OPTS(symdb_build_result, rb);
	symdb_builder *b = NULL;
	symdb *db = NULL;
	symdb_image *ia = NULL, *ib = NULL, *again = NULL;

	snprintf(dir, sizeof dir, "%s/test_fault.%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	CHECK_RC(symdb_builder_open(dir, &bo, &b));
	if (!b || !SYMDB_TEST_INDEXER) {
		fprintf(stderr, "cannot build: %s\n", err);
		return check_exit();
	}
	/* Two images: this test and the indexer (both have build-ids). */
	CHECK_RC(symdb_builder_add(b, "/proc/self/exe", &bo, &ra));
	CHECK_RC(symdb_builder_add(b, SYMDB_TEST_INDEXER, &bo, &rb));
	symdb_builder_close(b);

	CHECK_RC(symdb_open(dir, EB_OPTS(err, sizeof err), &db));
	if (!db)
		return check_exit();
	install_handler(db);
	CHECK_RC(symdb_image_open_uuid(db, &ra.uuid, EB_OPTS(err, sizeof err), &ia));
	CHECK_RC(symdb_image_open_uuid(db, &rb.uuid, EB_OPTS(err, sizeof err), &ib));
	if (!ia || !ib)
		return check_exit();

	uint64_t *aa, *ab;
	size_t na = symbol_addrs(ia, &aa), nb = symbol_addrs(ib, &ab), ok, bad;
	char *names_b, *names_b2;
	CHECK(na > 100 && nb > 100 && ia->map_len > 4 * 4096);
	resolve_all(ia, aa, na, &ok, &bad, NULL);
	CHECK(ok == na && bad == 0);
	resolve_all(ib, ab, nb, &ok, &bad, &names_b);
	CHECK(ok == nb && bad == 0);

	symdb_symbolizer *s = NULL;
	symdb_symbolized out[2];
	CHECK_RC(symdb_symbolizer_create(db, NULL, &s));
	/* The context holds A (not B: B must be unmapped by its last close). */
	symbolize_both(s, &ra.uuid, aa[na / 2], &ra.uuid, aa[na / 3], out);
	CHECK(out[0].status == SYMDB_SYM_OK && out[1].status == SYMDB_SYM_OK);

	/* Truncate A's file under the mapping: every table past page 1 goes. */
	symdb_entry e = { .sz = sizeof e };
	static char namebuf[2 * 65536];
	CHECK_RC(symdb_lookup(db, &ra.uuid, &e, namebuf, sizeof namebuf));
	snprintf(path, sizeof path, "%s/%s", dir, e.file);
	CHECK(truncate(path, 4096) == 0);

	/* The check reads the file's last non-zero byte (reader_fault.c): the
	 * cut makes that read fault, the handler recovers it, and A is damaged
	 * from now on, before any table is read. */
	CHECK(symdb_image_fault_check(ia) == SYMDB_E_CORRUPT);
	/* Nothing else holds B now: the churning thread's opens and closes
	 * map and unmap it. */
	symdb_image_close(ib);
	ib = NULL;
	struct churn ch = { .db = db, .id = &rb.uuid, .names = names_b };
	pthread_t th;
	CHECK(pthread_create(&th, NULL, churn_main, &ch) == 0);
	resolve_all(ia, aa, na, &ok, &bad, NULL);
	/* The handler's search itself, while B's slot comes and goes: an
	 * address in A is always found, one in no mapping never. */
	int local = 0, found = 0, stray = 0;
	for (int i = 0; i < 20000; i++) {
		found += symdb_fault_recover(db, (const char *)ia->map + ia->map_len - 1);
		stray += symdb_fault_recover(db, &local);
	}
	CHECK(found == 20000 && stray == 0);
	atomic_store(&ch.stop, 1);
	pthread_join(th, NULL);
	CHECK(ch.wrong == 0 && ch.rounds >= 20);
	fprintf(stderr, "faults recovered: %d; B opened and closed %d times meanwhile\n",
	        atomic_load(&recovered), ch.rounds);
	CHECK_RC(symdb_image_open_uuid(db, &rb.uuid, EB_OPTS(err, sizeof err), &ib));
	CHECK(atomic_load(&recovered) >= 1);
	CHECK(ok == 0 && bad == na);
	CHECK(symdb_image_fault_check(ia) == SYMDB_E_CORRUPT);
	CHECK(symdb_image_fault_check(ib) == 0);
	CHECK(symdb_image_fault_check(NULL) == SYMDB_E_INVAL);
	/* The other image: exactly the same answers. */
	resolve_all(ib, ab, nb, &ok, &bad, &names_b2);
	CHECK(ok == nb && bad == 0);
	CHECK(names_b && names_b2 && strcmp(names_b, names_b2) == 0);

	/* The context: damaged for A, B as before; then A is opened afresh,
	 * which reports the truncation. */
	symbolize_both(s, &ra.uuid, aa[na / 2], &rb.uuid, ab[nb / 2], out);
	CHECK(out[0].status == SYMDB_SYM_DAMAGED && out[0].error == SYMDB_E_CORRUPT);
	CHECK(out[0].nframes == 0 && !out[0].sym_name);
	CHECK(out[1].status == SYMDB_SYM_OK && out[1].sym_name);
	symbolize_both(s, &ra.uuid, aa[na / 2], &rb.uuid, ab[nb / 2], out);
	CHECK(out[0].status == SYMDB_SYM_DAMAGED && out[0].error == SYMDB_E_CORRUPT);
	CHECK(out[1].status == SYMDB_SYM_OK && out[1].sym_name);
	err[0] = 0;
	CHECK(symdb_image_open_uuid(db, &ra.uuid, EB_OPTS(err, sizeof err), &again) ==
	      SYMDB_E_CORRUPT);
	CHECK(!again && strstr(err, "truncated"));
	fprintf(stderr, "reopen: %s\n", err);

	/* Not a symdb mapping: 0, errno untouched. */
	errno = 1234;
	CHECK(symdb_fault_recover(db, &local) == 0 && errno == 1234);
	CHECK(symdb_fault_recover(NULL, &local) == 0);
	CHECK(symdb_fault_recover(db, NULL) == 0);

	symdb_symbolizer_free(s);
	symdb_image_close(ia);
	symdb_image_close(ib);
	/* After the last close, A's mapping is no longer in the table. */
	CHECK(db->cache->fault.head != NULL);
	for (size_t i = 0; db->cache->fault.head && i < RD_FAULT_BLOCK; i++)
		CHECK(db->cache->fault.head->slot[i].start == 0);
	atomic_store(&fault_db, NULL);
	symdb_close(db);
	free(aa);
	free(ab);
	free(names_b);
	free(names_b2);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	(void)system(cmd);
	return check_exit();
}
