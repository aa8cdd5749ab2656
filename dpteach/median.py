"""The halving update over an explicit set of small candidate databases (Stemmer, Lecture 4;
Roth and Roughgarden 2010; Roth, Lecture 7).

Claim 1 of the median-mechanism lecture: for any database ``D`` and ``k`` queries, some database
of only ``m = O(log k / alpha^2)`` records answers every query within ``alpha``. So the set ``C``
of *all* histograms of ``m`` records over ``X`` contains a good candidate ``S*``. The halving
database update algorithm keeps the surviving candidates; it answers a query with the *median*
of their answers, and when told that the median is wrong (the true value ``v`` is far from it)
it discards every candidate on the median's side. At least half go each time, and ``S*``, being
closer to ``v`` than the median is, survives. Hence at most ``B = log2 |C|`` updates.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from . import _validate as check
from .queries import Workload

#: Largest candidate set that :func:`small_databases` enumerates.
MAX_CANDIDATES = 2_000_000


def small_databases(domain_size: int, m: int) -> np.ndarray:
    """Every normalised histogram of ``m`` records over a universe of ``domain_size`` cells.

    Returns an array of shape ``(C(|X| + m - 1, m), |X|)``; each row sums to 1.
    """
    size = check.integer(domain_size, "domain_size", minimum=1)
    m = check.integer(m, "m", minimum=1)
    count = math.comb(size + m - 1, m)
    if count > MAX_CANDIDATES:
        raise ValueError(
            f"there are {count:,} databases of m={m} records over {size} cells, more than the "
            f"limit {MAX_CANDIDATES:,}; choose a smaller m or universe"
        )
    check.dense_size(count * max(size, m), f"the {count:,} candidate databases over {size} cells")
    cells = np.array(list(itertools.combinations_with_replacement(range(size), m)), dtype=np.int64)
    hist = np.zeros((count, size))
    np.add.at(hist, (np.repeat(np.arange(count), m), cells.ravel()), 1.0)
    return hist / m


class HalvingDUA:
    """The halving database update algorithm over candidate databases (rows of ``candidates``).

    The state is the boolean mask of surviving candidates; the synthetic answer to ``q`` is the
    median of the survivors' answers. Update bound: ``B = log2 |C|`` whatever ``alpha``.
    """

    name = "halving (median)"

    def __init__(self, candidates: np.ndarray):
        c = check.array(candidates, "candidates", ndim=2)
        if c.shape[0] < 1:
            raise ValueError("candidates must hold at least one database")
        self.candidates = c
        self.domain_size = c.shape[1]
        self._matrix, self._matrix_of = None, None

    def bound(self, alpha: float) -> float:
        """``B = log2 |C|`` (at least half the candidates go at each update)."""
        check.positive(alpha, "alpha")
        return max(math.log2(self.candidates.shape[0]), 1.0)

    def initial(self) -> np.ndarray:
        return np.ones(self.candidates.shape[0], dtype=bool)

    def answers(self, state: np.ndarray, workload: Workload) -> np.ndarray:
        """The median of the survivors' answers to every query of ``workload``."""
        if self._matrix_of is not workload:
            self._matrix, self._matrix_of = workload.matrix(), workload
        return np.median(self.candidates[state] @ self._matrix.T, axis=0)

    def update(self, state: np.ndarray, q: np.ndarray, v: float) -> np.ndarray:
        """Keep only the survivors strictly on ``v``'s side of the median answer to ``q``.

        If none is (every survivor answers like the median), the good candidate is not among
        them and nothing can be learned: the state is returned unchanged.
        """
        values = self.candidates @ q
        median = np.median(values[state])
        kept = state & (values > median if v > median else values < median)
        return kept if kept.any() else state

    def synthetic(self, state: np.ndarray) -> np.ndarray:
        """The average of the surviving candidates (a histogram; the answers are medians)."""
        return self.candidates[state].mean(axis=0)
