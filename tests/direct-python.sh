# SPDX-License-Identifier: MIT
#
# direct-python.sh DIR: sourced by run.sh and tsan.sh before CMake and CTest.
# Where `python3` is pyenv's shim (a shell script that runs pyenv to pick the
# interpreter: about a second a start on these machines, paid by each of the
# suite's thousands of python3 runs), put a `python3` link to the interpreter
# it picks in DIR and DIR first in PATH: the tests then run the same Python,
# without the shim.  Elsewhere nothing changes.
symdb_direct_python() {
	local dir=$1 py
	py=$(command -v python3) || return 0
	[[ $(head -c 2 "$py" 2>/dev/null) == "#!" ]] || return 0 # an interpreter, not a script
	py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || return 0
	[[ -x $py ]] || return 0
	mkdir -p "$dir"
	ln -sfn "$py" "$dir/python3"
	export PATH="$dir:$PATH"
}
