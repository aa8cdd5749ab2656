"""Privacy accounting: composition, zCDP conversions and a budget that refuses overspending.

Conventions (Dwork and Roth 2014; Bun and Steinke 2016):

* basic composition: ``(eps_1, delta_1), ..., (eps_k, delta_k)`` compose to
  ``(sum eps_i, sum delta_i)`` (Dwork-Roth Thm 3.16);
* advanced composition: ``k`` adaptive ``(eps, delta)``-DP steps are
  ``(sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1), k delta + delta')``-DP (Thm 3.20);
* ``eps``-DP implies ``eps^2/2``-zCDP; ``rho``-zCDP implies
  ``(rho + 2 sqrt(rho ln(1/delta)), delta)``-DP; zCDP composes by adding ``rho``.

The budgets are charged *before* anything is released. A charge that would overspend raises
:class:`BudgetExceededError` and changes nothing, so a refusal releases nothing. Every charge of the
package goes through :func:`charge`: a mechanism that validated its ``budget``, ``epsilon`` and
``delta`` at its public boundary takes its internal path ``_charge`` (the same conversion and
recording, without checking the values again).

Which refusals can depend on the data, exactly:

* a budget refusal depends only on the (public) sequence of charges and the budget's total;
  parameter checks (``ValueError``/``TypeError``) depend only on the arguments' types, shapes and
  public parameters — never on the values of private data;
* :func:`~dpteach.mechanisms.laplace`, :func:`~dpteach.mechanisms.gaussian` and the
  sparse-vector classes never refuse or clamp because of a value's magnitude: every finite value
  is snapped to the safe grid exactly (as a Python integer when it is beyond int64);
* the sparse-vector classes halt after ``c`` "above" answers and online PMW after its hard-query
  cutoff, and private MW stops early: these stops do depend on the data, but only through
  outputs that were already released privately (the above answers, the noisy measurements), so
  they are post-processing and cost nothing beyond the charge;
* a refusal *caused by the data's values* would itself leak (the auditing appendix catches
  ``_broken.refuses_when_count_is_zero``): none of the package's mechanisms does that.

A pure-DP step charged to a :class:`ZCDPBudget` costs ``rho = eps^2/2``; an approximate-DP step
cannot be charged to one; nothing is ever converted the other way silently (use
:func:`zcdp_to_approx_dp` explicitly). Overflowing bounds are returned as ``inf``, never raised.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from . import _validate as check

#: Relative slack for floating-point round-off when comparing spent against total.
_SLACK = 1e-9


class BudgetExceededError(RuntimeError):
    """A charge was refused: it would overspend the privacy budget. Nothing was released."""


class VacuousGuaranteeWarning(UserWarning):
    """A composed guarantee has ``delta >= 1``: it says nothing (any mechanism satisfies it)."""


def _vacuous_delta(delta: float) -> float:
    """``delta`` capped at 1, with a :class:`VacuousGuaranteeWarning` if it reached 1: a total
    ``delta >= 1`` is a true but empty statement, returned (as 1.0) rather than refused, since
    composing is bookkeeping and the caller may only be exploring; the warning says so."""
    if delta >= 1:
        warnings.warn(
            f"the composed delta is {delta:.3g} >= 1: the guarantee is vacuous (returned as 1.0)",
            VacuousGuaranteeWarning,
            stacklevel=3,
        )
        return 1.0
    return delta


def basic_composition(
    epsilons: Sequence[float], deltas: Sequence[float] | None = None
) -> tuple[float, float]:
    """Total ``(eps, delta)`` of adaptively composed mechanisms (Dwork-Roth Thm 3.16).

    A total ``delta >= 1`` is vacuous: it is returned as 1.0 with a
    :class:`VacuousGuaranteeWarning` (a decision of this package: bookkeeping is not refused)."""
    eps = [check.nonnegative(e, "epsilons[i]") for e in _sequence(epsilons, "epsilons")]
    dels = (
        [0.0] * len(eps)
        if deltas is None
        else [check.delta(d, "deltas[i]") for d in _sequence(deltas, "deltas")]
    )
    if len(dels) != len(eps):
        raise ValueError(f"deltas must have {len(eps)} entries, got {len(dels)}")
    return _sum(eps), _vacuous_delta(_sum(dels))


def _sequence(values: object, name: str) -> list:
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of numbers, got {type(values).__name__}")
    return list(values)


def _sum(values: Sequence[float]) -> float:
    """``math.fsum``, but ``inf`` instead of an ``OverflowError``."""
    try:
        return math.fsum(values)
    except OverflowError:
        return math.inf


def advanced_composition(
    epsilon: float, k: int, delta_prime: float, delta: float = 0.0
) -> tuple[float, float]:
    """Total privacy of ``k`` adaptive ``(epsilon, delta)``-DP steps (Dwork-Roth Thm 3.20).

    Returns ``(sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1), k delta + delta')``; a total
    ``delta >= 1`` is vacuous and returned as 1.0 with a :class:`VacuousGuaranteeWarning`.
    """
    epsilon = check.positive(epsilon, "epsilon")
    k = check.integer(k, "k", minimum=1)
    delta_prime = check.delta(delta_prime, "delta_prime", allow_zero=False)
    return _advanced_composition(epsilon, k, delta_prime, check.delta(delta, "delta"))


def _advanced_composition(
    epsilon: float, k: int, delta_prime: float, delta: float = 0.0
) -> tuple[float, float]:
    """:func:`advanced_composition` for checked values."""
    growth = math.expm1(epsilon) if epsilon < 700 else math.inf  # e^eps - 1 overflows past 709
    total = math.sqrt(2 * k * math.log(1 / delta_prime)) * epsilon + k * epsilon * growth
    return total, _vacuous_delta(k * delta + delta_prime)


def advanced_composition_step(epsilon: float, k: int, delta: float) -> float:
    """Per-step ``eps_0 = eps / (2 sqrt(2k ln(1/delta)))`` so that ``k`` steps are (eps, delta)-DP.

    Dwork-Roth Corollary 3.21 (valid for ``epsilon <= 1``, where ``k eps_0 (e^eps_0 - 1)`` is at
    most ``eps/2``).
    """
    epsilon = check.positive(epsilon, "epsilon")
    _corollary_3_21(epsilon)
    k = check.integer(k, "k", minimum=1)
    return _advanced_composition_step(epsilon, k, check.delta(delta, allow_zero=False))


def _corollary_3_21(epsilon: float) -> None:
    if epsilon > 1:
        raise ValueError(f"epsilon must be <= 1 for Corollary 3.21, got {epsilon}")


def _advanced_composition_step(epsilon: float, k: int, delta: float) -> float:
    """:func:`advanced_composition_step` for checked values (still refuses ``epsilon > 1``)."""
    _corollary_3_21(epsilon)
    return epsilon / (2 * math.sqrt(2 * k * math.log(1 / delta)))


def pure_to_zcdp(epsilon: float) -> float:
    """``eps``-DP implies ``eps^2 / 2``-zCDP (Bun-Steinke 2016, Prop. 1.4)."""
    epsilon = check.nonnegative(epsilon, "epsilon")
    return epsilon * epsilon / 2  # inf, not an OverflowError, for huge epsilon


def _chargeable_rho(epsilon: float) -> float:
    """The ``rho = epsilon^2/2`` a :class:`ZCDPBudget` is charged for a pure step of checked
    ``epsilon``, or a ``ValueError`` if it overflows the doubles (such a step cannot be charged)."""
    rho = epsilon * epsilon / 2
    if not math.isfinite(rho):
        raise ValueError(
            f"epsilon={epsilon:.3g} is too large to charge: epsilon^2/2 overflows the doubles"
        )
    return rho


def gaussian_zcdp(sensitivity: float, sigma: float) -> float:
    """The Gaussian mechanism with L2 sensitivity ``Delta`` and std ``sigma`` is
    ``Delta^2 / (2 sigma^2)``-zCDP (Bun-Steinke 2016, Prop. 1.6)."""
    sensitivity, sigma = check.positive(sensitivity, "sensitivity"), check.positive(sigma, "sigma")
    return (sensitivity / sigma) * (sensitivity / sigma) / 2


def zcdp_to_approx_dp(rho: float, delta: float) -> float:
    """``rho``-zCDP implies ``(rho + 2 sqrt(rho ln(1/delta)), delta)``-DP (Bun-Steinke Prop 1.3)."""
    rho = check.nonnegative(rho, "rho")
    delta = check.delta(delta, allow_zero=False)
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))


def zcdp_delta(rho: float, epsilon: float) -> float:
    """The ``delta`` for which ``rho``-zCDP implies ``(epsilon, delta)``-DP, by the conversion of
    Canonne, Kamath and Steinke 2020 (arXiv:2004.00010, Corollary 13):

        delta = inf_{alpha > 1} exp((alpha-1)(alpha rho - epsilon)) (1 - 1/alpha)^alpha / (alpha-1),

    tighter than Bun-Steinke's :func:`zcdp_to_approx_dp`. Every ``alpha > 1`` gives a valid
    ``delta``; the exponent is convex in ``alpha`` with derivative
    ``(2 alpha - 1) rho - epsilon + ln(1 - 1/alpha)``, whose root is found by bisection (a
    numerical inaccuracy can only make ``delta`` larger, never invalid).
    """
    return _zcdp_delta(check.nonnegative(rho, "rho"), check.nonnegative(epsilon, "epsilon"))


def _zcdp_delta(rho: float, epsilon: float) -> float:
    """:func:`zcdp_delta` for checked values."""
    if rho == 0:
        return 0.0
    if math.isinf(rho):
        return 1.0

    def slope(alpha: float) -> float:
        return (2 * alpha - 1) * rho - epsilon + math.log1p(-1 / alpha)

    # bisect on u = ln(alpha - 1), from alpha = 1 + e^-30 to past the root (below
    # (1 + eps)/(2 rho) + 2), capped at alpha = 1 + e^700 (a valid alpha if the root is beyond)
    lo, hi = -30.0, min(max(math.log(epsilon + 1) - math.log(2 * rho), 1.0) + 1.0, 700.0)
    for _ in range(100):
        mid = (lo + hi) / 2
        if slope(1 + math.exp(mid)) < 0:
            lo = mid
        else:
            hi = mid
    alpha = 1 + math.exp(hi)
    log_delta = (alpha - 1) * (alpha * rho - epsilon) + alpha * math.log1p(-1 / alpha)
    return min(1.0, math.exp(min(log_delta - math.log(alpha - 1), 0.0)))


def zcdp_rho_for(epsilon: float, delta: float) -> float:
    """The largest ``rho`` (to a relative 1e-9, rounded down) whose :func:`zcdp_delta` at
    ``epsilon`` is at most ``delta``: a ``rho``-zCDP mechanism is then ``(epsilon, delta)``-DP."""
    epsilon = check.positive(epsilon, "epsilon")
    return _zcdp_rho_for(epsilon, check.delta(delta, allow_zero=False))


def _zcdp_rho_for(epsilon: float, delta: float) -> float:
    """:func:`zcdp_rho_for` for checked values."""
    # delta(rho) increases in rho: bisect on log(rho), keeping _zcdp_delta(lo) <= delta < ...(hi)
    lo, hi = -700.0, 700.0  # rho from e^-700 (refused below) to e^700
    if _zcdp_delta(math.exp(lo), epsilon) > delta:
        raise ValueError(f"epsilon={epsilon:.3g}, delta={delta:.3g} need an unrepresentable rho")
    for _ in range(200):
        mid = (lo + hi) / 2
        if _zcdp_delta(math.exp(mid), epsilon) <= delta:
            lo = mid
        else:
            hi = mid
    root = lo
    rho = math.exp(root) * (1 - 1e-9)
    while _zcdp_delta(rho, epsilon) > delta:
        rho *= 1 - 1e-9
    return rho


def approx_dp_to_zcdp(epsilon: float, delta: float) -> float:
    """The largest ``rho`` whose conversion :func:`zcdp_to_approx_dp` gives at most ``epsilon``."""
    epsilon = check.positive(epsilon, "epsilon")
    log_term = math.log(1 / check.delta(delta, allow_zero=False))
    # Solve rho + 2 sqrt(rho L) = eps for sqrt(rho): a quadratic with positive root.
    root = -math.sqrt(log_term) + math.sqrt(log_term + epsilon)
    return root**2


@dataclass(frozen=True)
class Charge:
    """One entry of a budget's ledger."""

    label: str
    epsilon: float
    delta: float


