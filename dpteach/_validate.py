"""Parameter checks shared by the whole package: plain values only.

Every public function validates its inputs here so that bad input fails early with a
``ValueError`` or ``TypeError`` that names the parameter and the allowed range, never
with a NaN or a crash deep inside numpy. This module checks numbers, arrays, histograms, seeds
and privacy parameters, and imports nothing from dpteach; the package's own types check
themselves (:meth:`~dpteach.domain.Domain.check`, :meth:`~dpteach.data.Dataset.check`,
:meth:`~dpteach.queries.Workload.check`, :func:`~dpteach.domain.same_universe`).

Public functions validate their inputs once, here, at the boundary; what they call internally
takes the checked values (private ``_``-functions), so a value is not re-checked layer by layer.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

#: Largest number of cells of any dense array the package allocates (a histogram over X, a
#: query matrix, a list of records, all k-way attribute sets...): 2**24. Raise it (e.g.
#: ``dpteach._validate.MAX_DENSE_SIZE = 2**28``) if your machine has the memory.
MAX_DENSE_SIZE = 2**24

#: Largest single allocation in bytes (1 GiB); checked together with ``MAX_DENSE_SIZE``.
MAX_BYTES = 2**30

#: Tolerance for "sums to one".
SUM_TOLERANCE = 1e-6


def real(value: object, name: str) -> float:
    """Return ``value`` as a finite float; bools and strings are rejected."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    try:
        value = float(value)
    except OverflowError as err:
        raise ValueError(f"{name} must be finite, got an integer beyond the doubles") from err
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def positive(value: object, name: str) -> float:
    """A finite real number > 0."""
    value = real(value, name)
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def nonnegative(value: object, name: str) -> float:
    """A finite real number >= 0."""
    value = real(value, name)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def delta(value: object, name: str = "delta", *, allow_zero: bool = True) -> float:
    """A privacy parameter delta in [0, 1) (or (0, 1) when ``allow_zero`` is false)."""
    value = real(value, name)
    low_ok = value >= 0 if allow_zero else value > 0
    if not (low_ok and value < 1):
        allowed = "[0, 1)" if allow_zero else "(0, 1)"
        raise ValueError(f"{name} must be in {allowed}, got {value}")
    return value


def probability(value: object, name: str) -> float:
    """A failure probability in the open interval (0, 1)."""
    value = real(value, name)
    if not 0 < value < 1:
        raise ValueError(f"{name} must be in (0, 1), got {value}")
    return value


def integer(value: object, name: str, *, minimum: int | None = None) -> int:
    """An integer (numpy integers allowed, bools and floats not), at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def rng(seed: object) -> np.random.Generator:
    """A ``numpy.random.Generator`` from a Generator or an integer seed.

    ``None`` is refused on purpose: every random function in dpteach is seeded explicitly.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"rng seed must be >= 0, got {seed}")
        return np.random.default_rng(int(seed))
    raise TypeError(
        f"rng must be a numpy.random.Generator or a non-negative integer seed, got {seed!r}"
    )


#: Integers up to this magnitude are exactly doubles; larger ones would be rounded (so neighbours
#: one apart could end up two apart) and are refused.
EXACT_INTEGER = 2**53


def array(value: object, name: str, *, ndim: int | None = None) -> np.ndarray:
    """A finite float array (a copy is not made unless needed). Integers beyond ``2^53`` are
    refused: as doubles they would be rounded, silently changing the data (and its
    sensitivity). Strings, ``None`` and complex numbers are refused (``TypeError``); booleans
    are accepted as 0 and 1 on purpose (a decision: a boolean mask *is* a counting query, and
    ``laplace(True, ...)`` is the count 1), unlike boolean *parameters* (:func:`real`)."""
    try:
        raw = np.asarray(value)
        # complex, times, records, strings (never parsed as numbers: '3' is not 3): no real
        # number to take; an object array must hold real numbers only (not None, not strings)
        if raw.dtype.kind in "cmMVUSa" or (
            raw.dtype.kind == "O" and not all(isinstance(x, numbers.Real) for x in raw.flat)
        ):
            raise TypeError(raw.dtype)
        out = raw.astype(float, copy=False)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"{name} must be numeric array-like (real numbers, not strings or None), got "
            f"{type(value).__name__} {_short(value)}"
        ) from err
    except OverflowError as err:
        raise ValueError(f"{name} has a value beyond the range of doubles (about 1.8e308)") from err
    if raw.dtype.kind in "iu" and raw.size:
        inexact = raw.max() > EXACT_INTEGER or raw.min() < -EXACT_INTEGER
    else:  # Python integers of any size in an object array
        inexact = raw.dtype.kind == "O" and any(
            isinstance(x, numbers.Integral) and abs(int(x)) > EXACT_INTEGER for x in raw.flat
        )
    if inexact:
        raise ValueError(
            f"{name} holds integers beyond 2^53, which doubles cannot represent exactly; "
            "rescale them (e.g. divide by a power of ten) first"
        )
    if ndim is not None and out.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {out.shape}")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must contain only finite values")
    return out


