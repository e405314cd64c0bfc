"""Why it crashed: the crashing instruction, the memory it accessed, bit flips, inconsistencies.

`analyze_crash(...)` (in `engine`; `from_dump.analyze_dump` for an open minidump) computes
rust-minidump 0.25's `crash_info` analysis for a dump's exception; `x86.decode_all` and
`arm.decode_all` decode a run of code into `Instruction`s for a disassembly view.
The disassemblers (iced-x86 for x86, Capstone for ARM) are imported only when a crash is
analysed, so that the headless `stackwalk` starts as fast as before.
"""

from __future__ import annotations

from inspector.core.lazy import lazy_names

# Each name is imported from its module on first use: importing one module of this package no
# longer imports all of them (start-up of a headless stackwalk; `inspector.core.lazy`).
__getattr__ = lazy_names(
    __name__,
    {
        "code_bytes": (
            "CodeBytesProvider",
            "ModuleFileCode",
        ),
        "engine": ("analyze_crash",),
        "memory_info": ("MemoryInfoMap",),
        "model": (
            "NO_UPDATE",
            "AccessType",
            "AdjustedAddress",
            "AdjustedKind",
            "AnalysisProblem",
            "BitFlip",
            "BitFlipDetails",
            "CodeOrigin",
            "CodeSource",
            "CrashAnalysis",
            "Flow",
            "Inconsistency",
            "Instruction",
            "InstructionAnalysis",
            "MemoryAccess",
            "MemoryOperand",
            "NoUpdate",
            "Operand",
            "OperandKind",
        ),
    },
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:  # the same names, for type checkers
    from inspector.core.analysis.code_bytes import CodeBytesProvider, ModuleFileCode
    from inspector.core.analysis.engine import analyze_crash
    from inspector.core.analysis.memory_info import MemoryInfoMap
    from inspector.core.analysis.model import (
        NO_UPDATE,
        AccessType,
        AdjustedAddress,
        AdjustedKind,
        AnalysisProblem,
        BitFlip,
        BitFlipDetails,
        CodeOrigin,
        CodeSource,
        CrashAnalysis,
        Flow,
        Inconsistency,
        Instruction,
        InstructionAnalysis,
        MemoryAccess,
        MemoryOperand,
        NoUpdate,
        Operand,
        OperandKind,
    )

__all__ = [
    "NO_UPDATE",
    "AccessType",
    "AdjustedAddress",
    "AdjustedKind",
    "AnalysisProblem",
    "BitFlip",
    "BitFlipDetails",
    "CodeBytesProvider",
    "CodeOrigin",
    "CodeSource",
    "CrashAnalysis",
    "Flow",
    "Inconsistency",
    "Instruction",
    "InstructionAnalysis",
    "MemoryAccess",
    "MemoryInfoMap",
    "MemoryOperand",
    "ModuleFileCode",
    "NoUpdate",
    "Operand",
    "OperandKind",
    "analyze_crash",
]
