#!/usr/bin/env python3
"""Benchmark: batch triage of many dumps with 2 workers against minidump-stackwalk under `xargs -P 2`.

The batch is `--copies` copies (hard links) of every minidump of the public corpus (72 of
them: every `.dmp` that is a minidump by content, the three that rust-minidump refuses
included), in `bench/data/triage/copies-N/`. Both sides get every corpus symbol store.

* reference: `find DIR -type f -print0 | xargs -0 -P 2 -n 1 minidump-stackwalk --json DUMP
  STORES... > /dev/null`, one process per dump (it has no batch mode);
* ours: `python -m inspector triage --workers 2 --json OUT --symbols STORE ... DIR`, the whole
  command: start-up, finding the dumps by content, walking, signatures, grouping, the JSON;
  cold (an empty symbols cache folder) and warm (the same folder again).

`--runs` runs of each (alternating, so that a busy moment of the machine hits both; medians,
and the best run of each, the one other jobs disturbed least),
as whole processes: wall, CPU time (user + system of every process of the run: what a busy
machine changes least) and the peak RSS of the largest process, from
`getrusage(RUSAGE_CHILDREN)` in a wrapper. Then the peak RSS of each of our worker
processes, at `--copies` and at each `--scale-copies` (720, 2,160 and 7,200 dumps by default): a
child runs `run_batch` and reports `RUSAGE_CHILDREN` (its only children are the workers)
and its own peak. Goal: ours ≤ 1.5× the reference's wall, worker peak flat as the batch
grows. Not a test.

    .venv/bin/python bench/bench_triage.py [--copies 10] [--scale-copies 30,100] [--runs 3] [--reference PATH]
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
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(REPO))

from measure import Measurement, measure  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus"
REFERENCE = BENCH / "data" / "peers" / "minidump-stackwalk"
DATA = BENCH / "data" / "triage"
STORES = (
    "breakpad/symbols",
    "lldb/symbols",
    "rust-minidump/symbols",
    "symbolic/symbols",
    "symbolic/py/symbols",
    "tast/symbols",
)

WORKER_PEAKS_CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
from inspector.core.triage import CrashSet, TriageOptions, find_dumps, run_batch
folder, cache, workers, stores = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
found = list(find_dumps([folder]))
crashes = CrashSet(len(found))
options = TriageOptions.with_cache_root(stores, cache_root=cache)
for index, crash in run_batch(found, options, workers=workers):
    crashes.add(index, crash)
wall = time.perf_counter() - t0
print(json.dumps({
    "dumps": crashes.done,
    "groups": len(crashes.groups()),
    "wall": wall,
    "worker_peak": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
    "parent_peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
}))
"""


def corpus_minidumps() -> list[Path]:
    from inspector.core.triage import find_dumps

    return sorted(Path(f.path) for f in find_dumps([CORPUS]) if f.kind == "minidump")


def make_batch(dumps: list[Path], copies: int) -> Path:
    """`copies` hard links of every dump (copies where links are impossible), made once."""
    folder = DATA / f"copies-{copies}"
    stamp = folder / ".complete"
    if stamp.is_file() and stamp.read_text() == str(len(dumps)):
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    for k in range(copies):
        target = folder / f"c{k:04}"
        target.mkdir(parents=True)
        for dump in dumps:
            name = target / str(dump.relative_to(CORPUS)).replace("/", "__")
            try:
                os.link(dump, name)
            except OSError:
                shutil.copyfile(dump, name)
    stamp.write_text(str(len(dumps)))
    return folder


