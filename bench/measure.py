"""Run a command in a fresh process and measure its wall time, CPU time and peak RSS (no dependencies)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# A tiny parent per measurement: RUSAGE_CHILDREN of *this* wrapper then holds only the child's
# peak RSS, not the maximum over every command the benchmark ran before.
_WRAPPER = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], capture_output=True)
wall = time.perf_counter() - t
sys.stderr.buffer.write(p.stderr)
sys.stdout.buffer.write(p.stdout)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
rss = usage.ru_maxrss * 1024
cpu = usage.ru_utime + usage.ru_stime
print("\\n@@measure " + json.dumps({"wall": wall, "rss": rss, "rc": p.returncode, "cpu": cpu}))
"""


@dataclass(frozen=True)
class Measurement:
    wall: float
    peak_rss: int
    returncode: int
    stdout: str
    stderr: str
    cpu: float = 0.0  # user + system seconds of the command and every process it waited for


def measure(command: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> Measurement:
    proc = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *command],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env if env is not None else dict(os.environ),
        check=False,
    )
    body, _, tail = proc.stdout.rpartition("\n@@measure ")
    info = json.loads(tail)
    if info["rc"] != 0:
        raise RuntimeError(f"{command[:3]}… exited {info['rc']}: {proc.stderr[-2000:]}")
    return Measurement(info["wall"], info["rss"], info["rc"], body, proc.stderr, info["cpu"])
