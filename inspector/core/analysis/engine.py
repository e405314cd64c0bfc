"""The crash analysis: rust-minidump 0.25's `crash_info` analysis fields, from a dump's parts.

`analyze_crash(...)` reads the crashing instruction at the exception context's instruction
pointer (from the dump's memory, or from the module's file through a code-bytes provider
when the dump has none), decodes it, and works out, with `processor.rs`'s rules:

* the memory it accessed and the instruction-pointer update (`x86` / `arm`);
* `adjusted_address`: a null pointer plus an offset when an access's base register was null
  (`try_detect_null_pointer_in_disguise`), else on amd64 the non-canonical address behind a
  general-protection fault (`try_get_non_canonical_crash_address`);
* likely guard pages among the accesses (`check_for_guard_pages`);
* possible bit flips of the crash address and of the instruction's address registers on
  64-bit CPUs other than ARM64 (`check_for_bitflips`), even without an instruction;
* inconsistencies between the exception and the instruction (`check_for_crash_inconsistencies`).

rust-minidump analyses amd64 only; x86, ARM and ARM64 are decoded too (`CrashAnalysis.
cpu_supported_by_reference` says which the reference covers). Bad memory around the
instruction (a region ending inside it, bytes that do not decode) is reported in `problems`,
never raised.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspector.core.analysis import x86
from inspector.core.analysis.bitflip import BitRange, MemoryOperation, try_bit_flips
from inspector.core.analysis.code_bytes import CodeBytesProvider
from inspector.core.analysis.memory_info import MemoryInfoMap
from inspector.core.analysis.model import (
    NO_UPDATE,
    AccessType,
    AdjustedAddress,
    AdjustedKind,
    AnalysisProblem,
    BitFlip,
    CodeOrigin,
    CodeSource,
    CrashAnalysis,
    Inconsistency,
    InstructionAnalysis,
    MemoryAccess,
)
from inspector.core.minidump import CpuContext, MemoryRegion, MemoryView, Module
from inspector.core.record import replace
from inspector.core.types import Cpu, Os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from inspector.core.analysis import arm

NON_CANONICAL_LOW, NON_CANONICAL_HIGH = 0x0000_8000_0000_0000, 0xFFFF_7FFF_FFFF_FFFF
_U64 = (1 << 64) - 1
#: Bytes read at the instruction pointer: the longest instruction of each CPU.
_CODE_WINDOW = {Cpu.AMD64: 15, Cpu.X86: 15, Cpu.ARM: 4, Cpu.ARM64: 4}

_DIV_BY_ZERO = frozenset(
    {
        "EXC_ARITHMETIC / EXC_PPC_ZERO_DIVIDE",
        "EXC_ARITHMETIC / EXC_I386_DIV",
        "SIGFPE / FPE_INTDIV",
        "EXCEPTION_INT_DIVIDE_BY_ZERO",
    }
)
_PRIVILEGED = frozenset({"EXCEPTION_PRIV_INSTRUCTION"})
_AV_READ = "EXCEPTION_ACCESS_VIOLATION_READ"
_AV_WRITE = "EXCEPTION_ACCESS_VIOLATION_WRITE"
_AV_EXEC = "EXCEPTION_ACCESS_VIOLATION_EXEC"
_STACK_OVERFLOW = "EXCEPTION_STACK_OVERFLOW"


def memory_operation(reason: str) -> MemoryOperation:
    """`MemoryOperation::from_crash_reason`: known only for Windows access violations."""
    return {
        _AV_READ: MemoryOperation.READ,
        _AV_WRITE: MemoryOperation.WRITE,
        _AV_EXEC: MemoryOperation.EXECUTE,
    }.get(reason, MemoryOperation.UNDETERMINED)


def represents_general_protection_fault(os: Os, reason: str, address: int) -> bool:
    """How each OS reports a general-protection fault (the likely sign of a non-canonical access)."""
    if os is Os.WINDOWS:
        return reason == _AV_READ and address == _U64
    if os is Os.MACOS:
        return reason == "EXC_BAD_ACCESS / EXC_I386_GPFLT" and address == 0
    if os is Os.LINUX:
        return reason in ("SIGSEGV / SI_KERNEL", "SIGBUS / SI_KERNEL") and address == 0
    return False


def _non_canonical(address: int) -> bool:
    return NON_CANONICAL_LOW <= address <= NON_CANONICAL_HIGH


def analyze_crash(
    *,
    cpu: Cpu,
    os: Os,
    reason: str,
    address: int,
    context: CpuContext | None,
    memory: MemoryView,
    stack: MemoryRegion | None,
    memory_info: MemoryInfoMap,
    modules: Sequence[Module] = (),
    code_providers: Sequence[CodeBytesProvider] = (),
) -> CrashAnalysis:
    """Everything rust-minidump's processor works out about the crash (see the module docstring)."""
    problems: list[AnalysisProblem] = []
    source: CodeSource | None = None
    analysis: InstructionAnalysis | None = None
    if context is not None and cpu in _CODE_WINDOW:
        analysis, source = _analyze_instruction(
            cpu=cpu,
            context=context,
            memory=memory,
            stack=stack,
            modules=modules,
            providers=code_providers,
            problems=problems,
        )

    def derive(analysis: InstructionAnalysis | None) -> CrashAnalysis:
        adjusted = _adjusted_address(cpu, os, reason, address, analysis)
        if analysis is not None and analysis.memory_accesses is not None and memory_info:
            analysis = _with_guard_pages(analysis, memory_info)
        return CrashAnalysis(
            cpu_supported_by_reference=cpu is Cpu.AMD64,
            instruction=analysis,
            adjusted_address=adjusted,
            possible_bit_flips=tuple(
                _bit_flips(
                    cpu=cpu,
                    reason=reason,
                    address=address,
                    adjusted=adjusted,
                    context=context,
                    analysis=analysis,
                    memory_info=memory_info,
                )
            ),
            inconsistencies=tuple(
                _inconsistencies(
                    os=os,
                    reason=reason,
                    address=address,
                    context=context,
                    analysis=analysis,
                    memory_info=memory_info,
                )
            ),
            code_source=source,
            problems=tuple(problems),
        )

    if cpu is Cpu.AMD64 or analysis is None:
        return derive(analysis)
    # rust-minidump analyses amd64 only: its fields are what follows without an instruction,
    # and what follows with ours is kept beside them
    return replace(derive(None), beyond_reference=derive(analysis))


