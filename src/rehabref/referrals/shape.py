"""Deciding which request shape a create body uses (V1 or G)."""

from __future__ import annotations

from typing import Any, Literal

from rehabref.errors import ApiError

V1_MARKERS = frozenset({"external_ref", "consent", "route"})
G_MARKERS = frozenset({"clinical_notes", "billing_mode"})


def detect_shape(body: dict[str, Any], *, contract: str) -> Literal["v1", "g"]:
    v1 = sorted(V1_MARKERS & body.keys())
    g = sorted(G_MARKERS & body.keys())
    if v1 and g:
        raise ApiError(
            422,
            "validation_error",
            "The body mixes Shape V1 fields and Shape G fields; send one shape.",
            fields={name: "Belongs to another request shape." for name in g},
        )
    if v1:
        return "v1"
    if g:
        return "g"
    return "g" if contract == "g" else "v1"
