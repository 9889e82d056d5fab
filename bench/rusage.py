#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# rusage.py OUT -- CMD...: run CMD (stdin and stdout inherited) and write
# "WALL USER SYS MAXRSS_KB" to OUT, CPU times from the child's rusage in
# microseconds (wait4), not /usr/bin/time's two decimals.  Exits with CMD's
# status.
import os
import sys
import time

out, cmd = sys.argv[1], sys.argv[3:]
assert sys.argv[2] == "--", "usage: rusage.py OUT -- CMD..."
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
with open(out, "w") as f:
    f.write(f"{wall:.6f} {ru.ru_utime:.6f} {ru.ru_stime:.6f} {ru.ru_maxrss}\n")
sys.exit(os.waitstatus_to_exitcode(status))
