"""Hybrid-graphics (Optimus) laptops in `gpukit info`: the discrete GPU is
looked at through sysfs first, a sleeping one is reported without loading
NVML (which would wake it), and desktops keep their output as before.

Each test builds a fake /sys and /proc (GPUKIT_SYSFS_ROOT, GPUKIT_PROC_ROOT)
and, for bumblebee, a fake daemon socket (GPUKIT_BUMBLEBEE_SOCKET); the fake
NVML logs its calls to FAKE_NVML_TRACE, so a test can tell whether gpukit
touched the GPU."""
import json
import socket
import subprocess
import sys
import time

import pytest

from conftest import (EXIT_DRIVER, EXIT_NO_GPU, EXIT_OK, SOURCE, base_env, run,
                      scenario_env)

FAKE_BUMBLEBEE = SOURCE / "tests" / "fake_bumblebee" / "fake_bumblebee.py"
DGPU = "0000:01:00.0"

# /proc/driver/nvidia/gpus/<bus id>/power as the NVIDIA driver writes it
# (nv-procfs.c; README chapter "PCI-Express Runtime D3 (RTD3) Power Management").
RTD3_POWER = """Runtime D3 status:          Enabled (fine-grained)
Video Memory:               {video_memory}

GPU Hardware Support:
 Video Memory Self Refresh: Supported
 Video Memory Off:          Supported

Power Limits:
 Default:                   N/A milliwatts
 GPU Boost:                 N/A milliwatts
"""


def pci_device(sysfs, bus_id, vendor, pci_class, driver=None, status=None, control=None):
    """One PCI function, laid out as the kernel does: the device under
    devices/, a symlink to it in bus/pci/devices/, `driver` a symlink."""
    device = sysfs / "devices" / "pci0000:00" / bus_id
    (device / "power").mkdir(parents=True)
    (device / "vendor").write_text(f"0x{vendor:04x}\n")
    (device / "device").write_text("0x28a1\n")
    (device / "class").write_text(f"0x{pci_class:06x}\n")
    if driver:
        (device / "driver").symlink_to(f"../../../bus/pci/drivers/{driver}")
    if status:
        (device / "power" / "runtime_status").write_text(status + "\n")
    if control:
        (device / "power" / "control").write_text(control + "\n")
    link = sysfs / "bus" / "pci" / "devices" / bus_id
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(f"../../../devices/pci0000:00/{bus_id}")


def fake_machine(tmp_path, igpu="intel", dgpu=True, driver="nvidia", status="active",
                 control="auto", video_memory=None, bbswitch=None):
    """Fake sysfs/procfs of a laptop: an optional Intel or AMD iGPU, an
    optional NVIDIA dGPU with its audio function, and unrelated devices.
    `video_memory` writes the NVIDIA driver's power file; `bbswitch` ("ON" or
    "OFF") writes /proc/acpi/bbswitch. Returns the environment entries."""
    sysfs, proc = tmp_path / "sys", tmp_path / "proc"
    sysfs.mkdir()
    proc.mkdir()
    pci_device(sysfs, "0000:00:1f.3", 0x8086, 0x040380, "snd_hda_intel", "active", "auto")
    if igpu == "intel":
        pci_device(sysfs, "0000:00:02.0", 0x8086, 0x030000, "i915", "active", "on")
    elif igpu == "amd":
        pci_device(sysfs, "0000:05:00.0", 0x1002, 0x030000, "amdgpu", "active", "on")
    if dgpu:
        pci_device(sysfs, DGPU, 0x10de, 0x030200, driver, status, control)
        pci_device(sysfs, "0000:01:00.1", 0x10de, 0x040300, "snd_hda_intel", status, control)
    if video_memory:
        power = proc / "driver" / "nvidia" / "gpus" / DGPU / "power"
        power.parent.mkdir(parents=True)
        power.write_text(RTD3_POWER.format(video_memory=video_memory))
    if bbswitch:
        (proc / "acpi").mkdir()
        (proc / "acpi" / "bbswitch").write_text(f"{DGPU} {bbswitch}\n")
    return {"GPUKIT_SYSFS_ROOT": str(sysfs), "GPUKIT_PROC_ROOT": str(proc)}


