"""`Record`: the engine's immutable value classes, cheap to define and to build.

A `@dataclass(frozen=True, slots=True)` costs about 0.3 ms to define (it compiles five methods
and rebuilds the class) and about 0.5 µs per instance (its `__init__` stores each field through
`object.__setattr__`). The engine defines ~200 value classes and builds ~100k a corpus pass, so
a headless `stackwalk` process spent most of its start-up defining classes it might never use.
`class Frame(Record):` with annotated fields gives the same class to its users:

- slots, keyword or positional construction with defaults and `field(default_factory=...)`,
  `__post_init__`, a dataclass-style `repr`, value `==` and `hash` over the compared fields,
  pickling (worker processes send results back), and `dataclasses.fields` / `replace` /
  `asdict` keep working (`__dataclass_fields__` is built on first use);
- but `repr`, `==`, `hash` and pickling are shared functions, and `__init__` is a generic one
  reading the field list until the class has been built a few times; then its own is compiled,
  storing each field straight into its slot;
- the class is built once, by the metaclass, from the class body (`RecordType`); class keywords
  give the options: `class Identity(Record, eq=False)`, `class Scratch(Record, frozen=False)`.

Frozen like `assert`: type checkers treat a record as a frozen dataclass (`dataclass_transform`),
so assigning to a field is a mypy error everywhere; at run time the assignment raises
`FrozenInstanceError` only in strict mode (`inspector.core.strict`, on in the tests and fuzzers,
read when the record class is defined). Enforcing it always meant a `__setattr__` that refuses,
so every construction had to store each field through its slot descriptor: a third of a
record's construction, and 13 % of a warm corpus pass (118,000 records).
The `dataclasses` module itself is imported only when something asks for the dataclass view.
"""

from __future__ import annotations

from operator import attrgetter
from types import CodeType, FunctionType

from inspector.core.strict import strict

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_: object) -> Callable[[T], T]:
        """What `record` is to type checkers (a frozen dataclass); nothing at run time, which
        does without `typing`."""
        return lambda function: function


