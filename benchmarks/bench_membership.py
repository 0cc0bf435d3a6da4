"""Membership-audit benchmark (issue 35): the audit's own cost against its fits, and IBM ART side by side.

Usage::

    python benchmarks/bench_membership.py              # digits MLP, 16 references, 2 workers, ART too
    python benchmarks/bench_membership.py --quick      # 4 references, no ART

1. **Overhead.** ``audit_membership`` on scikit-learn's ``load_digits`` (features /16) with
   ``MLPClassifier(hidden_layer_sizes=(256,), alpha=1e-4, max_iter=300)``: the time of the fits
   (the anchor, measured in the same run) and of everything else, printed as a ratio (target ≤ 0.10).
2. **Peers.** On the same target model (fit 0) and its members / non-members, ART 1.20.1's
   ``MembershipInferenceBlackBox`` (nn and rf attack models, trained on a random half of the
   records and scored on the other half) and ``MembershipInferenceBlackBoxRuleBased`` (all
   records), with AUC and TPR at 1 % FPR beside privaudit's attacks. ART is optional
   (``pip install adversarial-robustness-toolbox``); without it the peer rows are skipped.
3. **Record reconstruction.** The informed adversary on scikit-learn's breast cancer (its first 200
   records and 10 features, standardised), record 5: privaudit's :func:`~privaudit.audit.engines.record_reconstruction.audit_record_reconstruction`
   and ART's ``DatabaseReconstruction`` on ``GaussianNB`` and ``LogisticRegression`` (the two
   estimators ART's attack supports), the Euclidean error of each.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics import roc_auc_score, roc_curve
from sklearn.neural_network import MLPClassifier

from privaudit.audit.engines.membership import audit_membership
from privaudit.audit.engines.model_training import fit_model


def _tpr_at(members, scores, fpr_max=0.01):
    fpr, tpr, _ = roc_curve(members, scores)
    return float(tpr[fpr <= fpr_max].max())


def art_rows(model, X, y, inside, seed):
    """ART's membership attacks against the target (fit 0), as (name, AUC, TPR at 1 % FPR) rows."""
    try:
        from art.attacks.inference.membership_inference import (
            MembershipInferenceBlackBox,
            MembershipInferenceBlackBoxRuleBased,
        )
        from art.estimators.classification.scikitlearn import SklearnClassifier
    except ImportError:
        print("ART is not installed: peer rows skipped (pip install adversarial-robustness-toolbox)")
        return []
    target = fit_model(model, X[inside], y[inside], seed)
    clf = SklearnClassifier(model=target)
    onehot = np.eye(10)[y]
    rows = []
    rule = MembershipInferenceBlackBoxRuleBased(clf)
    pred = rule.infer(X, onehot).ravel()
    rows.append(("ART rule-based (all records)", roc_auc_score(inside, pred), _tpr_at(inside, pred)))
    gen = np.random.default_rng(seed)
    half = gen.random(y.size) < 0.5
    for kind in ("nn", "rf"):
        attack = MembershipInferenceBlackBox(clf, attack_model_type=kind)
        tr_in, tr_out = half & inside, half & ~inside
        attack.fit(X[tr_in], onehot[tr_in], X[tr_out], onehot[tr_out])
        ev = ~half
        p = attack.infer(X[ev], onehot[ev], probabilities=True)
        p = np.asarray(p)[:, -1] if np.ndim(p) == 2 else np.asarray(p).ravel()
        rows.append((f"ART black-box {kind} (held-out half)", roc_auc_score(inside[ev], p), _tpr_at(inside[ev], p)))
    return rows


def reconstruction_rows(index: int = 5) -> list[tuple[str, float, float]]:
    """(estimator, privaudit's error, ART's error) of the informed adversary on breast cancer, record ``index``."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB

    from privaudit.audit.engines.record_reconstruction import audit_record_reconstruction

    try:
        from art.attacks.inference.reconstruction import DatabaseReconstruction
        from art.estimators.classification.scikitlearn import (
            ScikitlearnGaussianNB,
            ScikitlearnLogisticRegression,
        )
    except ImportError:
        return []
    X, y = load_breast_cancer(return_X_y=True)
    # 200 records and the first 10 features: ART's attack minimises by finite differences, each a refit.
    X, y = X[:200, :10], y[:200]
    X = (X - X.mean(0)) / X.std(0)
    rest = np.delete(np.arange(y.size), index)
    rows = []
    # privaudit's inversion is as exact as the solver's stationarity, so it gets a tight tolerance; ART's
    # attack refits the model in its own loop, so it gets scikit-learn's defaults (with a tight tolerance it
    # runs for minutes).
    for ours_est, art_est, wrap in ((GaussianNB(), GaussianNB(), ScikitlearnGaussianNB),
                                    (LogisticRegression(tol=1e-10, max_iter=10_000), LogisticRegression(),
                                     ScikitlearnLogisticRegression)):
        ours = audit_record_reconstruction(ours_est, X, y, index=index, rng=0)
        fitted = art_est.fit(np.vstack([X[rest], X[index]]), np.r_[y[rest], y[index]])
        x_art, _ = DatabaseReconstruction(wrap(fitted)).reconstruct(X[rest], np.eye(2)[y[rest]])
        rows.append((type(ours_est).__name__, ours.reconstruction_error, float(np.linalg.norm(x_art.ravel() - X[index]))))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    X, y = load_digits(return_X_y=True)
    X = X / 16
    model = MLPClassifier(hidden_layer_sizes=(256,), alpha=1e-4, max_iter=300, random_state=0)
    refs = 4 if args.quick else 16
    t0 = time.perf_counter()
    res = audit_membership(model, X, y, n_reference=refs, rng=args.seed, n_jobs=args.jobs)
    wall = time.perf_counter() - t0
    print(res.summary())
    print(f"\nfits {res.fit_seconds:.2f} s (anchor), audit beyond the fits {res.attack_seconds:.3f} s: "
          f"ratio {res.attack_seconds / res.fit_seconds:.4f} (target <= 0.10); wall {wall:.1f} s, {args.jobs} workers")
    if args.quick:
        return
    # The target is fit 0: rebuild its members from the audit's own design (same seed, same draw).
    from privaudit.mechanisms.randomness import int_seeds, keyed_rng, resolve_seed

    root, _ = resolve_seed(args.seed)
    inside = (keyed_rng(root, 0).random((refs + 1, y.size)) < 0.5)[0]
    seed0 = int(int_seeds(keyed_rng(root, 1), refs + 1)[0])
    print("\npeer | AUC | TPR at 1 % FPR")
    best_ours = max(a.tpr_at_fpr(0.01) for a in res.attacks.values())
    peers = art_rows(model, X, y, inside, seed0)
    for name, auc, tpr in peers:
        print(f"{name} | {auc:.3f} | {tpr:.3f}")
    if peers:
        best_art = max(t for _, _, t in peers)
        print(f"best privaudit TPR at 1 % FPR / best ART: {best_ours:.3f} / {best_art:.3f} = "
              f"{best_ours / max(best_art, 1e-12):.1f}x (target >= 2)")
    print("\ninformed adversary, breast cancer record 5 | privaudit error | ART DatabaseReconstruction error")
    for name, ours, art in reconstruction_rows():
        print(f"{name} | {ours:.3g} | {art:.3g}")


if __name__ == "__main__":
    main()