def info(tmp_path, machine, *args, scenario="laptop", **extra):
    """Runs `gpukit info ARGS` on the fake machine with the fake NVML serving
    `scenario`; returns (result, NVML calls made)."""
    trace = tmp_path / "nvml-trace"
    trace.unlink(missing_ok=True)
    env = scenario_env(tmp_path, scenario)
    env.update(machine, FAKE_NVML_TRACE=str(trace), **extra)
    result = run(["info", *args], env)
    calls = trace.read_text().split() if trace.exists() else []
    return result, calls


def woke(calls):
    return any(call.startswith("nvmlInit") for call in calls)


def test_suspended_dgpu_is_not_woken(tmp_path):
    machine = fake_machine(tmp_path, status="suspended", video_memory="Off")
    result, calls = info(tmp_path, machine)
    assert calls == [], "NVML must not be loaded while the GPU sleeps"
    assert result.returncode == EXIT_OK, result.stderr
    text = result.stdout
    assert f"GPU usable:    yes - NVIDIA GPU {DGPU} is suspended" in text
    assert "gpukit did not wake it" in text
    assert "Optimus:       PRIME render offload; Intel iGPU + NVIDIA GPU 0000:01:00.0 " \
           "(driver nvidia), power suspended, runtime PM on" in text
    assert "Runtime D3 status: Enabled (fine-grained); video memory: Off" in text
    assert "Offload:       gpukit run --offload -- CMD" in text
    assert "Use device:    cuda:0" in text

    result, calls = info(tmp_path, machine, "--json")
    assert calls == [] and result.returncode == EXIT_OK
    data = json.loads(result.stdout)
    assert data["gpu_usable"] is True and data["device"] == "cuda:0"
    assert data["source"] == "sysfs" and data["driver_version"] is None
    assert data["cuda_devices"][0]["pci.bus_id"] == "00000000:01:00.0"
    assert data["cuda_devices"][0]["name"] is None
    assert "did not wake it" in data["note"]
    assert data["optimus"] == {
        "kind": "prime", "hybrid": True, "igpu_vendor": "Intel", "pci_bus_id": DGPU,
        "driver": "nvidia", "power": "suspended", "runtime_pm": True,
        "runtime_d3": "Enabled (fine-grained)", "video_memory": "Off",
        "detail": "Runtime D3 status: Enabled (fine-grained); video memory: Off",
        "bumblebee_socket": None, "offload_command": "gpukit run --offload -- CMD"}
    assert data["cpu"]["logical_cores"] >= 1

    result, calls = info(tmp_path, machine, "-q")
    assert (result.returncode, result.stdout, calls) == (EXIT_OK, "", [])


def test_suspended_dgpu_with_cuda_visible_devices(tmp_path):
    machine = fake_machine(tmp_path, igpu="amd", status="suspended")
    result, calls = info(tmp_path, machine, "--json", CUDA_VISIBLE_DEVICES="")
    assert calls == [] and result.returncode == EXIT_NO_GPU
    data = json.loads(result.stdout)
    assert data["gpu_usable"] is False and data["device"] == "cpu"
    assert data["optimus"]["igpu_vendor"] == "AMD"
    result, calls = info(tmp_path, machine, CUDA_VISIBLE_DEVICES="0")
    assert calls == [] and result.returncode == EXIT_OK
    # UUIDs are known only to the awake GPU: taken on trust, and said so.
    result, calls = info(tmp_path, machine, CUDA_VISIBLE_DEVICES="GPU-7ec8d242")
    assert calls == [] and result.returncode == EXIT_OK
    assert "cannot check without waking the GPU" in result.stdout


def test_active_dgpu_is_read_through_nvml(tmp_path):
    machine = fake_machine(tmp_path, status="active", video_memory="Active")
    result, calls = info(tmp_path, machine)
    assert woke(calls) and result.returncode == EXIT_OK
    text = result.stdout
    assert "cuda:0   = GPU 0  NVIDIA GeForce RTX 4050 Laptop GPU" in text
    assert "Driver:        535.154.05" in text
    assert "Optimus:       PRIME render offload; Intel iGPU + NVIDIA GPU 0000:01:00.0 " \
           "(driver nvidia), power active, runtime PM on" in text
    assert "Offload:       gpukit run --offload -- CMD runs CMD on the NVIDIA GPU" in text
    # Optimus lines come before the answer, which stays the last word.
    assert text.index("Optimus:") < text.index("Use device:")

    data = json.loads(info(tmp_path, machine, "--json")[0].stdout)
    assert data["source"] == "nvml" and data["cuda_devices"][0]["name"].startswith("NVIDIA")
    assert data["optimus"]["power"] == "active" and data["optimus"]["kind"] == "prime"
    assert data["optimus"]["video_memory"] == "Active"


