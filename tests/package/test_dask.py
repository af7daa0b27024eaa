"""gpukit.dask: real `distributed` clusters on loopback against the fake
NVML's 8xH100: workers on distinct GPUs holding leases for their lives
(kill -9 one: its GPU is free again and the nanny's replacement reserves
one), the GPU resource routing tasks, the CPU fallback and its refusal, and
`dask worker --preload gpukit.dask` with selection options."""
import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings

import pytest

from conftest import GPUKIT_CLI, SCENARIOS, child_env

distributed = pytest.importorskip("distributed")
import dask  # noqa: E402
import gpukit  # noqa: E402
import gpukit.dask  # noqa: E402



def scenario_uuids(name="h100x8"):
    return [line.split("uuid=")[1].split()[0]
            for line in (SCENARIOS / f"{name}.scn").read_text().splitlines()
            if line.startswith("gpu ")]


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """This process and the workers it starts see the fake 8xH100 and a
    private lease directory (workers inherit os.environ)."""
    (tmp_path / "empty-path").mkdir()
    env = child_env(tmp_path, "h100x8")
    for key in ("GPUKIT_NVML_LIBRARY", "FAKE_NVML_SCENARIO", "GPUKIT_LEASE_DIR",
                "GPUKIT_CACHE_DIR", "PYTHONPATH"):
        monkeypatch.setenv(key, env[key])
    for key in [k for k in os.environ if k.startswith("CUDA_")]:
        monkeypatch.delenv(key)
    return env


def leases(env):
    result = subprocess.run([str(GPUKIT_CLI), "leases", "--json"], env=env, capture_output=True,
                            text=True, timeout=30, check=True)
    return [lease for lease in json.loads(result.stdout) if lease["state"] == "holding"]


