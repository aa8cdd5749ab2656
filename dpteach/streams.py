"""Database streams: a database that starts at size ``n0`` and gains one entry per step.

Cummings, Krehbiel, Lai and Tantipongpipat (2018), Section 2: time ``t`` is also the size of the
database ``x_t`` (its first ``t`` entries), and the stream starts at ``t = n0``. Two streams are
*neighbours* when they differ in one entry, from the time that entry arrives onwards (which may be
before ``n0``): every later database then differs in that one record, so a linear query
``q: X -> [0, 1]`` on the normalised histogram of ``x_t`` has sensitivity ``1/t``.

A :class:`DatabaseStream` stores the entries up to a finite ``horizon`` (what a simulation
needs); the generators build stationary, drifting and adversarial streams.
"""

from __future__ import annotations

import functools

import numpy as np

from . import _validate as check
from .data import Dataset
from .domain import Domain

Seed = np.random.Generator | int


class DatabaseStream:
    """A growing database: entries ``0, 1, ..., horizon-1`` arriving one per step after ``n0``.

    Parameters
    ----------
    records
        ``(horizon, d)`` integer array, one row per entry in arrival order.
    domain
        The universe the records come from.
    n0
        The starting size: ``x_{n0}`` (the first ``n0`` records) exists before time starts.
    """

    def __init__(self, records: object, domain: Domain, *, n0: int):
        data = Dataset(records, domain)  # validates the records against the domain
        self.domain = domain
        self.records = data.records
        self.records.flags.writeable = False
        self.n0 = check.integer(n0, "n0", minimum=1)
        if self.n0 > self.horizon:
            raise ValueError(f"n0 must be at most the stream's length {self.horizon}, got {n0}")

    @property
    def horizon(self) -> int:
        """The number of entries stored: the last time of the simulation."""
        return int(self.records.shape[0])

    def __repr__(self) -> str:
        return f"DatabaseStream(n0={self.n0}, horizon={self.horizon}, domain={self.domain!r})"

    @functools.cached_property
    def cells(self) -> np.ndarray:
        """Flat indices (cells of X) of the entries, in arrival order."""
        cells = self.domain.ravel(self.records)
        cells.flags.writeable = False
        return cells

    def _time(self, t: object) -> int:
        t = check.integer(t, "t", minimum=1)
        if t > self.horizon:
            raise ValueError(f"t must be at most the stream's horizon {self.horizon}, got {t}")
        return t

    def at(self, t: int) -> Dataset:
        """The database ``x_t``: the first ``t`` entries."""
        return Dataset(self.records[: self._time(t)], self.domain)

    def counts(self, t: int) -> np.ndarray:
        """The count vector of ``x_t`` over X."""
        return np.bincount(self.cells[: self._time(t)], minlength=self.domain.size).astype(float)

    def histogram(self, t: int) -> np.ndarray:
        """The normalised histogram of ``x_t``."""
        return self.counts(t) / self._time(t)

    def replace(self, i: int, record: object) -> DatabaseStream:
        """The neighbouring stream: entry ``i`` (0-based, arriving at size ``i + 1``) replaced by
        ``record`` from its arrival onwards."""
        i = check.integer(i, "i", minimum=0)
        if i >= self.horizon:
            raise ValueError(f"i must be in 0..{self.horizon - 1}, got {i}")
        new = self.records.copy()
        new[i] = self.domain.validate_records([record], "record")[0]
        return DatabaseStream(new, self.domain, n0=self.n0)

    @classmethod
    def from_dataset(cls, data: Dataset, *, n0: int, rng: Seed | None = None) -> DatabaseStream:
        """A stream whose entries are ``data``'s records, shuffled by ``rng`` if given."""
        if not isinstance(data, Dataset):
            raise TypeError(f"data must be a Dataset, got {type(data).__name__}")
        records = data.records
        if rng is not None:
            records = records[check.rng(rng).permutation(data.n)]
        return cls(records, data.domain, n0=n0)


def _cells_to_stream(cells: np.ndarray, domain: Domain, n0: int) -> DatabaseStream:
    return DatabaseStream(domain.unravel(cells.astype(np.int64)), domain, n0=n0)


def _sizes(n0: object, horizon: object) -> tuple[int, int]:
    n0 = check.integer(n0, "n0", minimum=1)
    horizon = check.integer(horizon, "horizon", minimum=1)
    if horizon < n0:
        raise ValueError(f"horizon must be at least n0={n0}, got {horizon}")
    return n0, horizon


def stationary_stream(
    p: object, domain: Domain, *, n0: int, horizon: int, rng: Seed
) -> DatabaseStream:
    """Every entry drawn i.i.d. from the distribution ``p`` over ``domain``."""
    domain.check_dense()
    p = check.histogram(p, domain.size, "p")
    n0, horizon = _sizes(n0, horizon)
    cells = check.rng(rng).choice(domain.size, size=horizon, p=p / p.sum())
    return _cells_to_stream(cells, domain, n0)


def drifting_stream(
    p_start: object, p_end: object, domain: Domain, *, n0: int, horizon: int, rng: Seed
) -> DatabaseStream:
    """The first ``n0`` entries from ``p_start``; entry ``s >= n0`` from the mixture
    ``(1 - lam_s) p_start + lam_s p_end`` with ``lam_s`` rising linearly from 0 to 1 at the
    horizon: the population itself changes while the database grows."""
    domain.check_dense()
    start = check.histogram(p_start, domain.size, "p_start")
    end = check.histogram(p_end, domain.size, "p_end")
    n0, horizon = _sizes(n0, horizon)
    gen = check.rng(rng)
    lam = np.clip((np.arange(horizon) - n0 + 1) / max(horizon - n0, 1), 0.0, 1.0)
    from_end = gen.random(horizon) < lam
    cells = np.where(
        from_end,
        gen.choice(domain.size, size=horizon, p=end / end.sum()),
        gen.choice(domain.size, size=horizon, p=start / start.sum()),
    )
    return _cells_to_stream(cells, domain, n0)


def adversarial_stream(
    initial: Dataset,
    *,
    horizon: int,
    rng: Seed,
    learned: object | None = None,
    cells: int = 1,
) -> DatabaseStream:
    """Growth aimed at what a learned histogram gets wrong.

    The stream starts with ``initial``'s records (``n0 = initial.n``); every later entry is drawn
    uniformly from the ``cells`` cells of X to which ``learned`` gives the *least* mass (default:
    ``initial``'s own histogram, which is what an accurate learner converges to). A mechanism that
    learned ``x_{n0}`` well and ignores new data goes stale by up to ``1 - n0/t`` on queries
    counting those cells; this is the growth that breaks static PMW (Section 4 of the paper).
    The stream is fixed in advance (the adversary is oblivious to the mechanism's coins).
    """
    if not isinstance(initial, Dataset):
        raise TypeError(f"initial must be a Dataset, got {type(initial).__name__}")
    domain = initial.domain
    n0, horizon = _sizes(initial.n, horizon)
    cells = check.integer(cells, "cells", minimum=1)
    if cells > domain.size:
        raise ValueError(f"cells must be at most |X| = {domain.size}, got {cells}")
    weights = initial.histogram() if learned is None else check.histogram(learned, domain.size)
    targets = np.argsort(weights, kind="stable")[:cells]
    new = check.rng(rng).choice(targets, size=horizon - n0)
    stream_cells = np.concatenate([domain.ravel(initial.records), new])
    return _cells_to_stream(stream_cells, domain, n0)
