"""Benchmark: gpukit.dask against plain Dask in one run.

1. Cluster start: GPUCluster with one worker per GPU of the fake NVML's
   8xH100 (each worker reserving its GPU) against a LocalCluster of as many
   nanny workers, from the constructor until every worker has joined: the
   reservation's cost per worker.
2. Task throughput: the mean of a (1000, 1000) array in (100, 100) chunks
   (100 tasks and their tree reduction), computed on a cluster's workers
   with gpukit chunks (on each worker's default device; the CPU here)
   against NumPy chunks.

    python3 bench/dask_vs_localcluster.py [--build build-rel] [--repeat 3] [--workers 8]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchlib import default_build, import_gpukit

HERE = Path(__file__).resolve().parent


def started(make, workers):
    """Seconds from making the cluster until its workers have joined."""
    from distributed import Client
    begin = time.perf_counter()
    cluster = make()
    with Client(cluster) as client:
        client.wait_for_workers(workers)
        seconds = time.perf_counter() - begin
    cluster.close()
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--means", type=int, default=20, help="means timed per repeat")
    args = parser.parse_args()
    build = (args.build or default_build("run")).resolve()
    fake = build / "tests" / "fake_nvml"
    os.environ.update(GPUKIT_NVML_LIBRARY=str(fake / "libnvidia-ml.so.1"),
                      FAKE_NVML_SCENARIO=str(HERE.parent / "tests" / "scenarios" / "h100x8.scn"),
                      GPUKIT_LEASE_DIR=tempfile.mkdtemp(prefix="gpukit-bench-leases-"),
                      PYTHONPATH=os.pathsep.join([str(build / "python"), *sys.path]))
    gpukit = import_gpukit(build)
    import gpukit.dask
    import numpy as np
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    n = args.workers
    plain = lambda: LocalCluster(n_workers=n, threads_per_worker=1, host="127.0.0.1",  # noqa: E731
                                 dashboard_address=None, silence_logs=40)
    ours = lambda: gpukit.dask.GPUCluster(n_workers=n, silence_logs=40)  # noqa: E731
    starts = {"LocalCluster": [], "GPUCluster": []}
    for _ in range(args.repeat):
        starts["LocalCluster"].append(started(plain, n))
        starts["GPUCluster"].append(started(ours, n))

    rates = {"NumPy chunks": [], "gpukit chunks": []}
    with gpukit.dask.GPUCluster(n_workers=n, silence_logs=40) as cluster, Client(cluster):
        x = da.random.random((1000, 1000), chunks=(100, 100)).persist()
        on_gpukit = x.map_blocks(lambda b: gpukit.asarray(b),
                                 meta=gpukit.asarray(np.empty((0, 0)))).persist()
        for _ in range(args.repeat):
            for name, array in (("NumPy chunks", x), ("gpukit chunks", on_gpukit)):
                mean = array.mean()
                dask.compute(mean)  # warm
                begin = time.perf_counter()
                for _ in range(args.means):
                    dask.compute(dask.delayed(float)(mean))
                rates[name].append(args.means / (time.perf_counter() - begin))
    load = os.getloadavg()

    def line(name, values, unit):
        return (f"{name:<16} {statistics.median(values):8.3f} {unit} "
                f"[{min(values):.3f}-{max(values):.3f}]")

    print(f"cluster start, {n} workers (median [min-max] of {args.repeat}):")
    for name, values in starts.items():
        print("  " + line(name, values, "s"))
    extra = statistics.median(starts["GPUCluster"]) - statistics.median(starts["LocalCluster"])
    print(f"  GPUCluster / LocalCluster: "
          f"{statistics.median(starts['GPUCluster']) / statistics.median(starts['LocalCluster']):.2f}x"
          f" ({1000 * extra / n:+.0f} ms per worker for its reservation)")
    print("mean of (1000, 1000) in (100, 100) chunks, means per second:")
    for name, values in rates.items():
        print("  " + line(name, values, "/s"))
    print(f"  gpukit / NumPy chunks: "
          f"{statistics.median(rates['gpukit chunks']) / statistics.median(rates['NumPy chunks']):.2f}x"
          f"   (load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")


if __name__ == "__main__":
    main()
