"""Streamed certification (issue 36): memory that does not grow with n, results independent of the
chunk size and of the workers, and the in-memory path's numbers on the same releases."""

from __future__ import annotations

import dataclasses
import tracemalloc

import numpy as np
import pytest

from privaudit.attacks.distinguishers import make_attacker
from privaudit.audit.engines import streaming as st
from privaudit.audit.engines import tradeoff as tr
from privaudit.audit.stats import epsilon_bounds as eb
from privaudit.mechanisms import GaussianMechanism, LaplaceMechanism
from privaudit.mechanisms.randomness import resolve_seed
from privaudit.mechanisms.validation import InvalidParameterError

X = np.zeros(10)
E0 = np.eye(10)[0]
GAUSS = GaussianMechanism(epsilon=1, delta=1e-5)


@pytest.mark.parametrize("bad", [0, -st.STREAM_BLOCK, 12_345, st.STREAM_BLOCK + 1, 1.5e5, "100000", True])
def test_bad_chunk_size_is_refused_clearly(bad):
    with pytest.raises(InvalidParameterError, match=f"multiple of {st.STREAM_BLOCK}"):
        tr.audit_tradeoff(GAUSS, X, E0, n=10_000, rng=0, chunk_size=bad)


def test_stream_threshold_leaves_small_audits_in_memory():
    assert not st.stream_needed(10**6, X)  # every shipped preset and test audit stays in memory
    assert st.stream_needed(10**7, X)
    assert st.stream_needed(10**8, 0.0) and not st.stream_needed(10**7, 0.0)
    assert 2 * st.STREAM_BLOCK * st.DEFAULT_CHUNK_BLOCKS * 10 * 8 < st.STREAM_BYTES


def _key(res) -> dict:
    """The report entry of an audit (every certified number, the curve and the band)."""
    return res.to_dict()


def test_chunk_size_and_workers_do_not_change_the_result():
    kw = dict(n=420_000, rng=3, progress=False, attacker=["likelihood-ratio", "projection", "atom"])
    a = tr.audit_tradeoff(GAUSS, X, E0, chunk_size=100_000, **kw)
    b = tr.audit_tradeoff(GAUSS, X, E0, chunk_size=300_000, **kw)
    c = tr.audit_tradeoff(GAUSS, X, E0, chunk_size=50_000, n_jobs=2, **kw)
    assert a.epsilon_lb > 0.5
    assert _key(a) == _key(b) == _key(c)
    assert a.n_eval == 420_000 - a.n_select  # the forced ratio counts the (empty) training block too
    assert any("streamed" in s for s in a.assumptions)


def test_default_suite_streamed_and_reproducible():
    kw = dict(n=300_000, rng=5, progress=False)
    a = tr.audit_tradeoff(LaplaceMechanism(epsilon=1.0), 0.0, 1.0, chunk_size=50_000, **kw)
    b = tr.audit_tradeoff(LaplaceMechanism(epsilon=1.0), 0.0, 1.0, chunk_size=150_000, **kw)
    assert _key(a) == _key(b)
    assert a.n_train > 0 and a.n == 300_000
    assert a.fpr.size == a.fnr.size > 100 and a.fpr[0] == 0 and a.fpr[-1] == 1
    assert np.all(a.band_lower <= a.band_upper)


def _in_memory_stages(mech, x, xp, n, specs, *, selection, estimator, seed=0):
    root, _ = resolve_seed(seed)
    ss0, ss1, ssa = root.spawn(3)
    attackers = [make_attacker(s, random_state=np.random.default_rng(c)) for s, c in zip(specs, ssa.spawn(len(specs)))]
    from privaudit.attacks.protocol import distinguisher_traits
    splits = tr.plan_splits(n, any(distinguisher_traits(a).requires_training for a in attackers), 0.2, 0.2)
    rel = tr.draw_releases(mech, x, xp, n, ss0, ss1)
    fitted = tr.fit_attackers(attackers, rel, splits, mech, x, xp)
    book = tr._score_book(rel)
    common = dict(delta=mech.claim.delta, confidence=0.95, estimator=estimator, n_thresholds=256)
    order, forced = tr.select_attackers(fitted, rel, splits, book=book, **common)
    cert = tr.certify(fitted, order, forced, rel, splits, selection=selection, book=book, **common)
    return dict(fitted=fitted, order=order, forced=forced, rel=rel, splits=splits, book=book, common=common,
                seeds=(ss0, ss1), cert=cert)


@pytest.mark.parametrize("selection, estimator", [("split", "clopper-pearson"), ("bonferroni", "clopper-pearson"),
                                                  ("split", "gdp")])
