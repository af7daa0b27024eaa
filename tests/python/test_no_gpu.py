"""Machines without a usable GPU: the CPU is reported, the reason is named
with its fix, and the exit status says which case it is."""
import json

import pytest

from conftest import EXIT_DRIVER, EXIT_NO_GPU


@pytest.mark.parametrize("args", [[], ["ls"], ["ls", "--json"], ["ls", "--csv"], ["info"]])
def test_no_driver_library(gk, args):
    result = gk(args)
    assert result.returncode == EXIT_NO_GPU
    text = result.stdout + result.stderr
    assert "libnvidia-ml.so.1 could not be loaded" in text
    assert "nvidia-smi is not on PATH" in text
    assert "install the NVIDIA driver" in text


def test_no_driver_reports_the_cpu(gk):
    data = json.loads(gk(["ls", "--json"]).stdout)
    assert data["gpus"] == [] and data["source"] == "none"
    cpu = data["cpu"]
    assert cpu["logical_cores"] >= 1 and 1 <= cpu["usable_cores"] <= cpu["logical_cores"]
    assert cpu["memory.total"] > 0 and cpu["model"]
    overview = gk([]).stdout
    assert "Work will run on the CPU" in overview and cpu["model"] in overview


def test_driver_not_loaded(gk):
    result = gk([], scenario="driver_not_loaded")
    assert result.returncode == EXIT_DRIVER
    assert "kernel driver is not loaded" in result.stdout
    assert "modprobe nvidia" in result.stdout
    info = json.loads(gk(["info", "--json"], scenario="driver_not_loaded").stdout)
    assert info["gpu_usable"] is False and info["device"] == "cpu"


def test_zero_gpus(gk):
    result = gk(["ls"], scenario="empty")
    assert result.returncode == EXIT_NO_GPU
    assert "reports no GPU" in result.stdout


def test_init_errors_named(gk, tmp_path):
    for code, words in [(4, "no permission"), (18, "different versions"),
                        (999, "failed to start")]:
        scenario = tmp_path / f"init{code}.scn"
        scenario.write_text(f"init error={code}\n")
        result = gk(["info"], scenario=str(scenario))
        assert result.returncode == EXIT_DRIVER, (code, result.stdout)
        assert words in result.stdout, (code, result.stdout)


def test_broken_library_path_is_named(gk, tmp_path):
    bogus = tmp_path / "libnvidia-ml.so.1"
    bogus.write_text("not a library")
    result = gk(["info"], env={"GPUKIT_NVML_LIBRARY": str(bogus)})
    assert result.returncode == EXIT_NO_GPU
    assert str(bogus) in result.stdout
