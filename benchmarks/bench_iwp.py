"""Speed of one IWP-SGD pass (seed 001, Algorithm 1) against scikit-learn's SGDClassifier.

Anchor: ``SGDClassifier(loss="log_loss", max_iter=1, tol=None).fit`` on the same released
data (one epoch of Cython per-sample SGD). Figure: IWP-SGD time / anchor time, for one
pass over n = 1e6, p = 10, batch 128 (target <= 1.5). The release itself is made once,
outside the timings, as in the paper's task-agnostic setting. Each timing is the best of
``--repeats`` runs measured in this process.

Run: ``python benchmarks/bench_iwp.py [--n 1000000] [--p 10] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import timeit
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

from privaudit.learners.iwp import IWPSGDClassifier, NoisySGDClassifier
from privaudit.learners.release import release_dataset


def min_time(fn, repeats: int) -> float:
    """Best wall time of ``repeats`` calls (the least noisy estimate on a shared machine)."""
    return min(timeit.repeat(fn, number=1, repeat=repeats))

def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000, help="released examples in the one pass")
    ap.add_argument("--p", type=int, default=10, help="features per example")
    ap.add_argument("--batch-size", type=int, default=128, help="mini-batch size of the IWP-SGD and noisy-SGD passes")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per case; the best time is reported")
    args = ap.parse_args(argv)

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (args.n, args.p))
    y = np.where(X @ rng.normal(size=args.p) + 0.5 * rng.normal(size=args.n) > 0, 1.0, -1.0)
    rel = release_dataset(X, y, epsilon=5.0, delta=1e-5, bounds=(-1, 1), random_state=1)

    def anchor():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            SGDClassifier(loss="log_loss", max_iter=1, tol=None, random_state=0).fit(rel.X_tilde, rel.y_tilde)

    t_anchor = min_time(anchor, args.repeats)
    print(f"anchor sklearn SGDClassifier(log_loss, 1 epoch): {t_anchor:.3f} s  (n={args.n}, p={args.p})")
    cases = [
        ("IWP-SGD exponential", lambda: IWPSGDClassifier(batch_size=args.batch_size, random_state=0).fit(rel)),
        ("IWP-SGD quadratic", lambda: IWPSGDClassifier(loss="quadratic", batch_size=args.batch_size,
                                                       random_state=0).fit(rel)),
        ("IWP-SGD logistic K=1", lambda: IWPSGDClassifier(loss="logistic", n_terms=1, radius=0.2,
                                                          batch_size=args.batch_size, random_state=0).fit(rel)),
        ("noisy SGD exponential", lambda: NoisySGDClassifier(batch_size=args.batch_size, random_state=0).fit(rel)),
    ]
    for name, fn in cases:
        t = min_time(fn, args.repeats)
        print(f"{name:24s}: {t:.3f} s   ratio to anchor = {t / t_anchor:.2f}")


if __name__ == "__main__":
    main()
