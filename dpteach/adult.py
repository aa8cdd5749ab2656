"""The UCI Adult data, bundled with the package (48,842 people, 14 coded attributes).

Source: Becker, B. and Kohavi, R. (1996). *Adult*. UCI Machine Learning Repository.
https://doi.org/10.24432/C5XW20. Licensed under Creative Commons Attribution 4.0 International
(CC BY 4.0). The integer coding is the one distributed with the private-pgm project (Apache-2.0)
and used by the private marginal-release literature (AIM, RAP, ...), so results are comparable
with published benchmarks. The bundled ``datasets/adult.csv.gz`` is made by
``scripts/prepare_adult.py`` (see ``datasets/README.md``).
"""

from __future__ import annotations

import functools
import gzip
from collections.abc import Sequence
from importlib import resources

import numpy as np

from .data import Dataset
from .domain import Domain

#: Number of values of each coded attribute, in file order.
ADULT_DOMAIN = {
    "age": 85,
    "workclass": 9,
    "fnlwgt": 100,
    "education-num": 16,
    "marital-status": 7,
    "occupation": 15,
    "relationship": 6,
    "race": 5,
    "sex": 2,
    "capital-gain": 100,
    "capital-loss": 100,
    "hours-per-week": 99,
    "native-country": 42,
    "income>50K": 2,
}
ADULT_ROWS = 48_842

#: Attribute subsets whose joint universe fits a dense histogram:
#: ``"tiny"`` |X| = 20 (for printing everything), ``"small"`` |X| = 7,560,
#: ``"medium"`` |X| = 1,814,400 (marginal-release experiments).
ADULT_SUBSETS = {
    "tiny": ["sex", "race", "income>50K"],
    "small": ["sex", "race", "relationship", "marital-status", "workclass", "income>50K"],
    "medium": [
        "sex",
        "race",
        "relationship",
        "marital-status",
        "workclass",
        "education-num",
        "occupation",
        "income>50K",
    ],
}


@functools.lru_cache(maxsize=1)
def _records() -> np.ndarray:
    with resources.files("dpteach").joinpath("datasets/adult.csv.gz").open("rb") as raw:
        with gzip.open(raw, "rt") as text:
            header = text.readline().strip().split(",")
            if header != list(ADULT_DOMAIN):
                raise RuntimeError(f"the bundled Adult file has an unexpected header {header}")
            records = np.loadtxt(text, delimiter=",", dtype=np.int64, ndmin=2)
    records.flags.writeable = False
    return records


def load_adult(attributes: Sequence[str] | str | None = None) -> Dataset:
    """The UCI Adult data as a :class:`~dpteach.data.Dataset` of 48,842 coded records.

    Parameters
    ----------
    attributes
        ``None`` for all 14 attributes (a universe far too large for a dense histogram), a list of
        attribute names (in the order wanted), or the name of a preset in :data:`ADULT_SUBSETS`.

    Examples
    --------
    >>> adult = load_adult("small")
    >>> adult.n, adult.domain.size
    (48842, 7560)
    """
    domain = Domain(ADULT_DOMAIN)
    if attributes is None:
        return Dataset(_records().copy(), domain)
    if isinstance(attributes, str):
        if attributes not in ADULT_SUBSETS:
            raise ValueError(
                f"attributes must be a list of names or a preset in {sorted(ADULT_SUBSETS)}, "
                f"got {attributes!r}"
            )
        attributes = ADULT_SUBSETS[attributes]
    if not isinstance(attributes, Sequence):
        raise TypeError(
            "attributes must be None, a preset name or a sequence of attribute names, "
            f"got {attributes!r}"
        )
    axes = list(domain.axes(attributes))
    return Dataset(_records()[:, axes].copy(), domain.project(attributes))
