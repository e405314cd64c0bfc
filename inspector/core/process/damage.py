"""What damage to the dump means for what a reader can trust, in a few sentences.

`inspector_problems` lists every piece of damage one by one (a cut dump easily has a dozen);
a person opening the dump first needs the consequences: is the crash reason lost, or merely
absent? which threads lost their stacks? `dump_damage(state)` answers that from the state, so
the window's Summary and the HTML report lead with the same words.
"""

from __future__ import annotations

from inspector.core.minidump import StreamType
from inspector.core.minidump.format import stream_type_name
from inspector.core.process.state import ProcessState
from inspector.core.record import Record

#: Streams whose loss changes what the report can say (others are listed in Problems only).
_KEY_STREAMS = {
    StreamType.ThreadListStream: "thread list",
    StreamType.ModuleListStream: "module list",
    StreamType.SystemInfoStream: "system info",
    StreamType.MemoryListStream: "memory list",
}


class DumpDamage(Record):
    """The consequences of the dump problems of a state (empty when the dump read cleanly)."""

    #: problems found in the dump itself (not in symbol files or the walk)
    problem_count: int
    #: the dump has an exception stream but its record could not be read: the crash reason is
    #: unknown, not absent
    exception_unreadable: bool
    #: the directory itself is damaged: streams may be missing without a trace
    directory_damaged: bool
    #: thread indexes whose stack bytes the file does not hold (all or part of them)
    stacks_cut: tuple[int, ...]
    #: key streams (thread list, module list, …) that are damaged, for people
    damaged_streams: tuple[str, ...]
    #: some data the dump points to lies beyond the end of the file
    cut_short: bool
    dump_size: int

    @property
    def damaged(self) -> bool:
        return self.problem_count > 0

    def headline(self) -> str | None:
        """The crash headline when damage hides the crash (None: the crash, or its absence, is known)."""
        if self.exception_unreadable:
            return "Crash reason unknown: the exception stream is damaged"
        if self.directory_damaged:
            return "Crash reason unknown: the dump's stream directory is damaged"
        return None

    def sentences(self) -> list[str]:
        """What the damage costs, most important first (empty without damage)."""
        if not self.damaged:
            return []
        out = []
        if self.cut_short:
            out.append(
                "The dump is cut short: parts of it lie beyond the end of the file "
                f"({self.dump_size:,} bytes)."
            )
        else:
            out.append("The dump is damaged.")
        if self.exception_unreadable:
            out.append(
                "Its exception stream cannot be read: the crash reason and crashing thread are unknown."
            )
        elif self.directory_damaged:
            out.append("Its stream directory is damaged: streams, the exception among them, may be missing.")
        if self.stacks_cut:
            threads = len(self.stacks_cut)
            which = ", ".join(str(i) for i in self.stacks_cut[:6]) + ("…" if threads > 6 else "")
            noun = "thread" if threads == 1 else "threads"
            out.append(
                f"{threads} {noun} ({which}) lost all or part of their stack: "
                "their stacks end early or show only the first frame."
            )
        if self.damaged_streams:
            out.append(f"Damaged: {', '.join(self.damaged_streams)}.")
        return out

    def count_text(self) -> str:
        count = f"{self.problem_count} problem{'s are' if self.problem_count != 1 else ' is'}"
        return f"{count} listed under Problems."

    def text(self) -> str:
        """The sentences as one paragraph, with how many problems Problems lists."""
        return " ".join([*self.sentences(), self.count_text()]) if self.damaged else ""


def dump_damage(state: ProcessState) -> DumpDamage:
    dump_problems = [p for p in state.problems if p.source == "dump"]
    streams = {p.stream_type for p in dump_problems}
    exception_damaged = int(StreamType.ExceptionStream) in streams
    # a microdump's problems are about its lines: there is no directory to lose
    directory = state.microdump is None and any(
        p.stream_type is None and p.code == "DirectoryTruncated" for p in dump_problems
    )
    named = []
    for stream_type, name in _KEY_STREAMS.items():
        if int(stream_type) in streams:
            named.append(name)
    if exception_damaged and state.crash is not None:
        named.append("exception stream (its record was read)")
    others = sorted(
        {stream_type_name(s) for s in streams if s is not None and s not in _KEY_STREAMS}
        - {stream_type_name(StreamType.ExceptionStream)}
    )
    named += [name for name in others if name != "unknown"]
    return DumpDamage(
        problem_count=len(dump_problems),
        exception_unreadable=exception_damaged and state.crash is None,
        directory_damaged=directory and state.crash is None,
        stacks_cut=tuple(i for i, start in enumerate(state.thread_starts) if start.stack_cut),
        damaged_streams=tuple(named),
        cut_short=any(p.code in ("BadRva", "DirectoryTruncated") for p in dump_problems),
        dump_size=state.dump_size,
    )
