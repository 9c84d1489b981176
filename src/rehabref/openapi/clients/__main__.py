"""``python -m rehabref.openapi.clients [OUT_DIR]``: regenerate the clients (default: clients/)."""

from __future__ import annotations

import sys
from pathlib import Path

from rehabref.openapi.clients.generate import write


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "clients")
    for path in write(root):
        sys.stdout.write(f"{path}\n")


if __name__ == "__main__":
    main()
