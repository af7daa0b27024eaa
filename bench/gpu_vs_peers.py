#!/usr/bin/env python3
"""GPU arrays against their references, each measured in the same run.

1. Warm start of a cached user kernel: fresh processes compile one kernel
   with an empty cache directory (cold: the compiler runs) and with a
   filled one (warm: a disk-cache hit). Target: warm <= 5 ms.
2. OpenCL on PoCL against the CPU backend, elementwise add of 2^24 float32.
   Target: OpenCL no slower than 3x the CPU.
3. On each CUDA GPU (when there is one): add and sum of 2^28 float32 as a
   fraction of the driver's device-to-device copy bandwidth (targets 85% and
   80%), gk_matmul against cuBLAS called directly (target within 5%), and
   CuPy's add, sum and matmul when CuPy imports.

Usage: bench/gpu_vs_peers.py [--build DIR] [--runs N]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import default_build


def run_bench(build, *args, env=None):
    program = build / "bench" / "gpu_bench"
    if not program.is_file():
        sys.exit(f"gpu_vs_peers: {program} does not exist: configure {build} with "
                 f"-DGPUKIT_BUILD_TESTS=ON and build it (cmake --build {build})")
    out = subprocess.run([str(program), *args], capture_output=True,
                         text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"gpu_bench {' '.join(args)} failed: {out.stderr.strip()}")
    return {line.split()[0]: [float(x) for x in line.split()[1:]]
            for line in out.stdout.splitlines()}


def kernel_start(build, device, runs):
    cold, warm, memory, opened = [], [], [], []
    shared = tempfile.mkdtemp(prefix="gpukit-bench-cache-")
    try:
        for _ in range(runs):
            empty = tempfile.mkdtemp(prefix="gpukit-bench-cold-")
            env = dict(os.environ, GPUKIT_CACHE_DIR=empty)
            cold.append(run_bench(build, "kernel-start", device, env=env)["compile"][0])
            shutil.rmtree(empty)
        env = dict(os.environ, GPUKIT_CACHE_DIR=shared)
        run_bench(build, "kernel-start", device, env=env)  # fills the cache
        for _ in range(runs):
            r = run_bench(build, "kernel-start", device, env=env)
            warm.append(r["compile"][0])
            memory.append(r["memory_hit"][0])
            opened.append(r["open"][0])
    finally:
        shutil.rmtree(shared)
    c, w = statistics.median(cold), statistics.median(warm)
    print(f"\n== Kernel start on {device} (median of {runs} fresh processes) ==")
    print(f"  opening the device        {statistics.median(opened) * 1e3:9.2f} ms")
    print(f"  cold compile (compiler)   {c * 1e3:9.2f} ms")
    print(f"  warm start (disk cache)   {w * 1e3:9.2f} ms   target <= 5 ms: "
          f"{'met' if w <= 0.005 else 'MISSED'}")
    print(f"  memory hit                {statistics.median(memory) * 1e6:9.2f} us")
    print(f"  cold / warm               {c / w:9.1f}x")


def rate(r, name):
    seconds, amount = r[name]
    return amount / seconds / 1e9


def opencl_vs_cpu(build, device):
    cpu = run_bench(build, "bandwidth", "cpu", "24", "256")
    cl = run_bench(build, "bandwidth", device, "24", "256")
    ratio = cl["add"][0] / cpu["add"][0]
    print(f"\n== {device} against the CPU backend, add of 2^24 float32 (best of 10) ==")
    print(f"  cpu     {cpu['add'][0] * 1e3:8.2f} ms  {rate(cpu, 'add'):6.1f} GB/s")
    print(f"  {device} {cl['add'][0] * 1e3:8.2f} ms  {rate(cl, 'add'):6.1f} GB/s")
    print(f"  OpenCL time / CPU time: {ratio:.2f}x   target <= 3x: "
          f"{'met' if ratio <= 3 else 'MISSED'}")


def cupy_times(log2, order):
    try:
        import cupy
    except ImportError:
        return None
    n = 1 << log2
    a = cupy.random.random(n, dtype=cupy.float32)
    b = cupy.random.random(n, dtype=cupy.float32)
    c = cupy.empty_like(a)
    left = cupy.random.random((order, order), dtype=cupy.float32)
    right = cupy.random.random((order, order), dtype=cupy.float32)

    def best(fn):
        times = []
        for _ in range(11):
            cupy.cuda.Device().synchronize()
            start = time.perf_counter()
            fn()
            cupy.cuda.Device().synchronize()
            times.append(time.perf_counter() - start)
        return min(times[1:])

    return {"add": best(lambda: cupy.add(a, b, out=c)), "sum": best(lambda: a.sum()),
            "matmul": best(lambda: left @ right)}


def cuda(build, device, log2, order):
    r = run_bench(build, "bandwidth", device, str(log2), str(order))
    copy = rate(r, "copy")
    print(f"\n== {device}: 2^{log2} float32 (best of 10) ==")
    print(f"  device-to-device copy  {copy:8.1f} GB/s (reference)")
    for name, target in (("add", 0.85), ("sum", 0.80)):
        frac = rate(r, name) / copy
        print(f"  {name:4s} {rate(r, name):8.1f} GB/s = {frac * 100:5.1f}% of copy   "
              f"target >= {target * 100:.0f}%: {'met' if frac >= target else 'MISSED'}")
    if "blas_direct" in r:
        ratio = r["matmul"][0] / r["blas_direct"][0]
        print(f"  matmul {order}^2: gk {rate(r, 'matmul'):.0f} GFLOP/s, cuBLAS direct "
              f"{rate(r, 'blas_direct'):.0f} GFLOP/s; gk time / cuBLAS time {ratio:.3f}   "
              f"target <= 1.05: {'met' if ratio <= 1.05 else 'MISSED'}")
    peer = cupy_times(log2, order)
    if peer is None:
        print("  CuPy: not importable here, no comparison")
    else:
        for name in ("add", "sum", "matmul"):
            print(f"  {name:6s} CuPy time / gpukit time: {peer[name] / r[name][0]:.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", type=os.path.abspath, default=None)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    from pathlib import Path
    build = Path(args.build) if args.build else default_build("bench")
    listing = subprocess.run([str(build / "gpukit"), "bench", "--json", "--size", "1024",
                              "--matmul", "16", "--repeat", "1"], capture_output=True, text=True)
    import json
    devices = []
    for row in json.loads(listing.stdout)["results"]:
        if row["device"] not in devices:
            devices.append(row["device"])
    print(f"build: {build}; devices: {', '.join(devices)}")
    gpu_like = [d for d in devices if d != "cpu"]
    if not gpu_like:
        sys.exit("no CUDA or OpenCL device: install pocl-opencl-icd to benchmark OpenCL on the CPU")
    kernel_start(build, gpu_like[0], args.runs)
    for d in gpu_like:
        if d.startswith("opencl"):
            opencl_vs_cpu(build, d)
        else:
            cuda(build, d, 28, 4096)


if __name__ == "__main__":
    main()
