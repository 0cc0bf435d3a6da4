"""Cond-DP and Switch-Cond-DP (seed 002, Algorithm 1 and §4.3) and the DP-SGD baseline.

Model (seed 002, §3): a linear input layer on public features x_pub (optionally
conditioned, v_pub = Θ_pub Ĉ x_pub) and private features x_priv (v_priv = Θ_priv x_priv),
followed either by nothing (linear regression, embedding dimension 1, plus an
intercept) or by an MLP head f_ω (ReLU, hidden sizes e.g. (16, 8) or (128, 64), scalar
output). Loss: squared error. Training: our DP-SGD/DP-Adam engine
(:mod:`privaudit.learners.dpsgd`) under label DP (replace-one on the label, and on
the private features when present — seed 002, §3), calibrated over all epochs.

* ``DPSGDRegressor``: Ĉ = I (the seed's DPSGD baseline).
* ``CondDPRegressor``: Ĉ = VΣ⁻¹Vᵀ from the public training features
  (:func:`privaudit.learners.conditioning.conditioning_matrix`).
* ``CondDPRegressor(switch_epoch=k)``: Switch-Cond-DP. After k epochs the parameters
  are re-expressed in plain coordinates, Θ_eff = Θ Ĉ (so the model's function is
  unchanged at the switch), and training continues without conditioning. Adam's moment
  estimates are reset at the switch because they were accumulated in the conditioned
  coordinates. ``switch_epoch=None`` (or = epochs) is plain Cond-DP, 0 is DP-SGD.

Categorical features (the seed's Criteo adaptation, §5.4): columns listed in
``categorical`` hold integer codes, hashed into ``n_buckets`` bins per feature; each
feature has its own block of an embedding table (dimension ``embed_dim``); the
embeddings are concatenated with the dense input layer's output and fed to the MLP
head. Conditioning cannot be applied to sparse inputs, so (as in the seed) Cond-DP
uses Ĉ's construction as an *initialisation* instead: the table is initialised with
sqrt(n)·V_{:,:e} Σ_{:e}⁻¹ from the top-e SVD of the one-hot public matrix.
Per-sample gradients of the table are computed on the gathered rows (each feature
owns distinct rows, so the per-sample norm is exact) and scattered back with
``index_add_``; no per-sample copy of the table is materialised.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context

from privaudit.learners.fitted_claim import FittedClaimMixin
from privaudit.mechanisms.randomness import torch_generator
from privaudit.mechanisms.validation import (
    InvalidInputError,
    InvalidParameterError,
    check_int,
)

from .conditioning import conditioning_matrix
from .input_validation import check_data, check_predict_data
from .dpsgd import DPSGDEngine, check_clip
from privaudit.learners import parameter_constraints as _constraints
from privaudit.learners.parameter_constraints import ValidatedParamsMixin

_HASH_A = np.uint64(0x9E3779B97F4A7C15)


def hash_codes(codes: np.ndarray, n_buckets: int) -> np.ndarray:
    """Hash integer category codes (n, F) into per-feature buckets, offset so feature f owns rows [fB, (f+1)B).

    Multiplicative (Fibonacci) hashing of (code, feature) pairs; deterministic, no salt.

    Parameters
    ----------
    codes : ndarray of shape (n, F)
        Integer category codes (integer-valued floats accepted).
    n_buckets : int
        Buckets B per feature.

    Returns
    -------
    ndarray of int64, shape (n, F)
        Row indices into an embedding table of F·B rows.

    Raises
    ------
    InvalidInputError
        When a code is not a finite integer.
    """
    codes = np.asarray(codes)
    if not np.all(np.isfinite(codes.astype(float))) or np.any(codes != np.round(codes)):
        raise InvalidInputError("categorical columns must hold finite integer codes")
    c = codes.astype(np.int64).astype(np.uint64)
    f = np.arange(codes.shape[1], dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = (c * _HASH_A + f * np.uint64(0xBF58476D1CE4E5B9)) >> np.uint64(17)
    return (h % np.uint64(n_buckets)).astype(np.int64) + np.arange(codes.shape[1]) * n_buckets


def svd_embedding_init(idx: np.ndarray, n_rows: int, embed_dim: int) -> np.ndarray:
    """sqrt(n)·V_{:, :e} Σ_{:e}⁻¹ from the top-e SVD of the one-hot matrix (seed 002, §5.4).

    Each row of the one-hot matrix has F ones (one per feature). Rows of the table
    that never occur get 0 (they receive no gradient either).

    Parameters
    ----------
    idx : ndarray of int, shape (n, F)
        Table rows of each example (from :func:`hash_codes`), from public data.
    n_rows : int
        Rows of the embedding table.
    embed_dim : int
        Embedding width e (only min(e, min(n, n_rows) − 1) columns are filled; the rest stay 0).

    Returns
    -------
    ndarray of shape (n_rows, embed_dim)
        The initial table.
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.linalg import svds

    n, F = idx.shape
    A = csr_matrix((np.ones(n * F), (np.repeat(np.arange(n), F), idx.ravel())), shape=(n, n_rows))
    k = min(embed_dim, min(A.shape) - 1)
    _, s, Vt = svds(A, k=k, random_state=0)
    order = np.argsort(s)[::-1]
    s, Vt = s[order], Vt[order]
    s = np.maximum(s, s[0] * 1e-8)
    table = np.zeros((n_rows, embed_dim))
    table[:, :k] = np.sqrt(n) * Vt.T / s
    return table