class PrivacyBudget:
    """An ``(epsilon, delta)`` budget under basic composition.

    Parameters
    ----------
    epsilon
        Total epsilon, finite and > 0.
    delta
        Total delta in [0, 1).

    Examples
    --------
    >>> budget = PrivacyBudget(1.0)
    >>> budget.charge(0.5, label="first query")
    >>> budget.remaining_epsilon
    0.5
    """

    def __init__(self, epsilon: float, delta: float = 0.0):
        self.epsilon = check.positive(epsilon, "epsilon")
        self.delta = check.delta(delta)
        self.ledger: list[Charge] = []

    @property
    def spent_epsilon(self) -> float:
        return _sum([c.epsilon for c in self.ledger])

    @property
    def spent_delta(self) -> float:
        return _sum([c.delta for c in self.ledger])

    @property
    def remaining_epsilon(self) -> float:
        return max(self.epsilon - self.spent_epsilon, 0.0)

    @property
    def remaining_delta(self) -> float:
        return max(self.delta - self.spent_delta, 0.0)

    def trial(self) -> PrivacyBudget:
        """A copy with the same limits and spending to try charges on (this one is untouched)."""
        other = copy.copy(self)
        other.ledger = list(self.ledger)  # its entries are immutable: a shallow copy suffices
        return other

    def can_afford(self, epsilon: float, delta: float = 0.0) -> bool:
        """Whether :meth:`charge` with these arguments would succeed."""
        return self._affords(check.nonnegative(epsilon, "epsilon"), check.delta(delta))

    def _affords(self, epsilon: float, delta: float) -> bool:
        """:meth:`can_afford` for checked values."""
        eps_ok = self.spent_epsilon + epsilon <= self.epsilon * (1 + _SLACK)
        delta_ok = delta == 0 or self.spent_delta + delta <= self.delta * (1 + _SLACK)
        return eps_ok and delta_ok

    def charge(self, epsilon: float, delta: float = 0.0, *, label: str = "") -> None:
        """Record a spend, or raise :class:`BudgetExceededError` and change nothing."""
        self._record(check.nonnegative(epsilon, "epsilon"), check.delta(delta), label)

    def _record(self, epsilon: float, delta: float, label: str) -> None:
        """:meth:`charge` for checked values (the path of :func:`charge`)."""
        if not self._affords(epsilon, delta):
            raise BudgetExceededError(
                f"refused {label or 'charge'} of (epsilon={epsilon:.6g}, delta={delta:.3g}): "
                f"spent ({self.spent_epsilon:.6g}, {self.spent_delta:.3g}) of "
                f"({self.epsilon:.6g}, {self.delta:.3g}); nothing was released"
            )
        self.ledger.append(Charge(label, epsilon, delta))

    def __repr__(self) -> str:
        return (
            f"PrivacyBudget(epsilon={self.epsilon}, delta={self.delta}, "
            f"spent=({self.spent_epsilon:.6g}, {self.spent_delta:.3g}))"
        )


