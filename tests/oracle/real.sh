#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# real.sh SYMDB SCRATCH NAME: oracle comparison on a real system library,
# symbol tables only (issue "symdb core" acceptance).  NAME is one of
#   libpython  a `strip -g` copy of the pyenv/system libpython3.11.so.1.0
#   libstdcxx  a `strip -g` copy of libstdc++.so.6 (already dynsym-only)
#   libc       /lib/x86_64-linux-gnu/libc.so.6 itself (dynsym only)
# DWARF is kept out on both sides: symdb builds with --no-dwarf and
# llvm-symbolizer gets --debug-file-directory=/nonexistent, because libc6-dbg
# would otherwise hand it libc's separate debug file by build-id.
# 100000 addresses per library (symbol starts/ends/gaps sampled + random).
set -euo pipefail
symdb=${1:?usage: real.sh SYMDB SCRATCH NAME}
scratch=${2:?}
name=${3:?}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$scratch"
case $name in
libpython)
	dir=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")')
	src="$dir/libpython3.11.so.1.0"
	[[ -f $src ]] || src=/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0
	;;
libstdcxx) src=/usr/lib/x86_64-linux-gnu/libstdc++.so.6 ;;
libc) src=/lib/x86_64-linux-gnu/libc.so.6 ;;
*) echo "real.sh: unknown library $name" >&2; exit 2 ;;
esac
if [[ ! -f $src ]]; then
	echo "real.sh: $src not found; skipping"
	exit 77
fi
if [[ $name == libc ]]; then
	bin=$src
else
	bin="$scratch/$(basename "$src").strip-g"
	strip -g "$src" -o "$bin"
fi
# (--no-build: a query indexing on first sight would take libc's debug file,
# which the --no-dwarf index lacks, as `symdb build` without --no-dwarf does)
exec python3 "$here/compare.py" --symdb "$symdb" --scratch "$scratch" \
	--limit 100000 --random 40000 --json 2000 --build-arg=--no-dwarf \
	--symdb-arg=--no-build --llvm-arg=--debug-file-directory=/nonexistent "$bin"
