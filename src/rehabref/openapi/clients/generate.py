"""Write both client libraries from the partner OpenAPI document; ``generated_files`` is what a
test compares with the copies kept in the repository."""

from __future__ import annotations

from pathlib import Path

from rehabref.openapi.clients import python_client, typescript_client
from rehabref.openapi.document import partner_document


def generated_files() -> dict[str, str]:
    """Path under ``clients/`` -> content, for every generated file."""
    document = partner_document()
    found = {f"python/{path}": text for path, text in python_client.files(document).items()}
    found.update(
        {f"typescript/{path}": text for path, text in typescript_client.files(document).items()}
    )
    return found


def write(root: Path) -> list[Path]:
    written = []
    for relative, text in generated_files().items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written
