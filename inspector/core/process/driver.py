"""A dump and symbol paths → `ProcessState` (every thread walked), as a generator of events.

`process_events(dump, options, cancel=)` yields, in order:

* `DumpLoaded(state)` — right after the dump is read: system and crash info, modules,
  memory, and every thread with only its context frame (nothing unwound yet);
* while walking (crashing thread first, then the others in dump order):
  `SymbolsLoaded(module_index, symbols)` when a module's symbols were looked for, and
  with symbol servers also whenever its download changes (queued, downloading with
  the bytes received, downloaded, not on server, failed);
  `FrameWalked(thread_index, frame)` for every frame as soon as it is known,
  `ThreadWalked(thread_index, call_stack)` when a thread is done, and
  `Progress(...)` after each thread (and, with servers, as downloads go);
* `Finished(state)` with everything.

Threads that start from the same registers on the same stack bytes share one walk (its
frames are yielded again for each of them), and the frames of all threads together are
capped (`WalkOptions.dump_frame_limit`, 250 000): a hostile dump can point thousands of
threads at one long stack. A walk cut short by that cap or by the per-thread frame limit
ends with its `Termination` and is named in `problems`. The cancel token is checked
between frames (`Cancelled` is raised). Every event carries only frozen data, so a GUI
worker can forward it to the UI thread as it is. `process(...)` drains the generator and
returns the final state.

With symbol servers (`ProcessOptions.symbol_servers`), the modules that the threads'
registers and stack words point into are queued for download before the walk starts
(`ServerSymbolSupplier.prefetch`, at most `parallel` at once), and the walk runs on a
helper thread so that download events keep coming while it waits for a file; downloads
the walk did not need are stopped when it is done.

rust-minidump refuses a dump without a readable thread list or system info stream; we
report whatever the dump still holds, with the damage in `problems` (a dump without a
thread list still has its modules and crash reason; without system info the CPU is taken
from the thread contexts' flags, and if they do not tell it either, no thread has
registers). Only a dump in which none of the system info, thread list, module list and
exception streams can be read raises `MinidumpError` (`BadData`), before anything is
yielded and before any symbol server is contacted.
"""

from __future__ import annotations

import os

