/* SPDX-License-Identifier: MIT */
/*
 * fetch_sandbox.h - symdb-fetch's sandbox (SPEC §12.9, README "Fetching
 * unknown images"): entered before the first byte comes off the network.
 */
#ifndef SYMDB_FETCH_SANDBOX_H
#define SYMDB_FETCH_SANDBOX_H

#include <stddef.h>
#include <stdint.h>

/*
 * Enter the sandbox: PR_SET_NO_NEW_PRIVS; a Landlock ruleset under which
 * the system's trees may be read but only the tree rw_dir (NULL: none)
 * written, no file executed, and (Landlock ABI 4, Linux 6.7) TCP connected
 * to ports[0..nports) only and no TCP port bound; a seccomp filter under
 * which the calls no download needs (exec, new processes, ptrace,
 * namespaces, mounts, modules, keys, BPF) raise SIGSYS, whose handler writes "error fetcher violated its
 * sandbox: NAME" on standard output (the status line) and lets the signal
 * kill the process.  Returns 0 with all three in force; 1 when the kernel
 * lacks a part (why says which; the rest holds); or a negative errno when a
 * part could not be set up, with its reason in why: the caller must then
 * not fetch.
 */
int fetch_sandbox_enter(const char *rw_dir, const uint16_t *ports, size_t nports, char *why,
                        size_t why_sz);

#endif /* SYMDB_FETCH_SANDBOX_H */
