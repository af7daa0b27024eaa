"""Cross-check against nvidia-ml-py: the reference Python binding reads the
same fake NVML and must see exactly the values gpukit prints."""
import json
import os
import subprocess
import sys

import pytest

from conftest import FAKE_NVML, SCENARIOS, SOURCE

# The reference is the benchmark's peer, bench/pynvml_ls.py: an nvidia-ml-py
# script reading the fields gpukit reads. It runs in a child interpreter and
# finds libnvidia-ml.so.1 through LD_LIBRARY_PATH, as it finds a real driver.
READER = SOURCE / "bench" / "pynvml_ls.py"


def pynvml_view(scenario):
    env = dict(os.environ, LD_LIBRARY_PATH=str(FAKE_NVML.parent),
               FAKE_NVML_SCENARIO=str(SCENARIOS / f"{scenario}.scn"))
    result = subprocess.run([sys.executable, str(READER)], env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("scenario", ["h100x8", "laptop", "notsupported", "mig"])
def test_gpukit_and_nvidia_ml_py_agree(gk, scenario):
    reference = pynvml_view(scenario)
    ours = json.loads(gk(["ls", "--json"], scenario=scenario).stdout)
    assert ours["driver_version"] == reference["driver_version"]
    assert len(ours["gpus"]) == len(reference["gpus"])
    for mine, theirs in zip(ours["gpus"], reference["gpus"]):
        for key, value in theirs.items():
            if key == "processes":
                assert sorted((p["pid"], p["gpu_memory_usage"]) for p in mine[key]) == \
                    sorted((p["pid"], p["gpu_memory_usage"]) for p in value)
            elif key == "persistence_mode" or key == "mig.mode":
                assert mine[key] == (None if value is None else bool(value)), key
            else:
                assert mine[key] == value, f"GPU {theirs['index']} {key}"
