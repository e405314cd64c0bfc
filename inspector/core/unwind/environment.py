"""What the per-CPU unwinders work with: the stack memory, the modules, the symbols and the policy.

`WalkEnvironment` is shared by every thread of one dump (its memo of scan verdicts is keyed
by address and valid process-wide); `StackMemory` is one thread's stack region. Reads
outside the region answer None, as in rust-minidump, whose unwinders read only the
thread's stack.
"""

from __future__ import annotations

import struct

from inspector.core.minidump import CpuContext, MemoryRegion, Module, ModuleList
from inspector.core.record import record
from inspector.core.symbols import FrameSymbol, SymbolFile, Symbolizer
from inspector.core.types import Cpu, Os
from inspector.core.unwind.options import WalkOptions
from inspector.core.unwind.trace import MemoryWord

U64 = (1 << 64) - 1


def word_size(cpu: Cpu) -> int:
    """The unwinder's word: 4 on x86, arm and 32-bit mips (rust-minidump's Mips32Context), else 8."""
    return 4 if cpu in (Cpu.X86, Cpu.ARM, Cpu.MIPS) else 8


class StackMemory:
    """One thread's stack region, read in words of the CPU's width."""

    __slots__ = ("_base", "_data", "_size", "_unpack")

    def __init__(self, region: MemoryRegion) -> None:
        # The walk reads tens of thousands of words: one call per read, not three.
        self._base = region.base
        self._size = region.size
        self._data = region.data
        self._unpack = {
            width: struct.Struct(region.endian + code).unpack_from for width, code in ((4, "I"), (8, "Q"))
        }

    def read(self, address: int, width: int) -> int | None:
        # A region never extends past 2**64, so a read inside it cannot overflow the address space.
        offset = address - self._base
        if offset < 0 or offset + width > self._size:
            return None
        value: int = self._unpack[width](self._data, offset)[0]
        return value

    def word(self, address: int, width: int, role: str, register: str | None = None) -> MemoryWord:
        """Read a word and record it for the trace (`register`: the caller register it is read for)."""
        return MemoryWord(address, width, self.read(address, width), role, register)


@record
class CandidateVerdict:
    """Whether a stack word looks like a return address, with the module/symbol that decided it."""

    accepted: bool
    module: str | None
    symbol: str | None
    reason: str


