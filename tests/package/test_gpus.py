"""gpukit.gpus(), GPU and Process, driver_version(), info() and gpukit.cuda,
each in a child Python against the fake NVML (tests/scenarios), checked
against the scenario files, against nvidia-ml-py reading the same fake, and
against the gpukit command's own JSON."""
import json
import subprocess

import pytest

from conftest import FAKE_CUDA, FAKE_NVML, GPUKIT_CLI, SCENARIOS, child_env

MIB = 1024 * 1024

FIELDS = ["index", "uuid", "name", "pci_bus_id", "state", "error", "memory_total",
          "memory_used", "memory_free", "memory_reserved", "utilization", "utilization_memory",
          "utilization_encoder", "utilization_decoder", "temperature", "fan", "power_draw",
          "power_limit", "clocks", "compute_capability", "persistence_mode", "mig_mode",
          "cuda_index"]

# Prints gpukit.gpus() as JSON: every attribute, processes as dicts.
DUMP = f"""
import json, gpukit
FIELDS = {FIELDS!r}
def gpu(g):
    d = {{k: getattr(g, k) for k in FIELDS}}
    d["processes"] = None if g.processes is None else [
        {{"pid": p.pid, "username": p.username, "command": p.command,
          "gpu_memory": p.gpu_memory, "type": p.type}} for p in g.processes]
    d["repr"] = repr(g)
    return d
print(json.dumps([gpu(g) for g in gpukit.gpus()]))
"""

# What nvidia-ml-py says about the same fake, in gpukit's units.
PYNVML = """
import json
import pynvml as N
def get(fn, *args):
    try:
        return fn(*args)
    except N.NVMLError:
        return None
N.nvmlInit()
out = []
for i in range(N.nvmlDeviceGetCount()):
    h = N.nvmlDeviceGetHandleByIndex(i)
    mem = get(N.nvmlDeviceGetMemoryInfo, h, N.nvmlMemory_v2)
    util = get(N.nvmlDeviceGetUtilizationRates, h)
    power = get(N.nvmlDeviceGetPowerUsage, h)
    limit = get(N.nvmlDeviceGetEnforcedPowerLimit, h)
    mig = get(N.nvmlDeviceGetMigMode, h)
    pci = get(N.nvmlDeviceGetPciInfo, h)
    procs = [(p.pid, p.usedGpuMemory, "C") for p in
             get(N.nvmlDeviceGetComputeRunningProcesses, h) or []] + \\
            [(p.pid, p.usedGpuMemory, "G") for p in
             get(N.nvmlDeviceGetGraphicsRunningProcesses, h) or []]
    clock = lambda fn, kind: get(fn, h, kind)
    out.append({
        "index": i, "uuid": N.nvmlDeviceGetUUID(h), "name": N.nvmlDeviceGetName(h),
        "pci_bus_id": pci.busId if pci else None,
        "memory_total": mem.total if mem else None, "memory_used": mem.used if mem else None,
        "memory_free": mem.free if mem else None,
        "memory_reserved": mem.reserved if mem else None,
        "utilization": util.gpu if util else None,
        "utilization_memory": util.memory if util else None,
        "utilization_encoder": (get(N.nvmlDeviceGetEncoderUtilization, h) or [None])[0],
        "utilization_decoder": (get(N.nvmlDeviceGetDecoderUtilization, h) or [None])[0],
        "temperature": get(N.nvmlDeviceGetTemperature, h, N.NVML_TEMPERATURE_GPU),
        "fan": get(N.nvmlDeviceGetFanSpeed, h),
        "power_draw": power / 1000 if power is not None else None,
        "power_limit": limit / 1000 if limit is not None else None,
        "clocks": {"sm": clock(N.nvmlDeviceGetClockInfo, N.NVML_CLOCK_SM),
                   "memory": clock(N.nvmlDeviceGetClockInfo, N.NVML_CLOCK_MEM),
                   "max_sm": clock(N.nvmlDeviceGetMaxClockInfo, N.NVML_CLOCK_SM),
                   "max_memory": clock(N.nvmlDeviceGetMaxClockInfo, N.NVML_CLOCK_MEM)},
        "compute_capability": list(get(N.nvmlDeviceGetCudaComputeCapability, h) or []) or None,
        "persistence_mode": get(N.nvmlDeviceGetPersistenceMode, h),
        "mig_mode": mig[0] if mig else None,
        "processes": sorted(procs),
    })
print(json.dumps({"driver": N.nvmlSystemGetDriverVersion(), "gpus": out}))
"""


