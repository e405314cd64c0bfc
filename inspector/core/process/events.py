"""The events `process_events` yields, in order; each carries only frozen data (see `driver`)."""

from __future__ import annotations

from inspector.core.process.state import ModuleSymbolSummary, ProcessState
from inspector.core.record import record
from inspector.core.unwind import CallStack, StackFrame


@record
class DumpLoaded:
    """The dump is read; threads have only their context frame, nothing is unwound yet."""

    state: ProcessState


@record
class SymbolsLoaded:
    module_index: int
    symbols: ModuleSymbolSummary


@record
class FrameWalked:
    thread_index: int
    frame: StackFrame


@record
class ThreadWalked:
    thread_index: int
    call_stack: CallStack


@record
class Progress:
    symbols_requested: int
    symbols_loaded: int
    threads_walked: int
    threads_total: int
    downloads_active: int = 0  # queued or running
    downloads_done: int = 0  # finished, whatever the outcome
    downloads_failed: int = 0


@record
class Finished:
    state: ProcessState


ProcessEvent = DumpLoaded | SymbolsLoaded | FrameWalked | ThreadWalked | Progress | Finished
