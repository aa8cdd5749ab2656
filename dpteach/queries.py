"""Linear (counting) queries and workloads.

A linear query is a vector ``q`` over the universe X with entries in [0, 1]; its answer on a
normalised histogram ``p`` is ``q(p) = <q, p>``, the fraction of records it counts. Under
replace-one neighbours its sensitivity is ``1/n``. A workload ``Q = {q_1, ..., q_k}`` is answered
all at once by :meth:`Workload.answer`, and one query is materialised as a dense vector only when
an algorithm needs it (:meth:`Workload.query`, e.g. for a multiplicative-weights update).

Marginal workloads never build a ``k x |X|`` matrix: the ``l``-way marginal on attributes
``S`` is computed by reshaping ``p`` to the domain's shape and summing the other axes.
"""

from __future__ import annotations

import itertools
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from . import _validate as check
from .domain import Domain


class Workload(ABC):
    """A finite set of ``k`` linear queries over a universe of size ``domain_size``.

    ``domain`` is the :class:`~dpteach.domain.Domain` the queries are over, when known (always
    for marginals; for a :class:`MatrixWorkload` if given): algorithms then refuse data from a
    different universe even when its size is the same.
    """

    domain_size: int
    domain: Domain | None = None

    @property
    @abstractmethod
    def k(self) -> int:
        """The number of queries."""

    @abstractmethod
    def _answer(self, p: np.ndarray) -> np.ndarray:
        """Answers on a trusted, already validated histogram."""

    @abstractmethod
    def _query(self, i: int) -> np.ndarray:
        """Dense vector of query ``i`` (``i`` already validated)."""

    def label(self, i: int) -> str:
        """A short human-readable name of query ``i``."""
        return f"q{self._index(i)}"

    def __len__(self) -> int:
        return self.k

    def answer(self, p: object) -> np.ndarray:
        """All answers ``(q_1(p), ..., q_k(p))`` on a normalised histogram ``p`` (or on a
        :class:`~dpteach.data.Dataset` over the same universe: its histogram). Non-private."""
        from .data import Dataset

        if isinstance(p, Dataset):
            check.same_universe(p, self, names="p (a Dataset) and the workload")
            return self._answer(p.histogram())
        if p is None:
            raise TypeError("p must be a normalised histogram (a 1-D array), got None")
        return self._answer(check.histogram(p, self.domain_size, "p"))

    def query(self, i: int) -> np.ndarray:
        """Query ``i`` as a dense vector of length ``|X|`` with entries in [0, 1]."""
        check.dense_size(self.domain_size)
        return self._query(self._index(i))

    def sensitivity(self, n: int) -> float:
        """Replace-one sensitivity ``1/n`` of each query on a database of ``n`` records."""
        return 1.0 / check.integer(n, "n", minimum=1)

    def matrix(self) -> np.ndarray:
        """The dense ``k x |X|`` query matrix (small teaching examples only)."""
        check.dense_size(self.k * self.domain_size, "the query matrix")
        return np.stack([self._query(i) for i in range(self.k)])

    def with_negations(self) -> NegatedWorkload:
        """The workload closed under negation: ``q_1..q_k`` followed by ``1-q_1..1-q_k``."""
        return NegatedWorkload(self)

    def subset(self, indices: Sequence[int]) -> SubsetWorkload:
        """The sub-workload of the queries at ``indices`` (in that order)."""
        return SubsetWorkload(self, indices)

    def _index(self, i: int) -> int:
        i = check.integer(i, "i", minimum=0)
        if i >= self.k:
            raise ValueError(f"query index i must be in 0..{self.k - 1}, got {i}")
        return i


class MatrixWorkload(Workload):
    """Queries given as the rows of a dense ``k x |X|`` matrix with entries in [0, 1].

    Parameters
    ----------
    matrix
        One row per query.
    labels
        Optional names of the queries.
    """

    def __init__(
        self,
        matrix: object,
        labels: Sequence[str] | None = None,
        *,
        domain: Domain | None = None,
    ):
        if isinstance(matrix, str | bytes):
            raise TypeError(f"matrix must be a 2-D numeric array, got the string {matrix!r}")
        q = check.array(matrix, "matrix", ndim=2)
        if q.shape[0] == 0 or q.shape[1] == 0:
            raise ValueError(f"matrix must have at least one query and one cell, got {q.shape}")
        if np.any((q < 0) | (q > 1)):
            raise ValueError("matrix entries (query values) must lie in [0, 1]")
        if labels is not None:
            if isinstance(labels, str | bytes):
                raise TypeError(f"labels must be a sequence of strings, not the string {labels!r}")
            if len(labels) != q.shape[0]:
                raise ValueError(f"labels must have {q.shape[0]} entries, got {len(labels)}")
        if domain is not None and check.domain(domain).size != q.shape[1]:
            raise ValueError(
                f"domain has {domain.size} cells but the matrix has {q.shape[1]} columns"
            )
        self._matrix = q.copy()  # the caller's array is never shared or modified
        self._labels = None if labels is None else [str(label) for label in labels]
        self.domain_size = q.shape[1]
        self.domain = domain

    @property
    def k(self) -> int:
        return self._matrix.shape[0]

    def _answer(self, p: np.ndarray) -> np.ndarray:
        return self._matrix @ p

    def _query(self, i: int) -> np.ndarray:
        return self._matrix[i].copy()

    def matrix(self) -> np.ndarray:
        return self._matrix.copy()

    def label(self, i: int) -> str:
        i = self._index(i)
        return self._labels[i] if self._labels else f"q{i}"


