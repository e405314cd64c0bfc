"""Synthetic crashes for the analysis tests: code bytes at the instruction pointer, registers, memory info."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from inspector.core.process import ProcessOptions, ProcessState, process
from inspector.core.report.json_report import json_document
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthContext, SynthMinidump

RIP = 0x401000
RSP = 0x7FFF0000


def crash_dump(
    tmp: Path,
    code: bytes | None,
    *,
    cpu: Cpu = Cpu.AMD64,
    os: Os = Os.LINUX,
    registers: Mapping[str, int] | None = None,
    exception_code: int = 11,
    exception_flags: int = 0,
    address: int = 0,
    parameters: Sequence[int] = (),
    pc: int = RIP,
    sp: int = RSP,
    stack: bytes = bytes(256),
    maps: str | None = None,
    memory_info: Sequence[tuple[int, int, int, int, int]] | None = None,
    modules: Sequence[tuple[int, int, str, bytes]] = (),
    extra_memory: Sequence[tuple[int, bytes]] = (),
) -> Path:
    """A one-thread dump crashed at `pc` with `code` there (None: no memory at the pc)."""
    regs = dict(registers or {})
    pc_name, sp_name, make = {
        Cpu.AMD64: ("rip", "rsp", SynthContext.amd64),
        Cpu.X86: ("eip", "esp", SynthContext.x86),
        Cpu.ARM64: ("pc", "sp", SynthContext.arm64),
        Cpu.ARM: ("pc", "sp", SynthContext.arm),
    }[cpu]
    regs.setdefault(pc_name, pc)
    regs.setdefault(sp_name, sp)
    context = make(**regs)
    dump = SynthMinidump(cpu=cpu, os=os).add_thread(1, context=context, stack=(sp, stack))
    if code is not None:
        dump.add_memory(pc, code)
    for base, data in extra_memory:
        dump.add_memory(base, data)
    for base, size, name, build_id in modules:
        dump.add_module(base, size, name, build_id=build_id)
    dump.add_exception(
        1, exception_code, flags=exception_flags, address=address, parameters=parameters, context=context
    )
    if maps is not None:
        dump.add_linux_maps(maps)
    if memory_info is not None:
        dump.add_memory_info(memory_info)
    path = tmp / "crash.dmp"
    path.write_bytes(dump.finish())
    return path


def analyse(path: Path, **options: object) -> ProcessState:
    return process(path, ProcessOptions(use_symbols_cache=False, **options))  # type: ignore[arg-type]


def crash_info(state: ProcessState, *, all_cpus: bool = False) -> dict[str, object]:
    document = json.loads(json.dumps(json_document(state, analysis_all_cpus=all_cpus)))
    info: dict[str, object] = document["crash_info"]
    return info
