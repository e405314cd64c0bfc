"""`Enum`: the engine's enumerations, cheap to define and to use.

Python 3.11's `enum.Enum` does a great deal of work per member when a class is defined (about
30 µs each: the engine's ~40 enumerations, ~340 members, were a tenth of what importing the
engine cost), and its members are slow to use: reading `Strategy.CFI` goes through the enum
metaclass (90 ns against 13 ns for a class attribute), `.value` and `.name` are Python
properties (~90 ns each) and hashing a member calls a Python `__hash__` (~150 ns). The walk
does these for every frame and every stack word it judges.

`Enum` here is the same thing made plainly: a class whose body's public values become its
members when the class is created — instances of the class with `name` and `value` slots,
stored as ordinary class attributes, hashed by identity. What the engine uses of
`enum.Enum` works the same: `Cls(value)` and `Cls["NAME"]` look members up (`ValueError` /
`KeyError` otherwise), iteration, `len` and `in` over the members in definition order,
`__members__`, aliases (a second name for a value names the first member), methods and
properties in the class body, `repr` / `str` / `format`, pickling by value (worker processes
send results back), `copy` returning the member itself, and members and their attributes that
cannot be reassigned.

`IntEnum` is the same for values read from a file (stream types, CPU flags): its members are
`int`s as well, equal to and hashed as their value, so they index tables of raw numbers and
mix with them in arithmetic (which gives plain `int`s); `str` and `format` give the number, as
`enum.IntEnum`'s do. Defining them without `enum` also keeps `enum` (with `functools` and
`collections`, ~5 ms) out of importing the engine.

Type checkers see `enum.Enum` and `enum.IntEnum` themselves (`TYPE_CHECKING`), so member types,
`.value` types and exhaustiveness checks are theirs; `tests/core/test_enums.py` checks that every
enumeration of the engine behaves as the `enum.Enum` (`enum.IntEnum`) built from the same class
body.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from enum import Enum, IntEnum
else:
    from types import MappingProxyType

    class EnumType(type):
        """The metaclass of `Enum`: turns the class body's public values into members."""

        def __new__(mcls, name, bases, namespace):
            if not any(isinstance(base, EnumType) for base in bases):
                return super().__new__(mcls, name, bases, namespace)  # `Enum` itself
            for base in bases:
                if isinstance(base, EnumType) and base._member_map_:
                    raise TypeError(f"{name}: cannot extend {base.__name__}, which has members")
            values = {key: value for key, value in namespace.items() if _is_member(key, value)}
            for key in values:
                del namespace[key]
            namespace.setdefault("__slots__", ())
            cls = super().__new__(mcls, name, bases, namespace)
            members: dict[str, Enum] = {}
            by_value: dict[object, Enum] = {}
            for key, value in values.items():
                member = by_value.get(value)
                if member is None:  # a second name for a value is an alias of the first member
                    member = int.__new__(cls, value) if issubclass(cls, int) else object.__new__(cls)
                    object.__setattr__(member, "name", key)
                    object.__setattr__(member, "value", int(value) if issubclass(cls, int) else value)
                    by_value[value] = member
                members[key] = member
                type.__setattr__(cls, key, member)
            type.__setattr__(cls, "_member_map_", members)
            type.__setattr__(cls, "_value2member_map_", by_value)
            type.__setattr__(cls, "_members_", tuple(by_value.values()))
            return cls

        def __call__(cls, value):
            try:
                return cls._value2member_map_[value]
            except (KeyError, TypeError):  # TypeError: an unhashable value
                raise ValueError(f"{value!r} is not a valid {cls.__qualname__}") from None

        def __getitem__(cls, name):
            return cls._member_map_[name]

        def __iter__(cls):
            return iter(cls._members_)

        def __reversed__(cls):
            return reversed(cls._members_)

        def __len__(cls):
            return len(cls._members_)

        def __contains__(cls, member):
            return isinstance(member, cls) and member.name in cls._member_map_

        def __bool__(cls):
            return True

        @property
        def __members__(cls):
            return MappingProxyType(cls._member_map_)

        def __setattr__(cls, name, value):
            if name in cls.__dict__.get("_member_map_", ()):
                raise AttributeError(f"cannot reassign member {name!r}")
            super().__setattr__(name, value)

        def __delattr__(cls, name):
            if name in cls.__dict__.get("_member_map_", ()):
                raise AttributeError(f"cannot delete member {name!r}")
            super().__delattr__(name)

        def __repr__(cls):
            return f"<enum {cls.__name__!r}>"

    def _is_member(key, value):
        """enum.Enum's rule: not a dunder or sunder name, not private, not a descriptor."""
        if key.startswith("_"):
            return False
        return not (hasattr(value, "__get__") or hasattr(value, "__set__") or hasattr(value, "__delete__"))

    class Enum(metaclass=EnumType):
        """Base of the engine's enumerations (see the module's docstring)."""

        __slots__ = ("name", "value")
        _member_map_ = MappingProxyType({})  # `Enum` itself has none

        def __setattr__(self, name, value):
            raise AttributeError(f"cannot assign {name!r} of an enumeration member")

        def __delattr__(self, name):
            raise AttributeError(f"cannot delete {name!r} of an enumeration member")

        __hash__ = object.__hash__  # members are unique: identity is their value semantics

        def __repr__(self):
            return f"<{type(self).__name__}.{self.name}: {self.value!r}>"

        def __str__(self):
            return f"{type(self).__name__}.{self.name}"

        def __format__(self, spec):
            return format(str(self), spec)

        def __reduce_ex__(self, protocol):
            return type(self), (self.value,)

        def __copy__(self):
            return self

        def __deepcopy__(self, memo):
            return self

    class IntEnum(int, metaclass=EnumType):
        """Base of the enumerations of numbers read from files (see the module's docstring).

        An `int` cannot have `__slots__` of its own, so `name` and `value` live in the member's
        `__dict__`.
        """

        _member_map_ = MappingProxyType({})

        __setattr__ = Enum.__setattr__
        __delattr__ = Enum.__delattr__
        __hash__ = int.__hash__  # equal to its value, so hashed as it
        __repr__ = Enum.__repr__
        __str__ = int.__repr__
        __format__ = int.__format__
        __reduce_ex__ = Enum.__reduce_ex__
        __copy__ = Enum.__copy__
        __deepcopy__ = Enum.__deepcopy__


__all__ = ["Enum", "IntEnum"]
