"""Plain NumPy formulas that every fast path is checked against.

Nothing here is optimised: each function is the textbook formula, written to be
read. Tests compare numba, sparse, chunked and closed-form code with them on
small data (to 1e-10 relative in float64 unless a test says otherwise).
"""

import numpy as np

# ---------------------------------------------------------------- kernels


def naive_gaussian(X, Y, gamma):
    """``exp(-gamma * ||x - y||^2)`` by explicit differences."""
    D = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * D)


class RBF:
    """A third-party style kernel object: only ``__call__``, dense or sparse inputs (scikit-learn's RBF formula)."""

    def __init__(self, gamma):
        self.gamma = gamma

    def __call__(self, X, Y=None):
        from sklearn.metrics.pairwise import rbf_kernel

        return rbf_kernel(X, X if Y is None else Y, gamma=self.gamma)


def naive_laplacian(X, Y, gamma):
    """``exp(-gamma * ||x - y||_1)`` by explicit differences."""
    return np.exp(-gamma * np.abs(X[:, None, :] - Y[None, :, :]).sum(-1))


def naive_linear(X, Y):
    """``<x, y>`` pair by pair."""
    return np.array([[float(np.dot(x, y)) for y in Y] for x in X])


def naive_polynomial(X, Y, gamma, coef0, degree):
    """``(gamma <x, y> + coef0) ** degree``."""
    return (gamma * naive_linear(X, Y) + coef0) ** degree


def naive_cosine(X, Y):
    """``<x, y> / (|x| |y|)``; 1 for two zero vectors, 0 for one zero vector."""
    K = np.empty((len(X), len(Y)))
    for i, x in enumerate(X):
        for j, y in enumerate(Y):
            nx, ny = np.linalg.norm(x), np.linalg.norm(y)
            K[i, j] = 1.0 if nx == 0 and ny == 0 else (0.0 if nx == 0 or ny == 0 else x @ y / (nx * ny))
    return K


def naive_tanimoto(X, Y):
    """``<x, y> / (|x|^2 + |y|^2 - <x, y>)``; 1 for two zero vectors."""
    K = np.empty((len(X), len(Y)))
    for i, x in enumerate(X):
        for j, y in enumerate(Y):
            den = x @ x + y @ y - x @ y
            K[i, j] = 1.0 if den == 0 else x @ y / den
    return K


def naive_tanimoto_minmax(X, Y):
    """``sum min(x, y) / sum max(x, y)`` for non-negative vectors; 1 for two zero vectors."""
    K = np.empty((len(X), len(Y)))
    for i, x in enumerate(X):
        for j, y in enumerate(Y):
            den = np.maximum(x, y).sum()
            K[i, j] = 1.0 if den == 0 else np.minimum(x, y).sum() / den
    return K


def naive_gaussian_tanimoto(X, Y, gamma, variant="dot"):
    """``exp(-gamma * (2 - 2 T(x, y)))`` (seed 003 §5 output kernel, gamma = 1/(2 sigma^2))."""
    T = naive_tanimoto(X, Y) if variant == "dot" else naive_tanimoto_minmax(X, Y)
    return np.exp(-gamma * (2.0 - 2.0 * T))


# ---------------------------------------------------------------- sketches
def naive_sketched_gram_products(K, R):
    """``K R^T`` and ``R K R^T`` with the dense sketch R (m x n) and the full Gram matrix K."""
    return K @ R.T, R @ K @ R.T


def naive_truncated_binomial_pmf(m, p):
    """P(k) for k = 1..m of a Binomial(m, p) conditioned on being >= 1 (non-zeros of a non-null column)."""
    from math import comb

    pmf = np.array([comb(m, k) * p**k * (1 - p) ** (m - k) for k in range(1, m + 1)])
    return pmf / (1.0 - (1.0 - p) ** m)


# ---------------------------------------------------------------- models
def naive_krr(K, Y, lam):
    """Exact kernel ridge: ``alpha = (K + n lam I)^{-1} Y`` (sklearn ``KernelRidge(alpha=n * lam)``)."""
    n = K.shape[0]
    return np.linalg.solve(K + n * lam * np.eye(n), Y)


