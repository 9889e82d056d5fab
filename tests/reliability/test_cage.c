/* SPDX-License-Identifier: MIT */
/*
 * test_cage.c: SYMDB_BUILD_ISOLATE through the library API (SPEC §12.5): an
 * isolated and an in-process build of the same binary write byte-identical
 * index files; an older, shorter symdb_build_opts (without the limits) is
 * accepted; an unknown flag is refused; a hanging child (test hook) ends
 * with -ETIMEDOUT after timeout_s, one line naming the file, nothing
 * published and DB/tmp empty; a child out of memory gives -ENOMEM.  The
 * failures come from the test build of the indexer (symdb-indexer-test
 * --test-hook NAME) through a wrapper script given as indexer_path: the
 * indexer gets no environment to carry a hook in.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "symdb.h"
#include "symdb_build.h"

static symdb_build_result res; /* ~8 KiB: not on the stack */

static long slurp(const char *path, char **out)
{
	FILE *f = fopen(path, "rb");
	long n;

	*out = NULL;
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	*out = malloc((size_t)n + 1);
	if (!*out || fread(*out, 1, (size_t)n, f) != (size_t)n)
		n = -1;
	fclose(f);
	return n;
}

/* Build BIN into a new database under root; path of its index in idx. */
static int build_one(const char *root, const char *name, unsigned flags, char *idx, size_t isz)
{
	char dir[4096], err[1024] = "";
	SYMDB_OPTS(symdb_build_opts, o, .flags = flags, .errbuf = err, .errbuf_sz = sizeof err,
	           .indexer_path = SYMDB_TEST_INDEXER);
	symdb_builder *b = NULL;
	int rc;

	snprintf(dir, sizeof dir, "%s/%s", root, name);
	rc = symdb_builder_open(dir, NULL, &b);
	CHECK_RC(rc);
	if (rc)
		return rc;
	res.sz = sizeof res;
	rc = symdb_builder_add(b, "/proc/self/exe", &o, &res);
	if (rc)
		fprintf(stderr, "%s: %s\n", name, err);
	snprintf(idx, isz, "%s", res.index_path);
	symdb_builder_close(b);
	return rc;
}

/* A wrapper under root running the test indexer with `--test-hook name`;
 * its path in out. */
static int hook_wrapper(const char *root, const char *name, char *out, size_t sz)
{
	FILE *f;

	snprintf(out, sz, "%s/indexer-hook-%s", root, name);
	f = fopen(out, "w");
	if (!f)
		return -1;
	fprintf(f, "#!/bin/sh\nexec \"%s\" --test-hook %s \"$@\"\n", SYMDB_TEST_INDEXER_HOOKS,
	        name);
	if (fclose(f) != 0 || chmod(out, 0755) != 0)
		return -1;
	return 0;
}

int main(void)
{
	char hang[4200], oom[4200];
	const char *tmpdir = getenv("TMPDIR");
	char root[4096], a[4096], b2[4096], tmp[4200], err[1024];
	char *x = NULL, *y = NULL;
	symdb_builder *b = NULL;
	long nx, ny;
	int rc;

	snprintf(root, sizeof root, "%s/symdb-cage-XXXXXX", tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	/* 1. isolated == in-process, byte for byte */
	CHECK_RC(build_one(root, "iso", SYMDB_BUILD_ISOLATE, a, sizeof a));
	CHECK_RC(build_one(root, "in", 0, b2, sizeof b2));
	nx = slurp(a, &x);
	ny = slurp(b2, &y);
	CHECK(nx > 0 && nx == ny && memcmp(x, y, (size_t)nx) == 0);
	free(x);
	free(y);

	snprintf(tmp, sizeof tmp, "%s/iso", root);
	CHECK_RC(symdb_builder_open(tmp, NULL, &b));

	/* 2. an older opts struct (up to errbuf_sz) is accepted; unknown flags not */
	{
		SYMDB_OPTS(symdb_build_opts, o, .flags = SYMDB_BUILD_ISOLATE);
		o.sz = offsetof(symdb_build_opts, timeout_s);
		res.sz = sizeof res;
		CHECK_RC(symdb_builder_add(b, "/proc/self/exe", &o, &res));
		CHECK(res.skipped == 1);
		o.sz = sizeof o;
		o.flags = 0x80;
		res.sz = sizeof res;
		CHECK(symdb_builder_add(b, "/proc/self/exe", &o, &res) == SYMDB_E_INVAL);
	}

	/* 3. a hanging child: -ETIMEDOUT after timeout_s, nothing left */
	{
		SYMDB_OPTS(symdb_build_opts, o, .flags = SYMDB_BUILD_ISOLATE | SYMDB_BUILD_FORCE,
		           .errbuf = err, .errbuf_sz = sizeof err, .timeout_s = 1,
		           .indexer_path = SYMDB_TEST_INDEXER);
		CHECK(hook_wrapper(root, "hang", hang, sizeof hang) == 0);
		CHECK(hook_wrapper(root, "oom", oom, sizeof oom) == 0);
		o.indexer_path = hang;
		res.sz = sizeof res;
		rc = symdb_builder_add(b, "/proc/self/exe", &o, &res);
		CHECK(rc == -ETIMEDOUT);
		CHECK(strstr(err, "/proc/self/exe: indexer timed out after 1 s") != NULL);
		CHECK(strchr(err, '\n') == NULL);
		snprintf(tmp, sizeof tmp, "%s/iso/tmp", root);
		CHECK(check_dir_entries(tmp) == 0);
		/* 4. out of memory under a 256 MiB address-space limit (not under
		 *    ASan, which cannot run with RLIMIT_AS) */
		if (!getenv("SYMDB_TEST_ASAN")) {
			o.indexer_path = oom;
			o.memory_limit = 256u << 20;
			o.timeout_s = 30;
			res.sz = sizeof res;
			rc = symdb_builder_add(b, "/proc/self/exe", &o, &res);
			CHECK(rc == -ENOMEM);
			CHECK(strstr(err, "indexer ran out of memory (address-space limit 256 MiB)") !=
			      NULL);
			CHECK(check_dir_entries(tmp) == 0);
		}
		/* the published index is still the first build's */
		nx = slurp(a, &x);
		ny = slurp(b2, &y);
		CHECK(nx > 0 && nx == ny && memcmp(x, y, (size_t)nx) == 0);
		free(x);
		free(y);
	}
	symdb_builder_close(b);
	return check_exit();
}
