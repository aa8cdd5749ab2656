"""The median mechanism over explicitly enumerated small databases (Stemmer, Lecture 4; Roth and
Roughgarden 2010; Roth, Lecture 7).

Claim 1 of the lecture: for any sample ``S`` and ``k`` statistical queries, some database ``S'`` of
only ``n' = ln(4k) / (2 alpha^2)`` records answers every query within ``alpha``. So the set of *all*
databases of ``n'`` records contains a good candidate ``S*``. The median mechanism guesses each
answer as the *median* of the surviving candidates' answers and asks :class:`GuessAndCheck` whether
the guess is right; on a wrong guess it discards every candidate far from the (accurate) answer. At
least half go each time and ``S*`` never does, so there are at most ``log2 |S_0|`` wrong guesses.

Candidates are rows of a matrix of normalised histograms: databases of ``n'`` records as
*multisets* (order does not change a statistical query), :func:`small_databases`.
:class:`HalvingDUA` is the same halving update packaged as a database update algorithm for the
IC mechanism (chapter 01).

The lecture's (deterministic) median mechanism and :class:`GuessAndCheck` are *not* differentially
private; the lecture analyses them by transcript compression, for statistical accuracy. Roth and
Roughgarden's original median mechanism is differentially private; here
:class:`PrivateGuessAndCheck` (sparse vector + Laplace) is the private checker and
:class:`PrivateMedianMechanism` the median mechanism built on it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from . import _validate as check
from .audit import encode, repeat
from .mechanisms import Seed, Sparse, _laplace, _safe_laplace_grid
from .privacy import PrivacyBudget, ZCDPBudget, _charge, check_budget
from .queries import Workload
from .theory import MAX_COUNT_DIGITS, log_multiset_count, multiset_count  # noqa: F401 (exported)

#: Largest candidate set (number of databases) that :func:`small_databases` enumerates.
MAX_CANDIDATES = 2_000_000
#: Largest candidate matrix (databases x cells) that :func:`small_databases` allocates (128 MiB).
MAX_CANDIDATE_CELLS = 2**24


def check_candidates(domain_size: int, m: int) -> int:
    """The number of databases :func:`small_databases` would enumerate, or a ``ValueError`` (with
    the size and the limit) if it exceeds :data:`MAX_CANDIDATES` databases or
    :data:`MAX_CANDIDATE_CELLS` matrix entries. Estimated with ``lgamma`` before anything is
    computed; depends on the public ``domain_size`` and ``m`` only (mechanisms call it before
    they charge a budget)."""
    size = check.integer(domain_size, "domain_size", minimum=1)
    m = check.integer(m, "m", minimum=1)
    log_count = log_multiset_count(size, m)  # math.comb of a huge m would itself take very long
    count = math.comb(size + m - 1, m) if log_count < 60 else None
    if count is None or count > MAX_CANDIDATES:
        shown = (
            check.count(count) if count is not None else f"about 10^{log_count / math.log(10):.0f}"
        )
        raise ValueError(
            f"there are {shown} databases of m={m} records over {size} cells, more than the "
            f"limit {MAX_CANDIDATES:,}; choose a smaller m or universe"
        )
    if count * size > MAX_CANDIDATE_CELLS:
        raise ValueError(
            f"the {count:,} databases of m={m} records over {size} cells need a matrix of "
            f"{check.count(count * size)} entries, more than the limit {MAX_CANDIDATE_CELLS:,}; "
            "choose a smaller m or universe"
        )
    return count


def small_databases(domain_size: int, m: int) -> np.ndarray:
    """Every normalised histogram of ``m`` records over a universe of ``domain_size`` cells.

    Returns an array of shape ``(C(|X| + m - 1, m), |X|)``; each row sums to 1. Refuses, before
    allocating anything, a set of more than :data:`MAX_CANDIDATES` databases or a matrix of more
    than :data:`MAX_CANDIDATE_CELLS` entries, with the size and the limit.
    """
    count = check_candidates(domain_size, m)
    size, m = int(domain_size), int(m)
    # Stars and bars: the size - 1 bars among m + size - 1 slots give the counts; reversed, the
    # rows come in the order of itertools.combinations_with_replacement(range(size), m).
    slots = m + size - 1
    bars = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(slots), size - 1)),
        dtype=np.int64,
        count=count * (size - 1),
    ).reshape(count, size - 1)[::-1]
    edges = np.hstack([np.full((count, 1), -1), bars, np.full((count, 1), slots)])
    hist = np.diff(edges, axis=1) - 1
    return hist / m


def _sample_counts(sample: object) -> np.ndarray:
    """The counts ``h`` of a sample (a :class:`~dpteach.Dataset` or non-negative integer counts)."""
    if hasattr(sample, "counts"):
        sample = sample.counts()
    h = check.array(sample, "sample", ndim=1)
    if h.size == 0 or np.any(h < 0) or np.any(h != np.round(h)) or h.sum() < 1:
        raise ValueError("sample must be non-negative integer counts over X with at least 1 record")
    return h


def _statistical_query(q: object, size: int) -> np.ndarray:
    q = check.array(q, "query", ndim=1)
    if q.shape[0] != size:
        raise ValueError(f"query must have length {size} (the universe size), got {q.shape[0]}")
    if np.any((q < 0) | (q > 1)):
        raise ValueError("query must take values in [0, 1] (a statistical query)")
    return q


def subsample_success(
    sample: object, queries: object, *, n_prime: int, alpha: float, trials: int, rng: Seed
) -> float:
    """The fraction of ``trials`` subsamples ``S' ~ (U_S)^{n'}`` with ``max_i |q_i(S') - q_i(S)|
    <= alpha`` (Lecture 4, Claim 1: at least 1/2 when ``n' = ln(4k) / (2 alpha^2)``).

    ``sample``: counts over X (or a Dataset); ``queries``: a ``k x |X|`` matrix of statistical
    queries. A passed Generator is consumed.
    """
    h = _sample_counts(sample)
    Q = check.array(queries, "queries", ndim=2)
    for q in Q:
        _statistical_query(q, h.size)
    n_prime = check.integer(n_prime, "n_prime", minimum=1)
    alpha = check.positive(alpha, "alpha")
    trials = check.integer(trials, "trials", minimum=1)
    gen = check.rng(rng)
    p = h / h.sum()
    sub = gen.multinomial(n_prime, p, size=trials) / n_prime
    errors = np.max(np.abs(sub @ Q.T - Q @ p), axis=1)
    return float(np.mean(errors <= alpha))


class GuessAndCheck:
    """GuessAndCheck(eta, m) on a sample ``S`` (Lecture 4, as the lecture uses it; our
    reconstruction of the previous lecture's details).

    :meth:`ask` takes a statistical query ``q`` and a guess ``g``. If ``|g - q(S)| <= eta`` it
    answers ``g``; otherwise (a *wrong guess*) it answers ``q(S)`` rounded to the nearest multiple
    of ``eta/4``, which is ``eta/8``-, hence ``eta/4``-empirically accurate, and comes from a set of
    about ``4/eta`` values: the transcript is then described by the positions of the wrong guesses
    and these rounded values, the compression behind the lecture's accuracy bound. After ``m`` wrong
    guesses (the ``m``-th is answered) it halts and answers nothing more.

    ``eta`` must be in ``(0, 1]`` and guesses in ``[0, 1]`` (values of statistical queries); a
    refused call changes nothing.

    Not differentially private (every answer is a deterministic function of ``S``); it is
    analysed by transcript compression. See :class:`PrivateGuessAndCheck`.
    """

    def __init__(self, sample: object, *, eta: float, m: int):
        self._counts = _sample_counts(sample)
        self.n = int(self._counts.sum())
        self._p = self._counts / self.n
        self.eta = check.positive(eta, "eta")
        if self.eta > 1:
            raise ValueError(f"eta must be in (0, 1] (statistical queries), got {self.eta}")
        self.m = check.integer(m, "m", minimum=1)
        self.wrong = 0
        self.asked = 0

    @property
    def halted(self) -> bool:
        """True once ``m`` guesses were wrong."""
        return self.wrong >= self.m

    def _check(self, q: object, guess: object) -> tuple[np.ndarray, float]:
        if self.halted:
            raise RuntimeError(f"{type(self).__name__} has halted after m={self.m} wrong guesses")
        q, guess = _statistical_query(q, self._p.size), check.real(guess, "guess")
        if not 0 <= guess <= 1:
            raise ValueError(f"guess must be in [0, 1] (a statistical query's value), got {guess}")
        return q, guess

    def ask(self, q: object, guess: float) -> float:
        """The guess if it is within ``eta`` of ``q(S)``, else ``q(S)`` on the ``eta/4`` grid."""
        q, guess = self._check(q, guess)
        self.asked += 1
        value = float(q @ self._p)
        if abs(guess - value) <= self.eta:
            return guess
        self.wrong += 1
        step = self.eta / 4
        return float(np.clip(round(value / step) * step, 0.0, 1.0))


class PrivateGuessAndCheck(GuessAndCheck):
    """The differentially private GuessAndCheck: a sparse-vector test and Laplace answers.

    A guess is *wrong* when the sparse vector (:class:`~dpteach.Sparse`, threshold ``eta``,
    cutoff ``m``, ``epsilon/2``) finds ``|g - q(S)|`` above the threshold; the answer is then
    ``q(S) + Lap(2m / (epsilon n))`` (:func:`~dpteach.laplace` at ``epsilon / (2m)``), otherwise the
    guess. After ``m`` wrong guesses it halts and answers nothing more.

    Guarantee: ``epsilon``-DP under replace-one neighbours for any adaptively chosen stream of
    (query, guess) pairs: the sparse vector is ``epsilon/2``-DP for adaptive queries (Dwork-Roth
    Thm 3.25), and composed adaptively (Lecture 4 Theorem 8, step by step, as for Dwork-Roth's
    NumericSparse) with at most ``m`` Laplace answers of ``epsilon/(2m)`` each. Sensitivity:
    ``1/n`` for ``q(S)`` and for ``|g - q(S)|``. The whole ``epsilon`` is charged to ``budget`` on
    construction, after both noise scales were validated and before anything is drawn or
    released. Accuracy is now approximate: a guess within ``eta`` may be called wrong, and one a
    little beyond ``eta`` accepted, by the sparse vector's noise.
    """

    def __init__(
        self,
        sample: object,
        *,
        eta: float,
        m: int,
        epsilon: float,
        rng: Seed,
        budget: PrivacyBudget | ZCDPBudget | None = None,
    ):
        super().__init__(sample, eta=eta, m=m)
        self.epsilon = check.positive(epsilon, "epsilon")
        gen = check.rng(rng)
        # Validate both noise scales (public parameters only) before charging: neither the sparse
        # vector nor a later Laplace answer may refuse after the budget was spent.
        self._sparse = Sparse._checked(
            self.eta, sensitivity=1 / self.n, epsilon=self.epsilon / 2, rng=gen, cutoff=self.m
        )
        self._answer_grid = _safe_laplace_grid(1 / self.n, self.epsilon / (2 * self.m))
        _charge(check_budget(budget), self.epsilon, label="PrivateGuessAndCheck")
        self._rng = gen

    def _answer(self, value: float) -> float:
        """``value + Lap(1 / (n eps/(2m)))``, safe (the grid was checked before the charge)."""
        return _laplace(value, self._answer_grid, self._rng)

    def ask(self, q: object, guess: float) -> float:
        """The guess if the sparse vector finds it close, else a Laplace answer."""
        q, guess = self._check(q, guess)
        self.asked += 1
        value = float(q @ self._p)
        if not self._sparse.test(abs(guess - value)):
            return guess
        self.wrong += 1
        return self._answer(value)


def _candidates(candidates: object, size: int | None = None) -> np.ndarray:
    """A non-empty matrix whose rows are normalised histograms (over ``size`` cells if given)."""
    C = check.array(candidates, "candidates", ndim=2)
    if C.shape[0] < 1 or (size is not None and C.shape[1] != size):
        wanted = "" if size is None else f" with {size} columns (the universe size)"
        raise ValueError(
            f"candidates must be a non-empty matrix{wanted}, one database per row, got shape "
            f"{C.shape}"
        )
    if np.any(C < 0) or np.any(np.abs(C.sum(axis=1) - 1) > check.SUM_TOLERANCE):
        raise ValueError(
            "candidates must be normalised histograms (rows non-negative, summing to 1), e.g. "
            "small_databases(domain_size, m)"
        )
    return C


def best_candidate(candidates: object, queries: object, sample: object) -> tuple[int, float]:
    """``S*`` in hindsight: the candidate closest to the sample on all the queries, and its error
    ``max_i |q_i(S*) - q_i(S)|`` (a non-private diagnostic)."""
    h = _sample_counts(sample)
    C = _candidates(candidates, h.size)
    Q = check.array(queries, "queries", ndim=2)
    for q in Q:
        _statistical_query(q, h.size)
    errors = np.max(np.abs(C @ Q.T - Q @ (h / h.sum())), axis=1)
    i = int(np.argmin(errors))
    return i, float(errors[i])


class MedianMechanism:
    """The median mechanism (Lecture 4), answering statistical queries one at a time.

    With survivors ``S_{i-1}`` (rows of ``candidates``, initially all), :meth:`answer` guesses ``g_i
    = median{q_i(S') : S' in S_{i-1}}``, asks :class:`GuessAndCheck` ``(eta, m)`` on the sample, and
    after a wrong guess keeps only the candidates with ``|q_i(S') - a_i| <= eta/2``. A wrong guess
    has ``|g_i - a_i| > eta - eta/4 > eta/2``, so every candidate on the median's far side goes: at
    least half (the auxiliary claim). A candidate ``S*`` within ``eta/4`` of the sample on every
    query is never removed. Hence at most ``log2 |S_0|`` wrong guesses, and the default ``m =
    floor(log2 |S_0|) + 1`` is never exhausted while ``S*`` exists (our GuessAndCheck halts *after*
    its ``m``-th wrong guess). The lecture's ``S_0 = X^{n'}`` with ``m = n' log2 |X|``; here ``S_0``
    is whatever candidate set is passed (e.g. :func:`small_databases`).

    Not differentially private: analysed by transcript compression, for statistical accuracy.
    ``survivors[i]`` is ``|S_i|`` (``survivors[0] = |S_0|``), ``wrong[i-1]`` whether guess ``i``
    was wrong. :meth:`answer` returns ``None`` once GuessAndCheck has halted. Should a wrong guess
    leave no survivor (then no candidate is within ``eta/4`` of the sample on every query, as can
    happen for a candidate set smaller than the lecture's), the survivors are kept unchanged.
    """

    def __init__(self, sample: object, *, candidates: object, eta: float, m: int | None = None):
        h = _sample_counts(sample)
        C = _candidates(candidates, h.size)
        if m is None:
            m = math.floor(math.log2(C.shape[0])) + 1
        self.candidates = C
        self.checker = GuessAndCheck(h, eta=eta, m=m)
        self.eta, self.m = self.checker.eta, self.checker.m
        self._alive = np.arange(C.shape[0])  # indices of the survivors S_{i-1}
        self.survivors = [C.shape[0]]
        self.wrong: list[bool] = []

    def answer(self, q: object) -> float | None:
        """The answer ``a_i`` to statistical query ``q`` (``None`` after GuessAndCheck halted)."""
        if self.checker.halted:
            return None
        q = _statistical_query(q, self.candidates.shape[1])
        values = self.candidates[self._alive] @ q
        # a median of values in [0, 1]; the clip only undoes floating-point round-off of C @ q
        # (a candidate's sum of weights can exceed 1 in its last bit)
        guess = float(np.clip(np.median(values), 0.0, 1.0))
        a = self.checker.ask(q, guess)
        wrong = a != guess
        if wrong:
            kept = self._alive[np.abs(values - a) <= self.eta / 2]
            # No survivor near a_i: no candidate is within eta/4 of the sample on every query (the
            # premise of the analysis fails for this candidate set); the survivors stay.
            self._alive = kept if kept.size else self._alive
        self.wrong.append(bool(wrong))
        self.survivors.append(int(self._alive.size))
        return a

    @property
    def alive(self) -> np.ndarray:
        """Boolean mask of the surviving candidates ``S_i``."""
        mask = np.zeros(self.candidates.shape[0], dtype=bool)
        mask[self._alive] = True
        return mask

    @property
    def kept_all(self) -> list[int]:
        """The queries ``i`` (1-based) whose guess was wrong yet removed no candidate: no survivor
        was within ``eta/2`` of ``a_i``, so all were kept (our change to step (e), which would
        empty the set). A wrong guess otherwise removes at least half, so this is exactly where
        ``survivors`` does not fall after a wrong guess; empty whenever some ``S*`` within
        ``eta/4`` of the sample on every query is a candidate."""
        s = self.survivors
        return [i + 1 for i, w in enumerate(self.wrong) if w and s[i + 1] == s[i]]


class PrivateMedianMechanism(MedianMechanism):
    """The median mechanism on the private route: :class:`MedianMechanism` with
    :class:`PrivateGuessAndCheck` as its checker (a sparse-vector test and Laplace answers), in the
    spirit of Roth and Roughgarden's median mechanism, which is differentially private.

    Guarantee: ``epsilon``-DP under replace-one neighbours (sensitivity ``1/n``) for any adaptive
    analyst: the candidate updates and guesses are post-processing (Lecture 4, Theorem 4) of
    :class:`PrivateGuessAndCheck`'s transcript, which is ``epsilon``-DP. The whole ``epsilon`` is
    charged to ``budget`` on construction, after validation. Accuracy holds only with high
    probability (:func:`dpteach.theory.private_median_failure_bound`): when every sparse-vector
    noise is within ``eta/8`` and every Laplace answer within ``eta/4``, a flagged guess is more
    than ``3 eta/4`` off, so it halves the candidates, ``S*`` survives, and every answer is within
    ``5 eta/4`` of the sample.
    """

    def __init__(
        self,
        sample: object,
        *,
        candidates: object,
        eta: float,
        epsilon: float,
        rng: Seed,
        m: int | None = None,
        budget: PrivacyBudget | ZCDPBudget | None = None,
    ):
        super().__init__(sample, candidates=candidates, eta=eta, m=m)
        self.checker = PrivateGuessAndCheck(
            _sample_counts(sample), eta=self.eta, m=self.m, epsilon=epsilon, rng=rng, budget=budget
        )


class HalvingDUA:
    """The halving database update algorithm over candidate databases (rows of ``candidates``).

    The state is the boolean mask of surviving candidates; the synthetic answer to ``q`` is the
    median of the survivors' answers. Update bound: ``B = log2 |C|`` whatever ``alpha``.
    """

    name = "halving (median)"

    def __init__(self, candidates: np.ndarray):
        c = _candidates(candidates)
        self.candidates = c
        self.domain_size = c.shape[1]
        self._matrix, self._matrix_of = None, None

    def bound(self, alpha: float) -> float:
        """``B = log2 |C|`` (at least half the candidates go at each update)."""
        check.positive(alpha, "alpha")
        return max(math.log2(self.candidates.shape[0]), 1.0)

    def initial(self) -> np.ndarray:
        return np.ones(self.candidates.shape[0], dtype=bool)

    def answers(self, state: np.ndarray, workload: Workload) -> np.ndarray:
        """The median of the survivors' answers to every query of ``workload``."""
        if self._matrix_of is not workload:
            self._matrix, self._matrix_of = workload.matrix(), workload
        return np.median(self.candidates[state] @ self._matrix.T, axis=0)

    def update(self, state: np.ndarray, q: np.ndarray, v: float) -> np.ndarray:
        """Keep only the survivors strictly on ``v``'s side of the median answer to ``q``.

        If none is (every survivor answers like the median), the good candidate is not among
        them and nothing can be learned: the state is returned unchanged.
        """
        q = _statistical_query(q, self.domain_size)
        values = self.candidates @ q
        median = np.median(values[state])
        kept = state & (values > median if v > median else values < median)
        return kept if kept.any() else state

    def synthetic(self, state: np.ndarray) -> np.ndarray:
        """The average of the surviving candidates (a histogram; the answers are medians)."""
        return self.candidates[state].mean(axis=0)


# --- samplers for dpteach.audit ----------------------------------------------------------------


def guess_and_check_sampler(make, pairs, *, resolution: int = 4):
    """A sampler ``sampler(counts, rng, size)`` for :func:`dpteach.audit.audit`.

    ``make(counts, rng)`` builds a GuessAndCheck-like mechanism on the sample ``counts``; it is
    asked the fixed ``(query, guess)`` ``pairs`` (one deterministic adversary: an audit tests one
    adversary at a time, and randomised ones add nothing, see the chapter's Exercise 2), and the
    transcript (``None`` for an accepted guess, else ``floor(resolution * answer)``) is encoded as
    one integer (:func:`dpteach.audit.encode`).
    """

    def once(counts, rng):
        checker, out = make(counts, rng), []
        for q, g in pairs:
            if checker.halted:
                break
            a = checker.ask(q, g)
            out.append(None if a == g else math.floor(resolution * a))
        return encode(out, clip=True)  # a noisy answer far out is clipped (post-processing)

    return repeat(once)


def median_mechanism_sampler(candidates, queries, *, eta: float, resolution: int = 4):
    """A sampler for :func:`dpteach.audit.audit` of the :class:`MedianMechanism` on ``counts``,
    asked the fixed ``queries``; the answers ``floor(resolution * a)`` are encoded as one integer.
    The mechanism is deterministic, so it is run once and its output repeated ``size`` times."""

    def sampler(counts, rng, size):
        mm = MedianMechanism(counts, candidates=candidates, eta=eta)
        answers = [mm.answer(q) for q in queries]  # None once GuessAndCheck has halted
        code = encode(
            [None if a is None else math.floor(resolution * a) for a in answers], clip=True
        )
        return np.full(size, code)

    return sampler