def gpus(py, scenario, **env):
    return json.loads(py(DUMP, scenario=scenario, **env).stdout)


def cli_json(tmp_path, args, scenario, **extra):
    env = child_env(tmp_path, scenario, **extra)
    result = subprocess.run([str(GPUKIT_CLI), *args], env=env, capture_output=True, text=True,
                            timeout=60)
    return json.loads(result.stdout)


def test_every_field_of_a_busy_h100(py):
    g = gpus(py, "h100x8")
    assert len(g) == 8 and [x["index"] for x in g] == list(range(8))
    first = g[0]
    assert first["uuid"] == "GPU-2bdfff79-02da-4552-8376-7ccb112dc656"
    assert first["name"] == "NVIDIA H100 80GB HBM3"
    assert first["pci_bus_id"] == "00000000:18:00.0"
    assert first["state"] == "ok" and first["error"] is None
    assert first["memory_total"] == 81559 * MIB
    assert first["memory_used"] == 40213 * MIB
    assert first["memory_free"] == (81559 - 40213) * MIB
    assert first["utilization"] == 87 and first["utilization_memory"] == 45
    assert first["utilization_encoder"] == 0 and first["utilization_decoder"] == 0
    assert first["temperature"] == 61
    assert first["fan"] is None  # data-center GPUs have no fan NVML can read
    assert first["power_draw"] == pytest.approx(512.37) and isinstance(first["power_draw"], float)
    assert first["power_limit"] == 700.0 and isinstance(first["power_limit"], float)
    assert first["clocks"] == {"sm": 1980, "memory": 2619, "max_sm": 1980, "max_memory": 2619}
    assert first["compute_capability"] == [9, 0]  # a tuple, through JSON
    assert first["persistence_mode"] is True and first["mig_mode"] is False
    assert first["cuda_index"] == 0
    assert first["processes"] == [{"pid": 4012345, "username": None, "command": None,
                                   "gpu_memory": 40192 * MIB, "type": "C"}]
    assert g[2]["memory_reserved"] == 531 * MIB
    assert [len(x["processes"]) for x in g] == [1, 1, 2, 0, 1, 1, 1, 2]
    assert first["repr"] == ("<GPU [0] NVIDIA H100 80GB HBM3 | 61\u00b0C, 87 % | 40213 / 81559 MiB "
                             "| 512 / 700 W | 1 process>")


def test_types_of_the_objects(py):
    py("""
        import gpukit
        g = gpukit.gpus()[0]
        assert type(g) is gpukit.GPU and type(g.processes[0]) is gpukit.Process
        assert isinstance(g.compute_capability, tuple)
        assert g.processes[0] == (4012345, None, None, 40192 * 2**20, "C")
        for name in ("index", "memory_total", "power_draw", "processes"):
            assert getattr(gpukit.GPU, name).__doc__
        try:
            g.index = 3
        except AttributeError:
            pass
        else:
            raise AssertionError("GPU attributes are read-only")
        try:
            gpukit.GPU()
        except TypeError:
            pass
        else:
            raise AssertionError("GPUs come from gpus(), not from the type")
    """, scenario="h100x8")


@pytest.mark.parametrize("scenario", ["h100x8", "laptop", "notsupported", "mig"])
def test_same_values_as_nvidia_ml_py(py, scenario):
    ours = gpus(py, scenario)
    theirs = json.loads(py(PYNVML, scenario=scenario,
                           LD_LIBRARY_PATH=str(FAKE_NVML.parent)).stdout)
    assert len(ours) == len(theirs["gpus"])
    for mine, ref in zip(ours, theirs["gpus"]):
        for key, value in ref.items():
            if key == "processes":
                assert sorted((p["pid"], p["gpu_memory"], p["type"]) for p in mine[key]) == \
                    [tuple(p) for p in value], key
            elif key in ("persistence_mode", "mig_mode"):
                assert mine[key] == (None if value is None else bool(value)), key
            elif key in ("power_draw", "power_limit") and value is not None:
                assert mine[key] == pytest.approx(value), key
            else:
                assert mine[key] == value, f"GPU {ref['index']} {key}"
    assert py("import gpukit; print(gpukit.driver_version())",
              scenario=scenario).stdout.strip() == theirs["driver"]


