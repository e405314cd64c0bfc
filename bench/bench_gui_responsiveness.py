#!/usr/bin/env python3
"""Benchmark: does the GUI stay responsive while it walks the torch-autograd crash?

Each run is a fresh process with the real main window (offscreen, 1440x900) that opens
`../shared/perf/torch-autograd/torch_autograd.dmp` with the symbol paths
`../shared/perf/torch-autograd/symbols` and `bench/data/perf-symbols` (the two big torch
`.sym` files, see that case's README). A `QTimer` ticks every 5 ms on the main thread;
the longest gap between two ticks, minus the 5 ms period, is the longest time the main
thread was blocked. "busiest CPU" is the most CPU time the main thread itself used between two
ticks (`time.thread_time`): the part of a stall that is our own work on the GUI thread, as
opposed to waiting for the GIL or for a core (on a loaded 2-core machine the stall is often
twice that). Also recorded: the time from `open_dump` until the first frame is in
the Frames pane, until the walk finished, and the slowest single `Session.apply` (one
batch of events applied on the main thread) and plot/memory redraws.

"cold": an empty symbol index cache directory per run; "warm": a cache written by an
earlier, untimed run. Median of --runs runs per row; the goal (issue 18) is a median longest
stall of at most 30 ms with the warm cache.

Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CASE = REPO.parent / "shared" / "perf" / "torch-autograd"
DUMP = CASE / "torch_autograd.dmp"
#: the two big torch .sym files: `make bench` regenerates them there (or set BENCH_PERF_SYMBOLS)
PERF_SYMBOLS = Path(os.environ.get("BENCH_PERF_SYMBOLS", BENCH / "data" / "perf-symbols"))
SYMBOLS = [CASE / "symbols", PERF_SYMBOLS]

CHILD = r"""
import json, os, sys, time
from pathlib import Path
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
import pyqtgraph
from inspector.gui.main_window import MainWindow
from inspector.gui.session import Session
from inspector.gui.settings import Settings

dump, cache, settings_file, profile = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
symbols = [Path(p) for p in sys.argv[5:]]
app = QApplication([])
pyqtgraph.setConfigOptions(antialias=True)
settings = Settings(QSettings(settings_file, QSettings.Format.IniFormat))
session = Session(cache_dir=Path(cache))
window = MainWindow(session, settings, session_symbol_paths=symbols, interactive=False)
session.set_symbol_paths(window.effective_symbol_paths(), reanalyze=False)
window.resize(1440, 900)
window.show()

slowest = {"apply": 0.0, "plot": 0.0, "memory": 0.0}
def timed(name, function):
    def wrapper(*args):
        start = time.perf_counter()
        try:
            return function(*args)
        finally:
            slowest[name] = max(slowest[name], time.perf_counter() - start)
    return wrapper
session.apply = timed("apply", session.apply)

PERIOD = 0.005
ticks = []
cpu = []  # the main thread's CPU time at each tick
heartbeat = QTimer()
heartbeat.setInterval(5)
heartbeat.timeout.connect(lambda: (ticks.append(time.perf_counter()), cpu.append(time.thread_time())))
result = {}
profiler = None
if profile:
    import cProfile
    profiler = cProfile.Profile()

def first_frame(*_):
    if "first_frame" not in result:
        result["first_frame"] = time.perf_counter() - t0
window.frame_pane.model.rowsInserted.connect(first_frame)
window.frame_pane.model.modelReset.connect(lambda: window.frame_pane.model.rowCount() and first_frame())

def finished():
    result["finished"] = time.perf_counter() - t0
    QTimer.singleShot(300, stop)
def stop():
    heartbeat.stop()
    if profiler is not None:
        profiler.disable()
        import pstats, io
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        result["profile"] = out.getvalue()
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    result["max_stall"] = max(0.0, max(gaps) - PERIOD) if gaps else None
    # what the main thread itself computed between two ticks, at most: the longest stall less the
    # time it waited (for the GIL, for a CPU); a figure that a loaded machine moves much less
    result["max_busy_cpu"] = max((b - a for a, b in zip(cpu, cpu[1:])), default=0.0)
    result["stalls_over_50ms"] = sum(1 for g in gaps if g - PERIOD > 0.05)
    result["ticks"] = len(ticks)
    result["slowest_apply"] = slowest["apply"]
    threads = range(session.document.thread_count)
    result["frames"] = sum(len(session.document.frames(i)) for i in threads)
    app.exit(0)