from inspector.core.cancel import NEVER, CancelToken
from inspector.core.collector import collector_paused
from inspector.core.dumpfile import as_microdump, open_any_dump
from inspector.core.logs import get_logger
from inspector.core.minidump import Minidump
from inspector.core.minidump.errors import BadData
from inspector.core.process.events import (
    DumpLoaded,
    Finished,
    FrameWalked,
    ProcessEvent,
    ThreadWalked,
)
from inspector.core.process.options import ProcessOptions
from inspector.core.process.problems import symbol_problems, walk_problems
from inspector.core.process.start import check_usable, thread_starts, unwalked_state
from inspector.core.process.state import ModuleEntry, Problem, ProcessState, ThreadStart
from inspector.core.process.tracker import SymbolTracker
from inspector.core.record import Record, replace
from inspector.core.symbols import Symbolizer, SymbolSupplier
from inspector.core.unwind import (
    CallStack,
    CallStackInfo,
    StackFrame,
    Termination,
    WalkEnvironment,
    walk_stack,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Generator, Iterator

    from inspector.core.symbols.server_supplier import ServerSymbolSupplier

log = get_logger(__name__)


def process(
    dump: Minidump | str | os.PathLike[str],
    options: ProcessOptions | None = None,
    *,
    cancel: CancelToken = NEVER,
    supplier: SymbolSupplier | None = None,
) -> ProcessState:
    """Process a dump completely (drains `process_events`).

    The cycle collector is paused meanwhile (`collector_paused`): a walk's objects form no
    cycles, and collecting them as they are made costs a tenth of a warm corpus pass. The
    generator itself does not pause it: a caller could keep it unfinished for as long as it likes.
    """
    state: ProcessState | None = None
    with collector_paused:
        for event in process_events(dump, options, cancel=cancel, supplier=supplier):
            if isinstance(event, Finished):
                state = event.state
    assert state is not None
    return state


def process_events(
    dump: Minidump | str | os.PathLike[str],
    options: ProcessOptions | None = None,
    *,
    cancel: CancelToken = NEVER,
    usable_only: bool = True,
    supplier: SymbolSupplier | None = None,
) -> Generator[ProcessEvent, None, None]:
    """Process a dump, yielding events (see the module docstring). A path is opened and closed here.

    `usable_only=False`: a dump with nothing a report is made of (see `start.check_usable`) is
    not refused; its state (whatever the reader found, and a `NotWalked` problem saying why)
    is yielded as `DumpLoaded` and `Finished`, with no walk. The window shows such a dump.

    `supplier`: the caller's own supplier for the symbol paths (a `KeptSymbolSupplier` that
    keeps files open across many dumps); it looks up the symbols instead of one made from
    `options.symbol_paths`, `symbols_cache` and `code_id_fallback` (the crash analysis still
    looks for module files in `options.symbol_paths`), and neither it nor its files are
    closed here. Not with symbol servers.
    """
    options = options or ProcessOptions()
    if supplier is not None and options.uses_servers:
        raise ValueError("a caller's supplier cannot be combined with symbol servers")
    if isinstance(dump, Minidump):
        yield from _process(dump, options, cancel, usable_only, supplier)
        return
    opened = open_any_dump(dump)
    try:
        yield from _process(opened, options, cancel, usable_only, supplier)
    finally:
        opened.close()


def _process(
    dump: Minidump,
    options: ProcessOptions,
    cancel: CancelToken,
    usable_only: bool,
    given: SymbolSupplier | None,
) -> Iterator[ProcessEvent]:
    dump.parse_all()
    if as_microdump(dump) is not None and options.microdump_policy is not None:
        # Breakpad's microdump_stackwalk is the reference for microdumps (rust-minidump reads none)
        options = replace(options, walk=replace(options.walk, policy=options.microdump_policy))
    unusable: BadData | None = None
    try:
        check_usable(dump)
    except BadData as exc:
        if usable_only:
            raise
        unusable = exc
    # With servers the walk runs on a helper thread; its own token lets us stop it when
    # our consumer stops early (the caller's token cancels it too).
    walk_cancel = cancel.child() if options.uses_servers else cancel
    supplier: SymbolSupplier
    server_supplier: ServerSymbolSupplier | None = None
    servers = options.symbol_servers
    if servers is not None and options.uses_servers:
        from inspector.core.symbols.server_supplier import ServerSymbolSupplier  # HTTP only when needed

        supplier = server_supplier = ServerSymbolSupplier(
            options.symbol_paths,
            servers,
            cache=options.index_cache(),
            code_id_fallback=options.code_id_fallback,
            cancel=walk_cancel,
            local_modules=options.local_modules,
        )
    elif given is not None:
        supplier = given
    else:
        supplier = SymbolSupplier(
            options.symbol_paths,
            cache=options.index_cache(),
            code_id_fallback=options.code_id_fallback,
            local_modules=options.local_modules,
        )
    # Without symbol paths (or servers) nothing counts as "looked for", so no module is reported
    # missing (as minidump-stackwalk); the modules' own files on this machine may still give symbols.
    has_paths = bool(supplier.paths if given is not None else options.symbol_paths)
    searched = has_paths or options.uses_servers
    symbolizer = (
        Symbolizer(supplier, cancel=walk_cancel, owns_files=given is None)
        if searched or supplier.local_modules
        else None
    )
    try:
        starts = thread_starts(dump)
        state = unwalked_state(dump, options, supplier, starts)
        if unusable is not None:
            why = Problem("walk", "NotWalked", f"the dump cannot be walked: {unusable}")
            state = replace(state, problems=(*state.problems, why))
            yield DumpLoaded(state)
            yield Finished(state)
            return
        yield DumpLoaded(state)
        order = list(range(len(state.threads)))
        if state.requesting_thread is not None:
            order.remove(state.requesting_thread)
            order.insert(0, state.requesting_thread)
        if server_supplier is not None and server_supplier.options.prefetch:
            from inspector.core.process.prefetch import modules_pointed_at

            server_supplier.prefetch(modules_pointed_at(dump, order, starts))
        tracker = SymbolTracker(state, symbolizer, server_supplier, searched=searched)
        walk = _walk_threads(
            dump,
            state=state,
            starts=starts,
            order=order,
            symbolizer=symbolizer,
            options=options,
            cancel=walk_cancel,
        )
        if server_supplier is None:
            threads = yield from _forward(walk, tracker)
        else:
            threads = yield from _forward_from_thread(walk, tracker, cancel, walk_cancel)
            # downloads the walk did not need in the end are stopped, not waited for
            server_supplier.stop_downloads()
        yield from tracker.changes()
        # built directly: `replace` is generic, and this runs for every module of every dump
        modules = tuple(ModuleEntry(e.index, e.module, tracker.summary(e.index)) for e in state.modules)
        problems = state.problems + symbol_problems(modules) + walk_problems(threads)
        problems += tuple(
            Problem("symbol path", "UnreadableObject", f"{p.path}: {p.reason}")
            for p in supplier.object_problems()
        )
        final = replace(state, threads=tuple(threads), modules=modules, problems=problems, walked=True)
        yield Finished(final)
    finally:
        if symbolizer is not None:
            symbolizer.close()
        elif given is None:
            supplier.close()


class _ThreadDone(Record):
    """The walk finished a thread (the progress event is made by the tracker)."""


_WalkItem = FrameWalked | ThreadWalked | _ThreadDone


def _walk_threads(
    dump: Minidump,
    *,
    state: ProcessState,
    starts: list[ThreadStart],
    order: list[int],
    symbolizer: Symbolizer | None,
    options: ProcessOptions,
    cancel: CancelToken,
) -> Generator[_WalkItem, None, list[CallStack]]:
    env = WalkEnvironment(
        cpu=dump.cpu, os=dump.os, modules=dump.modules, symbolizer=symbolizer, options=options.walk
    )
    threads = list(state.threads)
    budget = options.walk.dump_frame_limit
    unloaded_modules = dump.unloaded_modules
    # Threads starting from the same registers on the same stack bytes have the same walk: a
    # hostile dump may point thousands of threads at one long stack. Walked once, shared.
    walks: dict[tuple[object, ...], tuple[tuple[StackFrame, ...], Termination | None]] = {}
    for thread_index in order:
        stack = threads[thread_index]
        if stack.info is CallStackInfo.OK:
            context, region = starts[thread_index].context, starts[thread_index].stack
            assert context is not None
            key = (
                context.layout,
                context.values,
                context.valid,
                None if region is None else (region.base, region.size, region.rva),
            )
            termination: Termination | None = None
            frames: tuple[StackFrame, ...]
            if key in walks:
                frames, termination = walks[key]
                for frame in frames:
                    yield FrameWalked(thread_index, frame)
            else:
                walked: list[StackFrame] = []
                for event in walk_stack(
                    context,
                    region,
                    env,
                    unloaded_modules=unloaded_modules,
                    cancel=cancel,
                    frame_budget=max(1, budget),
                ):
                    if isinstance(event, Termination):
                        termination = event
                        break
                    walked.append(event)
                    yield FrameWalked(thread_index, event)
                frames = tuple(walked)
                budget -= len(frames)
                walks[key] = (frames, termination)
            stack = replace(stack, frames=frames, termination=termination)
            threads[thread_index] = stack
        yield ThreadWalked(thread_index, stack)
        yield _ThreadDone()
    return threads


def _forward(
    walk: Generator[_WalkItem, None, list[CallStack]], tracker: SymbolTracker
) -> Generator[ProcessEvent, None, list[CallStack]]:
    """The walk's events in this thread, each preceded by the symbol changes it caused."""
    while True:
        try:
            item = next(walk)
        except StopIteration as stop:
            threads: list[CallStack] = stop.value
            return threads
        # as `_forward_from_thread`: the symbol changes it caused, then the item (inline: once a frame)
        yield from tracker.changes()
        yield tracker.thread_walked() if isinstance(item, _ThreadDone) else item


_POLL_SECONDS = 0.1


def _forward_from_thread(
    walk: Generator[_WalkItem, None, list[CallStack]],
    tracker: SymbolTracker,
    cancel: CancelToken,
    walk_cancel: CancelToken,
) -> Generator[ProcessEvent, None, list[CallStack]]:
    """Run the walk on a helper thread; forward its events, and download events while it waits."""
    import queue  # only with symbol servers
    import threading

    items: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=256)

    def put(kind: str, value: object) -> None:
        while True:
            try:
                items.put((kind, value), timeout=_POLL_SECONDS)
                return
            except queue.Full:
                if walk_cancel.cancelled:
                    return

    def run() -> None:
        try:
            while True:
                try:
                    item = next(walk)
                except StopIteration as stop:
                    put("done", stop.value)
                    return
                put("item", item)
        except BaseException as exc:  # handed to the consuming thread, which raises it
            put("error", exc)

    worker = threading.Thread(target=run, name="stackwalk", daemon=True)
    worker.start()
    try:
        while True:
            try:
                kind, value = items.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                if cancel.cancelled:
                    walk_cancel.cancel()
                yield from tracker.changes()
                continue
            if kind == "done":
                return value  # type: ignore[return-value]
            if kind == "error":
                assert isinstance(value, BaseException)
                raise value
            yield from tracker.changes()  # the symbol changes the item caused, then the item
            yield tracker.thread_walked() if isinstance(value, _ThreadDone) else value  # type: ignore[misc]
    finally:
        if worker.is_alive():  # our consumer stopped early: stop the walk too
            walk_cancel.cancel()
        worker.join()