class ZCDPBudget:
    """A ``rho``-zCDP budget; zCDP composes by adding ``rho`` (Bun-Steinke 2016, Lemma 2.3).

    A different kind from :class:`PrivacyBudget`: its :meth:`charge` takes ``rho``, never an
    epsilon. Pure ``eps``-DP steps are charged ``eps^2/2`` (:meth:`charge_pure`, and every
    mechanism given a ``ZCDPBudget`` does so through :func:`charge`); the total converts to
    ``(eps, delta)``-DP only explicitly, with :meth:`to_approx_dp`.
    """

    def __init__(self, rho: float):
        self.rho = check.positive(rho, "rho")
        self.ledger: list[tuple[str, float]] = []

    @property
    def spent(self) -> float:
        return _sum([r for _, r in self.ledger])

    @property
    def remaining(self) -> float:
        return max(self.rho - self.spent, 0.0)

    def trial(self) -> ZCDPBudget:
        """A copy with the same limits and spending to try charges on (this one is untouched)."""
        other = copy.copy(self)
        other.ledger = list(self.ledger)
        return other

    def can_afford(self, rho: float) -> bool:
        """Whether :meth:`charge` of ``rho`` would succeed."""
        return self._affords(check.nonnegative(rho, "rho"))

    def _affords(self, rho: float) -> bool:
        """:meth:`can_afford` for a checked ``rho``."""
        return self.spent + rho <= self.rho * (1 + _SLACK)

    def charge(self, rho: float, *, label: str = "") -> None:
        """Record a ``rho`` spend, or raise :class:`BudgetExceededError` and change nothing."""
        self._record(check.nonnegative(rho, "rho"), label)

    def _record(self, rho: float, label: str) -> None:
        """:meth:`charge` for a checked ``rho`` (the path of :func:`charge`)."""
        if not self._affords(rho):
            raise BudgetExceededError(
                f"refused {label or 'charge'} of rho={rho:.6g}: spent {self.spent:.6g} of "
                f"{self.rho:.6g}; nothing was released"
            )
        self.ledger.append((label, rho))

    def charge_pure(self, epsilon: float, *, label: str = "") -> None:
        """Charge an ``epsilon``-DP step as ``epsilon^2/2``-zCDP."""
        self._record(_chargeable_rho(check.nonnegative(epsilon, "epsilon")), label)

    def to_approx_dp(self, delta: float) -> float:
        """The epsilon of the ``(epsilon, delta)``-DP guarantee of the whole budget."""
        return zcdp_to_approx_dp(self.rho, delta)


