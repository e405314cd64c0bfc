"""The events `process_events` yields, in order; each carries only frozen data (see `driver`)."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.process.state import ModuleSymbolSummary, ProcessState
from inspector.core.unwind import CallStack, StackFrame


@dataclass(frozen=True, slots=True)
class DumpLoaded:
    """The dump is read; threads have only their context frame, nothing is unwound yet."""

    state: ProcessState


@dataclass(frozen=True, slots=True)
class SymbolsLoaded:
    module_index: int
    symbols: ModuleSymbolSummary


@dataclass(frozen=True, slots=True)
class FrameWalked:
    thread_index: int
    frame: StackFrame


@dataclass(frozen=True, slots=True)
class ThreadWalked:
    thread_index: int
    call_stack: CallStack


@dataclass(frozen=True, slots=True)
class Progress:
    symbols_requested: int
    symbols_loaded: int
    threads_walked: int
    threads_total: int
    downloads_active: int = 0  # queued or running
    downloads_done: int = 0  # finished, whatever the outcome
    downloads_failed: int = 0


@dataclass(frozen=True, slots=True)
class Finished:
    state: ProcessState


ProcessEvent = DumpLoaded | SymbolsLoaded | FrameWalked | ThreadWalked | Progress | Finished
