"""Benchmark: how long a Jupyter kernel takes to start through `gpukit kernel`.

Start-to-ready time of the same ipykernel kernel two ways, interleaved run by
run (ABAB...) in the same process, on the fake NVML's 8xH100 scenario with a
fresh lease directory:

  plain   a kernelspec written by hand: PYTHON -m ipykernel_launcher -f {connection_file}
  gpukit  `gpukit kernel install --user --name gk-gpu --python PYTHON`: the same
          command behind `gpukit run --cpu-fallback --`

Each run is timed from KernelManager.start_kernel() to the kernel answering a
kernel_info request: BlockingKernelClient.wait_for_ready() returning (which
includes its fixed 0.2 s quiet wait on IOPub), and, inside it, the arrival of
the first kernel_info_reply. Shutting the kernel down is not timed. One
warm-up of each is not counted. Every run then asks its kernel, untimed, for
CUDA_VISIBLE_DEVICES, so a gpukit kernel that fell back to the CPU (or a
plain one that got a GPU) stops the benchmark; the first gpukit run also
checks that `gpukit leases` shows the kernel's reservation.

Everything Jupyter and IPython read or write (JUPYTER_DATA_DIR, JUPYTER_PATH,
JUPYTER_RUNTIME_DIR, JUPYTER_CONFIG_DIR, IPYTHONDIR, HOME) lives in a temporary
directory: your own kernels and profiles are not touched.

It builds nothing and asserts nothing: it prints numbers and ratios. Run it with
a Python that has jupyter_client and ipykernel; it is also the kernels' Python.

    .venv/bin/python bench/kernel_start.py [--gpukit PATH] [--fake-nvml PATH] [--runs 20]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchlib import default_build, percentile

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCENARIO = ROOT / "tests" / "scenarios" / "h100x8.scn"
TARGET_MS = 50.0  # the limit on what gpukit may add, at the median
GPU_KERNEL = "gk-gpu"
PLAIN_KERNEL = "plain"
CVD_EXPRESSION = "__import__('os').environ.get('CUDA_VISIBLE_DEVICES')"


def isolate(scratch, fake_nvml):
    """Point Jupyter, IPython and gpukit at scratch and the fake NVML. Done in
    os.environ, before jupyter_client is imported, since the kernels inherit
    it."""
    for key in list(os.environ):
        if key.startswith(("CUDA_", "NVIDIA_", "GPUKIT_", "FAKE_", "JUPYTER_", "JPY_",
                           "IPYTHON")):
            del os.environ[key]
    home = scratch / "home"
    dirs = dict(HOME=home, JUPYTER_DATA_DIR=scratch / "jupyter-data",
                JUPYTER_PATH=scratch / "jupyter-path", JUPYTER_RUNTIME_DIR=scratch / "runtime",
                JUPYTER_CONFIG_DIR=scratch / "jupyter-config", IPYTHONDIR=scratch / "ipython",
                GPUKIT_LEASE_DIR=scratch / "leases")
    for key, path in dirs.items():
        if key != "GPUKIT_LEASE_DIR":  # gpukit makes its own, with its own mode
            path.mkdir(parents=True, exist_ok=True)
        os.environ[key] = str(path)
    os.environ.update(GPUKIT_NVML_LIBRARY=str(fake_nvml.resolve()),
                      FAKE_NVML_SCENARIO=str(SCENARIO))


def install_kernels(gpukit, python):
    """gk-gpu through `gpukit kernel install`, and plain: the same spec with
    the bare ipykernel command. Returns the gpukit kernel's argv."""
    result = subprocess.run([str(gpukit), "kernel", "install", "--user", "--name", GPU_KERNEL,
                             "--python", python], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"gpukit kernel install failed ({result.returncode}): "
                         f"{result.stderr.strip()}")
    kernels = Path(os.environ["JUPYTER_DATA_DIR"]) / "kernels"
    spec = json.loads((kernels / GPU_KERNEL / "kernel.json").read_text())
    plain = dict(spec, argv=[python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                 display_name="Python 3 (plain)")
    plain["metadata"] = {k: v for k, v in spec.get("metadata", {}).items() if k != "gpukit"}
    (kernels / PLAIN_KERNEL).mkdir(parents=True, exist_ok=True)
    (kernels / PLAIN_KERNEL / "kernel.json").write_text(json.dumps(plain, indent=1))
    return spec["argv"]


def ask_cvd(client):
    """CUDA_VISIBLE_DEVICES as the kernel sees it (a repr: None when unset)."""
    msg_id = client.execute("", silent=True, user_expressions={"cvd": CVD_EXPRESSION})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        reply = client.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
        if reply["parent_header"].get("msg_id") == msg_id:
            value = reply["content"]["user_expressions"]["cvd"]
            if value.get("status") != "ok":
                raise SystemExit(f"kernel could not evaluate {CVD_EXPRESSION}: {value}")
            return value["data"]["text/plain"]
    raise SystemExit("kernel did not answer execute_request in 30 s")


def lease_of(gpukit, pid):
    """The `gpukit leases --json` record for pid, or None."""
    result = subprocess.run([str(gpukit), "leases", "--json"], capture_output=True, text=True)
    if result.returncode != 0:
        return None
    data = json.loads(result.stdout or "null")

    def records(node):
        if isinstance(node, dict):
            if node.get("pid") == pid:
                yield node
            for value in node.values():
                yield from records(value)
        elif isinstance(node, list):
            for value in node:
                yield from records(value)

    return next(records(data), None)


def start_once(kernel_name, log_path, check_lease=None):
    """One start: (ms to the first kernel_info_reply, ms to wait_for_ready
    returning, CUDA_VISIBLE_DEVICES repr, the lease record when asked)."""
    from jupyter_client.manager import KernelManager

    runtime = Path(os.environ["JUPYTER_RUNTIME_DIR"])
    km = KernelManager(kernel_name=kernel_name,  # where Jupyter Server puts it, not /tmp
                       connection_file=str(runtime / f"kernel-{uuid.uuid4()}.json"))
    with open(log_path, "w") as log:
        start = time.perf_counter()
        km.start_kernel(stdout=log, stderr=log)
        client = km.client()
        first_reply = []
        get_msg = client.shell_channel.get_msg

        def timed_get_msg(*args, **kwargs):  # notes when the first kernel_info_reply lands
            msg = get_msg(*args, **kwargs)
            if not first_reply and msg.get("msg_type") == "kernel_info_reply":
                first_reply.append(time.perf_counter())
            return msg

        client.shell_channel.get_msg = timed_get_msg
        try:
            client.start_channels()
            client.wait_for_ready(timeout=60)
            ready = time.perf_counter()
            client.shell_channel.get_msg = get_msg
            cvd = ask_cvd(client)
            lease = check_lease(km.provisioner.pid) if check_lease else None
        except (RuntimeError, SystemExit) as err:
            log.flush()
            raise SystemExit(f"kernel {kernel_name}: {err}\n--- its output ---\n"
                             f"{Path(log_path).read_text().strip()}") from None
        finally:
            client.stop_channels()
            km.shutdown_kernel(now=False)
    return (first_reply[0] - start) * 1000, (ready - start) * 1000, cvd, lease


def report(title, times, runs):
    print(f"{title}, {runs} runs each, interleaved")
    print(f"    {'kernel':<22} {'median ms':>10} {'p90 ms':>10} {'min ms':>10}")
    for name, values in times.items():
        print(f"    {name:<22} {statistics.median(values):>10.1f} {percentile(values, 90):>10.1f} "
              f"{min(values):>10.1f}")
    base, ours = times[PLAIN_KERNEL], times["gpukit"]
    added = statistics.median(ours) - statistics.median(base)
    paired = statistics.median(o - b for o, b in zip(ours, base))
    print(f"    gpukit adds {added:.1f} ms at the median ({paired:.1f} ms median of the "
          f"run-by-run differences): {statistics.median(ours) / statistics.median(base):.3f}x "
          f"the plain kernel's time")
    return added


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    build = default_build("kernel")
    parser.add_argument("--gpukit", type=Path, default=build / "gpukit",
                        help="the gpukit to measure (default: %(default)s)")
    parser.add_argument("--fake-nvml", type=Path,
                        default=build / "tests" / "fake_nvml" / "libnvidia-ml.so.1",
                        help="the fake libnvidia-ml.so.1 (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=20, help="counted runs of each kernel")
    args = parser.parse_args()
    gpukit = args.gpukit.resolve()
    python = sys.executable  # not resolved: a venv's python must keep its own path

    with tempfile.TemporaryDirectory(prefix="gpukit-bench-kernel-") as scratch:
        scratch = Path(scratch)
        isolate(scratch, args.fake_nvml)
        try:
            import ipykernel
            import jupyter_client
        except ImportError as err:
            raise SystemExit(f"{python} lacks jupyter_client or ipykernel ({err}); run this "
                             f"with a Python that has both, e.g. .venv/bin/python") from None
        argv = install_kernels(gpukit, python)
        print(f"gpukit {gpukit}, fake NVML {args.fake_nvml.resolve()}, 8xH100 scenario, "
              f"{os.cpu_count()} CPUs")
        print(f"Python {python} ({sys.version.split()[0]}), jupyter_client "
              f"{jupyter_client.__version__}, ipykernel {ipykernel.__version__}")
        print(f"gpukit kernel argv: {' '.join(argv)}\n")

        logs = scratch / "logs"
        logs.mkdir()
        contenders = [(PLAIN_KERNEL, PLAIN_KERNEL), ("gpukit", GPU_KERNEL)]
        replies = {name: [] for name, _ in contenders}
        readies = {name: [] for name, _ in contenders}
        seen_cvd = {name: set() for name, _ in contenders}
        for i in range(args.runs + 1):  # run 0 of each is the warm-up
            for name, kernel in contenders:  # ABAB...
                first_gpu_run = name == "gpukit" and i == 0
                reply_ms, ready_ms, cvd, lease = start_once(
                    kernel, logs / f"{name}-{i}.log",
                    (lambda pid: lease_of(gpukit, pid)) if first_gpu_run else None)
                got_gpu = cvd not in ("None", "''")
                if got_gpu != (name == "gpukit"):
                    raise SystemExit(
                        f"{name} kernel run {i} saw CUDA_VISIBLE_DEVICES={cvd}: "
                        f"{'no GPU, the benchmark would not measure the GPU path' if name == 'gpukit' else 'a GPU it should not have'}"
                        f"\n--- its output ---\n{(logs / f'{name}-{i}.log').read_text().strip()}")
                seen_cvd[name].add(cvd)
                if first_gpu_run:
                    print(f"first gpukit kernel: CUDA_VISIBLE_DEVICES={cvd}; `gpukit leases` "
                          + (f"shows its reservation: pid {lease.get('pid')}, "
                             f"{lease.get('state')}, devices {json.dumps(lease.get('devices'))}"
                             if lease else "shows NO reservation for it"))
                if i > 0:
                    replies[name].append(reply_ms)
                    readies[name].append(ready_ms)
        print(f"every gpukit kernel got a GPU: CUDA_VISIBLE_DEVICES in "
              f"{{{', '.join(sorted(seen_cvd['gpukit']))}}}; plain kernels: "
              f"{{{', '.join(sorted(seen_cvd[PLAIN_KERNEL]))}}}\n")

        report("(a) start_kernel() to the first kernel_info_reply", replies, args.runs)
        print()
        added = report("(b) start_kernel() to wait_for_ready() returning", readies, args.runs)
        print(f"\nadded {added:.1f} ms at the median (start to wait_for_ready); "
              f"target <= {TARGET_MS:.0f} ms: {'within' if added <= TARGET_MS else 'OVER'} it")


if __name__ == "__main__":
    main()
