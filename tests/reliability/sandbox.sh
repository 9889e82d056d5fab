#!/bin/bash
# SPDX-License-Identifier: MIT
#
# sandbox.sh: the indexer's sandbox (SPEC §12.5, README "The sandbox").
#   1. A running indexer (the test build, hung on purpose) has an empty
#      environment, a process group of its own, NoNewPrivs 1, a seccomp
#      filter, and the limits: core 0, NPROC, NOFILE 128, CPU, AS, FSIZE.
#   2. The test build's violations - open("/etc/passwd"), socket(),
#      execve(), fork() (glibc: clone), ptrace() - each end the build with
#      "FILE: indexer violated its sandbox: SYSCALL", exit 1, and publish
#      nothing: `symdb list` empty, no file under DB/images or DB/tmp.
#   3. The same input then builds with the real indexer (in the same
#      filter) and answers like llvm-symbolizer-14.
#   4. The installed indexer has no test hooks: `--test-hook` is a bad
#      command line (exit 2) and none of the hooks' code is in it.
# The hooks run through wrappers given as SYMDB_INDEXER (indexer_hook).
source "$(dirname "$0")/../cli/lib.sh"

: "${SYMDB_INDEXER_PROD:?SYMDB_INDEXER_PROD (symdb-indexer) must be set}"
IN=$FIXTURES/full/c_gcc_O2_pie
ASAN=0
[[ $(ldd "$SYMDB" 2>/dev/null) == *libasan* ]] && ASAN=1

# nothing_published DB WHAT: the catalog lists nothing, no file anywhere
nothing_published() {
	local n
	n=$("$SYMDB" --db "$1" list 2>/dev/null | wc -l)
	((n == 0)) || fail "$2: the catalog lists $n entries"
	[[ -z $(find "$1/images" -type f 2>/dev/null) ]] || fail "$2: a file under DB/images"
	[[ -z $(find "$1/tmp" -mindepth 1 2>/dev/null) ]] || fail "$2: a file left in DB/tmp"
}

# --- 1. what a running indexer looks like ----------------------------------------
DB=$SCRATCH/live
SYMDB_INDEXER=$(indexer_hook hang) MALLOC_CHECK_=3 SECRET_TOKEN=x \
	"$SYMDB" --db "$DB" build --timeout 20 --memory-limit 2G "$IN" >"$SCRATCH/live.out" 2>&1 &
bpid=$!
ipid=
for _ in $(seq 100); do
	ipid=$(pgrep -P "$bpid" -f -- "symdb-indexer-test --test-hook hang" | head -1) || true
	[[ -n $ipid ]] && grep -q '^Seccomp:[[:space:]]*2' "/proc/$ipid/status" 2>/dev/null && break
	sleep 0.1
done
[[ -n $ipid ]] || fail "no indexer found running"
# the hook runs after the first temp file is written: confined by then
# (the wrapper's /bin/sh adds PWD, and a shell may add SHLVL and _: those
# only)
leaked=$(tr '\0' '\n' <"/proc/$ipid/environ" | grep -Ev '^(PWD|OLDPWD|SHLVL|_)=' || true)
[[ -z $leaked ]] || fail "indexer environment is not empty: $(echo $leaked)"
read -r -a st < <(sed 's/.*) //' "/proc/$ipid/stat")
# after the command name: state ppid pgrp
[[ ${st[2]} == "$ipid" ]] || fail "indexer is in process group ${st[2]}, not its own ($ipid)"
[[ ${st[2]} != "$(ps -o pgid= "$bpid" | tr -d ' ')" ]] || fail "indexer shares the builder's group"
grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$ipid/status" || fail "NoNewPrivs is not set"
grep -q '^Seccomp:[[:space:]]*2' "/proc/$ipid/status" || fail "no seccomp filter (Seccomp: $(awk '/^Seccomp:/{print $2}' "/proc/$ipid/status"))"
lim=/proc/$ipid/limits
grep -Eq '^Max core file size +0 +0 ' "$lim" || fail "RLIMIT_CORE is not 0"
grep -Eq '^Max open files +128 +' "$lim" || fail "RLIMIT_NOFILE is not 128: $(grep 'open files' "$lim")"
grep -Eq '^Max processes +[0-9]+ +' "$lim" || fail "RLIMIT_NPROC is unlimited"
grep -Eq '^Max cpu time +[0-9]+ +' "$lim" || fail "RLIMIT_CPU is unlimited"
grep -Eq '^Max file size +2147483648 +' "$lim" || fail "RLIMIT_FSIZE is not the memory limit"
if ((ASAN)); then
	note "RLIMIT_AS not checked under AddressSanitizer"