class WalkEnvironment:
    """Process-wide inputs of a walk: CPU, OS, modules, symbols, options, and a memo of scan checks."""

    def __init__(
        self,
        *,
        cpu: Cpu,
        os: Os,
        modules: ModuleList,
        symbolizer: Symbolizer | None,
        options: WalkOptions,
    ) -> None:
        self.cpu = cpu
        self.os = os
        self.modules = modules
        self.symbolizer = symbolizer
        self.options = options
        #: the policy's fixed rules, looked up once: scans and symbol checks ask for them often
        self.rules = options.rules
        self.width = word_size(cpu)
        self._verdicts: dict[int, CandidateVerdict] = {}
        self._origins: dict[int, str | None] = {}
        self._pac_mask: int | None = None
        self._breakpad_pac_mask: int | None = None

    # ---- modules and symbols ----------------------------------------------------------------

    def module_at(self, address: int) -> tuple[int, Module] | None:
        index = self.modules.index_at(address)
        return None if index is None else (index, self.modules[index])

    def symbolize(self, module: Module, address: int) -> FrameSymbol | None:
        if self.symbolizer is None:
            return None
        return self.symbolizer.lookup(module, address - module.base)

    def unwind_symbols(self, module: Module) -> SymbolFile | None:
        """The module's symbol file as the unwinder may use it (for CFI, STACK WIN and scan checks).

        Situation: rust-minidump refuses a whole `.sym` file for things we read without
        trouble (a missing final newline, the old INLINE syntax, one malformed line) and
        then unwinds as if the module had no symbols: no CFI, and a scan accepts any word
        in the module. Example: Breakpad's `linux_inline.sym`, which lacks its final
        newline. Handling: under the rust-minidump policy (unless
        `unwind_with_rejected_symbols`) such a file names the frames but is not used for
        unwinding, so the frames stay rust-minidump's.
        """
        if self.symbolizer is None:
            return None
        status = self.symbolizer.status(module)
        if status.symbol_file is None:
            return None
        options = self.options
        rejected_ok = options.unwind_with_rejected_symbols or self.rules.unwind_with_rejected_symbols
        if status.rust_minidump_corrupt and not rejected_ok:
            return None
        return status.symbol_file

    def unwind_origin(self, module: Module) -> str | None:
        """Where the module's unwind rules come from (`ModuleSymbols.unwind_origin`), once per module."""
        if self.symbolizer is None:
            return None
        found = self._origins.get(module.base, self)
        if found is self:
            found = self._origins[module.base] = self.symbolizer.status(module).unwind_origin
        return found  # type: ignore[return-value]

    def unwind_symbols_missing_reason(self, module: Module) -> str:
        """Why `unwind_symbols` gave nothing (for the trace)."""
        if self.symbolizer is not None and self.symbolizer.status(module).symbol_file is not None:
            return f"{module.filename}'s symbols are ones rust-minidump rejects; not used for unwinding"
        return f"{module.filename} has no symbols"

    def return_address_verdict(self, value: int) -> CandidateVerdict:
        """rust-minidump's `instruction_seems_valid_by_symbols` (memoized per address).

        Situation: stack scanning needs to tell return addresses from other words.
        Example: a word 0x7f12_3456_7890 inside libc whose `.sym` has a FUNC there.
        Handling: look at `value - 1` (a call to a noreturn function may push an address
        one past the caller's end); reject 0 and addresses outside every loaded module;
        accept any address in a module without symbols (else scanning could never work
        without symbols); otherwise accept only if a FUNC or PUBLIC with a name covers it.
        """
        verdict = self._verdicts.get(value)
        if verdict is None:
            verdict = self._verdict(value)
            self._verdicts[value] = verdict
        return verdict

    def _verdict(self, value: int) -> CandidateVerdict:
        address = max(0, value - 1)
        if address == 0:
            return CandidateVerdict(False, None, None, "null")
        hit = self.module_at(address)
        if hit is None:
            return CandidateVerdict(False, None, None, "not in any loaded module")
        module = hit[1]
        name = module.filename
        symbol_file = self.unwind_symbols(module)
        if symbol_file is None:
            return CandidateVerdict(True, name, None, "in a module without usable symbols")
        relative = address - module.base
        function = symbol_file.find_function(relative)
        if function is not None:
            if function.name:
                return CandidateVerdict(True, name, function.name, "inside a function")
            return CandidateVerdict(False, name, None, "the function covering it has no name")
        public = symbol_file.find_public(relative)
        if public is not None and public.name:
            return CandidateVerdict(True, name, public.name, "after a PUBLIC symbol")
        return CandidateVerdict(False, name, None, "no FUNC or PUBLIC symbol covers it")

    # ---- arm64 pointer authentication -------------------------------------------------------

    @property
    def pointer_auth_mask(self) -> int:
        """rust-minidump's arm64 mask: all ones below the next power of two of max(2^47 - 1, top module end).

        Situation: ARMv8.3 pointer authentication puts a signature in the high bits of
        saved return addresses and frame pointers (Apple arm64e does this everywhere).
        Example: lr 0x2f8b_0001_0000_4123 for code at 0x1_0000_4123. Handling: mask off
        the bits above the highest plausible address: Apple's default 47-bit user space,
        or the end of the highest module if that is higher. Applied to every recovered
        pc/lr/fp, signed or not (a no-op on unsigned pointers).
        """
        if self._pac_mask is None:
            by_address = self.modules.by_address()
            top = by_address[-1].base + by_address[-1].size if by_address else 0
            highest = max((1 << 47) - 1, min(top, U64))
            power = 1 << (highest - 1).bit_length() if highest > 1 else 1
            self._pac_mask = U64 if power > U64 else power - 1
        return self._pac_mask

    def strip_pointer_auth(self, pointer: int) -> int:
        return pointer & self.pointer_auth_mask

    def breakpad_pointer_auth_strip(self, pointer: int) -> int:
        """Breakpad's variant: mask with the top module's end smeared down; keep it only inside a module."""
        if self._breakpad_pac_mask is None:
            # Without modules nothing is inside one: every pointer stays as it is, whatever the mask.
            by_address = self.modules.by_address()
            mask = by_address[-1].base + by_address[-1].size if by_address else U64
            for shift in (1, 2, 4, 8, 16, 32):
                mask |= mask >> shift
            self._breakpad_pac_mask = mask & U64
        stripped = pointer & self._breakpad_pac_mask
        return stripped if self.modules.index_at(stripped) is not None else pointer


def readable_registers(context: CpuContext, *, all_valid: bool) -> dict[str, int]:
    """The callee registers a STACK CFI rule may read, under the names rust-minidump accepts.

    A context frame (all registers valid) offers the CPU's general-purpose registers; a
    caller frame only those recovered for it. ARM's `r11`/`r13`/`r14`/`r15` and ARM64's
    `x29`/`x30` are accepted for `fp`/`sp`/`lr`/`pc`.
    """
    rs = context.register_set
    mask = (1 << (8 * word_size(context.cpu))) - 1
    values = dict(zip(rs.names, context.values, strict=True))
    out = {name: values[name] & mask for name in rs.print_order if all_valid or name in context.valid}
    if context.cpu in (Cpu.ARM, Cpu.ARM64):
        for alias, canonical in rs.aliases.items():
            if canonical in out:
                out[alias] = out[canonical]
    return out


def register_name(context: CpuContext, name: str) -> str | None:
    """rust-minidump's `memoize_register`: the canonical name of a register it knows, else None."""
    rs = context.register_set
    if name in rs.print_order:
        return name
    if context.cpu in (Cpu.ARM, Cpu.ARM64):
        return rs.aliases.get(name)
    return None
