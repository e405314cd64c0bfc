"""Seed corpora for the fuzz targets, made from the project's own dumps and symbol files.

`prepare(kind, directory)` fills `directory` with seeds when it holds none yet, so that
`python fuzz/fuzz_minidump.py fuzz/corpus/minidump -max_total_time=600` starts from
real inputs (the bundled sample crash, the test crashes, synthetic dumps) instead of
from nothing. Nothing here comes from outside the repository.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # the synthetic builders live in tests/
    sys.path.insert(0, str(REPO))

EXAMPLES = REPO / "resources" / "examples"
CRASHES = REPO / "tests" / "fixtures" / "crashes"
#: libFuzzer's default -max_len is 4096; seeds longer than this are cut (the tail of a dump is
#: mostly stack bytes, the head holds every structure the reader parses).
MAX_SEED = 64 * 1024


def _dumps() -> list[bytes]:
    seeds = [(EXAMPLES / "sample.dmp").read_bytes()]
    seeds += [p.read_bytes() for p in sorted(CRASHES.glob("*/*.dmp"))]
    try:
        from tests.robustness.damage import synthetic_dump_bytes
    except ImportError:  # running from an sdist without tests: the real dumps suffice
        return seeds
    return seeds + synthetic_dump_bytes()


def _microdumps() -> list[bytes]:
    """The synthetic microdumps of the robustness suite, alone, two in one log, and damaged a little."""
    try:
        from tests.robustness.microdump_damage import synthetic_microdump_bytes
    except ImportError:  # an sdist without tests: no microdump of our own to start from
        return [b"W/google-breakpad( 1): -----BEGIN BREAKPAD MICRODUMP-----\n"]
    seeds = synthetic_microdump_bytes()
    return [*seeds, seeds[0] + seeds[1], seeds[0][: len(seeds[0]) // 2], seeds[0].replace(b"\n", b"\r\n")]


def _syms() -> list[bytes]:
    paths = sorted(EXAMPLES.glob("symbols/**/*.sym")) + sorted(CRASHES.glob("*/symbols/**/*.sym"))
    seeds = []
    for path in paths:
        raw = path.read_bytes()
        # big files: their head (MODULE, FILE, FUNC, line records) and a slice of STACK CFI
        seeds.append(raw[:MAX_SEED])
        cfi = raw.find(b"STACK CFI INIT")
        if cfi > 0:
            seeds.append(raw[:200].split(b"\n", 1)[0] + b"\n" + raw[cfi : cfi + 8192])
    return seeds


def _postfix() -> list[bytes]:
    return [
        b".cfa: $rsp 8 + .ra: .cfa -8 + ^",
        b".cfa: $rsp 16 + $rbp: .cfa -16 + ^ .ra: .cfa -8 + ^",
        b".cfa: sp 16 + .ra: .cfa -8 + ^ x29: .cfa -16 + ^",
        b"$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + =",
        b"$T1 .raSearch = $T0 $T1 4 - 8 @ = $ebp $T1 4 - ^ = $eip $T1 ^ = $esp $T1 4 + =",
        b"1 0 / 2 0 % 3 5 @ ^ .undef",
    ]


def prepare(kind: str, directory: str | Path) -> Path:
    """Write the seeds of `kind` ("minidump", "microdump", "symbols", "postfix") into `directory` if empty."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    if any(target.iterdir()):
        return target
    make = {"minidump": _dumps, "microdump": _microdumps, "symbols": _syms, "postfix": _postfix}[kind]
    for seed in make():
        name = hashlib.sha1(seed).hexdigest()
        (target / name).write_bytes(seed[:MAX_SEED])
    return target


def corpus_argument(kind: str, argv: list[str]) -> None:
    """Seed the first corpus directory on the command line (libFuzzer's first positional argument)."""
    for arg in argv[1:]:
        if not arg.startswith("-"):
            if not Path(arg).is_file():  # a file is an input to replay, not a corpus
                prepare(kind, arg)
            return
