#!/usr/bin/env python3
"""Benchmark: index the 235 MB libtorch_cpu.so.sym cold and warm, beside the reference stackwalker.

Every measurement runs in a fresh subprocess; wall time and peak RSS are those
of that whole process (interpreter start-up and imports included), median of
--runs runs. "cold" = empty index cache directory, "warm" = the cache written
by a previous run. Also times random lookups in a warm process, and (unless
--no-stackwalk) our whole `stackwalk` command on the torch case, cold and warm,
which is what the targets are about:

    cold stackwalk wall <= 1.0 x reference;  warm <= 0.25 x reference wall and peak RSS

Not a test: nothing here asserts a time. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from measure import measure  # noqa: E402

CASE = REPO.parent / "shared" / "perf" / "torch-autograd"
BIG = Path("libtorch_cpu.so") / "D96E06B7424F8627BD205CD2743C27220" / "libtorch_cpu.so.sym"

INDEX_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from inspector.core.symbols import IndexCache, SymbolFile
t1 = time.perf_counter()
sf = SymbolFile.open(sys.argv[1], cache=IndexCache(sys.argv[2]))
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "open": t2 - t1, "source": sf.index_source,
                  "numpy": "numpy" in sys.modules, "publics": sf.counts.publics,
                  "cfi": sf.counts.cfi_blocks}))
"""

LOOKUP_CHILD = """
import json, random, sys, time
from inspector.core.symbols import IndexCache, SymbolFile
sf = SymbolFile.open(sys.argv[1], cache=IndexCache(sys.argv[2]))
rng = random.Random(int(sys.argv[4]))
addresses = [rng.randrange(0x1000000, 0xC000000) for _ in range(int(sys.argv[3]))]
timings = {}
for name in ("symbolize", "find_cfi", "has_symbol_at"):
    lookup = getattr(sf, name)
    t = time.perf_counter()
    for a in addresses:
        lookup(a)
    timings[name] = (time.perf_counter() - t) / len(addresses)
print(json.dumps({"source": sf.index_source, **timings}))
"""


def median_runs(label: str, runs: int, make: Callable[[], list[str]], warmup: bool = False) -> dict[str, Any]:
    """Median wall/RSS of `runs` runs of make() -> command (a fresh command per run)."""
    walls, rsses, outs = [], [], []
    for i in range(runs + (1 if warmup else 0)):
        result = measure(make())
        if warmup and i == 0:
            continue
        walls.append(result.wall)
        rsses.append(result.peak_rss / 2**20)  # MiB
        outs.append(result.stdout)
    print(f"  {label}: walls {' '.join(f'{w:.3f}' for w in walls)} s", file=sys.stderr)
    return {"wall": statistics.median(walls), "rss": statistics.median(rsses), "out": outs[-1]}


