#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# dwarf_real.sh SYMDB SCRATCH NAME [SAMPLE]: the DWARF oracle on a real binary
# (issue 3 acceptance): SAMPLE (default 100000) seeded addresses, half
# uniform over the executable sections and half skewed towards Zipf-ranked
# hot functions, default LLVM style with inlines, then GNU and JSON styles
# on a fifth of them; fails unless every address prints identical bytes.
# Known differences are classified in tests/KNOWN_DIFFERENCES.md.  NAME is one of
#   libpython  the pyenv libpython3.11.so.1.0 (DWARF 5 -O3, in the library)
#   libc       libc.so.6 with its libc6-dbg debug file (by build-id)
#   libstdcxx  the unstripped libstdc++6-12-dbg build of libstdc++.so.6.0.30
#   python3dbg python3.11-dbg's interpreter
# Exit 77 (skipped) when the binary or its debug information is missing.
set -euo pipefail
symdb=${1:?usage: dwarf_real.sh SYMDB SCRATCH NAME [SAMPLE]}
scratch=${2:?}
name=${3:?}
sample=${4:-100000}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$scratch"
case $name in
libpython)
	dir=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")')
	bin="$dir/libpython3.11.so.1.0"
	;;
libc) bin=/lib/x86_64-linux-gnu/libc.so.6 ;;
libstdcxx) bin=/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30 ;;
python3dbg) bin=/usr/bin/python3.11-dbg ;;
*) echo "real.sh: unknown binary $name" >&2; exit 2 ;;
esac
if [[ ! -f $bin ]]; then
	echo "real.sh: $bin not found; skipping"
	exit 77
fi
if [[ $name == libc ]]; then
	id=$(readelf -n "$bin" | awk '/Build ID/ {print $3}')
	if [[ ! -f /usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug ]]; then
		echo "real.sh: libc6-dbg is not installed; skipping"
		exit 77
	fi
fi
# Every address must be identical (tests/KNOWN_DIFFERENCES.md lists no class
# that these binaries contain): LLVM style on the whole sample, GNU and JSON
# on an even spread of a fifth of it.
exec python3 "$here/dwcompare.py" --symdb "$symdb" --db "$scratch/db" --obj "$bin" \
	--sample "$sample" --seed 20261122 --style LLVM,GNU,JSON \
	--sample-others $((sample / 5)) --show 10
