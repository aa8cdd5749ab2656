"""Issue 27, item 5: how many times is ``mw.mwem``'s ``epsilon`` validated on its way to the noise?

Every function of :mod:`dpteach._validate` is wrapped (the package calls them as
``check.positive(...)``, looked up at call time, so wrapping the module's attributes sees every
call); a call counts when one of its arguments is ``epsilon`` or the per-step ``epsilon / (2T)``
derived from it, and when it comes from outside ``_validate`` (``positive`` calling ``real`` is one
validation, not two). The call sites are the calling function's module and name.

``mwem`` runs once on 20 records over 3 binary attributes, the 1-way marginals, with a distinctive
``epsilon = 0.7317`` and a :class:`~dpteach.privacy.PrivacyBudget` (so the charge path is
followed too): with ``rounds=None`` (the default rule gives ``T = 1``) and with ``rounds=3``.

Usage: python benchmarks/validation_count.py
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections import Counter
from collections.abc import Callable, Iterator

import dpteach as dp
from dpteach import _validate, mw

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


def epsilon_validations(
    epsilon: float = EPSILON, *, rounds: int | None = None, budget: bool = True
) -> list[tuple[str, str]]:
    """``(call site, validator)`` of every validation of ``epsilon`` (or of ``epsilon / (2T)``)
    during one small :func:`dpteach.mw.mwem` run."""
    domain = dp.Domain.binary(3)
    data = dp.Dataset([[0, 1, 1], [1, 0, 0], [1, 1, 0], [0, 0, 1]] * 5, domain)
    workload = dp.MarginalWorkload.all_kway(domain, 1)
    spend = dp.PrivacyBudget(10.0) if budget else None
    with recorded_validations() as calls:
        result = mw.mwem(data, workload, epsilon=epsilon, rounds=rounds, rng=0, budget=spend)
    tracked = {epsilon, result.info["eps_per_step"]}
    return [
        (site, name)
        for site, name, args in calls
        if any(isinstance(a, float) and a in tracked for a in args)
    ]


def main() -> None:
    for rounds in (None, 3):
        found = epsilon_validations(rounds=rounds)
        print(f"mwem(epsilon={EPSILON}, rounds={rounds}, budget=PrivacyBudget): epsilon validated "
              f"{len(found)} times")  # fmt: skip
        for (site, name), times in Counter(found).items():
            print(f"  {times} x _validate.{name:<12} from {site}")
    print(f"without a budget (rounds=3): {len(epsilon_validations(rounds=3, budget=False))} times")


if __name__ == "__main__":
    main()
