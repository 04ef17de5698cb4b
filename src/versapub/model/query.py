"""COUNT queries people can write: a SQL-like ``WHERE`` condition over the release's attributes.

Grammar (keywords in any case; parsed with Lark)::

    condition := condition OR condition | condition AND condition | NOT condition | ( condition )
               | attr op value            op: = == != <> < <= > >=
               | attr [NOT] IN (value, ...)
               | attr [NOT] BETWEEN value AND value

An attribute is a bare word (letters, digits, ``_ - .``) or double-quoted (``"marital-status"``,
``""`` inside for a quote); a value is single-quoted (``'Female'``, ``''`` inside) or a bare
word or number.  ``<``, ``<=``, ``>``, ``>=`` and ``BETWEEN`` compare in *value order*:
numbers inside values compare as numbers (``'9' < '10'``, ``'25-34' < '35-44'``), the rest as
text.  A value compared with ``=``, ``!=`` or ``IN`` must occur in the attribute's published
domain; otherwise the query is refused with the closest spellings ("did you mean 'Female'?"),
since such a condition would silently count nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from versapub.data.dates import parse_date
from versapub.data.order import order_key
from versapub.errors import ReleaseError
from versapub.model.pram_correction import Correction, corrected_joint
from versapub.model.sparse import JoinTooLarge
from versapub.model.spelling import unknown_attribute, unknown_value

_GRAMMAR = r"""
?start: or_expr
?or_expr: and_expr (_OR and_expr)*
?and_expr: not_expr (_AND not_expr)*
?not_expr: _NOT not_expr -> negate
         | atom
?atom: "(" or_expr ")"
     | name OP value                               -> compare
     | name _IN "(" value ("," value)* ")"         -> in_
     | name _NOT _IN "(" value ("," value)* ")"    -> not_in
     | name _BETWEEN value _AND value              -> between
     | name _NOT _BETWEEN value _AND value         -> not_between
