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

Benchmarks are not tests; run them on a quiet machine. Inputs beside the project
(../shared/...) or in bench/data/ (git-ignored). `--quick` runs fewer repetitions.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

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
    failures += run([python, str(gui)] + (["--quick"] if args.quick else [])) != 0

    section("5. symbol servers: lazy against prefetched downloads (local HTTP server)")
    failures += run([python, str(BENCH / "bench_symbol_server.py")]) != 0

    section("6. damaged dumps: what rust-minidump and we still report")
    failures += run([python, str(BENCH / "damaged_vs_rust_minidump.py"), "--stackwalker", reference]) != 0

    section("7. batch triage: 720 dumps with 2 workers vs xargs -P 2 minidump-stackwalk")
    triage = [python, str(BENCH / "bench_triage.py"), "--reference", reference]
    if args.quick:
        triage += ["--runs", "1", "--scale-copies", ""]
    failures += run(triage) != 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
