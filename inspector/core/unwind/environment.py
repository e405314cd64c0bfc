"""What the per-CPU unwinders work with: the stack memory, the modules, the symbols and the policy.

`WalkEnvironment` is shared by every thread of one dump (its memos, of scan verdicts by word
value and of lookups by instruction address, are valid for the whole dump); `StackMemory` is
one thread's stack region. Reads
outside the region answer None, as in rust-minidump, whose unwinders read only the
thread's stack.
"""

from __future__ import annotations

import struct

from inspector.core.minidump import CpuContext, MemoryRegion, Module, ModuleList
from inspector.core.symbols import CfiLookup, FrameSymbol, ModuleSymbols, SymbolFile, Symbolizer
from inspector.core.types import Cpu, Os
from inspector.core.unwind.frame import FrameTrust
from inspector.core.unwind.options import WalkOptions
from inspector.core.unwind.trace import CandidateVerdict, WordRow

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from inspector.core.unwind.cpu import Prefilter

    T = TypeVar("T")

U64 = (1 << 64) - 1
#: struct codes of the word widths the walk reads
_CODES = {4: "I", 8: "Q"}


#: The verdicts on words outside every module, shared (most scanned words are such)
_NULL = CandidateVerdict(False, None, None, "null")
_OUTSIDE_MODULES = CandidateVerdict(False, None, None, "not in any loaded module")


def word_size(cpu: Cpu) -> int:
    """The unwinder's word: 4 on x86, arm and 32-bit mips (rust-minidump's Mips32Context), else 8."""
    return 4 if cpu in (Cpu.X86, Cpu.ARM, Cpu.MIPS) else 8


