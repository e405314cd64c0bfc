"""`inspector.core.enums.Enum` behaves as `enum.Enum` for everything the engine uses of it."""

from __future__ import annotations

import copy
import enum
import importlib
import pickle
import pkgutil

import pytest

import inspector.core
from inspector.core.enums import Enum, IntEnum


class Colour(Enum):
    RED = "red"
    GREEN = "green"
    CRIMSON = "red"  # an alias of RED
    _ignored = "private names are not members"

    @property
    def loud(self) -> str:
        return self.value.upper()

    @classmethod
    def parse(cls, text: str) -> Colour:
        return cls(text.lower())

    def describe(self) -> str:
        return f"{self.name.lower()} is {self.value}"


StdColour = enum.Enum("Colour", [("RED", "red"), ("GREEN", "green"), ("CRIMSON", "red")])  # type: ignore[misc]


def test_members_lookups_and_texts_match_the_standard_enum() -> None:
    ours, std = Colour, StdColour
    assert [m.name for m in ours] == [m.name for m in std] == ["RED", "GREEN"]
    assert [m.value for m in ours] == [m.value for m in std]
    assert len(ours) == len(std) == 2
    assert ours.CRIMSON is ours.RED and std.CRIMSON is std.RED
    assert list(ours.__members__) == list(std.__members__) == ["RED", "GREEN", "CRIMSON"]
    assert ours("green") is ours.GREEN and ours["GREEN"] is ours.GREEN
    assert ours.GREEN in ours and std.GREEN in std
    assert list(reversed(ours)) == [ours.GREEN, ours.RED]
    for member, twin in zip(ours, std, strict=True):
        assert (repr(member), str(member)) == (repr(twin), str(twin))
        assert f"{member}|{member:>14}" == f"{twin}|{twin:>14}"
    with pytest.raises(ValueError, match=r"'blue' is not a valid .*Colour"):
        ours("blue")
    with pytest.raises(ValueError, match="is not a valid"):
        ours(["unhashable"])
    with pytest.raises(KeyError):
        ours["BLUE"]
    assert not hasattr(ours, "_ignored") or ours._ignored == "private names are not members"
    assert "_ignored" not in ours.__members__


def test_methods_properties_and_classmethods_of_the_body_are_kept() -> None:
    assert Colour.RED.loud == "RED"
    assert Colour.parse("GREEN") is Colour.GREEN
    assert Colour.GREEN.describe() == "green is green"


def test_members_are_unique_immutable_and_survive_pickle_and_copy() -> None:
    red = Colour.RED
    assert pickle.loads(pickle.dumps(red)) is red
    assert copy.copy(red) is red and copy.deepcopy([red])[0] is red
    assert {Colour.RED: 1, Colour.CRIMSON: 2} == {Colour.RED: 2}
    assert Colour.RED not in ("red", StdColour.RED)
    with pytest.raises(AttributeError):
        red.value = "blue"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        Colour.RED = Colour.GREEN  # type: ignore[misc]
    with pytest.raises(TypeError):
        sorted([Colour.GREEN, Colour.RED])  # type: ignore[type-var]
    with pytest.raises(TypeError, match="cannot extend"):

        class More(Colour):  # type: ignore[misc]
            BLUE = "blue"


def _engine_enums() -> list[type[Enum] | type[IntEnum]]:
    found: dict[str, type[Enum] | type[IntEnum]] = {}
    for info in pkgutil.walk_packages(inspector.core.__path__, "inspector.core."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, (Enum, IntEnum))
                and value not in (Enum, IntEnum)
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


@pytest.mark.parametrize("cls", _engine_enums(), ids=lambda cls: cls.__qualname__)
def test_every_enumeration_of_the_engine_matches_its_standard_twin(cls: type[Enum] | type[IntEnum]) -> None:
    base = enum.IntEnum if issubclass(cls, int) else enum.Enum
    twin = base(cls.__name__, [(name, member.value) for name, member in cls.__members__.items()])  # type: ignore[misc]
    assert [m.name for m in cls] == [m.name for m in twin]
    assert {name: m.name for name, m in cls.__members__.items()} == {
        name: m.name for name, m in twin.__members__.items()
    }
    for member, std in zip(cls, twin, strict=True):
        assert member.value == std.value
        assert cls(member.value) is member and cls[member.name] is member
        assert (repr(member), str(member), f"{member}") == (repr(std), str(std), f"{std}")
        assert pickle.loads(pickle.dumps(member)) is member
        assert hash(member) == hash(member) and member in cls
        if base is enum.IntEnum:
            assert member == std == member.value and hash(member) == hash(std)
            assert isinstance(member.value, int) and type(member.value) is int


class Bits(IntEnum):
    LOW = 1
    HIGH = 0x80000000
    BOTH_ALIAS = 1


StdBits = enum.IntEnum("Bits", [("LOW", 1), ("HIGH", 0x80000000), ("BOTH_ALIAS", 1)])  # type: ignore[misc]


def test_int_members_are_their_numbers_as_in_the_standard_int_enum() -> None:
    assert Bits.BOTH_ALIAS is Bits.LOW and list(Bits) == [Bits.LOW, Bits.HIGH]
    assert {1: "raw"}[Bits.LOW] == "raw" and {Bits.HIGH: "member"}[0x80000000] == "member"
    assert Bits.LOW | Bits.HIGH == StdBits.LOW | StdBits.HIGH == 0x80000001
    assert 0x80000001 & Bits.HIGH == 0x80000000 and Bits.HIGH > Bits.LOW
    assert sorted([Bits.HIGH, Bits.LOW]) == [1, 0x80000000]
    assert Bits(0x80000000) is Bits.HIGH and Bits(Bits.LOW) is Bits.LOW
    with pytest.raises(ValueError, match=r"2 is not a valid .*Bits"):
        Bits(2)
    for member, twin in zip(Bits, StdBits, strict=True):
        assert (repr(member), str(member), f"{member:#x}") == (repr(twin), str(twin), f"{twin:#x}")
    assert pickle.loads(pickle.dumps(Bits.HIGH)) is Bits.HIGH and copy.deepcopy(Bits.LOW) is Bits.LOW
    with pytest.raises(AttributeError):
        Bits.LOW.name = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        Bits.LOW = Bits.HIGH  # type: ignore[misc]
