"""The rules of the runnable-docs test refuse what would let a command escape it."""

from __future__ import annotations

import pytest

from tests.support.doc_blocks import DocProblem, missing_parts, resolve_placeholders, shell_blocks


def blocks_of(tmp_path, text):
    page = tmp_path / "page.md"
    page.write_text(text)
    return shell_blocks(page, tmp_path)


def test_a_command_in_an_untagged_block_is_refused(tmp_path):
    with pytest.raises(DocProblem, match="untagged"):
        blocks_of(tmp_path, "Run:\n\n```\nrehabref migrate\n```\n")


def test_a_not_run_marker_needs_a_reason_and_a_shell_block(tmp_path):
    with pytest.raises(DocProblem, match="without a reason"):
        blocks_of(tmp_path, "<!-- not-run: -->\n```sh\nmake run\n```\n")
    with pytest.raises(DocProblem, match="non-shell"):
        blocks_of(tmp_path, "<!-- not-run: why -->\n```json\n{}\n```\n")
    with pytest.raises(DocProblem, match="not the line just before"):
        blocks_of(tmp_path, "<!-- not-run: why -->\n\ntext\n\n```sh\nmake run\n```\n")


def test_blocks_carry_their_marker_and_the_output_shown_under_the_same_heading(tmp_path):
    marked, shown, unrelated = blocks_of(
        tmp_path,
        "<!-- not-run: starts a server -->\n```sh\nmake run\n```\n\n"
        '```console\n$ rehabref retention \\\n  --dry-run\n{"dry_run": true}\n```\n\n'
        'Prose.\n\n```sh\ncurl -s "$BASE/x"\n```\n\n## Next\n\n```json\n{"a": 1}\n```\n',
    )
    assert (marked.not_run, marked.shown_output) == ("starts a server", None)
    assert shown.commands() == "rehabref retention \\\n  --dry-run"
    assert shown.expected_output() == '{"dry_run": true}'
    assert unrelated.shown_output is None


def test_placeholders_take_the_latest_printed_value_and_the_demo_address_is_replaced():
    transcript = '{"referral_id": "ref_old"}\n{"referral_id":"ref_new"}'
    script = (
        'export REF=ref_...   # the "referral_id" you just received\n'
        "curl http://127.0.0.1:8000/api/v1/partners/referrals/$REF"
    )
    assert resolve_placeholders(script, transcript, "http://127.0.0.1:5555") == (
        "export REF='ref_new'\ncurl http://127.0.0.1:5555/api/v1/partners/referrals/$REF"
    )
    with pytest.raises(DocProblem, match='no "cursor"'):
        resolve_placeholders('export C=...  # the "cursor"', transcript, "")
    with pytest.raises(DocProblem, match="say which printed value"):
        resolve_placeholders("export C=...", transcript, "")


def test_shown_output_is_compared_by_its_key_parts():
    shown = '{"referral_id": "ref_01m809eknq9reqrh1q9yd8kast", "status": "received", "n": 3}'
    assert (
        missing_parts(shown, '{"referral_id":"ref_zzzzzzzzzzzzzzzzzzzz","status":"received","n":9}')
        == []
    )
    assert missing_parts(shown, '{"referral_id":"ref_x","status":"booked"}') == [
        '"status": "received"',
        '"n"',
    ]
    assert missing_parts("audit chain intact: ... records", "audit chain intact: 5 records") == []
    assert missing_parts("HTTP/1.1 201 Created", "HTTP/1.1 200 OK") == ["HTTP/1.1 201 Created"]
