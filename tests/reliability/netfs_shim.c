/* SPDX-License-Identifier: MIT */
/*
 * netfs_shim.c - an LD_PRELOAD library for tests/reliability/netfs.sh: its
 * statfs(2) reports every filesystem as NFS (f_type 0x6969), so the refusal
 * of a database on a network filesystem (SPEC §12.1) can be tested end to
 * end without mounting one.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <sys/vfs.h>

typedef int (*statfs_fn)(const char *, struct statfs *);

int statfs(const char *path, struct statfs *buf)
{
	statfs_fn real = (statfs_fn)dlsym(RTLD_NEXT, "statfs");
	int rc = real ? real(path, buf) : -1;

	if (rc == 0)
		buf->f_type = 0x6969; /* NFS_SUPER_MAGIC */
	return rc;
}
