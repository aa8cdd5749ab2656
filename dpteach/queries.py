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

import functools
import itertools
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from . import _validate as check
from .data import Dataset
from .domain import Domain, same_universe


def mw_update(p_hat: np.ndarray, q: np.ndarray, eta: float) -> np.ndarray:
    """``p_hat'(x) ∝ p_hat(x) exp(-eta q(x))``: one multiplicative-weights step.

    A positive ``eta`` moves mass away from where ``q`` is large (the answer was too high); a
    negative ``eta`` moves it towards. Computed in a numerically stable way (shifted exponent).
    The step every workload's :meth:`Workload._reweight` takes unless it has a structured one;
    :mod:`dpteach.mw` builds its learners on it (and exports it as ``dpteach.mw.mw_update``).
    """
    log_w = np.log(p_hat, where=p_hat > 0, out=np.full_like(p_hat, -np.inf)) - eta * q
    log_w -= log_w.max()
    w = np.exp(log_w)
    return w / w.sum()


class Workload(ABC):
    """A finite set of ``k`` linear queries over a universe of size ``domain_size``.

    ``domain`` is the :class:`~dpteach.domain.Domain` the queries are over, when known (always
    for marginals; for a :class:`MatrixWorkload` if given): algorithms then refuse data from a
    different universe even when its size is the same.
    """

    domain_size: int
    domain: Domain | None = None

    @staticmethod
    def check(value: object, name: str = "workload") -> Workload:
        """``value`` itself if it is a :class:`Workload` (not ``None``, not a matrix: wrap one in
        :class:`MatrixWorkload`), else a ``TypeError`` naming ``name``."""
        if not isinstance(value, Workload):
            raise TypeError(
                f"{name} must be a dpteach Workload, got {type(value).__name__}; wrap a query "
                "matrix in MatrixWorkload(matrix, domain=...)"
            )
        return value

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
        (:func:`mw_update`); structured workloads override it without one.
        """
        return mw_update(p, self._query(i), eta)

    def label(self, i: int) -> str:
        """A short human-readable name of query ``i``."""
        return f"q{self._index(i)}"

    def __len__(self) -> int:
        return self.k

    def answer(self, p: object) -> np.ndarray:
        """All answers ``(q_1(p), ..., q_k(p))`` on a normalised histogram ``p`` (or on a
        :class:`~dpteach.data.Dataset` over the same universe: its histogram). Non-private."""
        if isinstance(p, Dataset):
            same_universe(p, self, names="p (a Dataset) and the workload")
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
        if domain is not None and Domain.check(domain).size != q.shape[1]:
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
        Domain.check(domain)
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
        self._plan: _SharingPlan | None | object = _UNPLANNED
        self._shapes = [tuple(domain.shape[a] for a in ax) for ax in self._axes]
        self._cells: list[np.ndarray | None] = [None] * len(self.marginals)

    @classmethod
    def all_kway(
        cls, domain: Domain, way: int, attributes: Sequence[str] | None = None
    ) -> MarginalWorkload:
        """All ``way``-way marginals over ``attributes`` (default: every attribute)."""
        Domain.check(domain)
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

    def _marginal_index(self, m: object) -> int:
        """A marginal's index, ``0 .. len(marginals) - 1`` (no negative indices)."""
        m = check.integer(m, "m", minimum=0)
        if m >= len(self.marginals):
            raise ValueError(f"marginal index m must be in 0..{len(self.marginals) - 1}, got {m}")
        return m

    def marginal_slice(self, m: int) -> slice:
        """The positions of marginal ``m``'s queries in the answer vector."""
        m = self._marginal_index(m)
        return slice(int(self._offsets[m]), int(self._offsets[m + 1]))

    def marginal_tables(self, p: object) -> list[np.ndarray]:
        """The marginal tables of ``p`` (one array per attribute set, axes in the set's order)."""
        return self._tables(check.histogram(p, self.domain_size, "p"))

    def _tables(self, p: np.ndarray) -> list[np.ndarray]:
        """All marginal tables of a trusted histogram, sharing work between them.

        Computing each table from ``p`` costs a pass over ``p`` per marginal. Instead the
        attributes are cut into a few consecutive *blocks* (e.g. 20 binary attributes into 4 of
        5), each marginal is read off the table of the union of the blocks it touches (a 3-way
        marginal lies within at most 3 blocks: a table of at most 2^15 cells), and each such
        cached table is itself computed from the smallest larger cached table containing it, or
        from ``p``: a few passes over ``p`` in all, then small tables. The number of blocks is
        chosen once per workload by counting the cells read (:meth:`_sharing_plan`); with no
        gain (few marginals, or marginals nearly as large as ``p``) every table comes from ``p``.
        """
        plan = self._sharing_plan()
        if plan is None:
            return [self.table(p, m) for m in range(len(self.marginals))]
        cached: list[np.ndarray] = []
        for source, shape, axes in plan.tables:
            cached.append(_marginal(p if source < 0 else cached[source], shape, axes))
        tables = []
        for source, shape, axes in plan.marginals:
            tables.append(_marginal(p if source < 0 else cached[source], shape, axes))
        return tables

    def _sharing_plan(self) -> _SharingPlan | None:
        """How :meth:`_tables` shares work (computed once): the cheapest block cover by cells
        read, or ``None`` when reading every marginal from ``p`` is as cheap."""
        if self._plan is _UNPLANNED:
            self._plan = _SharingPlan.best(self.domain.shape, self._axes)
        return self._plan

    def _marginal_index(self, m: object) -> int:
        m = check.integer(m, "m", minimum=0)
        if m >= len(self.marginals):
            raise ValueError(f"marginal index m must be in 0..{len(self.marginals) - 1}, got {m}")
        return m

    def marginal_shape(self, m: int) -> tuple[int, ...]:
        """The shape of marginal ``m``'s table."""
        return self._shapes[m]

    def table(self, p: np.ndarray, m: int) -> np.ndarray:
        """Marginal ``m``'s table of a trusted histogram ``p`` (axes in the set's order).

        A staged reduction (:func:`_marginal`) that reads ``p`` about once whatever the
        attribute order; on a small universe (:data:`SMALL_DOMAIN`) one ``bincount`` over the
        cached cell of every ``x`` (:meth:`_cell_index`). The table is a new array, never a view
        of ``p``.
        """
        cells = self._cell_index(m)
        if cells is not None:
            shape = self._shapes[m]
            return np.bincount(cells, weights=p, minlength=math.prod(shape)).reshape(shape)
        return _marginal(p, self.domain.shape, self._axes[m])

    def _cell_index(self, m: int) -> np.ndarray | None:
        """On a universe of at most :data:`SMALL_DOMAIN` cells, the flat index in marginal
        ``m``'s table (C order, axes in the set's order) of every ``x`` (computed once);
        ``None`` on a larger one, or when the indices of all marginals would pass 2^22.

        A marginal's table is then one ``bincount`` and a factor over its cells is applied with
        one gather: on a small universe numpy's fixed cost per call, not the passes over ``p``,
        is what a staged reduction pays.
        """
        if self.domain_size > SMALL_DOMAIN or self.domain_size * len(self._axes) > 2**22:
            return None  # a large universe, or indices over 32 MB in all
        if self._cells[m] is None:
            shape = self.domain.shape
            index = np.zeros(shape, dtype=np.intp)
            stride = 1
            for a in reversed(self._axes[m]):
                index += (
                    np.arange(shape[a]).reshape([-1 if b == a else 1 for b in range(len(shape))])
                    * stride
                )
                stride *= shape[a]
            index = index.ravel()
            index.flags.writeable = False
            self._cells[m] = index
        return self._cells[m]

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
        if table is not None:
            table = check.array(table, "table")
            if table.shape != shape:
                raise ValueError(f"table must have marginal {m}'s shape {shape}, got {table.shape}")
        return self._scale(p, m, log_factor, table)

    def _scale(
        self, p: np.ndarray, m: int, log_factor: np.ndarray, table: np.ndarray | None = None
    ) -> np.ndarray:
        """:meth:`reweight` on trusted arguments (package-internal: nothing is checked)."""
        if table is None:
            table = self.table(p, m)
        cells = self._cell_index(m)
        if cells is not None and _scale_by_gather(p, cells, np.ravel(log_factor), table.ravel()):
            return p
        mass = table > 0
        full = bool(mass.all())  # the usual case: no masked indexing needed
        if not full and not mass.any():
            raise ValueError("p must be a normalised histogram, but its marginal has no mass")
        with np.errstate(over="ignore"):  # a difference of huge factors is -inf: weight 0
            # <= 0 on cells of positive mass
            shifted = log_factor - (log_factor.max() if full else log_factor[mass].max())
        if full:  # log of each cell's new mass, up to log Z
            log_new = np.log(table) + shifted
        else:
            log_new = np.full(table.shape, -np.inf)
            log_new[mass] = np.log(table[mass]) + shifted[mass]
        top = log_new.max()  # finite: the largest factor's cell has positive mass
        log_z = top + math.log(np.exp(log_new - top).sum())  # log Z (log-sum-exp)
        log_ratio = shifted - log_z if full else np.where(mass, shifted - log_z, 0.0)
        # A ratio above e^709 overflows; it only arises for cells of sub-normal mass (< 1e-308),
        # whose new mass is at most 1: apply it in two halves then, each finite.
        halves = 1 if log_ratio.max() < 700 else 2
        for _ in range(halves):
            factor = np.exp(log_ratio / halves)
            if cells is not None:  # a small universe: one gather
                p *= factor.ravel()[cells]
            else:
                _multiply(p, self.domain.shape, self._axes[m], factor)
        return p

    def _reweight(self, p: np.ndarray, i: int, eta: float) -> np.ndarray:
        m, cell = self._locate(i)
        log_factor = np.zeros(self.marginal_shape(m))
        log_factor[cell] = -eta
        return self._scale(p, m, log_factor)

    def marginal_query(self, m: int, cell: Sequence[int]) -> np.ndarray:
        """Dense indicator vector of ``x_S = a`` for marginal ``m`` and cell ``a`` (one value per
        attribute of the marginal's set ``S``, each within its attribute's range)."""
        m = self._marginal_index(m)
        names = self.marginals[m]
        sizes = [self.domain.shape[a] for a in self._axes[m]]
        try:
            if isinstance(cell, str | bytes):
                raise TypeError(f"got the string {cell!r}")
            cell = [check.integer(v, "each value of cell") for v in cell]
        except TypeError as err:
            raise TypeError(f"cell must be a sequence of integers, one per attribute of "
                            f"{names}: {err}") from None  # fmt: skip
        if len(cell) != len(names) or any(not 0 <= v < n for v, n in zip(cell, sizes)):
            ranges = ", ".join(f"{name} in 0..{n - 1}" for name, n in zip(names, sizes))
            raise ValueError(f"cell must give one value per attribute ({ranges}), got {cell}")
        check.dense_size(self.domain.size)
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
        self.base = Workload.check(base, "base")
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
        Workload.check(base, "base")
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