def check_budget(budget: object, name: str = "budget") -> PrivacyBudget | ZCDPBudget | None:
    """``budget`` itself if it is a :class:`PrivacyBudget`, a :class:`ZCDPBudget` or ``None``,
    else a ``TypeError`` naming both kinds (mechanisms call it before their first charge)."""
    if budget is not None and not isinstance(budget, PrivacyBudget | ZCDPBudget):
        raise TypeError(
            f"{name} must be a PrivacyBudget, a ZCDPBudget or None, got {type(budget).__name__}"
        )
    return budget


def cost(
    budget: PrivacyBudget | ZCDPBudget | None,
    epsilon: float,
    delta: float = 0.0,
    *,
    label: str = "",
    rho: float | None = None,
) -> float:
    """What :func:`charge` would record, in the budget's own unit: ``epsilon`` for a
    :class:`PrivacyBudget`, ``rho`` (or ``epsilon^2/2`` for a pure step) for a
    :class:`ZCDPBudget`, 0 for ``None``; a ``TypeError`` for an approximate-DP step on a
    :class:`ZCDPBudget` or for anything that is not a budget. Records nothing."""
    budget = check_budget(budget)
    epsilon, delta, rho = _checked(budget, epsilon, delta, rho)
    return _cost(budget, epsilon, delta, label=label, rho=rho)


