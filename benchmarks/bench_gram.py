"""Benchmark the Gaussian Gram block against the cost of one ``np.exp``.

Target: a Gaussian block of 10 000 x 2 000 (d = 10, float64) within 1.5x of the
time NumPy takes for ``np.exp`` of 2*10^7 float64 numbers (the same number of
exponentials, output allocated in both cases). Prints one JSON object: the
minimum time over several repeats of each variant, the ratio (and the
median of per-repeat ratios), other kernels
for context, and the machine (CPU count, versions, numba threading layer).

Also reported: the plain NumPy engine (``SKFRAME_DISABLE_NUMBA=1``), the blocked
``matvec`` in float64 and float32, and the sketched products ``K R^T``, ``R K R^T``
of a p-SR sketch in float64 and float32 (with the float32 relative error).

Run: ``python benchmarks/bench_gram.py [--repeats 7]``. Timings are never
asserted in the tests.
"""

import os
import platform

import _setup  # runtime settings and sys.path, before NumPy; the measuring helpers
import numba
import numpy as np
import scipy.sparse as sp


def best_of(fn, repeats):
    """Minimum wall time of ``repeats`` calls of ``fn``, in seconds."""
    return _setup.best_of(fn, repeats)[0]


def main():
    """Run the benchmark and print the JSON report."""
    args = _setup.parser(__doc__, repeats=15, n=10_000, m=2_000, d=10).parse_args()

    import skframe_kernels._gram_ops as kmod
    from skframe.contract.registry import get_sketch
    from skframe.core.sketching import draw_sketch, sketched_gram_products
    from skframe.options import ComputeOptions
    from skframe_kernels import GaussianKernel, LaplacianKernel, TanimotoKernel

    rng = np.random.default_rng(0)
    n, m, d, r = args.n, args.m, args.d, args.repeats
    X = rng.standard_normal((n, d))
    Y = rng.standard_normal((m, d))
    a = -np.abs(rng.standard_normal(n * m))
    gamma = 1.0 / d
    k = GaussianKernel(gamma=gamma)

    _, first_call = _setup.timed(k, X[:10], Y[:10])  # compile or load the numba cache

    res = {"shape": [n, m], "d": d, "repeats": r, "first_call_s": first_call}
    # np.exp and the kernel are timed alternately so that both see the same machine load
    out = np.empty_like(a)
    t_exp, t_exp_out, t_gauss = [], [], []
    for _ in range(r):
        t_exp.append(best_of(lambda: np.exp(a), 1))
        t_exp_out.append(best_of(lambda: np.exp(a, out=out), 1))
        t_gauss.append(best_of(lambda: k(X, Y), 1))
    res["numpy_exp_s"] = min(t_exp)
    res["numpy_exp_out_s"] = min(t_exp_out)
    res["gaussian_s"] = min(t_gauss)
    res["ratio_gaussian_over_numpy_exp"] = res["gaussian_s"] / res["numpy_exp_s"]
    res["median_ratio"] = float(np.median(np.array(t_gauss) / np.array(t_exp)))

    # the BLAS cross-term path (used above DIRECT_MAX_FEATURES features) on the same block
    saved = kmod.DIRECT_MAX_FEATURES
    kmod.DIRECT_MAX_FEATURES = 0
    try:
        res["gaussian_blas_path_s"] = best_of(lambda: k(X, Y), r)
    finally:
        kmod.DIRECT_MAX_FEATURES = saved

    from sklearn.metrics.pairwise import rbf_kernel

    res["sklearn_rbf_kernel_s"] = best_of(lambda: rbf_kernel(X, Y, gamma=gamma), max(3, r // 2))
    res["numpy_naive_expansion_s"] = best_of(
        lambda: np.exp(-gamma * np.maximum((X**2).sum(1)[:, None] + (Y**2).sum(1)[None] - 2 * X @ Y.T, 0)),
        max(3, r // 2),
    )
    err = np.max(np.abs(k(X[:500], Y) - rbf_kernel(X[:500], Y, gamma=gamma)))
    res["max_abs_diff_vs_sklearn"] = float(err)

    # the plain NumPy engine (SKFRAME_DISABLE_NUMBA=1) on the same block, for context
    os.environ["SKFRAME_DISABLE_NUMBA"] = "1"
    try:
        res["gaussian_numpy_engine_s"] = best_of(lambda: k(X, Y), max(3, r // 2))
    finally:
        del os.environ["SKFRAME_DISABLE_NUMBA"]

    # matvec k(X, Y) @ W in row blocks (float64 and float32 blocks) against the block then a product
    W = rng.standard_normal((m, 5))
    res["gaussian_block_then_matmul_s"] = best_of(lambda: k(X, Y) @ W, max(3, r // 2))
    res["gaussian_matvec_s"] = best_of(lambda: k.matvec(X, Y, W), max(3, r // 2))
    opts32 = ComputeOptions(dtype="float32")
    res["gaussian_matvec_float32_s"] = best_of(lambda: k.matvec(X, Y, W.astype(np.float32), opts32), max(3, r // 2))

    # sketched products K R^T, R K R^T with a p-SR sketch of size m: float64 against float32 blocks
    R = draw_sketch(get_sketch("psr", size=m // 4, p=min(1.0, 20.0 / n)), n, np.random.default_rng(1))
    res["psr_sketched_gram_products_s"] = best_of(lambda: sketched_gram_products(k, X, R), max(3, r // 2))
    res["psr_sketched_gram_products_float32_s"] = best_of(
        lambda: sketched_gram_products(k, X, R, options=opts32), max(3, r // 2))
    KR64, RKR64 = sketched_gram_products(k, X, R)
    KR32, RKR32 = sketched_gram_products(k, X, R, options=opts32)
    res["psr_float32_max_rel_err_KR"] = float(np.abs(KR32 - KR64).max() / np.abs(KR64).max())
    res["psr_float32_max_rel_err_RKR"] = float(np.abs(RKR32 - RKR64).max() / np.abs(RKR64).max())

    # context: other kernels and a sparse block
    res["laplacian_s"] = best_of(lambda: LaplacianKernel(gamma=gamma)(X, Y), 3)
    B = (rng.random((n, 1024)) < 0.05).astype(float)
    Bs, Bm = sp.csr_matrix(B), sp.csr_matrix(B[:m])
    res["tanimoto_sparse_10000x2000_d1024_density0.05_s"] = best_of(lambda: TanimotoKernel()(Bs, Bm), 3)
    res["gaussian_sparse_10000x2000_d1024_density0.05_s"] = best_of(lambda: k(Bs, Bm), 3)

    res.update(
        _setup.versions(),
        target_ratio=1.5,
        numba_threads=numba.get_num_threads(),
        numba_threading_layer=numba.threading_layer(),
        processor=platform.processor() or platform.uname().machine,
    )
    _setup.emit(res, indent=None)


if __name__ == "__main__":
    main()