class _DPRegressor(ValidatedParamsMixin, FittedClaimMixin, RegressorMixin, BaseEstimator):
    """Shared implementation; ``_conditioned`` selects Cond-DP vs DP-SGD."""

    #: Declarative constraints (scikit-learn format), checked when ``fit`` is entered and by configurations at load.
    _parameter_constraints = _constraints.DPSGD

    _conditioned = False

    def __init__(
        self, *, epsilon=1.0, delta=1e-6, clip=1.0, epochs=100, lr=0.01, batch_size=None, optimizer="adam",
        model="linear", hidden=(16, 8), embed_dim=16, init_std=1e-3, fit_intercept=True, n_public=None,
        categorical=None, n_buckets=1000, cat_embed_dim=8, label_bounds=None, adjacency="label",
        accountant="pld", noise_multiplier=None, rcond=1e-8, max_condition=1e4, cond_scale="isotropic",
        callback=None, random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.clip = clip
        self.epochs = epochs
        self.lr = lr
        self.batch_size = batch_size
        self.optimizer = optimizer
        self.model = model
        self.hidden = hidden
        self.embed_dim = embed_dim
        self.init_std = init_std
        self.fit_intercept = fit_intercept
        self.n_public = n_public
        self.categorical = categorical
        self.n_buckets = n_buckets
        self.cat_embed_dim = cat_embed_dim
        self.label_bounds = label_bounds
        self.adjacency = adjacency
        self.accountant = accountant
        self.noise_multiplier = noise_multiplier
        self.rcond = rcond
        self.max_condition = max_condition
        self.cond_scale = cond_scale
        self.callback = callback
        self.random_state = random_state

    # ------------------------------------------------------------------ validation
    def _switch(self) -> int | None:
        return None

    def _split(self, X, fitting: bool):
        """(dense public, dense private, categorical codes) from X (already validated by sklearn)."""
        cat = [] if self.categorical is None else [int(c) for c in np.atleast_1d(self.categorical)]
        d = X.shape[1]
        if any(c < 0 or c >= d for c in cat):
            raise InvalidParameterError(f"categorical column indices must lie in [0, {d}), got {self.categorical!r}")
        dense = [j for j in range(d) if j not in cat]
        n_pub = len(dense) if self.n_public is None else int(self.n_public)
        if n_pub > len(dense):
            raise InvalidParameterError(f"n_public must be <= the {len(dense)} dense columns, got n_public={n_pub}")
        Xd = X[:, dense]
        return Xd[:, :n_pub], Xd[:, n_pub:], (X[:, cat] if cat else None)

    def _check_y(self, y):
        if self.label_bounds is not None:
            lo, hi = (float(b) for b in self.label_bounds)
            if not lo < hi:
                raise InvalidParameterError(f"label_bounds must satisfy low < high, got {self.label_bounds!r}")
            bad = (y < lo) | (y > hi)
            if np.any(bad):
                i = int(np.argmax(bad))
                raise InvalidInputError(
                    f"y[{i}]={y[i]!r} violates the declared label_bounds={tuple(self.label_bounds)!r}")
        return y

    def _engine(self, epochs=None) -> DPSGDEngine:
        return DPSGDEngine(
            epsilon=self.epsilon, delta=self.delta, clip=self.clip, epochs=self.epochs if epochs is None else epochs,
            lr=self.lr, batch_size=self.batch_size, optimizer=self.optimizer, adjacency=self.adjacency,
            accountant=self.accountant, noise_multiplier=self.noise_multiplier, callback=self.callback,
            random_state=self._gen,
        )

    # ------------------------------------------------------------------ fit
    def release_view(self, *, n_train: int = 2000, dim: int = 3, mode: str = "white-box", rng=None):
        """The mechanism standing for what this learner releases under label DP: DP-SGD along a label canary.

        The view is :class:`~privaudit.learners.dpsgd_view.DPSGDLabelCanary`: the
        DP-SGD engine with this learner's (ε, δ, clip, epochs, lr, adjacency) on a
        small canary dataset of ``n_train`` rows in ``dim`` dimensions, one label
        flipped; ``mode`` is ``"white-box"`` (every noisy step seen) or
        ``"black-box"`` (the final model). Conditioning by public features is
        post-processing of public data and does not enter the label-DP analysis.
        The view declares its pair, attacker and reconstruction.
        """
        # The view uses privaudit.attacks (its attacker and prior), which training does not need.
        from privaudit.learners.dpsgd_view import DPSGDLabelCanary, canary_dataset

        p = self.get_params()
        kw = {k: p[k] for k in ("epsilon", "delta", "clip", "epochs", "lr", "adjacency") if k in p}
        data = canary_dataset(n_train, dim, rng=np.random.default_rng(rng))
        return DPSGDLabelCanary(data, mode=mode, **kw)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Train on public (+ private) features X and private labels y; sets ``.claim``."""
        eps, epochs = float(self.epsilon), int(self.epochs)
        check_clip(self.clip, eps)  # spans two parameters: clip=None only when ε = ∞
        switch = self._switch()
        if switch is not None and not 0 <= switch <= epochs:
            raise InvalidParameterError(f"switch_epoch must lie in [0, epochs={epochs}], got switch_epoch={switch!r}")
        X, y = check_data(X, y, None, self)  # sklearn's checks (NaN/inf, sparse, complex, shapes) → InvalidInputError
        Xp, Xq, codes = self._split(X, fitting=True)
        y = self._check_y(y)
        n = Xp.shape[0]
        if codes is not None and self.model != "mlp":
            raise InvalidParameterError("categorical features need model='mlp' (embedding tables + MLP head)")
        self._gen = torch_generator(self.random_state)
        self.seed_ = int(self._gen.initial_seed())  # random_state=seed_ reproduces the fit
        d_pub = Xp.shape[1]
        if self._conditioned and d_pub > 0:
            cond = conditioning_matrix(Xp, rcond=self.rcond, max_condition=self.max_condition, scale=self.cond_scale)
            self.conditioning_ = cond.matrix
            self.singular_values_ = cond.singular_values
        else:
            self.conditioning_ = np.eye(d_pub)
            self.singular_values_ = np.linalg.svd(Xp, compute_uv=False) if d_pub else np.zeros(0)
        engine = self._engine()
        self.noise_multiplier_ = engine.calibrate(n)
        self.claim_ = engine.claim(n)
        if self.model == "linear":
            self._fit_linear(engine, Xp, Xq, y, switch)
        else:
            self._fit_mlp(engine, Xp, Xq, codes, y, switch)
        del self._gen
        return self

    def _fit_linear(self, engine, Xp, Xq, y, switch):
        n = Xp.shape[0]
        C = self.conditioning_
        ones = np.ones((n, 1)) if self.fit_intercept else np.zeros((n, 0))
        X_plain = np.hstack([Xp, Xq, ones])
        X_cond = np.hstack([Xp @ C, Xq, ones])
        P = X_plain.shape[1]
        M = np.eye(P)
        M[: C.shape[0], : C.shape[0]] = C  # θ_plain = θ M (Ĉ symmetric)
        init = float(self.init_std)
        theta0 = torch.randn((1, P), generator=self._gen, dtype=torch.float64) * init
        if not self._conditioned:
            theta = engine.train_linear(X_plain, y, theta0).numpy()[0]
        elif switch is None or switch == engine.epochs:
            theta = engine.train_linear(X_cond, y, theta0).numpy()[0] @ M
        else:  # Switch-Cond-DP (switch = 0 maps the initialisation and trains plainly)
            theta = engine.train_linear(X_cond, y, theta0, switch=(switch, X_plain, M)).numpy()[0]
        d = Xp.shape[1] + Xq.shape[1]
        self.coef_ = theta[:d]
        self.intercept_ = float(theta[d]) if self.fit_intercept else 0.0

    # ------------------------------------------------------------------ MLP
    def _init_mlp(self, d_in, n_cat_out):
        gen, dtype = self._gen, torch.float32
        init = float(self.init_std)
        p = {}
        sizes = [int(self.embed_dim) if d_in else 0]
        if d_in:
            p["W_in"] = torch.randn((sizes[0], d_in), generator=gen, dtype=dtype) * init
        width = sizes[0] + n_cat_out
        for i, h in enumerate([*(check_int("hidden", h) for h in self.hidden), 1]):
            bound = 1.0 / math.sqrt(width)  # PyTorch's nn.Linear default (Kaiming-uniform range)
            p[f"W{i}"] = (torch.rand((h, width), generator=gen, dtype=dtype) * 2 - 1) * bound
            p[f"b{i}"] = (torch.rand((h,), generator=gen, dtype=dtype) * 2 - 1) * bound
            width = h
        return p

    def _head(self, p, v):
        n_layers = len(self.hidden) + 1
        for i in range(n_layers):
            v = v @ p[f"W{i}"].T + p[f"b{i}"]
            if i < n_layers - 1:
                v = torch.relu(v)
        return v[..., 0]

    def _forward(self, p, x, emb=None):
        parts = []
        if "W_in" in p:
            parts.append(x @ p["W_in"].T)
        if emb is not None:
            parts.append(emb)
        return self._head(p, torch.cat(parts, dim=-1))

    def _fit_mlp(self, engine, Xp, Xq, codes, y, switch):
        n, d_pub = Xp.shape
        C = torch.as_tensor(self.conditioning_, dtype=torch.float32)
        Xplain = torch.as_tensor(np.hstack([Xp, Xq]), dtype=torch.float32)
        Xcond = torch.as_tensor(np.hstack([Xp @ self.conditioning_, Xq]), dtype=torch.float32)
        yt = torch.as_tensor(y, dtype=torch.float32)
        n_cat = 0 if codes is None else codes.shape[1]
        e = int(self.cat_embed_dim)
        params = self._init_mlp(Xplain.shape[1], n_cat * e)
        idx = None
        if codes is not None:
            B = int(self.n_buckets)
            idx_np = hash_codes(codes, B)
            if self._conditioned:
                table = svd_embedding_init(idx_np, n_cat * B, e)
            else:
                init = float(self.init_std)
                table = torch.randn((n_cat * B, e), generator=self._gen, dtype=torch.float64).numpy() * init
            params["emb"] = torch.as_tensor(table, dtype=torch.float32)
            idx = torch.as_tensor(idx_np)
        d_in = Xplain.shape[1]

        def to_plain(p):
            q = dict(p)
            if "W_in" in q and d_pub:
                W = q["W_in"].clone()
                W[:, :d_pub] = W[:, :d_pub] @ C  # Θ_eff = Θ Ĉ: same function at the switch
                q["W_in"] = W
            return q

        epochs = engine.epochs
        if not self._conditioned or codes is not None and d_in == 0:
            plan = [("plain", epochs, Xplain if not self._conditioned else Xcond, None)]
        elif switch is None or switch == epochs:
            plan = [("conditioned", epochs, Xcond, None)]
        else:
            plan = [("conditioned", switch, Xcond, None), ("plain", epochs - switch, Xplain, to_plain)]
        plan = [ph for ph in plan if ph[1] > 0] or plan[-1:]

        if idx is None:
            # Dense model: ghost-norm clipped sums (exact for an MLP, no per-sample copies).
            order = (["W_in"] if "W_in" in params else []) + [f"{w}{i}" for i in range(len(self.hidden) + 1)
                                                              for w in ("W", "b")]

            def to_layers(p):
                ls = [(p["W_in"], None)] if "W_in" in p else []
                return ls + [(p[f"W{i}"], p[f"b{i}"]) for i in range(len(self.hidden) + 1)]

            def from_layers(ls):
                flat_t = [t for W, b in ls for t in ((W,) if b is None else (W, b))]
                return dict(zip(order, flat_t, strict=True))

            phases = [(name, k, Xin, None if f is None else (lambda ls, f=f: to_layers(f(from_layers(ls)))))
                      for name, k, Xin, f in plan]
            # The embedding layer Θx is linear (no ReLU); the head's hidden layers have ReLUs.
            relu = ((False,) if "W_in" in params else ()) + (True,) * len(self.hidden) + (False,)
            out = from_layers(engine.train_mlp(to_layers(params), plan[0][2], yt, phases=phases, relu=relu))
        else:
            out = self._train_categorical(engine, params, plan, idx, yt, n_cat, e)
        self.params_ = {k: v.detach() for k, v in (to_plain(out) if plan[-1][0] == "conditioned" else out).items()}

    def _train_categorical(self, engine, params, plan, idx, y, n_cat, e):
        """Clipped per-sample gradient sums for embedding tables + dense head, via gathered rows."""
        from torch.func import grad, vmap

        names = list(params)
        shapes = [params[k].shape for k in names]
        sizes = [int(np.prod(s)) for s in shapes]
        clip = check_clip(self.clip, float(self.epsilon), 1)

        def unflat(v):
            return {k: t.reshape(s) for k, t, s in zip(names, torch.split(v, sizes), shapes, strict=True)}

        def flat(p):
            return torch.cat([p[k].reshape(-1) for k in names])

        def loss(p_dense, x, emb, t):
            return (self._forward(p_dense, x, emb.reshape(-1)) - t) ** 2

        psg = vmap(grad(loss, argnums=(0, 2)), in_dims=(None, 0, 0, 0))
        dense_names = [k for k in names if k != "emb"]

        def fn_for(Xin):
            def fn(theta, mask):
                p = unflat(theta)
                rows = slice(None) if mask is None else torch.nonzero(mask[0] > 0).squeeze(1)
                ib, xb, yb = idx[rows], Xin[rows], y[rows]
                if yb.shape[0] == 0:
                    return torch.zeros_like(theta)
                dense = {k: p[k] for k in dense_names}
                g_dense, g_emb = psg(dense, xb, p["emb"][ib], yb)
                b = yb.shape[0]
                sq = sum((g_dense[k].reshape(b, -1) ** 2).sum(1) for k in dense_names)
                sq = sq + (g_emb.reshape(b, -1) ** 2).sum(1)
                scale = (torch.ones(b) if clip is None
                         else torch.clamp(float(clip[0]) / sq.sqrt().clamp_min(1e-30), max=1.0))
                out = {k: (scale @ g_dense[k].reshape(b, -1)).reshape(p[k].shape) for k in dense_names}
                out["emb"] = torch.zeros_like(p["emb"]).index_add_(
                    0, ib.reshape(-1), (scale[:, None, None] * g_emb).reshape(-1, e))
                return flat(out)
            return fn

        phases = [(name, k, fn_for(Xin), None if f is None else (lambda th, f=f: flat(f(unflat(th)))))
                  for name, k, Xin, f in plan]
        return unflat(engine.train_flat(flat(params), phases, y.shape[0]))

    # ------------------------------------------------------------------ predict
    def predict(self, X):
        """Predictions f(x) in plain (unconditioned) coordinates."""
        X = check_predict_data(self, X, "claim_")
        Xp, Xq, codes = self._split(X, fitting=False)
        if self.model == "linear":
            return np.hstack([Xp, Xq]) @ self.coef_ + self.intercept_
        x = torch.as_tensor(np.hstack([Xp, Xq]), dtype=torch.float32)
        emb = None
        if codes is not None:
            idx = torch.as_tensor(hash_codes(codes, self.n_buckets))
            emb = self.params_["emb"][idx].reshape(idx.shape[0], -1)
        with torch.no_grad():
            return self._forward(self.params_, x, emb).numpy().astype(float)


class DPSGDRegressor(_DPRegressor):
    """DP-SGD / DP-Adam regression under label DP: the seed 002 baseline (Ĉ = I).

    Parameters
    ----------
    epsilon, delta : float
        Target (ε, δ) under ``adjacency`` (default ``"label"``, replace-one); ε = inf is non-private.
    clip : float
        Per-sample gradient clip norm c > 0 (None allowed only with ε = inf).
    epochs, lr, batch_size, optimizer :
        Training schedule (full batch when ``batch_size`` is None); DP-Adam by default, as in the seed.
    model : {"linear", "mlp"}
        Linear regression (+ intercept), or linear input layer (``embed_dim`` outputs) + MLP head ``hidden``.
    init_std : float
        Std of the Gaussian initialisation of the input layer (seed range [1e-5, 5]).
    n_public : int, optional
        The first ``n_public`` dense columns are public, the rest private (semi-sensitive
        features: adjacency then covers private features and label, seed 002 §3). Default: all public.
    categorical, n_buckets, cat_embed_dim :
        Integer-coded categorical columns, hashed into embedding tables (MLP only).
    label_bounds : (low, high), optional
        Declared label range; labels outside raise :class:`InvalidInputError`.
    noise_multiplier : float, optional
        Override the calibration; ``.claim`` is then computed from it.
    callback : callable, optional
        Receives :class:`privaudit.learners.dpsgd.StepInfo` after every noisy step.
    random_state : int, Generator, SeedSequence or None
        The torch seed (:func:`~privaudit.mechanisms.randomness.torch_generator`), recorded as ``seed_``.

    Attributes
    ----------
    claim : PrivacyClaim ; noise_multiplier_ ; coef_, intercept_ (linear) or params_ (MLP) ;
    conditioning_ (identity here) ; singular_values_ of the public training features.
    """

    _conditioned = False


class CondDPRegressor(_DPRegressor):
    """Cond-DP (seed 002, Algorithm 1) and Switch-Cond-DP (§4.3).

    Same parameters as :class:`DPSGDRegressor`, plus

    switch_epoch : int, optional
        Train k epochs with the conditioned layer Θ Ĉ x_pub, then continue from
        Θ_eff = Θ Ĉ without conditioning (Switch-Cond-DP). None = Cond-DP throughout.
    rcond, max_condition, cond_scale :
        Construction of Ĉ; see :func:`privaudit.learners.conditioning.conditioning_matrix`.

    ``coef_`` / ``params_`` are always stored in plain coordinates (Θ_eff), so that
    ``predict`` takes raw public features.
    """

    #: Declarative constraints (scikit-learn format), also used to validate configurations at load.
    _parameter_constraints = _constraints.CONDDP

    _conditioned = True

    def __init__(
        self, *, switch_epoch=None, epsilon=1.0, delta=1e-6, clip=1.0, epochs=100, lr=0.01, batch_size=None,
        optimizer="adam", model="linear", hidden=(16, 8), embed_dim=16, init_std=1e-3, fit_intercept=True,
        n_public=None, categorical=None, n_buckets=1000, cat_embed_dim=8, label_bounds=None, adjacency="label",
        accountant="pld", noise_multiplier=None, rcond=1e-8, max_condition=1e4, cond_scale="isotropic",
        callback=None, random_state=None,
    ):
        super().__init__(
            epsilon=epsilon, delta=delta, clip=clip, epochs=epochs, lr=lr, batch_size=batch_size, optimizer=optimizer,
            model=model, hidden=hidden, embed_dim=embed_dim, init_std=init_std, fit_intercept=fit_intercept,
            n_public=n_public, categorical=categorical, n_buckets=n_buckets, cat_embed_dim=cat_embed_dim,
            label_bounds=label_bounds, adjacency=adjacency, accountant=accountant, noise_multiplier=noise_multiplier,
            rcond=rcond, max_condition=max_condition, cond_scale=cond_scale, callback=callback,
            random_state=random_state,
        )
        self.switch_epoch = switch_epoch

    def _switch(self):
        return None if self.switch_epoch is None else int(self.switch_epoch)