def _checked(
    budget: PrivacyBudget | ZCDPBudget | None, epsilon: object, delta: object, rho: object
) -> tuple:
    """The arguments of :func:`charge` validated for the kind of ``budget`` (what it records)."""
    if isinstance(budget, PrivacyBudget):
        return check.nonnegative(epsilon, "epsilon"), check.delta(delta), rho
    if isinstance(budget, ZCDPBudget):
        if rho is not None:
            return epsilon, delta, check.nonnegative(rho, "rho")
        if not delta > 0:  # else a TypeError from _cost: no zCDP guarantee
            return check.nonnegative(epsilon, "epsilon"), delta, rho
    return epsilon, delta, rho


def _cost(
    budget: PrivacyBudget | ZCDPBudget | None,
    epsilon: float,
    delta: float,
    *,
    label: str,
    rho: float | None,
) -> float:
    """:func:`cost` for a checked budget and checked values."""
    if budget is None:
        return 0.0
    if isinstance(budget, PrivacyBudget):
        return epsilon
    if rho is not None:
        return rho
    if delta > 0:
        raise TypeError(
            f"{label or 'this step'} is (epsilon, delta)-DP with delta={delta:.3g} > 0, which "
            "implies no zCDP guarantee: charge it to a PrivacyBudget, not a ZCDPBudget"
        )
    return epsilon * epsilon / 2  # pure_to_zcdp: inf for a huge epsilon


