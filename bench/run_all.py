#!/usr/bin/env python3
"""Run every benchmark (`make bench`): each prints its own table with ratios to the reference.

0. start-up: one `stackwalk --json` process on a small real crash with symbols, and the engine
   import, beside the reference (bytecode compiled first, as an installed package has it).
1. torch-autograd: our whole stackwalk cold and warm vs minidump-stackwalk (wall, peak RSS),
   the 235 MB index cold/warm, warm lookups; then our JSON scored against the reference JSON
   (fidelity must be 100 %).
2. the public corpus in one process vs the reference's summed wall, cold and warm.
3. scaling of index build and lookups over synthetic 10 MB / 100 MB / 1 GB .sym files.
4. the GUI: longest main-thread stall and time to first frame on the torch case.
5. symbol servers: lazy against prefetched downloads from a local, slowed-down HTTP server
   (no network needed).
6. damaged dumps: what rust-minidump and we still report on each variant of the robustness
   generator (not a timing).
7. batch triage: 10 copies of every corpus minidump with 2 workers vs minidump-stackwalk under
   `xargs -P 2`, and our per-worker peak RSS at 720, 2,160 and 7,200 dumps.

At the end, issue 18's table: every row beside the reference of the same run, with its goal.

Benchmarks are not tests; run them on a quiet machine. Inputs beside the project
(../shared/...) or in bench/data/ (git-ignored). `--quick` runs fewer repetitions.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SHARED = REPO.parent / "shared"
TORCH = SHARED / "perf" / "torch-autograd"


def section(title: str) -> None:
    print(f"\n=== {title} ===", flush=True)


def run(command: list[str], **kwargs: object) -> int:
    return subprocess.run(command, check=False, **kwargs).returncode  # type: ignore[call-overload]


def torch_fidelity(perf_symbols: Path) -> int:
    """Our JSON on the torch case scored with the corpus' compare-stackwalk tool."""
    with tempfile.TemporaryDirectory() as tmp:
        ours = Path(tmp) / "ours.json"
        with ours.open("w") as out:
            code = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "inspector",
                    "stackwalk",
                    "--json",
                    str(TORCH / "torch_autograd.dmp"),
                    str(TORCH / "symbols"),
                    str(perf_symbols),
                ],
                stdout=out,
                check=False,
            ).returncode
        if code != 0:
            print(f"our stackwalk exited {code}")
            return code
        return run(
            [
                sys.executable,
                str(SHARED / "tools" / "compare-stackwalk"),
                str(ours),
                str(TORCH / "reference" / "torch_autograd.rust-minidump.json"),
            ]
        )


def _read(path: Path) -> dict[str, Any]:
    try:
        loaded: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return loaded


