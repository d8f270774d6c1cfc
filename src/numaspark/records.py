"""Records: the JSON form of every record numaspark stores or prints, in one converter.

A record is a dataclass, stored field by field, in field order, under its fields' names. Where
its JSON differs, the class says how in one `Shape`, its ``__json__``: a field stored under
another key, left out when None or empty (a field added within a schema version, so that older
lines read and write back unchanged), a property written beside the fields, the keys a newer
numaspark wrote kept aside. A type JSON lacks (a CPU set, a path, a spark-submit line) is
stored as the value its `value_type` pair gives.

Reading is msgspec's (``msgspec.convert``: the nesting, the types, tuples, enums, numbers),
after this module has put the stored keys back under the fields' names. Writing walks the
record here: msgspec writes a dataclass's fields as they are, with no key of its own, no
omission and no computed field for one.

What a record of an older schema version needs to read as today's is one named function per
version, in `UPGRADES`; a version its class does not list is refused by name (`SchemaError`).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from numaspark.errors import UsageError
from numaspark.units import parse_size

T = TypeVar("T")


@dataclass(frozen=True)
class Shape:
    """How a record's JSON differs from its fields (names are the fields' or properties')."""

    # name -> the key it is stored under; ``group.key`` stores it inside the object ``group``
    keys: Mapping[str, str] = field(default_factory=dict)
    # properties (or methods without arguments) written after the fields; not read back
    computed: tuple[str, ...] = ()
    order: tuple[str, ...] = ()  # the names written, in order (default: fields, then computed)
    skip: tuple[str, ...] = ()  # fields not stored (what only a live process holds)
    omit_none: tuple[str, ...] = ()  # left out when None
    omit_empty: tuple[str, ...] = ()  # left out when empty, zero or False
    null_empty: tuple[str, ...] = ()  # written as null when empty (a group: all of it)
    # what a stored record that lacks a key reads it as, where not the field's default (a
    # record older than the field; one a person wrote)
    absent: Mapping[str, object] = field(default_factory=dict)
    # name -> (how it is written, how it is read back) where its JSON is not its type's (None:
    # as its type is; null stays null)
    forms: Mapping[str, tuple[Callable[[Any], object] | None, Callable[[Any], Any] | None]] = field(
        default_factory=dict
    )
    extra: str | None = None  # the dict field that keeps keys it does not know, written back
    value: str | None = None  # stored as this one field's value (a wrapper of a JSON object)
    schemas: tuple[str, ...] = ()  # the versions it reads, oldest first (absent: the oldest)


PLAIN = Shape()


class SchemaError(UsageError, ValueError):
    """A record of a schema version this numaspark does not read (a newer one wrote it)."""


# a type JSON lacks -> (what it is stored as, how it is read back)
_VALUES: dict[type, tuple[Callable[[Any], object], Callable[[Any], Any]]] = {
    Path: (str, Path),
    datetime: (lambda d: d.isoformat(timespec="seconds"), datetime.fromisoformat),
}
_JSON = frozenset((str, int, float, bool, type(None)))


def value_type(cls: type, encode: Callable[[Any], object], decode: Callable[[Any], Any]) -> None:
    """Store ``cls`` as ``encode`` gives it, and read it back with ``decode``."""
    _VALUES[cls] = (encode, decode)


# --- older schema versions --------------------------------------------------------------


def run_1_to_2(data: dict) -> dict:
    """``numaspark.run/1`` -> 2: the fields version 2 added are absent (read as null), and the
    ``readings`` numaspark 0.2 wrote are computed when shown now (decide/readings.py)."""
    return {k: v for k, v in data.items() if k != "readings"}


def placement_1(data: dict) -> dict:
    """``numaspark.placement/1`` as numaspark 0.1 and people write it: a JVM with its heap only
    in the JVM's spelling (``4g``, no ``heap_bytes``), or no binding of its own (the plan's)."""
    jvms = []
    for jvm in data.get("jvms") or ():
        if isinstance(jvm, dict) and jvm.get("heap_bytes") is None and jvm.get("heap"):
            jvm = {**jvm, "heap_bytes": parse_size(str(jvm["heap"]), "heap")}
        if isinstance(jvm, dict) and not jvm.get("binding"):
            jvm = {**jvm, "binding": data.get("binding") or "none"}
        jvms.append(jvm)
    return {**data, "jvms": jvms}