#: Largest universe on which marginal workloads index every ``x``'s cell directly (an ``intp``
#: array of ``|X|`` per marginal, cached): below it a table is one ``bincount`` and a factor one
#: gather, much cheaper than a staged reduction's several small numpy calls. (MWEM on all
#: 3-way marginals of binary attributes: gathers win up to 2^13 cells, lose from 2^14 on.)
SMALL_DOMAIN = 8192

#: Length of the contiguous block numpy's inner loop runs over in a reduction (8 KiB of float64):
#: long enough that it runs at memory speed. A broadcast multiply wants a longer one (64 KiB:
#: fewer, longer loops; the factor laid out over it stays small, in cache).
_BLOCK = 1024
_BROADCAST_BLOCK = 8192


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


def _head_tail(dims: list[tuple[int, bool]], block: int = _BLOCK) -> int:
    """Where the tail starts: the shortest suffix of ``dims`` with at least ``block`` cells."""
    j, tail = len(dims), 1
    while j > 0 and tail < block:
        j -= 1
        tail *= dims[j][0]
    return j


def _marginal(p: np.ndarray, shape: Sequence[int], axes: Sequence[int]) -> np.ndarray:
    """The marginal of ``p`` (C-ordered over ``shape``) on ``axes``, axes in that order: a new
    array, never a view of ``p``. See :func:`_reduction` for how."""
    steps, kept_shape, order = _reduction(tuple(shape), tuple(axes))
    x = p
    for view, summed in steps:
        x = x.reshape(view)
        x = x.sum(axis=summed) if summed else np.matmul(np.ones(view[1]), x)
    table = np.transpose(x.reshape(kept_shape), order)
    return table if steps else table.copy()


