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

    def _reweight(self, p: np.ndarray, i: int, eta: float) -> np.ndarray:
        """One multiplicative-weights step ``p'(x) ∝ p(x) exp(-eta q_i(x))`` on a trusted
        histogram ``p`` (``i`` already validated); returns the normalised ``p'``.

        It may overwrite ``p`` (marginal workloads do, to avoid a copy): callers pass a histogram
        they own and use the returned array. This default builds the dense query
        (:func:`dpteach.mw.mw_update`); structured workloads override it without one.
        """
        from .mw import mw_update  # mw imports this module

        return mw_update(p, self._query(i), eta)

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

    def _marginal_index(self, m: object) -> int:
        m = check.integer(m, "m", minimum=0)
        if m >= len(self.marginals):
            raise ValueError(f"marginal index m must be in 0..{len(self.marginals) - 1}, got {m}")
        return m

    def marginal_shape(self, m: int) -> tuple[int, ...]:
        """The shape of marginal ``m``'s table."""
        return tuple(self.domain.shape[a] for a in self._axes[m])

    def table(self, p: np.ndarray, m: int) -> np.ndarray:
        """Marginal ``m``'s table of a trusted histogram ``p`` (axes in the set's order).

        A staged reduction (:func:`_marginal`) that reads ``p`` about once whatever the
        attribute order. The table is a new array, never a view of ``p``.
        """
        return _marginal(p, self.domain.shape, self._axes[m])

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

    def reweight(
        self, p: np.ndarray, m: int, log_factor: object, *, table: np.ndarray | None = None
    ) -> np.ndarray:
        """Multiply ``p`` in place by a factor of marginal ``m``'s cells and renormalise.

        ``p(x) <- p(x) exp(log_factor[x_S]) / Z`` with ``Z = sum_a table[a] exp(log_factor[a])``,
        ``table`` being ``p``'s marginal ``m`` (computed if not given: pass it when you have it,
        it saves a pass). This is the multiplicative-weights step for a marginal's query, a
        cell (``log_factor = -eta`` there, 0 elsewhere) or a whole table, without a dense query
        vector: about two passes over ``p``, one with ``table`` given.

        ``p`` is trusted (a normalised histogram the caller owns, as a contiguous float64 array
        of length ``|X|``; only its type and shape are checked) and is returned. The update is
        computed in log space from the table: every cell's new mass ``exp(log table[a] +
        log_factor[a] - log Z)`` is normalised by log-sum-exp, so no ``|log_factor|`` can
        overflow to inf or produce NaN, and the result sums to 1 up to rounding. Cells of zero
        mass stay 0; a record's weight underflows to 0 only when its new mass is below the
        smallest positive double (about ``5e-324``), i.e. genuinely negligible.
        """
        m = self._marginal_index(m)
        shape = self.marginal_shape(m)
        if not (
            isinstance(p, np.ndarray)
            and p.dtype == np.float64
            and p.ndim == 1
            and p.size == self.domain_size
            and p.flags.c_contiguous
            and p.flags.writeable
        ):
            raise TypeError(
                f"p must be a writeable contiguous float64 histogram of length {self.domain_size}"
            )
        log_factor = check.array(log_factor, "log_factor")
        if log_factor.shape != shape:
            raise ValueError(
                f"log_factor must have marginal {m}'s shape {shape}, got {log_factor.shape}"
            )
        if table is None:
            table = self.table(p, m)
        elif np.shape(table) != shape:
            raise ValueError(f"table must have marginal {m}'s shape {shape}, got {np.shape(table)}")
        mass = table > 0
        if not mass.any():
            raise ValueError("p must be a normalised histogram, but its marginal has no mass")
        with np.errstate(over="ignore"):  # a difference of huge factors is -inf: weight 0
            shifted = log_factor - log_factor[mass].max()  # <= 0 on cells of positive mass
        log_new = np.full(shape, -np.inf)  # log of each cell's new mass, up to log Z
        log_new[mass] = np.log(table[mass]) + shifted[mass]
        top = log_new.max()  # finite: the largest factor's cell has positive mass
        log_z = top + np.log(np.exp(log_new - top).sum())  # log Z (log-sum-exp)
        log_ratio = np.where(mass, shifted - log_z, 0.0)  # new mass / old mass, in logs
        # A ratio above e^709 overflows; it only arises for cells of sub-normal mass (< 1e-308),
        # whose new mass is at most 1: apply it in two halves then, each finite.
        halves = 1 if log_ratio.max() < 700 else 2
        for _ in range(halves):
            _multiply(p, self.domain.shape, self._axes[m], np.exp(log_ratio / halves))
        return p

    def _reweight(self, p: np.ndarray, i: int, eta: float) -> np.ndarray:
        m, cell = self._locate(i)
        log_factor = np.zeros(self.marginal_shape(m))
        log_factor[cell] = -eta
        return self.reweight(p, m, log_factor)

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

    def _reweight(self, p: np.ndarray, i: int, eta: float) -> np.ndarray:
        # exp(-eta (1 - q)) ∝ exp(eta q): the negation's step is the base query's with -eta
        k = self.base.k
        return self.base._reweight(p, i, eta) if i < k else self.base._reweight(p, i - k, -eta)

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

    def _reweight(self, p: np.ndarray, i: int, eta: float) -> np.ndarray:
        return self.base._reweight(p, int(self.indices[i]), eta)

    def label(self, i: int) -> str:
        return self.base.label(int(self.indices[self._index(i)]))


