"""`gpukit ls`: JSON (gpustat's schema and more), CSV and the table, checked
against the values each fake NVML scenario serves."""
import csv
import io
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import (EXIT_DRIVER, EXIT_NO_GPU, EXIT_OK, FAKE_NVML, SCENARIOS, expected_int,
                      ls_json, parse_scenario, scenario_env)

GPUSTAT_GPU_KEYS = ["index", "uuid", "name", "temperature.gpu", "fan.speed", "utilization.gpu",
                    "utilization.enc", "utilization.dec", "power.draw", "enforced.power.limit", "memory.used", "memory.total",
                    "processes"]
GPUSTAT_PROCESS_KEYS = ["pid", "username", "command", "full_command", "gpu_memory_usage",
                        "cpu_percent", "cpu_memory_usage"]


@pytest.mark.parametrize("scenario", ["h100x8", "laptop", "notsupported", "mig"])
def test_json_matches_scenario(gk, scenario):
    result, data = ls_json(gk, scenario)
    assert result.returncode == EXIT_OK, result.stderr
    _, gpus = parse_scenario(scenario)
    assert len(data["gpus"]) == len(gpus)
    for index, (got, want) in enumerate(zip(data["gpus"], gpus)):
        for key in GPUSTAT_GPU_KEYS:
            assert key in got, f"gpustat key {key} missing"
        assert got["index"] == index
        assert got["name"] == want["name"]
        assert got["uuid"] == want["uuid"]
        assert got["pci.bus_id"] == want["pci"]
        assert got["state"] == "ok" and got["error"] is None
        assert got["memory.total"] == expected_int(want, "mem_total")
        assert got["memory.used"] == expected_int(want, "mem_used")
        assert got["temperature.gpu"] == expected_int(want, "temp")
        assert got["fan.speed"] == expected_int(want, "fan")
        assert got["utilization.gpu"] == expected_int(want, "util_gpu")
        assert got["utilization.memory"] == expected_int(want, "util_mem")
        assert got["utilization.enc"] == expected_int(want, "enc")
        assert got["utilization.dec"] == expected_int(want, "dec")
        assert got["power.draw"] == expected_int(want, "power")            # whole watts
        assert got["enforced.power.limit"] == expected_int(want, "power_limit")
        assert got["clocks.sm"] == expected_int(want, "clock_sm")
        assert got["clocks.max.mem"] == expected_int(want, "clock_max_mem")
        want_cc = want.get("cc")
        assert got["compute_capability"] == (None if not want_cc or want_cc.startswith("!")
                                             else want_cc)
        pids = sorted(int(p["pid"]) for p in want["procs"])
        assert sorted(p["pid"] for p in got["processes"]) == pids
        for proc in got["processes"]:
            for key in GPUSTAT_PROCESS_KEYS:
                assert key in proc
            spec = next(p for p in want["procs"] if int(p["pid"]) == proc["pid"])
            want_mem = None if spec.get("mem") in (None, "na") else int(spec["mem"])
            assert proc["gpu_memory_usage"] == want_mem


def test_json_top_level_fields(gk):
    result, data = ls_json(gk, "h100x8")
    assert data["driver_version"] == "550.54.15"
    assert data["cuda_driver_version"] == "12.4"
    assert data["nvml_version"] == "12.550.54.15"
    assert data["source"] == "nvml"
    assert data["hostname"] == os.uname().nodename
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}", data["query_time"])
    assert data["cpu"]["logical_cores"] >= 1


def test_unsupported_fields_are_null_not_zero(gk):
    result, data = ls_json(gk, "notsupported")
    gpu = data["gpus"][0]
    unavailable = [k for k in ("temperature.gpu", "fan.speed", "power.draw",
                               "enforced.power.limit", "utilization.gpu", "clocks.sm")
                   if gpu[k] is None]
    assert len(unavailable) == 6, gpu
    table = gk(["ls"], scenario="notsupported").stdout
    assert "N/A" in table


