"""An ELF file's identity read from its build-id note (`objects.elf_identity`) is symbolic's.

`ObjectSources.identity` reads this machine's libraries' build ids without importing symbolic;
for every file it answers, the answer must be the one `reading.read_objects` (symbolic) gives,
and for anything else it must answer None so that symbolic is asked. Checked on real files of
this machine and of the fixtures, on small ELF files made here (both classes, both byte orders,
the note in a segment, a section or both), and on damaged and hostile variants of them.
"""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.core.symbols.objects import sources
from inspector.core.symbols.objects.elf_identity import breakpad_debug_id_of_build_id, elf_identity
from inspector.core.symbols.objects.sources import ObjectSources
from tests.conftest import REPO, read_cases

FIXTURES = REPO / "tests" / "fixtures" / "crashes"
#: folders of this machine holding many ELF files, and how many of each are compared
SYSTEM_FOLDERS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/bin",
    "/usr/lib/debug/.build-id",
)
FILES_PER_FOLDER = 120
BUILD_ID = bytes.fromhex("0123456789abcdeffedcba9876543210deadbeef")


def _identity(path: Path) -> tuple[str, str] | None:
    return elf_identity(str(path), os.stat(path))


def _symbolic_identity(path: Path) -> list[tuple[str, str | None]] | None:
    """What symbolic says ([(debug id, code id)] of each object), None when it cannot read the file."""
    from inspector.core.symbols.objects.errors import ObjectUnreadable
    from inspector.core.symbols.objects.reading import read_objects

    try:
        return [(info.debug_id, info.code_id) for info, _ in read_objects(path)]
    except ObjectUnreadable:
        return None


def _elf_files(folder: Path, limit: int) -> list[Path]:
    """Up to `limit` ELF files under `folder` (sorted, the first sub-folders first)."""
    out: list[Path] = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = Path(root, name)
            try:
                if path.is_symlink() or not path.is_file():
                    continue
                with open(path, "rb") as f:
                    if f.read(4) != b"\x7fELF":
                        continue
            except OSError:
                continue
            out.append(path)
            if len(out) >= limit:
                return out
    return out


# ---- small ELF files made here --------------------------------------------------------------------


