"""The fenced shell blocks of README.md and docs/*.md, for tests/docs/test_runnable_docs.py.

The rules the documentation follows so that every command in it is run by a test
(docs/testing.md#runnable-documentation):

- A command is written in a fenced block tagged ``sh``, ``bash`` or ``console`` (``console``:
  commands start with ``$ ``, the other lines are the output they show). A block with no
  language that holds a command is refused, so no command escapes the test.
- A block that cannot run in a test (a long-running server, a production host, the test suite
  itself...) has ``<!-- not-run: reason -->`` on the line before its fence; the reason is
  required.
- ``export NAME=value...  # the "json_key" ...``, a value the reader copies from an earlier
  output, is a placeholder: the test takes the latest ``"json_key": "..."`` printed so far in
  that page (starting with what ``make run`` prints).
- ``http://127.0.0.1:8000``, `make run`'s address, stands for the test's server, and
  ``127.0.0.1:4000``, the example webhook receiver's, for a free port (``RECEIVER_PORT``).
- A block may start a process in the background (``&``); it runs until the page is done, and
  its output counts as the output of the blocks that follow. Output a page shows is waited
  for up to ten seconds (a webhook arrives "within a second").
- Output the page shows (a ``console`` block's output lines, or the ``json`` or untagged
  block that follows a command block under the same heading) is checked for its key parts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SHELL_LANGUAGES = ("sh", "bash", "console")
OUTPUT_LANGUAGES = ("", "json", "text")
FENCE = re.compile(r"^\s*(```+)([\w-]*)\s*$")
NOT_RUN = re.compile(r"^\s*<!--\s*not-run:(.*?)-->\s*$")
NOT_RUN_START = re.compile(r"^\s*<!--\s*not-run")
# The first word of a line that is a command, not output or prose.
COMMAND = re.compile(
    r"^\s*(\$ |curl\s|rehabref [a-z]|\.venv/bin/|make\s|export\s|python3?\s|pytest\s|"
    r"REHABREF_\w+=\S*\s+\S)"
)
PLACEHOLDER = re.compile(r'^(\s*)export (\w+)=(\S*\.\.\.\S*)\s*(?:#[^"]*"(\w+)".*)?$')
DEMO_BASE_URL = "http://127.0.0.1:8000"
RECEIVER_ADDRESS = "127.0.0.1:4000"  # examples/webhook_receiver.py's default


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    body: str
    not_run: str | None  # the reason, when marked
    shown_output: str | None  # the output the page shows for it

    @property
    def label(self) -> str:
        return f"{self.page}:{self.line}"

    def commands(self) -> str:
        """The shell text to run: a console block's ``$`` lines (with continuations)."""
        if self.language != "console":
            return self.body
        lines, continuing = [], False
        for line in self.body.splitlines():
            if line.startswith("$ ") or continuing:
                lines.append(line.removeprefix("$ "))
                continuing = line.rstrip().endswith("\\")
        return "\n".join(lines)

    def expected_output(self) -> str | None:
        if self.language != "console":
            return self.shown_output
        lines, continuing = [], False
        for line in self.body.splitlines():
            if line.startswith("$ ") or continuing:
                continuing = line.rstrip().endswith("\\")
            else:
                lines.append(line)
        return "\n".join(lines) or None


@dataclass(frozen=True)
class Fence:
    line: int
    language: str
    body: str
    before: str  # the nearest non-blank line above the fence


class DocProblem(Exception):
    pass


def fences(text: str) -> list[tuple[Fence, list[str]]]:
    """Every fenced block with the lines between it and the next one."""
    lines = text.splitlines()
    found: list[tuple[Fence, list[str]]] = []
    index, gap_start = 0, 0
    gap: list[str] = []
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            gap.append(lines[index])
            index += 1
            continue
        end = index + 1
        while end < len(lines) and not re.match(r"^\s*" + opening.group(1) + r"\s*$", lines[end]):
            end += 1
        before = next((line for line in reversed(lines[gap_start:index]) if line.strip()), "")
        if found:
            found[-1] = (found[-1][0], gap)
        found.append(
            (
                Fence(index + 1, opening.group(2), "\n".join(lines[index + 1 : end]), before),
                [],
            )
        )
        gap, index, gap_start = [], end + 1, end + 1
    if found:
        found[-1] = (found[-1][0], gap)
    return found


