"""The crash analysis of an open minidump: gathers what `analyze_crash` needs from it."""

from __future__ import annotations

import os
from collections.abc import Sequence

from inspector.core.analysis.code_bytes import CodeBytesProvider, ModuleFileCode
from inspector.core.analysis.engine import analyze_crash
from inspector.core.analysis.memory_info import MemoryInfoMap
from inspector.core.analysis.model import CrashAnalysis
from inspector.core.minidump import Minidump, Module, StreamType, basename
from inspector.core.types import Cpu, Os


def module_file_finder(search: Sequence[str | os.PathLike[str]]) -> ModuleFileCode:
    """Module files at the path the dump recorded, or by name in `search` (folders, or the files themselves).

    The symbol paths are searched too, so a folder holding both `.sym` files and the binaries
    they came from serves both (`stackwalk crash.dmp build/`).
    """
    places = [os.fspath(p) for p in search]

    def candidates(module: Module) -> list[str]:
        name = basename(module.code_file)
        found = [module.code_file]
        for place in places:
            if os.path.isdir(place):
                found.append(os.path.join(place, name))
            elif os.path.basename(place) == name:
                found.append(place)
        return found

    return ModuleFileCode(paths=candidates)


def analyze_dump(
    dump: Minidump,
    *,
    cpu: Cpu,
    os_: Os,
    reason: str,
    address: int,
    code_providers: Sequence[CodeBytesProvider] = (),
) -> CrashAnalysis:
    """`analyze_crash` on the dump's exception: its context, the memory, the crashing thread's stack."""
    exception = dump.exception
    assert exception is not None, "a crash analysis needs the exception stream"
    thread = next((t for t in dump.threads if t.thread_id == exception.thread_id), None)
    stack = None
    if thread is not None:
        # rust-minidump's `MinidumpThread::stack_memory`: the thread's own stack bytes, else the
        # memory-list region at its stack start
        stack = thread.stack if thread.stack is not None else dump.memory.region_for(thread.stack_start)
    info_list = dump.memory_info_list if _usable(dump, StreamType.MemoryInfoListStream) else None
    maps = dump.linux_maps if _usable(dump, StreamType.LinuxMaps) else None
    return analyze_crash(
        cpu=cpu,
        os=os_,
        reason=reason,
        address=address,
        context=exception.context,
        memory=dump.memory,
        stack=stack,
        memory_info=MemoryInfoMap.from_dump(info_list, maps),
        modules=tuple(dump.modules),
        code_providers=code_providers,
    )


def _usable(dump: Minidump, stream_type: int) -> bool:
    """rust-minidump reads the stream at all (a damaged one it refuses counts as absent)."""
    return dump.entry(stream_type) is not None and not dump.strictly_rejected(stream_type)
