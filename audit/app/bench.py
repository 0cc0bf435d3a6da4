"""Attacker benchmark: ``privaudit bench attackers``.

Every registered attacker is run against a grid of mechanisms and settings, with
*common random numbers*: within one setting every attacker sees exactly the same
releases (one child seed per setting, spawned from the root seed), so differences
between attackers are not sampling noise between them.

Leaderboard metrics
-------------------
Distinguishers (through :func:`privaudit.audit.engines.tradeoff.audit_tradeoff`, Clopper–Pearson
with a threshold chosen on a separate split):
    ``epsilon_lb`` (certified at ``confidence``), TPR at FPR 1e−3 and 1e−2 and the AUC of
    the empirical ROC on the evaluation split.
Reconstruction attackers (through :func:`privaudit.audit.engines.reconstruction.audit_reconstruction`,
x drawn from a Gaussian prior, phases revealed):
    MSE/CRB (unbiased Cramér–Rao) and MSE/van Trees.
Both:
    ``seconds_per_1e5``: wall time of the audit per 10⁵ releases. Timing is the only
    field that is not a function of the seed; everything else is deterministic.

Cells
-----
A cell is ``"ok"``; ``"n/a"`` when the attacker does not apply to the setting (it needs a
density the mechanism lacks, a reconstruction setting, or it refuses the mechanism with an
:class:`~privaudit.mechanisms.validation.InvalidParameterError`, e.g. a reachability attacker
on a mechanism without a noise scale), with the reason; or ``"error"`` when it crashed.

Results go to ``OUT/attackers/``: ``leaderboard.json``, ``leaderboard.md``,
``leaderboard.html`` (self-contained, in the style of the audit reports) and
``figures/*.png``, each written atomically. The attackers of a figure have distinct colours.
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms import (
    GaussianMechanism,
    LaplaceMechanism,
    ModulatedMechanism,
    PrivacyClaim,
    RandomizedResponse,
)

from privaudit.audit.app.report_store import atomic_write
from privaudit.audit.results import to_jsonable
from privaudit.mechanisms.randomness import uint32_seed
from privaudit.mechanisms.validation import InvalidParameterError

SCHEMA = "privaudit.leaderboard/1"


class IdentityLeak:
    """Claims (1, 1e−5) for a Gaussian release but returns x itself with probability ``leak``.

    With leak ℓ the pair (x, x′) has δ(ε) ≥ ℓ for every ε, so the claim is false
    whenever ℓ > δ.

    A point mass no density model expects: the exact-match ("atom") attacker exposes it.
    """

    def __init__(self, leak: float = 1e-3) -> None:
        self.inner = GaussianMechanism(epsilon=1.0, delta=1e-5)
        self.leak = leak
        self.claim = PrivacyClaim(1.0, 1e-5, "l2<=1")

    def __repr__(self) -> str:
        return f"IdentityLeak(leak={self.leak:g})"

    def sample(self, x: ArrayLike, n: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """``n`` inner releases of x, each replaced by x itself with probability ``leak``.

        Parameters
        ----------
        x : array-like
            The input.
        n : int
            Number of releases.
        rng : Generator, int or None
            One generator drives the inner release and the leak.

        Returns
        -------
        ndarray of shape (n, *x.shape)
        """
        rng = np.random.default_rng(rng)
        out = self.inner.sample(x, n, rng)
        out[rng.random(n) < self.leak] = np.asarray(x, dtype=float)
        return out


@dataclasses.dataclass(frozen=True)
class Setting:
    """One cell row of the leaderboard: a mechanism, a neighbouring pair and a prior."""

    name: str
    build: Callable[[], Any]
    x: Any
    x_prime: Any
    prior_scale: float | None = None  # isotropic Gaussian prior std for reconstruction, or None


def default_settings() -> dict[str, Setting]:
    """The default grid: every shipped mechanism family plus a point-mass leak."""
    mod = dict(alpha=0.3, lam=0.5, omega=1.0, n_vectors=2, dim=4, epsilon=1.0, delta=1e-5)
    e1 = np.eye(4)[0]
    return {s.name: s for s in (
        Setting("gaussian-eps1-d1", lambda: GaussianMechanism(epsilon=1.0, delta=1e-5), [0.0], [1.0], 1.0),
        Setting("gaussian-eps4-d10", lambda: GaussianMechanism(epsilon=4.0, delta=1e-5),
                np.zeros(10), np.eye(10)[0], 0.5),
        Setting("laplace-eps1", lambda: LaplaceMechanism(epsilon=1.0), [0.0], [1.0]),
        Setting("rr-eps1-k4", lambda: RandomizedResponse(epsilon=1.0, categories=(0, 1, 2, 3)), 0.0, 1.0),
        Setting("modulated-m2-d4", lambda: ModulatedMechanism(**mod), np.zeros(4), e1, 0.5),
        Setting("identity-leak-1e-2", lambda: IdentityLeak(1e-2), [0.0], [1.0]),
    )}


def _roc_metrics(audit) -> dict[str, float]:
    """TPR at FPR 1e−3 / 1e−2 and AUC from the empirical curve of the evaluation split."""
    fpr = np.asarray(audit.fpr, dtype=float)
    tpr = 1.0 - np.asarray(audit.fnr, dtype=float)
    fpr = np.concatenate([[0.0], fpr, [1.0]])
    tpr = np.concatenate([[0.0], tpr, [1.0]])
    order = np.argsort(fpr, kind="stable")
    fpr, tpr = fpr[order], np.maximum.accumulate(tpr[order])
    return {
        "tpr_at_fpr_1e-3": float(tpr[fpr <= 1e-3].max()),
        "tpr_at_fpr_1e-2": float(tpr[fpr <= 1e-2].max()),
        "auc": float(np.trapezoid(tpr, fpr)),
    }


def _distinguisher_cell(setting: Setting, name: str, cls, samples: int, seeds: Sequence[int], confidence: float) -> dict:
    """Mean (and sd of ε_lb) over one audit per seed; every attacker gets the same seeds."""
    from privaudit.audit.engines.tradeoff import audit_tradeoff

    mech = setting.build()
    if getattr(cls, "requires_density", False) and not callable(getattr(mech, "log_density", None)):
        return {"status": "n/a", "reason": "needs log_density"}
    t0 = time.perf_counter()
    audits = [audit_tradeoff(mech, setting.x, setting.x_prime, n=samples, attacker=name,
                             confidence=confidence, rng=seed, target=setting.name) for seed in seeds]
    elapsed = time.perf_counter() - t0
    rocs = [_roc_metrics(a) for a in audits]
    eps = np.array([a.epsilon_lb for a in audits], dtype=float)
    return {"status": "ok", "epsilon_lb": float(eps.mean()),
            "epsilon_lb_sd": float(eps.std(ddof=1)) if eps.size > 1 else None,
            "epsilon_claim": audits[0].claim.epsilon, "epsilon_exact": audits[0].epsilon_exact,
            **{k: float(np.mean([r[k] for r in rocs])) for k in rocs[0]},
            "seconds_per_1e5": elapsed / (2 * samples * len(seeds)) * 1e5}


def _reconstruction_cell(setting: Setting, name: str, cls, samples: int, seed: int) -> dict:
    from privaudit.attacks.priors import GaussianPrior

    from privaudit.audit.engines.reconstruction import audit_reconstruction

    mech = setting.build()
    if setting.prior_scale is None:
        return {"status": "n/a", "reason": "no reconstruction setting"}
    d = np.asarray(setting.x, dtype=float).size
    prior = GaussianPrior(np.zeros(d), setting.prior_scale**2)
    if not cls.applicable(mech, prior=prior, phase_known=True, side_info=False):
        return {"status": "n/a", "reason": "not applicable"}
    t0 = time.perf_counter()
    audit = audit_reconstruction(mech, name, prior=prior, n=samples, rng=seed, hcr=False)
    elapsed = time.perf_counter() - t0
    return {"status": "ok", "mse": audit.mse, "mse_over_crb": audit.ratio.get("crb"),
            "mse_over_van_trees": audit.ratio.get("van_trees"), "verdict": audit.verdict,
            "seconds_per_1e5": elapsed / samples * 1e5}


def run_attacker_benchmark(
    *, settings: Sequence[str] | None = None, attackers: Sequence[str] | None = None, samples: int = 20_000,
    seed: int = 0, repeats: int = 5, confidence: float = 0.95, progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run every (setting, attacker) cell; return the leaderboard as plain data.

    Distinguisher cells average ``repeats`` independent audits (ε_lb is reported with
    its standard deviation), so that attackers are ranked on more than one draw of the
    threshold-selection noise. A cell that raises is recorded with ``status = "error"``
    and its message; the others still run.

    Parameters
    ----------
    settings : sequence of str, optional
        Benchmark settings to run (default: all).
    attackers : sequence of str, optional
        Attackers to run (default: all registered).
    samples : int
        Releases per hypothesis of each audit.
    seed : int
        Root seed.
    repeats : int
        Independent audits averaged per distinguisher cell.
    confidence : float
        Confidence of each bound.
    progress : callable, optional
        Called with one line per finished cell.

    Returns
    -------
    dict
        The leaderboard: settings, attackers and one record per cell.
    """
    from privaudit.attacks import available_attacks

    grid = default_settings()
    chosen = list(grid) if settings is None else list(settings)
    unknown = [s for s in chosen if s not in grid]
    if unknown:
        raise ValueError(f"unknown setting(s) {unknown}; available: {sorted(grid)}")
    registry = {**available_attacks("distinguisher"), **available_attacks("reconstruction")}
    names = list(registry) if attackers is None else list(attackers)
    missing = [a for a in names if a not in registry]
    if missing:
        raise ValueError(f"unknown attacker(s) {missing}; registered: {sorted(registry)}")
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got repeats={repeats}")
    children = np.random.SeedSequence(seed).spawn(len(grid))
    setting_seeds = {s: [uint32_seed(c) for c in ss.spawn(repeats)] for s, ss in zip(grid, children)}
    rows = []
    for s in chosen:
        for a in names:
            cls = registry[a]
            if progress:
                progress(f"{s} / {a}")
            try:
                if cls.kind == "distinguisher":
                    cell = _distinguisher_cell(grid[s], a, cls, samples, setting_seeds[s], confidence)
                else:
                    cell = _reconstruction_cell(grid[s], a, cls, samples, setting_seeds[s][0])
            except InvalidParameterError as exc:  # the attacker refuses this mechanism: it does not apply
                cell = {"status": "n/a", "reason": str(exc)}
            except Exception as exc:  # a broken cell must not sink the leaderboard
                cell = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
            rows.append({"setting": s, "attacker": a, "kind": cls.kind, **cell})
    return {"schema": SCHEMA, "seed": seed, "samples": samples, "repeats": repeats, "confidence": confidence,
            "settings": chosen, "attackers": names, "rows": to_jsonable(rows)}


