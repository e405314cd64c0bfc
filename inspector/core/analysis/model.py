"""What the crash analysis finds, as frozen data the reports and the window render.

Two layers:

* one decoded instruction (`Instruction`): its text in rust-minidump's syntax, its operands
  (registers, immediates, memory operands that can be evaluated against any register set,
  branch targets), how it changes the flow of control. The Disassembly pane lists these;
  the crash analysis decodes one.
* the crash (`CrashAnalysis`): the crashing instruction with the memory it accessed, the
  instruction-pointer update, the adjusted address, possible bit flips and the
  inconsistencies between the exception and the instruction, computed with rust-minidump
  0.25's rules (`minidump-processor/src/op_analysis.rs`, `processor.rs`).
"""

from __future__ import annotations

from inspector.core.enums import Enum
from inspector.core.record import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:  # the alias is for type checkers (annotations are not evaluated)
    from collections.abc import Callable

    #: A register's value by name; None when the register is not known (e.g. not recovered in a caller frame).
    RegisterLookup = Callable[[str], int | None]

MASK64 = (1 << 64) - 1


class AccessType(Enum):
    """rust-minidump's `MemoryAccessType`; UNDERIVABLE is left out of its JSON (no `access_type`)."""

    READ = "read"
    WRITE = "write"
    READ_WRITE = "readwrite"
    UNDERIVABLE = "underivable"

    @property
    def label(self) -> str:
        """The human report's word ("Read", "Write", "ReadWrite")."""
        return {"read": "Read", "write": "Write", "readwrite": "ReadWrite"}.get(self.value, "Underivable")


class OperandKind(Enum):
    REGISTER = "register"
    IMMEDIATE = "immediate"
    MEMORY = "memory"
    BRANCH = "branch"  # a direct branch target (relative or absolute)
    OTHER = "other"  # register lists, shifts, condition flags, ...


class Flow(Enum):
    """How an instruction changes the flow of control."""

    NEXT = "next"
    BRANCH = "branch"
    CONDITIONAL_BRANCH = "conditional branch"
    INDIRECT_BRANCH = "indirect branch"
    CALL = "call"
    INDIRECT_CALL = "indirect call"
    RETURN = "return"
    INTERRUPT = "interrupt"
    EXCEPTION = "exception"  # ud2, brk, udf: stops execution on purpose


class MemoryOperand(Record):
    """`[segment: base + index * scale + displacement]`; register names as the disassembler prints them.

    `pc_relative_base` is the value the program counter reads as when it is the base (the next
    instruction on x86-64, the instruction + 8 / + 4 on ARM / Thumb); rust-minidump 0.25 uses
    the crashing instruction's own address for `rip`, and `evaluate(..., reference=True)` does too.
    """

    base: str | None
    index: str | None
    scale: int
    displacement: int
    size: int | None  # bytes accessed, None when unknown
    segment: str | None = None
    pc_relative_base: int | None = None
    post_index: bool = False  # ARM post-indexed: the access is at the base, the offset is added after
    masked: bool = False  # an AVX-512 op-mask applies (the access may not happen at all)

    @property
    def registers(self) -> tuple[str, ...]:
        return tuple(r for r in (self.base, self.index) if r is not None)

    def evaluate(self, registers: RegisterLookup, *, width: int = 8) -> int | None:
        """The address accessed, or None when a register it uses is not known."""
        mask = (1 << (width * 8)) - 1
        address = 0
        if self.base is not None:
            if self.pc_relative_base is not None:
                value: int | None = self.pc_relative_base
            else:
                value = registers(self.base)
            if value is None:
                return None
            address = value
        if self.index is not None:
            value = registers(self.index)
            if value is None:
                return None
            address += value * self.scale
        if not self.post_index:
            address += self.displacement
        return address & mask


class Operand(Record):
    kind: OperandKind
    text: str
    register: str | None = None  # REGISTER: its name
    value: int | None = None  # IMMEDIATE: its value; BRANCH: the target address
    memory: MemoryOperand | None = None  # MEMORY


class Instruction(Record):
    """One decoded instruction."""

    address: int
    size: int
    raw: bytes
    mnemonic: str
    text: str  # rust-minidump's (yaxpeax) syntax on x86; Capstone's on ARM
    operands: tuple[Operand, ...]
    flow: Flow
    branch_target: int | None = None  # direct branches and calls

    @property
    def memory_operands(self) -> tuple[MemoryOperand, ...]:
        return tuple(op.memory for op in self.operands if op.memory is not None)


class MemoryAccess(Record):
    address: int
    size: int | None
    access_type: AccessType
    is_likely_null_pointer: bool = False
    is_likely_guard_page: bool = False


class AdjustedKind(Enum):
    NULL_POINTER = "null-pointer"
    NON_CANONICAL = "non-canonical"