def can_afford(
    budget: PrivacyBudget | ZCDPBudget | None,
    epsilon: float,
    delta: float = 0.0,
    *,
    rho: float | None = None,
) -> bool:
    """Whether :func:`charge` with these arguments would succeed (``None`` always can); raises
    the same ``TypeError`` as :func:`charge` for a step the budget's kind cannot account."""
    budget = check_budget(budget)
    epsilon, delta, rho = _checked(budget, epsilon, delta, rho)
    return _can_afford(budget, epsilon, delta, rho=rho)


def _can_afford(
    budget: PrivacyBudget | ZCDPBudget | None,
    epsilon: float,
    delta: float = 0.0,
    *,
    rho: float | None = None,
) -> bool:
    """:func:`can_afford` for a checked budget and checked values."""
    amount = _cost(budget, epsilon, delta, label="", rho=rho)
    if budget is None:
        return True
    if isinstance(budget, PrivacyBudget):
        return budget._affords(amount, delta)
    return budget._affords(amount)


def charge(
    budget: PrivacyBudget | ZCDPBudget | None,
    epsilon: float,
    delta: float = 0.0,
    *,
    label: str,
    rho: float | None = None,
) -> None:
    """Charge one ``(epsilon, delta)``-DP step to ``budget`` (``None``: nothing to charge).

    The one function through which every mechanism of the package charges a budget (a test
    checks that each of them charges both kinds correctly). A :class:`PrivacyBudget` is charged
    ``(epsilon, delta)``. A :class:`ZCDPBudget` is charged ``rho`` if the step states its own zCDP
    guarantee (the Gaussian mechanism), else a pure ``epsilon``-DP step as ``rho = epsilon^2 / 2``
    (Bun-Steinke Prop. 1.4); an approximate-DP step (``delta > 0``) has no zCDP guarantee and is
    refused. Never converted the other way. Refusals raise before anything is recorded.

    It validates its arguments, then takes :func:`_charge`. A mechanism that validated
    ``budget`` (:func:`check_budget`), ``epsilon``, ``delta`` and ``rho`` at its own public
    boundary calls :func:`_charge` directly: the same conversion and recording, without checking
    the values a second time (issue 27: validate once).
    """
    budget = check_budget(budget)
    epsilon, delta, rho = _checked(budget, epsilon, delta, rho)
    _charge(budget, epsilon, delta, label=label, rho=rho)


def _charge(
    budget: PrivacyBudget | ZCDPBudget | None,
    epsilon: float,
    delta: float = 0.0,
    *,
    label: str,
    rho: float | None = None,
) -> None:
    """:func:`charge` for a checked budget (a budget or ``None``) and checked values: the path
    every charge of the package takes (mechanisms call it after validating their inputs)."""
    amount = _cost(budget, epsilon, delta, label=label, rho=rho)
    if budget is None:
        return
    if isinstance(budget, PrivacyBudget):
        budget._record(amount, delta, label)
    else:  # an epsilon^2/2 that overflows cannot be charged
        budget._record(amount if rho is not None else _chargeable_rho(epsilon), label)
