"""Offline loaders of the five regression tasks of seed 000's Table 1.

Every task is built from data shipped with statsmodels (no download):

========================  ======  ===  =================  ====================================
task                      n       d    paper OLS R²       source / target
========================  ======  ===  =================  ====================================
``co2``                   2284    7    0.999              ``statsmodels.datasets.co2``, weekly CO2 (ppm)
``fair``                  6366    8    0.853              ``fair``, target ``yrs_married``
``modechoice``            840     7    0.967              ``modechoice``, target ``gc`` (generalised cost)
``randhie_lncoins``       20190   9    0.406              ``randhie``, target ``lncoins``
``randhie_fmde``          20190   9    0.389              ``randhie``, target ``fmde``
========================  ======  ===  =================  ====================================

How each design matrix is built (the seed does not say; these choices reproduce its n, d):

* **co2** — the 59 missing weekly values are filled by linear interpolation in time
  (keeping n = 2284). With t = decimal year − 1958 the d = 7 features are a cubic trend
  and two annual harmonics: t, t², t³, sin 2πt, cos 2πt, sin 4πt, cos 4πt.
* **fair** — all eight other columns (rate_marriage, age, children, religious, educ,
  occupation, occupation_husb, affairs).
* **modechoice** — the seven columns other than ``individual`` and the target ``gc``
  (mode, choice, ttme, invc, invt, hinc, psize). ``gc`` is the only target of this
  file whose OLS R² is near the paper's 0.967.
* **randhie_*** — the nine other columns of the ten in the file.

Splits: one fixed random permutation per ``random_state`` into 60 % train, 20 %
validation, 20 % test. Features are standardised with the training mean and
standard deviation; so is the response ("standardised response": R² on the test
split is unaffected by it, but the learners fit a unit-scale target).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from privaudit.mechanisms.randomness import RandomLike, resolve_seed
from privaudit.mechanisms.validation import InvalidParameterError

#: Names of the Table-1 tasks, in the paper's order.
TASKS = ("co2", "fair", "modechoice", "randhie_lncoins", "randhie_fmde")

#: OLS R² reported in seed 000's Table 1.
PAPER_OLS_R2 = {"co2": 0.999, "fair": 0.853, "modechoice": 0.967, "randhie_lncoins": 0.406, "randhie_fmde": 0.389}

#: Split fractions (train, validation); the test split takes the rest.
SPLIT = (0.6, 0.2)


@dataclass(frozen=True)
class RegressionTask:
    """A standardised regression task with fixed train/validation/test splits.

    The arrays are read-only. ``y_*`` are standardised with the training mean and
    standard deviation (``y_mean``, ``y_scale``), as are the columns of ``X_*``.
    """

    name: str
    description: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    feature_names: tuple = field(default=())
    y_mean: float = 0.0
    y_scale: float = 1.0

    @property
    def n_samples(self) -> int:
        """Total number of rows over the three splits (Table 1's n)."""
        return len(self.y_train) + len(self.y_val) + len(self.y_test)

    @property
    def n_features(self) -> int:
        """Number of features d."""
        return self.X_train.shape[1]


def _co2():
    import statsmodels.api as sm

    series = sm.datasets.co2.load_pandas().data["co2"].interpolate(method="time")
    idx = series.index
    t = idx.year + (idx.day_of_year - 1) / 365.25 - 1958.0
    t = np.asarray(t, dtype=float)
    two_pi_t = 2 * np.pi * t
    X = np.column_stack([t, t**2, t**3, np.sin(two_pi_t), np.cos(two_pi_t), np.sin(2 * two_pi_t), np.cos(2 * two_pi_t)])
    names = ("t", "t^2", "t^3", "sin(2pi t)", "cos(2pi t)", "sin(4pi t)", "cos(4pi t)")
    return X, series.to_numpy(dtype=float), names, "Mauna Loa weekly CO2 (ppm) on a cubic trend and two annual harmonics"


def _frame_task(loader: str, target: str, drop: tuple = ()):
    import statsmodels.api as sm

    df = getattr(sm.datasets, loader).load_pandas().data
    features = df.drop(columns=[target, *drop])
    return features.to_numpy(dtype=float), df[target].to_numpy(dtype=float), tuple(features.columns)


def _raw(name: str):
    if name == "co2":
        return _co2()
    if name == "fair":
        X, y, names = _frame_task("fair", "yrs_married")
        return X, y, names, "Fair's affairs survey: years married on the other 8 columns"
    if name == "modechoice":
        X, y, names = _frame_task("modechoice", "gc", drop=("individual",))
        return X, y, names, "Travel mode choice: generalised cost gc on 7 columns (individual dropped)"
    if name in ("randhie_lncoins", "randhie_fmde"):
        target = name.split("_", 1)[1]
        X, y, names = _frame_task("randhie", target)
        return X, y, names, f"RAND Health Insurance Experiment: {target} on the other 9 columns"
    raise InvalidParameterError(f"unknown task {name!r}; expected one of {TASKS}")


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=float)
    a.flags.writeable = False
    return a


