/* SPDX-License-Identifier: MIT */
/*
 * slow_publish_shim.c - an LD_PRELOAD library for
 * tests/reliability/force_race.sh: after a rename(2) of an index file into
 * place (a new name ending in ".symdb") succeeds, it sleeps
 * SLOW_PUBLISH_US microseconds (default 40000), so the publisher's window
 * between its rename and its catalog commit (SPEC §12.5), microseconds on
 * a fast disk, is long enough for concurrent readers to land in it on
 * every rebuild.  Only the builder runs with it.
 */
#define _GNU_SOURCE /* RTLD_NEXT, renameat2 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void slow_after(const char *newpath)
{
	const char *us = getenv("SLOW_PUBLISH_US");
	size_t n = strlen(newpath);
	long v = us ? atol(us) : 40000;
	struct timespec ts;

	if (n < 6 || strcmp(newpath + n - 6, ".symdb") != 0 || v <= 0)
		return;
	ts.tv_sec = v / 1000000;
	ts.tv_nsec = (v % 1000000) * 1000;
	nanosleep(&ts, NULL);
}

int rename(const char *oldpath, const char *newpath)
{
	int (*real)(const char *, const char *) =
	        (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	int rc = real ? real(oldpath, newpath) : -1;

	if (rc == 0)
		slow_after(newpath);
	return rc;
}

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
	int (*real)(int, const char *, int, const char *) =
	        (int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, "renameat");
	int rc = real ? real(olddirfd, oldpath, newdirfd, newpath) : -1;

	if (rc == 0)
		slow_after(newpath);
	return rc;
}

int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
              unsigned flags)
{
	int (*real)(int, const char *, int, const char *, unsigned) =
	        (int (*)(int, const char *, int, const char *, unsigned))dlsym(RTLD_NEXT,
	                                                                        "renameat2");
	int rc = real ? real(olddirfd, oldpath, newdirfd, newpath, flags) : -1;

	if (rc == 0)
		slow_after(newpath);
	return rc;
}