# ---- the instruction ------------------------------------------------------------------------


def _module_at(modules: Sequence[Module], address: int) -> Module | None:
    return next((m for m in modules if m.base <= address < m.base + m.size), None)


def _dump_bytes(cpu: Cpu, ip: int, memory: MemoryView) -> bytes:
    """Up to the longest instruction at `ip` from the dump (fewer when its region ends first)."""
    region = memory.region_for(ip)
    if region is None:
        return b""
    return region.read(ip, min(_CODE_WINDOW[cpu], region.end - ip)) or b""


def _file_bytes(
    cpu: Cpu, ip: int, module: Module | None, providers: Sequence[CodeBytesProvider]
) -> tuple[bytes, str | None, list[str]]:
    """(bytes, file read, what was tried) from the first provider that has the module's code."""
    if module is None:
        return b"", None, ["the address is in no module"]
    tried: list[str] = []
    for provider in providers:
        data = provider(module, ip - module.base, _CODE_WINDOW[cpu])
        if data:
            return data, getattr(provider, "used", {}).get(module.code_file), tried
        tried.extend(getattr(provider, "tried", {}).get(module.code_file, []))
    return b"", None, tried


def _decode(
    cpu: Cpu, code: bytes, ip: int, thumb: bool
) -> tuple[x86.Decoded | arm.Decoded | None, str | None]:
    if cpu in (Cpu.AMD64, Cpu.X86):
        return x86.decode(code, ip, 64 if cpu is Cpu.AMD64 else 32)
    from inspector.core.analysis import arm  # only ARM crashes need it (and Capstone)

    return arm.decode(code, ip, arm64=cpu is Cpu.ARM64, thumb=thumb)