def test_streamed_counts_of_the_in_memory_releases_give_the_in_memory_bound(selection, estimator):
    """Where both paths see the same releases (the streamed counter replays the in-memory evaluation
    split), the certified numbers are equal: same tests, same counts, same bound."""
    specs = ["likelihood-ratio", "projection", "logistic", "atom"]
    s = _in_memory_stages(GAUSS, X, E0, 260_000, specs, selection=selection, estimator=estimator)
    rel, splits = s["rel"], s["splits"]
    ev0, ev1 = rel.out0[splits.evaluate], rel.out1[splits.evaluate]

    def replay(plan, chunk):
        out = st.ChunkCounts.empty(plan.grids)
        rows = slice(chunk * plan.chunk_size, (chunk + 1) * plan.chunk_size)
        st.count_rows(plan, (ev0[rows], ev1[rows]), out)
        return out

    cert, counts = tr.certify_streamed(
        s["fitted"], s["order"], s["forced"], rel, splits, mechanism=GAUSS, x=X, x_prime=E0, seeds=s["seeds"],
        selection=selection, chunk_size=50_000, book=s["book"], chunk_counter=replay, progress=False, **s["common"])
    mem = s["cert"]
    assert counts.rows == splits.n_eval
    assert cert.index == mem.index and cert.n_eval == mem.n_eval
    assert cert.epsilons == mem.epsilons
    assert dataclasses.asdict(cert.bound) == dataclasses.asdict(mem.bound)
    # Every streamed vertex is an exact point of the in-memory empirical curve of the same releases.
    fpr, fnr = cert.vertices
    assert fpr.size > 200 and np.all(np.diff(fpr) >= 0)
    sorted0, sorted1 = mem.scores0, mem.scores1
    m = mem.n_eval
    assert fpr[0] == 0.0 and fpr[-1] == 1.0 and (0.0, 1.0) in set(zip(fpr, fnr))
    for k, f in zip(np.rint(fpr * m).astype(int), np.rint(fnr * m).astype(int)):
        # k false positives: the threshold t lies in [s0[m−k−1], s0[m−k]), so #{s1 ≤ t} is within these counts.
        lo = sorted0[m - k - 1] if k < m else -np.inf
        hi = sorted0[m - k] if k > 0 else np.inf
        assert np.searchsorted(sorted1, lo, side="right") <= f <= np.searchsorted(sorted1, hi, side="left")
    # The streamed curve, read where the in-memory one has its vertices, is within a few releases of it.
    mf, mn, _ = eb.empirical_curve(sorted0, sorted1, presorted=True)
    assert np.max(np.abs(np.interp(mf, fpr, fnr) - mn)) < 0.02


def test_streamed_counts_are_exact_counts():
    rng = np.random.default_rng(0)
    grid = np.unique(np.r_[-np.inf, rng.normal(size=50).round(1), np.inf])
    scores = rng.normal(size=10_000).round(1)
    g = st.GridCounts.empty(grid.size)
    for part in np.array_split(scores, 7):
        g.add_scores(grid, part)
    assert np.array_equal(g.at_most(), (scores[:, None] <= grid).sum(0))
    assert np.array_equal(g.less(), (scores[:, None] < grid).sum(0))
    assert g.total == scores.size


def _peak(n: int) -> int:
    tracemalloc.start()
    try:
        tr.audit_tradeoff(GAUSS, X, E0, n=n, rng=0, attacker="likelihood-ratio", chunk_size=100_000, progress=False)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_n():
    small, large = _peak(1_000_000), _peak(4_000_000)
    # The selection split is capped (MAX_SELECT) and one block is held at a time: 4× the releases,
    # about the same peak (in memory the releases alone would be 4·10⁶ × 10 × 8 × 2 = 640 MB).
    assert large < 1.3 * small, (small, large)
    assert large < 150e6, large


def test_nonfinite_releases_are_counted_over_the_whole_stream():
    class Holes:
        """x + N(0, 1) with a NaN in about 1 % of the releases under x′."""

        claim = GAUSS.claim

        def sample(self, x, n, rng):
            out = np.asarray(x, float) + rng.standard_normal((n, 1))
            if float(np.asarray(x).ravel()[0]) == 1.0:
                out[rng.random(n) < 0.01] = np.nan
            return out

    res = tr.audit_tradeoff(Holes(), np.zeros(1), np.ones(1), n=400_000, rng=0, chunk_size=100_000,
                            attacker=["atom", "projection"], adjacency="ignore", progress=False)
    assert res.leaks["nonfinite_fraction_x"] == 0.0
    assert 0.008 < res.leaks["nonfinite_fraction_x_prime"] < 0.012
    assert res.epsilon_lb > 2  # a NaN only under x′ is a perfect leak


def test_progress_bar_when_asked(capsys):
    tr.audit_tradeoff(GAUSS, X, E0, n=120_000, rng=0, attacker="likelihood-ratio", chunk_size=50_000, progress=True)
    assert "streamed evaluation" in capsys.readouterr().err


@pytest.mark.slow
def test_dask_local_cluster_gives_the_local_result_with_chunks_on_both_workers():
    """One audit spread over a Dask LocalCluster of 2 worker processes (joblib's dask backend): the same
    result as in one process, with chunks executed on both workers."""
    distributed = pytest.importorskip("distributed")
    import joblib

    kw = dict(n=1_050_000, rng=7, progress=False, attacker=["likelihood-ratio", "projection"], chunk_size=50_000)
    local = tr.audit_tradeoff(GAUSS, X, E0, **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        with distributed.get_task_stream(client) as tasks, joblib.parallel_config(backend="dask"):
            spread = tr.audit_tradeoff(GAUSS, X, E0, n_jobs=-1, **kw)
        workers = {t["worker"] for t in tasks.data}
    assert _key(spread) == _key(local)
    assert len(workers) == 2, workers
