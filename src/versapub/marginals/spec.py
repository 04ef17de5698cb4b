"""What a collection of anonymized marginals is made of (Kifer & Gehrke, SIGMOD 2006, §5).

A *marginal* names some attributes and, for each, the level of its generalization
hierarchy it is published at (``0``: the values themselves; the hierarchy's top: the
attribute suppressed).  Written ``"age@2, race"`` (a missing level is 0).  A *requirement*
says what the collection must satisfy together: k-link and k-combinatorial anonymity of
its non-sensitive cells (the paper's two definitions of §3) and maxent l-diversity of the
sensitive attribute (its third), in any l-diversity form whose satisfying histograms
form a convex cone (frequency, entropy, recursive (c, l); ``docs/choices.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from versapub.errors import ConfigError
from versapub.privacy.guarantees.guarantee import Guarantee, make_guarantee

#: Guarantees maxent diversity accepts: their satisfying histograms are a convex cone
#: (a positive mixture of satisfying groups satisfies), which makes the pruning of
#: Algorithm 1 exact (``docs/choices.md``).
MAXENT_FORMS = ("l-diversity", "entropy-l-diversity", "recursive-cl-diversity")


@dataclass(frozen=True)
class Marginal:
    """Attributes and each one's hierarchy level (validated: unique names, whole levels >= 0)."""

    attributes: tuple[str, ...]
    levels: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", tuple(str(a) for a in self.attributes))
        object.__setattr__(self, "levels", tuple(self.levels))
        if not self.attributes:
            raise ConfigError("A marginal needs at least one attribute.")
        if len(self.levels) != len(self.attributes):
            raise ConfigError(f"Marginal {self.attributes}: one level per attribute, got {self.levels}.")
        dup = sorted({a for a in self.attributes if self.attributes.count(a) > 1})
        if dup:
            raise ConfigError(f"Marginal {self.label!r} names {', '.join(map(repr, dup))} twice.")
        for a, lv in zip(self.attributes, self.levels, strict=True):
            if isinstance(lv, bool) or not isinstance(lv, int) or lv < 0:
                raise ConfigError(
                    f"Marginal {self.attributes}: the level of {a!r} must be a whole number >= 0, got {lv!r}."
                )

    @property
    def label(self) -> str:
        """``"age@2,race@0"``: the marginal as written on the command line (every level shown)."""
        return ",".join(f"{a}@{lv}" for a, lv in zip(self.attributes, self.levels, strict=True))

    def level(self, attribute: str) -> int:
        return self.levels[self.attributes.index(attribute)]

    @classmethod
    def parse(cls, text: str) -> Marginal:
        """``"age@2, race"`` -> ``Marginal(("age", "race"), (2, 0))``."""
        attrs: list[str] = []
        levels: list[int] = []
        for part in str(text).split(","):
            part = part.strip()
            if not part:
                raise ConfigError(f'Marginal {text!r} has an empty attribute (write e.g. "age@2, race").')
            name, at, level = part.rpartition("@") if "@" in part else (part, "", "0")
            name = name.strip()
            try:
                lv = int(level.strip())
            except ValueError:
                raise ConfigError(
                    f"Marginal {text!r}: the level of {name!r} must be a whole number, got {level.strip()!r}."
                ) from None
            if not name:
                raise ConfigError(f"Marginal {text!r}: {part!r} names no attribute.")
            attrs.append(name)
            levels.append(lv)
            del at
        return cls(tuple(attrs), tuple(levels))

    def to_json(self) -> dict[str, int]:
        return dict(zip(self.attributes, self.levels, strict=True))


def parse_marginals(items: Sequence[str | Marginal | dict[str, Any]]) -> tuple[Marginal, ...]:
    """Marginals from their written forms (``"age@2,race"``, ``{"age": 2, "race": 0}``)."""
    out = []
    for it in items:
        if isinstance(it, Marginal):
            out.append(it)
        elif isinstance(it, dict):
            out.append(Marginal(tuple(it), tuple(it.values())))
        elif isinstance(it, str):
            out.append(Marginal.parse(it))
        else:
            raise ConfigError(f'A marginal is written as text like "age@2, race", got {it!r}.')
    return tuple(out)


@dataclass(frozen=True)
class Requirement:
    """What a collection must satisfy: ``k`` for k-link and k-combinatorial anonymity
    (whole >= 2) and ``diversity``, the l-diversity form the maximum-entropy estimate
    must satisfy for every combination of non-sensitive values."""

    sensitive: str
    k: int
    diversity: Guarantee

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 2:
            raise ConfigError(f"k of k-anonymity must be a whole number >= 2 (k = 1 protects nobody), got {self.k!r}.")
        if self.diversity.name not in MAXENT_FORMS:
            raise ConfigError(f"Maxent diversity accepts {', '.join(MAXENT_FORMS)}; got {self.diversity.name!r}.")
        if self.diversity.needs():
            raise ConfigError(
                f"The {self.diversity.name} guarantee needs the table's context; maxent diversity "
                "takes guarantees of a group's histogram alone."
            )

    @classmethod
    def build(cls, sensitive: str, k: int, diversity: dict[str, Any]) -> Requirement:
        try:
            g = make_guarantee(diversity)
        except Exception as exc:
            raise ConfigError(str(exc)) from None
        return cls(sensitive, k, g)

    def to_json(self) -> dict[str, Any]:
        return {"sensitive": self.sensitive, "k": self.k, "diversity": self.diversity.to_manifest()}


#: The injection searches (Figure 8 greedy one-attribute marginals, or stepwise).
SEARCHES = ("greedy", "stepwise")


@dataclass(frozen=True)
class MarginalsSpec:
    """A collection of anonymized marginals to publish (``[marginals]`` of a configuration,
    or ``versapub marginals publish`` flags): the sensitive attribute, ``k`` (k-link and
    k-combinatorial anonymity), the diversity form the maximum-entropy estimate must meet,
    the base table (``"incognito"``: the best minimal l-diverse, k-anonymous full-domain
    generalization; or a marginal written ``"age@2, race, ..."``; or none), the marginals
    (``"age@2, race"``), and how many more to inject by ``search``."""

    sensitive: str
    k: int
    diversity: dict[str, Any]
    base: str | None = None
    marginals: tuple[str, ...] = ()
    inject: int = 0
    search: str = "greedy"

    def __post_init__(self) -> None:
        if not isinstance(self.sensitive, str) or not self.sensitive:
            raise ConfigError("The marginals need the sensitive column (--sensitive COLUMN).")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 2:
            raise ConfigError(f"k must be a whole number >= 2 (k = 1 protects nobody), got {self.k!r}.")
        if not isinstance(self.diversity, dict) or not isinstance(self.diversity.get("name"), str):
            raise ConfigError(
                f"The diversity form must be like {{name = 'l-diversity', l = 4}}, got {self.diversity!r}."
            )
        if isinstance(self.inject, bool) or not isinstance(self.inject, int) or self.inject < 0:
            raise ConfigError(f"inject must be a whole number >= 0, got {self.inject!r}.")
        if self.search not in SEARCHES:
            raise ConfigError(f"search must be one of {', '.join(SEARCHES)}, got {self.search!r}.")
        if self.base is None and not self.marginals:
            raise ConfigError(
                "Give a base table (--base incognito, or --base 'age@1, race, ...') or marginals "
                "(--marginal 'age@2, race')."
            )