def find_perf_symbols(explicit: Path | None) -> Path:
    candidates = [explicit] if explicit else []
    if os.environ.get("BENCH_PERF_SYMBOLS"):
        candidates.append(Path(os.environ["BENCH_PERF_SYMBOLS"]))
    candidates += [BENCH / "data" / "perf-symbols", CASE / "symbols"]
    for directory in candidates:
        if directory is not None and (directory / BIG).is_file():
            return directory
    raise SystemExit(
        f"libtorch_cpu.so.sym not found in {', '.join(str(c) for c in candidates if c)}.\n"
        f"Generate it: {CASE / 'make-symbols'} {BENCH / 'data' / 'perf-symbols'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--case", type=Path, default=CASE, help="the torch-autograd case (dump, small symbols)"
    )
    parser.add_argument("--perf-symbols", type=Path, help="directory with the generated torch .sym files")
    parser.add_argument(
        "--peers", type=Path, default=BENCH / "data" / "peers", help="install-peers directory"
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lookups", type=int, default=500)
    parser.add_argument("--no-reference", action="store_true", help="skip minidump-stackwalk")
    parser.add_argument("--no-stackwalk", action="store_true", help="skip our whole stackwalk")
    parser.add_argument(
        "--summary", type=Path, help="also write the medians (seconds) here as JSON (run_all.py)"
    )
    args = parser.parse_args()

    perf = find_perf_symbols(args.perf_symbols)
    sym = perf / BIG
    dump = args.case / "torch_autograd.dmp"
    symbol_dirs = [str(args.case / "symbols"), str(perf)] if perf != args.case / "symbols" else [str(perf)]
    scratch = Path(tempfile.mkdtemp(prefix="bench-symidx-"))
    python = [sys.executable]
    # an installed package has its .pyc files; PYTHONDONTWRITEBYTECODE would make every run compile
    subprocess.run([*python, "-m", "compileall", "-q", str(REPO / "inspector")], check=True)
    print(
        f"file: {sym} ({sym.stat().st_size / 1e6:.0f} MB); runs: {args.runs}; scratch: {scratch}",
        file=sys.stderr,
    )
    counter = iter(range(1_000_000))
    warm_cache = scratch / "warm"

    def fresh_cache() -> Path:
        return scratch / f"cold-{next(counter)}"

    rows: list[tuple[str, dict[str, Any]]] = []
    reference = None
    stackwalker = args.peers / "minidump-stackwalk"
    if not args.no_reference:
        if not stackwalker.is_file():
            raise SystemExit(
                f"no {stackwalker}: run ../shared/tools/install-peers {args.peers} (or --no-reference)"
            )
        reference = median_runs(
            "reference", args.runs, lambda: [str(stackwalker), "--json", str(dump), *symbol_dirs], warmup=True
        )
        rows.append(("reference minidump-stackwalk, whole run", reference))

    cold = median_runs(
        "index cold", args.runs, lambda: [*python, "-c", INDEX_CHILD, str(sym), str(fresh_cache())]
    )
    rows.append(("index libtorch_cpu.so.sym, cold (empty cache)", cold))
    measure([*python, "-c", INDEX_CHILD, str(sym), str(warm_cache)])
    warm = median_runs(
        "index warm", args.runs, lambda: [*python, "-c", INDEX_CHILD, str(sym), str(warm_cache)]
    )
    rows.append(("index libtorch_cpu.so.sym, warm (from cache)", warm))
    if not args.no_stackwalk:
        ours = [*python, "-m", "inspector", "stackwalk", "--json"]
        walk_cold = median_runs(
            "stackwalk cold",
            args.runs,
            lambda: [*ours, "--symbols-cache", str(fresh_cache()), str(dump), *symbol_dirs],
        )
        rows.append(("our stackwalk --json, whole run, cold", walk_cold))
        measure([*ours, "--symbols-cache", str(warm_cache), str(dump), *symbol_dirs])
        walk_warm = median_runs(
            "stackwalk warm",
            args.runs,
            lambda: [*ours, "--symbols-cache", str(warm_cache), str(dump), *symbol_dirs],
        )
        rows.append(("our stackwalk --json, whole run, warm", walk_warm))

    seed = str(random.randrange(1 << 30))
    lookups = json.loads(
        measure([*python, "-c", LOOKUP_CHILD, str(sym), str(warm_cache), str(args.lookups), seed]).stdout
    )
    cold_detail, warm_detail = json.loads(cold["out"]), json.loads(warm["out"])
    shutil.rmtree(scratch, ignore_errors=True)

    print()
    print(f"| measurement (median of {args.runs}) | wall | peak RSS | wall / ref | RSS / ref |")
    print("|---|---:|---:|---:|---:|")
    for label, row in rows:
        ratio_w = f"{row['wall'] / reference['wall']:.2f}x" if reference else "-"
        ratio_r = f"{row['rss'] / reference['rss']:.2f}x" if reference else "-"
        print(f"| {label} | {row['wall']:.3f} s | {row['rss']:.0f} MiB | {ratio_w} | {ratio_r} |")
    print()
    print(
        f"cold: import {cold_detail['import'] * 1e3:.0f} ms, open+index {cold_detail['open'] * 1e3:.0f} ms "
        f"(incl. numpy import), {cold_detail['publics']} PUBLIC / {cold_detail['cfi']} CFI INIT indexed"
    )
    print(
        f"warm: import {warm_detail['import'] * 1e3:.0f} ms, open {warm_detail['open'] * 1e3:.1f} ms "
        f"({warm_detail['source']}, numpy imported: {warm_detail['numpy']})"
    )
    each = ", ".join(
        f"{name} {lookups[name] * 1e6:.1f} us" for name in ("symbolize", "find_cfi", "has_symbol_at")
    )
    print(f"warm lookups ({args.lookups} random addresses, each): {each}")
    print(
        f"(this machine: {os.cpu_count()} CPUs; peak RSS via getrusage(RUSAGE_CHILDREN) of a wrapper per run)"
    )
    if args.summary:
        args.summary.write_text(json.dumps({label: row["wall"] for label, row in rows}, indent=1))


if __name__ == "__main__":
    main()
