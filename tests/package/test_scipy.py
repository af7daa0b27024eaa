"""SciPy's array API functions on gpukit arrays, on every device: with
SCIPY_ARRAY_API=1 SciPy takes any library that follows the standard
(through `x.__array_namespace__()`), so each function below must run on
gpukit arrays, give SciPy's NumPy result, and return gpukit Arrays on the
input's device (no silent trip through NumPy).

Functions that do not work yet are strict xfails with what stops them
(XFAIL): when one starts to pass, the test turns red and its entry goes.

SCIPY_ARRAY_API must be set before SciPy is imported, so it is set here,
before the imports."""
import os

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy import cluster, integrate, special, stats  # noqa: E402

import gpukit  # noqa: E402
from conftest import host, on  # noqa: E402

RNG = np.random.default_rng(0)
A = RNG.normal(size=(5, 7))
POSITIVE = np.abs(A) + 0.1

# name -> (function of the inputs a (any sign) and p (positive), in the
# library under test)
CASES = {
    "special.logsumexp": lambda a, p: special.logsumexp(a, axis=1),
    "special.softmax": lambda a, p: special.softmax(a, axis=1),
    "special.log_softmax": lambda a, p: special.log_softmax(a, axis=0),
    "special.entr": lambda a, p: special.entr(p),
    "special.xlogy": lambda a, p: special.xlogy(p, p),
    "special.expit": lambda a, p: special.expit(a),
    "stats.zscore": lambda a, p: stats.zscore(a, axis=1),
    "stats.moment": lambda a, p: stats.moment(a, order=3, axis=1),
    "stats.skew": lambda a, p: stats.skew(a, axis=1),
    "stats.kurtosis": lambda a, p: stats.kurtosis(a, axis=0),
    "stats.variation": lambda a, p: stats.variation(p, axis=1),
    "stats.gmean": lambda a, p: stats.gmean(p, axis=1),
    "stats.hmean": lambda a, p: stats.hmean(p, axis=1),
    "stats.pmean": lambda a, p: stats.pmean(p, 2.0, axis=1),
    "stats.sem": lambda a, p: stats.sem(a, axis=1),
    "stats.ttest_ind": lambda a, p: tuple(stats.ttest_ind(a[0], a[1])[:2]),
    "stats.pearsonr": lambda a, p: tuple(stats.pearsonr(a[0], a[1])[:2]),
    "integrate.trapezoid": lambda a, p: integrate.trapezoid(a, axis=1),
    "integrate.simpson": lambda a, p: integrate.simpson(a, axis=1),
    "cluster.vq.whiten": lambda a, p: cluster.vq.whiten(a),
}

XFAIL = {
    "integrate.simpson": "SciPy computes it in NumPy and returns a NumPy array",
}
# On a device other than the default one (the CPU here): SciPy computes
# these through NumPy and returns xp.asarray(result), or makes a constant
# with xp.asarray(c), without device=, so the result or the constant lands
# on the default device (GPUKIT_DEFAULT_DEVICE moves it).
XFAIL_OFF_DEFAULT = {
    "special.entr": "SciPy returns xp.asarray(NumPy's result) on the default device",
    "special.expit": "SciPy returns xp.asarray(NumPy's result) on the default device",
    "stats.ttest_ind": "SciPy mixes in xp.asarray(constant) from the default device",
    "stats.pearsonr": "array-api-extra's apply_where turns SciPy's Python bool (n == 2) into "
                      "a mask on the default device",
}


def results(value):
    return value if isinstance(value, tuple) else (value,)


@pytest.mark.parametrize("name", sorted(CASES))
def test_scipy_function(device, name):
    case = CASES[name]
    reason = XFAIL.get(name)
    if device != str(gpukit.default_device()):
        reason = reason or XFAIL_OFF_DEFAULT.get(name)
    expected = results(case(A, POSITIVE))
    try:
        got = results(case(on(A, device), on(POSITIVE, device)))
        for g, e in zip(got, expected):
            assert type(g) is gpukit.Array, f"{name} gave {type(g).__name__}"
            assert g.device == device
            np.testing.assert_allclose(host(g), np.asarray(e), rtol=1e-10, atol=1e-12)
    except (AssertionError, AttributeError, TypeError, ValueError) as error:
        if reason:
            pytest.xfail(f"{reason} ({type(error).__name__}: {str(error)[:80]})")
        raise
    if reason:
        pytest.fail(f"{name} works now on {device}: remove its entry ({reason})")