def _padded(size: int, alignment: int) -> int:
    return -(-size // alignment) * alignment


def _note(kind: int, name: bytes, desc: bytes, byte_order: str, alignment: int = 4) -> bytes:
    """One note: its three words, then the name and the descriptor, each padded to `alignment`."""
    note = struct.pack(byte_order + "III", len(name), len(desc), kind) + name
    note += bytes(_padded(len(note), alignment) - len(note)) + desc
    return note + bytes(_padded(len(note), alignment) - len(note))


def _elf(
    *,
    wide: bool = True,
    little: bool = True,
    notes: bytes | None = None,
    in_segment: bool = True,
    in_section: bool = True,
    alignment: int = 4,
) -> bytes:
    """A small ELF file: header, one program header (PT_NOTE, or PT_LOAD when not `in_segment`),
    the notes, the section names and three section headers (null, `.note.gnu.build-id` as
    SHT_NOTE, or SHT_PROGBITS when not `in_section`, and `.shstrtab`)."""
    order = "<" if little else ">"
    notes = _note(3, b"GNU\0", BUILD_ID, order, alignment) if notes is None else notes
    names = b"\0.note.gnu.build-id\0.shstrtab\0"
    header_size, program_header_size, section_header_size = (64, 56, 64) if wide else (52, 32, 40)
    notes_at = _padded(header_size + program_header_size, 8)
    names_at = notes_at + len(notes)
    section_headers_at = _padded(names_at + len(names), 8)
    machine = {(True, True): 62, (False, True): 3, (True, False): 21, (False, False): 20}[(wide, little)]
    ident = b"\x7fELF" + bytes([2 if wide else 1, 1 if little else 2, 1]) + bytes(9)
    header = ident + struct.pack(
        order + ("HHIQQQIHHHHHH" if wide else "HHIIIIIHHHHHH"),
        3,  # ET_DYN
        machine,
        1,
        0,
        header_size,
        section_headers_at,
        0,
        header_size,
        program_header_size,
        1,
        section_header_size,
        3,
        2,
    )
    p_type = 4 if in_segment else 1
    if wide:
        program = struct.pack(
            order + "IIQQQQQQ", p_type, 4, notes_at, notes_at, notes_at, len(notes), len(notes), alignment
        )
    else:
        program = struct.pack(
            order + "IIIIIIII", p_type, notes_at, notes_at, notes_at, len(notes), len(notes), 4, alignment
        )
    section = struct.Struct(order + ("IIQQQQIIQQ" if wide else "IIIIIIIIII"))
    sections = (
        section.pack(0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        + section.pack(1, 7 if in_section else 1, 2, notes_at, notes_at, len(notes), 0, 0, alignment, 0)
        + section.pack(20, 3, 0, 0, names_at, len(names), 0, 0, 1, 0)
    )
    out = header + program
    out += bytes(notes_at - len(out)) + notes + names
    return out + bytes(section_headers_at - len(out)) + sections


VARIANTS = {
    f"{'64' if wide else '32'}-{'le' if little else 'be'}-{where}": (wide, little, where)
    for wide in (True, False)
    for little in (True, False)
    for where in ("segment", "section", "both")
}


def _variant(name: str, *, alignment: int = 4) -> bytes:
    wide, little, where = VARIANTS[name]
    in_segment, in_section = where != "section", where != "segment"
    return _elf(wide=wide, little=little, in_segment=in_segment, in_section=in_section, alignment=alignment)


def _expected(little: bool) -> tuple[str, str]:
    """The identity of BUILD_ID, spelled out: the GUID's first three fields are little-endian
    numbers in a little-endian file and big-endian ones in a big-endian file."""
    if little:
        return "67452301AB89EFCDFEDCBA98765432100", BUILD_ID.hex()
    return "0123456789ABCDEFFEDCBA98765432100", BUILD_ID.hex()


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_small_elf_file_gives_its_build_id(name: str, tmp_path: Path) -> None:
    path = tmp_path / "small.so"
    path.write_bytes(_variant(name))
    assert _identity(path) == _expected(VARIANTS[name][1])


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_small_elf_file_gives_what_symbolic_gives(name: str, tmp_path: Path) -> None:
    pytest.importorskip("symbolic", reason="comparing with symbolic needs the symbolic package")
    for alignment in (4, 8):
        path = tmp_path / f"small-{alignment}.so"
        path.write_bytes(_variant(name, alignment=alignment))
        fast = _identity(path)
        assert fast is not None
        assert _symbolic_identity(path) == [fast]


def test_the_debug_id_is_the_build_ids_first_sixteen_bytes_as_a_guid() -> None:
    twenty = bytes(range(20))
    assert breakpad_debug_id_of_build_id(twenty, little_endian=True) == "030201000504070608090A0B0C0D0E0F0"
    assert breakpad_debug_id_of_build_id(twenty, little_endian=False) == "000102030405060708090A0B0C0D0E0F0"
    # shorter build ids are padded with zeros
    assert breakpad_debug_id_of_build_id(b"\x01\x02\x03\x04\x05\x06\x07\x08", little_endian=True) == (
        "04030201060508070000000000000000" + "0"
    )


# ---- real files -------------------------------------------------------------------------------------


def test_the_fixtures_system_libraries_give_the_debug_ids_breakpad_gave_them() -> None:
    """system-modules.tsv holds (build id, debug id) as dump_syms wrote them on the machine that
    made the crashes; where this machine has the same file, the identity read here is that."""
    compared = 0
    for line in (FIXTURES / "system-modules.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        _name, build_id, debug_id, path = line.split("\t")
        if not os.path.isfile(path):
            continue
        found = elf_identity(path, os.stat(path))
        assert found is not None, path
        if found[1] == build_id:
            assert found[0] == debug_id
            compared += 1
    if not compared:
        pytest.skip("this machine has none of the system libraries the crashes were made with")


def test_the_fixtures_binaries_give_what_symbolic_gives() -> None:
    pytest.importorskip("symbolic", reason="comparing with symbolic needs the symbolic package")
    binaries = sorted(p for p in FIXTURES.glob("*/binaries/*") if p.is_file())
    assert binaries
    for path in binaries:
        fast = _identity(path)
        assert fast is not None, path  # our own builds: plain ELF files with a GNU build id
        assert _symbolic_identity(path) == [fast], path


def test_this_machines_elf_files_give_what_symbolic_gives() -> None:
    pytest.importorskip("symbolic", reason="comparing with symbolic needs the symbolic package")
    folders = [Path(f) for f in SYSTEM_FOLDERS if os.path.isdir(f)]
    files = [path for folder in folders for path in _elf_files(folder, FILES_PER_FOLDER)]
    if not files:
        pytest.skip(f"no ELF files in {', '.join(SYSTEM_FOLDERS)} on this machine")
    answered = with_build_id = 0
    for path in files:
        fast = _identity(path)
        symbolic = _symbolic_identity(path)
        if symbolic is not None and len(symbolic) == 1 and symbolic[0][1]:
            with_build_id += 1
        if fast is not None:
            answered += 1
            assert symbolic == [fast], path
    # the point is not to ask symbolic: nearly every file with a build id is answered here
    assert answered >= 0.9 * with_build_id, (answered, with_build_id)


# ---- damaged and hostile files -------------------------------------------------------------------------


def _check(path: Path, data: bytes, expected: tuple[str, str] | None = None) -> tuple[str, str] | None:
    """The identity of `data` (never an exception); with `expected`, it is that or None."""
    path.write_bytes(data)
    found = _identity(path)
    if expected is not None:
        assert found in (None, expected)
    return found


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_truncated_file_is_left_to_symbolic(name: str, tmp_path: Path) -> None:
    """Cut at every length: the section headers are at the end, so no cut file is answered."""
    data = _variant(name)
    for size in range(len(data)):
        assert _check(tmp_path / "cut.so", data[:size]) is None, size


def _patched(data: bytes, offset: int, fmt: str, *values: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, *values)
    return bytes(out)


#: the header fields of a 64-bit little-endian file: name -> (offset, struct format)
_HEADER_FIELDS = {
    "e_phoff": (0x20, "<Q"),
    "e_shoff": (0x28, "<Q"),
    "e_phentsize": (0x36, "<H"),
    "e_phnum": (0x38, "<H"),
    "e_shentsize": (0x3A, "<H"),
    "e_shnum": (0x3C, "<H"),
    "e_shstrndx": (0x3E, "<H"),
}
_ABSURD = (0, 1, 2, 0x7F, 0xFFFF, 0xFFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF)


@pytest.mark.parametrize("field", sorted(_HEADER_FIELDS))
def test_absurd_header_fields_give_the_identity_or_none(field: str, tmp_path: Path) -> None:
    offset, fmt = _HEADER_FIELDS[field]
    good = _elf()
    for value in _ABSURD:
        fitting = value & ((1 << (8 * struct.calcsize(fmt))) - 1)
        _check(tmp_path / "absurd.so", _patched(good, offset, fmt, fitting), _expected(True))


def test_absurd_program_and_section_headers_give_the_identity_or_none(tmp_path: Path) -> None:
    good = _elf()
    program_at, sections_at = 64, struct.unpack_from("<Q", good, 0x28)[0]
    # p_type, p_offset, p_filesz, p_memsz, p_align; sh_name, sh_type, sh_offset, sh_size, sh_addralign
    program = ((0, "<I"), (8, "<Q"), (32, "<Q"), (40, "<Q"), (48, "<Q"))
    section = ((0, "<I"), (4, "<I"), (24, "<Q"), (32, "<Q"), (48, "<Q"))
    fields = [(program_at + at, fmt) for at, fmt in program]
    fields += [(sections_at + 64 * index + at, fmt) for index in range(3) for at, fmt in section]
    for at, fmt in fields:
        for value in _ABSURD:
            fitting = value & ((1 << (8 * struct.calcsize(fmt))) - 1)
            _check(tmp_path / "absurd.so", _patched(good, at, fmt, fitting), _expected(True))


@pytest.mark.parametrize(
    "notes",
    [
        pytest.param(
            struct.pack("<III", 4, 0xFFFF_FFF0, 3) + b"GNU\0" + BUILD_ID, id="descriptor-past-the-end"
        ),
        pytest.param(struct.pack("<III", 0xFFFF_FFF0, 20, 3) + b"GNU\0" + BUILD_ID, id="name-past-the-end"),
        pytest.param(struct.pack("<III", 4, 21, 3) + b"GNU\0" + BUILD_ID, id="one-byte-past-the-end"),
        pytest.param(struct.pack("<III", 0, 20, 3) + BUILD_ID, id="no-name"),
        pytest.param(_note(3, b"GNU\0", b"", "<"), id="empty-build-id"),
        pytest.param(
            _note(3, b"XYZ\0", BUILD_ID, "<") + _note(3, b"GNU\0", BUILD_ID, "<"), id="not-gnus-first"
        ),
        pytest.param(
            _note(1, b"\xff\xfe\0", b"abcd", "<") + _note(3, b"GNU\0", BUILD_ID, "<"), id="name-not-utf-8"
        ),
        pytest.param(_note(3, b"GNUX", BUILD_ID, "<"), id="name-without-nul"),
        pytest.param(_note(1, b"GNU\0", b"abcd", "<")[:10], id="header-cut"),
    ],
)
def test_notes_symbolic_would_read_otherwise_are_left_to_it(notes: bytes, tmp_path: Path) -> None:
    for in_section in (False, True):
        path = tmp_path / "notes.so"
        path.write_bytes(_elf(notes=notes, in_section=in_section))
        assert _identity(path) is None


def test_notes_before_the_build_id_are_skipped(tmp_path: Path) -> None:
    """An ABI tag first (4-aligned), or a property note with 8-byte padding (`.note.gnu.property`)."""
    for alignment, notes in (
        (4, _note(1, b"GNU\0", bytes(16), "<") + _note(3, b"GNU\0", BUILD_ID, "<")),
        (8, _note(5, b"GNU\0", bytes(16), "<", 8) + _note(3, b"GNU\0", BUILD_ID, "<", 8)),
        (4, _note(0x4F6E, b"FDO\0", b'{"type":"deb"}\0', "<") + _note(3, b"GNU\0", BUILD_ID, "<")),
    ):
        path = tmp_path / "notes.so"
        path.write_bytes(_elf(notes=notes, alignment=alignment))
        assert _identity(path) == _expected(True)


def test_odd_note_alignments_are_left_to_symbolic(tmp_path: Path) -> None:
    for alignment in (3, 16, 0xFFFF_FFFF):
        path = tmp_path / "aligned.so"
        path.write_bytes(_patched(_elf(in_section=False), 64 + 48, "<Q", alignment))  # p_align
        assert _identity(path) is None


def test_not_elf_files_and_other_things_are_left_to_symbolic(tmp_path: Path) -> None:
    good = _elf()
    cases = {
        "empty": b"",
        "pe": b"MZ" + bytes(300),
        "bad-class": good[:4] + b"\x03" + good[5:],
        "bad-byte-order": good[:5] + b"\x03" + good[6:],
        "bad-version": good[:6] + b"\x02" + good[7:],
        "garbage": b"\x7fELF\x02\x01\x01" + random.Random(7).randbytes(5000),
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert _identity(path) is None, name
    assert elf_identity(str(tmp_path), os.stat(tmp_path)) is None  # a folder
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        assert elf_identity(str(fifo), os.stat(fifo)) is None  # never opened: it would block


def test_a_file_over_the_size_read_is_left_to_symbolic(tmp_path: Path) -> None:
    from inspector.core.symbols.objects.errors import MAX_OBJECT_SIZE

    path = tmp_path / "huge.so"
    with open(path, "wb") as f:  # sparse: the good file's bytes, then a hole
        f.write(_elf())
        f.truncate(MAX_OBJECT_SIZE + 1)
    assert _identity(path) is None


def test_random_damage_gives_the_identity_or_none_and_never_another(tmp_path: Path) -> None:
    """Bytes and words of the small files set at random: when an identity is given, it is the one
    symbolic gives for that damaged file (the damage may have hit the build id itself)."""
    compare = _has_symbolic()
    rng = random.Random(18)
    goods = [_variant(name, alignment=alignment) for name in sorted(VARIANTS) for alignment in (4, 8)]
    path = tmp_path / "damaged.so"
    answered = 0
    for _ in range(600 if compare else 3000):
        data = bytearray(rng.choice(goods))
        for _ in range(rng.choice((1, 1, 2, 4))):
            at = rng.randrange(len(data) - 4)
            if rng.random() < 0.5:
                data[at] = rng.choice((0, 0xFF, rng.randrange(256), data[at] ^ (1 << rng.randrange(8))))
            else:
                word = rng.choice((0, 1, 8, 0xFFFF_FFFF, rng.randrange(1 << 32)))
                data[at : at + 4] = word.to_bytes(4, "little")
        path.write_bytes(bytes(data))
        found = _identity(path)
        if found is not None:
            answered += 1
            if compare:
                assert _symbolic_identity(path) == [found], bytes(data).hex()
    assert answered  # damage away from the headers and notes leaves the identity readable


def _has_symbolic() -> bool:
    try:
        import symbolic  # noqa: F401
    except ImportError:
        return False
    return True


# ---- through ObjectSources ---------------------------------------------------------------------------


def test_object_sources_give_the_identity_without_importing_symbolic(tmp_path: Path) -> None:
    """In a fresh process: a binary's identity, as `identity` gave it through symbolic, without it."""
    binary = FIXTURES / "libc_abort" / "binaries" / "ledger"
    child = (
        "import sys\n"
        "from inspector.core.symbols.objects.sources import ObjectSources\n"
        f"objects = ObjectSources([], local_modules=True, cache_dir={str(tmp_path)!r})\n"
        f"print(objects.identity({str(binary)!r}))\n"
        "heavy = ('symbolic', 'hashlib', 'inspector.core.symbols.objects.reading')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True, cwd=REPO)
    identity, imported = run.stdout.splitlines()
    assert identity == "[('16AC9726D6C71011CD76CD9A3C1AB1560', '2697AC16C7D61110CD76CD9A3C1AB156EEC6E066')]"
    assert imported == "[]"


def test_without_symbolic_no_identity_is_read_and_the_problem_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As before the reader: without symbolic no object can be converted, so none is matched, and
    a symbol folder's objects are named in the problems with what to install."""
    monkeypatch.setitem(sys.modules, "symbolic", None)
    monkeypatch.setitem(sys.modules, "symbolic.debuginfo", None)
    monkeypatch.setattr(sources, "_SYMBOLIC", [])
    monkeypatch.setattr(sources, "_IDENTITIES", {})
    path = tmp_path / "libsmall.so"
    path.write_bytes(_elf())
    objects = ObjectSources([], local_modules=True, cache_dir=tmp_path / "cache")
    assert objects.identity(str(path)) == []
    [(where, reason)] = objects.problems
    assert where == str(path) and "needs the 'symbolic' package" in reason


# ---- a warm batch ------------------------------------------------------------------------------------

_CORPUS_CHILD = """
import json, sys
from inspector.core.process import ProcessOptions, process
from inspector.core.report.json_report import render_json
base, cache = sys.argv[1], sys.argv[2]
for dump, symbols in json.loads(sys.argv[3]):
    options = ProcessOptions(symbol_paths=tuple(f"{base}/{s}" for s in symbols), symbols_cache=cache)
    render_json(process(f"{base}/{dump}", options))
print(json.dumps(sorted(m for m in ("symbolic", "hashlib") if m in sys.modules)))
"""


def test_a_warm_corpus_pass_imports_neither_symbolic_nor_hashlib(corpus_dir: Path, tmp_path: Path) -> None:
    """The whole corpus in one process, as a batch does, with the index cache of a first pass:
    local libraries' identities come from their notes, the folders' listings are found by crc32."""
    cases = [(dump, list(symbols)) for _label, dump, symbols, _reference in read_cases()]
    cache = tmp_path / "cache"
    command = [sys.executable, "-c", _CORPUS_CHILD, str(corpus_dir), str(cache), json.dumps(cases)]
    for _ in range(2):  # the first pass fills the cache
        run = subprocess.run(command, capture_output=True, text=True, check=True, cwd=REPO, timeout=300)
    assert json.loads(run.stdout.splitlines()[-1]) == []
