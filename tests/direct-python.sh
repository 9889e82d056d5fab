# SPDX-License-Identifier: MIT
#
# direct-python.sh DIR: sourced by run.sh and tsan.sh before CMake and CTest.
# Puts in DIR, first in PATH, a `python3` that starts the interpreter
# `python3` names directly and with -S (no `site` module), so that the
# suite's thousands of python3 runs pay neither cost:
#   - where `python3` is pyenv's shim (a shell script that runs pyenv to pick
#     the interpreter on every start: 0.44 s of CPU a start on these
#     machines), the interpreter it picks is started instead;
#   - `site` reads every .pth file in site-packages, and one of these
#     machines has a .pth that imports a package (certifi): 105 ms of CPU
#     a start with it, 28 ms with -S.
# The tests import only the standard library and their own modules, which
# -S keeps; it drops site-packages, the .pth and sitecustomize hooks and the
# interactive builtins (exit(), help()), none of which a test uses.  Python
# a test starts as sys.executable still loads site.  A `sh` script, not a
# link, since a link cannot pass -S: dash adds about 1 ms.  DIR is made
# absolute: tests run in other working directories.
symdb_direct_python() {
	local dir py q
	dir=$(realpath -m "$1")
	command -v python3 >/dev/null || return 0
	py=$(python3 -S -c 'import sys; print(sys.executable)' 2>/dev/null) || return 0
	[[ -x $py ]] || return 0
	mkdir -p "$dir"
	q=${py//\'/\'\\\'\'} # the path single-quoted for sh
	printf '#!/bin/sh\nexec '\''%s'\'' -S "$@"\n' "$q" >"$dir/python3.tmp"
	chmod 755 "$dir/python3.tmp"
	mv -f "$dir/python3.tmp" "$dir/python3"
	export PATH="$dir:$PATH"
}
