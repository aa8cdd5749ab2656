"""Parameter checks shared by the whole package.

Every public function validates its inputs here so that bad input fails early with a
``ValueError`` or ``TypeError`` that names the parameter and the allowed range, never
with a NaN or a crash deep inside numpy.
"""

from __future__ import annotations

import numbers

import numpy as np

#: Largest universe |X| for which a dense histogram may be allocated (2**24 cells, 128 MiB).
MAX_DENSE_SIZE = 2**24

#: Tolerance for "sums to one".
SUM_TOLERANCE = 1e-6


def real(value: object, name: str) -> float:
    """Return ``value`` as a finite float; bools and strings are rejected."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
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


def array(value: object, name: str, *, ndim: int | None = None) -> np.ndarray:
    """A finite float array (a copy is not made unless needed)."""
    try:
        out = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be numeric array-like, got {type(value).__name__}") from err
    if ndim is not None and out.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {out.shape}")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must contain only finite values")
    return out


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


def dense_size(size: int, what: str = "universe") -> None:
    """Refuse a dense allocation of ``size`` cells before it happens."""
    if size > MAX_DENSE_SIZE:
        raise ValueError(
            f"{what} has {size:,} cells, more than the dense limit of {MAX_DENSE_SIZE:,} "
            "(2**24); choose fewer or coarser attributes"
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
