"""Multiplicative weights over the universe X (Nikolov, CSC2412, "Private Multiplicative Weights").

The learner keeps a synthetic histogram ``p_hat`` (uniform at first). On a mistake, a query
``q`` with ``q(p_hat) - q(p) > alpha``, it sets ``p_hat'(x) ∝ p_hat(x) exp(-eta q(x))`` with
``eta = alpha / 2``; the potential ``D(p || p_hat)`` then falls by at least ``alpha^2 / 4``, so
there are at most ``4 ln|X| / alpha^2`` mistakes.
"""

from __future__ import annotations

import numpy as np


def mw_update(p_hat: np.ndarray, q: np.ndarray, eta: float) -> np.ndarray:
    """``p_hat'(x) ∝ p_hat(x) exp(-eta q(x))``: one multiplicative-weights step.

    A positive ``eta`` moves mass away from where ``q`` is large (the answer was too high); a
    negative ``eta`` moves it towards. Computed in a numerically stable way (shifted exponent).
    """
    log_w = np.log(p_hat, where=p_hat > 0, out=np.full_like(p_hat, -np.inf)) - eta * q
    log_w -= log_w.max()
    w = np.exp(log_w)
    return w / w.sum()