def test_memory_uses_v2_struct_where_available(gk):
    # GPU 3 of h100x8 has 531 MiB reserved and nothing used: v1 would say 531.
    _, data = ls_json(gk, "h100x8")
    assert data["gpus"][3]["memory.used"] == 0
    assert data["gpus"][3]["memory.reserved"] == 531


def test_csv_matches_json(gk):
    _, data = ls_json(gk, "h100x8")
    result = gk(["ls", "--csv"], scenario="h100x8")
    assert result.returncode == EXIT_OK
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 8
    for row, gpu in zip(rows, data["gpus"]):
        assert row["uuid"] == gpu["uuid"]
        assert int(row["memory.used"]) == gpu["memory.used"]
        assert row["fan.speed"] == ""  # unavailable: an empty cell
        assert int(row["processes"]) == len(gpu["processes"])


def test_no_processes_skips_the_process_queries(gk, tmp_path):
    trace = tmp_path / "trace"
    result = gk(["ls", "--json", "--no-processes"], scenario="h100x8",
                env={"FAKE_NVML_TRACE": str(trace)})
    assert result.returncode == EXIT_OK
    assert "RunningProcesses" not in trace.read_text()
    import json
    assert all("processes" not in g for g in json.loads(result.stdout)["gpus"])
    header = gk(["ls", "--csv", "--no-processes"], scenario="h100x8").stdout.splitlines()[0]
    assert "processes" not in header


def test_table(gk):
    result = gk(["ls"], scenario="h100x8")
    assert result.returncode == EXIT_OK
    lines = result.stdout.splitlines()
    assert lines[0].split()[:2] == ["GPU", "NAME"]
    assert "NVIDIA H100 80GB HBM3" in result.stdout
    assert "40213/81559" in result.stdout
    assert "cuda:0" in result.stdout
    assert "pid 4012345" in result.stdout


def test_real_process_gets_user_and_command(gk, tmp_path):
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        scenario = tmp_path / "live.scn"
        scenario.write_text(
            'gpu name="NVIDIA GeForce RTX 4050 Laptop GPU" uuid=GPU-11111111-2222-3333-4444-'
            '555555555555 pci=00000000:01:00.0 mem_total=6141 mem_used=600\n'
            f"proc type=compute pid={sleeper.pid} mem=512\n"
            f"proc type=graphics pid={sleeper.pid} mem=512\n")
        result, data = ls_json(gk, str(scenario))
        procs = data["gpus"][0]["processes"]
        assert len(procs) == 1, "a pid in both lists is one process"
        proc = procs[0]
        assert proc["pid"] == sleeper.pid
        assert proc["type"] == "C+G"
        import pwd
        assert proc["username"] == pwd.getpwuid(os.getuid()).pw_name
        assert proc["command"] == "sleep"
        assert proc["full_command"] == ["sleep", "30"]
        assert proc["cpu_memory_usage"] is not None
        assert 0 <= proc["cpu_percent"] < 100  # sleep(1) is idle
        overview = gk([], scenario=str(scenario)).stdout
        assert f"sleep/{sleeper.pid}(512M)" in overview
    finally:
        sleeper.kill()
        sleeper.wait()


def test_cpu_percent_tells_busy_from_idle(gk, tmp_path):
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    idle = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(1.0)
        scenario = tmp_path / "cpu.scn"
        scenario.write_text(
            'gpu name="G" uuid=GPU-11111111-2222-3333-4444-555555555555 mem_total=100 '
            'mem_used=2\n'
            f"proc type=compute pid={busy.pid} mem=1\nproc type=compute pid={idle.pid} mem=1\n")
        _, data = ls_json(gk, str(scenario))
        usage = {p["pid"]: p["cpu_percent"] for p in data["gpus"][0]["processes"]}
        # A spinning shell uses most of a core, a sleeping process almost none;
        # the bounds are loose because the test machine may be busy.
        assert usage[busy.pid] > 10, usage
        assert usage[idle.pid] < 5, usage
    finally:
        for p in (busy, idle):
            p.kill()
            p.wait()


