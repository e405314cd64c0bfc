#!/usr/bin/env python3
"""Benchmark: what one `stackwalk` process costs, the way scripts and crash servers run it.

Each row is a fresh process, and the rows take turns inside every round (so a busy moment of a
shared machine hits all of them alike); medians of --runs rounds:

- bare interpreter: `python -c pass`;
- engine import: `python -c "from inspector.core.process import process; from
  inspector.core.report.json_report import render_json"`, reported minus the bare interpreter;
- our `python -m inspector stackwalk --json DUMP SYMBOLS` on a small real crash with symbols
  (default: the bundled sample, resources/examples/sample.dmp, a 13 KB Crashpad minidump of a
  Linux amd64 crash, with its two .sym files; tests/test_startup_cost.py counts the modules this
  same run imports), its symbol index cache warm;
- the reference, `minidump-stackwalk --json DUMP SYMBOLS` (rust-minidump 0.25.0).

Bytecode: an installed package has its `.pyc` files, so by default the script compiles ours first
(`compileall`) and every child reads them — even with PYTHONDONTWRITEBYTECODE set, which only stops
*writing* them. `--no-bytecode` measures the other case (a source checkout with
PYTHONDONTWRITEBYTECODE set): the children get an empty PYTHONPYCACHEPREFIX, so each one compiles
every module it imports from source. Not a test.

    .venv/bin/python bench/bench_startup.py [--runs 11] [--no-bytecode] [--reference PATH]

Goals (issue 18): the process ≤ 5× the reference; the engine import ≤ 25 ms over bare Python.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from measure import measure  # noqa: E402

EXAMPLES = REPO / "resources" / "examples"
REFERENCE = BENCH / "data" / "peers" / "minidump-stackwalk"
# what a walk and its JSON need: the packages import their names on first use (inspector.core.lazy),
# so `import inspector.core.process` alone would load almost nothing
ENGINE = (
    "from inspector.core.process import process; from inspector.core.report.json_report import render_json"
)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--dump", type=Path, default=EXAMPLES / "sample.dmp")
    parser.add_argument("--symbols", type=Path, default=EXAMPLES / "symbols")
    parser.add_argument(
        "--reference", type=Path, default=Path(os.environ.get("MINIDUMP_STACKWALK", REFERENCE))
    )
    parser.add_argument("--no-bytecode", action="store_true", help="children compile our modules from source")
    parser.add_argument(
        "--summary", type=Path, help="also write the medians (seconds) here as JSON (run_all.py)"
    )
    args = parser.parse_args(argv)
    for needed in (args.dump, args.symbols, args.reference):
        if not needed.exists():
            print(f"missing {needed} (run `make bench`, or pass --dump/--symbols/--reference)")
            return 2

    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        env["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")  # the default index cache, kept apart
        if args.no_bytecode:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "no-pyc")  # stays empty: nothing is written
            bytecode = "compiled from source in every process"
        else:
            compileall.compile_dir(REPO / "inspector", quiet=1)
            bytecode = "read from .pyc (compiled once, as an installed package)"
        py = sys.executable
        rows: dict[str, list[str]] = {
            "bare python -c pass": [py, "-c", "pass"],
            "engine import": [py, "-c", ENGINE],
            "our stackwalk --json": [
                py,
                "-m",
                "inspector",
                "stackwalk",
                "--json",
                str(args.dump),
                str(args.symbols),
            ],
            "reference minidump-stackwalk --json": [
                str(args.reference),
                "--json",
                str(args.dump),
                str(args.symbols),
            ],
        }
        walls: dict[str, list[float]] = {name: [] for name in rows}
        rss: dict[str, list[int]] = {name: [] for name in rows}
        cpu: dict[str, list[float]] = {name: [] for name in rows}
        measure(rows["our stackwalk --json"], env=env, cwd=REPO)  # fills the index cache
        for _ in range(args.runs):
            for name, command in rows.items():
                m = measure(command, env=env, cwd=REPO)
                walls[name].append(m.wall)
                rss[name].append(m.peak_rss)
                cpu[name].append(m.cpu)

    med = {name: statistics.median(values) for name, values in walls.items()}
    ref = med["reference minidump-stackwalk --json"]
    bare = med["bare python -c pass"]
    print(f"dump: {args.dump} ({args.dump.stat().st_size:,} bytes), symbols: {args.symbols}")
    print(f"our bytecode: {bytecode}; median of {args.runs} interleaved rounds")
    cpu_ref = statistics.median(cpu["reference minidump-stackwalk --json"])
    print(f"{'measurement':<38} {'wall':>9} {'/ ref':>7} {'CPU':>9} {'/ ref':>7} {'peak RSS':>9}")
    for name in rows:
        used = statistics.median(cpu[name])
        print(
            f"{name:<38} {med[name] * 1000:7.1f}ms {med[name] / ref:6.1f}x {used * 1000:7.1f}ms "
            f"{used / cpu_ref:6.1f}x {statistics.median(rss[name]) / 2**20:6.0f}MiB"
        )
    engine = (med["engine import"] - bare) * 1000
    print(f"{'engine import minus bare python':<38} {engine:7.1f}ms   (goal ≤ 25 ms)")
    print(f"{'our stackwalk minus bare python':<38} {(med['our stackwalk --json'] - bare) * 1000:7.1f}ms")
    print(f"our stackwalk / reference: {med['our stackwalk --json'] / ref:.1f}x (goal ≤ 5x)")
    if args.summary:
        args.summary.write_text(json.dumps({"wall": med, "runs": args.runs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
