#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""oracle_distinct.py IN ORACLE_CMD...: the oracle's answer to every line of
IN, in IN's order, on stdout, with the oracle asked once per distinct line.

query_batches.sh's inputs repeat a few hundred hot addresses hundreds of
thousands of times (that is what they test in symdb), and llvm-symbolizer-14
symbolizes every repeat again: its runs were most of that test's time.  With
one --obj, its answer to a line depends on that line alone, so the distinct
lines are sent once each, each followed by a marker line that no address
answers with (a line it cannot parse, which it echoes: in JSON, one error
object), the output is cut at the markers' answers and the answers are laid
out again in IN's order: the bytes a run over IN prints on stdout.  When
anything does not add up (the marker's answer is not one line, or the
output does not cut into one answer per distinct line), or when IN repeats
few lines, the oracle is run over the whole of IN instead.  The oracle's
stderr and exit status are not kept (the callers ignore them).
"""
import subprocess
import sys

MARKER = b"symdb-oracle-distinct-marker"


def run(cmd, data):
    return subprocess.run(cmd, input=data, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL).stdout


def distinct(cmd, data):
    """The oracle's output for DATA assembled from one answer per distinct
    line, or None when its output cannot be cut per line."""
    if not data.endswith(b"\n"):
        return None
    lines = data[:-1].split(b"\n")
    mark = run(cmd, MARKER + b"\n")
    if mark.count(b"\n") != 1 or not mark.endswith(b"\n"):
        return None
    uniq = list(dict.fromkeys(lines))
    if 2 * len(uniq) > len(lines):  # little repeated: one run is cheaper
        return None
    out = run(cmd, b"".join(u + b"\n" + MARKER + b"\n" for u in uniq))
    if out and not out.endswith(b"\n"):
        return None
    answers, cur = [], []
    for line in out[:-1].split(b"\n") if out else []:
        line += b"\n"
        if line == mark:
            answers.append(b"".join(cur))
            cur = []
        else:
            cur.append(line)
    if cur or len(answers) != len(uniq):
        return None
    answer = dict(zip(uniq, answers))
    return b"".join(answer[line] for line in lines)


def main():
    src, cmd = sys.argv[1], sys.argv[2:]
    with open(src, "rb") as f:
        data = f.read()
    out = distinct(cmd, data)
    if out is None:
        out = run(cmd, data)
    sys.stdout.buffer.write(out)


if __name__ == "__main__":
    main()
