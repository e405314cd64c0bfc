#!/usr/bin/env python3
"""Compare: what rust-minidump and we still report for each damaged dump of the robustness generator.

For every seeded variant of `tests/robustness/damage.py` (about 1,940), runs the reference
`minidump-stackwalk --json DUMP SYMBOLS...` and our library (as `stackwalk --json` does) and
counts, for each: a report at all, frames for the crashing thread, the module list; and how
often one gives something the other does not. Also counts the reference's panics.

    .venv/bin/python bench/damaged_vs_rust_minidump.py [--stackwalker PATH]

Not a test. It needs the reference binary: $MINIDUMP_STACKWALK, else
bench/data/peers/minidump-stackwalk (`make bench`, or `../shared/tools/install-peers bench/data/peers`).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))
REFERENCE = BENCH / "data" / "peers" / "minidump-stackwalk"

from tests.robustness.damage import dump_seeds, dump_variants  # noqa: E402
from tests.robustness.harness import run_library  # noqa: E402


def reference(
    stackwalker: Path, dump: Path, symbols: tuple[Path, ...]
) -> tuple[dict[str, object] | None, bool]:
    """(its JSON document or None, whether it panicked)."""
    try:
        done = subprocess.run(
            [str(stackwalker), "--json", str(dump), *map(str, symbols)],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, False
    panicked = "panicked" in done.stderr
    if done.returncode != 0 or not done.stdout.strip():
        return None, panicked
    try:
        document = json.loads(done.stdout)
    except json.JSONDecodeError:
        return None, panicked
    return (document if isinstance(document, dict) else None), panicked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--stackwalker", type=Path, default=Path(os.environ.get("MINIDUMP_STACKWALK", REFERENCE))
    )
    args = parser.parse_args()
    if not args.stackwalker.is_file():
        print(f"no reference stackwalker at {args.stackwalker}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="damaged-vs-rust-minidump-") as tmp:
        return compare(args.stackwalker, Path(tmp))


def compare(stackwalker: Path, work: Path) -> int:
    files = work / "variants"
    files.mkdir()
    variants = [v for v in dump_variants(dump_seeds(work)) if v.seed is not None]
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    panics = 0
    for variant in variants:
        assert variant.seed is not None
        path = variant.materialize(files)
        document, panicked = reference(stackwalker, path, variant.seed.symbol_paths)
        panics += panicked
        ours = run_library(path, variant.seed.symbol_paths, work / "cache")
        crashing = document.get("crashing_thread") if document else None
        theirs = {
            "report": document is not None,
            "frames": isinstance(crashing, dict) and bool(crashing.get("frames")),
            "modules": bool(document and document.get("modules")),
        }
        mine = {
            "report": not ours.refused,
            "frames": ours.crashing_thread_frames > 0,
            "modules": bool(ours.modules),
        }
        for key, they in theirs.items():
            counts[(key, "rust-minidump")] += they
            counts[(key, "ours")] += mine[key]
            counts[(key, "only rust-minidump")] += they and not mine[key]
            counts[(key, "only ours")] += mine[key] and not they
    print(f"{len(variants)} damaged dumps; rust-minidump panicked on {panics}")
    print(f"{'':8} {'rust-minidump':>14} {'ours':>6} {'only rust-minidump':>19} {'only ours':>10}")
    for key in ("report", "frames", "modules"):
        row = [counts[(key, who)] for who in ("rust-minidump", "ours", "only rust-minidump", "only ours")]
        print(f"{key:8} {row[0]:>14} {row[1]:>6} {row[2]:>19} {row[3]:>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
