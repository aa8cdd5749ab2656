"""The data universe X: named attributes, each with a finite number of values.

A record is a tuple of attribute values ``(x_1, ..., x_d)`` with ``0 <= x_j < size_j``; the
universe ``X`` is the product of the attribute ranges, so ``|X| = prod(size_j)``. Records map
to flat indices in row-major (C) order, which is how histograms over ``X`` are laid out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from . import _validate as check


class Domain:
    """Named, finite attributes and their product universe.

    Parameters
    ----------
    attributes
        Mapping ``name -> number of values`` (insertion order is the axis order), or a
        sequence of ``(name, size)`` pairs.

    Examples
    --------
    >>> dom = Domain({"sex": 2, "race": 5})
    >>> dom.size
    10
    >>> dom.ravel([[1, 3]]).tolist()
    [8]
    """

    def __init__(self, attributes: Mapping[str, int] | Iterable[tuple[str, int]]):
        items = list(attributes.items() if isinstance(attributes, Mapping) else attributes)
        if not items:
            raise ValueError("attributes must name at least one attribute")
        names, sizes = [], []
        for name, size in items:
            if not isinstance(name, str) or not name:
                raise TypeError(f"attribute names must be non-empty strings, got {name!r}")
            if name in names:
                raise ValueError(f"attribute {name!r} appears twice")
            names.append(name)
            sizes.append(check.integer(size, f"size of attribute {name!r}", minimum=1))
        self.names: tuple[str, ...] = tuple(names)
        self.shape: tuple[int, ...] = tuple(sizes)

    @classmethod
    def binary(cls, d: int) -> Domain:
        """``d`` binary attributes named ``x0, ..., x{d-1}`` (the hypercube {0,1}^d)."""
        d = check.integer(d, "d", minimum=1)
        return cls({f"x{j}": 2 for j in range(d)})

    @property
    def size(self) -> int:
        """``|X|``, the number of cells of the universe (an exact Python int)."""
        return int(np.prod(self.shape, dtype=object))

    @property
    def d(self) -> int:
        """The number of attributes."""
        return len(self.names)

    def __len__(self) -> int:
        return self.d

    def __iter__(self):
        return iter(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __getitem__(self, name: str) -> int:
        return self.shape[self.axis(name)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Domain) and (self.names, self.shape) == (other.names, other.shape)

    def __hash__(self) -> int:
        return hash((self.names, self.shape))

    def __repr__(self) -> str:
        inner = ", ".join(f"{n!r}: {s}" for n, s in zip(self.names, self.shape))
        return f"Domain({{{inner}}})"

    def axis(self, name: str) -> int:
        """The position of attribute ``name``."""
        try:
            return self.names.index(name)
        except ValueError:
            raise ValueError(f"unknown attribute {name!r}; known: {list(self.names)}") from None

    def axes(self, names: Sequence[str]) -> tuple[int, ...]:
        """Positions of several attributes, refusing repeats."""
        if isinstance(names, str):
            raise TypeError("attribute names must be a sequence of strings, not one string")
        axes = tuple(self.axis(n) for n in names)
        if len(set(axes)) != len(axes):
            raise ValueError(f"attribute names must be distinct, got {list(names)}")
        return axes

    def project(self, names: Sequence[str]) -> Domain:
        """The sub-domain on ``names`` (in the order given)."""
        return Domain([(self.names[a], self.shape[a]) for a in self.axes(names)])

    def check_dense(self) -> None:
        """Raise ``ValueError`` if a dense histogram over this universe would be too large."""
        check.dense_size(self.size, f"the universe of {self!r}")

    def validate_records(self, records: object, name: str = "records") -> np.ndarray:
        """Return ``records`` as an ``(n, d)`` int64 array with every value in range."""
        arr = np.asarray(records)
        if arr.ndim != 2 or arr.shape[1] != self.d:
            raise ValueError(f"{name} must have shape (n, {self.d}), got {arr.shape}")
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            if not (np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr))):
                raise TypeError(f"{name} must hold integer attribute values")
        arr = arr.astype(np.int64)
        bad = (arr < 0) | (arr >= np.asarray(self.shape))
        if np.any(bad):
            row, col = map(int, np.argwhere(bad)[0])
            raise ValueError(
                f"{name}[{row}, {col}] = {arr[row, col]} is outside attribute "
                f"{self.names[col]!r} (allowed 0..{self.shape[col] - 1})"
            )
        return arr

    def ravel(self, records: object) -> np.ndarray:
        """Flat indices (row-major) of an ``(n, d)`` array of records."""
        self.check_dense()
        arr = self.validate_records(records)
        return np.ravel_multi_index(arr.T, self.shape).astype(np.int64)

    def unravel(self, indices: object) -> np.ndarray:
        """Records, as an ``(n, d)`` array, of flat indices."""
        self.check_dense()
        idx = np.asarray(indices)
        if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
            raise TypeError("indices must be a 1-D integer array")
        if np.any((idx < 0) | (idx >= self.size)):
            raise ValueError(f"indices must lie in 0..{self.size - 1}")
        return np.stack(np.unravel_index(idx, self.shape), axis=1).astype(np.int64)
