"""Shared helpers for the gpukit command tests.

Every test runs the built `gpukit` with a controlled environment: the fake
NVML (tests/fake_nvml) serving a scenario file, or the fake nvidia-smi
(tests/fake_smi), or neither (a machine without NVIDIA software)."""
import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

BUILD = Path(os.environ.get("GPUKIT_BUILD_DIR", "build")).resolve()
SOURCE = Path(os.environ.get("GPUKIT_SOURCE_DIR", Path(__file__).parents[2])).resolve()
GPUKIT = BUILD / "gpukit"
FAKE_NVML = BUILD / "tests" / "fake_nvml" / "libnvidia-ml.so.1"
FAKE_NVML_OLD = BUILD / "tests" / "fake_nvml_old" / "libnvidia-ml.so.1"
SCENARIOS = SOURCE / "tests" / "scenarios"
FAKE_SMI = SOURCE / "tests" / "fake_smi"

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_NO_GPU, EXIT_DRIVER = 0, 1, 2, 3, 4
MIB = 1024 * 1024


def base_env(tmp_path):
    """An environment with no NVIDIA software: no NVML on the loader path and
    an empty PATH directory, so only what a test adds is found."""
    empty = tmp_path / "empty-path"
    empty.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDA_", "FAKE_", "GPUKIT_NVML", "NO_COLOR"))
           and k not in ("LD_LIBRARY_PATH",)}
    env["PATH"] = str(empty)
    env["GPUKIT_NVML_LIBRARY"] = str(tmp_path / "no-such-dir" / "libnvidia-ml.so.1")
    # Nor the Optimus view of this machine: a sleeping laptop GPU in the real
    # /sys would change what `gpukit info` does (test_optimus.py builds fakes).
    env["GPUKIT_SYSFS_ROOT"] = str(tmp_path / "no-such-dir" / "sys")
    env["GPUKIT_PROC_ROOT"] = str(tmp_path / "no-such-dir" / "proc")
    env["GPUKIT_BUMBLEBEE_SOCKET"] = str(tmp_path / "no-such-dir" / "bumblebee.socket")
    # A private lease directory, never the machine's shared one.
    env["GPUKIT_LEASE_DIR"] = str(tmp_path / "leases")
    env["LC_ALL"] = "C.UTF-8"
    env["TERM"] = "xterm"
    return env


def run(args, env, timeout=60):
    return subprocess.run([str(GPUKIT), *args], env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def scenario_env(tmp_path, scenario, old=False):
    """base_env() with the fake NVML serving `scenario` (a name in
    tests/scenarios or a path)."""
    env = base_env(tmp_path)
    env["GPUKIT_NVML_LIBRARY"] = str(FAKE_NVML_OLD if old else FAKE_NVML)
    env["FAKE_NVML_SCENARIO"] = str(scenario if os.sep in str(scenario)
                                    else SCENARIOS / f"{scenario}.scn")
    return env


@pytest.fixture
def gk(tmp_path):
    """gk(args, scenario=..., old=False, smi=None, **env) -> CompletedProcess"""
    def call(args, scenario=None, old=False, smi=None, env=None):
        e = scenario_env(tmp_path, scenario, old) if scenario is not None else base_env(tmp_path)
        if smi is not None:
            e["PATH"] = str(FAKE_SMI)
            e["FAKE_SMI_DIR"] = str(FAKE_SMI / smi)
        e.update(env or {})
        return run(args, e)
    return call


def ls_json(gk, scenario, **kw):
    result = gk(["ls", "--json"], scenario=scenario, **kw)
    return result, json.loads(result.stdout)


def parse_scenario(name):
    """Reads a scenario file into a list of GPU dicts (with 'procs' and
    'migs'), so tests compare gpukit's output with what the fake serves."""
    gpus, system = [], {}
    for line in (SCENARIOS / f"{name}.scn").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        kind, *tokens = shlex.split(line)
        fields = dict(t.split("=", 1) for t in tokens)
        if kind == "gpu":
            gpus.append({**fields, "procs": [], "migs": []})
        elif kind == "proc":
            gpus[-1]["procs"].append(fields)
        elif kind == "mig":
            gpus[-1]["migs"].append(fields)
        elif kind == "system":
            system = fields
    return system, gpus


def expected_int(fields, key):
    """The integer a scenario value should show as, or None for an
    unavailable value (missing key or an injected error '!N')."""
    value = fields.get(key)
    if value is None or value.startswith("!"):
        return None
    return int(float(value))
