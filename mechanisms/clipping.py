"""Per-example clipping of linear squared-loss gradients: the sensitivity-bounding step of DP-SGD.

For a linear model θ ∈ R^P with squared loss ℓ_i(θ) = (θᵀx_i − y_i)², the per-example
gradient is g_i = 2 r_i x_i with residual r_i = θᵀx_i − y_i, so its norm is
‖g_i‖ = 2|r_i|‖x_i‖ and clipping to norm c multiplies it by min(1, c/‖g_i‖) (Abadi et
al. 2016). The clipped sum Σ_i clip(g_i) is what the Gaussian noise of DP-SGD protects,
with ℓ₂ sensitivity c (add/remove) or 2c (replace-one, label).

Kept in :mod:`privaudit.mechanisms` because both the learners (which release it) and the
attackers (which subtract the known part of it) need it; this module imports torch, so
it is not imported by ``privaudit.mechanisms`` itself.
"""

from __future__ import annotations

import torch


def linear_clipped_grad_sum(
    theta: torch.Tensor, X: torch.Tensor, Y: torch.Tensor, clip: torch.Tensor | None,
    mask: torch.Tensor | None = None, xnorm: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Closed-form Σ_i clip(∇ℓ_i) for squared loss of R linear models at once.

    Parameters
    ----------
    theta : torch.Tensor of shape (R, P)
        Parameters of the R models.
    X : torch.Tensor of shape (n, P)
        Augmented inputs, shared by the models.
    Y : torch.Tensor of shape (R, n)
        Labels per model.
    clip : torch.Tensor of shape (R,) or (1,), or None
        Clip norms (None: no clipping).
    mask : torch.Tensor of shape (R, n), optional
        0/1 batch membership (None: every example).
    xnorm : torch.Tensor of shape (n,), optional
        Precomputed ‖x_i‖ (saves one pass per step).

    Returns
    -------
    sum : torch.Tensor of shape (R, P)
        The clipped gradient sum over the batch.
    norms : torch.Tensor of shape (R, n)
        Unclipped norms ‖g_i‖ = 2|r_i|‖x_i‖.
    """
    resid = theta @ X.T - Y  # (R, n)
    coef = 2.0 * resid
    norms = coef.abs() * (X.norm(dim=1) if xnorm is None else xnorm)
    if clip is not None:
        coef = coef * torch.clamp(clip.to(X.dtype)[:, None] / norms.clamp_min(1e-300), max=1.0)
    if mask is not None:
        coef = coef * mask
    return coef @ X, norms


__all__ = ["linear_clipped_grad_sum"]