def test_not_available_is_none_never_zero(py):
    (g,) = gpus(py, "notsupported")
    assert g["state"] == "ok"
    for key in ("temperature", "fan", "power_draw", "power_limit", "utilization",
                "utilization_memory", "persistence_mode"):
        assert g[key] is None, key
    assert g["clocks"] == {"sm": None, "memory": None, "max_sm": None, "max_memory": None}
    assert g["memory_total"] == 8192 * MIB and g["compute_capability"] == [7, 5]
    assert g["processes"][0]["pid"] == 4070001 and g["processes"][0]["gpu_memory"] is None
    assert "N/A" in g["repr"]
    (laptop,) = gpus(py, "laptop")
    assert laptop["fan"] is None and laptop["mig_mode"] is None
    assert laptop["persistence_mode"] is False
    assert sorted(p["type"] for p in laptop["processes"]) == ["C", "G"]


def test_lost_and_inaccessible_gpus_say_so(py, tmp_path):
    lost = gpus(py, "lost")
    assert [g["state"] for g in lost] == ["ok", "lost", "ok", "error"]
    for g in (lost[1], lost[3]):
        assert g["error"] and g["memory_total"] is None and g["temperature"] is None
        assert g["cuda_index"] is None and f"| {g['state']}: " in g["repr"]
    assert [g["cuda_index"] for g in lost] == [0, None, 1, None]
    noperm = gpus(py, "noperm")
    assert [g["state"] for g in noperm] == ["ok", "no_permission"] and noperm[1]["error"]
    # The command says the same.
    for scenario, ours in (("lost", lost), ("noperm", noperm)):
        theirs = cli_json(tmp_path, ["ls", "--json"], scenario)["gpus"]
        assert [(g["state"], g["error"]) for g in ours] == \
            [(g["state"], g["error"]) for g in theirs]


@pytest.mark.parametrize("scenario", ["h100x8", "mig", "laptop"])
def test_same_values_as_gpukit_ls_json(py, tmp_path, scenario):
    ours = gpus(py, scenario)
    theirs = cli_json(tmp_path, ["ls", "--json"], scenario)["gpus"]
    for mine, ref in zip(ours, theirs):
        assert mine["memory_used"] // MIB == ref["memory.used"]
        assert mine["memory_free"] // MIB == ref["memory.free"]
        assert mine["cuda_index"] == ref["cuda_index"]
        assert mine["utilization_encoder"] == ref["utilization.enc"]
        assert mine["mig_mode"] == ref["mig.mode"]
        assert [p["pid"] for p in mine["processes"]] == [p["pid"] for p in ref["processes"]]


def test_old_driver_without_v2_functions(py):
    g = gpus(py, "old_driver", old=True)
    assert [x["name"] for x in g] == ["Tesla V100-PCIE-16GB"] * 2
    assert g[0]["memory_total"] == 16160 * MIB and g[0]["compute_capability"] == [7, 0]
    assert py("import gpukit; print(gpukit.driver_version())", scenario="old_driver",
              old=True).stdout.strip() == "418.87.01"


def test_no_gpu_and_a_broken_driver(py):
    # No NVML at all, and a driver with no GPU: empty lists, not errors.
    assert py("import gpukit; print(gpukit.gpus(), gpukit.driver_version())"
              ).stdout.split() == ["[]", "None"]
    assert py("import gpukit; print(gpukit.gpus())", scenario="empty").stdout.strip() == "[]"
    result = py("""
        import gpukit
        try:
            gpukit.gpus()
        except gpukit.GPUError as e:
            print("GPUError:", e)
    """, scenario="driver_not_loaded")
    assert "GPUError:" in result.stdout and "modprobe" in result.stdout


