"""The unwind trace: why each caller frame was found, and why a walk stopped, as plain data.

Every caller frame carries an `UnwindStep`: the strategies tried for its callee in order
(`StrategyAttempt`: strategy, outcome, one-sentence reason, the registers it produced and a
strategy-specific detail), which one was chosen, and the checks applied to the result
before it was accepted. A walk ends with a `Termination` that keeps the step that failed.

The details are what the GUI steps through:

* `CfiDetail` — the STACK CFI INIT row and the delta rows applied, the composed rules, the
  callee registers forwarded, and each rule's postfix evaluation (`PostfixResult`: every
  token with the stack after it and every memory read).
* `StackWinDetail` — the STACK WIN record, the program used (the record's, or the one
  synthesised for FPO data), the initial variables, the evaluation, and for Breakpad's
  heuristics the extra searches.
* `FramePointerDetail` — for each frame-pointer position tried, the words read and each
  sanity check with its result.
* `ScanDetail` — the scanned window and every candidate word: where, what, which module and
  symbol, accepted or why rejected; plus how the frame pointer was recovered.

Everything is frozen: a walk's trace can be handed to another thread as it is.

**Recorded compactly, built when read.** The walk records every frame's trace, but only
`--trace`, the explanation tree and the GUI read it, and then only for some frames. So the
parts made for every word, check and frame are kept in the form the walk has them, and their
readers' form is made when they ask:

* texts (`Text`): an attempt's reason (`StrategyAttempt.why` → `.reason`), a check's
  description (`Check.text` → `.description`), why a scan ended (`ScanDetail.ended` →
  `.stopped`) are kept as a `str.format` template and its arguments (formatting its hex
  numbers cost more than building the rest of a check);
* rows: checks and memory words are kept by their containers as tuples of their fields
  (`CheckRow`, `WordRow`: `UnwindStep.post_check_rows`, `FramePointerProbe.read_rows`, ...)
  and the `Check` / `MemoryWord` records are built from them at each read (`.post_checks`,
  `.reads`, ...);
* a scan's words: their addresses (a `range`), values and verdicts (shared by every word of
  the dump with that value); `ScanDetail.candidates` builds the `ScanCandidate`s once, on
  first read, and keeps them (`keep`);
* an attempt's registers: `StrategyAttempt.registers` is read off the caller's context it keeps.

Readers get the same values as if everything had been built at once; two records compare
equal when what they recorded is equal.
"""

from __future__ import annotations

from inspector.core.enums import Enum
from inspector.core.minidump import CpuContext
from inspector.core.record import Record, field
from inspector.core.symbols import CfiRow, PostfixResult, StackWinRecord

#: A text as the walk records it: the text itself, or a `str.format` template and its arguments,
#: formatted when the text is read (see the module's docstring).
Text = str | tuple[object, ...]


def as_text(text: Text) -> str:
    """The text a `Text` stands for."""
    if isinstance(text, str):
        return text
    template, *arguments = text
    return str(template).format(*arguments)


def keep(built: object, name: str, value: object) -> None:
    """Store a part built on first read in its record (see the module's docstring)."""
    object.__setattr__(built, name, value)


#: A `MemoryWord` as the walk records it: its fields, (address, size, value, role, register).
WordRow = tuple[int, int, int | None, str, str | None]
#: A `Check` as the walk records it: its fields, (text, passed).
CheckRow = tuple[Text, bool]


def words_of(rows: tuple[WordRow, ...]) -> tuple[MemoryWord, ...]:
    """The `MemoryWord`s of recorded rows (see the module's docstring)."""
    return tuple([MemoryWord(*row) for row in rows])


def checks_of(rows: tuple[CheckRow, ...]) -> tuple[Check, ...]:
    """The `Check`s of recorded rows (see the module's docstring)."""
    return tuple([Check(*row) for row in rows])


class Strategy(Enum):
    """A way of finding a caller frame (value: the name shown in traces)."""

    CFI = "STACK CFI"
    STACK_WIN_FRAME_DATA = "STACK WIN frame data"
    STACK_WIN_FPO = "STACK WIN FPO"
    FRAME_POINTER = "frame pointer"
    SCAN = "stack scan"
    LEAF = "leaf return"
    CFI_SCAN = "STACK WIN with scanning"


class Outcome(Enum):
    FOUND = "found"
    FAILED = "failed"
    NOT_APPLICABLE = "not applicable"
    REJECTED = "rejected by post-checks"
    SKIPPED = "not tried"


