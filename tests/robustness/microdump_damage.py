"""Damaged microdumps, made from synthetic ones, each knowing which of the original's lines it damaged.

Seeds (`microdump_seeds`), all synthetic (`tests/synth/microdump.py`), with their own symbols:

* `arm` — the arm crash walked by STACK CFI (brief logcat prefixes);
* `arm64-threadtime` — an arm64 (old context layout) crash walked by frame records, threadtime
  prefixes, inside ordinary log lines;
* `x86-bare` — an x86 crash pasted without logcat prefixes, walked by scanning.

Families (`microdump_variants`), each variant named after what it damaged where
(`arm/cut-line/C+50%`):

* `cut-line` — one line cut at its start, middle or last character (the rest of the log intact);
* `truncated` — the log ending inside or after each line;
* `missing-line` — one line left out;
* `bad-hex` — a non-hex character in every hex field of every record;
* `missing-context` — the C line left out, emptied, cut to a few bytes;
* `stack` — stack lines repeated at overlapping addresses, out of order, duplicated, with a
  wrapping address, or announced as 4 GB by the S 0 line;
* `interleaved` — a second microdump's lines interleaved line by line, of another process
  (told apart) or of the same one (mixed: records repeat);
* `repeated` — a record given twice with other values;
* `garbage` — NUL bytes, invalid UTF-8, a 1 MB hex line, a line of 100 000 spaces, CR line ends;
* `byte-flip` — a few bytes changed at seeded random offsets.

`survivors(variant)` says what the damaged log still holds, from the original lines it left
intact: the O line gives the system; the R line with it the crash; each intact M line its
module; an intact C line (and O line) the first frame; all of O, C, the stack lines and the M
lines intact, the whole walk. A damaged BEGIN line of the first microdump promises nothing.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.robustness.damage import Survivors
from tests.synth.microdump import (
    APP_BASE,
    APP_ID,
    LIBC_BASE,
    LIBC_ID,
    SynthMicrodump,
    arm_crash,
    brief_prefix,
    threadtime_prefix,
    write_arm_crash_symbols,
)
from tests.synth.minidump import SynthContext
from tests.synth.sym import SymBuilder


@dataclass(frozen=True, slots=True, eq=False)
class MicrodumpSeed:
    name: str
    dump: SynthMicrodump
    prefix: str
    symbol_paths: tuple[Path, ...]
    before: bytes = b""  # log lines before the microdump

    @property
    def lines(self) -> list[str]:
        return self.dump.lines()

    @property
    def data(self) -> bytes:
        return self.before + self.dump.to_bytes(self.prefix)


@dataclass(frozen=True, slots=True, eq=False)
class MicrodumpVariant:
    name: str
    family: str
    seed: MicrodumpSeed
    data: bytes
    #: indexes into `seed.lines` of the records this variant damaged or left out
    damaged: frozenset[int] = field(default_factory=frozenset)
    #: the whole walk is no longer promised (records of another microdump mixed in)
    mixed: bool = False
    #: the reader must notice this damage (refuse the log, or record a problem)
    detectable: bool = True

    def materialize(self, directory: Path) -> Path:
        safe = self.name.replace("/", "__").replace("%", "pc").replace(" ", "_")
        path = directory / f"{safe}.txt"
        if not path.exists():
            path.write_bytes(self.data)
        return path


def _arm64(symbols: Path) -> SynthMicrodump:
    """An arm64 crash whose caller is found through a frame record (no symbols but names)."""
    sp = 0x7FF0001000
    stack = bytearray(0x800)
    frame_record = sp + 0x40
    stack[0x40:0x50] = (0).to_bytes(8, "little") + (0x5000002010).to_bytes(8, "little")
    SymBuilder(os="Linux", cpu="arm64", debug_id=APP_ID, name="app64").func(0x1000, 0x100, "crash").func(
        0x2000, 0x100, "caller"
    ).write_to_store(symbols)
    context = SynthContext.arm64_old(pc=0x5000001010, sp=sp, fp=frame_record, lr=0x5000002010)
    dump = SynthMicrodump(context, sp, bytes(stack), sp, arch="arm64", hardware="aarch64", pointer_width=8)
    dump.crash = (6, "SIGABRT", 0)
    return dump.add_module(0x5000000000, 0x10000, APP_ID, "app64")


def _x86() -> SynthMicrodump:
    sp = 0xFFB40100
    stack = bytearray(0x800)
    stack[0x110:0x114] = (LIBC_BASE + 0x4321).to_bytes(4, "little")  # above sp: found by a scan
    context = SynthContext.x86(eip=APP_BASE + 0x10, esp=sp, ebp=0)
    dump = SynthMicrodump(context, 0xFFB40000, bytes(stack), sp, arch="x86", hardware="i686", gpu=None)
    dump.add_module(APP_BASE, 0x10000, APP_ID, "app").add_module(LIBC_BASE, 0x20000, LIBC_ID, "libc.so")
    return dump


def microdump_seeds(workdir: Path) -> list[MicrodumpSeed]:
    arm_symbols = write_arm_crash_symbols(workdir / "arm")
    (workdir / "arm64").mkdir(parents=True, exist_ok=True)
    noise = b"".join(
        b"02-23 15:49:14.%03d   801   820 I ActivityManager: line %d\n" % (i, i) for i in range(5)
    )
    return [
        MicrodumpSeed("arm", arm_crash(), brief_prefix(3745), (arm_symbols,)),
        MicrodumpSeed(
            "arm64-threadtime",
            _arm64(workdir / "arm64"),
            threadtime_prefix(1740),
            (workdir / "arm64",),
            noise,
        ),
        MicrodumpSeed("x86-bare", _x86(), "", ()),
    ]


def synthetic_microdump_bytes() -> list[bytes]:
    """The seeds' logs (for the fuzzer's seed corpus); their symbols are not needed."""
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        return [seed.data for seed in microdump_seeds(Path(directory))]


# ---- variants ----------------------------------------------------------------------------------


def _variant(
    seed: MicrodumpSeed,
    family: str,
    where: str,
    lines: list[str],
    damaged: set[int],
    *,
    detectable: bool = True,
    newline: str = "\n",
) -> MicrodumpVariant:
    text = "".join(f"{seed.prefix}{line}{newline}" for line in lines)
    data = seed.before + text.encode("utf-8", "surrogateescape")
    return MicrodumpVariant(
        f"{seed.name}/{family}/{where}", family, seed, data, frozenset(damaged), detectable=detectable
    )


def _kind(line: str) -> str:
    if line.startswith("-----"):
        return "BEGIN" if "BEGIN" in line else "END"
    if line.startswith("S 0 "):
        return "S0"
    return line.split(" ", 1)[0]


#: Records whose loss the reader can always tell: the frame, the stack bytes, and the block's ends.
_MISSED_WHEN_GONE = frozenset({"BEGIN", "END", "C", "S"})


def _label(line: str, index: int) -> str:
    return f"{_kind(line)}[{index}]"


def _cut_lines(seed: MicrodumpSeed) -> Iterator[MicrodumpVariant]:
    lines = seed.lines
    for i, line in enumerate(lines):
        for fraction, name in ((0.0, "start"), (0.5, "50%"), (None, "last")):
            at = len(line) - 1 if fraction is None else int(len(line) * fraction)
            cut = [*lines[:i], line[:at], *lines[i + 1 :]]
            seen = _kind(line) in _MISSED_WHEN_GONE
            yield _variant(seed, "cut-line", f"{_label(line, i)}+{name}", cut, {i}, detectable=seen)


def _truncations(seed: MicrodumpSeed) -> Iterator[MicrodumpVariant]:
    lines = seed.lines
    for i, line in enumerate(lines):
        cut = [*lines[:i], line[: len(line) // 2]]
        data = seed.before + "".join(f"{seed.prefix}{x}\n" for x in cut).encode()
        yield MicrodumpVariant(
            f"{seed.name}/truncated/{_label(line, i)}+50%",
            "truncated",
            seed,
            data[:-1],
            frozenset(range(i, len(lines))),
        )


def _missing(seed: MicrodumpSeed) -> Iterator[MicrodumpVariant]:
    lines = seed.lines
    for i, line in enumerate(lines):
        seen = _kind(line) in _MISSED_WHEN_GONE
        yield _variant(
            seed, "missing-line", _label(line, i), [*lines[:i], *lines[i + 1 :]], {i}, detectable=seen
        )


def _hex_fields(line: str) -> list[int]:
    """Character positions of the first digit of each hex field of a record (and one mid-field)."""
    kind = line[:1]
    positions: list[int] = []
    at = 2
    for token in line[2:].split(" "):
        if token and kind in "SCMHR" and all(c in "0123456789ABCDEFabcdef:" for c in token):
            positions.append(at)
            if len(token) > 8:
                positions.append(at + len(token) // 2)
        at += len(token) + 1
    if kind == "O":  # the CPU count
        parts = line.split(" ")
        positions.append(len(" ".join(parts[:3])) + 1)
    return positions


def _bad_hex(seed: MicrodumpSeed) -> Iterator[MicrodumpVariant]:
    lines = seed.lines
    for i, line in enumerate(lines):
        for at in _hex_fields(line):
            broken = line[:at] + "G" + line[at + 1 :]
            yield _variant(
                seed, "bad-hex", f"{_label(line, i)}@{at}", [*lines[:i], broken, *lines[i + 1 :]], {i}
            )


def _context(seed: MicrodumpSeed) -> Iterator[MicrodumpVariant]:
    lines = seed.lines
    i = next(n for n, line in enumerate(lines) if line.startswith("C "))
    for name, new in (
        ("empty", "C"),
        ("4-bytes", lines[i][:10]),
        ("odd-digit", lines[i] + "7"),
        ("doubled", lines[i] + lines[i][2:]),
    ):
        yield _variant(seed, "missing-context", name, [*lines[:i], new, *lines[i + 1 :]], {i})


def _stack(seed: MicrodumpSeed) -> Iterator[MicrodumpVariant]:
    lines = seed.lines
    width = seed.dump.pointer_width * 2
    chunks = [n for n, line in enumerate(lines) if line.startswith("S ") and not line.startswith("S 0 ")]
    header = next(n for n, line in enumerate(lines) if line.startswith("S 0 "))
    first, last = chunks[0], chunks[-1]
    address = int(lines[first].split()[1], 16)
    shifted = f"S {address + 8:0{width}X} {lines[first].split()[2]}"
    yield _variant(seed, "stack", "overlap-after", [*lines[: last + 1], shifted, *lines[last + 1 :]], set())
    # an overlapping line before the real ones takes their place: those bytes are damaged
    yield _variant(seed, "stack", "overlap-before", [*lines[:first], shifted, *lines[first:]], set(chunks))
    yield _variant(seed, "stack", "duplicate", [*lines[: last + 1], lines[first], *lines[last + 1 :]], set())
    reversed_chunks = [lines[n] for n in reversed(chunks)]
    # placed by their addresses: nothing is lost, nothing to notice
    reordered = [*lines[:first], *reversed_chunks, *lines[last + 1 :]]
    yield _variant(seed, "stack", "reversed", reordered, set(), detectable=False)
    wrap = f"S {(1 << (4 * width)) - 8:0{width}X} " + "AB" * 64
    yield _variant(seed, "stack", "wrapping-address", [*lines[: last + 1], wrap, *lines[last + 1 :]], set())
    parts = lines[header].split()
    huge = f"S 0 {parts[2]} {parts[3]} {'F' * width}"
    yield _variant(seed, "stack", "huge-length", [*lines[:header], huge, *lines[header + 1 :]], set())


def _interleaved(seed: MicrodumpSeed) -> Iterator[MicrodumpVariant]:
    other = arm_crash(crash=(6, "SIGABRT", 0)).lines()
    lines = seed.lines
    mine = seed.before + b"".join(f"{seed.prefix}{line}\n".encode() for line in lines)
    if seed.prefix:
        theirs = [f"{brief_prefix(9999)}{line}\n".encode() for line in other]
        ours = [f"{seed.prefix}{line}\n".encode() for line in lines]
        mixed = b"".join(
            a + b for a, b in zip(ours, theirs + [b""] * (len(ours) - len(theirs)), strict=False)
        )
        yield MicrodumpVariant(
            f"{seed.name}/interleaved/other-process", "interleaved", seed, seed.before + mixed
        )
        # the same process (or no pid at all): the lines cannot be told apart
        same = [f"{seed.prefix}{line}\n".encode() for line in other]
        both = b"".join(a + b for a, b in zip(ours[1:], same[1:], strict=False))
        data = seed.before + ours[0] + same[0] + both
        everything = frozenset(range(1, len(lines)))  # all but BEGIN: the records are mixed
        name = f"{seed.name}/interleaved/same-process"
        yield MicrodumpVariant(name, "interleaved", seed, data, everything, mixed=True)
    yield MicrodumpVariant(f"{seed.name}/interleaved/after", "interleaved", seed, mine + mine)


def _repeated(seed: MicrodumpSeed) -> Iterator[MicrodumpVariant]:
    lines = seed.lines
    extra = {
        "O": "O L mips 01 mips other",
        "R": "R 00000004 SIGILL 00001234",
        "G": "G other|vendor|renderer",
        "C": "C " + SynthContext.arm(pc=1).to_bytes().hex().upper(),
        "S 0": "S 0 00001000 00001000 00001000",
        "V": "V Other:2.0",
    }
    for kind, new in extra.items():
        at = next((n for n, line in enumerate(lines) if line.startswith(kind + " ")), None)
        if at is not None:
            yield _variant(
                seed, "repeated", kind.replace(" ", ""), [*lines[: at + 1], new, *lines[at + 1 :]], set()
            )


def _garbage(seed: MicrodumpSeed) -> Iterator[MicrodumpVariant]:
    lines = seed.lines
    yield _variant(seed, "garbage", "nul-line", [*lines[:3], "\0" * 40, *lines[3:]], set())
    yield _variant(seed, "garbage", "invalid-utf8", [*lines[:3], "\udcff\udcfe S 1234", *lines[3:]], set())
    yield _variant(
        seed, "garbage", "megabyte-hex-line", [*lines[:-1], "S 10000000 " + "00" * 500_000, lines[-1]], set()
    )
    yield _variant(
        seed, "garbage", "spaces-line", [*lines[:-1], " " * 100_000, lines[-1]], set(), detectable=False
    )
    yield _variant(seed, "garbage", "crlf", lines, set(), detectable=False, newline="\r\n")
    yield _variant(
        seed, "garbage", "unknown-records", [*lines[:-1], "Z 1 2 3", "M", "S", "C", "", lines[-1]], set()
    )


def _byte_flips(seed: MicrodumpSeed, count: int = 12) -> Iterator[MicrodumpVariant]:
    data = seed.data
    rng = random.Random(f"microdump-flips-{seed.name}")
    starts = _line_starts(seed)
    for n in range(count):
        damaged_data = bytearray(data)
        hit: set[int] = set()
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(seed.before), len(data))
            damaged_data[at] ^= rng.randint(1, 255)
            index = max(i for i, start in enumerate(starts) if start <= at)
            hit |= {index, index + 1} if data[at : at + 1] == b"\n" else {index}
        # a hex digit flipped into another is a different value, not visible damage
        name = f"{seed.name}/byte-flip/{n}"
        yield MicrodumpVariant(name, "byte-flip", seed, bytes(damaged_data), frozenset(hit), detectable=False)


def _line_starts(seed: MicrodumpSeed) -> list[int]:
    starts, at = [], len(seed.before)
    for line in seed.lines:
        starts.append(at)
        at += len(f"{seed.prefix}{line}\n".encode())
    return starts


FAMILIES: tuple[Callable[[MicrodumpSeed], Iterator[MicrodumpVariant]], ...] = (
    _cut_lines,
    _truncations,
    _missing,
    _bad_hex,
    _context,
    _stack,
    _interleaved,
    _repeated,
    _garbage,
    _byte_flips,
)


def microdump_variants(seeds: list[MicrodumpSeed]) -> list[MicrodumpVariant]:
    return [variant for seed in seeds for family in FAMILIES for variant in family(seed)]


def survivors(variant: MicrodumpVariant) -> Survivors:
    lines = variant.seed.lines
    intact = set(range(len(lines))) - variant.damaged

    def kept(prefix: str) -> list[int]:
        return [i for i, line in enumerate(lines) if line.startswith(prefix)]

    if 0 not in intact or not intact - {0, len(lines) - 1}:  # no BEGIN line or no record: no microdump
        return Survivors(False, False, (), (), (), ())
    system = set(kept("O ")) <= intact
    modules = tuple(n for n, i in enumerate(kept("M ")) if i in intact)
    context = system and set(kept("C ")) <= intact
    stack = set(kept("S ")) - set(kept("S 0 ")) <= intact
    walk = context and stack and len(modules) == len(kept("M ")) and not variant.mixed
    return Survivors(
        system=system,
        crash=system and set(kept("R ")) <= intact,
        modules=modules,
        threads=(0,),
        first_frames=(0,) if context else (),
        walks=(0,) if walk else (),
    )
