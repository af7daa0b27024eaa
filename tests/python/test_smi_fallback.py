"""The nvidia-smi fallback: used when NVML cannot be loaded, tolerant of
[N/A], [Not Supported], error rows and lines that are not data."""
import json

from conftest import EXIT_DRIVER, EXIT_OK


def test_reads_gpus_through_nvidia_smi(gk):
    result = gk(["ls", "--json"], smi="h100")
    data = json.loads(result.stdout)
    assert data["source"] == "nvidia-smi"
    assert "NVML is not usable" in data["diagnosis"]
    assert [g["index"] for g in data["gpus"]] == [0, 1, 2, 3]
    g0, g1, lost, g3 = data["gpus"]
    assert g0["name"] == "NVIDIA H100 80GB HBM3"
    assert g0["memory.total"] == 81559 and g0["memory.used"] == 40123
    assert g0["power.draw"] == 312 and g0["enforced.power.limit"] == 700
    assert g0["fan.speed"] is None                      # [N/A]
    assert g0["compute_capability"] == "9.0" and g0["persistence_mode"] is True
    assert g1["fan.speed"] is None and g1["mig.mode"] is None  # [Not Supported], [N/A]
    assert lost["state"] == "lost" and "GPU is lost" in lost["error"]
    assert g3["utilization.gpu"] is None                # "12abc" is not a number
    assert g3["temperature.gpu"] is None                # [Unknown Error]
    assert data["driver_version"] == "550.54.15"
    assert result.returncode == EXIT_DRIVER             # a lost GPU
    assert [p["pid"] for p in g0["processes"]] == [4000001]
    assert g0["processes"][0]["command"] == "python3"
    assert g0["processes"][0]["gpu_memory_usage"] == 40000
    assert g3["processes"][0]["gpu_memory_usage"] is None


def test_old_nvidia_smi_without_newer_fields(gk):
    result = gk(["ls", "--json"], smi="old")
    assert result.returncode == EXIT_OK, result.stderr
    gpu = json.loads(result.stdout)["gpus"][0]
    assert gpu["name"] == "Tesla K80" and gpu["memory.total"] == 11441
    assert gpu["compute_capability"] is None


def test_nvidia_smi_without_driver(gk):
    result = gk(["info"], smi="nodriver")
    assert result.returncode == EXIT_DRIVER
    assert "cannot reach the NVIDIA kernel driver" in result.stdout


def test_hanging_nvidia_smi_is_cut_off(gk):
    result = gk(["ls"], smi="h100", env={"FAKE_SMI_SLEEP": "20", "GPUKIT_SMI_TIMEOUT": "0.5"})
    assert result.returncode == EXIT_DRIVER
    assert "did not finish" in result.stdout
