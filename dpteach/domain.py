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
        if isinstance(attributes, str | bytes) or not isinstance(attributes, Mapping | Iterable):
            raise TypeError(
                "attributes must be a mapping {name: size} or a sequence of (name, size) pairs, "
                f"got {type(attributes).__name__} {attributes!r}"
            )
        items = list(attributes.items() if isinstance(attributes, Mapping) else attributes)
        if not items:
            raise ValueError("attributes must name at least one attribute")
        check.dense_size(len(items), "the list of attributes", itemsize=128)
        names, sizes, seen = [], [], set()
        for item in items:
            if isinstance(item, str) or not isinstance(item, Sequence) or len(item) != 2:
                raise TypeError(f"attributes must be (name, size) pairs, got {item!r}")
            name, size = item
            if not isinstance(name, str) or not name:
                raise TypeError(f"attribute names must be non-empty strings, got {name!r}")
            if name in seen:
                raise ValueError(f"attribute {name!r} appears twice")
            seen.add(name)
            names.append(name)
            sizes.append(check.integer(size, f"size of attribute {name!r}", minimum=1))
        self.names: tuple[str, ...] = tuple(names)
        self.shape: tuple[int, ...] = tuple(sizes)
        self._index = {n: i for i, n in enumerate(names)}

    @staticmethod
    def check(value: object, name: str = "domain") -> Domain:
        """``value`` itself if it is a :class:`Domain`, else a ``TypeError`` naming ``name``."""
        if not isinstance(value, Domain):
            raise TypeError(f"{name} must be a dpteach.Domain, got {type(value).__name__}")
        return value

    @classmethod
    def binary(cls, d: int) -> Domain:
        """``d`` binary attributes ``x0, ..., x{d-1}`` (the hypercube {0,1}^d); linear in ``d``."""
        d = check.integer(d, "d", minimum=1)
        check.dense_size(d, "the list of attributes", itemsize=128)
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
            return self._index[name]
        except (KeyError, TypeError):
            known = list(self.names) if self.d <= 20 else [*self.names[:20], "..."]
            raise ValueError(f"unknown attribute {name!r}; known: {known}") from None

    def axes(self, names: Sequence[str]) -> tuple[int, ...]:
        """Positions of several attributes, refusing repeats."""
        check.not_a_string(names, "names")
        axes = tuple(self.axis(n) for n in names)
        if len(set(axes)) != len(axes):
            raise ValueError(f"attribute names must be distinct, got {list(names)}")
        return axes

    def project(self, names: Sequence[str]) -> Domain:
        """The sub-domain on ``names`` (in the order given)."""
        return Domain([(self.names[a], self.shape[a]) for a in self.axes(names)])

    def check_dense(self) -> None:
        """Raise ``ValueError`` if a dense histogram over this universe would be too large."""
        shown = repr(self) if self.d <= 20 else f"{self.d} attributes"
        check.dense_size(self.size, f"the universe of {shown}")

    def validate_records(
        self, records: object, name: str = "records", *, copy: bool = True
    ) -> np.ndarray:
        """Return ``records`` as an ``(n, d)`` int64 array with every value in range (a fresh
        copy unless ``copy=False``, which reuses an int64 input as it is)."""
        try:
            arr = np.asarray(records)
        except ValueError:  # numpy's "inhomogeneous shape": rows of different lengths
            raise ValueError(
                f"{name} must be a rectangular (n, {self.d}) array: its rows have different lengths"
            ) from None
        if arr.dtype == bool:
            arr = arr.astype(np.int64)
        if arr.ndim != 2 or arr.shape[1] != self.d:
            raise ValueError(f"{name} must have shape (n, {self.d}), got {arr.shape}")
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            if not (np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr))):
                raise TypeError(f"{name} must hold integer attribute values")
        if arr.dtype != np.int64 and arr.size:
            # range-check in the values' own type, before a cast that would wrap or clip them
            self._check_range(arr, (arr < 0) | (arr >= np.asarray(self.shape)), name)
        arr = arr.astype(np.int64, copy=copy)
        # one comparison: as unsigned, a negative value is huge, so it fails like a too-large one
        if np.any(arr.view(np.uint64) >= np.asarray(self.shape, dtype=np.uint64)):
            self._check_range(arr, (arr < 0) | (arr >= np.asarray(self.shape)), name)
        return arr

    def _check_range(self, arr: np.ndarray, bad: np.ndarray, name: str) -> None:
        """Report the first value of ``arr`` flagged ``bad``, as it was passed."""
        if not np.any(bad):
            return
        row, col = map(int, np.argwhere(bad)[0])
        value = arr[row, col]
        shown = int(value) if np.issubdtype(arr.dtype, np.integer) else float(value)
        raise ValueError(
            f"{name}[{row}, {col}] = {shown!r} is outside attribute "
            f"{self.names[col]!r} (allowed 0..{self.shape[col] - 1})"
        )

    def ravel(self, records: object) -> np.ndarray:
        """Flat indices (row-major) of an ``(n, d)`` array of records."""
        self.check_dense()
        arr = self.validate_records(records, copy=False)
        return np.ravel_multi_index(arr.T, self.shape).astype(np.int64, copy=False)

    def unravel(self, indices: object) -> np.ndarray:
        """Records, as an ``(n, d)`` array, of flat indices."""
        self.check_dense()
        idx = np.asarray(indices)
        if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
            raise TypeError("indices must be a 1-D integer array")
        if idx.size == 0:
            return np.zeros((0, self.d), dtype=np.int64)
        if np.any((idx < 0) | (idx >= self.size)):
            raise ValueError(f"indices must lie in 0..{self.size - 1}")
        return np.stack(np.unravel_index(idx, self.shape), axis=1).astype(np.int64, copy=False)


def same_universe(first: object, second: object, *, names: str = "data and workload") -> None:
    """Refuse objects built over different universes (a ``ValueError`` naming ``names``).

    Domains are compared by what they are (attribute names, sizes and order), never by size
    alone; an object without a domain (a plain ``MatrixWorkload``, a histogram) is compared by
    its number of cells. ``first`` and ``second`` may each be a :class:`Domain`, an object with a
    ``domain`` (a Dataset, a workload, a stream) or a ``domain_size``, or an array over X.
    """
    first, second = _universe(first, names), _universe(second, names)
    if isinstance(first, Domain) and isinstance(second, Domain):
        if first != second:
            raise ValueError(f"{names} are over different universes: {first!r} and {second!r}")
        return
    size_1 = first.size if isinstance(first, Domain) else first
    size_2 = second.size if isinstance(second, Domain) else second
    if size_1 != size_2:
        raise ValueError(
            f"{names} are over different universes: {size_1:,} cells and {size_2:,} cells"
        )


def _universe(obj: object, names: str) -> Domain | int:
    """The Domain of ``obj`` if it has one, else its number of cells."""
    if isinstance(obj, Domain):
        return obj
    found = getattr(obj, "domain", None)
    if isinstance(found, Domain):
        return found
    if hasattr(obj, "domain_size"):
        return int(obj.domain_size)
    shape = np.shape(obj)
    if not shape:
        raise TypeError(
            f"{names} must each be a Domain, an object over one (a Dataset, a workload) or an "
            f"array over the universe, got {type(obj).__name__}"
        )
    return int(shape[-1])