def _analyze_instruction(
    *,
    cpu: Cpu,
    context: CpuContext,
    memory: MemoryView,
    stack: MemoryRegion | None,
    modules: Sequence[Module],
    providers: Sequence[CodeBytesProvider],
    problems: list[AnalysisProblem],
) -> tuple[InstructionAnalysis | None, CodeSource]:
    ip = context.value(context.register_set.instruction_pointer)
    thumb = False
    if cpu is Cpu.ARM:
        cpsr = context.fields().get("cpsr", 0)
        thumb = bool(ip & 1) or (isinstance(cpsr, int) and bool(cpsr & 0x20))  # the T bit
        ip &= ~1
    module = _module_at(modules, ip)
    name = None if module is None else module.filename
    where = f"{ip:#x}" + ("" if module is None else f" ({name} + {ip - module.base:#x})")
    decoded: x86.Decoded | arm.Decoded | None = None
    source = CodeSource(CodeOrigin.NONE, ip, 0, module=name)
    code = _dump_bytes(cpu, ip, memory)
    if code:
        source = CodeSource(CodeOrigin.DUMP, ip, len(code), module=name)
        decoded, error = _decode(cpu, code, ip, thumb)
        if error == "truncated":
            problems.append(
                AnalysisProblem(
                    "CodeTruncated",
                    f"the crashing instruction at {where} runs past the end of the dump's memory region: "
                    f"only {len(code)} byte(s) there ({code.hex(' ')})",
                )
            )
        elif error is not None:
            problems.append(
                AnalysisProblem(
                    "CodeUndecodable",
                    f"the bytes at the crashing instruction {where} do not decode: {code.hex(' ')}",
                )
            )
            return None, source
    if decoded is None:
        data, path, tried = _file_bytes(cpu, ip, module, providers)
        if not data:
            if not code:
                note = "the dump holds no memory there" + (f"; {'; '.join(tried)}" if tried else "")
                source = CodeSource(CodeOrigin.NONE, ip, 0, module=name, note=note)
            return None, source
        source = CodeSource(CodeOrigin.MODULE_FILE, ip, len(data), path=path, module=name)
        decoded, error = _decode(cpu, data, ip, thumb)
        if error is not None:
            problems.append(
                AnalysisProblem(
                    "CodeUndecodable",
                    f"the bytes of the crashing instruction {where} in {path or 'the module file'} "
                    f"do not decode: {data.hex(' ')}",
                )
            )
            return None, source
    width = context.pointer_width
    pointer = 8 if cpu is Cpu.AMD64 else width

    def registers(name: str) -> int | None:
        return context.get(name)

    def read_pointer(address: int) -> int | None:
        return memory.read_pointer(address, pointer)

    def read_stack(address: int) -> int | None:
        return None if stack is None else stack.read_pointer(address, pointer)

    if isinstance(decoded, x86.Decoded):
        return x86.analyze(decoded, registers, read_pointer, read_stack, width), source
    assert decoded is not None
    from inspector.core.analysis import arm

    return arm.analyze(decoded, registers, read_pointer, width), source


# ---- what follows from it -------------------------------------------------------------------


def _access_addresses(analysis: InstructionAnalysis | None) -> list[MemoryAccess] | None:
    """The accesses plus the instruction-pointer update, None when the accesses are not known."""
    if analysis is None or analysis.memory_accesses is None:
        return None
    out = list(analysis.memory_accesses)
    update = analysis.instruction_pointer_update
    if isinstance(update, MemoryAccess):
        out.append(update)
    return out


def _adjusted_address(
    cpu: Cpu, os: Os, reason: str, address: int, analysis: InstructionAnalysis | None
) -> AdjustedAddress | None:
    addresses = _access_addresses(analysis)
    if addresses is None:
        return None
    for access in addresses:
        if access.is_likely_null_pointer:
            return AdjustedAddress(AdjustedKind.NULL_POINTER, access.address)
    if cpu is not Cpu.AMD64 or not represents_general_protection_fault(os, reason, address):
        return None
    for access in addresses:
        if _non_canonical(access.address):
            return AdjustedAddress(AdjustedKind.NON_CANONICAL, access.address)
    return None


def _with_guard_pages(analysis: InstructionAnalysis, memory_info: MemoryInfoMap) -> InstructionAnalysis:
    assert analysis.memory_accesses is not None
    accesses = tuple(
        replace(a, is_likely_guard_page=True) if memory_info.is_likely_guard_page(a.address) else a
        for a in analysis.memory_accesses
    )
    return replace(analysis, memory_accesses=accesses)


def _bit_flips(
    *,
    cpu: Cpu,
    reason: str,
    address: int,
    adjusted: AdjustedAddress | None,
    context: CpuContext | None,
    analysis: InstructionAnalysis | None,
    memory_info: MemoryInfoMap,
) -> list[BitFlip]:
    # 64-bit only (fewer false positives in a large address space), and not ARM64, whose
    # register + power-of-two offsets near null look like flips (rust-minidump issue #863).
    if cpu is Cpu.UNKNOWN or cpu.pointer_width != 8 or cpu is Cpu.ARM64:
        return []
    if adjusted is not None and adjusted.kind is AdjustedKind.NULL_POINTER:
        return []
    if adjusted is not None:
        start, bits = adjusted.value, BitRange.AMD64_NON_CANONICAL
    else:
        start, bits = address, (BitRange.AMD64_CANONICAL if cpu is Cpu.AMD64 else BitRange.ALL)
    operation = memory_operation(reason)
    valid = context.valid_registers() if context is not None else None
    size = context.pointer_width if context is not None else 8

    def flips_of(value: int, register: str | None) -> list[BitFlip]:
        return try_bit_flips(
            value,
            register,
            bits,
            registers=valid,
            register_size=size,
            memory=memory_info,
            operation=operation,
        )

    flips = flips_of(start, None)
    if context is not None and analysis is not None:
        for name in analysis.registers:
            value = context.get(name)
            if value is not None:
                flips.extend(flips_of(value, name))
    return flips


