"""Memory as rust-minidump's `--dump` prints it: the memory lists, and without `--brief` each thread's
stack as pointer-width words and each memory region as a hex dump."""

from __future__ import annotations

import struct

from inspector.core.minidump import MemoryList, Minidump, SystemInfo, Thread
from inspector.core.types import Cpu


class StackWords:
    """What the full (not brief) dump needs to print each thread's stack words."""

    def __init__(self, dump: Minidump, system: SystemInfo | None) -> None:
        self.memory = dump.memory
        # rust-minidump prints words of an unknown CPU (or without system info) as 64-bit
        cpu = Cpu.UNKNOWN if system is None else system.cpu
        self.width = 8 if cpu is Cpu.UNKNOWN else cpu.pointer_width

    def lines(self, thread: Thread) -> str:
        """`Stack` and one `offset: word` line per whole word, or `No stack`; a blank line after."""
        # the thread's own bytes, else the memory region at its stack start (rust-minidump's `stack_memory`)
        region = thread.stack if thread.stack is not None else self.memory.region_for(thread.stack_start)
        if region is None:
            return "No stack\n\n"
        width = self.width
        data = bytes(region.data[: len(region.data) - len(region.data) % width])
        digits = 2 * width
        out = ["Stack\n"]
        code = f"{region.endian}{'I' if width == 4 else 'Q'}"
        for i, (word,) in enumerate(struct.iter_unpack(code, data)):
            out.append(f"    {i * width:#010x}: {word:#0{digits + 2}x}\n")
        out.append("\n")
        return "".join(out)


def hexdump(data: bytes | memoryview) -> str:
    """rust-minidump's memory dump: 16 bytes a line, offset, hex, then the printable ASCII."""
    out = []
    for offset in range(0, len(data), 16):
        chunk = bytes(data[offset : offset + 16])
        hexes = "".join(f"{b:02x} " for b in chunk).ljust(48)
        text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk)
        out.append(f"    {offset:08x}: {hexes}{text}\n")
    return "".join(out)


def memory_list_text(memory: MemoryList, out: list[str], *, sixty_four: bool, brief: bool) -> None:
    """A MemoryList or Memory64List: its descriptors, each with its hex dump unless `brief`."""
    title = "MinidumpMemory64List" if sixty_four else "MinidumpMemoryList"
    out.append(f"{title}\n  region_count = {len(memory.regions)}\n\n")
    for i, region in enumerate(memory.regions):
        out.append(f"region[{i}]\n")
        if sixty_four:
            out.append(
                "MINIDUMP_MEMORY_DESCRIPTOR64\n"
                f"  start_of_memory_range = {region.base:#x}\n"
                f"  memory.data_size      = {region.size:#x}\n"
            )
        else:
            out.append(
                "MINIDUMP_MEMORY_DESCRIPTOR\n"
                f"  start_of_memory_range = {region.base:#x}\n"
                f"  memory.data_size      = {region.size:#x}\n"
                f"  memory.rva            = {region.rva:#x}\n"
            )
        if not brief:
            out.append("Memory\n" + hexdump(region.data))
        out.append("\n")
