"""Problems only the end of a walk can tell: symbol files damaged or refused, walks cut short."""

from __future__ import annotations

from inspector.core.process.state import ModuleEntry, Problem, SymbolState
from inspector.core.unwind import CallStack, TerminationReason


def symbol_problems(modules: tuple[ModuleEntry, ...]) -> tuple[Problem, ...]:
    out = []
    for entry in modules:
        symbols = entry.symbols
        if symbols.damage is None and symbols.state is not SymbolState.UNREADABLE:
            continue  # nothing to say, as for nearly every module
        name = entry.module.filename
        if symbols.state is SymbolState.DAMAGED and symbols.damage is not None:
            out.append(
                Problem(
                    "symbols",
                    "DamagedSymbols",
                    f"{name}: {symbols.path}: {symbols.damage.summary()}",
                    where=name,
                )
            )
        if symbols.loaded and symbols.rust_minidump_rejects and symbols.damage is not None:
            why = []
            if symbols.damage.missing_final_newline:
                why.append("no final newline")
            if symbols.damage.old_inline_syntax:
                why.append("old INLINE syntax")
            if symbols.damage.damaged:
                why.append("damaged lines")
            out.append(
                Problem(
                    "symbols",
                    "RustMinidumpRejects",
                    f"{name}: {symbols.path}: rust-minidump would refuse this file ({', '.join(why)}); "
                    "its names are shown, but the walk ignores it as rust-minidump does",
                    where=name,
                )
            )
        elif symbols.state is SymbolState.UNREADABLE:
            out.append(
                Problem(
                    "symbols", "UnreadableSymbols", f"{name}: {symbols.path}: {symbols.error}", where=name
                )
            )
    return tuple(out)


def walk_problems(threads: list[CallStack]) -> tuple[Problem, ...]:
    """Walks cut short by the frame limit (a runaway or hostile stack): the report must say so."""
    return tuple(
        Problem(
            "walk",
            "FrameLimit",
            f"thread {stack.thread_index} (id {stack.thread_id:#x}): {stack.termination.message}; "
            "the frames beyond it are not shown",
            where=f"thread {stack.thread_index}",
        )
        for stack in threads
        if stack.termination is not None
        and stack.termination.reason in (TerminationReason.MAX_FRAMES, TerminationReason.DUMP_FRAME_BUDGET)
    )