else
	grep -Eq '^Max address space +2147483648 +' "$lim" || fail "RLIMIT_AS is not the memory limit"
fi
note "indexer $ipid: empty environment, own group, NoNewPrivs, seccomp, limits: $(grep -E 'processes|open files' "$lim" | tr -s ' ' | tr '\n' ';')"
kill -KILL "$ipid"
wait "$bpid" || true

# --- 2. each violation: one line, exit 1, nothing published ------------------------
# hook and the syscall the kernel sees (glibc's fork() is clone, open() openat)
for hv in open:openat socket:socket execve:execve fork:clone ptrace:ptrace; do
	h=${hv%%:*}
	sc=${hv#*:}
	DB=$SCRATCH/v-$h
	SYMDB_INDEXER=$(indexer_hook "$h") run "$SYMDB" --db "$DB" build "$IN"
	expect_error "$h" "$IN: indexer violated its sandbox: $sc"
	[[ $(cat "$ERR") == "symdb: $IN: indexer violated its sandbox: $sc" ]] ||
		fail "$h: stderr is not exactly the violation: $(cat "$ERR")"
	((RC == 1)) || fail "$h: exit $RC, expected 1"
	nothing_published "$DB" "$h"
	# --- 3. the real indexer, same filter, same input: indexed, right answers
	run "$SYMDB" --db "$DB" build "$IN"
	expect_ok "$h: rebuild with symdb-indexer"
done
a=$(llvm-nm-14 "$IN" | awk '$3 == "main" {print "0x"$1}')
diff <(llvm_query "$IN" "$a") <("$SYMDB" --db "$SCRATCH/v-socket" query --obj "$IN" "$a") >&2 ||
	fail "after the violations: query differs from llvm-symbolizer-14"
note "violations: one line each, exit 1, nothing published; the real indexer then answers like llvm-symbolizer-14"

# --- 3b. under AddressSanitizer, a bug's report gets through the filter -----------
if ((ASAN)); then
	DB=$SCRATCH/uaf
	SYMDB_INDEXER=$(indexer_hook use-after-free) run "$SYMDB" --db "$DB" build "$IN"
	grep -q 'ERROR: AddressSanitizer: heap-use-after-free' "$ERR" ||
		fail "use-after-free: no AddressSanitizer report: $(head -c 600 "$ERR")"
	grep -q 'symdb-indexer-test+0x' "$ERR" || fail "use-after-free: the report has no frames"
	! grep -q 'violated its sandbox' "$ERR" || fail "use-after-free: the filter cut the report"
	nothing_published "$DB" "use-after-free"
	note "AddressSanitizer: a use after free in the indexer is reported in full under the filter"
fi

# --- 4. the installed indexer carries no test hooks --------------------------------
set +e
"$SYMDB_INDEXER_PROD" --test-hook segv --report-fd 1 -- "$IN" "$SCRATCH" >/dev/null 2>"$ERR"
rc=$?
set -e
((rc == 2)) || fail "symdb-indexer --test-hook: exit $rc, expected 2 (a bad command line)"
if nm "$SYMDB_INDEXER_PROD" 2>/dev/null | grep -E ' (idx_test_hook_args|hook_[a-z]+)$'; then
	fail "symdb-indexer contains test hook code"
fi
! grep -qa -- '--test-hook' "$SYMDB_INDEXER_PROD" || fail "symdb-indexer mentions --test-hook"
[[ $(nm "$SYMDB_INDEXER_TEST" | grep -c ' idx_test_hook_args$') == 1 ]] ||
	fail "the check above cannot fail: symdb-indexer-test has no idx_test_hook_args"
note "symdb-indexer: no test hooks"
