"""`Record`: the engine's value classes behave as the frozen dataclasses they replaced."""

from __future__ import annotations

import copy
import dataclasses
import os
import pickle
import subprocess
import sys

import pytest

from inspector.core import record as record_module
from inspector.core.record import Record, field, replace


class Point(Record):
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)
    note: str = field(default="", repr=False, compare=False)


class Labelled(Point):
    label: str = "p"
    size: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", len(self.label))


class Pair(Record):
    a: int
    b: str = field(default="", compare=False)


class Identity(Record, eq=False):
    value: int


class Mutable(Record, frozen=False):
    value: int


def test_construction_defaults_factories_and_post_init_match_in_both_init_tiers() -> None:
    seen = []
    for _ in range(record_module._COMPILE_AFTER + 3):
        a = Labelled(1, label="abc")
        b = Labelled(x=1, y=0, tags=[], note="other", label="abc")
        seen.append((a, b, a.size, b.tags is not a.tags))
    assert "Labelled.__init__" in Labelled.__init__.__qualname__  # compiled by now
    for a, b, size, fresh_list in seen:
        assert a == b  # `note` is not compared
        assert size == 3
        assert fresh_list
        assert (a.x, a.y, a.tags, a.label) == (1, 0, [], "abc")


class Swapped(Record):
    f1: int  # named like the placeholders of the compiled code, in the other order
    f0: str = "zero"
    made: list[int] = field(default_factory=list)
    fixed: int = field(default=7, init=False)
    built: dict[str, int] = field(default_factory=dict, init=False)


class SameShape(Record):
    first: int
    second: str = "second"
    items: list[int] = field(default_factory=list)
    seven: int = field(default=7, init=False)
    table: dict[str, int] = field(default_factory=dict, init=False)


def test_classes_of_one_shape_share_compiled_code_but_keep_their_own_names_and_defaults() -> None:
    for _ in range(record_module._COMPILE_AFTER + 2):
        a = Swapped(1)
        b = SameShape(2)
        c = Swapped(3, "three", [3])
    assert (
        "Swapped.__init__" in Swapped.__init__.__qualname__ and "SameShape" in SameShape.__init__.__qualname__
    )
    assert Swapped.__init__.__code__.co_code == SameShape.__init__.__code__.co_code  # one template
    assert (a.f1, a.f0, a.made, a.fixed, a.built) == (1, "zero", [], 7, {})
    assert (b.first, b.second, b.items, b.seven, b.table) == (2, "second", [], 7, {})
    assert (c.f1, c.f0, c.made) == (3, "three", [3])
    assert a.made is not Swapped(1).made and b.table is not SameShape(2).table  # fresh each time
    assert SameShape(first=5, second="s").second == "s" and Swapped(f0="x", f1=4).f0 == "x"
    with pytest.raises(TypeError):
        SameShape(1, "x", [], 7)  # type: ignore[call-arg]  # `seven` is not a parameter


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (Point, "missing"),
        (lambda: Point(1, 2, [], "n", "extra"), "positional arguments"),
        (lambda: Point(1, x=2), "multiple values"),
        (lambda: Point(1, colour=3), "unexpected keyword argument 'colour'"),
        (lambda: Labelled(1, size=3), "unexpected keyword argument 'size'"),
    ],
)
def test_bad_arguments_raise_type_error_in_both_init_tiers(call: object, message: str) -> None:
    for _ in range(record_module._COMPILE_AFTER + 2):
        with pytest.raises(TypeError, match=message):
            call()  # type: ignore[operator]
        Point(0)  # moves the class towards its compiled __init__


def test_frozen_value_semantics() -> None:
    assert record_module._FROZEN_AT_RUN_TIME  # the tests run in strict mode (conftest)
    p = Point(1, 2, ["a"], note="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del p.y  # type: ignore[misc]
    assert p == Point(1, 2, ["a"], note="y")
    assert p != Point(1, 3, ["a"])
    assert Point(1) != Labelled(1)  # another class is never equal, like a dataclass
    assert hash(Pair(4, "x")) == hash(Pair(4, "y"))
    assert {Pair(4, "x"), Pair(4, "y"), Pair(5)} == {Pair(4), Pair(5)}
    assert repr(p) == "Point(x=1, y=2, tags=['a'])"
    assert not hasattr(p, "__dict__")
    assert Identity(1) != Identity(1)
    m = Mutable(1)
    m.value = 2
    assert m == Mutable(2)
    with pytest.raises(TypeError):
        hash(m)


_OUTSIDE_STRICT_MODE = """
import pickle, sys
from tests.core import test_record as t
from inspector.core import record as record_module
assert not record_module._FROZEN_AT_RUN_TIME
t.test_construction_defaults_factories_and_post_init_match_in_both_init_tiers()
t.test_classes_of_one_shape_share_compiled_code_but_keep_their_own_names_and_defaults()
t.test_pickle_copy_and_the_dataclasses_functions_still_work()
p = t.Point(1, 2)
assert (p == t.Point(1, 2, [], note="n"), hash(t.Pair(4, "x")) == hash(t.Pair(4)), repr(p)) == (
    True, True, "Point(x=1, y=2, tags=[])")
p.x = 5  # not refused at run time outside strict mode (mypy refuses it everywhere)
assert p.x == 5
print("ok")
"""


def test_outside_strict_mode_records_are_built_by_plain_stores_with_the_same_values() -> None:
    """The program's own mode: no refusing `__setattr__`, so the compiled `__init__` stores fields
    directly; construction, defaults, factories, `__post_init__`, equality, hash and pickling
    must be the same as under the tests' strict mode."""
    env = {k: v for k, v in os.environ.items() if k != "CRASH_INSPECTOR_STRICT"}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run(
        [sys.executable, "-c", _OUTSIDE_STRICT_MODE],
        check=False,
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_pickle_copy_and_the_dataclasses_functions_still_work() -> None:
    a = Labelled(3, 4, ["t"], label="xy")
    assert pickle.loads(pickle.dumps(a)) == a
    assert pickle.loads(pickle.dumps(a)).size == 2
    assert copy.deepcopy(a) == a
    assert dataclasses.is_dataclass(a)
    assert [f.name for f in dataclasses.fields(a)] == ["x", "y", "tags", "note", "label", "size"]
    assert dataclasses.asdict(Point(1, 2)) == {"x": 1, "y": 2, "tags": [], "note": ""}
    assert dataclasses.replace(a, x=9) == Labelled(9, 4, ["t"], label="xy")
    assert replace(a, label="abcd").size == 4
    with pytest.raises(ValueError, match="init=False"):
        replace(a, size=1)


def test_a_default_before_a_required_field_is_refused() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b'"):

        class Bad(Record):
            a: int = 0
            b: int