def naive_sketched_krr(K, R, Y, lam):
    """Sketched KRR closed form (seed 002, square loss): ``gamma = (R K^2 R^T + n lam R K R^T)^+ R K Y``.

    The coefficients of the training points are ``alpha = R^T gamma`` and the prediction
    at test points is ``K_te R^T gamma``.
    """
    n = K.shape[0]
    A = R @ K @ K @ R.T + n * lam * R @ K @ R.T
    return np.linalg.pinv(A, rcond=1e-12, hermitian=True) @ R @ K @ Y


def naive_sketched_krr_predict(K_te, R, gamma):
    """``f(X_te) = K_te R^T gamma``."""
    return K_te @ R.T @ gamma


# ---------------------------------------------------------------- losses / solvers

def loss_square(F, Y):
    """1/2 ||f - y||^2 per row."""
    return 0.5 * np.sum((F - Y) ** 2, axis=1)


def loss_huber(F, Y, kappa):
    """kappa-Huber on the residual norm (thesis eq. 2.127)."""
    r = np.linalg.norm(F - Y, axis=1)
    return np.where(r <= kappa, 0.5 * r**2, kappa * (r - kappa / 2))


def loss_eps_l1(F, Y, eps):
    """max(||f - y|| - eps, 0)."""
    return np.maximum(np.linalg.norm(F - Y, axis=1) - eps, 0.0)


def loss_eps_l2(F, Y, eps):
    """1/2 max(||f - y|| - eps, 0)^2."""
    return 0.5 * np.maximum(np.linalg.norm(F - Y, axis=1) - eps, 0.0) ** 2


def loss_pinball(F, Y, taus):
    """sum_j max(tau_j u_j, (tau_j - 1) u_j), u = y - f."""
    U = Y - F
    taus = np.asarray(taus, dtype=float)
    return np.sum(np.maximum(taus * U, (taus - 1) * U), axis=1)


def loss_hinge(F, Y):
    """sum_j max(0, 1 - y_j f_j)."""
    return np.sum(np.maximum(0.0, 1 - Y * F), axis=1)


def loss_logistic(F, Y):
    """sum_j log(1 + exp(-y_j f_j)), labels ±1 (the plain formula)."""
    return np.sum(np.log1p(np.exp(-Y * F)), axis=1)


def loss_multinomial(F, Y):
    """log sum_j exp(f_j) - f_c, the class c marked +1 in Y (the plain formula)."""
    return np.log(np.sum(np.exp(F), axis=1)) - F[Y > 0]


