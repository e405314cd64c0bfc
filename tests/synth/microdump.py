"""Build Breakpad microdump text (as an Android logcat excerpt) for reader, report and robustness tests.

    text = SynthMicrodump(context=SynthContext.arm(pc=..., sp=...), stack_start=..., stack=...)
    text.add_module(0x40000000, 0x10000, "0123456789ABCDEF0123456789ABCDEF0", "app").to_bytes()

Records are written as Breakpad's `microdump_writer.cc` writes them (upper-case hex, 384 stack
bytes a line, V O P R G S C M order), each behind a logcat prefix (`brief` format by default).
`lines()` gives the records without prefixes, so a test can damage them before `to_bytes`.

`arm_crash(symbols_root)` is a complete small crash: an arm process crashed in `crash`, called
by `caller` (both with STACK CFI in `app.sym`), called from `libc.so` (no symbols).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.synth.minidump import SynthContext
from tests.synth.sym import SymBuilder

BEGIN = "-----BEGIN BREAKPAD MICRODUMP-----"
END = "-----END BREAKPAD MICRODUMP-----"
BRIEF_PREFIX = "W/google-breakpad( 3745): "
CHUNK = 384


def brief_prefix(pid: int) -> str:
    return f"W/google-breakpad({pid:5d}): "


def threadtime_prefix(pid: int, tid: int | None = None) -> str:
    return f"02-23 15:49:14.700  {pid:4d}  {tid or pid:4d} F google-breakpad: "


@dataclass
class SynthMicrodump:
    context: SynthContext | bytes | None
    stack_start: int = 0
    stack: bytes = b""
    stack_pointer: int | None = None
    arch: str = "arm"
    os_id: str = "A"
    cpu_count: int = 2
    hardware: str = "armv7l"
    version: str = "OS VERSION INFO"
    product: str | None = "Test:1.0"
    process_type: str | None = None
    crash: tuple[int, str, int] | None = None
    gpu: str | None = "UNKNOWN"
    modules: list[tuple[int, int, str, str]] = field(default_factory=list)
    pointer_width: int = 4

    def add_module(self, base: int, size: int, identifier: str, name: str) -> SynthMicrodump:
        self.modules.append((base, size, identifier, name))
        return self

    def _hex(self, value: int) -> str:
        return f"{value:0{self.pointer_width * 2}X}"

    def lines(self) -> list[str]:
        """The records, BEGIN and END included, without logcat prefixes."""
        out = [BEGIN]
        if self.product is not None:
            out.append(f"V {self.product}")
        out.append(f"O {self.os_id} {self.arch} {self.cpu_count:02X} {self.hardware} {self.version}")
        if self.process_type is not None:
            out.append(f"P {self.process_type}")
        if self.crash is not None:
            signal, name, address = self.crash
            out.append(f"R {signal:08X} {name} {self._hex(address)}")
        if self.gpu is not None:
            out.append(f"G {self.gpu}")
        if self.stack:
            sp = self.stack_start if self.stack_pointer is None else self.stack_pointer
            out.append(f"S 0 {self._hex(sp)} {self._hex(self.stack_start)} {self._hex(len(self.stack))}")
            for offset in range(0, len(self.stack), CHUNK):
                chunk = self.stack[offset : offset + CHUNK]
                out.append(f"S {self._hex(self.stack_start + offset)} {chunk.hex().upper()}")
        if self.context is not None:
            raw = self.context if isinstance(self.context, bytes) else self.context.to_bytes()
            out.append(f"C {raw.hex().upper()}")
        for base, size, identifier, name in self.modules:
            out.append(f"M {self._hex(base)} {self._hex(0)} {self._hex(size)} {identifier} {name}")
        out.append(END)
        return out

    def to_bytes(self, prefix: str = BRIEF_PREFIX, *, lines: Sequence[str] | None = None) -> bytes:
        records = self.lines() if lines is None else lines
        return "".join(f"{prefix}{line}\n" for line in records).encode()


APP_ID = "0123456789ABCDEF0123456789ABCDEF0"
LIBC_ID = "FEDCBA9876543210FEDCBA98765432100"
APP_BASE, LIBC_BASE = 0x40000000, 0x50000000
STACK_START = 0x7F000000
#: The walk of `arm_crash` (instruction, function) with its symbols.
ARM_CRASH_FRAMES = ((APP_BASE + 0x1010, "crash"), (APP_BASE + 0x200E, "caller"), (LIBC_BASE + 0x1232, None))


def arm_crash_symbols() -> SymBuilder:
    return (
        SymBuilder(os="Linux", cpu="arm", debug_id=APP_ID, name="app")
        .file(0, "app.c")
        .func(0x1000, 0x100, "crash", lines=[(0x1000, 0x100, 12, 0)])
        .func(0x2000, 0x100, "caller", lines=[(0x2000, 0x100, 30, 0)])
        .cfi(0x1000, 0x100, ".cfa: sp 8 + .ra: .cfa -4 + ^ r4: .cfa -8 + ^")
        .cfi(0x2000, 0x100, ".cfa: sp 16 + .ra: .cfa -4 + ^")
    )


def arm_crash(*, crash: tuple[int, str, int] | None = (11, "SIGSEGV", 0x10)) -> SynthMicrodump:
    """`crash` (pc in app) ← `caller` ← libc.so, with 0x400 bytes of stack (three stack lines)."""
    sp = STACK_START + 0x100
    stack = bytearray(0x400)

    def put(address: int, value: int) -> None:
        offset = address - STACK_START
        stack[offset : offset + 4] = value.to_bytes(4, "little")

    put(sp, 0x1234)  # r4 saved by crash
    put(sp + 4, APP_BASE + 0x2010)  # crash's return address: into caller
    put(sp + 8 + 12, LIBC_BASE + 0x1234)  # caller's return address: into libc
    context = SynthContext.arm(pc=APP_BASE + 0x1010, sp=sp, lr=APP_BASE + 0x2010, r4=0x99)
    dump = SynthMicrodump(context, STACK_START, bytes(stack), sp, crash=crash, process_type="browser")
    dump.gpu = "OpenGL ES 3.0|Vendor|Renderer 1"
    dump.add_module(APP_BASE, 0x10000, APP_ID, "app").add_module(LIBC_BASE, 0x20000, LIBC_ID, "libc.so")
    return dump


def write_arm_crash_symbols(root: Path) -> Path:
    arm_crash_symbols().write_to_store(root)
    return root
