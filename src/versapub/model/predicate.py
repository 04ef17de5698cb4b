"""COUNT-query predicates: conjunctions of per-attribute ``IN`` sets (the paper's workload).

Syntax: ``age IN ('25-34', '35-44') AND sex = 'Female'``.  Attribute names are bare words
(letters, digits, ``_ - .``) or double-quoted; values are single-quoted (``''`` inside
for a quote) or bare words/numbers.  An attribute named twice is the intersection.
"""

from __future__ import annotations

import re

from versapub.errors import ReleaseError

_TOKEN = re.compile(
    r"""\s*(?:(?P<str>'(?:[^']|'')*')|(?P<qname>"(?:[^"]|"")*")|(?P<op>\(|\)|,|=)|(?P<word>[^\s(),=']+))"""
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ReleaseError(f"Cannot parse the query {text!r} at position {pos}: {text[pos : pos + 20]!r}.")
        pos = m.end()
        kind = m.lastgroup or ""
        val = m.group(kind)
        if kind == "str":
            val = val[1:-1].replace("''", "'")
        elif kind == "qname":
            val = val[1:-1].replace('""', '"')
        out.append((kind, val))
    return out


def parse_predicate(text: str) -> dict[str, tuple[str, ...]]:
    """``"a IN ('x','y') AND b = 'z'"`` -> ``{"a": ("x", "y"), "b": ("z",)}``."""
    toks = _tokens(text)
    if not toks:
        raise ReleaseError("The query is empty; write e.g. \"age IN ('25-34') AND sex = 'Female'\".")
    out: dict[str, tuple[str, ...]] = {}
    i = 0

    def err(msg: str) -> ReleaseError:
        return ReleaseError(
            f"Cannot parse the query {text!r}: {msg}. Write conditions as "
            "attr IN ('v1', 'v2') or attr = 'v', joined by AND."
        )

    while i < len(toks):
        kind, name = toks[i]
        if kind not in ("word", "qname"):
            raise err(f"expected an attribute name, found {name!r}")
        i += 1
        if i >= len(toks):
            raise err(f"nothing follows {name!r}")
        kind, op = toks[i]
        values: list[str] = []
        if kind == "op" and op == "=":
            i += 1
            if i >= len(toks) or toks[i][0] not in ("str", "word"):
                raise err(f"a value must follow '{name} ='")
            values.append(toks[i][1])
            i += 1
        elif kind == "word" and op.upper() == "IN":
            i += 1
            if i >= len(toks) or toks[i] != ("op", "("):
                raise err(f"'(' must follow '{name} IN'")
            i += 1
            while True:
                if i >= len(toks) or toks[i][0] not in ("str", "word"):
                    raise err(f"a value list for {name!r} is incomplete")
                values.append(toks[i][1])
                i += 1
                if i < len(toks) and toks[i] == ("op", ","):
                    i += 1
                    continue
                if i < len(toks) and toks[i] == ("op", ")"):
                    i += 1
                    break
                raise err(f"the value list for {name!r} is not closed with ')'")
        else:
            raise err(f"expected IN or = after {name!r}, found {op!r}")
        prev = out.get(name)
        out[name] = tuple(v for v in values if prev is None or v in prev)
        if i < len(toks):
            if toks[i][0] == "word" and toks[i][1].upper() == "AND":
                i += 1
                if i >= len(toks):
                    raise err("nothing follows AND")
            else:
                raise err(f"expected AND, found {toks[i][1]!r}")
    return out
