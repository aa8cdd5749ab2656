"""Issue 27, item 5: how many times is ``mw.mwem``'s ``epsilon`` validated on its way to the noise?

Every function of :mod:`dpteach._validate` is wrapped (the package calls them as
``check.positive(...)``, looked up at call time, so wrapping the module's attributes sees every
call); a call counts when one of its arguments is ``epsilon`` or the per-step ``epsilon / (2T)``
derived from it, and when it comes from outside ``_validate`` (``positive`` calling ``real`` is one
validation, not two). The call sites are the calling function's module and name.

``mwem`` runs once on 20 records over 3 binary attributes, the 1-way marginals, with a distinctive
``epsilon = 0.7317`` and a :class:`~dpteach.privacy.PrivacyBudget` (so the charge path is
followed too): with ``rounds=None`` (the default rule gives ``T = 1``) and with ``rounds=3``. The
other mechanisms' main paths (:data:`OTHERS`) are counted the same way, with the per-step
epsilons each derives (``eps0``, ``eps/2``, ``eps/(2m)``...).

Usage: python benchmarks/validation_count.py
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections import Counter
from collections.abc import Callable, Iterator

import numpy as np

import dpteach as dp
from dpteach import _validate, iterative, median, mw, projection, smalldb

EPSILON = 0.7317


@contextlib.contextmanager
def recorded_validations() -> Iterator[list[tuple[str, str, tuple]]]:
    """While active, every call of a :mod:`dpteach._validate` function from outside that module
    is appended as ``(call site, validator, argument values)`` to the yielded list."""
    calls: list[tuple[str, str, tuple]] = []
    originals = {
        name: f
        for name, f in vars(_validate).items()
        if inspect.isfunction(f) and f.__module__ == _validate.__name__
    }

    def wrap(name: str, f: Callable) -> Callable:
        def wrapped(*args, **kwargs):
            caller = sys._getframe(1)
            module = caller.f_globals.get("__name__", "?")
            if module != _validate.__name__:
                site = f"{module.removeprefix('dpteach.')}.{caller.f_code.co_qualname}"
                calls.append((site, name, (*args, *kwargs.values())))
            return f(*args, **kwargs)

        return wrapped

    for name, f in originals.items():
        setattr(_validate, name, wrap(name, f))
    try:
        yield calls
    finally:
        for name, f in originals.items():
            setattr(_validate, name, f)


def validations(run: Callable[[], object], tracked: Callable[[object], set]) -> list[tuple]:
    """``(call site, validator)`` of every validation, during ``run()``, of an argument in
    ``tracked(result)`` (the values of the epsilon and of what is derived from it)."""
    with recorded_validations() as calls:
        result = run()
    values = tracked(result)
    return [
        (site, name)
        for site, name, args in calls
        if any(isinstance(a, float) and a in values for a in args)
    ]


DOMAIN = dp.Domain.binary(3)
DATA = dp.Dataset([[0, 1, 1], [1, 0, 0], [1, 1, 0], [0, 0, 1]] * 5, DOMAIN)
WORKLOAD = dp.MarginalWorkload.all_kway(DOMAIN, 1)


def epsilon_validations(
    epsilon: float = EPSILON, *, rounds: int | None = None, budget: bool = True
) -> list[tuple[str, str]]:
    """``(call site, validator)`` of every validation of ``epsilon`` (or of ``epsilon / (2T)``)
    during one small :func:`dpteach.mw.mwem` run."""
    spend = dp.PrivacyBudget(10.0) if budget else None
    return validations(
        lambda: mw.mwem(DATA, WORKLOAD, epsilon=epsilon, rounds=rounds, rng=0, budget=spend),
        lambda result: {epsilon, result.info["eps_per_step"]},
    )


def _guess_and_check(epsilon: float) -> object:
    checker = median.PrivateGuessAndCheck([5, 3, 2, 10], eta=0.05, m=2, epsilon=epsilon, rng=0,
                                          budget=dp.PrivacyBudget(10.0))  # fmt: skip
    for q in np.eye(4):
        if not checker.halted:
            checker.ask(q, 0.9)  # wrong guesses: Laplace answers
    return checker


def _online_pmw(epsilon: float) -> object:
    pmw = mw.OnlinePMW(DATA, epsilon=epsilon, alpha=0.05, rng=0, max_hard=3,
                       budget=dp.PrivacyBudget(10.0))  # fmt: skip
    for q in np.eye(DOMAIN.size)[:4]:
        if not pmw.halted:
            pmw.answer(q)
    return pmw


#: Other mechanisms' main paths: name -> (run at an epsilon, the values derived from it).
OTHERS = {
    "private_mw": (
        lambda e: mw.private_mw(
            DATA, WORKLOAD, epsilon=e, alpha=0.3, rng=0, budget=dp.PrivacyBudget(10.0)
        ),  # fmt: skip
        lambda e, r: {e, r.info["eps0"]},
    ),
    "iterative_construction": (
        lambda e: iterative.iterative_construction(
            DATA,
            WORKLOAD,
            iterative.MultiplicativeWeightsDUA(DOMAIN.size, alpha=0.2),
            alpha=0.4,
            epsilon=e,
            rng=0,
            budget=dp.PrivacyBudget(10.0),
        ),  # fmt: skip
        lambda e, r: {e, r.info["eps0"]},
    ),
    "smalldb": (
        lambda e: smalldb.smalldb(
            DATA, WORKLOAD, epsilon=e, alpha=0.5, rng=0, budget=dp.PrivacyBudget(10.0)
        ),  # fmt: skip
        lambda e, r: {e},
    ),
    "projection_mechanism": (
        lambda e: projection.projection_mechanism(
            DATA, WORKLOAD, epsilon=e, delta=1e-6, rng=0, budget=dp.PrivacyBudget(10.0, 1e-3)
        ),  # fmt: skip
        lambda e, r: {e},
    ),
    "PrivateGuessAndCheck": (_guess_and_check, lambda e, r: {e, e / 2, e / (2 * r.m)}),
    "OnlinePMW": (_online_pmw, lambda e, r: {e, e / 2, e / (2 * r.max_hard)}),
}


def other_validations(name: str, epsilon: float = EPSILON) -> list[tuple[str, str]]:
    """:func:`validations` of ``epsilon`` and its derived values for one of :data:`OTHERS`."""
    run, derived = OTHERS[name]
    return validations(lambda: run(epsilon), lambda result: derived(epsilon, result))


def _show(title: str, found: list[tuple[str, str]]) -> None:
    print(f"{title}: epsilon validated {len(found)} times")
    for (site, name), times in Counter(found).items():
        print(f"  {times} x _validate.{name:<12} from {site}")


def main() -> None:
    for rounds in (None, 3):
        _show(f"mwem(epsilon={EPSILON}, rounds={rounds}, budget=PrivacyBudget)",
              epsilon_validations(rounds=rounds))  # fmt: skip
    print(f"mwem without a budget (rounds=3): {len(epsilon_validations(rounds=3, budget=False))}")
    for name in OTHERS:
        _show(name, other_validations(name))


if __name__ == "__main__":
    main()
