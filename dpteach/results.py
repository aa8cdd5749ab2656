"""The one result shape of the iterative algorithms, and the diagnostics their traces record.

Every iterative algorithm (iterative construction, private multiplicative weights, the median
mechanism, the growing-database algorithms) returns a :class:`Result`: the synthetic histogram,
its answers to the workload, and a ``trace`` with one :class:`Round` per round. Plots, widgets,
tests and benchmarks read the trace; nothing is re-run in a notebook to draw a figure.

The diagnostics (true max error, KL potential) are computed from the private data for teaching
and testing; they are **not** part of the private output and must never be published:
:data:`Round.NON_PRIVATE` names them, and :meth:`Result.release` returns a copy without them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import ClassVar

import numpy as np

from . import _validate as check


def kl_divergence(p: object, q: object) -> float:
    """``D(p || q) = sum_x p(x) ln(p(x) / q(x))``, with ``0 ln 0 = 0``; ``inf`` if ``q`` misses
    mass of ``p``. This is the potential of the multiplicative-weights analysis."""
    p = check.histogram(p, name="p")
    q = check.histogram(q, p.size, name="q")
    support = p > 0
    if np.any(q[support] == 0):
        return float("inf")
    return float(np.sum(p[support] * np.log(p[support] / q[support])))


def max_error(true_answers: object, answers: object) -> float:
    """``max_i |a_i - a_hat_i|``: the worst error over a workload."""
    a = check.array(true_answers, "true_answers", ndim=1)
    b = check.array(answers, "answers", ndim=1)
    if a.shape != b.shape:
        raise ValueError(f"answers must have shape {a.shape}, got {b.shape}")
    if a.size == 0:
        raise ValueError("answers must not be empty (the max error of no answers is undefined)")
    return float(np.max(np.abs(a - b)))


@dataclass
class Round:
    """One round of an iterative algorithm.

    Attributes
    ----------
    round
        The round number ``t`` (1-based).
    query
        Index of the query chosen (by the distinguisher / selection step), or ``None``.
    noisy_value
        The noisy measurement released this round, or ``None``.
    updated
        Whether the synthetic database was updated this round.
    max_error
        NON-PRIVATE: true max error of the synthetic database over the workload after the round,
        computed from the private data (a teaching diagnostic; never publish it).
    potential
        NON-PRIVATE: ``D(p || p_hat_t)`` after the round where it applies, computed from the
        private data (never publish it).
    epsilon_spent
        Privacy spent so far (in the algorithm's own accounting: epsilon, or rho for zCDP).
    """

    #: The fields computed from the private data: diagnostics, not part of the private output.
    NON_PRIVATE: ClassVar[tuple[str, ...]] = ("max_error", "potential")

    round: int
    query: int | None = None
    noisy_value: float | None = None
    updated: bool = False
    max_error: float = float("nan")
    potential: float = float("nan")
    epsilon_spent: float = 0.0


@dataclass
class Result:
    """What an iterative algorithm returns.

    Attributes
    ----------
    synthetic
        The final synthetic histogram ``p_hat`` (sums to 1).
    answers
        The workload's answers computed from ``synthetic`` (post-processing, so private).
    trace
        One :class:`Round` per round. Its :data:`Round.NON_PRIVATE` fields (``max_error``,
        ``potential``) are computed from the private data: use :meth:`release` for what may be
        published.
    snapshots
        Synthetic histograms at chosen rounds (``round -> p_hat_t``), for pictures.
    info
        Algorithm-specific extras (parameters used, the privacy statement, ...).
    """

    synthetic: np.ndarray
    answers: np.ndarray
    trace: list[Round] = field(default_factory=list)
    snapshots: dict[int, np.ndarray] = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    def column(self, name: str) -> np.ndarray:
        """One field of the trace as an array, e.g. ``result.column("potential")``."""
        names = [f.name for f in fields(Round)]
        if name not in names:
            raise ValueError(f"name must be one of {names}, got {name!r}")
        return np.array([getattr(r, name) for r in self.trace], dtype=float)

    @property
    def rounds(self) -> int:
        return len(self.trace)

    def release(self) -> Result:
        """A copy without the non-private trace fields (set to NaN); synthetic data, answers,
        snapshots and ``info`` are copied as they are (the algorithms put only released or public
        quantities there)."""
        blank = {name: float("nan") for name in Round.NON_PRIVATE}
        trace = [replace(r, **blank) for r in self.trace]
        snapshots = {t: s.copy() for t, s in self.snapshots.items()}
        return Result(self.synthetic.copy(), self.answers.copy(), trace, snapshots, dict(self.info))
