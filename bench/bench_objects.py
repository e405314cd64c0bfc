"""Symbols from an object: libtorch_cpu.so (434 MB, the torch-autograd perf case) against dump_syms.

cold: our `stackwalk --json` with the binary as symbol path and an empty cache (object → Breakpad
      records → index), against `dump_syms` making the `.sym` plus rust-minidump walking with it;
warm: the same with the cache filled, against rust-minidump with the `.sym` already made.

    .venv/bin/python bench/bench_objects.py [--runs N]

Needs bench/data/torch/libtorch_cpu.so and libtorch_python.so (from the torch 2.13.0 CPU wheel that
`../shared/perf/torch-autograd/make-symbols` downloads) and the peers in bench/data/peers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CASE = REPO.parent / "shared" / "perf" / "torch-autograd"
PEERS = HERE / "data" / "peers"
TORCH = HERE / "data" / "torch"


#: our runs as an installed copy runs: with its modules' byte code written once and then used
#: (a shell with PYTHONDONTWRITEBYTECODE set, as some sandboxes have, would compile our sources at
#: every start: 0.2 s of a 0.3 s warm walk)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], **kw: object) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    dump = CASE / "torch_autograd.dmp"
    binary = TORCH / "libtorch_cpu.so"
    for needed in (dump, binary, PEERS / "dump_syms", PEERS / "minidump-stackwalk"):
        if not needed.exists():
            print(f"missing {needed}; see the docstring", file=sys.stderr)
            return 1
    ours = [sys.executable, "-m", "inspector", "stackwalk", "--json", "--no-local-modules"]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "inspector")], check=True, env=ENV)
    small = CASE / "symbols"
    cold_ours, warm_ours, cold_ref, warm_ref = [], [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            objects = Path(tmp) / "objects"
            objects.mkdir()
            (objects / binary.name).symlink_to(binary)
            cache = Path(tmp) / "cache"
            cmd = [*ours, "--symbols-cache", str(cache), str(dump), str(small), str(objects)]
            cold_ours.append(timed(cmd, cwd=REPO))
            warm_ours.append(timed(cmd, cwd=REPO))
            store = Path(tmp) / "store"
            shutil.copytree(small, store, symlinks=True)
            sym = Path(tmp) / "libtorch_cpu.so.sym"
            started = time.perf_counter()
            with open(sym, "wb") as out:
                subprocess.run([str(PEERS / "dump_syms"), "--inlines", str(binary)], check=True, stdout=out)
            first = sym.read_text(errors="replace").split("\n", 1)[0].split()
            target = store / first[4] / first[3]
            target.mkdir(parents=True, exist_ok=True)
            shutil.move(sym, target / f"{first[4]}.sym")
            ref_cmd = [str(PEERS / "minidump-stackwalk"), "--json", str(dump), str(store)]
            walk = timed(ref_cmd)
            cold_ref.append(time.perf_counter() - started)
            warm_ref.append(walk)
    cold, warm = statistics.median(cold_ours), statistics.median(warm_ours)
    ref_cold, ref_warm = statistics.median(cold_ref), statistics.median(warm_ref)
    print(
        f"cold: ours {cold:.2f} s, dump_syms + rust-minidump {ref_cold:.2f} s, ratio {cold / ref_cold:.2f}x"
    )
    print(
        f"warm: ours {warm:.2f} s, rust-minidump with the .sym {ref_warm:.2f} s, ratio {warm / ref_warm:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