class StackMemory:
    """One thread's stack region, read in words of the CPU's width."""

    __slots__ = ("_base", "_data", "_endian", "_size", "_unpack")

    def __init__(self, region: MemoryRegion) -> None:
        # The walk reads tens of thousands of words: one call per read, not three.
        self._base = region.base
        self._size = region.size
        self._data = region.data
        self._endian = region.endian
        self._unpack = {
            width: struct.Struct(region.endian + code).unpack_from for width, code in _CODES.items()
        }

    def read(self, address: int, width: int) -> int | None:
        # A region never extends past 2**64, so a read inside it cannot overflow the address space.
        offset = address - self._base
        if offset < 0 or offset + width > self._size:
            return None
        value: int = self._unpack[width](self._data, offset)[0]
        return value

    def words(self, start: int, count: int, width: int) -> tuple[int, ...]:
        """Up to `count` words from `start` on, in one read: those before the first unreadable one."""
        offset = start - self._base
        if offset < 0:
            return ()
        count = min(count, (self._size - offset) // width)
        if count <= 0:
            return ()
        return struct.unpack_from(f"{self._endian}{count}{_CODES[width]}", self._data, offset)

    def word(self, address: int, width: int, role: str, register: str | None = None) -> WordRow:
        """Read a word as the trace records it (`register`: the caller register it is read for)."""
        return (address, width, self.read(address, width), role, register)


class WalkEnvironment:
    """Process-wide inputs of a walk: CPU, OS, modules, symbols, options, and memos of lookups.

    The memos (each module's symbols, a frame instruction's module, symbol and STACK CFI, scan
    verdicts by word value, `per_module` results) are valid for the whole dump: its modules and
    symbol files do not change while it is walked. One environment serves one dump.
    """

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
        #: `WalkOptions.scanned_frame_limit`, asked before every scan
        self.scanned_frame_limit = options.scanned_frame_limit
        #: the callees after which a scan reads the first, longer window (`scan.scan_words`)
        self.extended_scans_after = (
            (FrameTrust.CONTEXT, FrameTrust.CFI)
            if options.extended_scan_after_cfi and self.rules.later_switches
            else (FrameTrust.CONTEXT,)
        )
        #: symbol files rust-minidump refuses are used for unwinding too (see `unwind_symbols`)
        self._rejected_ok = options.unwind_with_rejected_symbols or self.rules.unwind_with_rejected_symbols
        self._verdicts: dict[int, CandidateVerdict] = {}
        self._scan_memos: dict[Prefilter | None, dict[int, CandidateVerdict]] = {}
        #: id(module) -> (the module, its symbols, its symbol file for unwinding); the module is kept
        #: so that an id is never taken for another object's
        self._symbols: dict[int, tuple[Module, ModuleSymbols | None, SymbolFile | None]] = {}
        self._per_module: dict[tuple[int, object], tuple[Module, Any]] = {}
        #: by instruction address: `frame_symbols` and `cfi_lookup`
        self._frame_symbols: dict[int, tuple[int, Module, FrameSymbol | None] | None] = {}
        self._cfi: dict[int, CfiLookup | None] = {}
        self._origins: dict[int, str | None] = {}
        self._pac_mask: int | None = None
        self._breakpad_pac_mask: int | None = None

    # ---- modules and symbols ----------------------------------------------------------------

    def module_at(self, address: int) -> tuple[int, Module] | None:
        index = self.modules.index_at(address)
        return None if index is None else (index, self.modules.modules[index])

    def _module_symbols(self, module: Module) -> tuple[Module, ModuleSymbols | None, SymbolFile | None]:
        """The module's symbols and its symbol file for unwinding, asked of the symbolizer once per module."""
        known = self._symbols.get(id(module))
        if known is not None and known[0] is module:
            return known
        status = None if self.symbolizer is None else self.symbolizer.status(module)
        unwind = None if status is None else status.symbol_file
        if status is not None and status.rust_minidump_corrupt and not self._rejected_ok:
            unwind = None
        known = self._symbols[id(module)] = (module, status, unwind)
        return known

    def symbolize(self, module: Module, address: int) -> FrameSymbol | None:
        status = self._module_symbols(module)[1]
        if status is None or status.symbol_file is None:
            return None
        return status.symbol_file.symbolize(address - module.base)

    def frame_symbols(self, address: int) -> tuple[int, Module, FrameSymbol | None] | None:
        """The module covering a frame's instruction (its index) and the symbol there; None when no
        module does. Memoized per address: the threads of a dump often stand at the same instructions
        (half the corpus's frames repeat another frame's of the same dump)."""
        if address in self._frame_symbols:
            return self._frame_symbols[address]
        hit = self.module_at(address)
        known = self._frame_symbols[address] = (
            None if hit is None else (*hit, self.symbolize(hit[1], address))
        )
        return known

    def cfi_lookup(self, module: Module, address: int) -> CfiLookup | None:
        """The STACK CFI rules in force at `address` in `module` (which has `unwind_symbols`), memoized
        per address as `frame_symbols`."""
        if address in self._cfi:
            return self._cfi[address]
        symbols = self.unwind_symbols(module)
        known = self._cfi[address] = None if symbols is None else symbols.find_cfi(address - module.base)
        return known

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
        return self._module_symbols(module)[2]

    def unwind_origin(self, module: Module) -> str | None:
        """Where the module's unwind rules come from (`ModuleSymbols.unwind_origin`), once per module."""
        if self.symbolizer is None:
            return None
        found = self._origins.get(module.base, self)
        if found is self:
            status = self._module_symbols(module)[1]
            found = self._origins[module.base] = None if status is None else status.unwind_origin
        return found  # type: ignore[return-value]

    def unwind_symbols_missing_reason(self, module: Module) -> str:
        """Why `unwind_symbols` gave nothing (for the trace)."""
        status = self._module_symbols(module)[1]
        if status is not None and status.symbol_file is not None:
            return f"{module.filename}'s symbols are ones rust-minidump rejects; not used for unwinding"
        return f"{module.filename} has no symbols"

    def per_module(self, module: Module, make: Callable[[WalkEnvironment, Module], T]) -> T:
        """`make(self, module)`, made once per module of the dump: for what a strategy records the same
        way for every frame of a module (STACK CFI's "no symbols to unwind with"; records are immutable,
        so its frames share one)."""
        key = (id(module), make)
        known = self._per_module.get(key)
        if known is None or known[0] is not module:
            known = self._per_module[key] = (module, make(self, module))
        return known[1]

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

    def scan_verdicts(self, prefilter: Prefilter | None) -> dict[int, CandidateVerdict]:
        """The verdicts on scanned words, by value, with this pre-filter (None: none), filled by `judge`.

        A scan looks at tens of thousands of words a corpus pass, mostly the same values again
        (each frame's window overlaps the last): a word's verdict depends only on its value, the
        pre-filter and the dump, so it is decided once per dump.
        """
        memo = self._scan_memos.get(prefilter)
        if memo is None:
            memo = self._scan_memos[prefilter] = {}
        return memo

    def judge(
        self, value: int, prefilter: Prefilter | None, memo: dict[int, CandidateVerdict]
    ) -> CandidateVerdict:
        """A scanned word's verdict (the pre-filter's rejection, else `return_address_verdict`), memoized."""
        reason = None if prefilter is None else prefilter(value)
        verdict = (
            self.return_address_verdict(value)
            if reason is None
            else CandidateVerdict(False, None, None, reason)
        )
        memo[value] = verdict
        return verdict

    def _verdict(self, value: int) -> CandidateVerdict:
        address = max(0, value - 1)
        if address == 0:
            return _NULL
        index = self.modules.index_at(address)
        if index is None:
            return _OUTSIDE_MODULES
        module = self.modules.modules[index]
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
