"""The typed answers' components (openapi/answers.py): what msgspec writes for the Structs the
API encodes, with unions as ``anyOf`` their members and Literal values as declared."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec
import pytest

from rehabref.cursors import Page
from rehabref.openapi.answers import answer_components
from rehabref.openapi.document import full_document
from rehabref.openapi.registry import ANSWER_TYPES, SCHEMA_MODELS
from rehabref.referrals.responses import ReferralRecordV1
from rehabref.responses import AnswerUnion

REF = "#/components/schemas/"


class Either(AnswerUnion):
    """A first or a second."""

    __slots__ = ()


class First(msgspec.Struct, Either, frozen=True):
    state: Literal["new", "open", "closed"]
    kind: Annotated[Literal["first"], msgspec.Meta(description="Which one.")]


class Second(msgspec.Struct, Either, frozen=True):
    count: int | None


Either.alternatives = (First, Second)


class EitherList(Page[Either], frozen=True):
    """A page of either."""


class Unlisted(msgspec.Struct, Either, frozen=True):
    """Subclasses the union without being listed by it: not part of what it says."""

    other: str


class Lonely(AnswerUnion):
    __slots__ = ()


class Misnamed(AnswerUnion):
    __slots__ = ()


Misnamed.alternatives = (First,)  # First is not a Misnamed


class LonelyList(Page[Lonely], frozen=True):
    pass


def test_a_union_is_any_of_the_members_it_lists_in_that_order():
    components = answer_components([Either, EitherList])
    assert components["Either"] == {
        "title": "Either",
        "description": "A first or a second.",
        "anyOf": [{"$ref": REF + "First"}, {"$ref": REF + "Second"}],
    }
    assert components["EitherList"]["properties"]["data"] == {
        "type": "array",
        "items": {"$ref": REF + "Either"},
    }
    assert components["Second"]["properties"]["count"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}]
    }


def test_literal_values_are_listed_as_declared_and_one_value_is_a_const():
    properties = answer_components([First])["First"]["properties"]
    assert properties["state"] == {"enum": ["new", "open", "closed"], "type": "string"}
    assert properties["kind"] == {"description": "Which one.", "const": "first", "type": "string"}


class ThirdOrError(AnswerUnion):
    __slots__ = ()
    described_elsewhere: ClassVar[tuple[str, ...]] = ("ErrorBody",)


class Third(msgspec.Struct, ThirdOrError, frozen=True):
    reason: str


ThirdOrError.alternatives = (Third,)


def test_a_union_may_name_components_described_elsewhere_after_its_structs():
    assert answer_components([ThirdOrError])["ThirdOrError"]["anyOf"] == [
        {"$ref": REF + "Third"},
        {"$ref": REF + "ErrorBody"},
    ]


class Nested(msgspec.Struct, frozen=True):
    reason: Literal["failing", "paused"] | None
    kinds: list[Literal["new", "open", "closed"]]


def test_literal_values_inside_an_optional_or_a_list_are_listed_as_declared_too():
    properties = answer_components([Nested])["Nested"]["properties"]
    assert properties["reason"] == {
        "anyOf": [{"enum": ["failing", "paused"], "type": "string"}, {"type": "null"}]
    }
    assert properties["kinds"] == {
        "type": "array",
        "items": {"enum": ["new", "open", "closed"], "type": "string"},
    }


def test_a_union_referred_to_must_be_listed():
    with pytest.raises(TypeError, match="Lonely"):
        answer_components([LonelyList])


def test_a_union_names_its_alternatives_and_only_its_own():
    with pytest.raises(TypeError, match="Lonely must list"):
        answer_components([Lonely])
    with pytest.raises(TypeError, match="First is listed by Misnamed"):
        answer_components([Misnamed])


def test_the_document_describes_each_typed_answer_from_its_type():
    schemas = full_document()["components"]["schemas"]
    assert schemas["ReferralRecordV1"] == answer_components(ANSWER_TYPES)["ReferralRecordV1"]
    assert list(schemas["ReferralRecordV1"]["properties"]) == [
        field.encode_name for field in msgspec.structs.fields(ReferralRecordV1)
    ]
    pydantic_names = {model.__name__ for model in SCHEMA_MODELS}
    assert not pydantic_names & {kind.__name__ for kind in ANSWER_TYPES}