def _intro(board: dict) -> str:
    return (f"seed {board['seed']}, {board['samples']} releases per hypothesis, "
            f"distinguisher metrics averaged over {board.get('repeats', 1)} audits (ε_lb ± its sd), "
            f"confidence {board['confidence']}. Every attacker saw the same releases within a setting. "
            "Attackers whose scores rank releases like the likelihood ratio (projection for a Gaussian shift, "
            "a quadratic logistic model) have the same ROC, so their ε_lb differ only by threshold-selection "
            "noise and may exceed the LR's; an attacker that is *not* ROC-equivalent cannot beat it beyond "
            "that noise.")


def _not_applicable_rows(board: dict) -> list[list[str]]:
    """``[attacker, settings, reason]`` per attacker and reason, settings joined (one row per reason, not per cell)."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for r in board["rows"]:
        if r["status"] == "n/a":
            grouped.setdefault((r["attacker"], r["reason"]), []).append(r["setting"])
    return [[attacker, ", ".join(settings), reason] for (attacker, reason), settings in sorted(grouped.items())]


def leaderboard_tables(board: dict) -> list[tuple[str, list[str], list[list[str]]]]:
    """The leaderboard's tables as ``(title, header, rows)`` of text cells, in the order they are shown.

    Distinguishers (best ε_lb first within a setting), reconstruction attackers (lowest MSE
    first), attackers that do not apply (grouped by attacker and reason) and cells that
    crashed; a table without rows is left out.

    Parameters
    ----------
    board : dict
        A leaderboard (:func:`run_attacker_benchmark`, or its JSON read back).

    Returns
    -------
    list of (str, list of str, list of list of str)
    """
    tables = []
    dist = [r for r in board["rows"] if r["kind"] == "distinguisher" and r["status"] == "ok"]
    rec = [r for r in board["rows"] if r["kind"] == "reconstruction" and r["status"] == "ok"]
    if dist:
        rows = []
        for r in sorted(dist, key=lambda r: (r["setting"], -float(r["epsilon_lb"]))):
            exact = "–" if r["epsilon_exact"] is None else f"{float(r['epsilon_exact']):.3f}"
            sd = "" if r.get("epsilon_lb_sd") is None else f" ± {float(r['epsilon_lb_sd']):.3f}"
            rows.append([r["setting"], r["attacker"], f"{float(r['epsilon_lb']):.3f}{sd}", str(r["epsilon_claim"]),
                         exact, f"{r['tpr_at_fpr_1e-3']:.4f}", f"{r['tpr_at_fpr_1e-2']:.4f}", f"{r['auc']:.4f}",
                         f"{r['seconds_per_1e5']:.3f}"])
        tables.append(("Distinguishers", ["setting", "attacker", "ε_lb (mean ± sd)", "claim ε", "exact ε", "TPR@1e-3",
                                          "TPR@1e-2", "AUC", "s / 1e5"], rows))
    if rec:
        rows = []
        for r in sorted(rec, key=lambda r: (r["setting"], float(r["mse"]))):
            crb = "–" if r["mse_over_crb"] is None else f"{float(r['mse_over_crb']):.3f}"
            vt = "–" if r["mse_over_van_trees"] is None else f"{float(r['mse_over_van_trees']):.3f}"
            rows.append([r["setting"], r["attacker"], f"{float(r['mse']):.4g}", crb, vt, str(r["verdict"]),
                         f"{r['seconds_per_1e5']:.3f}"])
        tables.append(("Reconstruction attackers", ["setting", "attacker", "MSE", "MSE/CRB", "MSE/van Trees", "verdict",
                                                    "s / 1e5"], rows))
    not_applicable = _not_applicable_rows(board)
    if not_applicable:
        tables.append(("Not applicable", ["attacker", "settings", "why"], not_applicable))
    errors = [[r["setting"], r["attacker"], r["error"]] for r in board["rows"] if r["status"] == "error"]
    if errors:
        tables.append(("Errors", ["setting", "attacker", "error"], errors))
    return tables


def render_markdown(board: dict) -> str:
    """The leaderboard as Markdown: one table per section of :func:`leaderboard_tables`.

    Parameters
    ----------
    board : dict
        A leaderboard.

    Returns
    -------
    str
    """
    lines = [f"# Attacker leaderboard\n\n{_intro(board)}\n"]
    for k, (title, header, rows) in enumerate(leaderboard_tables(board)):
        lines += [f"{'' if k == 0 else chr(10)}## {title}\n", "| " + " | ".join(header) + " |",
                  "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |" for cells in rows]
    return "\n".join(lines) + "\n"


def attacker_colours(names: Sequence[str]) -> dict[str, tuple[float, float, float, float]]:
    """One distinct colour per attacker (the attackers of one figure).

    The ten strong colours of matplotlib's ``tab20`` come first, then its ten light ones;
    beyond twenty attackers, hues evenly spaced around the colour wheel.

    Parameters
    ----------
    names : sequence of str
        Attackers, in the order they get colours (the board's ``attackers``).

    Returns
    -------
    dict of str to RGBA tuple
    """
    import matplotlib

    n = len(names)
    if n <= 20:
        tab20 = matplotlib.colormaps["tab20"].colors
        palette = [*tab20[0::2], *tab20[1::2]]
    else:
        palette = [matplotlib.colormaps["hsv"](i / n) for i in range(n)]
    return {name: matplotlib.colors.to_rgba(palette[i]) for i, name in enumerate(names)}


def render_figures(board: dict) -> dict[str, bytes]:
    """Bar charts: ε_lb per setting and attacker; MSE/van Trees per setting and attacker.

    Parameters
    ----------
    board : dict
        A leaderboard.

    Returns
    -------
    dict of str to bytes
        PNG per file name (``distinguishers.png``, ``reconstructions.png``; one without rows is left out).
    """
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = {}
    for kind, metric, label in (("distinguisher", "epsilon_lb", "certified ε lower bound"),
                                ("reconstruction", "mse_over_van_trees", "MSE / van Trees bound")):
        rows = [r for r in board["rows"] if r["kind"] == kind and r["status"] == "ok" and r.get(metric) is not None]
        if not rows:
            continue
        settings = sorted({r["setting"] for r in rows})
        names = sorted({r["attacker"] for r in rows})
        colours = attacker_colours(names)  # per figure: an attacker has one kind, so it is in one figure only
        fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(settings)) + 1.8, 3.6))
        width = 0.8 / len(names)
        for i, a in enumerate(names):
            vals = [next((float(r[metric]) for r in rows if r["setting"] == s and r["attacker"] == a), np.nan)
                    for s in settings]
            ax.bar(np.arange(len(settings)) + i * width, vals, width, label=a, color=colours[a])
        ax.set_xticks(np.arange(len(settings)) + 0.4 - width / 2, settings, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel(label)
        if kind == "reconstruction":
            ax.axhline(1.0, color="k", lw=0.8, ls="--")
        # Beside the axes, not over them: inside, the legend hid the tallest bars.
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        plt.close(fig)
        out[f"{kind}s.png"] = buf.getvalue()
    return out


#: Caption of each leaderboard figure, by file name.
_CAPTIONS = {"distinguishers.png": "Certified ε lower bound per setting and distinguisher (mean over the repeats).",
             "reconstructions.png": "Reconstruction MSE over the van Trees bound per setting and attacker "
                                    "(dashed: the bound; below it would be a violation)."}
#: The figure shown after each table.
_TABLE_FIGURE = {"Distinguishers": "distinguishers.png", "Reconstruction attackers": "reconstructions.png"}


def render_html(board: dict, figures: dict[str, bytes]) -> str:
    """The leaderboard as one self-contained HTML page in the style of the audit reports.

    Parameters
    ----------
    board : dict
        A leaderboard.
    figures : dict of str to bytes
        :func:`render_figures` of it, embedded as base64 PNG (each enlarges on click, CSS only).

    Returns
    -------
    str
    """
    # The audit report's stylesheet, table and figure markup (one look for every privaudit page).
    from privaudit.audit.reporting.render import _CSS, _figure, _html_table

    e = html.escape
    intro = re.sub(r"\*(\w+)\*", r"<em>\1</em>", e(_intro(board)))  # the intro's Markdown emphasis as HTML
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             f"<title>privaudit attacker leaderboard</title><style>{_CSS}</style></head><body>",
             "<h1>privaudit attacker leaderboard</h1>", f"<p class='meta'>{intro}</p>"]
    for title, header, rows in leaderboard_tables(board):
        slug = title.lower().replace(" ", "-")
        parts += [f"<h2 id='{slug}'>{e(title)}</h2>", _html_table(header, rows, cls="summary")]
        name = _TABLE_FIGURE.get(title)
        if name in figures:
            parts.append(f"<div class='figs'>{_figure(name, figures[name], _CAPTIONS[name])}</div>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_leaderboard(board: dict, out_dir: str | Path) -> Path:
    """Write ``leaderboard.json``, ``leaderboard.md``, ``leaderboard.html`` and ``figures/*.png`` into ``out_dir``.

    Parameters
    ----------
    board : dict
        A leaderboard.
    out_dir : path
        Folder to write into (created if needed).

    Returns
    -------
    Path
        ``out_dir``.
    """
    out_dir = Path(out_dir)
    figures = render_figures(board)
    for name, png in figures.items():
        atomic_write(out_dir / "figures" / name, png)
    atomic_write(out_dir / "leaderboard.json", json.dumps(board, indent=2, allow_nan=False) + "\n")
    atomic_write(out_dir / "leaderboard.md", render_markdown(board))
    atomic_write(out_dir / "leaderboard.html", render_html(board, figures))
    return out_dir


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="privaudit bench attackers",
                                description="Run every registered attacker on a grid of mechanisms and write a leaderboard.")
    p.add_argument("--mechanisms", nargs="+", default=None, metavar="SETTING",
                   help=f"settings to run (default: all of {sorted(default_settings())})")
    p.add_argument("--attackers", nargs="+", default=None, metavar="NAME", help="attackers to run (default: all registered)")
    p.add_argument("--samples", type=int, default=20_000, help="releases per hypothesis / audited releases (default 20000)")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument("--repeats", type=int, default=5, help="audits averaged per distinguisher cell (default 5)")
    p.add_argument("--out", default="reports", help="parent folder; the leaderboard goes to OUT/attackers (default reports)")
    p.add_argument("--json", action="store_true", help="print the leaderboard as JSON on stdout")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``privaudit bench attackers ...``; returns the exit code (2 on bad arguments).

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments after ``bench attackers`` (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code (0, or 2 on bad arguments).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["attackers"]:
        argv = argv[1:]
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.samples < 100:
        print(f"privaudit: error: --samples must be >= 100, got {args.samples}", file=sys.stderr)
        return 2
    quiet = args.json or not sys.stderr.isatty()
    try:
        board = run_attacker_benchmark(settings=args.mechanisms, attackers=args.attackers, samples=args.samples,
                                       seed=args.seed, repeats=args.repeats, progress=None if quiet else lambda m: print(f"  {m}", file=sys.stderr))
    except ValueError as exc:
        print(f"privaudit: error: {exc}", file=sys.stderr)
        return 2
    out = write_leaderboard(board, Path(args.out) / "attackers")
    if args.json:
        print(json.dumps(board, allow_nan=False))
    else:
        print(f"leaderboard written to {out}/leaderboard.md")
    return 0
