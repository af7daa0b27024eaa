"""`gpukit bench`: the CPU-vs-GPU table on every device, here the CPU and
PoCL's OpenCL device (CI installs pocl-opencl-icd), with no CUDA driver."""
import json
import os

from conftest import BUILD, EXIT_DRIVER, EXIT_OK, EXIT_USAGE, base_env, run

SMALL = ["--size", "4096", "--matmul", "16", "--repeat", "1"]
OPERATIONS = ["copy", "add", "sum", "matmul", "kernel"]


def bench_env(tmp_path):
    env = base_env(tmp_path)
    env["GPUKIT_CUDA_LIBRARY"] = str(tmp_path / "no-such-dir" / "libcuda.so.1")
    env["GPUKIT_CACHE_DIR"] = str(tmp_path / "cache")
    env["OMP_WAIT_POLICY"] = "passive"
    # PoCL links each compiled kernel with the system's `ld`.
    env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    return env


def test_every_device_every_operation(tmp_path):
    r = run(["bench", "--json", *SMALL], bench_env(tmp_path), timeout=600)
    assert r.returncode == EXIT_OK, r.stderr
    report = json.loads(r.stdout)
    devices = []
    for row in report["results"]:
        if row["device"] not in devices:
            devices.append(row["device"])
    assert devices[0] == "cpu"
    assert any(d.startswith("opencl:") for d in devices), devices
    for device in devices:
        rows = [row for row in report["results"] if row["device"] == device]
        assert [row["operation"] for row in rows] == OPERATIONS
        for row in rows:
            if device == "cpu" and row["operation"] == "kernel":
                assert "n/a" in row["error"]
                continue
            assert "error" not in row, row
            assert row["seconds"] > 0
            rate = row.get("gflops", row.get("gbytes_per_second"))
            assert rate > 0
            if device == "cpu":
                assert row["speedup_vs_cpu"] is None
            elif row["operation"] != "kernel":
                assert row["speedup_vs_cpu"] > 0
    # No CUDA here, and the report says so and why.
    assert "No CUDA GPU" in report["note"] and "libcuda.so.1" in report["note"]
    assert report["size"] == 4096 and report["matmul"] == 16 and report["repeat"] == 1


def test_table(tmp_path):
    r = run(["bench", *SMALL, "--device", "cpu", "--device", "opencl:0:0"], bench_env(tmp_path),
            timeout=600)
    assert r.returncode == EXIT_OK, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["DEVICE", "TEST", "TIME", "RATE", "VS", "CPU"]
    cl = [line for line in lines if line.startswith("opencl:0:0")]
    assert [line.split()[1] for line in cl] == OPERATIONS
    assert all(line.split()[-1].endswith("x") for line in cl[:4]), cl
    assert "4096 float32 values" in r.stdout
    # Devices were named: no "No CUDA GPU" note.
    assert "No CUDA GPU" not in r.stdout


def test_without_opencl_only_the_cpu(tmp_path):
    env = bench_env(tmp_path)
    env["GPUKIT_OPENCL_LIBRARY"] = str(tmp_path / "no-such-dir" / "libOpenCL.so.1")
    r = run(["bench", "--json", *SMALL], env, timeout=300)
    assert r.returncode == EXIT_OK, r.stderr
    report = json.loads(r.stdout)
    assert {row["device"] for row in report["results"]} == {"cpu"}
    assert "0 OpenCL devices" in report["note"]


def test_unusable_devices_and_bad_options(tmp_path):
    env = bench_env(tmp_path)
    r = run(["bench", "--device", "cuda:0"], env)
    assert r.returncode == EXIT_DRIVER
    assert "cuda:0" in r.stderr and "libcuda.so.1" in r.stderr
    assert r.stderr.count("cuda:0") == 1  # named once
    r = run(["bench", "--device", "opencl:7:0"], env)
    assert r.returncode == EXIT_DRIVER and r.stderr.count("opencl:7:0") == 1
    for args, text in ((["--device", "gpu"], "not a device name"),
                       (["--size", "0"], "--size"), (["--repeat", "x"], "--repeat"),
                       (["--matmul", "-3"], "--matmul"), (["extra"], "unexpected argument"),
                       (["--bogus"], "Try 'gpukit bench --help'")):
        r = run(["bench", *args], env)
        assert r.returncode == EXIT_USAGE, args
        assert text in r.stderr, (args, r.stderr)
    r = run(["bench", "--help"], env)
    assert r.returncode == EXIT_OK and "Usage: gpukit bench" in r.stdout
    assert BUILD.exists()
