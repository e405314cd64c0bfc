"""iced-x86 is loaded for the x86 analysis without its package's `__init__` (`inspector.core.analysis.iced`):
the same decoder and the same constants as the ordinary import, at a fraction of the cost (issue 18)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import iced_x86

from inspector.core.analysis import iced, x86

REPO = Path(__file__).resolve().parents[2]


def test_the_codes_taken_from_decoding_are_iceds_own_constants() -> None:
    iced = x86._iced()
    assert iced.invalid == iced_x86.Code.INVALID
    assert iced.nop == iced_x86.Mnemonic.NOP
    code = iced_x86.Code
    assert iced.moffs == {
        code.MOV_AL_MOFFS8,
        code.MOV_AX_MOFFS16,
        code.MOV_EAX_MOFFS32,
        code.MOV_RAX_MOFFS64,
        code.MOV_MOFFS8_AL,
        code.MOV_MOFFS16_AX,
        code.MOV_MOFFS32_EAX,
        code.MOV_MOFFS64_RAX,
    }
    assert iced.xchg_short == {code.XCHG_R16_AX, code.XCHG_R32_EAX, code.XCHG_R64_RAX}


_CHILD = """
import json, sys
from inspector.core.analysis import iced, x86
first, error = x86.decode(bytes.fromhex("48a11000000000000000"), 0x401000, 64)
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "iced_x86")
typing_loaded = "typing" in sys.modules
import iced_x86  # the ordinary import afterwards (a test, a host application) still works
compiled = sys.modules["iced_x86._iced_x86_py"]
again, _ = x86.decode(bytes.fromhex("488b4008"), 0x401000, 64)
print(json.dumps({
    "first": first.instruction.text, "error": error, "loaded": loaded,
    "same_decoder": iced_x86.Decoder is compiled.Decoder,
    "typing_before_the_package": typing_loaded,
    "same_constants": x86.ix.OpKind.MEMORY == iced_x86.OpKind.MEMORY,
    "again": again.instruction.text,
    "invalid": x86.decode(bytes.fromhex("069090"), 0, 64)[1],
    "truncated": x86.decode(bytes.fromhex("488b"), 0, 64)[1],
}))
"""


def test_a_fresh_process_decodes_without_running_the_package_init_and_can_still_import_it() -> None:
    run = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True, cwd=REPO)
    report = json.loads(run.stdout)
    assert report["first"] == "mov rax, qword [0x10]" and report["error"] is None
    # the compiled module only: not the package, and no constant module is executed (each would
    # import `typing`), `Code` and `Mnemonic` not even read
    assert report["loaded"] == ["iced_x86._iced_x86_py"] and not report["typing_before_the_package"]
    assert report["same_decoder"] and report["same_constants"]
    assert report["again"] == "mov rax, qword [rax + 0x8]"
    # `push es` does not exist in 64-bit code; `mov` without its ModRM byte is cut short
    assert report["invalid"] == "invalid" and report["truncated"] == "truncated"


def test_every_constant_module_read_as_text_has_the_names_and_values_it_has_when_executed() -> None:
    directory = Path(iced_x86.__file__).parent
    modules = sorted(p for p in directory.glob("*.py") if p.stem != "__init__")
    assert len(modules) >= 30  # 39 in iced-x86 1.21
    for path in modules:
        executed = {k: v for k, v in vars(getattr(iced_x86, path.stem)).items() if isinstance(v, int)}
        read = iced.read_constants(str(path), path.stem)
        assert read is not None and executed, path.name
        assert {k: v for k, v in vars(read).items() if not k.startswith("_")} == executed, path.name


def test_a_module_without_constant_lines_is_not_taken_for_one(tmp_path: Path) -> None:
    other = tmp_path / "Odd.py"
    other.write_text('"""A: Odd = 1 # type: ignore is in a docstring here, on its own line:"""\nX = 1\n')
    assert iced.read_constants(str(other), "Odd") is None
    assert iced.read_constants(str(tmp_path / "Missing.py"), "Missing") is None