def cluster_1_to_2(data: dict) -> dict:
    """``numaspark.cluster/1`` -> 2: numaspark 0.1's state of a cluster on this machine (its
    address, the master's pid and port, its workers; daemons started unwatched) as version 2
    keeps every cluster: one host named ``local`` (hosts.LOCAL), the master then the workers
    as its processes, kept (``cluster down`` stops them by pid). Its workers keep their keys."""
    here = "local"  # the name version 2 gives this machine's host (hosts.LOCAL)
    master = {
        "name": "master",
        "host": here,
        "pid": data.get("master_pid"),
        "log": "",
        "argv": [],
        "webui": data.get("master_webui"),
    }
    workers = [
        {**w, "name": f"worker {w.get('index')}", "host": here}
        for w in data.get("workers") or ()
        if isinstance(w, dict)
    ]
    # its master_url, master_webui and placement are version 2's; its other keys read as none
    return {
        **data,
        "local": True,
        "master_host": here,
        "driver_address": None,
        "hosts": [{"name": here, "address": data.get("host")}],
        "processes": [master, *workers],
        "kept": True,
    }


#: What a record of each version needs to read as today's: what the next version changed (a
#: chain to today's), or keys that older writers of the version left out. The ``schema`` it
#: was stored with is kept (where its class stores it as a field): it writes back as the
#: version it was.
UPGRADES: dict[str, Callable[[dict], dict]] = {
    "numaspark.run/1": run_1_to_2,
    "numaspark.placement/1": placement_1,
    "numaspark.cluster/1": cluster_1_to_2,
}


# --- writing ----------------------------------------------------------------------------


