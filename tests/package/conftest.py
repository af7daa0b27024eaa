"""Shared fixtures for the Python package's tests (tests/package).

The package under test is the one on sys.path: ctest puts the build tree's
python/ first (GPUKIT_PYTHONPATH); after `pip install .` it is the installed
one. Tests that need another NVML scenario, environment or a fresh process
run Python snippets in a child with run_python()."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("GPUKIT_SOURCE_DIR", Path(__file__).parents[2])).resolve()
BUILD = Path(os.environ.get("GPUKIT_BUILD_DIR", SOURCE / "build")).resolve()
FAKE_NVML = BUILD / "tests" / "fake_nvml" / "libnvidia-ml.so.1"
FAKE_NVML_OLD = BUILD / "tests" / "fake_nvml_old" / "libnvidia-ml.so.1"
FAKE_CUDA = BUILD / "tests" / "fake_cuda" / "libcuda.so.1"
SCENARIOS = SOURCE / "tests" / "scenarios"
GPUKIT_CLI = BUILD / "gpukit"

import gpukit  # noqa: E402  (after the paths, so failures name them)
import numpy as np  # noqa: E402


def host(x):
    """An Array's elements as a NumPy array, on any device (through tolist(),
    so only the Array's own conversion is involved), checking that it is an
    Array first."""
    assert type(x) is gpukit.Array
    return np.array(x.tolist(), dtype=str(x.dtype)).reshape(x.shape)


def on(values, device, dtype=None):
    """A gpukit array with NumPy's values, dtype and shape on `device` (made
    from a list, so only asarray's own conversion is involved)."""
    values = np.asarray(values, dtype=dtype)
    flat = gpukit.asarray(values.ravel().tolist(), dtype=values.dtype.name, device=device)
    return gpukit.reshape(flat, values.shape)


def _device_names():
    """Every device to run array tests on: GPUKIT_TEST_DEVICES (comma list)
    or every device gpukit finds (cpu and PoCL here, cuda:N on a GPU)."""
    names = os.environ.get("GPUKIT_TEST_DEVICES")
    if names:
        return [n.strip() for n in names.split(",") if n.strip()]
    return [str(d) for d in gpukit.devices()]


DEVICES = _device_names()


@pytest.fixture(params=DEVICES)
def device(request):
    """Each device in turn, as its name."""
    return request.param


def child_env(tmp_path, scenario=None, old=False, **extra):
    """An environment for a child Python: no real NVIDIA software, the fake
    NVML serving `scenario` (a name in tests/scenarios, or None for a
    machine without NVML), a private lease directory and kernel cache."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDA_", "FAKE_", "GPUKIT_NVML", "NVIDIA_", "GPUKIT_LEASE"))}
    if scenario is None:
        env["GPUKIT_NVML_LIBRARY"] = str(tmp_path / "no-such-dir" / "libnvidia-ml.so.1")
    else:
        env["GPUKIT_NVML_LIBRARY"] = str(FAKE_NVML_OLD if old else FAKE_NVML)
        env["FAKE_NVML_SCENARIO"] = str(scenario if os.sep in str(scenario)
                                        else SCENARIOS / f"{scenario}.scn")
    env["PATH"] = os.pathsep.join([str(tmp_path / "empty-path"), os.environ.get("PATH", "")]) \
        if scenario is not None else str(tmp_path / "empty-path")
    env["GPUKIT_SYSFS_ROOT"] = str(tmp_path / "no-such-dir" / "sys")
    env["GPUKIT_PROC_ROOT"] = str(tmp_path / "no-such-dir" / "proc")
    env["GPUKIT_BUMBLEBEE_SOCKET"] = str(tmp_path / "no-such-dir" / "bumblebee.socket")
    env["GPUKIT_LEASE_DIR"] = str(tmp_path / "leases")
    env["GPUKIT_CACHE_DIR"] = str(tmp_path / "kernel-cache")
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_python(code, env, timeout=120, check=True):
    """Runs `code` (dedented) in a child Python with `env`; returns the
    CompletedProcess. With check, a failing child fails the test with its
    output."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                            capture_output=True, text=True, timeout=timeout,
                            stdin=subprocess.DEVNULL)
    if check and result.returncode != 0:
        pytest.fail(f"child Python failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture
def py(tmp_path):
    """py(code, scenario=None, check=True, **env) -> CompletedProcess"""
    def call(code, scenario=None, check=True, timeout=120, **extra):
        (tmp_path / "empty-path").mkdir(exist_ok=True)
        return run_python(code, child_env(tmp_path, scenario, **extra), timeout, check)
    return call
