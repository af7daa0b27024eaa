"""Benchmark: scraping `gpukit serve` against the Python exporter people
write for the same job (prometheus_client + nvidia-ml-py, reading NVML in a
collector at each scrape, with dcgm-exporter's metric names), side by side
in one run: p50 and p99 latency and the scrapes per second each sustains
under `wrk` (Debian's package) with 8 connections.

Without a GPU both read the fake NVML's 8xH100 scenario (with processes);
with --real, the real driver. The load generator runs on one core and the
exporter on the other (taskset), each measured --repeat times in turn.

    python3 bench/serve_vs_prometheus_client.py [--build build-rel] [--seconds 5]
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

from benchlib import default_build

HERE = Path(__file__).resolve().parent
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

# The peer: what a Prometheus user writes with the two standard libraries.
PYTHON_EXPORTER = textwrap.dedent('''
    import sys, time
    import pynvml
    from prometheus_client import start_http_server
    from prometheus_client.core import GaugeMetricFamily, CounterMetricFamily, REGISTRY

    LABELS = ["gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"]
    HOST = __import__("socket").gethostname()

    def value(call, *args):
        try:
            return call(*args)
        except pynvml.NVMLError:
            return None

    class Collector:
        def collect(self):
            families = {
                name: GaugeMetricFamily(name, help_text, labels=LABELS)
                for name, help_text in [
                    ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."),
                    ("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %)."),
                    ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."),
                    ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB)."),
                    ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C)."),
                    ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."),
                    ("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz)."),
                    ("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz)."),
                    ("DCGM_FI_DEV_ENC_UTIL", "Encoder utilization (in %)."),
                    ("DCGM_FI_DEV_DEC_UTIL", "Decoder utilization (in %).")]}
            energy = CounterMetricFamily("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                                         "Total energy (in mJ).", labels=LABELS)
            processes = GaugeMetricFamily("gpu_process_memory_bytes", "Process GPU memory.",
                                          labels=["gpu", "pid"])
            for i in range(pynvml.nvmlDeviceGetCount()):
                h = pynvml.nvmlDeviceGetHandleByIndex(i)
                labels = [str(i), pynvml.nvmlDeviceGetUUID(h),
                          pynvml.nvmlDeviceGetPciInfo(h).busId, f"nvidia{i}",
                          pynvml.nvmlDeviceGetName(h), HOST]
                util = value(pynvml.nvmlDeviceGetUtilizationRates, h)
                memory = value(pynvml.nvmlDeviceGetMemoryInfo, h)
                readings = {
                    "DCGM_FI_DEV_GPU_UTIL": util and util.gpu,
                    "DCGM_FI_DEV_MEM_COPY_UTIL": util and util.memory,
                    "DCGM_FI_DEV_FB_USED": memory and memory.used / 2**20,
                    "DCGM_FI_DEV_FB_FREE": memory and memory.free / 2**20,
                    "DCGM_FI_DEV_GPU_TEMP": value(pynvml.nvmlDeviceGetTemperature, h, 0),
                    "DCGM_FI_DEV_POWER_USAGE": (value(pynvml.nvmlDeviceGetPowerUsage, h) or 0) / 1000,
                    "DCGM_FI_DEV_SM_CLOCK": value(pynvml.nvmlDeviceGetClockInfo, h, 1),
                    "DCGM_FI_DEV_MEM_CLOCK": value(pynvml.nvmlDeviceGetClockInfo, h, 2),
                    "DCGM_FI_DEV_ENC_UTIL": (value(pynvml.nvmlDeviceGetEncoderUtilization, h) or [None])[0],
                    "DCGM_FI_DEV_DEC_UTIL": (value(pynvml.nvmlDeviceGetDecoderUtilization, h) or [None])[0],
                }
                for name, reading in readings.items():
                    if reading is not None:
                        families[name].add_metric(labels, reading)
                joules = value(pynvml.nvmlDeviceGetTotalEnergyConsumption, h)
                if joules is not None:
                    energy.add_metric(labels, joules)
                for p in value(pynvml.nvmlDeviceGetComputeRunningProcesses, h) or []:
                    processes.add_metric([str(i), str(p.pid)], p.usedGpuMemory or 0)
            yield from families.values()
            yield energy
            yield processes

    pynvml.nvmlInit()
    REGISTRY.register(Collector())
    start_http_server(int(sys.argv[1]), addr="127.0.0.1")
    print("listening", flush=True)
    while True:
        time.sleep(3600)
''')


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_up(url, process):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the exporter exited: {process.stderr.read()}")
        try:
            with OPENER.open(url, timeout=2) as response:
                return response.read()
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"{url} did not answer")


def wrk(url, seconds, connections, core):
    """(requests/s, p50 ms, p99 ms) from wrk --latency."""
    out = subprocess.run(["taskset", "-c", core, "wrk", "-t1", f"-c{connections}",
                          f"-d{seconds}s", "--latency", url],
                         capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def ms(label):
        number, unit = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M).groups()
        return float(number) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors or "Socket errors" in out:
        print(f"  note: {url}: {out.strip().splitlines()[-3:]}")
    return rate, ms("50"), ms("99")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=None, help="gpukit build directory")
    parser.add_argument("--seconds", type=int, default=5, help="seconds of load per measure")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--real", action="store_true", help="read the real NVIDIA driver")
    args = parser.parse_args()
    build = (args.build or default_build("serve")).resolve()
    if not shutil.which("wrk"):
        raise SystemExit("needs wrk: apt-get install wrk")

    env = dict(os.environ)
    if not args.real:
        fake = build / "tests" / "fake_nvml"
        env.update(GPUKIT_NVML_LIBRARY=str(fake / "libnvidia-ml.so.1"),
                   LD_LIBRARY_PATH=str(fake),
                   FAKE_NVML_SCENARIO=str(HERE.parent / "tests" / "scenarios" / "h100x8.scn"))
    gk_port, py_port = free_port(), free_port()
    gpukit = subprocess.Popen(["taskset", "-c", "1", str(build / "gpukit"), "serve", "--listen",
                               f"127.0.0.1:{gk_port}"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    python = subprocess.Popen(["taskset", "-c", "1", sys.executable, "-c", PYTHON_EXPORTER,
                               str(py_port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    peers = [("gpukit serve", f"http://127.0.0.1:{gk_port}/metrics", gpukit),
             ("prometheus_client + pynvml", f"http://127.0.0.1:{py_port}/metrics", python)]
    try:
        for name, url, process in peers:
            body = wait_until_up(url, process)
            print(f"{name}: {len(body)} bytes, "
                  f"{body.count(b'DCGM_FI_DEV_GPU_UTIL{')} GPU utilization samples")
        results = {name: [] for name, _, _ in peers}
        for _ in range(args.repeat):
            for name, url, _ in peers:  # in turn, so drift hits both alike
                results[name].append(wrk(url, args.seconds, args.connections, "0"))
        load = os.getloadavg()
    finally:
        for _, _, process in peers:
            process.terminate()
            process.wait(timeout=10)

    print(f"\n{'exporter':<28} {'scrapes/s':>18} {'p50 ms':>16} {'p99 ms':>16}   "
          f"({args.repeat} x {args.seconds} s, {args.connections} connections, "
          f"{'real driver' if args.real else 'fake NVML 8xH100'}; median [min-max])")
    summary = {}
    for name, runs in results.items():
        columns = []
        for i in range(3):
            values = [r[i] for r in runs]
            columns.append(f"{statistics.median(values):8.2f} [{min(values):.4g}-{max(values):.4g}]")
        summary[name] = [statistics.median(r[i] for r in runs) for i in range(3)]
        print(f"{name:<28} {columns[0]:>18} {columns[1]:>16} {columns[2]:>16}")
    ours, peer = summary["gpukit serve"], summary["prometheus_client + pynvml"]
    print(f"\ngpukit serve: {ours[0] / peer[0]:.1f}x the scrapes/s, p50 {peer[1] / ours[1]:.1f}x "
          f"lower, p99 {peer[2] / ours[2]:.1f}x lower  (load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f})")


if __name__ == "__main__":
    main()