def test_cuda_index_follows_cuda_visible_devices(py):
    g = gpus(py, "h100x8", CUDA_VISIBLE_DEVICES="3,1")
    assert [x["cuda_index"] for x in g] == [None, 1, None, 0, None, None, None, None]
    g = gpus(py, "h100x8", CUDA_VISIBLE_DEVICES="GPU-41f31581")
    assert [x["index"] for x in g if x["cuda_index"] is not None] == [6]
    g = gpus(py, "h100x8", CUDA_VISIBLE_DEVICES="")
    assert all(x["cuda_index"] is None for x in g)


@pytest.mark.parametrize("scenario,visible", [
    ("h100x8", None), ("h100x8", "5,2"), ("h100x8", ""), ("mig", None),
    ("mig", "MIG-e4429da1"), ("laptop", None), ("empty", None), (None, None),
    ("driver_not_loaded", None), ("lost", "1,2")])
def test_info_is_gpukit_info_json(py, tmp_path, scenario, visible):
    env = {} if visible is None else {"CUDA_VISIBLE_DEVICES": visible}
    ours = json.loads(py("import gpukit, json; print(json.dumps(gpukit.info()))",
                         scenario=scenario, **env).stdout)
    theirs = cli_json(tmp_path, ["info", "--json"], scenario, **env)
    for info in (ours, theirs):  # the host's free memory moves between the two reads
        info["cpu"].pop("memory.available")
    assert ours == theirs


def cuda_answers(py, scenario, **env):
    """Every gpukit.cuda answer in a child, and whether libcuda got loaded:
    GPUKIT_CUDA_LIBRARY points at the fake libcuda, so a load would show in
    /proc/self/maps (the last step loads it on purpose, to prove that)."""
    code = """
        import json, gpukit
        def loaded():
            return "libcuda" in open("/proc/self/maps").read()
        def call(f, *args):
            try:
                return f(*args)
            except Exception as e:
                return f"{type(e).__name__}: {e}"
        out = {"available": gpukit.cuda.is_available(), "count": gpukit.cuda.device_count(),
               "names": [call(gpukit.cuda.get_device_name, i) for i in range(3)],
               "name_default": call(gpukit.cuda.get_device_name),
               "name_str": call(gpukit.cuda.get_device_name, "cuda:1"),
               "mem": [call(gpukit.cuda.mem_get_info, i) for i in range(3)],
               "bad": call(gpukit.cuda.get_device_name, 99),
               "negative": call(gpukit.cuda.mem_get_info, -1),
               "cpu": call(gpukit.cuda.get_device_name, "cpu")}
        out["libcuda_after_calls"] = loaded()
        gpukit.devices()  # the fake libcuda: CUDA arrays do load it
        out["libcuda_after_devices"] = loaded()
        print(json.dumps(out))
    """
    return json.loads(py(code, scenario=scenario, GPUKIT_CUDA_LIBRARY=str(FAKE_CUDA),
                         **env).stdout)


def test_cuda_functions_never_load_libcuda(py):
    out = cuda_answers(py, "h100x8")
    assert out["available"] is True and out["count"] == 8
    assert out["names"] == ["NVIDIA H100 80GB HBM3"] * 3
    assert out["mem"][1] == [(81559 - 40213) * MIB, 81559 * MIB]
    assert out["libcuda_after_calls"] is False
    assert out["libcuda_after_devices"] is True  # the check can see a load


def test_cuda_needs_the_driver_library_as_torch_does(py, tmp_path):
    """NVML sees 8 GPUs, but without libcuda.so.1 no CUDA program can run:
    is_available() is False and device_count() 0, found without loading."""
    code = """
        import gpukit
        print(gpukit.cuda.is_available(), gpukit.cuda.device_count(), len(gpukit.gpus()),
              "libcuda" in open("/proc/self/maps").read())
    """
    missing = str(tmp_path / "no-such-dir" / "libcuda.so.1")
    assert py(code, scenario="h100x8", GPUKIT_CUDA_LIBRARY=missing).stdout.split() == \
        ["False", "0", "8", "False"]
    # The loader's own search (LD_LIBRARY_PATH here) finds a driver library.
    assert py(code, scenario="h100x8", LD_LIBRARY_PATH=str(FAKE_CUDA.parent)).stdout.split() == \
        ["True", "8", "8", "False"]


