"""Every file of the package, folder by folder on its floor, with the first sentence of its
docstring: the file map of ``docs/architecture.md`` (between its ``files`` markers).

    python scripts/architecture_files.py           # print the map
    python scripts/architecture_files.py --write   # rewrite it in docs/architecture.md

``tests/test_layers.py`` asserts the document holds the map of the code as it is.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "versapub"
DOC = ROOT / "docs" / "architecture.md"
BEGIN, END = "<!-- files:begin (scripts/architecture_files.py) -->", "<!-- files:end -->"


def _first_sentence(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    text = " ".join(doc.split(">>>")[0].split())
    match = re.match(r"(.+?\.)(\s+[A-Z(`*]|$)", text)
    first = match.group(1) if match else text
    return (first if len(first) <= 220 else first[:217].rsplit(" ", 1)[0] + " …") or "(no docstring)"


def file_map(floors: dict[str, float]) -> str:
    """The map: per top-level room (in floor order), each file and its first sentence."""
    rooms: dict[str, list[Path]] = {}
    for f in sorted(SRC.rglob("*.py")):
        rel = f.relative_to(SRC)
        top = rel.parts[0].removesuffix(".py") if len(rel.parts) == 1 else rel.parts[0]
        rooms.setdefault(top, []).append(f)
    lines = []
    for top in sorted(rooms, key=lambda t: (floors.get(t, 99), t)):
        lines += ["", f"**{top}** (floor {floors.get(top, '?'):g})" if top in floors else f"**{top}**", ""]
        for f in rooms[top]:
            lines.append(f"- `{f.relative_to(SRC).as_posix()}` — {_first_sentence(f)}")
    return "\n".join([BEGIN, *lines, "", END])


def replaced(text: str, floors: dict[str, float]) -> str:
    """``text`` (the document) with its map replaced by the code's."""
    a, b = text.index(BEGIN), text.index(END) + len(END)
    return text[:a] + file_map(floors) + text[b:]


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from tests.test_layers import FLOORS

    if "--write" in sys.argv:
        DOC.write_text(replaced(DOC.read_text(encoding="utf-8"), FLOORS), encoding="utf-8")
    else:
        sys.stdout.write(file_map(FLOORS) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
