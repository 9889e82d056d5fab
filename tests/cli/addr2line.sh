#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# addr2line.sh: symdb run as addr2line against llvm-addr2line-14 (every
# combination of -a -f -i -C -p -s over addresses of DWARF fixtures and
# libpython) and GNU addr2line (lines that are not addresses, the command
# line); addr2line.py says what each part checks.
. "$(dirname "$0")/lib.sh"
require llvm-addr2line-14 addr2line
lib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")')/libpython3.11.so.1.0
[[ -f $lib ]] || skip_part "no libpython3.11.so.1.0 (pyenv python 3.11)"
python3 "$(dirname "$0")/addr2line.py" oracle "$SYMDB" "$SCRATCH" \
	"$FIXTURES/full/c_gcc_O2_pie" "$FIXTURES/full/cpp_g++_O2_rdyn" \
	"$FIXTURES/full/lib_gcc_O2.so" "$lib"
