"""The components of the typed answers: msgspec's JSON Schema of the Structs the API encodes,
so the document describes each answer from the type that writes it.

Two things msgspec does not write the way the document needs:

- an untagged union of Structs: a union is named by an ``AnswerUnion`` marker
  (``responses.py``) and written here as ``anyOf`` the Structs it lists, in that order, then
  the components it names as ``described_elsewhere``;
- a field typed by a ``Literal`` (also ``Literal | None`` or a list of one): msgspec sorts the
  values; here they are listed as declared (a status in lifecycle order), typed as strings, and
  a single value is a ``const``.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, TypeGuard, Union, get_args, get_origin

import msgspec

from rehabref.responses import AnswerUnion

AnswerType = type[msgspec.Struct] | type[AnswerUnion]

_REF = "#/components/schemas/{name}"


def members(union: type[AnswerUnion]) -> list[type[msgspec.Struct]]:
    """The Structs a union marker names (its ``alternatives``, never whatever subclasses it
    happens to have been imported)."""
    named = [kind for kind in union.alternatives if issubclass(kind, msgspec.Struct)]
    if not named or len(named) != len(union.alternatives):
        raise TypeError(f"{union.__name__} must list its alternatives, each an answer Struct")
    for kind in named:
        if not issubclass(kind, union):
            raise TypeError(f"{kind.__name__} is listed by {union.__name__} but is not one")
    return named


def _is_union(kind: type) -> TypeGuard[type[AnswerUnion]]:
    return issubclass(kind, AnswerUnion) and not issubclass(kind, msgspec.Struct)


def _union_schema(union: type[AnswerUnion]) -> dict[str, Any]:
    schema: dict[str, Any] = {"title": union.__name__}
    if union.__doc__:
        schema["description"] = inspect.cleandoc(union.__doc__)
    names = [member.__name__ for member in members(union)] + list(union.described_elsewhere)
    schema["anyOf"] = [{"$ref": _REF.format(name=name)} for name in names]
    return schema


def _literal_schema(values: tuple[Any, ...]) -> dict[str, Any]:
    schema: dict[str, Any] = {"const": values[0]} if len(values) == 1 else {"enum": list(values)}
    if all(isinstance(value, str) for value in values):
        schema["type"] = "string"
    return schema


def _structs_in(kind: Any, found: set[type[msgspec.Struct]]) -> None:
    """Every Struct ``kind`` is or refers to (through fields, unions and containers)."""
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        if kind in found:
            return
        found.add(kind)
        for field in msgspec.structs.fields(kind):
            _structs_in(field.type, found)
    elif isinstance(kind, type) and _is_union(kind):
        for member in members(kind):
            _structs_in(member, found)
    for argument in get_args(kind):
        _structs_in(argument, found)


def _declared_literal(kind: Any, written: dict[str, Any]) -> None:
    """Rewrite the Literal in ``kind`` as declared, also inside ``X | None`` and ``list[X]``."""
    while get_origin(kind) is Annotated:
        kind = get_args(kind)[0]
    origin, arguments = get_origin(kind), get_args(kind)
    if origin is Literal:
        written.pop("enum")
        written.update(_literal_schema(arguments))
    elif origin is list and "items" in written:
        _declared_literal(arguments[0], written["items"])
    elif origin in (Union, UnionType):
        present = [argument for argument in arguments if argument is not NoneType]
        alternatives = [item for item in written.get("anyOf", []) if item != {"type": "null"}]
        if len(present) == 1 and len(alternatives) == 1:
            _declared_literal(present[0], alternatives[0])


def _declared_literals(struct: type[msgspec.Struct], schema: dict[str, Any]) -> None:
    for field in msgspec.structs.fields(struct):
        _declared_literal(field.type, schema["properties"][field.encode_name])


def answer_components(types: Sequence[AnswerType]) -> dict[str, Any]:
    """The schema of each of ``types`` and of everything they refer to, by component name."""
    unions = [kind for kind in types if _is_union(kind)]
    structs = [kind for kind in types if not _is_union(kind)]
    structs += [member for union in unions for member in members(union)]
    referred: set[type] = set()

    def union_ref(kind: type) -> dict[str, Any]:
        if not _is_union(kind):
            raise NotImplementedError(kind)
        referred.add(kind)
        return {"$ref": _REF.format(name=kind.__name__)}

    _, components = msgspec.json.schema_components(
        structs, schema_hook=union_ref, ref_template=_REF
    )
    unlisted = referred - set(unions)
    if unlisted:
        raise TypeError(f"list these unions with the answer types: {unlisted}")
    found: set[type[msgspec.Struct]] = set()
    for kind in types:
        _structs_in(kind, found)
    for struct in found:
        _declared_literals(struct, components[struct.__name__])
    for union in unions:
        components[union.__name__] = _union_schema(union)
    return components
