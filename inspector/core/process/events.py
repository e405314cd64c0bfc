"""The events `process_events` yields, in order; each carries only frozen data (see `driver`)."""

from __future__ import annotations

from inspector.core.process.state import ModuleSymbolSummary, ProcessState
from inspector.core.record import Record
from inspector.core.unwind import CallStack, StackFrame


class DumpLoaded(Record):
    """The dump is read; threads have only their context frame, nothing is unwound yet."""

    state: ProcessState


class SymbolsLoaded(Record):
    module_index: int
    symbols: ModuleSymbolSummary


class FrameWalked(Record):
    thread_index: int
    frame: StackFrame


class ThreadWalked(Record):
    thread_index: int
    call_stack: CallStack


class Progress(Record):
    symbols_requested: int
    symbols_loaded: int
    threads_walked: int
    threads_total: int
    downloads_active: int = 0  # queued or running
    downloads_done: int = 0  # finished, whatever the outcome
    downloads_failed: int = 0


class Finished(Record):
    state: ProcessState


ProcessEvent = DumpLoaded | SymbolsLoaded | FrameWalked | ThreadWalked | Progress | Finished
