"""Databases as multisets of records and as histograms over the universe X.

A database ``D`` of ``n`` records from ``X`` is summarised by its counts ``h`` (``h[x]`` =
number of records equal to ``x``, so ``sum(h) = n``) and its normalised histogram
``p = h / n``. A linear query is then ``q(D) = <q, p>``. Two databases are *neighbours*
(replace-one) when they have the same size and differ in one record; a linear query with
values in [0, 1] then has sensitivity ``1/n``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _validate as check
from .domain import Domain


class Dataset:
    """A database: an ``(n, d)`` integer array of records over a :class:`Domain`.

    Parameters
    ----------
    records
        One row per person, one column per attribute of ``domain``.
    domain
        The universe the records come from.
    """

    def __init__(self, records: object, domain: Domain):
        self.domain = Domain.check(domain)
        if records is None or isinstance(records, str | bytes):
            raise TypeError(f"records must be an (n, d) integer array, got {records!r}")
        self.records = domain.validate_records(records)  # always a fresh copy
        if self.records.shape[0] == 0:
            raise ValueError("records must hold at least one record (n >= 1)")

    @staticmethod
    def check(value: object, name: str = "data") -> Dataset:
        """``value`` itself if it is a :class:`Dataset` (not ``None``, not an array of records or
        a histogram), else a ``TypeError`` naming ``name``."""
        if not isinstance(value, Dataset):
            raise TypeError(
                f"{name} must be a dpteach.Dataset, got {type(value).__name__}; build one with "
                "Dataset(records, domain)"
            )
        return value

    @property
    def n(self) -> int:
        """The number of records."""
        return int(self.records.shape[0])

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"Dataset(n={self.n}, domain={self.domain!r})"

    def counts(self) -> np.ndarray:
        """The count vector ``h`` over X (length ``|X|``, sums to ``n``)."""
        idx = self.domain.ravel(self.records)
        return np.bincount(idx, minlength=self.domain.size).astype(float)

    def histogram(self) -> np.ndarray:
        """The normalised histogram ``p = h / n`` over X."""
        return self.counts() / self.n

    def project(self, names: Sequence[str]) -> Dataset:
        """The same people restricted to the attributes ``names``."""
        check.not_a_string(names, "names")
        axes = self.domain.axes(names)
        return Dataset(self.records[:, list(axes)], self.domain.project(names))

    def replace(self, i: int, record: Sequence[int]) -> Dataset:
        """The replace-one neighbour: record ``i`` replaced by ``record``."""
        i = check.integer(i, "i", minimum=0)
        if i >= self.n:
            raise ValueError(f"i must be in 0..{self.n - 1}, got {i}")
        new = self.records.copy()
        new[i] = self.domain.validate_records([record], "record")[0]
        return Dataset(new, self.domain)

    def head(self, n: int) -> Dataset:
        """The first ``n`` records (a prefix of the stream, for growing databases)."""
        n = check.integer(n, "n", minimum=1)
        if n > self.n:
            raise ValueError(f"n must be at most {self.n}, got {n}")
        return Dataset(self.records[:n], self.domain)

    def sample(self, n: int, *, rng: np.random.Generator | int) -> Dataset:
        """``n`` records drawn uniformly with replacement (a bootstrap sample). A passed
        Generator is consumed; the same seed gives the same sample."""
        n = check.integer(n, "n", minimum=1)
        check.dense_size(n * self.domain.d, "the sampled records")
        gen = check.rng(rng)
        return Dataset(self.records[gen.integers(0, self.n, size=n)], self.domain)


def from_histogram(p: object, domain: Domain, n: int, *, rng: np.random.Generator | int) -> Dataset:
    """Draw ``n`` i.i.d. records from the distribution ``p`` over ``domain`` (a passed Generator
    is consumed; the same seed gives the same records)."""
    Domain.check(domain).check_dense()
    p = check.histogram(p, domain.size, "p")
    n = check.integer(n, "n", minimum=1)
    check.dense_size(n * domain.d, "the records")
    idx = check.rng(rng).choice(domain.size, size=n, p=p / p.sum())
    return Dataset(domain.unravel(idx), domain)


def independent_data(
    domain: Domain,
    n: int,
    *,
    rng: np.random.Generator | int,
    concentration: float = 1.0,
) -> Dataset:
    """``n`` records whose attributes are independent.

    Each attribute's marginal distribution is drawn once from a symmetric Dirichlet with the
    given ``concentration`` (small values give skewed marginals), then records are sampled. A
    passed Generator is consumed; the same seed gives the same records.
    """
    _check_synthetic(domain, n)
    concentration = check.positive(concentration, "concentration")
    gen = check.rng(rng)
    cols = [gen.choice(k, size=n, p=gen.dirichlet(np.full(k, concentration))) for k in domain.shape]
    return Dataset(np.stack(cols, axis=1), domain)


def correlated_data(
    domain: Domain,
    n: int,
    *,
    rng: np.random.Generator | int,
    strength: float = 0.7,
) -> Dataset:
    """``n`` records with a chain of correlated attributes, so that marginals are interesting.

    Attribute 0 is drawn from a skewed distribution; attribute ``j+1`` copies attribute ``j``
    (scaled to its own range) with probability ``strength`` and is uniform otherwise.
    ``strength = 0`` gives independent uniform attributes after the first. A passed Generator is
    consumed; the same seed gives the same records.
    """
    _check_synthetic(domain, n)
    strength = check.real(strength, "strength")
    if not 0 <= strength <= 1:
        raise ValueError(f"strength must be in [0, 1], got {strength}")
    gen = check.rng(rng)
    first = domain.shape[0]
    cols = [gen.choice(first, size=n, p=gen.dirichlet(np.full(first, 0.5)))]
    for prev_size, size in zip(domain.shape[:-1], domain.shape[1:]):
        copied = (cols[-1] * size) // prev_size
        fresh = gen.integers(0, size, size=n)
        cols.append(np.where(gen.random(n) < strength, copied, fresh))
    return Dataset(np.stack(cols, axis=1), domain)


def latent_class_data(
    domain: Domain,
    n: int,
    *,
    rng: np.random.Generator | int,
    classes: int = 3,
    concentration: float = 0.5,
) -> Dataset:
    """``n`` records from a latent-class model: a hidden class, then independent attributes.

    The class weights are drawn once from a flat Dirichlet over ``classes`` classes, and each
    class's distribution of each attribute from a symmetric Dirichlet with the given
    ``concentration`` (small values give classes that differ sharply). A record draws its class,
    then each attribute independently from that class's distribution: the attributes are
    dependent through the class, so every marginal carries information about the others, as in
    real survey data. ``classes = 1`` gives independent attributes. A passed Generator is
    consumed; the same seed gives the same records.
    """
    _check_synthetic(domain, n)
    classes = check.integer(classes, "classes", minimum=1)
    check.dense_size(classes * sum(domain.shape), "the classes' distributions")
    concentration = check.positive(concentration, "concentration")
    gen = check.rng(rng)
    weights = gen.dirichlet(np.ones(classes))
    members = gen.choice(classes, size=n, p=weights)
    cols = []
    for size in domain.shape:
        table = gen.dirichlet(np.full(size, concentration), size=classes)  # classes x size
        # inverse-CDF sampling for all classes at once: row c's CDF shifted by c is increasing
        shifted = (np.cumsum(table, axis=1) + np.arange(classes)[:, None]).ravel()
        drawn = np.searchsorted(shifted, members + gen.random(n), side="right") - members * size
        cols.append(np.clip(drawn, 0, size - 1))
    return Dataset(np.stack(cols, axis=1), domain)


def _check_synthetic(domain: object, n: object) -> None:
    """The synthetic generators' memory: ``n x d`` records and one distribution per attribute."""
    Domain.check(domain)
    n = check.integer(n, "n", minimum=1)
    check.dense_size(n * domain.d, "the records")
    check.dense_size(max(domain.shape), "an attribute's distribution")
