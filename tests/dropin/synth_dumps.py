"""Small synthetic dumps for the options whose effect the real crashes cannot show.

* `x86_arguments`: an x86 Windows crash in `Foo::bar(int, char*)` called from `main(int, char**)`
  called from `start()`, a frame-pointer chain, and a second thread in a templated member
  function: what `--recover-function-args` guesses arguments for.
* `windows_frame_record`: a Windows amd64 crash whose rbp points 16 bytes below the frame
  record: rust-minidump 0.25 finds the caller by scanning, its 0.26 frame-pointer probe (our
  `--features unstable-all`) by the frame pointer.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthContext, SynthMinidump
from tests.synth.section import Label, Section

APP = 0x00400000
X86_SYMBOLS = (
    "FUNC 1000 80 0 Foo::bar(int, char*)\n"
    "FUNC 1100 80 0 main(int, char**)\n"
    "FUNC 1200 80 0 start()\n"
    "PUBLIC 1300 0 std::map<int, std::pair<int,int> >::find(int const&) const\n"
)


def _store(folder: Path, debug_file: str, identifier: str, text: str) -> Path:
    """A symbol store holding one `.sym` file; returns the store."""
    store = folder / "symbols"
    leaf = store / debug_file / identifier
    leaf.mkdir(parents=True, exist_ok=True)
    (leaf / f"{debug_file.removesuffix('.pdb')}.sym").write_text(text, encoding="utf-8")
    return store


def x86_arguments(folder: Path) -> tuple[Path, Path]:
    """(dump, symbol store) of the x86 arguments crash; the words the guesses read are 0x11111111…"""
    identifier = hashlib.md5(b"app").hexdigest().upper() + "1"
    stack = Section(start=0x00120000)
    frame0_ebp, frame1_ebp, frame2_ebp = Label(), Label(), Label()
    stack.d32(0xAAAA0000).d32(0xAAAA0004).d32(0xAAAA0008).d32(0xAAAA000C)
    stack.mark(frame0_ebp).d32(frame1_ebp).d32(APP + 0x1105)  # saved ebp, return into main
    stack.d32(0x11111111).d32(0x22222222).d32(0x33333333)  # main's stack: Foo::bar's two arguments first
    stack.append_repeated(0, 12)
    stack.mark(frame1_ebp).d32(frame2_ebp).d32(APP + 0x1205)  # saved ebp, return into start
    stack.d32(0x44444444).d32(0x55555555)  # main's arguments
    stack.append_repeated(0, 8)
    stack.mark(frame2_ebp).d32(0).d32(0)
    other = Section(start=0x00220000).d32(0x66666666).d32(0x77777777)
    crashed = SynthContext.x86(eip=APP + 0x1010, esp=stack.start, ebp=frame0_ebp.value, eax=0xBEEF)
    dump = (
        SynthMinidump(cpu=Cpu.X86, os=Os.WINDOWS)
        .add_module(APP, 0x10000, "C:\\app.exe", debug_id=identifier, debug_file="app.pdb")
        .add_thread(7, context=crashed, stack=stack)
        .add_thread(8, context=SynthContext.x86(eip=APP + 0x1300, esp=other.start, ebp=0), stack=other)
        .add_exception(7, code=0xC0000005, context=crashed)
    )
    path = folder / "x86args.dmp"
    path.write_bytes(dump.finish())
    header = f"MODULE windows x86 {identifier} app.pdb\n"
    return path, _store(folder, "app.pdb", identifier, header + X86_SYMBOLS)


def windows_frame_record(folder: Path) -> Path:
    """The Windows amd64 dump (no symbols needed)."""
    module1, module2 = 0x7400C0000000, 0x7500B0000000
    frame0_rbp, frame1_rbp = Label(), Label()
    stack = Section(start=0x8000000080000000)
    stack.append_repeated(0, 16).d64(0xB0000000).d64(0xB0000000)
    stack.mark(frame0_rbp).d64(0xC0001000).d64(0xB000AAAA)  # rbp points into the middle of the frame
    stack.d64(frame1_rbp).d64(module2 + 0x110)
    stack.append_repeated(0, 32).mark(frame1_rbp).d64(0)
    context = SynthContext.amd64(rip=module1 + 0x200, rsp=stack.start, rbp=frame0_rbp.value)
    dump = (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.WINDOWS)
        .add_module(module1, 0x10000, "C:\\module1.dll")
        .add_module(module2, 0x10000, "C:\\module2.dll")
        .add_thread(1, context=context, stack=stack)
        .add_exception(1, code=0xC0000005, context=context)
    )
    path = folder / "frame-record.dmp"
    path.write_bytes(dump.finish())
    return path
