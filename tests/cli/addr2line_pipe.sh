#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# addr2line_pipe.sh: symdb run as addr2line driven as perf 6.1 drives it
# ('-e FILE -i -f', one "ADDR\n,\n" request at a time, the answer read up to
# GNU's "??"/"??:0" for the ',' before the next request), with a timeout on
# every read; the answers are llvm-addr2line-14's.
. "$(dirname "$0")/lib.sh"
require llvm-addr2line-14
lib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")')/libpython3.11.so.1.0
[[ -f $lib ]] || skip_part "no libpython3.11.so.1.0 (pyenv python 3.11)"
python3 "$(dirname "$0")/addr2line.py" pipe "$SYMDB" "$SCRATCH" \
	"$FIXTURES/full/cpp_g++_O2_rdyn" "$lib"
