#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The -o and --svg outputs of `symdb flame`, `symdb perf` and `symdb pprof`
# (tools/cli_outfile.h).  A regular file is replaced by rename, so the test
# first checks that: the old inode is gone, the bytes are those written to
# stdout.  Anything that is not a regular file is written in place, as a
# shell redirection would: a character device (a private copy of /dev/null
# made with mknod, so that a broken symdb replaces the copy, never the
# machine's own /dev/null, as one once did) stays a device, and a FIFO stays
# a FIFO and its reader gets the bytes.  A symbolic link to a regular file
# stays a link and its target gets the new bytes.  A directory is one error
# line naming it.
set -euo pipefail
: "${SYMDB:?}" "${SCRATCH:?}"
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && cd "$SCRATCH"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Inputs of each command: folded stacks; perf script text (one stack of
# frames outside any image, so no database work); an empty pprof profile
# (string_table [""]: field 6, length 0).
printf 'main;work;leaf 3\nmain;idle 2\n' >in.folded
printf 'prog 1234/1234 [000] 100.000001:     250000 cpu-clock: \n\t    10 f ([unknown])\n\n' >in.perf
printf '\x32\x00' | gzip -n >in.pb.gz
# (symdb pprof's summary line on stderr is dropped where stderr is read.)
# cmd NAME OPTION: the command line of NAME writing its main output (or,
# for OPTION --svg, its flame graph) to the path that follows.
cmd() {
	case $1 in
	flame) echo "flame in.folded -o" ;;
	perf) [[ $2 == -o ]] && echo "perf -q in.perf -o" || echo "perf -q in.perf -o perf.folded --svg" ;;
	pprof) [[ $2 == -o ]] && echo "pprof in.pb.gz -o" || echo "pprof in.pb.gz -o pprof.out --svg" ;;
	esac
}
# The bytes each writes, to stdout (perf's and pprof's SVG through a file).
"$SYMDB" flame in.folded >flame.-o.want
"$SYMDB" perf -q in.perf >perf.-o.want
"$SYMDB" pprof in.pb.gz >pprof.-o.want 2>/dev/null
"$SYMDB" perf -q in.perf --svg perf.--svg.want >/dev/null
"$SYMDB" pprof in.pb.gz -o pprof.ref --svg pprof.--svg.want 2>/dev/null
for f in *.want; do [[ -s $f ]] || fail "$f: the command wrote nothing"; done

have_mknod=1
mknod nul c 1 3 2>/dev/null || have_mknod=0
for c in flame perf pprof; do
	for o in -o --svg; do
		want=$c.$o.want
		[[ -e $want ]] || continue # symdb flame writes only the SVG, with -o
		# A regular file: replaced (a new inode), the expected bytes.
		echo old >reg && ino=$(stat -c %i reg)
		# shellcheck disable=SC2046
		"$SYMDB" $(cmd $c $o) reg 2>/dev/null || fail "$c $o FILE: exit $?"
		cmp -s reg "$want" || fail "$c $o FILE: not the bytes written to stdout"
		[[ $(stat -c %i reg) != "$ino" ]] || fail "$c $o FILE: written in place, not renamed"
		# A link to a regular file: the link stays, its target is replaced.
		echo old >target && ln -sfn target link
		"$SYMDB" $(cmd $c $o) link 2>/dev/null || fail "$c $o LINK: exit $?"
		[[ -L link ]] || fail "$c $o LINK: the symbolic link was replaced"
		cmp -s target "$want" || fail "$c $o LINK: the target does not hold the output"
		# A FIFO: written in place, its reader gets every byte.
		rm -f fifo got && mkfifo fifo
		timeout 60 cat fifo >got &
		reader=$!
		timeout 60 "$SYMDB" $(cmd $c $o) fifo 2>/dev/null || fail "$c $o FIFO: exit $?"
		wait $reader || fail "$c $o FIFO: the reader got no end of file"
		[[ -p fifo ]] || fail "$c $o FIFO: replaced by a $(stat -c %F fifo)"
		cmp -s got "$want" || fail "$c $o FIFO: the reader got other bytes"
		# A character device: written in place, still a device.
		if ((have_mknod)); then
			"$SYMDB" $(cmd $c $o) nul 2>/dev/null || fail "$c $o DEVICE: exit $?"
			[[ -c nul ]] || fail "$c $o DEVICE: replaced by a $(stat -c %F nul)"
		fi
		# A directory: one line naming it, exit 1, the directory unchanged.
		mkdir -p adir
		set +e
		"$SYMDB" $(cmd $c $o) adir 2>err.all
		rc=$?
		set -e
		grep -v '^symdb: pprof: in.pb.gz: ' err.all >err || true
		[[ $rc == 1 && $(cat err) == "symdb: adir: Is a directory" ]] ||
			fail "$c $o DIR: exit $rc, $(cat err)"
		[[ -d adir && -z $(ls -A adir) ]] || fail "$c $o DIR: the directory changed"
	done
done
leftover=$(find . -name '.*.*' -type f)
[[ -z $leftover ]] || fail "temporary files left: $leftover"
((have_mknod)) || echo "outputs: no device check (mknod not permitted here)"
echo "outputs: ok"
