#!/bin/sh
# SPDX-License-Identifier: MIT
# index_sizes.sh: the index of each image against the .gsym of the same
# debug information, and where the index's bytes go (`symdb info`'s
# table bytes), for SPEC §7.9's size target (issue 18 item 6).
#
#   bench/index_sizes.sh SYMDB SCRATCH [IMAGE...]
#
# SYMDB is a built `symdb`; SCRATCH a directory for the databases and the
# .gsym files.  Default images: libpython 3.11, libc (its libc6-dbg debug
# file), libstdc++ and ceph-osd (ceph-osd-dbg).  llvm-gsymutil-14
# --convert is given the file holding the DWARF (the debug file when there
# is one), as symdb reads it.  ceph-osd's conversion needs ~2.5 GB of RAM.
set -eu
SYMDB=$1 SCRATCH=$2
shift 2
[ $# -gt 0 ] || set -- /root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0 \
	/lib/x86_64-linux-gnu/libc.so.6 "$(readlink -f /usr/lib/x86_64-linux-gnu/libstdc++.so.6)" \
	/usr/bin/ceph-osd
mkdir -p "$SCRATCH"
for img in "$@"; do
	n=$(basename "$img")
	db=$SCRATCH/db-$n
	rm -rf "$db"
	"$SYMDB" --db "$db" build "$img" >/dev/null
	ix=$(ls "$db"/images/*/*.symdb)
	id=$(basename "$ix" .symdb)
	dbg=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
	src=$img
	[ -f "$dbg" ] && src=$dbg
	llvm-gsymutil-14 --convert "$src" -o "$SCRATCH/$n.gsym" >/dev/null 2>&1 || true
	g=$(stat -c %s "$SCRATCH/$n.gsym" 2>/dev/null || echo 0)
	s=$(stat -c %s "$ix")
	awk -v n="$n" -v s="$s" -v g="$g" 'BEGIN { printf "%-24s index %12d  gsym %12d  ratio %s\n",
		n, s, g, g ? sprintf("%.3f", s / g) : "-" }'
	"$SYMDB" info "$ix" | sed -n 's/^table bytes */  /p'
done
