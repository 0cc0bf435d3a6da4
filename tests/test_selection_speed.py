"""The speed paths of choosing and certifying a test return what the direct computations return.

* :func:`~privaudit.attacks.threshold_selection.select_threshold` bounds its criterion by branch
  and bound (only the candidates that can be among the best are given Clopper–Pearson bounds):
  checked against a brute-force computation of the criterion at every candidate, written out
  here from the definition;
* :func:`~privaudit.attacks.threshold_selection.chosen_test_counts` counts on unsorted scores:
  checked against ``error_counts`` on sorted ones;
* :class:`~privaudit.audit.engines.attack_scores.ScoreBook` scores in chunks and once per row:
  checked against one call of the attacker on the whole block.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from privaudit.attacks import threshold_selection as ts
from privaudit.attacks.distinguishers import AtomAttack, LikelihoodRatioAttack, ProjectionAttack
from privaudit.audit.engines import attack_scores as A
from privaudit.mechanisms import GaussianMechanism, LaplaceMechanism


def _brute_force(s0, s1, n0_eval, n1_eval, *, delta, confidence, estimator, n_thresholds, select_level,
                 cross_validate, log_likelihood_ratio):
    """select_threshold from its definition: every candidate's criterion, best forward, reverse and pooled test."""
    raw0, raw1 = np.asarray(s0, float), np.asarray(s1, float)
    part0, part1 = (raw0.size // 2, raw1.size // 2) if cross_validate else (raw0.size, raw1.size)
    n0_eval = min(n0_eval, ts.MAX_EVAL_PER_SELECT * max(part0, 1))
    n1_eval = min(n1_eval, ts.MAX_EVAL_PER_SELECT * max(part1, 1))
    cands = ts.candidate_thresholds(raw0, raw1, n_thresholds, "linear" if estimator == "gdp" else "tails")
    level = 1 - (1 - confidence) / 2
    parts = ((raw0[0::2], raw1[0::2]), (raw0[1::2], raw1[1::2])) if cross_validate else ((raw0, raw1),)
    scaled = []
    for h0, h1 in parts:
        h0, h1 = np.sort(h0), np.sort(h1)
        counts = ts._llr_counts(h0, h1, cands) if log_likelihood_ratio else None
        if counts is None:
            counts = (*ts.error_counts(h0, h1, cands, presorted=True), *ts._reverse_counts(h0, h1, cands))
        fp, fn, rfp, rfn = counts
        cp = ts.clopper_pearson_upper
        scaled.append((cp(fp, h0.size, select_level) * n0_eval, cp(fn, h1.size, select_level) * n1_eval,
                       cp(rfp, h1.size, select_level) * n1_eval, cp(rfn, h0.size, select_level) * n0_eval))

    def value(a, b, na, nb):
        return ts._value(a, b, na, nb, level, delta, estimator, clip=False)[0]

    crit_f = np.minimum.reduce([value(fp, fn, n0_eval, n1_eval) for fp, fn, _, _ in scaled])
    crit_r = np.minimum.reduce([value(rfp, rfn, n1_eval, n0_eval) for _, _, rfp, rfn in scaled])
    i, j = int(np.argmax(crit_f)), int(np.argmax(crit_r))
    top_f = np.argsort(crit_f, kind="stable")[-ts._POOL_TOP:]
    top_r = np.argsort(crit_r, kind="stable")[-ts._POOL_TOP:]
    npool = n0_eval + n1_eval
    crit_p = np.minimum.reduce([value(fp[top_f][:, None] + rfp[top_r][None, :], fn[top_f][:, None] + rfn[top_r][None, :],
                                      npool, npool) for fp, fn, rfp, rfn in scaled])
    ki, kj = np.unravel_index(int(np.argmax(crit_p)), crit_p.shape)
    options = {"forward": (float(crit_f[i]), i, j), "reverse": (float(crit_r[j]), i, j),
               "pooled": (float(crit_p[ki, kj]), top_f[ki], top_r[kj])}
    best = max(options, key=lambda k: options[k][0])
    v, bi, bj = options[best]
    return ts.Selection(max(v, 0.0), best, float(cands[bi]), float(cands[bj]))


def _score_pairs():
    rng = np.random.default_rng(20261201)
    for m in (40, 700, 5000, 20000):
        yield m, rng.normal(0, 1, m), rng.normal(0.4, 1, m)  # a bulk shift
        yield m, rng.laplace(0, 1, m), rng.laplace(1.0, 1, m)
        yield m, np.round(rng.normal(0, 1, m), 1), np.round(rng.normal(0.2, 1, m), 1)  # many ties
        yield m, np.zeros(m), (rng.random(m) < 0.01).astype(float)  # a rare atom: two distinct scores
        yield m, rng.normal(0, 1, m), np.r_[rng.normal(0, 1, m - m // 50), np.full(m // 50, 40.0)]  # rare leak
        yield m, rng.normal(0, 1, m), rng.normal(0, 1, m)  # no signal


@pytest.mark.parametrize("estimator", ["clopper-pearson", "gdp"])
@pytest.mark.parametrize("cross_validate", [True, False])
def test_pruned_selection_equals_the_criterion_evaluated_at_every_candidate(estimator, cross_validate):
    for m, s0, s1 in _score_pairs():
        for k, n_eval, delta in ((16, m, 0.0), (256, 8 * m + 3, 1e-5), (64, 10**6, 1e-5)):
            kw = dict(delta=delta, confidence=0.9, estimator=estimator, n_thresholds=k, cross_validate=cross_validate,
                      select_level=0.7, log_likelihood_ratio=False)
            assert ts.select_threshold(s0, s1, n_eval, n_eval, **kw) == _brute_force(s0, s1, n_eval, n_eval, **kw), \
                (m, k, n_eval)


def test_pruned_selection_equals_brute_force_on_exact_likelihood_ratio_scores():
    rng = np.random.default_rng(7)
    for mu, m in ((0.3, 3000), (1.0, 50000), (3.0, 400)):
        x0, x1 = rng.normal(0, 1, m), rng.normal(mu, 1, m)
        llr = lambda o: mu * o - mu**2 / 2  # noqa: E731  ln N(mu, 1)/N(0, 1)
        kw = dict(delta=1e-5, confidence=0.95, estimator="clopper-pearson", n_thresholds=256,
                  log_likelihood_ratio=True, **ts.LLR_SELECTION)
        assert ts.select_threshold(llr(x0), llr(x1), 8 * m, 8 * m, **kw) == \
            _brute_force(llr(x0), llr(x1), 8 * m, 8 * m, **kw)


def test_pruning_evaluates_a_fraction_of_the_candidates_at_large_n(monkeypatch):
    calls = []
    real = ts.clopper_pearson_upper

    def counting(k, n, level):
        calls.append(np.size(np.broadcast_arrays(np.asarray(k), np.asarray(n))[0]))
        return real(k, n, level)

    monkeypatch.setattr(ts, "clopper_pearson_upper", counting)
    rng = np.random.default_rng(3)
    s0, s1 = rng.normal(0, 1, 100_000), rng.normal(1, 1, 100_000)
    ts.select_threshold(s0, s1, 800_000, 800_000, delta=1e-5, confidence=0.95, estimator="clopper-pearson")
    k = ts.candidate_thresholds(s0, s1, 256).size
    # All candidates, two halves, four rates, two bounds each (8·2·k), plus the pooled grid (2·2·24²):
    # the direct computation; pruning must give at least a third of it back.
    assert sum(calls) < (16 * k + 4 * ts._POOL_TOP**2) * 2 / 3, (sum(calls), k)


def test_chosen_test_counts_equal_the_counts_on_sorted_scores():
    rng = np.random.default_rng(11)
    s0, s1 = np.round(rng.normal(0, 1, 3001), 1), np.round(rng.normal(0.5, 1, 2999), 1)  # ties at the thresholds
    for t, r in ((0.3, -0.2), (-5.0, 5.0), (0.0, 0.0), (2.2, 2.2)):
        fp, fn = ts.error_counts(s0, s1, [t])
        rfp, rfn = ts._reverse_counts(np.sort(s0), np.sort(s1), np.array([r]))
        assert ts.chosen_test_counts(s0, s1, t, r) == (fp[0], fn[0], rfp[0], rfn[0])


class _Counting:
    """Wraps an attacker: records how many rows each score call saw."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []
        self.handles_nonfinite = getattr(inner, "handles_nonfinite", False)

    def fit(self, *a, **kw):
        self.inner.fit(*a, **kw)
        return self

    def score(self, outputs):
        self.calls.append(len(outputs))
        return self.inner.score(outputs)


def test_score_book_scores_in_chunks_once_per_row_and_matches_a_whole_block_call(monkeypatch):
    monkeypatch.setattr(A, "CHUNK_ELEMENTS", 3 * 1024 * 3)  # 3072 rows of 3 values per chunk
    mech = LaplaceMechanism(epsilon=1.0)
    x, xp = np.zeros(3), np.array([1.0, 0.0, 0.0])
    out0, out1 = mech.sample(x, 10_000, 0), mech.sample(xp, 10_000, 1)
    out0[5] = np.nan  # a non-finite release: attackers that cannot read it see 0
    atoms = AtomAttack().fit(out0[:2000], out1[:2000], x=x, x_prime=xp)
    for inner in (LikelihoodRatioAttack().fit(mechanism=mech, x=x, x_prime=xp), ProjectionAttack().fit(x=x, x_prime=xp),
                  atoms):
        a = _Counting(inner)
        book = A.ScoreBook(out0, out1, (-1, 3))
        rank = book.scores(0, a, 0, 2000, 4000)
        sel = book.scores(0, a, 0, 2000, 9000)  # extends the ranking prefix: only 5000 new rows are scored
        assert a.calls == [2000, 3072, 1928] and np.array_equal(sel[:2000], rank)
        rows = out0[2000:9000] if inner.__class__ is AtomAttack else np.where(np.isfinite(out0), out0, 0.0)[2000:9000]
        want = np.nan_to_num(np.asarray(inner.score(rows), float), nan=0.0, posinf=1e300, neginf=-1e300)
        assert np.array_equal(sel, want)
        assert book.scores(0, a, 0, 2000, 3000) is not None and len(a.calls) == 3  # a prefix: nothing scored


def test_single_threaded_blas_keeps_products_of_rows_with_a_vector_bit_for_bit():
    rng = np.random.default_rng(5)
    rows, w = rng.normal(size=(50_000, 10)), rng.normal(size=10)
    want = rows @ w
    with A.single_threaded_blas():
        assert np.array_equal(rows @ w, want)


def test_audit_certifies_the_same_test_as_the_stages_without_a_shared_book():
    from privaudit.audit.engines import tradeoff as T

    mech = GaussianMechanism(sigma=1.0)
    x, xp = np.zeros(2), np.array([1.0, 0.0])
    r = T.draw_releases(mech, x, xp, 4000, 0, 1)
    splits = T.plan_splits(4000, True, 0.2, 0.2)
    fitted = T.fit_attackers([LikelihoodRatioAttack(), ProjectionAttack(), AtomAttack()], r, splits, mech, x, xp)
    kw = dict(delta=1e-5, confidence=0.9, estimator="clopper-pearson", n_thresholds=64)
    book = A.ScoreBook(r.out0, r.out1, r.shape)
    order, forced = T.select_attackers(fitted, r, splits, book=book, **kw)
    assert (order, forced) == T.select_attackers(fitted, r, splits, **kw)
    shared = T.certify(fitted, order, forced, r, splits, selection="split", book=book, **kw)
    alone = T.certify(fitted, order, forced, r, splits, selection="split", **kw)
    assert shared.index == alone.index and shared.epsilons == alone.epsilons
    assert dataclasses.astuple(shared.bound) == dataclasses.astuple(alone.bound)
    assert np.array_equal(shared.scores0, alone.scores0) and np.all(np.diff(shared.scores0) >= 0)
