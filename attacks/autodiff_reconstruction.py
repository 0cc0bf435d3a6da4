"""The generic autodiff reconstruction attacker (``autodiff-mle``) for any torch map with Gaussian noise.

Shares the release model and base class of :mod:`privaudit.attacks.reconstruction`;
torch is imported when the attacker runs.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from privaudit.mechanisms.validation import InvalidInputError, InvalidParameterError, check_array, check_int

from .reconstruction import (
    _CHUNK,
    NaiveInverse,
    ReconstructionAttacker,
    _modulated,
    _Round,
    _supported,
    _UnbiasedOnLinearReleases,
    as_rounds,
    torch_map,
)
from .registry import register_attack


# --- generic autodiff MLE -------------------------------------------------------------------------------
@register_attack("autodiff-mle")
class AutodiffMLE(_UnbiasedOnLinearReleases, ReconstructionAttacker):
    """Multi-start Levenberg–Marquardt MLE for any torch map with Gaussian noise.

    Minimises Σ_t ‖g̃_t − f_t(x, φ_t)‖²/σ_t² (+ (y − xᵀβ)²/σ_y² when y is given) with
    Jacobians from ``torch.func.vmap(jacrev)``. Starts: the naive inverse (or the first
    round's output when input and output dimensions agree, else 0) and
    ``n_starts − 1`` jittered copies at the noise scale; the best end point wins.

    Parameters
    ----------
    n_starts : int
        Starts per release.
    n_iter : int
        LM iterations.
    """

    unbiased = True
    needs_phase = True
    strength = 60

    def __init__(self, mechanism: object, *, prior: object = None, beta: ArrayLike | None = None,
                 sigma_y: float | None = None, random_state: np.random.Generator | int | None = None,
                 n_starts: int = 3, n_iter: int = 30) -> None:
        super().__init__(mechanism, prior=prior, beta=beta, sigma_y=sigma_y, random_state=random_state)
        self.n_starts = n_starts
        self.n_iter = n_iter

    @classmethod
    def applicable(cls, mechanism: object, *, prior: object = None, phase_known: bool = True,
                   side_info: bool = False) -> bool:
        """Every round is a supported release or has ``torch_map`` and ``sigma``; modulated rounds need the phases shown.

        Parameters
        ----------
        mechanism : mechanism or sequence of mechanisms
            One release or the T rounds of a transcript.
        prior : GaussianPrior or DiscretePrior, optional
            The prior the audit would hand the attacker.
        phase_known : bool
            Whether the attacker is shown the modulation phases.
        side_info : bool
            Whether the public response y is available.

        Returns
        -------
        bool
        """
        rounds = as_rounds(mechanism)
        ok = all(_supported(m) or (hasattr(m, "torch_map") and hasattr(m, "sigma")) for m in rounds)
        return ok and (phase_known or not any(_modulated(m) for m in rounds))

    def _prepare(self, outputs, phase, y):
        rounds = as_rounds(self.mechanism)
        out = check_array("outputs", outputs, ndim=(2, 3))
        out = out[:, None, :] if out.ndim == 2 else out
        if out.shape[1] != len(rounds):
            raise InvalidInputError(f"outputs must hold {len(rounds)} round(s) on axis 1, got shape {out.shape}")
        return out, rounds, phase, y

    def _reconstruct(self, out, rounds, phase, y):
        import torch
        from torch.func import jvp, vmap

        n_starts = check_int("n_starts", self.n_starts)
        n_iter = check_int("n_iter", self.n_iter)
        n, t, k = out.shape
        d = rounds[0].dim if hasattr(rounds[0], "dim") else k
        fns = [torch_map(m) for m in rounds]
        sig = [float(m.sigma) for m in rounds]
        if phase is not None:
            p = np.asarray(phase, dtype=float)
            p = p[:, None, :] if p.ndim == 2 and t == 1 else p
            phase_t = torch.as_tensor(np.array(np.broadcast_to(p, (n, t, p.shape[-1]))), dtype=torch.float64)
        else:
            phase_t = torch.zeros((n, t, 0), dtype=torch.float64)
        use_y = y is not None
        if use_y and (self.beta is None or self.sigma_y is None):
            raise InvalidParameterError("autodiff-mle uses y only with beta and sigma_y given at construction")
        beta_t = torch.as_tensor(np.zeros(d) if not use_y else np.asarray(self.beta, float), dtype=torch.float64)
        sy = float(self.sigma_y) if use_y else 1.0
        y_t = torch.as_tensor(np.zeros(n) if not use_y else np.asarray(y, float), dtype=torch.float64)

        has_phase = phase_t.shape[-1] > 0

        def residual(x, obs, ph, yy):
            """Whitened residuals of a batch, (B, R)."""
            parts = [(obs[:, j] - f(x, ph[:, j] if has_phase else None)) / s for j, (f, s) in enumerate(zip(fns, sig))]
            if use_y:
                parts.append(((yy - x @ beta_t) / sy)[:, None])
            return torch.cat(parts, dim=1)

        def jacobian(x, obs, ph, yy):
            # Forward mode, one batched jvp per input direction (d is small): (B, R, d).
            fn = lambda z: residual(z, obs, ph, yy)  # noqa: E731
            cols = vmap(lambda tan: jvp(fn, (x,), (tan.expand_as(x),))[1])(eye)
            return cols.permute(1, 2, 0)

        # Starts.
        rng = np.random.default_rng(self.random_state)
        if all(_supported(m) for m in rounds):
            x0 = NaiveInverse(rounds)._reconstruct(out, [_Round(m, k) for m in rounds], None, None)
            scale = max(s / _Round(m, k).c for m, s in zip(rounds, sig))
        else:
            x0 = out[:, 0, :d].copy() if k == d else np.zeros((n, d))
            scale = max(sig)
        starts = np.repeat(x0[:, None], n_starts, axis=1)
        starts[:, 1:] += scale * rng.standard_normal((n, n_starts - 1, d))
        obs_t = torch.as_tensor(out, dtype=torch.float64)
        best = np.empty((n, d))
        eye = torch.eye(d, dtype=torch.float64)
        res, jac = residual, jacobian
        chunk = max(1, _CHUNK // n_starts)
        for s in range(0, n, chunk):
            sl = slice(s, s + chunk)
            b = min(chunk, n - s)
            x = torch.as_tensor(starts[sl].reshape(b * n_starts, d), dtype=torch.float64)
            rep = lambda z: z[sl].repeat_interleave(n_starts, dim=0)  # noqa: E731
            obs, ph, yy = rep(obs_t), rep(phase_t), rep(y_t)
            with torch.no_grad():
                r = res(x, obs, ph, yy)
                f = (r**2).sum(1)
                damp = torch.full((x.shape[0],), 1e-6, dtype=torch.float64)
                for _ in range(n_iter):
                    jm = jac(x, obs, ph, yy)
                    h = jm.transpose(1, 2) @ jm
                    g = -(jm.transpose(1, 2) @ r[..., None])[..., 0]
                    diag = torch.diagonal(h, dim1=1, dim2=2)
                    step = torch.linalg.solve(h + damp[:, None, None] * (torch.diag_embed(diag) + 1e-12 * eye), g[..., None])[..., 0]
                    xn = x + step
                    rn = res(xn, obs, ph, yy)
                    fn = (rn**2).sum(1)
                    ok = fn < f
                    x = torch.where(ok[:, None], xn, x)
                    r = torch.where(ok[:, None], rn, r)
                    f = torch.where(ok, fn, f)
                    damp = torch.where(ok, damp / 3, damp * 8)
                    # Converged when no row still lowers its objective noticeably.
                    if not bool(torch.any(ok & (step.abs().amax(1) > 1e-10 * (1 + x.abs().amax(1))))):
                        break
            fb = f.reshape(b, n_starts)
            idx = torch.argmin(fb, dim=1)
            best[sl] = x.reshape(b, n_starts, d)[torch.arange(b), idx].numpy()
        return best


__all__ = ["AutodiffMLE"]
