"""Symbol downloads: lazy (one file at a time, as the walk asks) against prefetching in parallel.

Serves our own crash fixtures' symbols from a local HTTP server (tests/symbols/server/http_server.py)
that waits `--delay` seconds before each answer, a stand-in for a distant symbol server, and walks
each fixture dump with an empty download cache, once with `prefetch=False, parallel=1` (what a lazy
symbolizer does by itself) and once with the defaults (prefetch, 4 at once). Prints wall time,
requests made, the most requests in progress at once, and whether the frames are the same.

    .venv/bin/python bench/bench_symbol_server.py [--delay 0.2]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from inspector.core.process import ProcessOptions, process  # noqa: E402
from inspector.core.report.json_report import render_json  # noqa: E402
from inspector.core.symbols import FetchPolicy, SymbolServer, SymbolServerOptions  # noqa: E402
from tests.symbols.server.http_server import SymbolHttpServer  # noqa: E402

DUMPS = [REPO / "resources/examples/sample.dmp", *sorted((REPO / "tests/fixtures/crashes").glob("*/*.dmp"))]


def walk(dump: Path, server: SymbolHttpServer, **kw: object) -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as cache:
        base = SymbolServerOptions(servers=(SymbolServer(server.url),), cache_dir=cache, fetch=FetchPolicy())
        options = ProcessOptions(use_symbols_cache=False, symbol_servers=dataclasses.replace(base, **kw))
        started = time.perf_counter()
        report = render_json(process(dump, options))
        return time.perf_counter() - started, report


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.2, help="seconds before each answer")
    args = parser.parse_args()
    server = SymbolHttpServer()
    server.behaviour.delay = args.delay
    print(f"{'dump':<22} {'mode':<9} {'seconds':>8} {'requests':>8} {'at once':>7}  same frames")
    differ = 0
    try:
        for dump in DUMPS:
            frames = None
            for mode, kw in (("lazy", {"prefetch": False, "parallel": 1}), ("prefetch", {})):
                server.reset()
                seconds, report = walk(dump, server, **kw)
                got = [t["frames"] for t in json.loads(report)["threads"]]
                frames = frames or got
                same = "yes" if got == frames else "NO"
                differ += got != frames
                print(
                    f"{dump.stem:<22} {mode:<9} {seconds:>8.2f} {len(server.requests):>8} "
                    f"{server.max_active:>7}  {same}"
                )
    finally:
        server.close()
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