def shell_blocks(path: Path, root: Path) -> list[Block]:
    """The page's command blocks; DocProblem for a block or marker that breaks the rules."""
    page = str(path.relative_to(root))
    text = path.read_text()
    fenced = fences(text)
    marker_lines = [n for n, line in enumerate(text.splitlines(), 1) if NOT_RUN_START.search(line)]
    used_markers = 0
    blocks: list[Block] = []
    for position, (fence, gap_after) in enumerate(fenced):
        marker = NOT_RUN.match(fence.before)
        if fence.language not in SHELL_LANGUAGES:
            if marker:
                raise DocProblem(f"{page}:{fence.line}: not-run marker before a non-shell block")
            if fence.language == "" and any(COMMAND.match(x) for x in fence.body.splitlines()):
                raise DocProblem(
                    f"{page}:{fence.line}: a command in an untagged block; tag it ```sh (or "
                    "```console) so the docs test runs it, or mark it <!-- not-run: reason -->"
                )
            continue
        reason = None
        if marker:
            used_markers += 1
            reason = marker.group(1).strip()
            if not reason:
                raise DocProblem(f"{page}:{fence.line}: <!-- not-run: --> without a reason")
        shown = None
        following = fenced[position + 1][0] if position + 1 < len(fenced) else None
        heading_between = any(line.startswith("#") for line in gap_after)
        if (
            following is not None
            and following.language in OUTPUT_LANGUAGES
            and not heading_between
            and not NOT_RUN.match(following.before)
        ):
            shown = following.body
        blocks.append(Block(page, fence.line, fence.language, fence.body, reason, shown))
    if used_markers != len(marker_lines):
        raise DocProblem(
            f"{page}: a not-run marker that is not the line just before a shell block "
            f"(lines {marker_lines})"
        )
    return blocks


def resolve_placeholders(
    script: str, transcript: str, base_url: str, receiver_port: int = 4000
) -> str:
    """The script with copied-by-hand values filled in from the page's earlier output, and
    the test's addresses for the server and the example webhook receiver."""
    resolved = []
    script = script.replace(DEMO_BASE_URL, base_url)
    script = script.replace(RECEIVER_ADDRESS, f"127.0.0.1:{receiver_port}")
    for line in script.splitlines():
        placeholder = PLACEHOLDER.match(line)
        if placeholder:
            indent, name, _, key = placeholder.groups()
            if key is None:
                raise DocProblem(
                    f'placeholder {name}: say which printed value it is, as in # the "{name}" value'
                )
            values = re.findall(rf'"{key}"\s*:\s*"([^"]*)"', transcript)
            if not values:
                raise DocProblem(f'placeholder {name}: no "{key}" printed earlier on this page')
            line = f"{indent}export {name}='{values[-1]}'"
        resolved.append(line)
    return "\n".join(resolved)


# --- Output checks --------------------------------------------------------------------------

_ID = re.compile(r"^[a-z]{2,6}_[0-9a-z]{16,}$")
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d")


def _varies(value: Any) -> bool:
    """Values that differ from run to run (ids, times, links, elided or counted values)."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int | float):
        return True
    if isinstance(value, str):
        return (
            "..." in value
            or bool(_ID.match(value))
            or bool(_TIMESTAMP.match(value))
            or value.startswith(("http://", "https://"))
        )
    return True


def _pairs(document: Any, into: dict[str, list[Any]]) -> dict[str, list[Any]]:
    if isinstance(document, dict):
        for key, value in document.items():
            into.setdefault(key, []).append(value)
            _pairs(value, into)
    elif isinstance(document, list):
        for item in document:
            _pairs(item, into)
    return into


def json_documents(output: str) -> list[Any]:
    decoder = json.JSONDecoder()
    found, at = [], 0
    while (start := output.find("{", at)) != -1:
        try:
            document, at = decoder.raw_decode(output, start)
        except json.JSONDecodeError:
            at = start + 1
            continue
        found.append(document)
    return found


def _json_only(text: str) -> list[Any] | None:
    """The JSON documents the text consists of (one or more, one after another), or None."""
    decoder = json.JSONDecoder()
    documents, at = [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        try:
            document, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            return None
        documents.append(document)
    return documents or None


def missing_parts(shown: str, actual: str) -> list[str]:
    """The key parts of the shown output that the actual output lacks: every key, and every
    value that does not vary between runs, of shown JSON; the text of other lines."""
    shown_json = _json_only(shown)
    if shown_json is None:
        flat = " ".join(actual.split())
        return [
            part
            for line in shown.splitlines()
            for part in (" ".join(piece.split()) for piece in line.split("..."))
            if part and part not in flat
        ]
    actual_pairs: dict[str, list[Any]] = {}
    for document in json_documents(actual):
        _pairs(document, actual_pairs)
    missing = []
    for key, values in _pairs(shown_json, {}).items():
        if "..." in key:  # {"...": "..."}: the page leaves the rest out
            continue
        if key not in actual_pairs:
            missing.append(f'"{key}"')
            continue
        for value in values:
            if not _varies(value) and value not in actual_pairs[key]:
                missing.append(f'"{key}": {json.dumps(value)}')
    return missing
