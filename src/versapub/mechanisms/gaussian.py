"""The ``dp`` mechanism plug-in (issue 52): marginals measured with the Gaussian mechanism
under zero-concentrated differential privacy and a model fitted to them.

Which marginals: ``select="rules"`` — ``Q ∪ {S}`` of each of the job's rules, the natural
workload, plus the one-way marginal of every other column; ``"given"`` — the ``marginals``
named (``"age+sex;disease"``: marginals separated by ``;``, attributes by ``+``), plus the
one-way marginal of every column they leave out; ``"mst"`` — MST's adaptive selection
(:mod:`versapub.mechanisms.mst`); ``"aim"`` — AIM's adaptive selection for a workload
(:mod:`versapub.mechanisms.aim`): the rules' marginals, else the ``marginals`` given, else
every pair of columns; ``"auto"`` (default) — the rules when the job has some, MST
otherwise.  Every marginal is measured over the declared domains with OpenDP's discrete
Gaussian (:mod:`versapub.mechanisms.noise`), the budget split equally in rho (MST: its own
thirds), and the model is fitted by Private-PGM's mirror descent (:mod:`versapub.mechanisms.fit`)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from versapub.errors import ConfigError
from versapub.mechanisms.fit import fit
from versapub.mechanisms.measure import Records, measure_marginals
from versapub.mechanisms.mst import Synthesis, as_noisy, mst
from versapub.plugins import Param, validated

#: Progress: ``(description, done, total)``.
Progress = Callable[[str, int, int], None]


def _silent(description: str, done: int, total: int) -> None:
    del description, done, total


def parse_marginals(text: str) -> tuple[tuple[str, ...], ...]:
    """``"age+sex;disease"`` -> ``(("age", "sex"), ("disease",))``."""
    out = tuple(tuple(a.strip() for a in m.split("+") if a.strip()) for m in text.split(";") if m.strip())
    if not out:
        raise ConfigError(f"marginals={text!r} names no marginal; write them as age+sex;disease.")
    return out


@dataclass(frozen=True)
class GaussianMarginals:
    """Marginals measured with Gaussian noise under zCDP and a model fitted to them (module
    docstring). ``epsilon``, ``delta``: the budget; ``select``: which marginals;
    ``marginals``: those measured with ``select="given"``; ``iterations``: the estimator's
    most mirror-descent steps."""

    epsilon: float
    delta: float = 1e-9
    select: str = "auto"
    marginals: str | None = None
    iterations: int = 1000
    rounds: int | None = None
    max_size: float = 80.0

    name: ClassVar[str] = "dp"
    parameter_constraints: ClassVar[dict[str, Param]] = {
        "epsilon": Param("number", 0.0, None, low_open=True, required=True, why="the privacy budget"),
        "delta": Param("number", 0.0, 1.0, low_open=True, high_open=True),
        "select": Param("choice", choices=("auto", "rules", "given", "mst", "aim")),
        "marginals": Param("text", optional=True),
        "iterations": Param("whole", 1, None),
        "rounds": Param("whole", 1, None, optional=True, why="AIM's most rounds (default 16 per column)"),
        "max_size": Param("number", 0.0, None, low_open=True, why="AIM's largest model, in megabytes"),
    }
    example: ClassVar[dict[str, Any]] = {"epsilon": 1}

    def __post_init__(self) -> None:
        validated(self.name, self.parameter_constraints, self.params(), ConfigError)
        if self.select == "given" and self.marginals is None:
            raise ConfigError("The dp mechanism's select=given needs marginals=... (e.g. age+sex;disease).")
        if self.marginals is not None and self.select not in ("given", "aim"):
            raise ConfigError("The dp mechanism takes marginals=... with select=given or select=aim (its workload).")

    def params(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "select": self.select,
            "marginals": self.marginals,
            "iterations": self.iterations,
            "rounds": self.rounds,
            "max_size": self.max_size,
        }

    def workload(
        self, columns: Sequence[str], rules: Sequence[tuple[Sequence[str], str]]
    ) -> tuple[tuple[str, ...], ...]:
        """The marginals measured for ``select`` in rules or given (``()``: MST selects)."""
        select = self.select if self.select != "auto" else ("rules" if rules else "mst")
        if select == "mst":
            return ()
        if select == "rules":
            if not rules:
                raise ConfigError("select=rules needs the job's rules (Q -> S); give --rule, or use select=mst.")
            wanted = [tuple(dict.fromkeys([*q, s])) for q, s in rules]
        else:
            wanted = list(parse_marginals(str(self.marginals)))
        held = {a for m in wanted for a in m}
        unknown = sorted(held - set(columns))
        if unknown:
            raise ConfigError(
                f"The marginals name {', '.join(map(repr, unknown))}, which the input does not hold; its columns: "
                f"{', '.join(columns)}."
            )
        wanted += [(a,) for a in columns if a not in held]
        return tuple(dict.fromkeys(tuple(a for a in columns if a in m) for m in wanted))

    def aim_workload(
        self, columns: Sequence[str], rules: Sequence[tuple[Sequence[str], str]]
    ) -> tuple[tuple[str, ...], ...]:
        """AIM's workload: the rules' marginals, else the marginals given, else every pair; a
        column none of them names is added alone (every column is published)."""
        if rules:
            wanted = [tuple(dict.fromkeys([*q, s])) for q, s in rules]
        elif self.marginals is not None:
            wanted = list(parse_marginals(self.marginals))
        else:
            import itertools

            wanted = list(itertools.combinations(columns, 2))
        unknown = sorted({a for m in wanted for a in m} - set(columns))
        if unknown:
            raise ConfigError(f"The marginals name {', '.join(map(repr, unknown))}, which the input does not hold.")
        held = {a for m in wanted for a in m}
        return tuple(dict.fromkeys([*(tuple(m) for m in wanted), *((a,) for a in columns if a not in held)]))

    def marginals_read(
        self,
        columns: Sequence[str],
        domains: Mapping[str, Sequence[str]],
        rules: Sequence[tuple[Sequence[str], str]] = (),
    ) -> tuple[tuple[str, ...], ...]:
        """Every marginal whose exact counts :meth:`run` reads, over the declared domains (a
        backend whose records stay elsewhere counts them in one pass, :mod:`precounted`):
        the workload for ``rules``/``given``; every column and pair for MST (its selection
        scores each pair); AIM's candidates (the workload's downward closure) and every column.
        The domains are checked first, as :meth:`run` checks them (their cells bounded)."""
        check_domains(columns, domains, self.workload(columns, rules) if self.select != "aim" else None)
        singles = [(a,) for a in columns]
        if self.select == "aim":
            from versapub.mechanisms.aim import candidates

            return tuple(dict.fromkeys([*singles, *candidates(self.aim_workload(columns, rules))]))
        wanted = self.workload(columns, rules)
        if wanted:
            return wanted
        return tuple(dict.fromkeys([*singles, *itertools.combinations(columns, 2)]))

    def run(
        self,
        table: Records,
        domains: Mapping[str, Sequence[str]],
        rules: Sequence[tuple[Sequence[str], str]] = (),
        progress: Progress = _silent,
    ) -> Synthesis:
        """Measure and fit on every column of ``table`` over the declared ``domains``."""
        columns = list(table.names)
        check_domains(columns, domains, self.workload(columns, rules) if self.select != "aim" else None)
        if self.select == "aim":
            from versapub.mechanisms.aim import aim

            return aim(
                table,
                self.epsilon,
                self.delta,
                domains,
                self.aim_workload(columns, rules),
                self.rounds,
                self.max_size,
                self.iterations,
                progress,
            )
        wanted = self.workload(columns, rules)
        if not wanted:
            progress("MST: measuring, selecting and fitting", 0, 0)
            return mst(table, self.epsilon, self.delta, domains, columns, self.iterations)
        progress(f"measuring {len(wanted)} marginal(s) with Gaussian noise", 0, 0)
        measured, ledger = measure_marginals(table, wanted, self.epsilon, self.delta, domains)
        progress("fitting the model to the noisy marginals", 0, 0)
        cards = {a: len(domains[a]) for a in columns}
        model = fit([as_noisy(m) for m in measured], cards, self.iterations)
        return Synthesis(measured, ledger, model, ())


#: The most cells the marginals a job measures may hold together (their exact counts, noise
#: and fit are dense arrays over the declared domains: 8 bytes a cell, several copies).
MAX_CELLS = 20_000_000


def check_domains(
    columns: Sequence[str], domains: Mapping[str, Sequence[str]], wanted: Sequence[tuple[str, ...]] | None
) -> None:
    """Declared domains the job can use (issue 71): one for a column the input does not hold
    is refused (a typo would otherwise be ignored), and so are domains whose marginals — the
    ones asked for, else every pair MST and AIM count to choose from — would hold more than
    :data:`MAX_CELLS` cells, naming the largest."""
    extra = sorted(set(domains) - set(columns))
    if extra:
        raise ConfigError(
            f"A domain is declared for {', '.join(map(repr, extra))}, which the input does not hold; its columns: "
            f"{', '.join(map(repr, columns))}. Correct the name or leave the domain out."
        )
    sizes = {a: len(domains[a]) for a in columns if a in domains}

    marginals = (
        list(wanted) if wanted else [tuple(p) for p in itertools.combinations(sizes, 2)] or [(a,) for a in sizes]
    )
    cells = {m: math.prod(sizes.get(a, 1) for a in m) for m in marginals}
    if cells and sum(cells.values()) > MAX_CELLS:
        big = max(cells, key=lambda m: cells[m])
        widest = max(sizes, key=lambda a: sizes[a])
        raise ConfigError(
            f"The declared domains make the marginals measured {sum(cells.values()):,} cells in all (at most "
            f"{MAX_CELLS:,}): {' x '.join(big)} alone has {cells[big]:,}, and {widest!r} is declared with "
            f"{sizes[widest]:,} values. Declare coarser domains (a range that fits the column, or a hierarchy's "
            "level when it is read) or measure fewer marginals together."
        )