__all__ = ["Record", "RecordType", "field", "replace"]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class _FieldSpec:
    """What `field(...)` returns in a class body; replaced by the default when the class is built."""

    __slots__ = ("compare", "default", "default_factory", "init", "repr")

    def __init__(self, default: Any, default_factory: Any, init: bool, repr: bool, compare: bool) -> None:
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | Any = MISSING,
    init: bool = True,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """Like `dataclasses.field` for a `Record` (the subset the engine uses)."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return _FieldSpec(default, default_factory, init, repr, compare)


class _Field:
    """One field of a record: its name, annotation (a string) and options."""

    __slots__ = ("annotation", "compare", "default", "factory", "init", "name", "repr")

    def __init__(self, name: str, annotation: object, spec: _FieldSpec) -> None:
        self.name = name
        self.annotation = annotation
        self.default = spec.default
        self.factory = spec.default_factory
        self.init = spec.init
        self.repr = spec.repr
        self.compare = spec.compare


def _is_class_var(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _collect(
    qualname: str, bases: tuple[type, ...], namespace: dict[str, Any]
) -> tuple[list[_Field], list[str]]:
    """Every field in constructor order (bases first) and the names this class adds."""
    fields: dict[str, _Field] = {}
    for base in reversed(bases):
        for klass in reversed(base.__mro__):
            for f in klass.__dict__.get("__record_fields__", ()):
                fields[f.name] = f
    own: list[str] = []
    for name, annotation in namespace.get("__annotations__", {}).items():
        if _is_class_var(annotation):
            continue
        value = namespace.pop(name, MISSING)
        spec = value if isinstance(value, _FieldSpec) else _FieldSpec(value, MISSING, True, True, True)
        if name not in fields:
            own.append(name)
        fields[name] = _Field(name, annotation, spec)
    seen_default = False
    for f in fields.values():
        if not f.init:
            continue
        if f.default is not MISSING or f.factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument in {qualname}")
    return list(fields.values()), own


#: Whether records refuse assignment at run time (see the module's docstring): strict mode only.
_FROZEN_AT_RUN_TIME = strict()


def _compile_init(cls: type) -> Callable[..., None]:
    """The class's `__init__`: arguments stored straight into the slots (past the freeze, if any).

    Compiling Python source costs ~70 µs, and a corpus run compiled ~100 of these; most classes
    share a shape (which fields are parameters, which have factories, ...), so the code is
    compiled once per shape, with placeholder names `f0`, `f1`, ... (the field's index), and each
    class gets a copy with its field names put in (`CodeType.replace`, under 1 µs). Defaults are
    the function's own (`__defaults__`), so fields with and without one share the code.
    """
    fields: tuple[_Field, ...] = cls.__record_fields__  # type: ignore[attr-defined]
    # Frozen at run time: each field goes through its slot's member descriptor, past the
    # refusing `__setattr__`; otherwise a plain store into the slot, the fastest Python has.
    setattr_: Any = cls.__setattr__
    frozen = setattr_ is _frozen_setattr
    scope: dict[str, Any] = {"MISSING": MISSING}
    kinds: list[str] = []
    defaults: list[Any] = []
    for i, f in enumerate(fields):
        if frozen:
            scope[f"_set{i}"] = getattr(cls, f.name).__set__
        if f.factory is not MISSING:
            scope[f"_factory{i}"] = f.factory
        if f.default is not MISSING:
            scope[f"_default{i}"] = f.default
        if f.init:
            if f.factory is not MISSING:
                kinds.append("factory argument")
                defaults.append(MISSING)
            else:
                kinds.append("argument")
                if f.default is not MISSING:
                    defaults.append(f.default)
        else:
            kinds.append(
                "factory" if f.factory is not MISSING else "default" if f.default is not MISSING else ""
            )
    shape = (tuple(kinds), frozen, hasattr(cls, "__post_init__"))
    template = _INIT_TEMPLATES.get(shape)
    if template is None:
        template = _INIT_TEMPLATES[shape] = _init_template(*shape)
    names = [f.name for f in fields]

    def named(placeholder: str) -> str:
        return (
            names[int(placeholder[1:])]
            if placeholder[:1] == "f" and placeholder[1:].isdigit()
            else placeholder
        )

    code = template.replace(
        co_varnames=tuple(map(named, template.co_varnames)),
        co_names=tuple(map(named, template.co_names)),
        co_qualname=f"{cls.__qualname__}.__init__",
    )
    return FunctionType(code, scope, "__init__", tuple(defaults) or None)


#: The compiled `__init__` of each shape of record (`_compile_init`)
_INIT_TEMPLATES: dict[tuple[tuple[str, ...], bool, bool], CodeType] = {}


def _init_template(kinds: tuple[str, ...], frozen: bool, post_init: bool) -> CodeType:
    params: list[str] = []
    body: list[str] = []
    for i, kind in enumerate(kinds):
        if kind == "argument":
            params.append(f"f{i}")
            value = f"f{i}"
        elif kind == "factory argument":
            params.append(f"f{i}")
            value = f"_factory{i}() if f{i} is MISSING else f{i}"
        elif kind == "factory":
            value = f"_factory{i}()"
        elif kind == "default":
            value = f"_default{i}"
        else:
            continue
        body.append(f"_set{i}(self, {value})" if frozen else f"self.f{i} = {value}")
    if post_init:
        body.append("self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n    " + ("\n    ".join(body) or "pass")
    scope: dict[str, Any] = {}
    exec(source, scope)
    code: CodeType = scope["__init__"].__code__
    return code


#: Constructions of a record class served by the generic `__init__` before its own is compiled.
#: The generic one costs ~1.4 µs more per construction; compiling costs ~7 µs (~70 µs for the
#: first class of a shape), so the classes built once or twice a run never pay it, and the
#: others switch to the fast one early (a corpus run: 360 generic constructions instead of 1,600).
_COMPILE_AFTER = 4
_uses: dict[type, int] = {}


def _tiered_init(self: Any, *args: Any, **kwargs: Any) -> None:
    # Every record starts with this `__init__` (see `_COMPILE_AFTER`).
    cls = type(self)
    owner = cls if "__record_fields__" in cls.__dict__ else _record_owner(cls)
    uses = _uses.get(owner, 0) + 1
    if uses < _COMPILE_AFTER:
        _uses[owner] = uses
        _generic_init(owner, self, args, kwargs)
        return
    if owner.__dict__.get("__init__") is _tiered_init:
        owner.__init__ = _compile_init(owner)  # type: ignore[misc]
    _uses.pop(owner, None)
    owner.__init__(self, *args, **kwargs)  # type: ignore[misc]


def _record_owner(cls: type) -> type:
    return next(klass for klass in cls.__mro__ if "__record_fields__" in klass.__dict__)


def _generic_init(owner: type, self: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """What the compiled `__init__` does, read off the field list: the same binding and errors."""
    fields: tuple[_Field, ...] = owner.__record_fields__  # type: ignore[attr-defined]
    given = len(args)
    position = 0
    taken = 0  # keyword arguments used; any other is unexpected
    for f in fields:
        if f.init:
            if position < given:
                if f.name in kwargs:
                    raise TypeError(f"{_call(owner)} got multiple values for argument {f.name!r}")
                value = args[position]
            elif f.name in kwargs:
                value = kwargs[f.name]
                taken += 1
            elif f.factory is not MISSING:
                value = f.factory()
            elif f.default is not MISSING:
                value = f.default
            else:
                raise TypeError(f"{_call(owner)} missing required argument: {f.name!r}")
            position += 1
        elif f.factory is not MISSING:
            value = f.factory()
        elif f.default is not MISSING:
            value = f.default
        else:
            continue
        object.__setattr__(self, f.name, value)
    if given > position:
        raise TypeError(
            f"{_call(owner)} takes {position + 1} positional arguments but {given + 1} were given"
        )
    if taken < len(kwargs):
        unexpected = kwargs.keys() - {f.name for f in fields if f.init}
        raise TypeError(f"{_call(owner)} got an unexpected keyword argument {min(unexpected)!r}")
    if hasattr(owner, "__post_init__"):
        self.__post_init__()


def _call(owner: type) -> str:
    """How an error of `_generic_init` names the call (built only when one is raised)."""
    return f"{owner.__qualname__}.__init__()"


def _frozen_setattr(self: object, name: str, value: object) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _repr(self: Any) -> str:
    cls = type(self)
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in cls.__record_fields__ if f.repr)
    return f"{cls.__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:  # a bool, or NotImplemented for another class
    if other.__class__ is not self.__class__:
        return NotImplemented
    key = self.__record_key__
    return bool(key(self) == key(other))


def _hash(self: Any) -> int:
    return hash(self.__record_key__(self))


def _getstate(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, f.name) for f in type(self).__record_fields__)


def _setstate(self: Any, state: tuple[Any, ...]) -> None:
    for f, value in zip(type(self).__record_fields__, state, strict=True):
        object.__setattr__(self, f.name, value)


class _DataclassFields:
    """`__dataclass_fields__`, built on first access so that `dataclasses` is imported only then."""

    def __get__(self, instance: object, owner: type | None = None) -> dict[str, Any]:
        import dataclasses

        cls = owner if owner is not None else type(instance)
        built: dict[str, Any] = {}
        for f in cls.__record_fields__:  # type: ignore[attr-defined]
            spec: Any = dataclasses.field(
                default=dataclasses.MISSING if f.default is MISSING else f.default,
                default_factory=dataclasses.MISSING if f.factory is MISSING else f.factory,
                init=f.init,
                repr=f.repr,
                compare=f.compare,
            )
            spec.name = f.name
            spec.type = f.annotation
            spec._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # what fields() keeps
            built[f.name] = spec
        type.__setattr__(cls, "__dataclass_fields__", built)  # once per class
        return built


def _key(fields: list[_Field]) -> Callable[[Any], Any]:
    compared = [f.name for f in fields if f.compare]
    if not compared:
        return lambda _self: ()
    if len(compared) == 1:
        return attrgetter(compared[0])
    return attrgetter(*compared)


def _record_namespace(
    qualname: str, bases: tuple[type, ...], namespace: dict[str, Any], eq: bool, frozen: bool
) -> dict[str, Any]:
    """The class body of a record, completed: slots, fields, and the shared methods it lacks."""
    fields, own = _collect(qualname, bases, namespace)
    for name in ("__dict__", "__weakref__"):
        namespace.pop(name, None)
    namespace["__slots__"] = tuple(own)
    namespace["__record_fields__"] = tuple(fields)
    namespace["__match_args__"] = tuple(f.name for f in fields if f.init)
    namespace["__dataclass_fields__"] = _DataclassFields()
    if "__init__" not in namespace:
        namespace["__init__"] = _tiered_init
    namespace.setdefault("__repr__", _repr)
    if eq:
        has_hash = "__hash__" in namespace
        namespace.setdefault("__eq__", _eq)
        namespace["__record_key__"] = _key(fields)
        if frozen:
            namespace.setdefault("__hash__", _hash)
        elif not has_hash:
            namespace["__hash__"] = None
    if frozen:
        if _FROZEN_AT_RUN_TIME:
            namespace["__setattr__"] = _frozen_setattr
            namespace["__delattr__"] = _frozen_delattr
        namespace.setdefault("__getstate__", _getstate)
        namespace.setdefault("__setstate__", _setstate)
    return namespace


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class RecordType(type):
    """The metaclass of `Record`: the class body becomes a record as the class is created, once.

    A class decorator receives a class already built, and slots can only be given when a class
    is created, so a decorator has to build every class twice (each creation fills ~80 type
    slots: about 25 µs a class here, 6 M instructions of every engine import for ~200 classes).
    """

    def __new__(
        mcls,
        name: str,
        bases: tuple[type, ...],
        namespace: dict[str, Any],
        *,
        eq: bool = True,
        frozen: bool = True,
    ) -> RecordType:
        if bases:  # not `Record` itself
            qualname = namespace.get("__qualname__", name)
            namespace = _record_namespace(qualname, bases, namespace, eq, frozen)
        return super().__new__(mcls, name, bases, namespace)


class Record(metaclass=RecordType):
    """Base of the engine's value classes: `class Frame(Record):` with annotated fields (see the
    module's docstring)."""

    __slots__ = ()


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the record `obj` with some fields changed (like `dataclasses.replace`)."""
    for f in type(obj).__record_fields__:  # type: ignore[attr-defined]
        if not f.init:
            if f.name in changes:
                raise ValueError(f"field {f.name} is declared with init=False, it cannot be replaced")
        elif f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return type(obj)(**changes)