class MarginalWorkload(Workload):
    """All cells of the marginals on the given attribute sets (conjunction queries ``q_{S,a}``).

    For an attribute set ``S`` and a value assignment ``a`` to ``S``, ``q_{S,a}(x) = 1`` if
    ``x_S = a`` and 0 otherwise; the marginal on ``S`` is the table of all ``q_{S,a}(p)``.
    Queries are ordered marginal by marginal, cells in row-major order.

    Parameters
    ----------
    domain
        The universe.
    marginals
        Attribute sets ``S``, each a sequence of attribute names.
    """

    def __init__(self, domain: Domain, marginals: Sequence[Sequence[str]]):
        check.domain(domain)
        check.not_a_string(marginals, "marginals")
        marginals = list(marginals)
        if len(marginals) == 0:
            raise ValueError("marginals must contain at least one attribute set")
        check.dense_size(len(marginals), "the list of attribute sets", itemsize=64)
        for m in marginals:
            check.not_a_string(m, "each attribute set in marginals")
        self.domain = domain
        self.domain_size = domain.size
        self.marginals: tuple[tuple[str, ...], ...] = tuple(tuple(m) for m in marginals)
        self._axes = [domain.axes(m) for m in self.marginals]
        sizes = [math.prod(domain.shape[a] for a in ax) for ax in self._axes]  # exact ints
        check.dense_size(sum(sizes), "the marginals' answers (k)")
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    @classmethod
    def all_kway(
        cls, domain: Domain, way: int, attributes: Sequence[str] | None = None
    ) -> MarginalWorkload:
        """All ``way``-way marginals over ``attributes`` (default: every attribute)."""
        check.domain(domain)
        if attributes is not None:
            check.not_a_string(attributes, "attributes")
        names = list(domain.names if attributes is None else attributes)
        domain.axes(names)
        way = check.integer(way, "way", minimum=1)
        if way > len(names):
            raise ValueError(f"way must be at most the number of attributes {len(names)}")
        # count the attribute sets before building them
        check.dense_size(math.comb(len(names), way), f"the {way}-way attribute sets", itemsize=64)
        return cls(domain, list(itertools.combinations(names, way)))

    @property
    def k(self) -> int:
        return int(self._offsets[-1])

    def marginal_sizes(self) -> np.ndarray:
        """Number of cells (queries) in each marginal."""
        return np.diff(self._offsets)

    def marginal_slice(self, m: int) -> slice:
        """The positions of marginal ``m``'s queries in the answer vector."""
        return slice(int(self._offsets[m]), int(self._offsets[m + 1]))

    def marginal_tables(self, p: object) -> list[np.ndarray]:
        """The marginal tables of ``p`` (one array per attribute set, axes in the set's order)."""
        return self._tables(check.histogram(p, self.domain_size, "p"))

    def _tables(self, p: np.ndarray) -> list[np.ndarray]:
        return [self.table(p, m) for m in range(len(self.marginals))]

    def marginal_shape(self, m: int) -> tuple[int, ...]:
        """The shape of marginal ``m``'s table."""
        return tuple(self.domain.shape[a] for a in self._axes[m])

    def table(self, p: np.ndarray, m: int) -> np.ndarray:
        """Marginal ``m``'s table of a trusted histogram ``p`` (axes in the set's order)."""
        axes = self._axes[m]
        others = tuple(a for a in range(self.domain.d) if a not in axes)
        kept = sorted(axes)
        table = p.reshape(self.domain.shape).sum(axis=others)
        return np.transpose(table, [kept.index(a) for a in axes])

    def _answer(self, p: np.ndarray) -> np.ndarray:
        return np.concatenate([t.ravel() for t in self._tables(p)])

    def _locate(self, i: int) -> tuple[int, tuple[int, ...]]:
        m = int(np.searchsorted(self._offsets, i, side="right") - 1)
        shape = [self.domain.shape[a] for a in self._axes[m]]
        return m, tuple(int(v) for v in np.unravel_index(i - self._offsets[m], shape))

    def _query(self, i: int) -> np.ndarray:
        m, cell = self._locate(i)
        return self.marginal_query(m, cell)

    def broadcast_table(self, m: int, table: np.ndarray) -> np.ndarray:
        """Marginal ``m``'s ``table`` laid out over the universe: an array broadcastable to the
        domain's shape whose value at ``x`` is ``table[x_S]``."""
        axes = self._axes[m]
        order = np.argsort(axes)
        shape = [1] * self.domain.d
        for a in axes:
            shape[a] = self.domain.shape[a]
        return np.transpose(np.asarray(table), order).reshape(shape)

    def marginal_query(self, m: int, cell: Sequence[int]) -> np.ndarray:
        """Dense indicator vector of ``x_S = a`` for marginal ``m`` and cell ``a``."""
        indicator = np.ones(self.domain.shape, dtype=float)
        for axis, value in zip(self._axes[m], cell):
            shape = [1] * self.domain.d
            shape[axis] = self.domain.shape[axis]
            indicator = indicator * (np.arange(self.domain.shape[axis]) == value).reshape(shape)
        return indicator.ravel()

    def label(self, i: int) -> str:
        m, cell = self._locate(self._index(i))
        return " & ".join(f"{n}={v}" for n, v in zip(self.marginals[m], cell))


