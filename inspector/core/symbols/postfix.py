"""Postfix expressions of STACK CFI and STACK WIN records, evaluated with a step-by-step trace.

The semantics are rust-minidump's (`breakpad-symbols/src/sym_file/walker.rs`),
with Breakpad's register-width arithmetic:

STACK CFI (`evaluate_cfi`): tokens split on ASCII whitespace; binary `+ - * /
% @` (the right operand is popped first), unary `^` (read a word of stack
memory), `.cfa` (the CFA; not available while computing the CFA itself),
`.undef` (the value is explicitly unknown: the expression fails), a signed
decimal literal in i64 range, `$name` or `name` (a callee register; a token
containing `$` names the register after the first `$`). Exactly one value
must remain.

STACK WIN (`evaluate_win`): the same operators plus `=` (assign the popped
value to the variable below it; assigning `.undef` deletes the variable), and
a token `=X` is read as `=` `X` (an MSVC quirk). Operands are `$name` and
`.name` variables (their value is read when an operator pops them), `.undef`
and i32 literals; no bare register names. The stack need not be empty at the
end (rust-minidump does not check; `PostfixResult.leftover` says how many
values remained). `win_variables` builds the initial variables
(`$esp $ebp [$ebx] .cbParams .cbCalleeParams .cbSavedRegs .cbLocals .raSearch
.raSearchStart`) as rust-minidump does, `.raSearch` being `$ebp + 4` when the
program uses `@`, else `$esp + frame size`.

Arithmetic wraps in the register width (`width` bytes, 4 or 8); `/` and `%`
by zero, `@` by anything but a non-zero power of two, an unknown name, a
stack underflow, more than `MAX_TOKENS` tokens or a stack deeper than
`MAX_STACK` fail the expression with a reason. Memory is read through a
`read_word(address) -> int | None` callable supplied by the walker; every
read is recorded (address, size, value or None).

`parse_cfi_rules` splits a CFI rule text (`.cfa: $rsp 8 + .ra: .cfa -8 + ^`)
into (register, expression) pairs the way rust-minidump does, and
`compose_cfi_rules` applies an INIT row and its delta rows in order.
"""

from __future__ import annotations

import itertools

from inspector.core.record import Record, field
from inspector.core.symbols.records import StackWinRecord

MAX_TOKENS = 10_000
MAX_STACK = 1_000

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:  # the alias is for type checkers (annotations are not evaluated)
    from collections.abc import Callable, Iterable, Mapping

    ReadWord = Callable[[int], int | None]

#: Rust's `split_ascii_whitespace`: space, \t, \n, \x0c, \r (not \x0b).
_TOKEN = r"[^ \t\n\x0c\r]+"
_BINARY = frozenset("+-*/%@")
#: The longest text split with `str.split(" ")` (`_plain`): longer ones go through the regular
#: expressions, which stop at `MAX_TOKENS`
_PLAIN_MAX = 4096


def _plain(text: str) -> bool:
    """Short, and spaces are its only ASCII whitespace: `text.split(" ")` then splits it as Rust's
    `split_ascii_whitespace` would (with empty pieces between runs of spaces), with no regular
    expression to compile or run: the rules of every `.sym` file are written so."""
    return (
        len(text) <= _PLAIN_MAX
        and "\t" not in text
        and "\n" not in text
        and "\r" not in text
        and "\x0c" not in text
    )


class MemoryRead(Record):
    address: int
    size: int
    value: int | None  # None: the address is not in readable memory


#: A stack entry shown in the trace: a number, or (STACK WIN) a variable name or ".undef".
StackItem = int | str


class PostfixStep(Record):
    """The state after one token."""

    token: str
    stack: tuple[StackItem, ...]
    read: MemoryRead | None = None
    assignment: tuple[str, int | None] | None = None  # STACK WIN `=`: (variable, value; None = deleted)


#: A `PostfixStep` as its fields: (token, stack, read, assignment)
StepRow = tuple[str, tuple[StackItem, ...], MemoryRead | None, tuple[str, int | None] | None]