def _contains(accesses: Sequence[MemoryAccess], address: int, kind: AccessType) -> bool:
    """`MemoryAccessList::contains_access`: an access of that kind whose bytes cover `address`."""
    for access in accesses:
        if access.size is None or access.access_type is not kind:
            continue
        low = access.address
        high = low + access.size
        if high > _U64:  # wrapped around the top of the address space
            if low <= address or address < (high & _U64):
                return True
        elif low <= address < high:
            return True
    return False


def _inconsistencies(
    *,
    os: Os,
    reason: str,
    address: int,
    context: CpuContext | None,
    analysis: InstructionAnalysis | None,
    memory_info: MemoryInfoMap,
) -> list[Inconsistency]:
    out: list[Inconsistency] = []
    derivable = analysis is not None and analysis.is_access_derivable
    accesses = None if analysis is None else analysis.memory_accesses

    def not_among() -> bool:
        """`crashing_access_is_not_among_accesses` (False when it cannot be told)."""
        if accesses is None:
            return False
        if reason == _AV_READ:
            return derivable and not (
                _contains(accesses, address, AccessType.READ)
                or _contains(accesses, address, AccessType.READ_WRITE)
            )
        if reason == _AV_WRITE:
            return derivable and not (
                _contains(accesses, address, AccessType.WRITE)
                or _contains(accesses, address, AccessType.READ_WRITE)
            )
        if reason == _AV_EXEC:
            return context is not None and context.value(context.register_set.instruction_pointer) != address
        if reason == _STACK_OVERFLOW:
            return derivable and not accesses
        return False

    def allowed() -> bool:
        """`access_is_not_violation`: the memory info says the faulting operation was allowed."""
        region = memory_info.at(address)
        return (
            region is not None
            and reason in (_AV_READ, _AV_WRITE, _AV_EXEC)
            and memory_operation(reason).allowed(region)
        )

    if reason in _DIV_BY_ZERO:
        if analysis is not None and not analysis.is_division:
            out.append(Inconsistency.INT_DIV_BY_ZERO_NOT_POSSIBLE)
    elif reason in _PRIVILEGED:
        if analysis is not None and not analysis.is_privileged:
            out.append(Inconsistency.PRIV_INSTRUCTION_CRASH_WITHOUT_PRIV_INSTRUCTION)
    elif reason == _AV_READ:
        is_gpf = represents_general_protection_fault(os, reason, address) and not_among()
        if is_gpf:
            if (
                analysis is not None
                and analysis.is_only_gpf_when_non_canonical
                and _non_canonical_absent(analysis)
            ):
                out.append(Inconsistency.NON_CANONICAL_ADDRESS_FALSELY_REPORTED)
        else:
            if not_among():
                out.append(Inconsistency.CRASHING_ACCESS_NOT_FOUND_IN_MEMORY_ACCESSES)
            if allowed():
                out.append(Inconsistency.ACCESS_VIOLATION_WHEN_ACCESS_ALLOWED)
    elif reason in (_STACK_OVERFLOW, _AV_WRITE, _AV_EXEC):
        if not_among():
            out.append(Inconsistency.CRASHING_ACCESS_NOT_FOUND_IN_MEMORY_ACCESSES)
        if allowed():
            out.append(Inconsistency.ACCESS_VIOLATION_WHEN_ACCESS_ALLOWED)
    return out


def _non_canonical_absent(analysis: InstructionAnalysis) -> bool:
    """`non_canonical_address_is_not_among_accesses` (False when it cannot be told)."""
    if not analysis.is_access_derivable or analysis.memory_accesses is None:
        return False
    if any(_non_canonical(a.address) for a in analysis.memory_accesses):
        return False
    update = analysis.instruction_pointer_update
    if update is None:
        return False
    return update is NO_UPDATE or (isinstance(update, MemoryAccess) and not _non_canonical(update.address))
