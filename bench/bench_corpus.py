#!/usr/bin/env python3
"""Benchmark: the whole public corpus through the engine in ONE process vs the reference per case.

For every case of ../shared/corpus/CASES.tsv our child process runs `process()` and renders the
rust-minidump JSON, all cases in one interpreter (what a batch user or the GUI does), cold (an
empty index cache directory) and warm (the cache of a previous run). The reference,
`minidump-stackwalk --json`, runs once per case (it has no batch mode) and its wall times are
summed. Both sides are timed as whole processes (ours includes interpreter start-up); the
child's own clock (after start-up) is reported too, labelled "in-process". Also reported: our
CLI once per case (`python -m inspector stackwalk --json`), summed, which is what the fidelity
tool times. Every run must exit 0. Medians of --runs. Not a test.

Targets (issue "Performance"): one process ≤ 2× the reference's summed wall cold, ≤ 1× warm.

    .venv/bin/python bench/bench_corpus.py [--runs 3] [--reference PATH]

The reference defaults to $MINIDUMP_STACKWALK, else bench/data/peers/minidump-stackwalk (where
`make bench` installs it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from measure import measure  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus"
REFERENCE = BENCH / "data" / "peers" / "minidump-stackwalk"

ENGINE_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from inspector.core.process import ProcessOptions, process
from inspector.core.report.json_report import render_json
base, cache = sys.argv[1], sys.argv[2]
cases = json.loads(sys.argv[3])
frames = 0
for dump, symbols in cases:
    state = process(f"{base}/{dump}", ProcessOptions(symbol_paths=tuple(f"{base}/{s}" for s in symbols),
                                                     symbols_cache=cache))
    render_json(state)
    frames += sum(len(t.frames) for t in state.threads)
print(json.dumps({"wall": time.perf_counter() - t0, "frames": frames}))
"""


def load_cases(corpus: Path) -> list[tuple[str, list[str]]]:
    cases = []
    for line in (corpus / "CASES.tsv").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            _label, dump, symbols, _ref = line.split("\t")
            cases.append((dump, symbols.split()))
    return cases


def summed(commands: list[list[str]], cwd: Path, env: dict[str, str] | None = None) -> float:
    """Wall seconds of each command, summed; a command that fails stops the benchmark."""
    total = 0.0
    for command in commands:
        t = time.perf_counter()
        done = subprocess.run(
            command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False
        )
        total += time.perf_counter() - t
        if done.returncode != 0:
            # a failing run is usually a fast one: summing it would flatter the figure
            stderr = done.stderr.decode(errors="replace")[-2000:]
            raise SystemExit(f"{' '.join(command)} exited {done.returncode} (in {cwd}):\n{stderr}")
    return total


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument(
        "--reference", type=Path, default=Path(os.environ.get("MINIDUMP_STACKWALK", REFERENCE))
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if not (args.corpus / "CASES.tsv").is_file():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 1
    if not args.reference.is_file():
        print(
            f"no reference stackwalker at {args.reference}: run ../shared/tools/install-peers "
            f"{REFERENCE.parent} (or pass --reference / set MINIDUMP_STACKWALK)",
            file=sys.stderr,
        )
        return 1
    reference = str(args.reference.resolve())  # the cases run with the corpus as working directory
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "inspector")], check=True)
    cases = load_cases(args.corpus)
    payload = json.dumps(cases)

    cold, warm, rss_cold, rss_warm, ref, cli = [], [], [], [], [], []
    inner_cold, inner_warm = [], []
    for _ in range(args.runs):
        cache = Path(tempfile.mkdtemp(prefix="bench-corpus-"))
        try:
            child = [sys.executable, "-c", ENGINE_CHILD, str(args.corpus), str(cache), payload]
            first = measure(child, env=env)
            second = measure(child, env=env)
            # whole-process wall, like the reference's: interpreter start-up and imports included
            cold.append(first.wall)
            warm.append(second.wall)
            inner_cold.append(json.loads(first.stdout)["wall"])
            inner_warm.append(json.loads(second.stdout)["wall"])
            rss_cold.append(first.peak_rss)
            rss_warm.append(second.peak_rss)
            cli.append(
                summed(
                    [
                        [
                            sys.executable,
                            "-m",
                            "inspector",
                            "stackwalk",
                            "--json",
                            "--symbols-cache",
                            str(cache),
                            d,
                            *s,
                        ]
                        for d, s in cases
                    ],
                    args.corpus,
                    env,
                )
            )
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        ref.append(summed([[reference, "--json", d, *s] for d, s in cases], args.corpus))

    r = statistics.median(ref)
    rows = [
        ("reference minidump-stackwalk, summed over cases", r, None),
        ("ours, one process, cold cache", statistics.median(cold), statistics.median(rss_cold)),
        ("ours, one process, warm cache", statistics.median(warm), statistics.median(rss_warm)),
        ("  in-process clock (no interpreter start-up), cold", statistics.median(inner_cold), None),
        ("  in-process clock (no interpreter start-up), warm", statistics.median(inner_warm), None),
        ("ours, CLI once per case (warm), summed", statistics.median(cli), None),
    ]
    print(f"{len(cases)} cases, median of {args.runs}")
    print(f"{'measurement':<50} {'wall':>8} {'/ ref':>7} {'peak RSS':>10}")
    for name, wall, rss in rows:
        memory = "" if rss is None else f"{rss / 2**20:.0f} MiB"
        print(f"{name:<50} {wall:>7.3f}s {wall / r:>6.2f}x {memory:>10}")
    if args.json:
        args.json.write_text(json.dumps({name: wall for name, wall, _ in rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
