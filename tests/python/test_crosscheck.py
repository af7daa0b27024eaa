"""Cross-check against nvidia-ml-py: the reference Python binding reads the
same fake NVML and must see exactly the values gpukit prints."""
import json
import os
import subprocess
import sys

import pytest

from conftest import FAKE_NVML, SCENARIOS

# Runs in a child interpreter: pynvml finds libnvidia-ml.so.1 through
# LD_LIBRARY_PATH, the way it finds a real driver.
READER = r"""
import json, pynvml as N
MIB = 1024 * 1024
def get(fn, *args):
    try:
        return fn(*args)
    except N.NVMLError:
        return None
N.nvmlInit()
out = {"driver_version": N.nvmlSystemGetDriverVersion(), "gpus": []}
for i in range(N.nvmlDeviceGetCount()):
    h = N.nvmlDeviceGetHandleByIndex(i)
    mem = N.nvmlDeviceGetMemoryInfo(h, version=N.nvmlMemory_v2)
    util = get(N.nvmlDeviceGetUtilizationRates, h)
    power = get(N.nvmlDeviceGetPowerUsage, h)
    limit = get(N.nvmlDeviceGetEnforcedPowerLimit, h)
    procs = (get(N.nvmlDeviceGetComputeRunningProcesses, h) or []) + \
            (get(N.nvmlDeviceGetGraphicsRunningProcesses, h) or [])
    out["gpus"].append({
        "index": i, "name": N.nvmlDeviceGetName(h), "uuid": N.nvmlDeviceGetUUID(h),
        "pci.bus_id": N.nvmlDeviceGetPciInfo(h).busId,
        "memory.total": mem.total // MIB, "memory.used": mem.used // MIB,
        "memory.free": mem.free // MIB,
        "utilization.gpu": util.gpu if util else None,
        "utilization.memory": util.memory if util else None,
        "temperature.gpu": get(N.nvmlDeviceGetTemperature, h, N.NVML_TEMPERATURE_GPU),
        "fan.speed": get(N.nvmlDeviceGetFanSpeed, h),
        "power.draw": power // 1000 if power is not None else None,
        "enforced.power.limit": limit // 1000 if limit is not None else None,
        "clocks.sm": get(N.nvmlDeviceGetClockInfo, h, N.NVML_CLOCK_SM),
        "clocks.max.mem": get(N.nvmlDeviceGetMaxClockInfo, h, N.NVML_CLOCK_MEM),
        "pids": sorted({p.pid for p in procs}),
    })
N.nvmlShutdown()
print(json.dumps(out))
"""


def pynvml_view(scenario):
    env = dict(os.environ, LD_LIBRARY_PATH=str(FAKE_NVML.parent),
               FAKE_NVML_SCENARIO=str(SCENARIOS / f"{scenario}.scn"))
    result = subprocess.run([sys.executable, "-c", READER], env=env, capture_output=True,
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
            if key == "pids":
                assert sorted(p["pid"] for p in mine["processes"]) == value
            else:
                assert mine[key] == value, f"GPU {theirs['index']} {key}"