session.analysis_finished.connect(finished)
session.analysis_failed.connect(lambda f: (result.update(error=f.message), app.exit(1)))

def start():
    global t0
    heartbeat.start()
    if profiler is not None:
        profiler.enable()
    t0 = time.perf_counter()
    window.open_dump(dump)
QTimer.singleShot(200, start)  # let the window settle first
app.exec()
print("RESULT " + json.dumps(result))
"""


def run_child(cache: Path, *, profile: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            sys.executable,
            "-c",
            CHILD,
            str(DUMP),
            str(cache),
            str(Path(tmp) / "s.ini"),
            "1" if profile else "0",
        ]
        args += [str(p) for p in SYMBOLS]
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        done = subprocess.run(
            args, capture_output=True, text=True, cwd=REPO, env=env, timeout=600, check=False
        )
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            result: dict[str, Any] = json.loads(line[len("RESULT ") :])
            return result
    raise RuntimeError(f"the child failed:\n{done.stdout}\n{done.stderr}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--quick", action="store_true", help="one run of each (make bench BENCH_ARGS=--quick)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="print a profile of the main thread (one warm run)"
    )
    parser.add_argument(
        "--summary", type=Path, help="also write the medians (seconds) here as JSON (run_all.py)"
    )
    options = parser.parse_args()
    if options.quick:
        options.runs = 1
    missing = [p for p in (DUMP, *SYMBOLS) if not p.exists()]
    if missing:
        print(f"missing inputs: {', '.join(map(str, missing))} (see {CASE / 'README.md'})", file=sys.stderr)
        return 1
    compileall.compile_dir(REPO / "inspector", quiet=1)
    rows: dict[str, list[dict[str, Any]]] = {"cold": [], "warm": []}
    with tempfile.TemporaryDirectory() as warm_dir:
        warm = Path(warm_dir)
        run_child(warm)  # writes the warm cache; not timed
        for _ in range(options.runs):
            cold = Path(tempfile.mkdtemp(prefix="gui-bench-cold-"))
            try:
                rows["cold"].append(run_child(cold))
            finally:
                shutil.rmtree(cold, ignore_errors=True)
            rows["warm"].append(run_child(warm))
        if options.profile:
            print(run_child(warm, profile=True).get("profile", ""))
    frames = rows["warm"][0]["frames"]
    print(f"GUI responsiveness, torch-autograd ({frames} frames), median of {options.runs} runs")
    header = (
        "cache",
        "longest stall",
        "stalls>50ms",
        "first frame",
        "walk done",
        "slowest apply",
        "busiest CPU",
    )
    print(
        f"{header[0]:<6} "
        + " ".join(f"{h:>{w}}" for h, w in zip(header[1:], (14, 12, 12, 10, 14, 12), strict=True))
    )
    for name, results in rows.items():
        stall = statistics.median([r["max_stall"] * 1000 for r in results])
        over = statistics.median([r["stalls_over_50ms"] for r in results])
        first = statistics.median([r["first_frame"] * 1000 for r in results])
        done = statistics.median([r["finished"] * 1000 for r in results])
        apply = statistics.median([r["slowest_apply"] * 1000 for r in results])
        busy = statistics.median([r["max_busy_cpu"] * 1000 for r in results])
        print(
            f"{name:<6} {stall:>11.1f} ms {over:>12.0f} {first:>9.0f} ms {done:>7.0f} ms {apply:>11.1f} ms"
            f" {busy:>9.1f} ms"
        )
    worst = max(r["max_stall"] for results in rows.values() for r in results) * 1000
    print(f"worst single stall over all runs: {worst:.1f} ms (goal: warm median <= 30 ms)")
    if options.summary:
        stalls = {
            name: statistics.median([r["max_stall"] for r in results]) for name, results in rows.items()
        }
        options.summary.write_text(json.dumps({"max_stall": stalls, "worst": worst / 1000}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