@functools.lru_cache(maxsize=4096)
def _reduction(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple:
    """The stages of :func:`_marginal`: ``(view shape, axes summed)`` pairs (no axes: a view
    ``(outer, summed, inner)`` summed by a product with ones), then the kept shape (domain order)
    and the transposition to ``axes``' order. Planned once per shape and axes.

    Summing the other axes with one ``reshape(shape).sum(axis=others)`` is slow (2-18 passes over
    ``p``) when the innermost axes are short: numpy's inner loop is then a few elements long. Here
    each stage keeps a *tail* of the trailing axes, at least ``_BLOCK`` cells, whole as the inner
    loop, merges adjacent axes of the same kind (kept or summed) in the head, and sums every summed
    head axis in one call; then it repeats on the (much smaller) result, whose tail axes are now
    trailing. The first stage reads ``p`` once at memory speed and usually shrinks it 100-fold.
    When the head holds nothing to sum (a small array, or many kept axes), the stage sums the
    first run of summed axes with everything after it as the tail, the longest inner loop there;
    if that tail is short too, by a (batched) product with a vector of ones, which has no
    short inner loops.
    """
    kept = set(axes)
    dims = [(n, a in kept) for a, n in enumerate(shape) if n > 1 or a in kept]
    steps = []
    while not all(k for _, k in dims):
        j = _head_tail(dims)
        if not all(k for _, k in dims[:j]):  # sum every summed head axis, the tail whole
            head = _runs(dims[:j])
            summed = tuple(i for i, (_, k) in enumerate(head) if not k)
            tail = math.prod(n for n, _ in dims[j:])
            steps.append((tuple(n for n, _ in head) + (tail,), summed))
        else:  # nothing to sum in the head: the first run of summed axes, the rest as tail
            i = j = next(i for i, (_, k) in enumerate(dims) if not k)
            while j < len(dims) and not dims[j][1]:
                j += 1
            view = tuple(math.prod(n for n, _ in part) for part in (dims[:i], dims[i:j], dims[j:]))
            # a short tail: a (batched) product with a vector of ones, which has no short loops
            steps.append((view, () if view[2] < _BLOCK // 16 else (1,)))
        dims = [d for d in dims[:j] if d[1]] + dims[j:]
    ordered = sorted(axes)
    return steps, tuple(shape[a] for a in ordered), tuple(ordered.index(a) for a in axes)


def _scale_by_gather(
    p: np.ndarray, cells: np.ndarray, log_factor: np.ndarray, table: np.ndarray
) -> bool:
    """The common case of :meth:`MarginalWorkload._scale` on a small universe, in a few numpy
    calls: ``p(x) *= w[a] / Z`` at ``x``'s cell ``a`` (``cells``), with ``w = exp(log_factor -
    max)`` and ``Z = <w, table>`` (flat arrays), the same ratio as the log-space path's. It applies
    only when every ``w`` is at least ``e^-700`` and ``Z`` at least ``1e-300``, so that every
    ratio is a normal number computed to full precision; otherwise it returns ``False`` with
    ``p`` untouched, and the caller takes the log-space path."""
    shifted = log_factor - log_factor.max()
    if not shifted.min() > -700:  # also False for NaN (an infinite factor)
        return False
    weights = np.exp(shifted)
    z = weights @ table
    if not z >= 1e-300:
        return False
    p *= (weights / z)[cells]
    return True


def _multiply(p: np.ndarray, shape: Sequence[int], axes: Sequence[int], factor: np.ndarray) -> None:
    """``p(x) *= factor[x_axes]`` in place, ``p`` C-ordered over ``shape``.

    A plain broadcast multiply runs its inner loop over the last axis, slowly when that axis is
    short. Here ``p`` is viewed as (merged head axes, a tail of at least ``_BROADCAST_BLOCK``
    cells) and the factor is laid out over the tail once, a small array gathered with a cached
    index, so every inner loop is a long contiguous one.
    """
    order, head_shape, factor_shape, tail_index = _broadcast_layout(tuple(shape), tuple(axes))
    f = np.transpose(factor, order).reshape(factor_shape[0], -1)  # (head cells, tail cells)
    if tail_index is not None:
        f = np.take(f, tail_index, axis=1)  # C-ordered, unlike f[:, tail_index]
    view = p.reshape(head_shape)
    view *= f.reshape(factor_shape[1:])


@functools.lru_cache(maxsize=512)
def _broadcast_layout(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple:
    """How :func:`_multiply` lays out a factor on ``axes`` (planned once per shape and axes):
    the factor's transposition to domain order; the view of ``p`` (head runs, tail); the number
    of head cells of the factor and the broadcastable shape of the laid-out factor; and for each
    tail cell the index of its factor value among the tail's kept cells (``None`` when the tail
    has no kept attribute: the factor is then constant along the tail)."""
    kept = set(axes)
    dims = [(n, a in kept) for a, n in enumerate(shape)]
    j = _head_tail(dims, _BROADCAST_BLOCK)
    head, tail = _runs(dims[:j]), _runs(dims[j:])
    tail_size = math.prod(n for n, _ in tail)
    head_cells = math.prod(n for n, k in head if k)
    index = np.zeros([n for n, _ in tail], dtype=np.intp)
    stride = 1
    for r in reversed(range(len(tail))):  # the kept tail runs' flat index, C order
        n, k = tail[r]
        if k:
            index += np.arange(n).reshape([n if i == r else 1 for i in range(len(tail))]) * stride
            stride *= n
    has_kept_tail = any(k for _, k in tail)
    factor_shape = [n if k else 1 for n, k in head] + [tail_size if has_kept_tail else 1]
    return (
        tuple(np.argsort(axes)),
        tuple(n for n, _ in head) + (tail_size,),
        (head_cells, *factor_shape),
        index.ravel() if has_kept_tail else None,
    )


#: Fixed cost of one reduction in numpy, in cells read (a call costs about as much as reading
#: this many cells): it keeps the sharing plan from splitting work into too many tiny tables.
_CALL_COST = 2**14

_UNPLANNED = object()


class _SharingPlan:
    """Which tables :meth:`MarginalWorkload._tables` computes, and from what.

    ``tables`` lists the cached tables, largest first, and ``marginals`` the marginals, each as
    ``(source, source shape, axes in the source)``: ``source`` is the index of an earlier cached
    table, or -1 for the histogram itself. A cached table's axes are its attributes in domain
    order.
    """

    def __init__(self, tables: list, marginals: list, cost: int):
        self.tables, self.marginals, self.cost = tables, marginals, cost

    @classmethod
    def best(cls, shape: Sequence[int], marginal_axes: Sequence[Sequence[int]]):
        """The cheapest plan over 1 to 6 blocks, or ``None`` if none beats the direct one."""
        size = math.prod(shape)
        direct = len(marginal_axes) * (size + _CALL_COST)
        used = sorted(set().union(*map(set, marginal_axes)))
        counts = range(1, min(6, len(used)) + 1)
        plans = [cls.cover(shape, marginal_axes, _blocks(used, shape, b)) for b in counts]
        best = min(plans, key=lambda plan: plan.cost, default=None)
        return best if best is not None and best.cost < direct else None

    @classmethod
    def cover(cls, shape: Sequence[int], marginal_axes, blocks: list[tuple[int, ...]]):
        """The plan reading each marginal off the union of the blocks it touches."""
        size = math.prod(shape)
        block_of = {a: i for i, block in enumerate(blocks) for a in block}
        touched = [frozenset(block_of[a] for a in axes) for axes in marginal_axes]
        attrs = {t: tuple(sorted(a for i in t for a in blocks[i])) for t in set(touched)}
        cells = {t: math.prod(shape[a] for a in attrs[t]) for t in attrs}
        keys = sorted((t for t in attrs if cells[t] < size), key=lambda t: -cells[t])
        position = {t: i for i, t in enumerate(keys)}
        held = [attrs[t] for t in keys] + [tuple(range(len(shape)))]  # [-1]: p itself
        held_shape = [tuple(shape[a] for a in h) for h in held]
        held_index = [{a: i for i, a in enumerate(h)} for h in held]

        def step(source: int, wanted: Sequence[int]) -> tuple:
            return source, held_shape[source], tuple(held_index[source][a] for a in wanted)

        tables, marginals, cost = [], [], 0
        for i, t in enumerate(keys):  # from the smallest larger table holding its blocks, or p
            source = next((j for j in reversed(range(i)) if t <= keys[j]), -1)
            tables.append(step(source, attrs[t]))
            cost += (cells[keys[source]] if source >= 0 else size) + _CALL_COST
        for t, axes in zip(touched, marginal_axes):  # from the table of its blocks, or p
            source = position.get(t, -1)
            marginals.append(step(source, axes))
            cost += (cells[t] if source >= 0 else size) + _CALL_COST
        return cls(tables, marginals, cost)


def _blocks(used: Sequence[int], shape: Sequence[int], b: int) -> list[tuple[int, ...]]:
    """Cut the attributes ``used`` (in order) into at most ``b`` consecutive blocks of about
    equal numbers of cells (equal log sizes)."""
    logs = np.cumsum([math.log(shape[a]) for a in used])
    total = logs[-1] if len(used) else 0.0
    cut = [min(b - 1, int(b * (x - 1e-9) / total)) if total > 0 else 0 for x in logs]
    return [tuple(a for a, c in zip(used, cut) if c == i) for i in range(b) if i in cut]


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
