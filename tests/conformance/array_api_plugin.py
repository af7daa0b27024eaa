"""pytest plugin for the runs of the array API test suite that
tests/conformance/array_api.py starts (loaded with -p array_api_plugin).

- The main namespace and the extensions gpukit has: tests marked as testing
  an extension in LEFT_OUT, and test_has_names for its functions, are
  deselected, so they count in no share.
- Hypothesis runs derandomized (the same examples every run, so outcomes
  are comparable with the baseline), without a deadline or the too-slow
  health checks (PoCL compiles kernels on first use; no timing decides a
  test), without shrinking (a failing example is reported as found: the
  shares need the outcome, not the smallest example, and shrinking is
  where failing tests spend their time) and without an example database
  (nothing is written into the vendored suite's directory). Python's global
  random generator is reset before each test: the special-case tests draw
  with strategy.example(), which shuffles with it, and would otherwise
  pick different values each run.
- A dtype parameter's id is the dtype's name (pytest would number the
  objects of a library whose dtypes are not classes: dtype0, dtype1 ...,
  ids that change when a dtype is added), so the ids are the same for every
  library.
- Each test's outcome (passed, failed or skipped) and the first line of its
  reason go to the JSON file named by GPUKIT_CONFORMANCE_OUTCOMES, with the
  device the library's arrays were created on."""
import json
import os
import random
import re

import pytest
from hypothesis import HealthCheck, Phase, settings

_outcomes = {}


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    # After the suite's conftest.py, whose profile (max_examples,
    # derandomize, deadline from the command line) this one extends.
    settings.register_profile(
        "gpukit-conformance",
        parent=settings.get_profile("array-api-tests"),
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    settings.load_profile("gpukit-conformance")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    random.seed(0)


def pytest_make_parametrize_id(config, val, argname):
    if isinstance(val, (str, bytes, int, float, complex, tuple, list, dict)) or val is None:
        return None
    from array_api_tests.dtype_helpers import dtype_to_name
    try:
        return dtype_to_name[val]
    except Exception:  # not a dtype (the mapping compares with ==)
        return None


# The standard's extensions gpukit does not have yet (none: linalg and fft
# are both there).
LEFT_OUT = ()


def _extension(item):
    """Whether a test is about an extension left out: marked so, or
    test_has_names for one of its functions (not marked)."""
    marker = item.get_closest_marker("xp_extension")
    if marker:
        return marker.args[0] in LEFT_OUT
    params = getattr(item, "callspec", None)
    return params is not None and params.params.get("category") in LEFT_OUT


def pytest_collection_modifyitems(config, items):
    extension = [item for item in items if _extension(item)]
    if extension:
        config.hook.pytest_deselected(items=extension)
        items[:] = [item for item in items if not _extension(item)]


def _reason(report):
    """The first line that says why a test failed or was skipped."""
    if report.skipped and isinstance(report.longrepr, tuple):
        text = str(report.longrepr[2])
    else:
        crash = getattr(report.longrepr, "reprcrash", None)
        text = crash.message if crash is not None else str(report.longrepr)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = lines[0] if lines else "(no message)"
    # A bare `assert x` says what failed on its next line ("+ where ...").
    if re.fullmatch(r"(AssertionError: )?assert .*", line) and len(lines) > 1:
        line += " (" + lines[1].lstrip("+ ") + ")"
    # Addresses differ between runs; the baseline's reasons should not.
    line = re.sub(r" at 0x[0-9a-f]+", "", line)
    # One line of a table: tabs separate the baseline's fields.
    line = line.replace("\t", " ")
    return line if len(line) <= 200 else line[:197] + "..."


def pytest_runtest_logreport(report):
    # The first outcome that is not a pass decides (a setup error, a skip,
    # the call's failure, a teardown error); a test passes when all passed.
    previous = _outcomes.get(report.nodeid)
    if previous is not None and previous[0] != "passed":
        return
    if report.passed:
        if report.when == "call" or previous is None:
            _outcomes[report.nodeid] = ["passed", ""]
        return
    _outcomes[report.nodeid] = ["skipped" if report.skipped else "failed", _reason(report)]


def pytest_sessionfinish(session):
    path = os.environ.get("GPUKIT_CONFORMANCE_OUTCOMES")
    if path:
        from array_api_tests import xp
        device = str(getattr(xp.asarray(0), "device", "?"))
        with open(path, "w") as f:
            json.dump({"device": device, "outcomes": _outcomes}, f, indent=0, sort_keys=True)
