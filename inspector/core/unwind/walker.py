"""The walk loop: context frame → symbolize → caller → … until a termination check stops it.

`walk_stack` is a generator: it yields each `StackFrame` as soon as it is symbolized (the
GUI streams them) and finally one `Termination`, checking the cancel token between frames.
It dispatches on the context's CPU to the per-CPU unwinders; the loop itself is the same
for all of them (rust-minidump's `walk_stack`):

1. frame 0 comes from the thread's context (trust `context`), is symbolized and yielded;
2. without stack memory the walk ends there (rust-minidump: frame 0 only);
3. the CPU module looks for the caller (its strategies in fixed order, each recorded);
4. the caller must pass the CPU's post-checks (instruction pointer ≥ 4096, stack pointer
   growing), else the walk ends and the rejected attempt is kept in the termination;
5. `instruction = return address - adjustment`, symbolize, yield, repeat.

A hard cap (`WalkOptions.frame_limit`) ends runaway walks; every strategy's own loops are
bounded (scan windows, 16 frame-pointer probes, postfix token/stack limits), so a hostile
stack cannot hang the walk.
"""

from __future__ import annotations

import sys

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.logs import get_logger
from inspector.core.minidump import CpuContext, MemoryRegion, UnloadedModuleList
from inspector.core.types import Cpu
from inspector.core.unwind.environment import StackMemory, WalkEnvironment
from inspector.core.unwind.frame import FrameTrust, InlineFrame, StackFrame, UnloadedHit
from inspector.core.unwind.step import CpuUnwinder, ThreadWalk, first_success, run_post_checks
from inspector.core.unwind.trace import Outcome, Termination, TerminationReason, UnwindStep, as_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Iterator

log = get_logger(__name__)


class _Unwinders:
    """Each CPU's unwinder, its module imported when a dump of that CPU is walked (not at start-up).

    The part of a read-only mapping the engine uses (not a `collections.abc.Mapping`: importing
    `collections` is a cost of its own at start-up).
    """

    def __init__(self, where: dict[Cpu, tuple[str, str]]) -> None:
        self._where = where
        self._loaded: dict[Cpu, CpuUnwinder] = {}

    def __getitem__(self, cpu: Cpu) -> CpuUnwinder:
        unwinder = self._loaded.get(cpu)
        if unwinder is None:
            module, name = self._where[cpu]
            __import__(module)  # (the C import path, as inspector.core.lazy explains)
            unwinder = self._loaded[cpu] = getattr(sys.modules[module], name)
        return unwinder

    def get(self, cpu: Cpu) -> CpuUnwinder | None:
        return self[cpu] if cpu in self._where else None

    def __contains__(self, cpu: object) -> bool:
        return cpu in self._where

    def __iter__(self) -> Iterator[Cpu]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def items(self) -> list[tuple[Cpu, CpuUnwinder]]:
        return [(cpu, self[cpu]) for cpu in self._where]


UNWINDERS = _Unwinders(
    {
        Cpu.AMD64: ("inspector.core.unwind.amd64", "UNWINDER"),
        Cpu.X86: ("inspector.core.unwind.x86", "UNWINDER"),
        Cpu.ARM: ("inspector.core.unwind.arm", "UNWINDER"),
        Cpu.ARM64: ("inspector.core.unwind.arm64", "UNWINDER"),
        Cpu.MIPS: ("inspector.core.unwind.mips", "UNWINDER"),
        Cpu.MIPS64: ("inspector.core.unwind.mips", "UNWINDER_64"),
    }
)

#: Trusts Breakpad counts as scanned (it stops scanning after 2^14 of them).
_SCANNED = (FrameTrust.SCAN, FrameTrust.CFI_SCAN, FrameTrust.NONE)

WalkEvent = StackFrame | Termination


