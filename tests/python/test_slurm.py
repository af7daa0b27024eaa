"""gpukit and Slurm: `gpukit slurm gres` against the fake NVML, the prolog
and epilog records and what pick, run and leases make of them, Slurm's
relative GPU numbering; then a real Slurm (Debian's slurm-wlm and munge,
started here on loopback with a 4-GPU gres over the fake 8xH100): jobs see
only their GPUs, four tasks of one job land on four GPUs, and the prolog's
records appear and vanish with the jobs."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from serve_helpers import serving
from test_serve import samples
from conftest import EXIT_OK, EXIT_USAGE, GPUKIT, FAKE_NVML, SCENARIOS, parse_scenario, run, \
    scenario_env

UUIDS = [g["uuid"] for g in parse_scenario("h100x8")[1]]


def test_gres_conf_from_nvml(tmp_path):
    result = run(["slurm", "gres", "--node", "gpu-node-1"], scenario_env(tmp_path, "h100x8"))
    assert result.returncode == EXIT_OK, result.stderr
    lines = result.stdout.splitlines()
    assert "# slurm.conf: NodeName=gpu-node-1 Gres=gpu:nvidia_h100_80gb_hbm3:8 ..." in lines
    assert [l for l in lines if not l.startswith("#")] == [
        f"Name=gpu Type=nvidia_h100_80gb_hbm3 File=/dev/nvidia{i}" for i in range(8)]


def test_gres_conf_with_mig_and_minor_numbers(tmp_path):
    scenario = tmp_path / "mig.scn"
    scenario.write_text((SCENARIOS / "mig.scn").read_text().replace(" mig=1", " mig=1 minor=4", 1))
    # the driver's capability files of GPU 0's instances (minor 4)
    caps = tmp_path / "proc" / "driver" / "nvidia" / "capabilities" / "gpu4" / "mig"
    _, gpus = parse_scenario("mig")
    for n, mig in enumerate(gpus[0]["migs"]):
        gi, ci = mig["gi"], mig["ci"]
        (caps / f"gi{gi}" / f"ci{ci}").mkdir(parents=True, exist_ok=True)
        (caps / f"gi{gi}" / "access").write_text(f"DeviceFileMinor: {100 + n}\nDeviceFileMode: 292\n")
        (caps / f"gi{gi}" / f"ci{ci}" / "access").write_text(f"DeviceFileMinor: {200 + n}\n")
    env = scenario_env(tmp_path, str(scenario))
    env["GPUKIT_PROC_ROOT"] = str(tmp_path / "proc")
    result = run(["slurm", "gres"], env)
    assert result.returncode == EXIT_OK, result.stderr
    entries = [l for l in result.stdout.splitlines() if not l.startswith("#")]
    profiles = [m["name"].split("MIG ")[1] for m in gpus[0]["migs"]]
    assert entries == [
        f"Name=gpu Type={p} MultipleFiles=/dev/nvidia4,/dev/nvidia-caps/nvidia-cap{100 + n},"
        f"/dev/nvidia-caps/nvidia-cap{200 + n}" for n, p in enumerate(profiles)
    ] + ["Name=gpu Type=nvidia_a100-sxm4-40gb File=/dev/nvidia1"]
    assert run(["slurm", "gres"], scenario_env(tmp_path, "empty")).returncode == 3


def slurm_env(tmp_path, **job):
    env = scenario_env(tmp_path, "h100x8")
    env["GPUKIT_SLURM_DIR"] = str(tmp_path / "slurm")
    env.update(job)
    return env


def test_prolog_epilog_records_and_who_sees_them(tmp_path):
    job = dict(SLURM_JOB_ID="42", SLURM_JOB_GPUS="1,3", SLURM_JOB_USER="ann",
               SLURM_JOB_UID="1000")
    assert run(["slurm", "prolog"], slurm_env(tmp_path, **job)).returncode == EXIT_OK
    records = tmp_path / "slurm"
    # DCGM-exporter's job mapping: a file per GPU with its jobs' ids
    assert (records / "1").read_text() == "42\n" and (records / "3").read_text() == "42\n"
    assert not (records / "0").exists()
    env = slurm_env(tmp_path)
    leases = json.loads(run(["leases", "--json"], env).stdout)
    job42 = next(l for l in leases if l["file"] == "slurm-42")
    assert job42["slurm"] and job42["user"] == "ann" and job42["state"] == "holding"
    assert [d["uuid"] for d in job42["devices"]] == [UUIDS[1], UUIDS[3]]
    # gpukit outside the job keeps off Slurm's GPUs, and says whose they are
    picked = run(["pick", "--count", "8"], env)
    assert picked.returncode == 5 and "reserved by Slurm job 42 (ann)" in picked.stderr
    assert UUIDS[1] not in run(["pick", "--count", "6"], env).stdout
    # inside job 42 (a cgroup-constrained step numbers its GPUs 0, 1): its
    # own two GPUs, no others
    inside = slurm_env(tmp_path, SLURM_JOB_ID="42", SLURM_STEP_GPUS="1,3",
                       CUDA_VISIBLE_DEVICES="0,1")
    chosen = run(["pick", "--count", "2"], inside)
    assert chosen.returncode == EXIT_OK, chosen.stderr
    assert set(chosen.stdout.strip().split(",")) == {UUIDS[1], UUIDS[3]}
    assert run(["pick", "--count", "3"], inside).returncode == 5

    # gpukit serve labels the jobs' GPUs as dcgm-exporter does (hpc_job)
    with serving(env) as server:
        text = server.get("/metrics")[2]
    jobs = {}
    for labels, _ in samples(text)["DCGM_FI_DEV_GPU_UTIL"]:
        jobs[int(labels["gpu"])] = labels.get("hpc_job")
    assert jobs == {0: None, 1: "42", 2: None, 3: "42", 4: None, 5: None, 6: None, 7: None}

    # a second job sharing GPU 3 (a shard)
    assert run(["slurm", "prolog"], slurm_env(tmp_path, SLURM_JOB_ID="43", SLURM_JOB_GPUS="3",
                                              SLURM_JOB_USER="bob")).returncode == EXIT_OK
    assert (records / "3").read_text() == "42\n43\n"


    assert run(["slurm", "epilog"], slurm_env(tmp_path, SLURM_JOB_ID="42")).returncode == 0
    assert not (records / "1").exists() and (records / "3").read_text() == "43\n"
    assert [l["file"] for l in json.loads(run(["leases", "--json"], env).stdout)] == ["slurm-43"]
    # an epilog for a job never recorded, or a second time: nothing to do
    assert run(["slurm", "epilog"], slurm_env(tmp_path, SLURM_JOB_ID="42")).returncode == 0

    bad = run(["slurm", "prolog"], slurm_env(tmp_path))
    assert bad.returncode == EXIT_USAGE and "SLURM_JOB_ID" in bad.stderr
    bad = run(["slurm", "prolog"], slurm_env(tmp_path, SLURM_JOB_ID="../x", SLURM_JOB_GPUS="0"))
    assert bad.returncode == EXIT_USAGE and "not a Slurm job id" in bad.stderr
    assert run(["slurm", "nope"], env).returncode == EXIT_USAGE
    # a job without GPUs: nothing recorded
    assert run(["slurm", "prolog"], slurm_env(tmp_path, SLURM_JOB_ID="44")).returncode == 0
    assert not (records / ".job-44").exists()


# --- a real Slurm on loopback ---

def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Slurm:
    """munged, slurmctld and slurmd of our own, with a 4-GPU gres whose
    devices are character devices made here, and gpukit's prolog and
    epilog."""

    def __init__(self, env):
        if os.geteuid() != 0:
            pytest.skip("a real Slurm needs root here (slurmd runs jobs as their users)")
        for program in ("munged", "slurmctld", "slurmd", "srun", "sbatch"):
            if not shutil.which(program, path="/usr/sbin:/usr/bin"):
                pytest.skip(f"{program} is not installed (apt-get install slurm-wlm munge)")
        self.root = Path(tempfile.mkdtemp(prefix="gpukit-slurm-"))
        self.root.chmod(0o755)
        self.env = env
        for name in ("etc", "state", "spool", "log", "run", "munge", "dev", "records"):
            (self.root / name).mkdir()
        for i in range(4):
            os.mknod(self.root / "dev" / f"nvidia{i}", 0o600 | 0o020000, os.makedev(1, 3))
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.socket = self.root / "munge" / "munge.socket"
        subprocess.run(["/usr/sbin/munged", f"--key-file={key}", f"--socket={self.socket}",
                        f"--pid-file={self.root / 'munge' / 'munged.pid'}",
                        f"--log-file={self.root / 'munge' / 'munged.log'}",
                        f"--seed-file={self.root / 'munge' / 'seed'}", "--force"],
                       check=True, capture_output=True, timeout=30)
        host = socket.gethostname().split(".")[0]
        hook = ("#!/bin/sh\nexec env " +
                " ".join(f"{k}={v}" for k, v in env.items()
                         if k in ("GPUKIT_NVML_LIBRARY", "FAKE_NVML_SCENARIO", "GPUKIT_SLURM_DIR")) +
                f" {GPUKIT} slurm %s\n")
        for action in ("prolog", "epilog"):
            script = self.root / "etc" / f"{action}.sh"
            script.write_text(hook % action)
            script.chmod(0o755)
        r = self.root
        (r / "etc" / "slurm.conf").write_text(f"""ClusterName=gpukit
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
AuthInfo=socket={self.socket}
CredType=cred/munge
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/run/slurmctld.pid
SlurmdPidFile={r}/run/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
Prolog={r}/etc/prolog.sh
Epilog={r}/etc/epilog.sh
NodeName={host} NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 Gres=gpu:h100:4 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
""")
        (r / "etc" / "gres.conf").write_text(f"Name=gpu Type=h100 File={r}/dev/nvidia[0-3]\n")
        self.env["SLURM_CONF"] = str(r / "etc" / "slurm.conf")
        subprocess.run(["/usr/sbin/slurmctld", "-f", self.env["SLURM_CONF"]], env=self.env,
                       check=True, capture_output=True, timeout=60)
        subprocess.run(["/usr/sbin/slurmd", "-f", self.env["SLURM_CONF"]], env=self.env,
                       check=True, capture_output=True, timeout=60)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%t"], env=self.env, capture_output=True,
                                   text=True).stdout.strip()
            if state == "idle":
                return
            time.sleep(0.2)
        logs = "".join((r / "log" / n).read_text()[-1500:] for n in ("slurmctld.log", "slurmd.log")
                       if (r / "log" / n).exists())
        self.stop()
        pytest.skip(f"the Slurm daemons did not come up here: {logs}")

    def run(self, args, timeout=120):
        return subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def stop(self):
        subprocess.run(["scontrol", "shutdown"], env=self.env, capture_output=True, timeout=30)
        for pidfile in ("run/slurmd.pid", "run/slurmctld.pid", "munge/munged.pid"):
            path = self.root / pidfile
            try:
                pid = int(path.read_text())
                deadline = time.monotonic() + 20
                os.kill(pid, 15)
                while time.monotonic() < deadline:
                    os.kill(pid, 0)
                    time.sleep(0.1)
            except (OSError, ValueError):
                pass
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def slurm(tmp_path):
    env = scenario_env(tmp_path, "h100x8")
    env["PATH"] = "/usr/bin:/bin:/usr/sbin:/sbin"
    env["GPUKIT_SLURM_DIR"] = str(tmp_path / "records")
    cluster = Slurm(env)
    try:
        yield cluster
    finally:
        cluster.stop()


def test_jobs_under_a_real_slurm(slurm):
    # A job of two GPUs sees those two and no others.
    seen = slurm.run(["srun", "--gres=gpu:2", str(GPUKIT), "info", "--json"])
    assert seen.returncode == 0, seen.stderr
    info = json.loads(seen.stdout)
    assert info["cuda_device_count"] == 2
    assert [d["uuid"] for d in info["cuda_devices"]] == UUIDS[:2]

    # Four tasks of one 4-GPU job, each through gpukit run, all running at
    # once (each waits until the four have their GPUs): four GPUs.
    met = slurm.root / "met"
    met.mkdir()
    barrier = (f"echo $CUDA_VISIBLE_DEVICES; touch {met}/$SLURM_PROCID; n=0; "
               f"while [ $(ls {met} | wc -l) -lt 4 ] && [ $n -lt 600 ]; do sleep 0.1; "
               "n=$((n+1)); done")
    tasks = slurm.run(["srun", "-n", "4", "--overcommit", "--gres=gpu:4", str(GPUKIT), "run",
                       "--", "sh", "-c", barrier])
    assert tasks.returncode == 0, tasks.stderr
    assert sorted(tasks.stdout.split()) == sorted(UUIDS[:4]), (tasks.stdout, tasks.stderr)

    # A batch job: the prolog's record is there while it runs (gpukit sees
    # a Slurm job on its GPU), and gone after.
    records = Path(slurm.env["GPUKIT_SLURM_DIR"])
    # its output goes to the null device, not slurm-N.out in the tests folder
    submitted = slurm.run(["sbatch", "--parsable", "--gres=gpu:1", "--output=/dev/null",
                           "--wrap", "sleep 60"])
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.strip().split(";")[0]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (records / f".job-{job}").exists():
        time.sleep(0.1)
    assert (records / f".job-{job}").exists()
    leases = json.loads(slurm.run([str(GPUKIT), "leases", "--json"]).stdout)
    (held,) = [l for l in leases if l["file"] == f"slurm-{job}"]
    assert held["slurm"] and held["devices"][0]["uuid"] in UUIDS[:4]
    gpu_file = records / str(held["devices"][0]["index"])
    assert job in gpu_file.read_text().split()
    slurm.run(["scancel", job])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (records / f".job-{job}").exists():
        time.sleep(0.1)
    assert not (records / f".job-{job}").exists()
    assert not gpu_file.exists()
