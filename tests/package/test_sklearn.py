"""scikit-learn on gpukit arrays, on every device, through the array API
(sklearn.set_config(array_api_dispatch=True)): the estimators scikit-learn
marks as supporting the standard (its `array_api_support` tag; the issue
names LinearDiscriminantAnalysis, PCA, Ridge, LogisticRegression with
lbfgs, GaussianNB, the scalers and encoders), train_test_split and a few
metrics. Each case runs on gpukit arrays and on NumPy arrays without
dispatch; the results must match, every result array must be a gpukit
Array on the input's device, and so must every fitted attribute (none may
fall back to NumPy).

Cases that do not work yet are strict xfails with the first thing that
stops them today (XFAIL below): when one starts to pass the test turns red,
and its entry must go. The `numpy` runs (dispatch on NumPy arrays) must
pass: they show that the cases themselves are right.

scikit-learn's array API support needs SCIPY_ARRAY_API=1 before SciPy is
imported, so it is set here, before the imports."""
import os
import warnings

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import sklearn  # noqa: E402
from sklearn import discriminant_analysis, kernel_approximation, linear_model  # noqa: E402
from sklearn import metrics, model_selection, naive_bayes, preprocessing  # noqa: E402
from sklearn import decomposition  # noqa: E402
from sklearn.utils import all_estimators  # noqa: E402
from sklearn.utils._tags import get_tags  # noqa: E402

import gpukit  # noqa: E402
from conftest import DEVICES, host, on  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 4)).astype(np.float32)
Y_CLASS = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64) + (X[:, 2] > 0.8)  # 3 classes
Y_REG = (X @ np.array([1.0, -2.0, 0.5, 0.0], dtype=np.float32) + 0.1).astype(np.float32)
Y_COUNT = np.exp(0.3 * X[:, 0]).astype(np.float32)  # positive, for PoissonRegressor
LABELS = np.array([5, 2, 7, 2, 5, 5, 9, 7], dtype=np.int64)


def attrs(est, *names):
    return {name: getattr(est, name) for name in names}


# Each case is a function of the inputs (X, Y_CLASS, Y_REG, Y_COUNT, LABELS)
# in the library under test that returns (the fitted estimator or None,
# {name: output}); CASES pairs it with its relative tolerance. The NumPy
# reference runs the same function on NumPy arrays.
def case_train_test_split(x, yc, yr, yn, labels):
    parts = model_selection.train_test_split(x, yc, test_size=0.25, random_state=0)
    return (None, dict(zip(["X_train", "X_test", "y_train", "y_test"], parts)))


def case_lda(x, yc, yr, yn, labels):
    est = discriminant_analysis.LinearDiscriminantAnalysis().fit(x, yc)
    return (est, {**attrs(est, "classes_", "means_", "coef_", "intercept_", "priors_"),
                        "predict": est.predict(x), "predict_proba": est.predict_proba(x)})


def case_pca(x, yc, yr, yn, labels):
    est = decomposition.PCA(n_components=2, svd_solver="full").fit(x)
    # svd_flip makes the signs of the components the same in every library.
    return (est, {**attrs(est, "mean_", "components_", "explained_variance_",
                                "explained_variance_ratio_", "singular_values_"),
                        "transform": est.transform(x)})


def case_ridge(x, yc, yr, yn, labels):
    est = linear_model.Ridge(alpha=1.0, solver="svd").fit(x, yr)
    return (est, {**attrs(est, "coef_", "intercept_"), "predict": est.predict(x)})


def case_ridge_cv(x, yc, yr, yn, labels):
    est = linear_model.RidgeCV(alphas=(0.1, 1.0, 10.0)).fit(x, yr)
    return (est, {**attrs(est, "coef_", "intercept_", "alpha_"), "predict": est.predict(x)})


