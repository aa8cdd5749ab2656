"""Deliberately broken mechanisms, for teaching and for testing the auditor. NEVER use them.

Each is a vectorised sampler ``sampler(data, rng, size)`` for :func:`dpteach.audit.audit`, made
wrong in one well-known way: the wrong noise scale, the exponential mechanism without its factor 2,
sparse-vector variants in the style of those that Lyu, Su and Li (2017) show to be broken, and a
budget refusal that depends on the data. The auditor must flag every one of them (how many samples
it takes is measured in the auditing appendix). :func:`exact_loss` computes the exact privacy loss
of some sparse-vector variants on a pair. This module is private: not part of the API.
"""

from __future__ import annotations

import math

import numpy as np


def _laplace(rng: np.random.Generator, scale: float, size) -> np.ndarray:
    """``Lap(scale)`` draws as ``scale (E_1 - E_2)``, the difference of two independent standard
    exponentials: the Laplace distribution, about twice as fast as ``rng.laplace``."""
    return scale * (rng.standard_exponential(size) - rng.standard_exponential(size))


def laplace_scaled(factor: float, *, sensitivity: float = 1.0, epsilon: float = 1.0):
    """Laplace noise ``factor`` times the right scale (``factor < 1``: too little noise)."""
    return lambda x, rng, size: x + rng.laplace(0.0, factor * sensitivity / epsilon, size)


def gaussian_scaled(factor: float, sigma: float):
    """Gaussian noise with ``factor`` times the calibrated ``sigma``."""
    return lambda x, rng, size: x + rng.normal(0.0, factor * sigma, size)


def exponential_without_two(*, sensitivity: float = 1.0, epsilon: float = 1.0):
    """The exponential mechanism with ``exp(eps u / Delta)``: the factor 2 forgotten."""

    def sampler(scores, rng, size):  # P[r] ∝ exp(eps u_r / Delta), by inverse-CDF sampling
        logits = epsilon * np.asarray(scores, dtype=float) / sensitivity
        weights = np.exp(logits - logits.max())
        return rng.choice(weights.size, size=size, p=weights / weights.sum())

    return sampler


#: The sparse-vector variants, by the first authors of the papers Lyu, Su and Li (2017) collect.
#: Each broken one is Dwork-Roth's algorithm with the one change that makes the published variant
#: non-private, so Roth, Stoddard and Chen are *in the style of* LSL17's Algorithms 3, 5 and 6
#: (their other details, e.g. noise scales, differ); Lee-Clifton follows Algorithm 4.
SPARSE_VARIANTS = {
    "dwork-roth": "correct (Dwork-Roth Alg. 2): Lap(2c/eps) threshold, reset after each above, "
    "Lap(4c/eps) query noise, halts after c aboves",
    "roth": "releases the noisy value q_i + nu_i used in the comparison (in the style of LSL17 "
    "Alg. 3; not eps'-DP for any eps')",
    "lee-clifton": "query noise Lap(4/(3 eps)) that does not scale with c, threshold never reset "
    "(LSL17 Alg. 4; only ((1 + 6c)/4) eps-DP)",
    "stoddard": "no query noise at all (in the style of LSL17 Alg. 5; not eps'-DP for any eps')",
    "chen": "no cutoff: answers every query (in the style of LSL17 Alg. 6; its loss grows with the "
    "number of queries)",
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
        # row i: query i's noisy answers in every run (rows contiguous: the loop reads them)
        noisy = a[:, None] + (_laplace(rng, q_scale, (k, size)) if q_scale else np.zeros((k, size)))
        t_hat = threshold + _laplace(rng, t_scale, size)
        pattern = np.zeros(size, dtype=np.int64)
        first = np.full(size, k, dtype=np.int64)
        aboves = np.zeros(size, dtype=np.int64)
        released = np.full(size, np.nan)
        for i in range(k):  # a loop over the k queries of the stream, vectorised over runs
            halted = respect_cutoff & (aboves >= cutoff)
            above = (noisy[i] >= t_hat) & ~halted
            new = above & (first == k)
            first[new] = i
            released[new] = noisy[i, new]
            aboves += above
            if reset:  # a fresh noisy threshold in the runs that answered "above"
                t_hat[above] = threshold + _laplace(rng, t_scale, np.count_nonzero(above))
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


def exact_loss(
    variant: str,
    d: object,
    d_prime: object,
    *,
    epsilon: float = 1.0,
    sensitivity: float = 1.0,
    threshold: float = 0.0,
    cutoff: int = 1,
    points: int = 100_001,
) -> float:
    """The exact privacy loss ``max_S |ln(P[M(D) = S] / P[M(D') = S])|`` of a sparse-vector
    ``variant`` over all above/below transcripts ``S`` on the streams ``d`` and ``d_prime``.

    For the variants that never redraw their noisy threshold (``"lee-clifton"``, and any variant
    that halts at its first above, ``cutoff=1``, except ``"stoddard"`` whose loss is infinite)
    the answers are independent given the threshold, so each transcript's probability is a 1-D
    integral over the threshold, computed here on a fine grid. This is the loss on *this* pair,
    a lower bound on the mechanism's epsilon, and the yardstick for an audit's lower bound.
    """
    if variant not in SPARSE_VARIANTS or variant in ("stoddard", "roth"):
        raise ValueError(f"variant must be 'dwork-roth', 'chen' or 'lee-clifton', got {variant!r}")
    if variant != "lee-clifton" and cutoff != 1:
        raise ValueError(f"{variant!r} redraws its threshold after an above: cutoff must be 1")
    t_scale, q_scale = 2 * cutoff * sensitivity / epsilon, 4 * cutoff * sensitivity / epsilon
    if variant == "lee-clifton":
        t_scale, q_scale = 4 * sensitivity / epsilon, 4 * sensitivity / (3 * epsilon)
    a, b = (np.asarray(x, dtype=float) for x in (d, d_prime))
    span = 60 * t_scale + 60 * q_scale + np.abs(np.r_[a, b]).max()
    t = np.linspace(threshold - span, threshold + span, points)
    weight = np.exp(-np.abs(t - threshold) / t_scale) / (2 * t_scale) * (t[1] - t[0])

    def up(answers):  # row i: P[answer_i + nu >= t] at every grid point t, nu ~ Lap(q_scale)
        x = t[None, :] - answers[:, None]
        tail = 0.5 * np.exp(-np.abs(x) / q_scale)
        return np.where(x >= 0, tail, 1 - tail)

    up_a, up_b = up(a), up(b)
    down_a, down_b = 1 - up_a, 1 - up_b

    def transcripts(i, aboves, pa, pb):  # (P_D, P_D') of every transcript, as integrands
        if i == a.size or aboves == cutoff:
            # plain sums, not `weight @ pa`: a threaded BLAS dot per transcript is 10x slower
            yield (weight * pa).sum(), (weight * pb).sum()
            return
        yield from transcripts(i + 1, aboves + 1, pa * up_a[i], pb * up_b[i])
        yield from transcripts(i + 1, aboves, pa * down_a[i], pb * down_b[i])

    ones = np.ones_like(t)
    return max(abs(math.log(p / q)) for p, q in transcripts(0, 0, ones, ones))
