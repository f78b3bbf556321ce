#!/usr/bin/env bash
# One-shot GPU check: on a machine with an NVIDIA GPU, installs CuPy when it is missing, runs the GPU
# tests and the GPU benchmark (benchmarks/bench_gpu.py) and writes ONE JSON file,
# benchmarks/out/gpu_check.json (tests and benchmark together). A few minutes on an H100/H200.
#
#   bash benchmarks/gpu_check.sh                 # on the GPU machine, from any folder
#   bash benchmarks/gpu_check.sh --cpu-dry-run   # no GPU: tiny sizes on the NumPy backend, no install;
#                                                # writes benchmarks/out/gpu_check_dry_run.json
#
# Environment: PYTHON (the interpreter, default python), GPU_CHECK_OUT (the JSON file),
# GPU_CHECK_TEST_TIMEOUT and GPU_CHECK_BENCH_TIMEOUT (seconds; 900 and 1500), GPU_CHECK_SECTION_TIMEOUT
# (seconds per benchmark section, 300) -- for a lent machine with a fixed time.
set -u
cd "$(dirname "$0")/.." || exit 2
DRY=""
OUT=benchmarks/out/gpu_check.json
if [ "${1:-}" = "--cpu-dry-run" ]; then
    DRY="--cpu-dry-run"
    OUT=benchmarks/out/gpu_check_dry_run.json
fi
OUT=${GPU_CHECK_OUT:-$OUT}
PY=${PYTHON:-python}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

if [ -z "$DRY" ]; then
    nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv,noheader \
        || echo "gpu_check: nvidia-smi failed; the tests and the benchmark will say whether CuPy sees a GPU" >&2
    if ! "$PY" -c "import cupy" 2>/dev/null; then
        echo "gpu_check: installing CuPy (pip install cupy-cuda12x)" >&2
        "$PY" -m pip install --quiet "cupy-cuda12x>=12" || echo "gpu_check: CuPy could not be installed" >&2
    fi
fi

# the GPU tests: the device path on NumPy and a fake namespace (always), on CuPy (with a GPU), and every
# test marked gpu elsewhere
TESTS="tests/compute/test_cupy.py tests/components/test_decoders_device.py"
for f in $(grep -rlE "mark\.gpu|^gpu = " tests --include='test_*.py'); do
    case " $TESTS " in *" $f "*) ;; *) TESTS="$TESTS $f" ;; esac
done
echo "gpu_check: pytest $TESTS" >&2
timeout "${GPU_CHECK_TEST_TIMEOUT:-900}" "$PY" -m pytest -q -p no:cacheprovider -rs --junitxml="$WORK/tests.xml" $TESTS
TESTS_RC=$?

# the benchmark, with the tests' report folded into the same JSON
timeout "${GPU_CHECK_BENCH_TIMEOUT:-1500}" "$PY" benchmarks/bench_gpu.py $DRY --junit "$WORK/tests.xml" --out "$OUT"
BENCH_RC=$?
echo "gpu_check: tests exit status $TESTS_RC, benchmark exit status $BENCH_RC; report in $OUT" >&2
[ "$TESTS_RC" -eq 0 ] && [ "$BENCH_RC" -eq 0 ]