class PostfixResult(Record):
    """The outcome of one expression: a value (CFI), final variables (WIN), the trace, or why it failed."""

    expression: str
    value: int | None = None
    variables: Mapping[str, int] = field(default_factory=dict)
    #: the trace, a row per token (`steps` builds them into `PostfixStep`s when read: the walk
    #: evaluates hundreds of rules a dump whose steps only an explanation looks at)
    rows: tuple[StepRow, ...] = ()
    error: str | None = None
    leftover: int = 0  # STACK WIN: values left on the stack

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def steps(self) -> tuple[PostfixStep, ...]:
        """The state after each token."""
        return tuple(PostfixStep(*row) for row in self.rows)

    @property
    def reads(self) -> tuple[MemoryRead, ...]:
        return tuple(row[2] for row in self.rows if row[2] is not None)


class _Failure(Exception):
    pass


def _tokens(expression: str) -> list[str]:
    if _plain(expression):  # at most _PLAIN_MAX / 2 tokens
        return [token for token in expression.split(" ") if token]
    # stop reading at the limit: a hostile expression may hold millions of tokens
    import re  # (on first use, like the patterns of line_parser)

    found = re.compile(_TOKEN).finditer(expression)  # (compiled once: `re` keeps it)
    tokens = [m.group() for m in itertools.islice(found, MAX_TOKENS + 1)]
    if len(tokens) > MAX_TOKENS:
        raise _Failure(f"expression has more than {MAX_TOKENS} tokens")
    return tokens


def _literal(token: str, bits: int) -> int | None:
    """rust's `i64::from_str` / `i32::from_str`: None when not an integer or out of range."""
    digits = token[1:] if token[:1] in ("+", "-") else token
    if not (digits.isascii() and digits.isdigit()):  # one or more of 0-9 after an optional sign
        return None
    value = int(token)
    limit = 1 << (bits - 1)
    return value if -limit <= value < limit else None


