"""A small fixture for unwinder tests: modules with inline `.sym` text, a thread, a stack Section.

    case = UnwindCase(tmp_path, Cpu.AMD64)
    case.add_module(0x7400C0000000, 0x10000, "module1", "FUNC 100 400 10 monotreme\n")
    walk = case.walk(stack, rip=0x7400C0000200, rsp=stack.start)

The dump is built with the synthetic minidump builder (one thread, its stack, the
modules with PDB 7.0 identifiers), the symbols are written to a temporary symbol store,
and the dump is processed by `inspector.core.process` exactly as the command line does.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from inspector.core.process import ProcessOptions, process
from inspector.core.types import Cpu, Os
from inspector.core.unwind import (
    CallStack,
    Outcome,
    StackFrame,
    Strategy,
    StrategyAttempt,
    Termination,
    UnwindStep,
    WalkOptions,
)
from tests.synth.minidump import ARM64_OLD_ARCHITECTURE, SynthContext, SynthMinidump
from tests.synth.section import Section

_CPU_NAME = {
    Cpu.X86: "x86",
    Cpu.AMD64: "x86_64",
    Cpu.ARM: "arm",
    Cpu.ARM64: "arm64",
    Cpu.MIPS: "mips",
    Cpu.MIPS64: "mips64",
}


def debug_id(name: str) -> str:
    return hashlib.md5(name.encode()).hexdigest().upper() + "0"


@dataclass(frozen=True)
class Walked:
    stack: CallStack

    @property
    def frames(self) -> tuple[StackFrame, ...]:
        return self.stack.frames

    @property
    def termination(self) -> Termination:
        assert self.stack.termination is not None
        return self.stack.termination

    def step(self, index: int) -> UnwindStep:
        step = self.frames[index].found_by
        assert step is not None
        return step

    def attempts(self, index: int) -> list[tuple[Strategy, Outcome]]:
        """(strategy, outcome) of every attempt that found frame `index`."""
        return [(a.strategy, a.outcome) for a in self.step(index).attempts]

    def chosen(self, index: int) -> StrategyAttempt:
        attempt = self.step(index).chosen_attempt
        assert attempt is not None
        return attempt


class UnwindCase:
    def __init__(self, tmp_path: Path, cpu: Cpu, os: Os = Os.LINUX, *, arm64_old: bool = False) -> None:
        self.tmp_path = tmp_path
        self.cpu = cpu
        self.os = os
        self.arm64_old = arm64_old
        self.modules: list[tuple[int, int, str, str | None]] = []

    def add_module(self, base: int, size: int, name: str, symbols: str | None = None) -> UnwindCase:
        self.modules.append((base, size, name, symbols))
        return self

    def walk(
        self,
        stack: Section | None,
        *,
        options: WalkOptions | None = None,
        symbol_paths: bool = True,
        **registers: int,
    ) -> Walked:
        if self.arm64_old:
            context = SynthContext.arm64_old(**registers)
        else:
            context = SynthContext.for_cpu(self.cpu, **registers)
        dump = SynthMinidump(cpu=self.cpu, os=self.os)
        if self.arm64_old:
            dump.add_system_info(processor_architecture=ARM64_OLD_ARCHITECTURE)
        dump.add_thread(0x1234, context=context, stack=stack if stack is not None and stack.size else None)
        store = self.tmp_path / "symbols"
        store.mkdir(exist_ok=True)
        for base, size, name, symbols in self.modules:
            identifier = debug_id(name)
            dump.add_module(base, size, name, debug_id=identifier, debug_file=name)
            if symbols is not None:
                folder = store / name / identifier
                folder.mkdir(parents=True, exist_ok=True)
                cpu = _CPU_NAME.get(self.cpu, "unknown")
                header = f"MODULE {self.os.value.split()[0]} {cpu} {identifier} {name}\n"
                (folder / f"{name}.sym").write_text(header + symbols)
        state = process(
            dump.to_minidump(),
            ProcessOptions(
                symbol_paths=(store,) if symbol_paths else (),
                use_symbols_cache=False,
                walk=options or WalkOptions(),
            ),
        )
        return Walked(state.threads[0])