class MemoryWord(Record):
    """One word read from stack memory (`value` None: not readable) and what it was read as.

    `register`: the caller register the word was read for (the caller's `rip` of a frame
    record, its saved `rbp`, ...); the caller holds the word's value only if the strategy,
    and any check on the word, accepted it.
    """

    address: int
    size: int
    value: int | None
    role: str
    register: str | None = None


class Check(Record):
    """One sanity check and whether it passed (`text`: its description as recorded, see `Text`)."""

    text: Text
    passed: bool

    @property
    def description(self) -> str:
        return as_text(self.text)


class RuleEffect(Enum):
    """What a STACK CFI rule did to the caller's registers."""

    CFA = "caller stack pointer (.cfa)"
    RETURN_ADDRESS = "caller instruction pointer (.ra)"
    SET = "register set"
    DROPPED = "evaluation failed: register dropped"
    UNKNOWN_REGISTER = "no such register: ignored"
    TOO_WIDE = "value wider than the register: ignored"
    FAILED = "evaluation failed: CFI unusable"


class RuleEvaluation(Record):
    """One STACK CFI rule as the walk evaluated it, in evaluation order (`.cfa`, `.ra`, the rest).

    `target`: the caller register the rule decides, by its canonical name (the stack pointer
    for `.cfa`, the instruction pointer for `.ra`); None for a register the CPU does not have,
    and for a dropped alias that named no register of the caller.
    """

    register: str  # ".cfa", ".ra", or a register name as written (without `$`)
    expression: str
    result: PostfixResult
    effect: RuleEffect
    target: str | None = None


class CfiDetail(Record):
    """A STACK CFI evaluation: the rows in force and every rule's evaluation."""

    module: str
    address: int  # module-relative instruction address looked up
    init: CfiRow | None
    rows_applied: tuple[CfiRow, ...]
    rules: tuple[tuple[str, str], ...]  # composed (register, expression), INIT first
    forwarded: tuple[str, ...]  # callee-saved registers carried over unless a rule says otherwise
    callee_registers: tuple[tuple[str, int], ...]  # registers the rules could read
    evaluations: tuple[RuleEvaluation, ...]
    note: str | None = None
    #: where the rules come from: the `.sym` file, or the unwind tables of which object (`unwind_origin`)
    origin: str | None = None


class ScanCandidate(Record):
    """A stack word examined as a possible return address."""

    address: int
    value: int
    module: str | None
    symbol: str | None
    accepted: bool
    reason: str


class CandidateVerdict(Record):
    """Whether a stack word looks like a return address, with the module/symbol that decided it."""

    accepted: bool
    module: str | None
    symbol: str | None
    reason: str


class ScanDetail(Record):
    """One stack scan: the window, every candidate, and the frame-pointer recovery after a hit.

    The words examined are kept as the scan saw them: where (`addresses`, one step of the
    word size apart, or downwards for Breakpad's saved-ebp search), what they hold (`values`)
    and the verdict on each (`verdicts`, shared by every word of the dump with that value);
    `candidates` is built from them when first read (see the module's docstring).
    """

    start: int
    window_words: int
    word_size: int
    addresses: range
    values: tuple[int, ...]
    verdicts: tuple[CandidateVerdict, ...]
    ended: Text  # why the scan ended (`stopped`)
    frame_pointer_read_rows: tuple[WordRow, ...] = ()  # `frame_pointer_reads`
    frame_pointer_check_rows: tuple[CheckRow, ...] = ()  # `frame_pointer_checks`
    purpose: str = "return address"
    _candidates: tuple[ScanCandidate, ...] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def candidates(self) -> tuple[ScanCandidate, ...]:
        """Every word examined, in order, with its verdict (built on first read, then kept)."""
        built = self._candidates
        if built is None:
            built = tuple(
                ScanCandidate(address, value, v.module, v.symbol, v.accepted, v.reason)
                for address, value, v in zip(self.addresses, self.values, self.verdicts, strict=True)
            )
            keep(self, "_candidates", built)
        return built

    @property
    def stopped(self) -> str:
        """Why the scan ended: a hit, the window, or the end of readable memory."""
        return as_text(self.ended)

    @property
    def frame_pointer_reads(self) -> tuple[MemoryWord, ...]:
        """The words read to recover the frame pointer after a hit (x86/amd64)."""
        return words_of(self.frame_pointer_read_rows)

    @property
    def frame_pointer_checks(self) -> tuple[Check, ...]:
        return checks_of(self.frame_pointer_check_rows)

    @property
    def end(self) -> int:
        """One past the last byte of the window."""
        return self.start + self.window_words * self.word_size

    @property
    def accepted(self) -> ScanCandidate | None:
        for i, verdict in enumerate(self.verdicts):
            if verdict.accepted:
                return self.candidates[i]
        return None