class NegatedWorkload(Workload):
    """A workload closed under negation: queries ``q_i`` then ``1 - q_i``.

    Multiplicative weights only corrects answers that are too high; with the negations in the
    workload, a too-low answer of ``q`` is a too-high answer of ``1 - q``.
    """

    def __init__(self, base: Workload):
        self.base = check.workload(base, "base")
        self.domain_size = base.domain_size
        self.domain = base.domain

    @property
    def k(self) -> int:
        return 2 * self.base.k

    def _answer(self, p: np.ndarray) -> np.ndarray:
        a = self.base._answer(p)
        return np.concatenate([a, 1.0 - a])

    def _query(self, i: int) -> np.ndarray:
        q = self.base._query(i % self.base.k)
        return q if i < self.base.k else 1.0 - q

    def label(self, i: int) -> str:
        i = self._index(i)
        name = self.base.label(i % self.base.k)
        return name if i < self.base.k else f"not({name})"


class SubsetWorkload(Workload):
    """Some of another workload's queries, e.g. the first ``k`` or a random sample of them."""

    def __init__(self, base: Workload, indices: Sequence[int]):
        check.workload(base, "base")
        if isinstance(indices, str | bytes):
            raise TypeError("indices must be a non-empty 1-D sequence of integers")
        idx = np.asarray(indices)
        if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
            raise TypeError("indices must be a non-empty 1-D sequence of integers")
        if np.any((idx < 0) | (idx >= base.k)):
            raise ValueError(f"indices must lie in 0..{base.k - 1}")
        self.base = base
        self.indices = idx.astype(np.int64)
        self.domain_size = base.domain_size
        self.domain = base.domain

    @property
    def k(self) -> int:
        return int(self.indices.size)

    def _answer(self, p: np.ndarray) -> np.ndarray:
        return self.base._answer(p)[self.indices]

    def _query(self, i: int) -> np.ndarray:
        return self.base._query(int(self.indices[i]))

    def label(self, i: int) -> str:
        return self.base.label(int(self.indices[self._index(i)]))


def random_queries(
    domain_size: int | Domain, k: int, *, rng: np.random.Generator | int, density: float = 0.5
) -> MatrixWorkload:
    """``k`` random counting queries: each cell of X is counted independently w.p. ``density``.

    ``domain_size`` may be a :class:`~dpteach.domain.Domain` (the workload then knows its
    universe). A passed Generator is consumed; the same seed gives the same queries.
    """
    domain = domain_size if isinstance(domain_size, Domain) else None
    if domain is not None:
        domain_size = domain.size
    domain_size = check.integer(domain_size, "domain_size", minimum=1)
    k = check.integer(k, "k", minimum=1)
    density = check.real(density, "density")
    if not 0 < density < 1:
        raise ValueError(f"density must be in (0, 1), got {density}")
    check.dense_size(k * domain_size, "the query matrix")
    gen = check.rng(rng)
    return MatrixWorkload((gen.random((k, domain_size)) < density).astype(float), domain=domain)