def case_ridge_classifier_cv(x, yc, yr, yn, labels):
    est = linear_model.RidgeClassifierCV(alphas=(0.1, 1.0, 10.0)).fit(x, yc)
    return (est, {**attrs(est, "coef_", "intercept_", "classes_"),
                        "predict": est.predict(x)})


def case_logistic_regression(x, yc, yr, yn, labels):
    est = linear_model.LogisticRegression(solver="lbfgs").fit(x, yc)
    return (est, {**attrs(est, "coef_", "intercept_", "classes_"),
                        "predict": est.predict(x), "predict_proba": est.predict_proba(x)})


def case_poisson_regressor(x, yc, yr, yn, labels):
    est = linear_model.PoissonRegressor(alpha=0.1).fit(x, yn)
    return (est, {**attrs(est, "coef_", "intercept_"), "predict": est.predict(x)})


def case_gaussian_nb(x, yc, yr, yn, labels):
    est = naive_bayes.GaussianNB().fit(x, yc)
    return (est, {**attrs(est, "classes_", "theta_", "var_", "class_prior_"),
                        "predict": est.predict(x), "predict_proba": est.predict_proba(x)})


def transformer(cls, *names, **kwargs):
    def case(x, yc, yr, yn, labels):
        est = cls(**kwargs).fit(x)
        return (est, {**attrs(est, *names), "transform": est.transform(x)})
    return case


def case_kernel_centerer(x, yc, yr, yn, labels):
    kernel = metrics.pairwise.linear_kernel(x)
    est = preprocessing.KernelCenterer().fit(kernel)
    return (est, {"transform": est.transform(kernel)})


def case_label_encoder(x, yc, yr, yn, labels):
    est = preprocessing.LabelEncoder().fit(labels)
    codes = est.transform(labels)
    return (est, {"classes_": est.classes_, "transform": codes,
                        "inverse_transform": est.inverse_transform(codes)})


def metric(function, which, **kwargs):
    """A metric on two class label vectors or two real vectors."""
    def case(x, yc, yr, yn, labels):
        if which == "labels":
            truth, guess = yc, yc[::-1]
        else:
            truth, guess = yr, x[:, 0]
        return (None, {function.__name__: function(truth, guess, **kwargs)})
    return case


def case_euclidean_distances(x, yc, yr, yn, labels):
    return (None, {"euclidean_distances": metrics.pairwise.euclidean_distances(x)})


def case_rbf_kernel(x, yc, yr, yn, labels):
    return (None, {"rbf_kernel": metrics.pairwise.rbf_kernel(x, gamma=0.5)})


CASES = {
    "train_test_split": (case_train_test_split, 0),
    "LinearDiscriminantAnalysis": (case_lda, 1e-4),
    "PCA": (case_pca, 1e-4),
    "Ridge": (case_ridge, 1e-4),
    "RidgeCV": (case_ridge_cv, 1e-4),
    "RidgeClassifierCV": (case_ridge_classifier_cv, 1e-4),
    "LogisticRegression": (case_logistic_regression, 1e-3),
    "PoissonRegressor": (case_poisson_regressor, 1e-3),
    "GaussianNB": (case_gaussian_nb, 1e-4),
    "StandardScaler": (transformer(preprocessing.StandardScaler, "mean_", "var_", "scale_"), 1e-5),
    "MinMaxScaler": (transformer(preprocessing.MinMaxScaler, "data_min_", "data_max_", "scale_"),
                     1e-5),
    "Normalizer": (transformer(preprocessing.Normalizer), 1e-5),
    "Binarizer": (transformer(preprocessing.Binarizer, threshold=0.1), 0),
    "PolynomialFeatures": (transformer(preprocessing.PolynomialFeatures, degree=2), 1e-5),
    "Nystroem": (transformer(kernel_approximation.Nystroem, "components_", n_components=10,
                             random_state=0), 1e-4),
    "KernelCenterer": (case_kernel_centerer, 1e-4),
    "LabelEncoder": (case_label_encoder, 0),
    "accuracy_score": (metric(metrics.accuracy_score, "labels"), 1e-6),
    "f1_score": (metric(metrics.f1_score, "labels", average="macro"), 1e-6),
    "confusion_matrix": (metric(metrics.confusion_matrix, "labels"), 0),
    "r2_score": (metric(metrics.r2_score, "real"), 1e-5),
    "mean_squared_error": (metric(metrics.mean_squared_error, "real"), 1e-5),
    "mean_absolute_error": (metric(metrics.mean_absolute_error, "real"), 1e-5),
    "euclidean_distances": (case_euclidean_distances, 1e-4),
    "rbf_kernel": (case_rbf_kernel, 1e-4),
}

