"""dpteach: a runnable, tested textbook companion on private query release.

The package backs the book's notebooks: databases as histograms over a universe X
(:mod:`~dpteach.domain`, :mod:`~dpteach.data`), linear queries and workloads
(:mod:`~dpteach.queries`), the basic mechanisms (:mod:`~dpteach.mechanisms`), privacy accounting
(:mod:`~dpteach.privacy`) and the lectures' bounds (:mod:`~dpteach.theory`).
"""

from . import (
    adaptive,
    audit,
    baselines,
    erm,
    growing,
    iterative,
    median,
    mw,
    projection,
    reconstruction,
    smalldb,
    streams,
    theory,
)
from .adult import ADULT_SUBSETS, load_adult
from .data import Dataset, correlated_data, from_histogram, independent_data, latent_class_data
from .domain import Domain
from .mechanisms import (
    AboveThreshold,
    NumericSparse,
    Sparse,
    exponential,
    gaussian,
    gaussian_sigma,
    laplace,
)
from .privacy import BudgetExceededError, PrivacyBudget, ZCDPBudget
from .queries import (
    MarginalWorkload,
    MatrixWorkload,
    NegatedWorkload,
    SubsetWorkload,
    Workload,
    random_queries,
)

__version__ = "0.1.0"

__all__ = [
    "ADULT_SUBSETS",
    "AboveThreshold",
    "BudgetExceededError",
    "Dataset",
    "Domain",
    "MarginalWorkload",
    "MatrixWorkload",
    "NegatedWorkload",
    "NumericSparse",
    "PrivacyBudget",
    "Sparse",
    "SubsetWorkload",
    "Workload",
    "ZCDPBudget",
    "__version__",
    "adaptive",
    "audit",
    "baselines",
    "erm",
    "growing",
    "iterative",
    "median",
    "mw",
    "projection",
    "reconstruction",
    "smalldb",
    "streams",
    "theory",
    "correlated_data",
    "exponential",
    "from_histogram",
    "gaussian",
    "gaussian_sigma",
    "independent_data",
    "laplace",
    "latent_class_data",
    "load_adult",
    "random_queries",
]