#: Length of the contiguous block numpy's reductions and broadcasts run over in their inner
#: loop: long enough (8 KiB of float64) that they run at memory speed.
_BLOCK = 1024


def _runs(dims: list[tuple[int, bool]]) -> list[tuple[int, bool]]:
    """Merge adjacent ``(size, kept)`` axes of the same kind into one axis (a reshape of a
    C-ordered array: no copy)."""
    out: list[tuple[int, bool]] = []
    for n, kept in dims:
        if out and out[-1][1] == kept:
            out[-1] = (out[-1][0] * n, kept)
        else:
            out.append((n, kept))
    return out


def _head_tail(dims: list[tuple[int, bool]]) -> int:
    """Where the tail starts: the shortest suffix of ``dims`` with at least ``_BLOCK`` cells."""
    j, tail = len(dims), 1
    while j > 0 and tail < _BLOCK:
        j -= 1
        tail *= dims[j][0]
    return j


def _marginal(p: np.ndarray, shape: Sequence[int], axes: Sequence[int]) -> np.ndarray:
    """The marginal of ``p`` (C-ordered over ``shape``) on ``axes``, axes in that order.

    Summing the other axes with one ``reshape(shape).sum(axis=others)`` is slow (2-18 passes over
    ``p``) when the innermost axes are short: numpy's inner loop is then a few elements long. Here
    each stage keeps a *tail* of the trailing axes, at least ``_BLOCK`` cells, whole as the inner
    loop, merges adjacent axes of the same kind (kept or summed) in the head, and sums every summed
    head axis in one call; then it repeats on the (much smaller) result, whose tail axes are now
    trailing. The first stage reads ``p`` once at memory speed and usually shrinks it 100-fold.
    """
    kept = set(axes)
    dims = [(n, a in kept) for a, n in enumerate(shape) if n > 1 or a in kept]
    x = p
    while not all(k for _, k in dims):
        j = _head_tail(dims)
        head = _runs(dims[:j])
        if all(k for _, k in head):  # nothing left to sum before the tail: finish in one call
            head, j = _runs(dims), len(dims)
        tail = math.prod(n for n, _ in dims[j:])
        summed = tuple(i for i, (_, k) in enumerate(head) if not k)
        x = x.reshape([n for n, _ in head] + [tail]).sum(axis=summed)
        dims = [d for d in dims[:j] if d[1]] + dims[j:]
    ordered = sorted(axes)
    table = x.reshape([shape[a] for a in ordered])
    table = np.transpose(table, [ordered.index(a) for a in axes])
    return table.copy() if np.shares_memory(table, p) else table


def _multiply(p: np.ndarray, shape: Sequence[int], axes: Sequence[int], factor: np.ndarray) -> None:
    """``p(x) *= factor[x_axes]`` in place, ``p`` C-ordered over ``shape``.

    A plain broadcast multiply runs its inner loop over the last axis, slowly when that axis is
    short; here ``p`` is viewed as (merged head axes, tail of at least ``_BLOCK`` cells) and the
    factor is laid out over the tail once (a small array), so the inner loop is long.
    """
    kept = set(axes)
    dims = [(n, a in kept) for a, n in enumerate(shape)]
    j = _head_tail(dims)
    head = _runs(dims[:j])
    tail = math.prod(shape[j:])
    layout = [n if a in kept else 1 for a, n in enumerate(shape)]
    f = np.transpose(factor, np.argsort(axes)).reshape(layout)
    f = np.broadcast_to(f, layout[:j] + list(shape[j:]))
    f = f.reshape([n if k else 1 for n, k in head] + [tail])
    view = p.reshape([n for n, _ in head] + [tail])
    view *= f


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