class FramePointerProbe(Record):
    """One frame-pointer position tried: `offset` bytes above the callee's frame pointer, the words
    read there and the checks made on them (recorded as rows: `reads`, `checks`)."""

    offset: int
    read_rows: tuple[WordRow, ...]
    check_rows: tuple[CheckRow, ...]
    accepted: bool

    @property
    def reads(self) -> tuple[MemoryWord, ...]:
        return words_of(self.read_rows)

    @property
    def checks(self) -> tuple[Check, ...]:
        return checks_of(self.check_rows)


class FramePointerDetail(Record):
    register: str
    value: int
    probes: tuple[FramePointerProbe, ...]


class StackWinDetail(Record):
    """A STACK WIN evaluation (rust-minidump's, or Breakpad's with its heuristics)."""

    module: str
    address: int
    record: StackWinRecord
    program: str
    program_source: str  # "record", or how the program was synthesised
    variables: tuple[tuple[str, int], ...]  # initial variables
    evaluation: PostfixResult | None
    read_rows: tuple[WordRow, ...] = ()  # `reads`
    check_rows: tuple[CheckRow, ...] = ()  # `checks`
    searches: tuple[ScanDetail, ...] = ()
    origin: str | None = None  # where the record comes from (as `CfiDetail.origin`)

    @property
    def reads(self) -> tuple[MemoryWord, ...]:
        return words_of(self.read_rows)

    @property
    def checks(self) -> tuple[Check, ...]:
        return checks_of(self.check_rows)


AttemptDetail = CfiDetail | StackWinDetail | FramePointerDetail | ScanDetail | None


class StrategyAttempt(Record):
    """One strategy tried for a callee: its outcome, why (`why`, see `Text`), its detail, and the
    caller's context it produced (None: none), whose valid registers are `registers`."""

    strategy: Strategy
    outcome: Outcome
    why: Text
    detail: AttemptDetail = None
    caller: CpuContext | None = None

    @property
    def reason(self) -> str:
        """The outcome's one-sentence reason."""
        return as_text(self.why)

    @property
    def registers(self) -> tuple[tuple[str, int], ...]:
        """The caller's valid registers this attempt produced (rust-minidump's print order)."""
        return () if self.caller is None else tuple(self.caller.valid_registers())

    def with_outcome(self, outcome: Outcome, why: Text) -> StrategyAttempt:
        return StrategyAttempt(self.strategy, outcome, why, self.detail, self.caller)


class UnwindStep(Record):
    """How the caller of frame `callee_index` was looked for (and, if `chosen` is set, found)."""

    callee_index: int
    attempts: tuple[StrategyAttempt, ...]
    chosen: int | None = None  # index into `attempts`
    post_check_rows: tuple[CheckRow, ...] = ()  # `post_checks`
    instruction_adjustment: int = 0  # instruction = return address - this

    @property
    def chosen_attempt(self) -> StrategyAttempt | None:
        return None if self.chosen is None else self.attempts[self.chosen]

    @property
    def post_checks(self) -> tuple[Check, ...]:
        """The checks the chosen attempt's caller had to pass, up to the first that failed."""
        return checks_of(self.post_check_rows)


class TerminationReason(Enum):
    NO_CALLER = "no strategy found a caller"
    NULL_INSTRUCTION = "the caller's instruction pointer is below 4096 (end of stack)"
    STACK_POINTER_NOT_INCREASING = "the caller's stack pointer did not increase"
    NO_STACK_MEMORY = "the thread has no stack memory"
    MAX_FRAMES = "the frame limit was reached"
    DUMP_FRAME_BUDGET = "the frame limit of the whole dump was reached"
    NO_CONTEXT = "the thread has no CPU context"
    UNSUPPORTED_CPU = "the CPU is not supported by the stackwalker"
    DUMP_THREAD_SKIPPED = "the thread wrote the dump and is not walked"


class Termination(Record):
    """Why a walk stopped; `step` is the last unwind step (with its failed or rejected attempts)."""

    reason: TerminationReason
    message: str
    step: UnwindStep | None = None

    @property
    def failed_attempts(self) -> tuple[StrategyAttempt, ...]:
        return () if self.step is None else self.step.attempts