# What stops each case on gpukit today (the same on every device, found by
# running them): the first failure scikit-learn meets. A case that is not
# here must pass. (RidgeCV and RidgeClassifierCV were here until
# gpukit.linalg.eigh.)
XFAIL = {}


def params():
    for name in CASES:
        yield pytest.param(name, "numpy", id=f"{name}-numpy")
        for device in DEVICES:
            reason = XFAIL.get(name)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(name, device, id=f"{name}-{device}", marks=marks)


def run(name, device):
    """The case's results in gpukit on `device` ("numpy": NumPy arrays)
    with dispatch on, and NumPy's without."""
    function, _ = CASES[name]
    inputs = (X, Y_CLASS, Y_REG, Y_COUNT, LABELS)
    expected = function(*inputs)
    if device != "numpy":
        inputs = tuple(on(v, device) for v in inputs)
    with sklearn.config_context(array_api_dispatch=True):
        got = function(*inputs)
    return expected, got


def to_numpy(value, device, where):
    """`value` as a NumPy array, checking that a gpukit result is an Array
    on `device` (a Python or NumPy scalar is allowed for a scalar result)."""
    if device != "numpy" and not np.isscalar(value):
        assert type(value) is gpukit.Array, f"{where}: a {type(value).__name__}, not a gpukit Array"
        assert value.device == device, f"{where}: on {value.device}, not {device}"
        return host(value)
    return np.asarray(value)


def same(got, expected, device, rtol, where):
    if isinstance(expected, (list, tuple)):
        assert len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected)):
            same(g, e, device, rtol, f"{where}[{i}]")
        return
    got = to_numpy(got, device, where)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, f"{where}: shape {got.shape}, NumPy's {expected.shape}"
    if rtol == 0 or expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected, err_msg=where)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol, err_msg=where)


@pytest.mark.parametrize("name, device", list(params()))
def test_sklearn(name, device):
    (_, expected), (est, got) = run(name, device)
    assert got.keys() == expected.keys()
    for key in expected:
        same(got[key], expected[key], device, CASES[name][1], f"{name}.{key}")
    if est is None:
        return
    # Every fitted array stays where the input is: a gpukit Array on its
    # device (NumPy's run: NumPy arrays).
    for key, value in vars(est).items():
        if key.endswith("_") and not key.startswith("_") and hasattr(value, "shape"):
            if device == "numpy":
                assert isinstance(value, (np.ndarray, np.generic)), f"{name}.{key}: {type(value)}"
            else:  # not even a NumPy scalar
                assert type(value) is gpukit.Array, f"{name}.{key}: a {type(value).__name__}"
                assert value.device == device, f"{name}.{key}: on {value.device}, not {device}"


def test_covers_what_sklearn_marks():
    """Every estimator scikit-learn tags as supporting the array API has a
    case here (a new scikit-learn that tags more fails this)."""
    tagged = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # deprecated estimators
        for name, cls in all_estimators():
            try:
                if get_tags(cls()).array_api_support:
                    tagged.add(name)
            except Exception:  # needs constructor arguments (meta-estimators, mixins)
                continue
    assert tagged <= CASES.keys(), sorted(tagged - CASES.keys())