def test_runtime_pm_disabled(tmp_path):
    machine = fake_machine(tmp_path, status="active", control="on")
    result, calls = info(tmp_path, machine)
    assert woke(calls) and result.returncode == EXIT_OK
    assert "power active, runtime PM off" in result.stdout
    assert "the NVIDIA GPU never sleeps" in result.stdout
    assert f"echo auto | sudo tee /sys/bus/pci/devices/{DGPU}/power/control" in result.stdout
    optimus = json.loads(info(tmp_path, machine, "--json")[0].stdout)["optimus"]
    assert optimus["runtime_pm"] is False
    assert "power/control is not \"auto\"" in optimus["detail"]


@pytest.mark.parametrize("status", ["active", "suspended"])
def test_desktop_output_is_unchanged(tmp_path, status):
    """No integrated GPU: not a hybrid machine. Even a suspended GPU is read
    through NVML as before, and the output is exactly what it was without
    any Optimus information."""
    machine = fake_machine(tmp_path, igpu=None, status=status)
    result, calls = info(tmp_path, machine)
    before = run(["info"], scenario_env(tmp_path, "laptop"))
    assert woke(calls)
    assert (result.returncode, result.stdout) == (before.returncode, before.stdout)
    assert "Optimus" not in result.stdout and "Offload" not in result.stdout
    data = json.loads(info(tmp_path, machine, "--json")[0].stdout)
    assert data["optimus"] is None
    assert data["cuda_devices"][0]["name"] == "NVIDIA GeForce RTX 4050 Laptop GPU"


def test_no_dgpu(tmp_path):
    """A laptop with only its integrated GPU: nothing hybrid to report."""
    machine = fake_machine(tmp_path, dgpu=False)
    env = base_env(tmp_path)
    env.update(machine)
    result = run(["info"], env)
    assert result.returncode == EXIT_NO_GPU
    assert "Optimus" not in result.stdout
    assert json.loads(run(["info", "--json"], env).stdout)["optimus"] is None


def test_nouveau_bound(tmp_path):
    machine = fake_machine(tmp_path, driver="nouveau", status="active")
    result, calls = info(tmp_path, machine, scenario="driver_not_loaded")
    assert result.returncode == EXIT_DRIVER
    assert "Optimus:       no offload; Intel iGPU + NVIDIA GPU 0000:01:00.0 " \
           "(driver nouveau)" in result.stdout
    assert "CUDA needs NVIDIA's own driver: install it and blacklist nouveau" in result.stdout
    assert "Offload:" not in result.stdout
    optimus = json.loads(info(tmp_path, machine, "--json", scenario="driver_not_loaded")[0]
                         .stdout)["optimus"]
    assert optimus["kind"] == "none" and optimus["driver"] == "nouveau"
    assert optimus["offload_command"] is None


def test_suspended_under_nouveau_is_read_as_usual(tmp_path):
    """NVML cannot reach a GPU that nouveau drives, so asking it wakes
    nothing; the ordinary report (driver problem) stays accurate."""
    machine = fake_machine(tmp_path, driver="nouveau", status="suspended")
    result, calls = info(tmp_path, machine, scenario="driver_not_loaded")
    assert woke(calls) and result.returncode == EXIT_DRIVER
    assert "power suspended" in result.stdout and "nouveau" in result.stdout


def test_no_driver_bound(tmp_path):
    machine = fake_machine(tmp_path, driver=None, status="suspended")
    result, _ = info(tmp_path, machine, scenario="driver_not_loaded")
    assert result.returncode == EXIT_DRIVER
    assert "(driver none)" in result.stdout
    assert "no kernel driver is bound to the NVIDIA GPU" in result.stdout


