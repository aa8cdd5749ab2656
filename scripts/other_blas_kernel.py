"""Print the name of an OpenBLAS kernel other than the one this machine uses.

`make test` runs the notebooks a second time with ``OPENBLAS_CORETYPE`` set to this name, so an
output whose last digits depend on the processor's BLAS kernel (a sum reduced in another order,
a fused multiply-add) fails here, on the developer's machine, and not on a reader's laptop.

The alternative is a kernel the processor certainly runs: on x86-64 an AVX2-class machine
(Haswell, Zen, SkylakeX, ...) is sent to Sandybridge (AVX), a Sandybridge to Nehalem (SSE4.2);
on 64-bit ARM an optimised kernel is sent to the generic ARMV8. Prints nothing (and `make test`
skips the second pass with a message) when numpy's BLAS is not OpenBLAS or the machine is
already on its most generic kernel.
"""

from __future__ import annotations

import platform

import numpy  # noqa: F401  (loads numpy's OpenBLAS, so threadpoolctl can see it)
from threadpoolctl import threadpool_info


def own_kernel() -> str | None:
    """The OpenBLAS kernel numpy uses on this machine (e.g. ``"Haswell"``), or None."""
    for lib in threadpool_info():
        if lib.get("internal_api") == "openblas" and "numpy" in lib.get("filepath", ""):
            return lib.get("architecture")
    return None


def other_kernel(own: str | None, machine: str) -> str | None:
    """A kernel other than ``own`` that a ``machine`` (``platform.machine()``) can run."""
    if own is None:
        return None
    own = own.lower()
    if machine in ("x86_64", "AMD64"):
        if own == "sandybridge":
            return "Nehalem"
        if own in ("nehalem", "core2", "katmai", "prescott", "atom"):
            return None
        return "Sandybridge"
    if machine in ("aarch64", "arm64"):
        return None if own == "armv8" else "ARMV8"
    return None


if __name__ == "__main__":
    print(other_kernel(own_kernel(), platform.machine()) or "")
