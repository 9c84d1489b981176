"""Every error ``code`` the API answers with, and its HTTP status (docs/decisions.md section 10).

Threat: a partner branches on ``error.code``; a code the reference does not list (or lists
under another status) is one their integration cannot handle. A test reads every
``ApiError(status, "code")`` in the source and checks it is listed here with that status.
"""

from __future__ import annotations

ERROR_CODES: tuple[tuple[int, str, str], ...] = (
    (
        400,
        "malformed_request",
        "The body is not a JSON object, the Content-Type is not application/json, the "
        "Idempotency-Key is malformed, or the URL contains a NUL character.",
    ),
    (400, "idempotency_key_required", "A Shape V1 create without an Idempotency-Key."),
    (401, "unauthenticated", "Missing, malformed, unknown or revoked key or operator token."),
    (403, "forbidden", "This key may not do this (a publishable key; the wrong environment)."),
    (404, "not_found", "Unknown path, or nothing with this id for this partner and environment."),
    (405, "method_not_allowed", "The method is not supported on the path."),
    (409, "duplicate_external_ref", "external_ref already used in this environment."),
    (409, "duplicate_partner_reference", "Shape G: partner_reference already used."),
    (409, "idempotency_in_flight", "A request with the same Idempotency-Key is still running."),
    (409, "invalid_transition", "A status move the state machine does not allow."),
    (409, "no_webhook_target", "Redelivery requested but no endpoint is subscribed to the event."),
    (409, "duplicate_license_number", "Ops: a physiotherapist with this license number exists."),
    (409, "payments_not_configured", "Ops: no payment provider is configured."),
    (409, "already_settled", "Ops: the commission statement is settled already."),
    (409, "no_commission", "Ops: the period has no commission to put on a statement."),
    (409, "not_matched", "Ops: the referral has no physiotherapist yet; match it first."),
    (
        409,
        "slot_unavailable",
        "Ops: the slot is taken, not offered, on a day off or over the day's cap.",
    ),
    (
        409,
        "period_not_over",
        "Ops: a commission statement or payer invoice is only made after its month has ended.",
    ),
    (409, "no_claim_lines", "Ops: the payer has no claim lines in that month and environment."),
    (
        409,
        "allowance_exceeded",
        "Ops: the session would go beyond the HMO member's remaining allowance (spec 2.5).",
    ),
    (409, "conflict", "Another conflict, e.g. the maximum number of webhook endpoints."),
    (413, "payload_too_large", "The body is larger than 1 MiB."),
    (422, "validation_error", "Field or query-parameter validation failed; see error.fields."),
    (422, "idempotency_key_reused", "The same Idempotency-Key with a different body."),
    (429, "rate_limited", "Rate limit exceeded; Retry-After gives the seconds to wait."),
    (500, "internal_error", "Unexpected error; safe to retry with the same Idempotency-Key."),
    (503, "service_unavailable", "Temporarily unavailable; retry with the same Idempotency-Key."),
)


def codes_for(status: int) -> list[tuple[str, str]]:
    return [(code, when) for code_status, code, when in ERROR_CODES if code_status == status]


def table() -> str:
    """The codes as a Markdown table, for the document's description."""
    rows = [f"| {status} | `{code}` | {when} |" for status, code, when in ERROR_CODES]
    return "\n".join(["| Status | code | When |", "|---|---|---|", *rows])