def wait_for(condition, timeout=60, what=""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_workers_hold_their_own_gpus_for_their_lives(machine):
    uuids = scenario_uuids()
    with gpukit.dask.GPUCluster(n_workers=3, min_free="20G") as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(3)
        seen = client.run(lambda: (os.getpid(), os.environ.get("CUDA_VISIBLE_DEVICES"),
                                   os.environ.get("GPUKIT_LEASE")))
        pids = {pid for pid, _, _ in seen.values()}
        visible = [v for _, v, _ in seen.values()]
        assert len(set(visible)) == 3 and set(visible) <= set(uuids)
        held = leases(machine)
        assert {lease["pid"] for lease in held} == pids
        assert {lease["devices"][0]["uuid"] for lease in held} == set(visible)
        # Only GPUs with 20 GiB free: not 2 (72011 of 81559 MiB used) or 7.
        assert uuids[2] not in visible and uuids[7] not in visible

        # the GPU resource routes tasks, through submit and through annotate
        info = client.scheduler_info()["workers"]
        assert all(w["resources"] == {"GPU": 1} for w in info.values())
        assert client.submit(lambda: os.environ["CUDA_VISIBLE_DEVICES"],
                             resources={"GPU": 1}).result() in visible
        import dask.array as da
        with dask.annotate(resources={"GPU": 1}):
            total = da.ones((100, 100), chunks=(50, 50)).sum()
        assert total.compute() == 10000

        # kill -9 one worker: its lease goes with it, and the nanny's new
        # worker process reserves a GPU of its own.
        victim = next(iter(pids))
        os.kill(victim, signal.SIGKILL)
        wait_for(lambda: victim not in {lease["pid"] for lease in leases(machine)},
                 what="the killed worker's lease to go")
        held = wait_for(lambda: len(leases(machine)) == 3 and leases(machine),
                        what="the replacement's lease")
        assert victim not in {lease["pid"] for lease in held}
        client.wait_for_workers(3)
        after = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"))
        assert len(set(after.values())) == 3
    wait_for(lambda: leases(machine) == [], what="every lease to go with the cluster")


def test_cpu_workers_without_a_gpu_or_refusal(tmp_path, monkeypatch):
    (tmp_path / "empty-path").mkdir()
    env = child_env(tmp_path, None)
    for key in ("GPUKIT_NVML_LIBRARY", "GPUKIT_LEASE_DIR", "PYTHONPATH"):
        monkeypatch.setenv(key, env[key])
    monkeypatch.delenv("FAKE_NVML_SCENARIO", raising=False)
    with pytest.raises(gpukit.NoGPUError, match="no GPU"):
        gpukit.dask.GPUCluster(require_gpu=True)
    with pytest.warns(RuntimeWarning, match="work on the CPU"):
        cluster = gpukit.dask.GPUCluster(n_workers=1)
    with cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(1)
        (info,) = client.scheduler_info()["workers"].values()
        assert info["resources"] == {}
        assert client.submit(sum, [1, 2, 3]).result() == 6
        assert client.submit(lambda: os.environ.get("CUDA_VISIBLE_DEVICES")).result() == ""


def test_more_workers_than_gpus_that_fit(machine):
    """n_workers=3 where two GPUs have 70 GiB free: the third worker works
    on the CPU, says so, and sees no GPU (an unset CUDA_VISIBLE_DEVICES
    would be every GPU, other jobs' reserved ones too)."""
    with pytest.warns(RuntimeWarning, match="only 2 fit.*the other 1 work on the CPU"):
        cluster = gpukit.dask.GPUCluster(n_workers=3, min_free="70G")
    with cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(3)
        seen = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"))
        uuids = scenario_uuids()
        assert sorted(seen.values()) == sorted(["", uuids[3], uuids[6]])
    with pytest.raises(gpukit.NoGPUError, match="only 2 fit.*require_gpu"):
        gpukit.dask.GPUCluster(n_workers=3, min_free="70G", require_gpu=True)


def test_bad_keywords(machine):
    with pytest.raises(TypeError, match="min_fre"):
        gpukit.dask.GPUCluster(n_workers=1, min_fre="20G")
    with pytest.raises(ValueError, match="gpus_per_worker"):
        gpukit.dask.GPUCluster(n_workers=1, gpus_per_worker=0)
    with pytest.raises(TypeError, match="gpus_per_worker must be an int"):
        gpukit.dask.GPUCluster(n_workers=1, gpus_per_worker=1.5)
    # a bad wait fails here, as reserve(wait=...) would, not in the workers' logs
    with pytest.raises(ValueError, match="wait"):
        gpukit.dask.GPUCluster(n_workers=1, wait="soon")


def test_workers_wait_in_line_for_busy_gpus(machine):
    """With wait=, a cluster whose GPUs are all held elsewhere says nothing
    of the CPU: like reserve(wait=...), it returns once its worker, waiting
    in line, has its GPUs, here when their holder ends."""
    holder = subprocess.Popen([str(GPUKIT_CLI), "run", "-n", "8", "--", "sleep", "600"],
                              env=machine)

    def end_holder_once_the_worker_waits():
        def waiting():
            result = subprocess.run([str(GPUKIT_CLI), "leases", "--json"], env=machine,
                                    capture_output=True, text=True, timeout=30)
            return any(lease["state"] == "waiting" for lease in json.loads(result.stdout or "[]"))
        wait_for(waiting, what="the worker waiting in line")
        holder.kill()

    ender = threading.Thread(target=end_holder_once_the_worker_waits)
    try:
        wait_for(lambda: len(leases(machine)) == 1, what="the holder's lease")
        ender.start()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            cluster = gpukit.dask.GPUCluster(n_workers=1, wait="2m", gpus_per_worker=4)
        with cluster, distributed.Client(cluster) as client:
            (seen,) = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES")).values()
            assert len(seen.split(",")) == 4 and set(seen.split(",")) <= set(scenario_uuids())
    finally:
        ender.join(timeout=120)
        holder.kill()
        holder.wait()


def test_dask_worker_preload_on_any_node(machine):
    """`dask worker ... --preload gpukit.dask --min-free 70G`, as a Slurm or
    ssh deployment starts it: the worker reserves the one GPU with 70 GiB
    free (GPU 3) and advertises it."""
    uuids = scenario_uuids()
    with distributed.LocalCluster(n_workers=0, host="127.0.0.1",
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        worker = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address,
             "--nthreads", "1", "--no-dashboard", "--preload", "gpukit.dask",
             "--min-free", "70G"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True)
        try:
            client.wait_for_workers(1, timeout=120)
            (visible,) = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES")).values()
            assert visible == uuids[3]
            (info,) = client.scheduler_info()["workers"].values()
            assert info["resources"] == {"GPU": 1}
            assert [lease["devices"][0]["uuid"] for lease in leases(machine)] == [uuids[3]]
        finally:
            worker.terminate()
            worker.wait(timeout=60)
    assert leases(machine) == []


CLUSTER_IN_A_JOB = """
import json, os, gpukit.dask
from dask.distributed import Client
with gpukit.dask.GPUCluster(n_workers=2, silence_logs=40) as cluster, Client(cluster) as client:
    workers = sorted(client.run(lambda: os.environ["CUDA_VISIBLE_DEVICES"]).values())
print(json.dumps({"job": os.environ["CUDA_VISIBLE_DEVICES"], "workers": workers}))
"""


@pytest.mark.parametrize("allocation", [None, [1, 4, 6]], ids=["machine", "slurm-like"])
def test_a_cluster_started_inside_a_gpukit_job(machine, allocation):
    """A notebook on a gpukit kernel (here `gpukit run`) starts a cluster:
    the workers reserve GPUs of their own, never the job's, and only among
    the GPUs the job was given from outside (a Slurm-style allocation in
    CUDA_VISIBLE_DEVICES)."""
    uuids = scenario_uuids()
    env = dict(os.environ)
    if allocation:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(uuids[i] for i in allocation)
    result = subprocess.run([str(GPUKIT_CLI), "run", "--", sys.executable, "-c",
                             CLUSTER_IN_A_JOB], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    everyone = [seen["job"], *seen["workers"]]
    assert len(set(everyone)) == 3, seen
    if allocation:
        assert set(everyone) == {uuids[i] for i in allocation}
