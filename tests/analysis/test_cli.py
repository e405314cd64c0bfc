"""The analysis through `stackwalk`: `--analysis-all-cpus`, and disassemblers loaded only for a crash."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from inspector.core.types import Cpu
from tests.analysis.conftest import crash_dump
from tests.synth.minidump import SynthContext, SynthMinidump

REPO = Path(__file__).resolve().parent.parent.parent

_PROBE = """
import io, sys, contextlib
from inspector.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    status = main(sys.argv[1:])
loaded = {name.split(".")[0] for name in sys.modules}  # iced-x86's compiled module, not its package
print(status, "iced_x86" in loaded, "capstone" in loaded)
"""


def _stackwalk(*args: str) -> tuple[str, str]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, "stackwalk", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    return proc.stdout, proc.stderr


def test_disassemblers_are_loaded_only_for_a_crash(tmp_path: Path) -> None:
    quiet = tmp_path / "requested.dmp"
    context = SynthContext.amd64(rip=0x401000, rsp=0x7FFF0000)
    quiet.write_bytes(SynthMinidump().add_thread(1, context=context, stack=(0x7FFF0000, bytes(64))).finish())
    out, _ = _stackwalk("--json", "--no-symbols-cache", str(quiet))
    assert out.split() == ["0", "False", "False"]
    amd64 = crash_dump(tmp_path, bytes.fromhex("488b4008"))
    out, _ = _stackwalk("--json", "--no-symbols-cache", str(amd64))
    assert out.split() == ["0", "True", "False"]  # iced-x86 only: Capstone is for ARM


def test_analysis_all_cpus_fills_the_json_for_arm64(tmp_path: Path) -> None:
    path = crash_dump(tmp_path, bytes.fromhex("080440f9"), cpu=Cpu.ARM64, registers={"x0": 0}, address=8)

    def crash_info(*extra: str) -> dict[str, object]:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "inspector",
                "stackwalk",
                "--json",
                "--no-symbols-cache",
                *extra,
                str(path),
            ],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=True,
        )
        info: dict[str, object] = json.loads(proc.stdout)["crash_info"]
        return info

    assert crash_info()["instruction"] is None
    info = crash_info("--analysis-all-cpus")
    assert info["instruction"] == "ldr x8, [x0, #8]"
    assert info["adjusted_address"] == {"kind": "null-pointer", "offset": "0x0000000000000008"}