class AdjustedAddress(Record):
    """rust-minidump's `adjusted_address`.

    JSON `{kind: "null-pointer", offset}` or `{kind: "non-canonical", address}`.
    """

    kind: AdjustedKind
    value: int


class BitFlipDetails(Record):
    was_non_canonical: bool
    is_null: bool
    was_low: bool
    nearby_registers: int
    poison_registers: bool


class BitFlip(Record):
    """A valid address one flipped bit away from the crash address (or a register's value)."""

    address: int
    source_register: str | None
    details: BitFlipDetails
    confidence: float  # an f32 value, as rust-minidump computes and prints it


class Inconsistency(Enum):
    """rust-minidump's `CrashInconsistency` (JSON value) with its human sentence."""

    INT_DIV_BY_ZERO_NOT_POSSIBLE = "int_div_by_zero_not_possible"
    PRIV_INSTRUCTION_CRASH_WITHOUT_PRIV_INSTRUCTION = "priv_instruction_crash_without_priv_instruction"
    NON_CANONICAL_ADDRESS_FALSELY_REPORTED = "non_canonical_address_falsely_reported"
    ACCESS_VIOLATION_WHEN_ACCESS_ALLOWED = "access_violation_when_access_allowed"
    CRASHING_ACCESS_NOT_FOUND_IN_MEMORY_ACCESSES = "crashing_access_not_found_in_memory_accesses"

    @property
    def sentence(self) -> str:
        return _INCONSISTENCY_SENTENCES[self]


_INCONSISTENCY_SENTENCES = {
    Inconsistency.INT_DIV_BY_ZERO_NOT_POSSIBLE: (
        "Crash reason is an integer division by zero but the crashing instruction is not a division"
    ),
    Inconsistency.PRIV_INSTRUCTION_CRASH_WITHOUT_PRIV_INSTRUCTION: (
        "Crash reason is a privileged instruction but crashing instruction is not a privileged one"
    ),
    Inconsistency.NON_CANONICAL_ADDRESS_FALSELY_REPORTED: (
        "Crash address is reported as a non-canonical x86-64 address "
        "but the actual address is a canonical one"
    ),
    Inconsistency.ACCESS_VIOLATION_WHEN_ACCESS_ALLOWED: (
        "Crash reason is access violation exception but access is allowed"
    ),
    Inconsistency.CRASHING_ACCESS_NOT_FOUND_IN_MEMORY_ACCESSES: (
        "Crash address not found among the memory accesses of the crashing instruction"
    ),
}


class CodeOrigin(Enum):
    DUMP = "dump"  # the dump's memory at the instruction pointer
    MODULE_FILE = "module file"  # the module's file on this machine (its identity checked)
    NONE = "none"  # neither has it: `note` says what was tried


class CodeSource(Record):
    """Where the crashing instruction's bytes came from (JSON `crash_info.inspector_code_source`)."""

    origin: CodeOrigin
    address: int
    size: int  # bytes available from `address` (the decoder saw these)
    path: str | None = None  # MODULE_FILE: the file read
    module: str | None = None  # the module the address is in
    note: str | None = None  # NONE: why no module file was used


class InstructionAnalysis(Record):
    """rust-minidump's `OpAnalysis` for the crashing instruction.

    `memory_accesses` is None when they could not be worked out (a register the instruction
    uses is not valid), and empty when the instruction accesses no memory.
    `instruction_pointer_update` is None when it could not be worked out, `NO_UPDATE` when the
    instruction does not move the instruction pointer, else the new address's access.
    """

    instruction: Instruction
    memory_accesses: tuple[MemoryAccess, ...] | None
    instruction_pointer_update: MemoryAccess | NoUpdate | None
    registers: tuple[str, ...]  # base / index registers of its memory operands, sorted
    is_access_derivable: bool
    is_division: bool
    is_privileged: bool
    is_only_gpf_when_non_canonical: bool


class NoUpdate(Enum):
    """The instruction does not change the instruction pointer."""

    NO_UPDATE = "no update"


NO_UPDATE = NoUpdate.NO_UPDATE


class AnalysisProblem(Record):
    """Why the crashing instruction could not be analysed (or only in part); goes to `inspector_problems`."""

    code: str
    message: str


class CrashAnalysis(Record):
    """Everything the analysis found about the crash.

    The fields are rust-minidump's. It analyses amd64 only (`cpu_supported_by_reference`): for
    x86, ARM and ARM64 they are what it reports without an instruction, and
    `beyond_reference` holds the analysis with the instruction we decoded, which the human
    report and the window show, and the JSON only when asked (`--analysis-all-cpus`).
    """

    cpu_supported_by_reference: bool
    instruction: InstructionAnalysis | None
    adjusted_address: AdjustedAddress | None
    possible_bit_flips: tuple[BitFlip, ...]
    inconsistencies: tuple[Inconsistency, ...]
    code_source: CodeSource | None
    problems: tuple[AnalysisProblem, ...] = ()
    beyond_reference: CrashAnalysis | None = None
