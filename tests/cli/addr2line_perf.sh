#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# addr2line_perf.sh: perf 6.1, the real client of the addr2line personality.
# A `perf record -e cpu-clock -g` profile of a few seconds of pure-Python
# work (the pyenv python3.11 with its libpython, else /usr/bin/python3.11);
# `perf report --stdio -s dso,sym,srcline` and `perf script -F ip,sym,srcline`
# run once with binutils' addr2line and once with symdb's first in PATH (a
# directory with an `addr2line` symlink to symdb), each under a timeout: a
# hang fails the test.  The texts must be the same except lines where binutils
# is wrong, each checked per address against llvm-addr2line-14 and
# llvm-symbolizer-14 and classed as in tests/KNOWN_DIFFERENCES.md "GNU addr2line under perf"
# (addr2line_perf.py).  Label `slow`: about 80 s, most of it binutils under perf report.
. "$(dirname "$0")/lib.sh"
require perf addr2line llvm-addr2line-14 timeout
py=
lib=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")' 2>/dev/null || true)
if [[ -f $lib/libpython3.11.so.1.0 && -x $lib/../bin/python3.11 ]]; then
	py=$lib/../bin/python3.11
elif [[ -x /usr/bin/python3.11 ]]; then
	py=/usr/bin/python3.11
else
	echo "SKIP: no python3.11"
	exit 77
fi

# perf keeps its build-id cache under $HOME/.debug: this test's own
export HOME=$SCRATCH/home
mkdir -p "$HOME"
cat >"$SCRATCH/work.py" <<'EOF'
import time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
t = time.time()
while time.time() - t < 3:
    fib(18); sorted(str(i) for i in range(2000)); {i: i * i for i in range(3000)}
EOF
if ! perf record -q -e cpu-clock -g -o "$SCRATCH/perf.data" "$py" "$SCRATCH/work.py" \
	>"$SCRATCH/record.log" 2>&1; then
	echo "SKIP: perf record does not work here: $(tail -1 "$SCRATCH/record.log")"
	exit 77
fi

# Each run's addr2line is a wrapper that logs the files perf names and the
# requests it sends (tee passes every byte on at once: no buffering).
mkwrapper() { # DIR REAL
	mkdir -p "$1"
	cat >"$1/addr2line" <<EOF
#!/bin/sh
log=\$(mktemp "$1/req.XXXXXX")
printf '%s\n' "\$*" >"\$log.args"
tee "\$log" | "$2" "\$@"
EOF
	chmod +x "$1/addr2line"
}
mkdir -p "$SCRATCH/symdb-bin"
ln -sf "$SYMDB" "$SCRATCH/symdb-bin/addr2line"
mkwrapper "$SCRATCH/gnu" "$(command -v addr2line)"
mkwrapper "$SCRATCH/mine" "$SCRATCH/symdb-bin/addr2line"

report() { # OUT: perf report and perf script with the addr2line first in PATH
	local rc=0
	timeout 600 perf report -i "$SCRATCH/perf.data" --stdio -s dso,sym,srcline \
		>"$1.report" 2>"$1.report.err" || rc=$?
	((rc != 124)) || fail "perf report hung with $(command -v addr2line) (killed after 600 s)"
	((rc == 0)) || fail "perf report exit $rc: $(tail -2 "$1.report.err")"
	timeout 600 perf script -i "$SCRATCH/perf.data" -F ip,sym,srcline \
		>"$1.script" 2>"$1.script.err" || rc=$?
	((rc != 124)) || fail "perf script hung with $(command -v addr2line) (killed after 600 s)"
	((rc == 0)) || fail "perf script exit $rc: $(tail -2 "$1.script.err")"
}
PATH=$SCRATCH/gnu:$PATH report "$SCRATCH/gnu"
# perf runs `addr2line -e FILE -i -f` from PATH
grep -qx -- '-e .* -i -f' "$SCRATCH"/gnu/*.args || fail "perf did not run addr2line from PATH"

# Nothing is indexed beforehand: symdb indexes each file perf names on
# first sight, into this test's own database.
PATH=$SCRATCH/mine:$PATH report "$SCRATCH/mine"
python3 "$(dirname "$0")/addr2line_perf.py" "$SCRATCH"