def test_laptop_gpu(gk):
    _, data = ls_json(gk, "laptop")
    gpu = data["gpus"][0]
    assert gpu["name"] == "NVIDIA GeForce RTX 4050 Laptop GPU"
    assert gpu["memory.total"] == 6141
    assert gpu["enforced.power.limit"] == 35
    assert gpu["fan.speed"] is None
    assert {p["type"] for p in gpu["processes"]} == {"C", "G"}


def test_mig_devices_listed(gk):
    _, data = ls_json(gk, "mig")
    _, gpus = parse_scenario("mig")
    a100 = data["gpus"][0]
    assert a100["mig.mode"] is True
    assert [m["uuid"] for m in a100["mig_devices"]] == [m["uuid"] for m in gpus[0]["migs"]]
    assert a100["mig_devices"][0]["memory.total"] == int(gpus[0]["migs"][0]["mem_total"])
    assert any(p["gpu_instance_id"] is not None for p in a100["processes"])
    assert data["gpus"][1]["mig.mode"] is False and data["gpus"][1]["mig_devices"] == []


def test_lost_and_failing_gpus_are_reported_beside_healthy_ones(gk):
    result, data = ls_json(gk, "lost")
    assert result.returncode == EXIT_DRIVER
    states = [g["state"] for g in data["gpus"]]
    assert states == ["ok", "lost", "ok", "error"]
    assert "lost" in data["gpus"][1]["error"].lower()
    assert "reboot" in data["gpus"][1]["error"] or "reset" in data["gpus"][1]["error"]
    assert data["gpus"][1]["memory.total"] is None
    assert data["gpus"][0]["memory.total"] is not None and data["gpus"][0]["processes"]
    assert data["gpus"][2]["processes"]
    overview = gk([], scenario="lost")
    assert overview.returncode == EXIT_DRIVER
    assert re.search(r"\[1\].*LOST", overview.stdout)
    assert re.search(r"\[3\].*ERROR", overview.stdout)


def test_no_permission_gpu(gk):
    result, data = ls_json(gk, "noperm")
    assert result.returncode == EXIT_DRIVER
    assert [g["state"] for g in data["gpus"]] == ["ok", "no_permission"]
    assert "permission" in data["gpus"][1]["error"]


def test_old_driver_uses_v1_symbols(gk, tmp_path):
    trace = tmp_path / "trace"
    result, data = ls_json(gk, "old_driver", old=True, env={"FAKE_NVML_TRACE": str(trace)})
    assert result.returncode == EXIT_OK, result.stderr
    _, gpus = parse_scenario("old_driver")
    assert [g["name"] for g in data["gpus"]] == [g["name"] for g in gpus]
    assert data["gpus"][0]["memory.total"] == int(gpus[0]["mem_total"])
    assert data["gpus"][0]["pci.bus_id"] == gpus[0]["pci"]
    assert data["gpus"][0]["processes"], "v1 process entries must be read"
    assert [p["gpu_memory_usage"] for p in data["gpus"][0]["processes"]] == \
        [int(p["mem"]) for p in gpus[0]["procs"]]
    calls = set(trace.read_text().split())
    assert "nvmlInit" in calls and "nvmlDeviceGetComputeRunningProcesses" in calls
    assert not any(c.endswith(("_v2", "_v3")) for c in calls)


def test_new_driver_uses_newest_symbols(gk, tmp_path):
    trace = tmp_path / "trace"
    gk(["ls", "--json"], scenario="h100x8", env={"FAKE_NVML_TRACE": str(trace)})
    calls = set(trace.read_text().split())
    assert {"nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
            "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetPciInfo_v3",
            "nvmlDeviceGetComputeRunningProcesses_v3"} <= calls
    assert "nvmlDeviceGetComputeRunningProcesses" not in calls


