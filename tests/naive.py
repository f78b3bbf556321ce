"""Plain NumPy formulas that every fast path is checked against.

Nothing here is optimised: each function is the textbook formula, written to be
read. Tests compare numba, sparse, chunked and closed-form code with them on
small data (to 1e-10 relative in float64 unless a test says otherwise).
"""

import numpy as np

# ---------------------------------------------------------------- kernels

# ---------------------------------------------------------------- sketches

# ---------------------------------------------------------------- models

# ---------------------------------------------------------------- losses / solvers

# ---------------------------------------------------------------- structured prediction