def _short(value: object) -> str:
    """``repr(value)`` cut to 60 characters, for a message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def histogram(p: object, size: int | None = None, name: str = "histogram") -> np.ndarray:
    """A normalised histogram: 1-D, finite, non-negative, summing to 1, of length ``size``."""
    p = array(p, name, ndim=1)
    if size is not None and p.shape[0] != size:
        raise ValueError(f"{name} must have length {size} (the universe size), got {p.shape[0]}")
    if p.size == 0:
        raise ValueError(f"{name} must not be empty")
    if np.any(p < 0):
        raise ValueError(f"{name} must be non-negative")
    total = p.sum()
    if abs(total - 1) > SUM_TOLERANCE:
        raise ValueError(f"{name} must sum to 1 (within {SUM_TOLERANCE}), got {total:.6g}")
    return p


def dense_size(size: int, what: str = "universe", *, itemsize: int = 8) -> None:
    """Refuse a dense allocation of ``size`` cells (``itemsize`` bytes each) before it happens.

    The limits are read at call time, so a user can raise :data:`MAX_DENSE_SIZE` and
    :data:`MAX_BYTES`.
    """
    size = int(size)
    if size > MAX_DENSE_SIZE or size * itemsize > MAX_BYTES:
        raise ValueError(
            f"{what} needs {count(size)} cells ({_bytes(size * itemsize)}), "
            "more than the dense limit of "
            f"{MAX_DENSE_SIZE:,} cells / {_bytes(MAX_BYTES)} (dpteach._validate.MAX_DENSE_SIZE, "
            "MAX_BYTES; raise them if you have the memory, or choose fewer or coarser attributes)"
        )


def _bytes(n: int) -> str:
    if n >= 2**60:  # beyond the exbibytes (and perhaps beyond the doubles): a power of ten
        return f"{count(n)} B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} PiB"  # pragma: no cover


def count(n: int) -> str:
    """A count for a message: ``1,234,567`` up to ``10^15``, else ``about 10^k`` (never the
    digits of a huge integer: Python refuses to print more than 4300 of them)."""
    n = int(n)
    if n < 10**15:
        return f"{n:,}"
    return f"about 10^{math.log10(n):.0f}"  # math.log10 takes integers of any size


def not_a_string(value: object, name: str) -> None:
    """Refuse a bare string where a sequence of names is expected (``"ab"`` is not
    ``("a", "b")``)."""
    if isinstance(value, str | bytes):
        raise TypeError(
            f"{name} must be a sequence of attribute names, not the string {value!r} "
            f"(write ({value!r},) for one name)"
        )


def boolean(value: object, name: str) -> bool:
    """A bool (numpy bools allowed); ``0``/``1``, strings and ``None`` are refused."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def finite_ratio(numerator: float, denominator: float, what: str) -> float:
    """``numerator / denominator`` for positive finite inputs, refused if it overflows."""
    ratio = numerator / denominator
    if not np.isfinite(ratio) or ratio == 0:
        raise ValueError(
            f"{what} = {numerator:.3g} / {denominator:.3g} is not a representable positive number"
        )
    return ratio


def snapshots(value: object, name: str = "snapshots") -> frozenset[int]:
    """Round numbers whose state an iterative algorithm keeps: an iterable of integers >= 0
    (not a string: ``"12"`` is not rounds 1 and 2). Returned as a set, for ``t in wanted``."""
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(
            f"{name} must be an iterable of non-negative integers (round numbers), "
            f"got {type(value).__name__} {value!r}"
        )
    return frozenset(integer(t, f"each entry of {name}", minimum=0) for t in value)
