"""Value types shared by the minidump reader, the symbol index and the walker."""

from __future__ import annotations

import os

from inspector.core.enums import Enum
from inspector.core.record import Record


class Cpu(Enum):
    """CPU architecture of a dump, with rust-minidump's JSON spelling as value."""

    X86 = "x86"
    AMD64 = "amd64"
    ARM = "arm"
    ARM64 = "arm64"
    MIPS = "mips"
    MIPS64 = "mips64"
    PPC = "ppc"
    PPC64 = "ppc64"
    SPARC = "sparc"
    UNKNOWN = "unknown"

    @property
    def pointer_width(self) -> int:
        """Bytes per pointer (4 or 8)."""
        return 8 if self in _WIDE_CPUS else 4


_WIDE_CPUS = frozenset({Cpu.AMD64, Cpu.ARM64, Cpu.MIPS64, Cpu.PPC64})


class Os(Enum):
    """Operating system of a dump, with rust-minidump's JSON spelling as value."""

    WINDOWS = "Windows NT"
    MACOS = "Mac OS X"
    IOS = "iOS"
    LINUX = "Linux"
    SOLARIS = "Solaris"
    ANDROID = "Android"
    PS3 = "PS3"
    NACL = "NaCl"
    FUCHSIA = "Fuchsia"
    UNKNOWN = "Unknown"


class AddressRange(Record):
    """Half-open range [start, end)."""

    start: int
    end: int

    def __contains__(self, address: object) -> bool:
        return isinstance(address, int) and self.start <= address < self.end

    @property
    def size(self) -> int:
        return self.end - self.start


def format_address(value: int, pointer_width: int) -> str:
    """`0x` + lower-case hex zero-padded to the pointer width, as both reference tools print."""
    return f"0x{value:0{pointer_width * 2}x}"


def path_text(path: str | os.PathLike[str]) -> str:
    """`str(pathlib.Path(path))`, without importing pathlib on POSIX systems.

    The engine works on path strings (a `Path` per probe cost the walk more than the probe
    itself, and importing pathlib cost every process 3 ms), but paths are shown to people and
    written to reports as `Path` spelled them before: empty and `.` components dropped, no
    trailing separator, `.` for nothing.
    """
    text = os.fspath(path)
    if os.sep != "/" or os.altsep is not None:
        from pathlib import Path

        return str(Path(text))
    root = ""
    if text.startswith("/"):
        root = "//" if text.startswith("//") and not text.startswith("///") else "/"
    parts = [part for part in text.split("/") if part and part != "."]
    return root + "/".join(parts) if root or parts else "."
