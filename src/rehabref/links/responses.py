"""The referral-link answers as msgspec Structs: the bodies the API encodes and the schemas
the OpenAPI document shows (``openapi/links.py``)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from rehabref.cursors import Page


class ReferralLinkRecord(msgspec.Struct, frozen=True):
    link_id: Annotated[str, msgspec.Meta(examples=["lnk_01jd3k7v5n8q2w4e6r8t0y2u4i"])]
    public_code: Annotated[
        str, msgspec.Meta(description="At least 128 random bits; holds no patient data.")
    ]
    url: Annotated[str, msgspec.Meta(description="The hosted form: {public_base}/r/{public_code}.")]
    campaign: str
    active: Annotated[
        bool,
        msgspec.Meta(
            description="True while the link accepts submissions (not deactivated, not expired)."
        ),
    ]
    expires_at: str | None
    created_at: str
    deactivated_at: str | None
    clicks: Annotated[
        int, msgspec.Meta(description="Views of the form while active (a bare counter).")
    ]
    referrals: Annotated[int, msgspec.Meta(description="Referrals submitted through the link.")]


class ReferralLinkList(Page[ReferralLinkRecord], frozen=True):
    pass