def mib(value: int) -> str:
    return f"{value / 2**20:.0f} MiB"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument(
        "--scale-copies",
        default="30,100",
        help="copies for the per-worker memory runs besides --copies (comma-separated; empty: none)",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3, help="runs of each side, alternating; medians")
    parser.add_argument(
        "--reference", type=Path, default=Path(os.environ.get("MINIDUMP_STACKWALK", REFERENCE))
    )
    args = parser.parse_args(argv)
    if not (CORPUS / "CASES.tsv").is_file():
        print(f"no corpus at {CORPUS}: nothing to measure")
        return 1
    if not args.reference.is_file():
        print(f"no reference stackwalker at {args.reference}: ../shared/tools/install-peers bench/data/peers")
        return 1
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "inspector")], check=True)
    dumps = corpus_minidumps()
    folder = make_batch(dumps, args.copies)
    count = len(dumps) * args.copies
    stores = [str(CORPUS / store) for store in STORES]
    workers = str(args.workers)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{len(dumps)} corpus minidumps x {args.copies} = {count} dumps in {folder}; load average {load}")

    # rust-minidump refuses three corpus dumps (exit 1): xargs then exits 123, which is expected
    xargs = (
        f"find {folder} -type f -name '*.dmp' -print0 | xargs -0 -P {workers} -n 1 sh -c "
        f"'exec {args.reference} --json \"$0\" {' '.join(stores)}' > /dev/null 2>&1; exit 0"
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "triage.json"

        def ours(processes: str, cache: str) -> list[str]:
            command = [sys.executable, "-m", "inspector", "triage", "--workers", processes]
            command += ["--symbols-cache", cache, "--json", str(out)]
            for store in stores:
                command += ["--symbols", store]
            return [*command, str(folder)]

        runs: dict[str, list[Measurement]] = {"reference": [], "cold": [], "warm": [], "one": []}
        for run in range(args.runs):
            runs["reference"].append(measure(["sh", "-c", xargs]))
            runs["cold"].append(measure(ours(workers, f"{tmp}/cold-{run}")))
            runs["warm"].append(measure(ours(workers, tmp)))
            runs["one"].append(measure(ours("1", tmp)))
        document = json.loads(out.read_text())
        names = {
            "reference": f"reference, xargs -P {workers} minidump-stackwalk",
            "cold": f"ours, triage --workers {workers}, cold cache",
            "warm": f"ours, triage --workers {workers}, warm cache",
            "one": "ours, triage --workers 1 (in process), warm",
        }
        reference = statistics.median(m.wall for m in runs["reference"])
        reference_cpu = statistics.median(m.cpu for m in runs["reference"])
        reference_best = min(m.wall for m in runs["reference"])
        title = f"median of {args.runs} runs"
        print(
            f"\n{title:44} {'wall':>9} {'/ ref':>7} {'best':>8} {'/ ref':>7} {'CPU':>8} {'/ ref':>7} "
            f"{'peak RSS':>10}  walls"
        )
        for key, name in names.items():
            wall = statistics.median(m.wall for m in runs[key])
            best = min(m.wall for m in runs[key])  # the run least disturbed by other jobs
            cpu = statistics.median(m.cpu for m in runs[key])
            rss = statistics.median(m.peak_rss for m in runs[key])
            each = " ".join(f"{m.wall:.2f}" for m in runs[key])
            print(
                f"{name:44} {wall:8.2f}s {wall / reference:6.2f}x {best:7.2f}s {best / reference_best:6.2f}x "
                f"{cpu:7.2f}s {cpu / reference_cpu:6.2f}x {mib(int(rss)):>10}  {each}"
            )
        crashes = document["crashes"]
        unreadable = sum(1 for c in crashes if c["signature"].startswith("unreadable dump"))
        warm = min(m.wall for m in runs["warm"]) / reference_best
        print(
            f"\n{len(crashes)} dumps, {len(document['groups'])} signatures, {unreadable} unreadable "
            f"(goal: ours warm <= 1.5x the reference; best runs: {warm:.2f}x)"
        )
        ok = len(crashes) == count

        print(f"\nper-worker peak RSS ({args.workers} workers, warm cache):")
        scale = [int(c) for c in args.scale_copies.split(",") if c.strip()]
        for copies in (args.copies, *scale):
            batch = make_batch(dumps, copies)
            child = subprocess.run(
                [sys.executable, "-c", WORKER_PEAKS_CHILD, str(batch), tmp, workers, *stores],
                capture_output=True,
                text=True,
                check=True,
            )
            peaks = json.loads(child.stdout.splitlines()[-1])
            print(
                f"  {peaks['dumps']:6} dumps: worker peak {mib(peaks['worker_peak'])}, parent peak "
                f"{mib(peaks['parent_peak'])}, {peaks['wall']:.1f} s, {peaks['groups']} signatures"
            )
            ok = ok and peaks["dumps"] == len(dumps) * copies
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