@pytest.fixture
def daemon(tmp_path):
    """Starts the fake bumblebee daemon; yields (socket path, log path)."""
    path, log = tmp_path / "bumblebee.socket", tmp_path / "bumblebee.log"
    process = subprocess.Popen([sys.executable, str(FAKE_BUMBLEBEE), str(path), "--log",
                                str(log)])
    deadline = time.monotonic() + 10
    while not (log.exists() and "listening" in log.read_text()):
        assert process.poll() is None and time.monotonic() < deadline, "daemon did not start"
        time.sleep(0.02)
    yield path, log
    process.terminate()
    process.wait(timeout=10)


def test_bumblebee_card_off(tmp_path, daemon):
    path, log = daemon
    machine = fake_machine(tmp_path, driver=None, status="active", control="on", bbswitch="OFF")
    result, calls = info(tmp_path, machine, GPUKIT_BUMBLEBEE_SOCKET=str(path))
    assert calls == [] and result.returncode == EXIT_OK
    assert f"NVIDIA GPU {DGPU} is switched off (bbswitch)" in result.stdout
    assert "gpukit did not wake it" in result.stdout
    assert f"Optimus:       bumblebee (daemon at {path}); Intel iGPU + NVIDIA GPU " \
           f"{DGPU} (driver none), power off" in result.stdout
    assert "bbswitch: card off" in result.stdout
    assert "Offload:       gpukit run --offload -- CMD" in result.stdout

    result, calls = info(tmp_path, machine, "--json", GPUKIT_BUMBLEBEE_SOCKET=str(path))
    optimus = json.loads(result.stdout)["optimus"]
    assert calls == [] and result.returncode == EXIT_OK
    assert optimus["kind"] == "bumblebee" and optimus["power"] == "off"
    assert optimus["bumblebee_socket"] == str(path)
    # Detection looks at the socket only: a client would switch the card on.
    assert "connect" not in log.read_text()


def test_bumblebee_card_on(tmp_path, daemon):
    path, _ = daemon
    machine = fake_machine(tmp_path, status="active", control="on", bbswitch="ON")
    result, calls = info(tmp_path, machine, GPUKIT_BUMBLEBEE_SOCKET=str(path))
    assert woke(calls) and result.returncode == EXIT_OK
    assert "Optimus:       bumblebee" in result.stdout and "power active" in result.stdout
    assert "bbswitch: card on" in result.stdout
    assert "NVIDIA GeForce RTX 4050 Laptop GPU" in result.stdout


def test_bumblebee_idle_without_bbswitch(tmp_path, daemon):
    """bumblebee without bbswitch (another power method, or none): the NVIDIA
    module is loaded only while a client runs, so its absence is the idle
    state, not the driver fault NVML would report."""
    path, _ = daemon
    machine = fake_machine(tmp_path, driver=None, status="active", control="on")
    result, calls = info(tmp_path, machine, GPUKIT_BUMBLEBEE_SOCKET=str(path))
    assert calls == [] and result.returncode == EXIT_OK
    assert "is idle; bumblebee loads its driver for programs started through it" in result.stdout
    assert "Use device:    cuda:0 (the NVIDIA GPU, in programs started with gpukit run " \
           "--offload -- CMD)" in result.stdout


def test_socket_path_must_be_a_socket(tmp_path):
    """A plain file (or a dead daemon's leftover that is not a socket) is not
    a running bumblebee daemon."""
    not_socket = tmp_path / "bumblebee.socket"
    not_socket.write_text("")
    machine = fake_machine(tmp_path, status="active")
    result, _ = info(tmp_path, machine, "--json", GPUKIT_BUMBLEBEE_SOCKET=str(not_socket))
    optimus = json.loads(result.stdout)["optimus"]
    assert optimus["kind"] == "prime" and optimus["bumblebee_socket"] is None


def test_bumblebee_without_nvidia_gpu_in_sysfs(tmp_path):
    """bumblebee is running but sysfs shows no NVIDIA GPU: said, not guessed."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(tmp_path / "bb.socket"))
    machine = fake_machine(tmp_path, dgpu=False)
    env = base_env(tmp_path)
    env.update(machine, GPUKIT_BUMBLEBEE_SOCKET=str(tmp_path / "bb.socket"))
    result = run(["info"], env)
    listener.close()
    assert "Optimus:       bumblebee" in result.stdout
    assert "no NVIDIA GPU found in sysfs" in result.stdout
