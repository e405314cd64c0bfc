#!/usr/bin/env python3
"""Benchmark: how index build time, its memory and lookup time grow with the .sym file's size.

Synthetic files of about 10 MB, 100 MB and 1 GB (bench/gen_sym.py, realistic record mix) are
written once into bench/data/scaling/. For each size, in fresh processes: the cold index build
(empty index cache) with its wall time and peak RSS, median of --runs; then, in a warm process,
random lookups (symbolize, find_cfi, has_symbol_at) timed per lookup. Index time should grow
linearly with the size and lookups logarithmically (i.e. barely). Not a test.

    .venv/bin/python bench/bench_scaling.py [--sizes 10M,100M,1G] [--runs 3] [--lookups 2000]
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

from gen_sym import function_end, parse_size, write  # noqa: E402
from measure import measure  # noqa: E402

# numpy and our modules are imported before the clock starts: their fixed cost (about 0.1 s) would
# otherwise hide how the build itself grows with the file.
BUILD_CHILD = """
import json, sys, time
import numpy
from inspector.core.symbols import IndexCache, SymbolFile
import inspector.core.symbols.index_build
t0 = time.perf_counter()
sf = SymbolFile.open(sys.argv[1], cache=IndexCache(sys.argv[2]))
print(json.dumps({"open": time.perf_counter() - t0, "source": sf.index_source,
                  "functions": sf.counts.functions, "cfi": sf.counts.cfi_blocks}))
"""

LOOKUP_CHILD = """
import json, random, sys, time
from inspector.core.symbols import IndexCache, SymbolFile
sf = SymbolFile.open(sys.argv[1], cache=IndexCache(sys.argv[2]))
rng = random.Random(7)
top = int(sys.argv[4], 16)
addresses = [rng.randrange(0x1000, top) for _ in range(int(sys.argv[3]))]
out = {"source": sf.index_source}
for name in ("symbolize", "find_cfi", "has_symbol_at"):
    lookup = getattr(sf, name)
    for a in addresses[:50]:
        lookup(a)  # first touches of the cache pages are not what we measure
    t = time.perf_counter()
    for a in addresses:
        lookup(a)
    out[name] = (time.perf_counter() - t) / len(addresses)
print(json.dumps(out))
"""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10M,100M,1G")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lookups", type=int, default=2000)
    parser.add_argument("--data", type=Path, default=BENCH / "data" / "scaling")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    args.data.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "inspector")], check=True)

    rows = []
    for label in args.sizes.split(","):
        path = args.data / f"synthetic-{label}.sym"
        top = function_end(path) if path.exists() else None
        if top is None:  # not generated yet, or before gen_sym recorded the end (or interrupted)
            print(f"writing {path} ...", file=sys.stderr)
            write(path, parse_size(label))
            top = function_end(path)
            assert top is not None
        size = path.stat().st_size
        walls, rss = [], []
        for _ in range(args.runs):
            cache = Path(tempfile.mkdtemp(prefix="bench-scaling-"))
            try:
                result = measure([sys.executable, "-c", BUILD_CHILD, str(path), str(cache)], env=env)
                info = json.loads(result.stdout)
                assert info["source"] != "cache", info
                walls.append(info["open"])
                rss.append(result.peak_rss)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        cache = Path(tempfile.mkdtemp(prefix="bench-scaling-"))
        try:
            measure([sys.executable, "-c", BUILD_CHILD, str(path), str(cache)], env=env)
            result = measure(
                [sys.executable, "-c", LOOKUP_CHILD, str(path), str(cache), str(args.lookups), f"{top:x}"],
                env=env,
            )
            lookups = json.loads(result.stdout)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        build = statistics.median(walls)
        rows.append(
            {
                "size": label,
                "bytes": size,
                "functions": info["functions"],
                "build_s": build,
                "build_s_per_100MB": build / size * 100e6,
                "build_peak_rss_mib": statistics.median(rss) / 2**20,
                "symbolize_us": lookups["symbolize"] * 1e6,
                "find_cfi_us": lookups["find_cfi"] * 1e6,
                "has_symbol_at_us": lookups["has_symbol_at"] * 1e6,
            }
        )
    print(
        f"{'file':>6} {'bytes':>14} {'FUNCs':>10} {'index cold':>11} {'per 100 MB':>11} {'peak RSS':>10}"
        f" {'symbolize':>10} {'find_cfi':>9} {'has_sym':>8}"
    )
    for r in rows:
        print(
            f"{r['size']:>6} {r['bytes']:>14,} {r['functions']:>10,} {r['build_s']:>10.2f}s"
            f" {r['build_s_per_100MB']:>10.2f}s {r['build_peak_rss_mib']:>7.0f} MiB"
            f" {r['symbolize_us']:>8.1f}µs {r['find_cfi_us']:>7.1f}µs {r['has_symbol_at_us']:>6.1f}µs"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
