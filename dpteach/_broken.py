"""Deliberately broken mechanisms, for teaching and for testing the auditor. NEVER use them.

Each is a vectorised sampler ``sampler(data, rng, size)`` for :func:`dpteach.audit.audit`, made
wrong in one well-known way: the wrong noise scale, the exponential mechanism without its factor 2,
the broken sparse-vector variants of Lyu, Su and Li (2017), and a budget refusal that depends on the
data. The auditor must flag every one of them. This module is private: not part of the API.
"""

from __future__ import annotations

import numpy as np


def laplace_scaled(factor: float, *, sensitivity: float = 1.0, epsilon: float = 1.0):
    """Laplace noise ``factor`` times the right scale (``factor < 1``: too little noise)."""
    return lambda x, rng, size: x + rng.laplace(0.0, factor * sensitivity / epsilon, size)


def gaussian_scaled(factor: float, sigma: float):
    """Gaussian noise with ``factor`` times the calibrated ``sigma``."""
    return lambda x, rng, size: x + rng.normal(0.0, factor * sigma, size)


def exponential_without_two(*, sensitivity: float = 1.0, epsilon: float = 1.0):
    """The exponential mechanism with ``exp(eps u / Delta)``: the factor 2 forgotten."""

    def sampler(scores, rng, size):
        u = np.asarray(scores, dtype=float)
        return np.argmax(epsilon * u / sensitivity + rng.gumbel(size=(size, u.size)), axis=1)

    return sampler


#: The broken sparse-vector variants of Lyu, Su and Li (2017), by their first authors.
SPARSE_VARIANTS = {
    "dwork-roth": "correct (Dwork-Roth Alg. 2): Lap(2c/eps) threshold, reset after each above, "
    "Lap(4c/eps) query noise, halts after c aboves",
    "roth": "releases the noisy value q_i + nu_i used in the comparison (LSL17 Alg. 3)",
    "lee-clifton": "query noise Lap(4/(3 eps)) that does not scale with c, threshold never reset "
    "(LSL17 Alg. 4)",
    "stoddard": "no query noise at all (LSL17 Alg. 5)",
    "chen": "no cutoff: answers every query (LSL17 Alg. 6)",
}


def sparse_vector(
    variant: str,
    *,
    epsilon: float = 1.0,
    sensitivity: float = 1.0,
    threshold: float = 0.0,
    cutoff: int = 1,
    encode: str = "pattern",
):
    """A sparse-vector ``variant`` (see :data:`SPARSE_VARIANTS`) over a fixed stream of true
    query answers ``data`` (shape ``(k,)``), vectorised over runs.

    The transcript is encoded as one integer: ``encode="pattern"`` (the above/below answers in
    base 3, 2 for "not answered" after halting), ``"count"`` (the number of aboves) or ``"first"``
    (the index of the first above, ``k`` if none). The ``"roth"`` variant also appends its first
    released value as ``floor(value)`` (code = code * 1000 + bin).
    """
    if variant not in SPARSE_VARIANTS:
        raise ValueError(f"variant must be one of {sorted(SPARSE_VARIANTS)}, got {variant!r}")
    delta_c = cutoff * sensitivity
    t_scale, q_scale, reset = 2 * delta_c / epsilon, 4 * delta_c / epsilon, True
    if variant == "lee-clifton":
        t_scale, q_scale, reset = 4 * sensitivity / epsilon, 4 * sensitivity / (3 * epsilon), False
    if variant == "stoddard":
        q_scale = 0.0
    respect_cutoff = variant != "chen"

    def sampler(answers, rng, size):
        a = np.asarray(answers, dtype=float)
        k = a.size
        noise = rng.laplace(0.0, q_scale, (size, k)) if q_scale else np.zeros((size, k))
        t_hat = threshold + rng.laplace(0.0, t_scale, size)
        pattern = np.zeros(size, dtype=np.int64)
        first = np.full(size, k, dtype=np.int64)
        aboves = np.zeros(size, dtype=np.int64)
        released = np.full(size, np.nan)
        for i in range(k):  # a loop over the k queries of the stream, vectorised over runs
            halted = respect_cutoff & (aboves >= cutoff)
            above = (a[i] + noise[:, i] >= t_hat) & ~halted
            new = above & (first == k)
            first[new] = i
            released[new] = a[i] + noise[new, i]
            aboves += above
            if reset:
                t_hat = np.where(above, threshold + rng.laplace(0.0, t_scale, size), t_hat)
            pattern = pattern * 3 + np.where(halted, 2, above.astype(np.int64))
        code = {"pattern": pattern, "count": aboves, "first": first}[encode]
        if variant == "roth":
            bins = np.where(np.isnan(released), -1, np.clip(np.floor(released), -50, 50) + 50)
            code = code * 1000 + bins.astype(np.int64)
        return code

    return sampler


def refuses_when_count_is_zero(*, epsilon: float = 1.0):
    """A 'budget check' that refuses (output -1) exactly when the true count is 0: the refusal
    itself depends on the data. Otherwise a correct Laplace release, rounded to a code."""

    def sampler(count, rng, size):
        if count == 0:
            return np.full(size, -1)
        return np.round(count + rng.laplace(0.0, 1 / epsilon, size)).astype(np.int64)

    return sampler