def test_loaded_through_ld_library_path(gk):
    result = gk(["ls", "--json"], env={
        "LD_LIBRARY_PATH": str(FAKE_NVML.parent), "GPUKIT_NVML_LIBRARY": "",
        "FAKE_NVML_SCENARIO": str(SCENARIOS / "laptop.scn")})
    assert result.returncode == EXIT_OK, result.stderr
    assert '"NVIDIA GeForce RTX 4050 Laptop GPU"' in result.stdout


def test_unversioned_stub_is_never_loaded(gk, tmp_path):
    stub_dir = tmp_path / "stub"
    stub_dir.mkdir()
    (stub_dir / "libnvidia-ml.so").write_bytes(FAKE_NVML.read_bytes())
    result = gk(["ls", "--json"], env={
        "LD_LIBRARY_PATH": str(stub_dir), "GPUKIT_NVML_LIBRARY": "",
        "FAKE_NVML_SCENARIO": str(SCENARIOS / "laptop.scn")})
    assert result.returncode == EXIT_NO_GPU
    assert "libnvidia-ml.so.1" in result.stderr


def test_overview_lines(gk):
    result = gk([], scenario="h100x8")
    assert result.returncode == EXIT_OK
    lines = result.stdout.splitlines()
    assert "driver 550.54.15" in lines[0] and "CUDA 12.4" in lines[0]
    gpu_lines = [l for l in lines if l.startswith("[")]
    assert len(gpu_lines) == 8
    assert re.match(r"\[0\] NVIDIA H100 80GB HBM3 \|\s+61\u00b0C,\s+87 % \| 40213 / 81559 MB",
                    gpu_lines[0]), gpu_lines[0]
    assert "?:?/4012345(40192M)" in gpu_lines[0]  # pid not on this machine: user unknown
    assert "\x1b[" not in result.stdout, "no color when not on a terminal"
    # Unknown values have no unit: "N/A", not "N/A°C" or "(N/AM)".
    unknown = gk([], scenario="notsupported").stdout
    assert re.search(r"\|\s+N/A,", unknown) and "N/A\u00b0C" not in unknown, unknown
    assert "/4070001(N/A)" in unknown and "N/AM" not in unknown, unknown


def run_on_terminal(env):
    """Runs `gpukit` with its output on a pseudo-terminal; returns the bytes."""
    import pty
    from conftest import GPUKIT
    main, child = pty.openpty()
    proc = subprocess.Popen([str(GPUKIT)], env=env, stdout=child, stderr=child)
    os.close(child)
    output = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # EIO: the terminal's other end is closed
            break
        if not chunk:
            break
        output += chunk
    proc.wait(timeout=10)
    os.close(main)
    return output


def test_color_by_default_only_on_a_terminal(tmp_path):
    env = scenario_env(tmp_path, "laptop")
    output = run_on_terminal(env)
    assert b"\x1b[" in output and b"RTX 4050" in output
    output = run_on_terminal(dict(env, NO_COLOR="1"))
    assert b"\x1b[" not in output and b"RTX 4050" in output


def test_color(gk):
    assert "\x1b[" in gk(["--color=always"], scenario="laptop").stdout
    assert "\x1b[" not in gk(["--color=never"], scenario="laptop").stdout
    bad = gk(["--color=sometimes"], scenario="laptop")
    assert bad.returncode == 2 and "--color" in bad.stderr


def test_watch_mode_redraws_until_interrupted(gk, tmp_path):
    from conftest import GPUKIT
    proc = subprocess.Popen([str(GPUKIT), "--interval", "0.2"],
                            env=scenario_env(tmp_path, "laptop"), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert out.count("RTX 4050") >= 2, out
    bad = gk(["--interval", "soon"], scenario="laptop")
    assert bad.returncode == 2 and "--interval" in bad.stderr