def test_cuda_functions_follow_the_cuda_view(py, tmp_path):
    out = cuda_answers(py, "h100x8", CUDA_VISIBLE_DEVICES="3,GPU-2bdfff79")
    # An index list ends at the first UUID: only GPU 3 is visible.
    free3 = (81559 - 531) * MIB  # GPU 3 is idle; the driver keeps 531 MiB
    assert out["count"] == 1 and out["mem"][0] == [free3, 81559 * MIB]
    assert out["names"][1].startswith("GPUError: invalid device id 1")
    out = cuda_answers(py, "h100x8", CUDA_VISIBLE_DEVICES="GPU-e184d64f,GPU-2bdfff79")
    assert out["count"] == 2
    assert [m[0] for m in out["mem"][:2]] == [free3, (81559 - 40213) * MIB]
    out = cuda_answers(py, "h100x8", CUDA_VISIBLE_DEVICES="")
    assert out["available"] is False and out["count"] == 0
    assert out["name_default"].startswith("GPUError: invalid device id 0")
    assert out["bad"].startswith("GPUError: invalid device id 99")
    assert out["negative"].startswith("GPUError")
    assert out["cpu"].startswith("ValueError")
    # A MIG device is named and measured as itself.
    out = cuda_answers(py, "mig", CUDA_VISIBLE_DEVICES="MIG-e4429da1")
    assert out["count"] == 1 and out["names"][0] == "NVIDIA A100-SXM4-40GB MIG 2g.10gb"
    assert out["mem"][0] == [(9856 - 4113) * MIB, 9856 * MIB]
    for scenario in (None, "empty", "driver_not_loaded"):
        out = cuda_answers(py, scenario)
        assert out["available"] is False and out["count"] == 0, scenario
        assert out["libcuda_after_calls"] is False


def test_cuda_device_order(py, tmp_path):
    """FASTEST_FIRST (CUDA's default) puts the newer GPU first; PCI_BUS_ID
    follows nvidia-smi's numbering."""
    scenario = tmp_path / "mixed.scn"
    scenario.write_text(
        'system driver=550.54.15 cuda=12040 nvml=12.550.54.15\n'
        'gpu name="Tesla V100-PCIE-16GB" uuid=GPU-5b2f8e61-93c4-4d0a-a7e2-0c6d91f34b18 '
        'pci=00000000:3B:00.0 mem_total=16160 mem_used=100 cc=7.0\n'
        'gpu name="NVIDIA H100 80GB HBM3" uuid=GPU-2bdfff79-02da-4552-8376-7ccb112dc656 '
        'pci=00000000:D8:00.0 mem_total=81559 mem_used=200 cc=9.0\n')
    fastest = cuda_answers(py, str(scenario))
    assert fastest["names"][:2] == ["NVIDIA H100 80GB HBM3", "Tesla V100-PCIE-16GB"]
    pci = cuda_answers(py, str(scenario), CUDA_DEVICE_ORDER="PCI_BUS_ID")
    assert pci["names"][:2] == ["Tesla V100-PCIE-16GB", "NVIDIA H100 80GB HBM3"]
    g = gpus(py, str(scenario), CUDA_DEVICE_ORDER="PCI_BUS_ID", CUDA_VISIBLE_DEVICES="1")
    assert [x["cuda_index"] for x in g] == [None, 0]


def test_docstrings_and_signatures():
    import inspect
    import gpukit
    for f in (gpukit.gpus, gpukit.driver_version, gpukit.info, gpukit.cuda.is_available,
              gpukit.cuda.device_count, gpukit.cuda.get_device_name, gpukit.cuda.mem_get_info):
        assert f.__doc__ and len(f.__doc__) > 40, f
        inspect.signature(f)
    assert gpukit.GPU.__doc__ and gpukit.Process.__doc__