def walk_stack(
    context: CpuContext,
    stack: MemoryRegion | None,
    env: WalkEnvironment,
    *,
    unloaded_modules: UnloadedModuleList | None = None,
    cancel: CancelToken = NEVER,
    frame_budget: int | None = None,
) -> Iterator[WalkEvent]:
    """Walk one thread: yields its frames, innermost first, then exactly one `Termination`.

    `frame_budget`: what is left of the dump's frame limit (`WalkOptions.dump_frame_limit`);
    when it is below the per-thread limit the walk stops there instead.
    """
    ip = context.value(context.register_set.instruction_pointer)
    first = _frame(0, FrameTrust.CONTEXT, context, ip, ip, found_by=None, env=env, unloaded=unloaded_modules)
    yield first
    if stack is None or stack.size == 0:
        yield Termination(
            TerminationReason.NO_STACK_MEMORY, "no stack memory: only the context frame is known"
        )
        return
    unwinder = UNWINDERS.get(context.cpu)
    if unwinder is None:
        yield Termination(
            TerminationReason.UNSUPPORTED_CPU, f"no unwinder for {context.cpu.value}: only the context frame"
        )
        return
    walk = ThreadWalk(env, StackMemory(stack), unwinder.cpu, [first])
    if first.trust in _SCANNED:
        walk.scanned_frames += 1
    limit = env.options.frame_limit
    budget = frame_budget if frame_budget is not None and frame_budget < limit else None
    policy = env.options.policy
    strategies, post_checks = unwinder.strategies[policy], unwinder.post_checks[policy]
    ip_name = unwinder.cpu.instruction_pointer
    adjustment = unwinder.instruction_adjustment
    while True:
        if budget is not None and len(walk.frames) >= budget:
            yield Termination(
                TerminationReason.DUMP_FRAME_BUDGET,
                f"stopped after {len(walk.frames)} frames (the limit of {env.options.dump_frame_limit} "
                "frames for all threads of the dump)",
            )
            return
        if len(walk.frames) >= limit:
            yield Termination(TerminationReason.MAX_FRAMES, f"stopped after {limit} frames (the frame limit)")
            return
        cancel.check()
        callee = walk.frames[-1]
        attempts, chosen, caller, trust = first_success(strategies, callee, walk)
        if caller is None or trust is None or chosen is None:
            step = UnwindStep(callee.index, attempts)
            yield Termination(TerminationReason.NO_CALLER, "no strategy found a caller frame", step)
            return
        checks, ended = run_post_checks(post_checks, callee, caller, trust, walk)
        if ended is not None:
            rejected = list(attempts)
            rejected[chosen] = attempts[chosen].with_outcome(
                Outcome.REJECTED, f"{attempts[chosen].reason}; {as_text(checks[-1][0])}: no"
            )
            step = UnwindStep(callee.index, tuple(rejected), chosen, checks)
            yield Termination(ended, f"walk ends: {ended.value}", step)
            return
        caller_ip = caller.value(ip_name)
        step = UnwindStep(callee.index, attempts, chosen, checks, adjustment)
        frame = _frame(
            callee.index + 1,
            trust,
            caller,
            caller_ip - adjustment,
            caller_ip,
            found_by=step,
            env=env,
            unloaded=unloaded_modules,
        )
        if frame.trust in _SCANNED:
            walk.scanned_frames += 1
        walk.frames.append(frame)
        yield frame


def _frame(
    index: int,
    trust: FrameTrust,
    context: CpuContext,
    instruction: int,
    return_address: int,
    *,
    found_by: UnwindStep | None,
    env: WalkEnvironment,
    unloaded: UnloadedModuleList | None,
) -> StackFrame:
    """The frame with its module, symbol and inline frames (rust-minidump's fill_source_line_info +
    unloaded modules)."""
    found = env.frame_symbols(instruction)
    if found is None:
        hits = _unloaded_hits(instruction, unloaded)
        return StackFrame(
            index, trust, context, instruction, return_address, unloaded_modules=hits, found_by=found_by
        )
    module_index, module, symbol = found
    inlines = (
        tuple(InlineFrame(i.function_name, i.source_file, i.source_line) for i in symbol.inlines)
        if symbol is not None and symbol.inlines
        else ()
    )
    return StackFrame(
        index,
        trust,
        context,
        instruction,
        return_address,
        module,
        module_index,
        symbol,
        inlines,
        (),
        found_by,
    )


def _unloaded_hits(address: int, unloaded: UnloadedModuleList | None) -> tuple[UnloadedHit, ...]:
    """Unloaded modules covering the address, by name (sorted), each with its sorted offsets."""
    if unloaded is None:
        return ()
    by_name: dict[str, set[int]] = {}
    for module in unloaded.modules_at(address):
        by_name.setdefault(module.code_file, set()).add(address - module.base)
    return tuple(
        UnloadedHit(name, tuple(sorted(by_name[name]))) for name in sorted(by_name, key=lambda n: n.encode())
    )