def naive_weighted_fit(Z, Y, loss_rows, lam, sample_weight=None):
    """argmin_W sum_i w_i l(z_i^T W, y_i) / sum_i w_i + (lam/2) ||W||^2 by scipy's BFGS (numeric gradients)."""
    from scipy.optimize import minimize

    w = np.ones(len(Z)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    shape = (Z.shape[1], Y.shape[1])

    def fun(v):
        W = v.reshape(shape)
        return float(np.sum(w * loss_rows(Z @ W, Y)) / np.sum(w) + 0.5 * lam * np.sum(W * W))

    return minimize(fun, np.zeros(np.prod(shape)), method="BFGS", options={"gtol": 1e-10}).x.reshape(shape)


def feature_map_objective(W, Z, Y, loss_rows, lam, M=None):
    """(1/n) sum_i l(z_i^T W M, y_i) + (lam/2) tr(W M W^T) with the plain formula."""
    M = np.eye(Y.shape[1]) if M is None else M
    F = Z @ W @ M
    return float(np.mean(loss_rows(F, Y)) + 0.5 * lam * np.trace(W @ M @ W.T))


# ---------------------------------------------------------------- structured prediction


def naive_iokr_scores(Kx, Kx_te, Ky_c, ky_cc, lam):
    """IOKR candidate scores (seed 003 §2): ``alpha(x)^T K_Y(Y, C) - k_Y(c, c) / 2``.

    ``alpha(x) = (K_X + n lam I)^{-1} k_x``; ``Ky_c`` is ``K_Y(Y_train, C)`` (n x n_c),
    ``ky_cc`` the vector ``k_Y(c, c)``.
    """
    n = Kx.shape[0]
    alpha = np.linalg.solve(Kx + n * lam * np.eye(n), Kx_te.T)  # (n, n_te)
    return alpha.T @ Ky_c - 0.5 * ky_cc[None, :]


def naive_sisokr_omega(Kx, Ky, Rx, Ry, lam):
    """Seed 003 Prop. 1, dense: ``Omega = K~_Y^+ R_Y K_Y K_X R_X^T (R_X K_X^2 R_X^T + n lam K~_X)^+``."""
    n = Kx.shape[0]
    Ky_t = Ry @ Ky @ Ry.T
    Kx_t = Rx @ Kx @ Rx.T
    A = Rx @ Kx @ Kx @ Rx.T + n * lam * Kx_t
    return (np.linalg.pinv(Ky_t, rcond=1e-12, hermitian=True) @ Ry @ Ky @ Kx @ Rx.T
            @ np.linalg.pinv(A, rcond=1e-12, hermitian=True))


def naive_sisokr_scores(Kx, Ky, Rx, Ry, lam, Kx_te, Ky_c, ky_cc):
    """SISOKR scores: ``alpha~(x) = R_Y^T Omega R_X k_x``, score ``alpha~(x)^T K_Y(Y, C) - k_Y(c, c)/2``."""
    Omega = naive_sisokr_omega(Kx, Ky, Rx, Ry, lam)
    alpha = Ry.T @ Omega @ Rx @ Kx_te.T  # (n, n_te)
    return alpha.T @ Ky_c - 0.5 * ky_cc[None, :]


def naive_decode_topk(S, k):
    """Top-k of each row of a full score matrix by (score descending, index ascending)."""
    idx = np.broadcast_to(np.arange(S.shape[1]), S.shape)
    order = np.lexsort((idx, -S), axis=-1)[:, :k]
    return order, np.take_along_axis(S, order, axis=1)


# ---------------------------------------------------------------- bandwidths ("scale")
def naive_scale_gamma_gaussian(X):
    """scikit-learn's ``SVC(gamma="scale")``: ``1 / (n_features * X.var())``, 1.0 for constant X."""
    X = np.asarray(X, dtype=float)
    var = X.var()
    return 1.0 if X.min() == X.max() else 1.0 / (X.shape[1] * var)


def naive_scale_gamma_laplacian(X):
    """``1 / (n_features * X.std())``, 1.0 for constant X."""
    X = np.asarray(X, dtype=float)
    return 1.0 if X.min() == X.max() else 1.0 / (X.shape[1] * X.std())


def naive_scale_gamma_gaussian_tanimoto(X, variant="dot"):
    """``1 / mean_{i != j} (1 - T(x_i, x_j))`` over all rows."""
    T = naive_tanimoto(X, X) if variant == "dot" else naive_tanimoto_minmax(X, X)
    q = len(X)
    return 1.0 / ((1.0 - T).sum() / (q * (q - 1)))


def naive_rff_features(X, W, b):
    """Random Fourier features ``sqrt(2/m) cos(X @ W.T + b)`` for frequencies W of shape (m, d)."""
    return np.sqrt(2.0 / W.shape[0]) * np.cos(X @ W.T + b)


# ---------------------------------------------------------------- a non-array input collection
from skframe.contract.collections import InputCollection  # noqa: E402


class ArrayRows(InputCollection):
    """A minimal :class:`InputCollection`: the rows of a private array, reachable only through ``take``."""

    def __init__(self, A):
        self.A = np.asarray(A)

    def __len__(self):
        return self.A.shape[0]

    def take(self, indices):
        return ArrayRows(self.A[np.asarray(indices)])

    def to_state(self):
        return {"A": self.A}

    @classmethod
    def from_state(cls, state):
        return cls(state["A"])


class ArrayRowsRBF:
    """Gaussian kernel on :class:`ArrayRows` (plain formula)."""

    def __init__(self, gamma):
        self.gamma = gamma

    def __call__(self, X, Y=None):
        Y = X if Y is None else Y
        return naive_gaussian(X.A, Y.A, self.gamma)


# ---------------------------------------------------------------- prediction intervals
def naive_cv_plus(P_folds, residuals, fold_of, alpha):
    """CV+ / jackknife+ bounds from the full n x n_test matrix (Barber et al. 2021).

    ``P_folds`` (K, n_test): fold models' predictions; ``residuals`` (n,) held-out |y - mu_{-k(i)}(x_i)|.
    Lower: the floor(alpha (n+1))-th smallest of mu_{k(i)}(x) - R_i; upper: the ceil((1-alpha)(n+1))-th smallest
    of mu_{k(i)}(x) + R_i (-inf / +inf when the rank is out of 1..n).
    """
    n = residuals.size
    V = P_folds[fold_of].T  # (n_test, n)
    lo_values = np.sort(V - residuals, axis=1)
    hi_values = np.sort(V + residuals, axis=1)
    kl = int(np.floor(alpha * (n + 1) + 1e-9))
    ku = int(np.ceil((1 - alpha) * (n + 1) - 1e-9))
    lower = lo_values[:, kl - 1] if kl >= 1 else np.full(V.shape[0], -np.inf)
    upper = hi_values[:, ku - 1] if ku <= n else np.full(V.shape[0], np.inf)
    return lower, upper


def naive_gp_posterior_variance(K, K_te, k_tt, Y, lam, R=None):
    """Posterior variance of kernel ridge regression read as a Gaussian process, dense in n x n.

    Exact (``R=None``): ``s2 (k(x, x) - k_x^T (K + n lam I)^{-1} k_x)``. Sketched: the Nyström GP
    (deterministic training conditional) with ``K~ = K R^T (R K R^T)^+ R K`` and
    ``k~_x = K R^T (R K R^T)^+ R k_x``: ``s2 (k(x, x) - k~_x^T (K~ + n lam I)^{-1} k~_x)``.
    ``s2_j = y_j^T (K~ + n lam I)^{-1} y_j / n`` per target (``Y`` centred as the model centres it).
    Returns (n_test, d).
    """
    n = K.shape[0]
    if R is None:
        Kt, Kx = K, K_te
    else:
        middle = np.linalg.pinv(R @ K @ R.T, rcond=1e-12, hermitian=True)
        Kt = K @ R.T @ middle @ R @ K
        Kx = K_te @ R.T @ middle @ R @ K
    A = Kt + n * lam * np.eye(n)
    s2 = np.einsum("ij,ij->j", Y, np.linalg.solve(A, Y)) / n
    v = k_tt - np.einsum("ij,ji->i", Kx, np.linalg.solve(A, Kx.T))
    return v[:, None] * s2[None, :]


# ---------------------------------------------------------------- automatic λ


def naive_gcv(Z, Y, lam):
    """GCV(λ) = n ||(I - H) Y||^2 / (n - tr H)^2 with the dense hat matrix H = Z (Z^T Z + n λ I)^{-1} Z^T."""
    n = Z.shape[0]
    H = Z @ np.linalg.inv(Z.T @ Z + n * lam * np.eye(Z.shape[1])) @ Z.T
    R = Y - H @ Y
    return n * (R**2).sum() / (n - np.trace(H)) ** 2


def naive_loo(Z, Y, lam):
    """Leave-one-out mean squared error by n refits on n - 1 rows (the penalty n λ of the full fit kept)."""
    n = Z.shape[0]
    total = 0.0
    for i in range(n):
        keep = np.arange(n) != i
        W = np.linalg.solve(Z[keep].T @ Z[keep] + n * lam * np.eye(Z.shape[1]), Z[keep].T @ Y[keep])
        total += ((Y[i] - Z[i] @ W) ** 2).sum()
    return total / n


def naive_effective_dimension(Z, lam, sample_weight=None):
    """``tr(C (C + lam I)^{-1})`` with ``C = Z^T diag(w) Z / sum(w)``, by a linear solve."""
    w = np.ones(Z.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    C = Z.T @ (w[:, None] * Z) / w.sum()
    return float(np.trace(np.linalg.solve(C + lam * np.eye(C.shape[0]), C)))