def _arithmetic(op: str, lhs: int, rhs: int, mask: int) -> int:
    if op == "+":
        return (lhs + rhs) & mask
    if op == "-":
        return (lhs - rhs) & mask
    if op == "*":
        return (lhs * rhs) & mask
    if op == "/":
        if rhs == 0:
            raise _Failure("division by zero")
        return (lhs // rhs) & mask
    if op == "%":
        if rhs == 0:
            raise _Failure("remainder by zero")
        return (lhs % rhs) & mask
    # "@": align down to a power of two
    if rhs == 0 or rhs & (rhs - 1):
        raise _Failure(f"alignment {rhs} is not a power of two")
    return lhs & (mask ^ (rhs - 1))


def _read(read_word: ReadWord, address: int, size: int, mask: int) -> tuple[int, MemoryRead]:
    value = read_word(address)
    record = MemoryRead(address, size, None if value is None else value & mask)
    if value is None:
        raise _ReadFailure(record)
    return value & mask, record


class _ReadFailure(_Failure):
    def __init__(self, read: MemoryRead) -> None:
        super().__init__(f"cannot read {read.size} bytes of memory at {read.address:#x}")
        self.read = read


def evaluate_cfi(
    expression: str,
    *,
    registers: Mapping[str, int],
    read_word: ReadWord,
    cfa: int | None = None,
    width: int = 8,
    read_size: int | None = None,
) -> PostfixResult:
    """Evaluate one STACK CFI expression; `registers` are the callee's valid registers (no `$`).

    `read_size`: the bytes `read_word` reads, as recorded in the trace (default `width`);
    rust-minidump computes in 64 bits on every CPU but reads words of the CPU's width.
    """
    mask = (1 << (8 * width)) - 1
    size = width if read_size is None else read_size
    steps: list[StepRow] = []
    stack: list[int] = []
    try:
        for token in _tokens(expression):
            read = None
            if token in _BINARY:
                if len(stack) < 2:
                    raise _Failure(f"'{token}' needs two operands")
                rhs, lhs = stack.pop(), stack.pop()
                stack.append(_arithmetic(token, lhs, rhs, mask))
            elif token == "^":
                if not stack:
                    raise _Failure("'^' needs an operand")
                try:
                    value, read = _read(read_word, stack.pop(), size, mask)
                except _ReadFailure as failure:
                    steps.append((token, tuple(stack), failure.read, None))
                    raise
                stack.append(value)
            elif token == ".cfa":
                if cfa is None:
                    raise _Failure(".cfa is not available here")
                stack.append(cfa & mask)
            elif token == ".undef":
                raise _Failure("the value is undefined (.undef)")
            elif "$" in token:
                name = token.split("$", 1)[1]
                if name not in registers:
                    raise _Failure(f"register {name} has no value")
                stack.append(registers[name] & mask)
            elif (literal := _literal(token, 64)) is not None:
                stack.append(literal & mask)
            elif token in registers:
                stack.append(registers[token] & mask)
            else:
                raise _Failure(f"unknown token '{token}'")
            if len(stack) > MAX_STACK:
                raise _Failure(f"stack deeper than {MAX_STACK}")
            steps.append((token, tuple(stack), read, None))
        if len(stack) != 1:
            raise _Failure(f"expression leaves {len(stack)} values instead of one")
    except _Failure as failure:
        return PostfixResult(expression, rows=tuple(steps), error=str(failure))
    return PostfixResult(expression, value=stack[0], rows=tuple(steps))


class _Variable(str):
    """A STACK WIN variable name on the stack (its value is read when an operator pops it)."""


_UNDEF = ".undef"


def _win_tokens(program: str) -> list[str]:
    tokens: list[str] = []
    for token in _tokens(program):
        if token.startswith("=") and len(token) > 1:  # MSVC: "=$eip" means "=" "$eip"
            tokens.extend(("=", token[1:]))
        else:
            tokens.append(token)
    if len(tokens) > MAX_TOKENS:
        raise _Failure(f"program has {len(tokens)} tokens (more than {MAX_TOKENS})")
    return tokens


def evaluate_win(
    program: str, *, variables: Mapping[str, int], read_word: ReadWord, width: int = 4
) -> PostfixResult:
    """Run a STACK WIN program; `variables` are the initial ones (see `win_variables`)."""
    mask = (1 << (8 * width)) - 1
    values = {name: value & mask for name, value in variables.items()}
    stack: list[int | _Variable | None] = []  # None = .undef
    steps: list[StepRow] = []

    def as_int(item: int | _Variable | None) -> int:
        if item is None:
            raise _Failure(".undef used as a number")
        if isinstance(item, _Variable):
            if item not in values:
                raise _Failure(f"variable {item} is not defined")
            return values[item]
        return item

    def shown() -> tuple[StackItem, ...]:
        return tuple(
            _UNDEF if item is None else (str(item) if isinstance(item, _Variable) else item) for item in stack
        )

    try:
        for token in _win_tokens(program):
            read = None
            assignment: tuple[str, int | None] | None = None
            if token in _BINARY:
                if len(stack) < 2:
                    raise _Failure(f"'{token}' needs two operands")
                rhs, lhs = as_int(stack.pop()), as_int(stack.pop())
                stack.append(_arithmetic(token, lhs, rhs, mask))
            elif token == "=":
                if len(stack) < 2:
                    raise _Failure("'=' needs a variable and a value")
                rhs_item, target = stack.pop(), stack.pop()
                if not isinstance(target, _Variable):
                    raise _Failure("'=' target is not a variable")
                if rhs_item is None:
                    values.pop(target, None)
                    assignment = (str(target), None)
                else:
                    values[target] = as_int(rhs_item)
                    assignment = (str(target), values[target])
            elif token == "^":
                if not stack:
                    raise _Failure("'^' needs an operand")
                address = as_int(stack.pop())
                try:
                    value, read = _read(read_word, address, width, mask)
                except _ReadFailure as failure:
                    steps.append((token, shown(), failure.read, None))
                    raise
                stack.append(value)
            elif token == _UNDEF:
                stack.append(None)
            elif token.startswith(("$", ".")):
                stack.append(_Variable(token))
            elif (literal := _literal(token, 32)) is not None:
                stack.append(literal & mask)
            else:
                raise _Failure(f"unknown token '{token}'")
            if len(stack) > MAX_STACK:
                raise _Failure(f"stack deeper than {MAX_STACK}")
            steps.append((token, shown(), read, assignment))
    except _Failure as failure:
        return PostfixResult(program, variables=values, rows=tuple(steps), error=str(failure))
    return PostfixResult(program, variables=values, rows=tuple(steps), leftover=len(stack))


def win_frame_size(record: StackWinRecord, grand_callee_parameter_size: int) -> int:
    """local size + saved register size + the grand-callee's parameter size (u32)."""
    return (record.local_size + record.saved_register_size + grand_callee_parameter_size) & 0xFFFF_FFFF


def win_variables(
    record: StackWinRecord,
    *,
    esp: int,
    ebp: int,
    ebx: int | None,
    grand_callee_parameter_size: int,
) -> dict[str, int] | None:
    """The initial variables of a FRAME_DATA program, or None when `.raSearch` overflows 32 bits."""
    program = record.program_string or ""
    esp &= 0xFFFF_FFFF
    ebp &= 0xFFFF_FFFF
    # with `@` the frame was aligned: $esp cannot be trusted, the return address is above the saved $ebp
    search_start = ebp + 4 if "@" in program else esp + win_frame_size(record, grand_callee_parameter_size)
    if search_start > 0xFFFF_FFFF:
        return None
    variables = {"$esp": esp, "$ebp": ebp}
    if ebx is not None:
        variables["$ebx"] = ebx & 0xFFFF_FFFF
    variables |= {
        ".cbParams": record.parameter_size,
        ".cbCalleeParams": grand_callee_parameter_size & 0xFFFF_FFFF,
        ".cbSavedRegs": record.saved_register_size,
        ".cbLocals": record.local_size,
        ".raSearch": search_start,
        ".raSearchStart": search_start,
    }
    return variables


#: Registers a STACK WIN program sets for the caller (without the `$`).
WIN_OUTPUT_REGISTERS = ("eip", "esp", "ebp", "ebx", "esi", "edi")


#: A whole token ending in `:` (a rule's register), between whitespace or the ends of the text.
_RULE_HEAD = r"(?:(?<=[ \t\n\x0c\r])|^)[^ \t\n\x0c\r]*:(?=[ \t\n\x0c\r]|$)"
_RULE_SPACE = " \t\n\x0c\r"


def parse_cfi_rules(text: str) -> list[tuple[str, str]] | None:
    """`REG: EXPR REG: EXPR ...` → [(register, expression)], or None when malformed.

    As rust-minidump: a token ending in `:` starts a rule (`.cfa`, `.ra`, or a
    register name with one leading `$` removed); the expression is the text
    from its first to its last token; the text must start with a rule and no
    rule may be empty. A register named twice keeps both entries here (the
    caller's dict keeps the last).

    Only the rule heads are visited one by one (a hostile rule of 300 000 tokens
    costs one regular-expression pass, not a Python loop over its tokens).
    """
    if _plain(text) and "  " not in text:
        return _plain_rules(text)
    import re

    heads = list(re.compile(_RULE_HEAD).finditer(text))  # (compiled once: `re` keeps it)
    if not heads or text[: heads[0].start()].strip(_RULE_SPACE):
        return None
    rules: list[tuple[str, str]] = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        expression = text[head.end() : end].strip(_RULE_SPACE)
        if not expression:
            return None
        name = head.group()[:-1]
        rules.append((name[1:] if name.startswith("$") else name, expression))
    return rules


def _plain_rules(text: str) -> list[tuple[str, str]] | None:
    """`parse_cfi_rules` of a `_plain` text whose tokens are one space apart: each expression is
    then its tokens joined by a space."""
    tokens = text.strip(" ").split(" ")
    heads = [i for i, token in enumerate(tokens) if token.endswith(":")]
    if not heads or heads[0] != 0:
        return None
    rules: list[tuple[str, str]] = []
    for n, i in enumerate(heads):
        end = heads[n + 1] if n + 1 < len(heads) else len(tokens)
        if end == i + 1:
            return None  # an empty rule
        name = tokens[i][:-1]
        rules.append((name[1:] if name.startswith("$") else name, " ".join(tokens[i + 1 : end])))
    return rules


def compose_cfi_rules(texts: Iterable[str]) -> tuple[dict[str, str] | None, str | None]:
    """Apply the INIT row's rule text and then each delta row's: later rules override earlier ones.

    Returns (rules, None), or (None, reason) when a row is malformed (rust-minidump then
    gives up on CFI for the frame).
    """
    composed: dict[str, str] = {}
    for i, text in enumerate(texts):
        parsed = parse_cfi_rules(text)
        if parsed is None:
            which = "STACK CFI INIT" if i == 0 else f"STACK CFI row {i}"
            return None, f"malformed rules in {which}: {text!r}"
        composed.update(parsed)
    return composed, None