def dump(value: Any) -> Any:
    """``value`` (a record, a list, tuple or dict of them, or a plain value) as JSON's types."""
    if type(value) in _JSON:  # not a subclass: an IntEnum may have a stored form of its own
        return value
    # (a plain value inside is kept without a call: a run's measurements are thousands)
    if isinstance(value, Mapping):  # a dict, or a record that reads as one (Metrics)
        return {k: v if type(v) in _JSON else dump(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [v if type(v) in _JSON else dump(v) for v in value]
    stored = _stored_form(type(value))
    if stored is not None:
        return stored[0](value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dump_record(value)
    if isinstance(value, enum.Enum):
        return value.value
    return value


def _dump_record(record: Any) -> Any:
    shape: Shape = getattr(type(record), "__json__", PLAIN)
    if shape.value is not None:
        return dump(getattr(record, shape.value))
    data = {}
    for name in shape.order or _names(type(record)):
        value = getattr(record, name)
        if name in shape.computed and callable(value):
            value = value()
        if (name in shape.omit_none and value is None) or (name in shape.omit_empty and not value):
            continue
        group, _, key = shape.keys.get(name, name).rpartition(".")
        (data.setdefault(group, {}) if group else data)[key] = _written(shape, name, value)
    for group in shape.null_empty:
        if isinstance(data.get(group), dict) and not any(data[group].values()):
            data[group] = None
    if shape.extra is not None:
        data.update(getattr(record, shape.extra))
    return data


def _written(shape: Shape, name: str, value: Any) -> Any:
    if name in shape.null_empty and not value:
        return None
    write = shape.forms.get(name, (None, None))[0]
    if write is not None and value is not None:
        return write(value)
    return value if type(value) in _JSON else dump(value)


@functools.cache
def _names(cls: type) -> tuple[str, ...]:
    shape: Shape = getattr(cls, "__json__", PLAIN)
    stored = [f.name for f in dataclasses.fields(cls) if f.name not in (*shape.skip, shape.extra)]
    return (*stored, *shape.computed)


# --- reading ----------------------------------------------------------------------------


def load(cls: type[T], data: Any) -> T:
    """A ``cls`` record from its stored JSON (any version its `Shape` reads). Raises
    ValueError (msgspec's ValidationError) when ``data`` is not one, UsageError for a schema
    version this numaspark does not read."""
    # lazy: records of workloads/ are shipped to executors whose Python has only the standard
    # library and pyspark (spark/pyfiles.py); they never read one
    import msgspec

    return msgspec.convert(_inbound(_info(cls), data), cls, strict=False, dec_hook=_decode)


@functools.cache
def _info(cls: type) -> Any:
    import msgspec.inspect  # lazy: see load()

    return msgspec.inspect.type_info(cls)


def _stored_form(cls: type) -> tuple[Callable[[Any], object], Callable[[Any], Any]] | None:
    return next((_VALUES[kind] for kind in cls.__mro__ if kind in _VALUES), None)


def _decode(cls: type, value: Any) -> Any:
    stored = _stored_form(cls)
    if stored is None:
        raise NotImplementedError(f"no stored form for {cls.__name__}")
    return _read(stored[1], value, cls.__name__)


def _read(reader: Callable[[Any], Any], value: Any, what: str) -> Any:
    """``reader(value)``; a value of the wrong JSON type is a ValueError, as msgspec's own."""
    try:
        return reader(value)
    except (AttributeError, TypeError, KeyError, IndexError) as exc:
        raise ValueError(f"{value!r} is not a stored {what} ({exc})") from None


def _inbound(info: Any, value: Any) -> Any:
    """``value`` with every record's stored keys put back under its fields' names, following
    the types msgspec reads it into."""
    import msgspec.inspect as mi  # lazy: see load()

    if isinstance(info, mi.DataclassType):
        if _stored_form(info.cls) is not None:  # msgspec reads a dataclass by its fields
            return _decode(info.cls, value)
        return _record_in(info, value) if isinstance(value, dict) else value
    if value is None or not _holds_record(info):
        return value
    if isinstance(info, mi.UnionType):
        options = [t for t in info.types if not isinstance(t, mi.NoneType)]
        return _inbound(options[0], value) if len(options) == 1 else value
    if isinstance(info, mi.ListType | mi.VarTupleType) and isinstance(value, list):
        return [_inbound(info.item_type, v) for v in value]
    if isinstance(info, mi.DictType) and isinstance(value, dict):
        return {k: _inbound(info.value_type, v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class _Field:
    name: str
    info: Any  # msgspec's type info
    nullable: bool  # null is one of its values (else a null reads as its default)
    holds_record: bool
    reader: Callable[[Any], Any] | None  # its form's, where it has one


# by id of msgspec's type info: the infos live as long as `_info`'s cache, which keeps them
_HOLDS: dict[int, bool] = {}
_PLANS: dict[int, tuple[Shape, dict[str, _Field], set[str], set[str]]] = {}


def _holds_record(info: Any) -> bool:
    """Whether a value of this type may hold a record (whose keys `_record_in` puts back)."""
    import msgspec.inspect as mi  # lazy: see load()

    if id(info) not in _HOLDS:
        if isinstance(info, mi.DataclassType):
            holds = True
        elif isinstance(info, mi.UnionType):
            holds = any(_holds_record(t) for t in info.types)
        elif isinstance(info, mi.ListType | mi.VarTupleType):
            holds = _holds_record(info.item_type)
        else:
            holds = isinstance(info, mi.DictType) and _holds_record(info.value_type)
        _HOLDS[id(info)] = holds
    return _HOLDS[id(info)]


def _plan(info: Any) -> tuple[Shape, dict[str, _Field], set[str], set[str]]:
    """A record type's shape, its fields by stored key, its key groups, and every key it reads."""
    import msgspec.inspect as mi  # lazy: see load()

    if id(info) not in _PLANS:
        shape: Shape = getattr(info.cls, "__json__", PLAIN)
        fields = {
            shape.keys.get(f.name, f.name): _Field(
                f.name,
                f.type,
                isinstance(f.type, mi.UnionType | mi.AnyType | mi.NoneType),
                _holds_record(f.type),
                shape.forms.get(f.name, (None, None))[1],
            )
            for f in info.fields
            if f.name != shape.extra
        }
        groups = {key.rpartition(".")[0] for key in shape.keys.values()} - {""}
        read = {*fields, *(shape.keys.get(n, n) for n in shape.computed)}
        _PLANS[id(info)] = (shape, fields, groups, read)
    return _PLANS[id(info)]


def _record_in(info: Any, data: Any) -> dict:
    """A stored record's keys as its fields: renamed, upgraded, nulls where its type has none
    left to the field's default, unknown keys kept aside where it keeps them."""
    shape, fields, groups, read = _plan(info)
    if shape.value is not None:
        data = {shape.value: data}
    if shape.schemas:
        data = _upgraded(info.cls.__name__, shape, data)
    if groups:
        data = _flat(data, groups)
    known: dict = dict(shape.absent)
    for key, value in data.items():
        found = fields.get(key)
        if found is None or (value is None and not found.nullable):
            continue  # not its key; or null where its type has none: the field's default
        if found.reader is not None:
            value = _read(found.reader, value, found.name)
        elif found.holds_record:
            value = _inbound(found.info, value)
        known[found.name] = value
    if shape.extra is not None:
        known[shape.extra] = {k: v for k, v in data.items() if k not in read}
    return known


def _flat(data: dict, groups: set[str]) -> dict:
    """``{"group": {"key": v}}`` as ``{"group.key": v}`` (a null group: its keys absent)."""
    flat = {k: v for k, v in data.items() if k not in groups}
    for group in groups:
        inner = data.get(group)
        flat.update(
            {f"{group}.{k}": v for k, v in (inner if isinstance(inner, dict) else {}).items()}
        )
    return flat


def _upgraded(kind: str, shape: Shape, data: dict) -> dict:
    schema = data.get("schema", shape.schemas[0])
    if schema not in shape.schemas:
        raise SchemaError(
            f"schema {schema!r} is not one this numaspark reads "
            f"({', '.join(shape.schemas)}): a newer numaspark wrote this {kind}"
        )
    for version in shape.schemas[shape.schemas.index(schema) :]:
        if version in UPGRADES:
            data = UPGRADES[version](data)
    return data