def load_task(name: str, random_state: RandomLike = 0) -> RegressionTask:
    """Load one Table-1 task with fixed, standardised train/validation/test splits.

    Parameters
    ----------
    name : str
        One of :data:`TASKS`.
    random_state : int, Generator, SeedSequence or None
        Resolved by :func:`~privaudit.mechanisms.randomness.resolve_seed`.
        Seed of the split permutation (default 0: the splits used in reports).

    Returns
    -------
    RegressionTask
        Frozen dataclass with ``X_train, y_train, X_val, y_val, X_test, y_test``
        (features and response standardised on the training split).
    """
    if name not in TASKS:
        raise InvalidParameterError(f"unknown task name={name!r}; expected one of {TASKS}")
    X, y, names, description = _raw(name)
    n = len(y)
    perm = np.random.default_rng(resolve_seed(random_state, "random_state")[0]).permutation(n)
    n_train, n_val = int(round(SPLIT[0] * n)), int(round(SPLIT[1] * n))
    tr, va, te = perm[:n_train], perm[n_train : n_train + n_val], perm[n_train + n_val :]
    mean, scale = X[tr].mean(axis=0), X[tr].std(axis=0)
    scale[scale == 0] = 1.0  # a constant column stays zero rather than NaN
    y_mean, y_scale = float(y[tr].mean()), float(y[tr].std())

    def fx(idx):
        return _frozen((X[idx] - mean) / scale)

    def fy(idx):
        return _frozen((y[idx] - y_mean) / y_scale)

    return RegressionTask(
        name=name, description=description, X_train=fx(tr), y_train=fy(tr), X_val=fx(va), y_val=fy(va),
        X_test=fx(te), y_test=fy(te), feature_names=names, y_mean=y_mean, y_scale=y_scale,
    )


#: Data sets that ship with scikit-learn, for model audits: name -> (loader, task).
MODEL_DATASETS = {
    "digits": ("load_digits", "classification"),
    "breast_cancer": ("load_breast_cancer", "classification"),
    "wine": ("load_wine", "classification"),
    "iris": ("load_iris", "classification"),
    "diabetes": ("load_diabetes", "regression"),
    "sparse": ("sparse_features", "classification"),
}

#: The ``sparse`` data set: records, informative features, and features that are always zero.
SPARSE_SHAPE = (600, 20, 1500)


def sparse_features(*, return_X_y: bool = True, random_state: RandomLike = 0) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic sparse classification set: a linear rule on 20 features, and 1,500 features never used.

    Like the rare features of text or one-hot data, the unused features are zero in every record; a
    model audit's out-of-distribution canaries live there (one feature each).

    Parameters
    ----------
    return_X_y : bool
        Accepted for scikit-learn's loader signature (always (X, y)).
    random_state : int, Generator, SeedSequence or None

    Returns
    -------
    X : ndarray (600, 1520)
    y : ndarray (600,) of {0, 1}
    """
    n, d, unused = SPARSE_SHAPE
    gen = np.random.default_rng(resolve_seed(random_state, "random_state")[0])
    X = np.zeros((n, d + unused))
    X[:, :d] = gen.normal(size=(n, d))
    return X, (X[:, :d] @ gen.normal(size=d) > 0).astype(int)


def load_model_dataset(name: str, *, n_records: int | None = None,
                       random_state: RandomLike = 0) -> tuple[np.ndarray, np.ndarray, str]:
    """A shipped data set for a model audit: standardised features, labels and the task.

    Features are standardised to mean 0 and unit variance (a constant column stays 0); a
    regression's response too. ``n_records`` draws that many records without replacement.

    Parameters
    ----------
    name : str
        One of :data:`MODEL_DATASETS`, or a regression task of :data:`TASKS` (statsmodels; its
        training split).
    n_records : int, optional
        Records to keep (default all).
    random_state : int, Generator, SeedSequence or None
        Seed of the subsample.

    Returns
    -------
    X : ndarray (n, d)
    y : ndarray (n,)
    task : {"classification", "regression"}
    """
    if name in TASKS:
        t = load_task(name)
        X, y, task = np.asarray(t.X_train), np.asarray(t.y_train), "regression"
    elif name in MODEL_DATASETS:
        import sklearn.datasets

        loader, task = MODEL_DATASETS[name]
        X, y = (sparse_features() if loader == "sparse_features"
                else getattr(sklearn.datasets, loader)(return_X_y=True))
        scale = X.std(0)
        X = (X - X.mean(0)) / np.where(scale > 0, scale, 1.0)
        if task == "regression":
            y = (y - y.mean()) / y.std()
    else:
        raise InvalidParameterError(f"unknown data set name={name!r}; expected one of "
                                    f"{sorted(MODEL_DATASETS) + list(TASKS)}")
    if n_records is not None and n_records < len(y):
        keep = np.sort(np.random.default_rng(resolve_seed(random_state, "random_state")[0])
                       .choice(len(y), size=n_records, replace=False))
        X, y = X[keep], y[keep]
    return X, y, task
