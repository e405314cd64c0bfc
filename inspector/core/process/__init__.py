"""A dump and symbol paths → `ProcessState` (every thread walked), as a generator of events.

See `driver` for the events and how the walk runs.
"""

from __future__ import annotations

from inspector.core.process.driver import (
    NOT_REQUESTED,
    UNKNOWN_SYSTEM,
    CrashSummary,
    DumpLoaded,
    Finished,
    FrameWalked,
    LsbRelease,
    ModuleEntry,
    ModuleSymbolSummary,
    Problem,
    ProcessEvent,
    ProcessOptions,
    ProcessState,
    Progress,
    SymbolsLoaded,
    SymbolState,
    SystemSummary,
    ThreadWalked,
    last_error_name,
    process,
    process_events,
)

__all__ = [
    "NOT_REQUESTED",
    "UNKNOWN_SYSTEM",
    "CrashSummary",
    "DumpLoaded",
    "Finished",
    "FrameWalked",
    "LsbRelease",
    "ModuleEntry",
    "ModuleSymbolSummary",
    "Problem",
    "ProcessEvent",
    "ProcessOptions",
    "ProcessState",
    "Progress",
    "SymbolState",
    "SymbolsLoaded",
    "SystemSummary",
    "ThreadWalked",
    "last_error_name",
    "process",
    "process_events",
]