def issue18_table(summaries: Path) -> None:
    """Issue 18's six rows from the benchmarks' summaries (a row whose benchmark failed says so)."""
    startup = _read(summaries / "startup.json").get("wall", {})
    torch = _read(summaries / "torch.json")
    corpus = _read(summaries / "corpus.json")
    gui = _read(summaries / "gui.json").get("max_stall", {})
    rows: list[tuple[str, str, str, str, str, bool | None]] = []

    def ratio_row(label: str, ours: float | None, ref: float | None, goal: float, unit: str = "s") -> None:
        if ours is None or ref is None:
            rows.append((label, "-", "-", "-", f"≤ {goal}×", None))
            return
        scale, fmt = (1000.0, "{:.1f} ms") if unit == "ms" else (1.0, "{:.3f} s")
        ratio = ours / ref
        rows.append(
            (
                label,
                fmt.format(ours * scale),
                fmt.format(ref * scale),
                f"{ratio:.2f}×",
                f"≤ {goal}×",
                ratio <= goal,
            )
        )

    ref_startup = startup.get("reference minidump-stackwalk --json")
    ratio_row(
        "one `stackwalk --json` process, bundled sample",
        startup.get("our stackwalk --json"),
        ref_startup,
        5,
        unit="ms",
    )
    bare, engine = startup.get("bare python -c pass"), startup.get("engine import")
    if bare is not None and engine is not None:
        over = (engine - bare) * 1000
        rows.append(
            (
                f"engine import minus bare `python -c pass` ({bare * 1000:.1f} ms)",
                f"{over:.1f} ms",
                "—",
                "—",
                "≤ 25 ms",
                over <= 25,
            )
        )
    else:
        rows.append(("engine import minus bare python", "-", "-", "-", "≤ 25 ms", None))
    ref_torch = torch.get("reference minidump-stackwalk, whole run")
    ratio_row(
        "torch-autograd, warm index cache",
        torch.get("our stackwalk --json, whole run, warm"),
        ref_torch,
        0.15,
    )
    ratio_row(
        "torch-autograd, empty cache", torch.get("our stackwalk --json, whole run, cold"), ref_torch, 0.6
    )
    ratio_row(
        "public corpus in one process, warm",
        corpus.get("ours, one process, warm cache"),
        corpus.get("reference minidump-stackwalk, summed over cases"),
        0.8,
    )
    stall = gui.get("warm")
    rows.append(
        (
            "GUI: longest main-thread stall, torch, warm (median)",
            "-" if stall is None else f"{stall * 1000:.1f} ms",
            "—",
            "—",
            "≤ 30 ms",
            None if stall is None else stall * 1000 <= 30,
        )
    )
    print("| measure | ours | reference | ratio | goal | met |")
    print("| --- | ---: | ---: | ---: | ---: | :-: |")
    for label, ours, ref, ratio, goal, met in rows:
        mark = "no result" if met is None else ("yes" if met else "no")
        print(f"| {label} | {ours} | {ref} | {ratio} | {goal} | {mark} |")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer runs, no 1 GB file")
    parser.add_argument(
        "--peers", type=Path, default=BENCH / "data" / "peers", help="install-peers directory"
    )
    parser.add_argument(
        "--perf-symbols",
        type=Path,
        default=Path(os.environ.get("BENCH_PERF_SYMBOLS", BENCH / "data" / "perf-symbols")),
    )
    args = parser.parse_args(argv)
    runs = "2" if args.quick else "5"
    reference = str(args.peers / "minidump-stackwalk")
    failures = 0
    python = sys.executable
    summaries = Path(tempfile.mkdtemp(prefix="bench-summaries-"))

    section("0. start-up: one stackwalk --json process on a small real crash, and the engine import")
    failures += (
        run(
            [
                python,
                str(BENCH / "bench_startup.py"),
                "--runs",
                "5" if args.quick else "15",
                "--reference",
                reference,
                "--summary",
                str(summaries / "startup.json"),
            ]
        )
        != 0
    )

    section("1. torch-autograd: whole stackwalk and the 235 MB index, vs the reference")
    failures += (
        run(
            [
                python,
                str(BENCH / "bench_symbol_index.py"),
                "--runs",
                runs,
                "--perf-symbols",
                str(args.perf_symbols),
                "--peers",
                str(args.peers),
                "--summary",
                str(summaries / "torch.json"),
            ]
        )
        != 0
    )
    section("1b. torch-autograd: our frames vs the reference's (must be 100 %)")
    failures += torch_fidelity(args.perf_symbols) != 0

    section("2. public corpus in one process vs the reference summed over cases")
    failures += (
        run(
            [
                python,
                str(BENCH / "bench_corpus.py"),
                "--runs",
                "2" if args.quick else "3",
                "--reference",
                reference,
                "--json",
                str(summaries / "corpus.json"),
            ]
        )
        != 0
    )

    section("3. scaling: index build and lookups over synthetic .sym files")
    failures += (
        run(
            [
                python,
                str(BENCH / "bench_scaling.py"),
                "--sizes",
                "10M,100M" if args.quick else "10M,100M,1G",
                "--runs",
                "1" if args.quick else "3",
            ]
        )
        != 0
    )

    section("4. GUI: main-thread stalls and time to first frame on the torch case")
    gui = BENCH / "bench_gui_responsiveness.py"
    gui_summary = ["--summary", str(summaries / "gui.json")]
    failures += run([python, str(gui), *gui_summary] + (["--quick"] if args.quick else [])) != 0

    section("5. symbol servers: lazy against prefetched downloads (local HTTP server)")
    failures += run([python, str(BENCH / "bench_symbol_server.py")]) != 0

    section("6. damaged dumps: what rust-minidump and we still report")
    failures += run([python, str(BENCH / "damaged_vs_rust_minidump.py"), "--stackwalker", reference]) != 0

    section("7. batch triage: 720 dumps with 2 workers vs xargs -P 2 minidump-stackwalk")
    triage = [python, str(BENCH / "bench_triage.py"), "--reference", reference]
    if args.quick:
        triage += ["--runs", "1", "--scale-copies", ""]
    failures += run(triage) != 0

    section("Issue 18: start-up and throughput, every row beside the reference of this run")
    issue18_table(summaries)
    shutil.rmtree(summaries, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