name: WORD | DQ
value: SQ | WORD
OP: "==" | "=" | "!=" | "<>" | "<=" | ">=" | "<" | ">"
_OR.2: /or(?![^\s(),'"=<>!])/i
_AND.2: /and(?![^\s(),'"=<>!])/i
_NOT.2: /not(?![^\s(),'"=<>!])/i
_IN.2: /in(?![^\s(),'"=<>!])/i
_BETWEEN.2: /between(?![^\s(),'"=<>!])/i
WORD: /[^\s(),'"=<>!]+/
DQ: /"(?:[^"]|"")*"/
SQ: /'(?:[^']|'')*'/
%ignore /\s+/
"""

_HELP = (
    "Write conditions such as sex = 'Female', age IN ('25-34', '35-44'), age >= 40, "
    "age BETWEEN 20 AND 30, joined by AND, OR, NOT and parentheses; quote values with "
    "single quotes and attribute names with special characters with double quotes."
)


@cache
def _parser() -> Any:
    from lark import Lark  # imported on first use: keeps the CLI's start-up fast

    # cache=True: lark keeps the built LALR tables (the grammar only) in the temporary folder,
    # 0.1 s of every query's start-up
    return Lark(_GRAMMAR, parser="lalr", maybe_placeholders=False, cache=True)


# -- the condition tree -------------------------------------------------------------


@dataclass(frozen=True)
class Condition:
    """One attribute's test: ``op`` in ``= != < <= > >= in not_in between not_between``."""

    attr: str
    op: str
    values: tuple[str, ...]

    def allowed(self, domain: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
        """Which values of ``domain`` (text) satisfy the test."""
        dom = [str(v) for v in domain]
        if self.op in ("=", "in", "!=", "not_in"):
            hit = np.isin(np.asarray(dom, dtype=object), list(self.values))
            return ~hit if self.op in ("!=", "not_in") else hit
        keys = [order_key(v) for v in dom]
        ref = [order_key(v) for v in self.values]
        cmp: dict[str, Callable[[Any], bool]] = {
            "<": lambda k: k < ref[0],
            "<=": lambda k: k <= ref[0],
            ">": lambda k: k > ref[0],
            ">=": lambda k: k >= ref[0],
            "between": lambda k: ref[0] <= k <= ref[1],
            "not_between": lambda k: not ref[0] <= k <= ref[1],
        }
        return np.fromiter((cmp[self.op](k) for k in keys), dtype=bool, count=len(keys))


@dataclass(frozen=True)
class Node:
    """``and`` / ``or`` over ``children``, or ``not`` of its single child."""

    op: str
    children: tuple[Node | Condition, ...]


Expr = Node | Condition


@dataclass(frozen=True)
class Query:
    """A parsed COUNT query."""

    text: str
    expr: Expr

    @property
    def attributes(self) -> tuple[str, ...]:
        out: list[str] = []

        def walk(e: Expr) -> None:
            if isinstance(e, Condition):
                if e.attr not in out:
                    out.append(e.attr)
            else:
                for c in e.children:
                    walk(c)

        walk(self.expr)
        return tuple(out)

    def conditions(self) -> list[Condition]:
        out: list[Condition] = []

        def walk(e: Expr) -> None:
            if isinstance(e, Condition):
                out.append(e)
            else:
                for c in e.children:
                    walk(c)

        walk(self.expr)
        return out

    def with_labels(self, labels: Mapping[str, Mapping[str, Sequence[str]]]) -> Query:
        """The query with every published generalized value (``age = '[60-80)'``, a label of
        a generalized table) read as the values it covers (``labels``: attribute -> label ->
        its leaves); a value that is a leaf too is kept as it is."""

        def expand(c: Condition) -> Condition:
            own = labels.get(c.attr) or {}
            if c.op not in ("=", "in", "!=", "not_in") or not any(v in own for v in c.values):
                return c
            values = tuple(dict.fromkeys(leaf for v in c.values for leaf in own.get(v, (v,))))
            op = c.op if c.op in ("in", "not_in") else ("in" if c.op == "=" else "not_in")
            return Condition(c.attr, op, values)

        def walk(e: Expr) -> Expr:
            return expand(e) if isinstance(e, Condition) else Node(e.op, tuple(walk(ch) for ch in e.children))

        return Query(self.text, walk(self.expr))

    def with_dates(self, formats: Mapping[str, str]) -> Query:
        """The query with dates written in an attribute's recorded input format
        (``formats``: attribute -> ``%d/%m/%Y``, ``--date-format``) read as the ISO dates
        the release publishes; other values are kept as they are."""

        def walk(e: Expr) -> Expr:
            if isinstance(e, Condition):
                fmt = formats.get(e.attr)
                return Condition(e.attr, e.op, tuple(parse_date(v, fmt) or v for v in e.values)) if fmt else e
            return Node(e.op, tuple(walk(ch) for ch in e.children))

        return Query(self.text, walk(self.expr))

    def validate(self, domains: Mapping[str, npt.NDArray[Any]]) -> None:
        """Refuse unknown attributes and ``=``/``IN`` values outside the published domain,
        with the closest matches."""
        for c in self.conditions():
            if c.attr not in domains:
                raise unknown_attribute(c.attr, domains)
            if c.op not in ("=", "in", "!=", "not_in"):
                continue
            dom = [str(v) for v in domains[c.attr]]
            known = set(dom)
            for v in c.values:
                if v not in known:
                    raise unknown_value(c.attr, v, dom)

    def conjunction(self, domains: Mapping[str, npt.NDArray[Any]] | None = None) -> dict[str, tuple[str, ...]] | None:
        """``{attr: values}`` when the query is an AND of tests of one attribute each (the form
        the model answers by message passing), else ``None``: ``=``/``IN`` tests as written;
        with the attributes' ``domains``, any other test too (``<``, ``BETWEEN``, ``!=``, ...),
        as the domain's values it keeps — so a range over a many-valued attribute never needs
        the joint of the query's attributes (issue 63)."""
        parts = self.expr.children if isinstance(self.expr, Node) and self.expr.op == "and" else (self.expr,)
        out: dict[str, tuple[str, ...]] = {}
        for p in parts:
            if not isinstance(p, Condition):
                return None
            if p.op in ("=", "in"):
                values = tuple(dict.fromkeys(p.values))
            elif domains is not None and p.attr in domains:
                dom = np.asarray(domains[p.attr])
                values = tuple(str(v) for v in dom[p.allowed(dom)])
            else:
                return None
            prev = out.get(p.attr)
            out[p.attr] = tuple(v for v in values if prev is None or v in set(prev))
        return out

    def mask(self, domains: Mapping[str, npt.NDArray[Any]], codes: Mapping[str, npt.NDArray[Any]]) -> npt.NDArray[Any]:
        """Which rows satisfy the query: ``codes[a]`` index ``domains[a]`` for every attribute."""
        allowed = {}

        def ev(e: Expr) -> npt.NDArray[np.bool_]:
            if isinstance(e, Condition):
                key = (e.attr, e.op, e.values)
                if key not in allowed:
                    allowed[key] = e.allowed(domains[e.attr])
                return np.asarray(allowed[key][codes[e.attr]], dtype=bool)
            parts = [ev(c) for c in e.children]
            if e.op == "not":
                return ~parts[0]
            out = parts[0].copy()
            for p in parts[1:]:
                if e.op == "and":
                    out &= p
                else:
                    out |= p
            return out

        return ev(self.expr)


def _text(tok: Any) -> str:
    s = str(tok)
    if tok.type == "SQ":
        return s[1:-1].replace("''", "'")
    if tok.type == "DQ":
        return s[1:-1].replace('""', '"')
    return s


_OPS = {"==": "=", "<>": "!="}
_KINDS = {"in_": "in", "not_in": "not_in", "between": "between", "not_between": "not_between"}


def _build(tree: Any) -> Expr:
    from lark import Token

    kind = tree.data
    if kind in ("or_expr", "and_expr"):
        return Node("or" if kind == "or_expr" else "and", tuple(_build(c) for c in tree.children))
    if kind == "negate":
        return Node("not", (_build(tree.children[0]),))
    name = _text(tree.children[0].children[0])
    rest = tree.children[1:]
    if kind == "compare":
        op = str(rest[0])
        return Condition(name, _OPS.get(op, op), (_text(rest[1].children[0]),))
    vals = tuple(_text(v.children[0]) for v in rest if not isinstance(v, Token))
    return Condition(
        name, {"in_": "in", "not_in": "not_in", "between": "between", "not_between": "not_between"}[kind], vals
    )


def parse_query(text: str) -> Query:
    """Parse a COUNT query (see the module docstring); a syntax error names the position."""
    from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    if not text.strip():
        raise ReleaseError(f"The query is empty. {_HELP}")
    try:
        tree = _parser().parse(text)
    except UnexpectedEOF:
        raise ReleaseError(f"The query {text!r} ends too early. {_HELP}") from None
    except UnexpectedToken as exc:
        if exc.token.type == "$END":
            raise ReleaseError(f"The query {text!r} ends too early. {_HELP}") from None
        raise ReleaseError(
            f"Cannot read the query {text!r}: unexpected {str(exc.token)!r} at column {exc.column}. {_HELP}"
        ) from None
    except UnexpectedCharacters as exc:
        raise ReleaseError(
            f"Cannot read the query {text!r}: unexpected {text[(exc.pos_in_stream or 0) :][:10]!r} "
            f"at column {exc.column}. {_HELP}"
        ) from None
    except LarkError as exc:
        raise ReleaseError(f"Cannot read the query {text!r}: {exc}. {_HELP}") from None
    return Query(text, _build(tree))


def count(model: Any, query: Query, corrections: Mapping[str, Correction] | None = None) -> float:
    """The model's estimate of ``COUNT(*) WHERE query``: by message passing when the query
    is an AND of ``=``/``IN`` tests, otherwise from the model's marginal over the query's
    attributes; ``corrections`` (column -> PRAM's published matrix) correct the marginal
    along those columns (:mod:`versapub.model.pram_correction`)."""
    query.validate(model.domains)
    attrs = query.attributes
    fix = {a: c for a, c in (corrections or {}).items() if a in attrs}
    conj = query.conjunction(model.domains)
    if conj is not None and not fix:
        return float(model.count(conj))
    signed = None if fix else signed_conjunctions(query.expr, model.domains)
    if signed is not None:  # OR and NOT by inclusion-exclusion over ANDs: no joint needed
        return float(sum(sign * (model.n if not c else model.count(c)) for sign, c in signed))
    try:
        m = model.marginal(attrs)
    except JoinTooLarge as exc:  # issue 63: a query the model cannot answer is said, never an internal error
        raise ReleaseError(
            f"The query {query.text!r} combines {', '.join(attrs)} with OR or NOT, which needs their joint "
            f"distribution under the release model, and that would expand to {exc.args[0]:,} rows here. Ask it as "
            "ANDs of tests of one column each (each part of an OR as its own query), or over fewer columns."
        ) from None
    if not len(m.values):
        return 0.0
    codes_list, values, domains = corrected_joint(m.attrs, m.codes, m.values, model.domains, fix)
    mask = query.mask({**model.domains, **domains}, dict(zip(m.attrs, codes_list, strict=True)))
    return float(model.n * values[mask].sum())


#: The most signed conjunctions a query is expanded into by inclusion-exclusion.
MAX_TERMS = 64

Conj = dict[str, tuple[str, ...]]


def signed_conjunctions(expr: Expr, domains: Mapping[str, npt.NDArray[Any]]) -> list[tuple[int, Conj]] | None:
    """``expr`` as a signed sum of ANDs of one-attribute tests (``{}``: every record), by
    inclusion-exclusion — ``NOT a = ALL - a``, ``a OR b = a + b - (a AND b)`` — so that the
    release model answers each by message passing; None above :data:`MAX_TERMS` terms."""

    def meet(x: Conj, y: Conj) -> Conj:
        out = dict(x)
        for a, v in y.items():
            out[a] = v if a not in out else tuple(t for t in out[a] if t in set(v))
        return out

    def terms(e: Expr) -> list[tuple[int, Conj]] | None:
        if isinstance(e, Condition):
            dom = np.asarray(domains[e.attr])
            return [(1, {e.attr: tuple(str(v) for v in dom[e.allowed(dom)])})]
        parts = [terms(c) for c in e.children]
        if any(p is None for p in parts):
            return None
        got: list[tuple[int, Conj]] | None
        if e.op == "not":
            got = [(1, {}), *((-s_, c) for s_, c in parts[0] or [])]
        elif e.op == "and":
            got = [(1, {})]
            for p in parts:
                got = [(s1 * s2, meet(c1, c2)) for s1, c1 in got for s2, c2 in p or []]
                if len(got) > MAX_TERMS:
                    return None
        else:
            got = parts[0]
            for p in parts[1:]:
                both = [(s1 * s2, meet(c1, c2)) for s1, c1 in got or [] for s2, c2 in p or []]
                got = [*(got or []), *(p or []), *((-s_, c) for s_, c in both)]
        return got if got is not None and len(got) <= MAX_TERMS else None

    return terms(expr)


def count_rows(query: Query, domains: Mapping[str, npt.NDArray[Any]], codes: Mapping[str, npt.NDArray[Any]]) -> int:
    """``COUNT(*) WHERE query`` over encoded rows (the original table)."""
    return int(query.mask(domains, codes).sum())
