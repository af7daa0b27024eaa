"""`gpukit run`: the environment a job gets, exec semantics (exit status,
signals, pid), leases that end however the job ends, --wait in line, and
hundreds of concurrent launches never sharing a GPU (or, with --share,
never over-committing its memory)."""
import collections
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import GPUKIT, EXIT_OK, EXIT_USAGE, SCENARIOS, run, scenario_env

EXIT_BUSY, EXIT_TIMEOUT = 5, 6
GIB = 1 << 30
UUID = {0: "GPU-2bdfff79-02da-4552-8376-7ccb112dc656",
        3: "GPU-e184d64f-6a57-4c38-bb05-774e6080de8b",
        6: "GPU-41f31581-2ed2-4822-b893-267c7ee27b7b"}
SANITIZE = os.environ.get("GPUKIT_SANITIZE") in ("1", "ON", "TRUE")


@pytest.fixture
def env(tmp_path):
    e = scenario_env(tmp_path, "h100x8")
    e["PATH"] = "/usr/bin:/bin"
    e["GPUKIT_LEASE_DIR"] = str(tmp_path / "leases")
    return e


def gk(args, env, **kw):
    return run(args, env, **kw)


def start(args, env, **kw):
    return subprocess.Popen([str(GPUKIT), *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def leases(env):
    result = gk(["leases", "--json"], env)
    assert result.returncode == EXIT_OK, result.stderr
    return json.loads(result.stdout)


def wait_for(condition, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


def holding(env):
    return [lease for lease in leases(env) if lease["state"] == "holding"]


def test_job_environment(env):
    result = gk(["run", "--min-free", "70G", "--", "sh", "-c",
                 "echo $CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER $NVIDIA_VISIBLE_DEVICES "
                 "${TF_FORCE_GPU_ALLOW_GROWTH:-unset}"], env)
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stdout.split() == [UUID[3], "PCI_BUS_ID", UUID[3], "unset"]
    result = gk(["run", "-n", "2", "--tf-allow-growth", "sh", "-c",
                 "echo $CUDA_VISIBLE_DEVICES $TF_FORCE_GPU_ALLOW_GROWTH"], env)
    assert result.stdout.split() == [f"{UUID[3]},{UUID[6]}", "true"]


def test_env_prints_and_reserves_nothing(env, tmp_path):
    result = gk(["run", "--env", "--tf-allow-growth"], env)
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stdout.splitlines() == [
        f"export CUDA_VISIBLE_DEVICES='{UUID[3]}'",
        "export CUDA_DEVICE_ORDER='PCI_BUS_ID'",
        f"export NVIDIA_VISIBLE_DEVICES='{UUID[3]}'",
        "export TF_FORCE_GPU_ALLOW_GROWTH='true'"]
    assert not (tmp_path / "leases").exists() or not any((tmp_path / "leases").iterdir())


def test_exec_keeps_pid_status_and_signals(env):
    # gpukit becomes the command: same pid, its exit status, its death by signal.
    job = start(["run", "--", "sh", "-c", "echo $$; exec sleep 30"], env)
    assert int(job.stdout.readline()) == job.pid
    job.send_signal(signal.SIGTERM)
    assert job.wait(10) == -signal.SIGTERM
    assert gk(["run", "--", "sh", "-c", "exit 42"], env).returncode == 42
    # SIGINT to the whole process group (what Ctrl-C and Jupyter do) reaches
    # the command, which may handle it and go on.
    job = start(["run", "--", "sh", "-c",
                 "trap 'echo interrupted' INT; echo ready; sleep 1 & wait; echo done"],
                env, start_new_session=True)
    assert job.stdout.readline().strip() == "ready"
    os.killpg(job.pid, signal.SIGINT)
    out, _ = job.communicate(timeout=10)
    assert "interrupted" in out and job.returncode == 0


def test_command_errors(env, tmp_path):
    result = gk(["run", "--", "no-such-command-here"], env)
    assert result.returncode == 127
    assert "command not found" in result.stderr
    script = tmp_path / "not-executable.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    result = gk(["run", "--", str(script)], env)
    assert result.returncode == 126
    assert f"cannot run it: it is not executable (chmod +x {script})" in result.stderr
    result = gk(["run", "--", str(tmp_path)], env)
    assert result.returncode == 126
    assert "cannot run it: it is a directory" in result.stderr
    for args, message in ([["run"], "no command given"],
                          [["run", "--wait=soon", "true"], "not a duration"],
                          [["run", "--wait=0", "true"], "more than 0"],
                          [["run", "--min-free", "lots", "true"], "not a size"],
                          [["run", "--bogus", "true"], "gpukit run: unrecognized option"]):
        result = gk(args, env)
        assert result.returncode == EXIT_USAGE, args
        assert message in result.stderr


def test_options_after_the_command_belong_to_it(env):
    result = gk(["run", "sh", "-c", 'printf "%s %s\\n" "$0" "$1"', "-n", "--min-free"], env)
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stdout.split() == ["-n", "--min-free"]


def test_lease_lives_exactly_as_long_as_the_job(env, tmp_path):
    job = start(["run", "--gpus", "3", "--", "sleep", "30"], env)
    lease = wait_for(lambda: holding(env))[0]
    assert lease["pid"] == job.pid and lease["devices"] == [{"index": 3, "uuid": UUID[3]}]
    assert lease["command"] == "sleep 30" and lease["share"] is False
    # Leased GPUs count as taken, for pick as for run.
    assert gk(["pick"], env).stdout.strip() == UUID[6]
    assert gk(["pick", "--gpus", "3"], env).returncode == EXIT_BUSY
    assert gk(["run", "--gpus", "3", "--", "true"], env).returncode == EXIT_BUSY
    # SIGKILL: no cleanup code runs, and still the GPU is free at once.
    job.send_signal(signal.SIGKILL)
    job.wait(10)
    assert gk(["pick"], env).stdout.strip() == UUID[3]
    assert holding(env) == []
    assert not list((tmp_path / "leases").glob("lease-*")), "the stale lease was not removed"


def test_leases_table(env):
    job = start(["run", "--share", "--min-free", "20G", "--", "sleep", "30"], env)
    try:
        wait_for(lambda: holding(env))
        result = gk(["leases"], env)
        header, row = result.stdout.splitlines()[:2]
        assert header.split() == ["GPU", "PID", "USER", "SINCE", "RESERVED", "MODE", "COMMAND"]
        assert row.split()[:2] == ["pci:3", str(job.pid)]
        assert "20.0 GiB" in row and "shared" in row and row.endswith("sleep 30")
    finally:
        job.kill()
        job.wait()
    assert gk(["leases"], env).stdout.strip() == "No GPU is reserved."


def test_leases_table_names_a_mig_device(tmp_path):
    # A lease on MIG device 1 of GPU 0 is that device, not the whole GPU 0.
    env = scenario_env(tmp_path, "mig")
    result = gk(["run", "--gpus", "0:1", "--", str(GPUKIT), "leases"], env)
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stdout.splitlines()[1].split()[0] == "pci:0:1"


def strings_in(document):
    """Every string in a JSON document."""
    if isinstance(document, str):
        return [document]
    items = document.values() if isinstance(document, dict) else \
        document if isinstance(document, list) else []
    return [s for item in items for s in strings_in(item)]


def test_other_users_text_reaches_the_terminal_printable(env, tmp_path):
    # Command lines, program names and the names of files planted in the
    # shared lease directory are other users' text: every control character
    # becomes '?' on the terminal (no escape sequence, no forged line), as
    # in top; JSON keeps them, escaped.
    evil = "\x1b]0;pwned\x07\x1b[31mEVIL\nFAKE LINE"
    program = tmp_path / "ev\x1b[31mX"
    program.write_bytes(Path("/bin/sleep").read_bytes())
    program.chmod(0o755)
    jobs = [subprocess.Popen(["sh", "-c", "sleep 30 #" + evil]), subprocess.Popen([program, "30"])]
    holder = start(["run", "--gpus", "3", "--", "sh", "-c", "sleep 30 #" + evil], env)
    try:
        text = (SCENARIOS / "h100x8.scn").read_text()
        text = text.replace("pid=4012345", f"pid={jobs[0].pid}")
        text = text.replace("pid=4012346", f"pid={jobs[1].pid}")
        (tmp_path / "evil.scn").write_text(text)
        seen = dict(env, FAKE_NVML_SCENARIO=str(tmp_path / "evil.scn"))
        wait_for(lambda: holding(env))
        (tmp_path / "leases" / "lease-\x1b[2J\nfake").write_text("garbage")
        outputs = {name: gk(args, seen) for name, args in
                   (("ls", ["ls"]), ("overview", []), ("leases", ["leases"]),
                    ("pick", ["pick"]))}
        for name, result in outputs.items():
            for stream in (result.stdout, result.stderr):
                assert "\x1b" not in stream and "\x07" not in stream, (name, stream)
        assert "EVIL?FAKE LINE" in outputs["ls"].stdout
        assert "ev?[31mX" in outputs["overview"].stdout
        assert "#?]0;pwned??[31mEVIL" in outputs["leases"].stdout
        assert "lease-?[2J?fake" in outputs["pick"].stderr
        assert "sleep 30 #" + evil in strings_in(json.loads(gk(["ls", "--json"], seen).stdout))
    finally:
        for job in jobs + [holder]:
            job.kill()
            job.wait()


def test_wait_times_out(env):
    holder = start(["run", "--gpus", "3", "--", "sleep", "30"], env)
    try:
        wait_for(lambda: holding(env))
        began = time.time()
        result = gk(["run", "--gpus", "3", "--wait=1", "--", "true"], env)
        assert result.returncode == EXIT_TIMEOUT
        assert 0.9 < time.time() - began < 15
        assert "waiting for 1 GPU, --gpus 3: wanted 1 device(s), 0 fit; GPU 3: reserved by pid" \
            in result.stderr
        assert "waited 1 s" in result.stderr
    finally:
        holder.kill()
        holder.wait()


def test_wait_cannot_help_an_impossible_request(env):
    began = time.time()
    result = gk(["run", "--min-free", "100G", "--wait", "--", "true"], env)
    assert result.returncode == EXIT_BUSY
    assert "waiting cannot help" in result.stderr
    assert time.time() - began < 10


@pytest.mark.parametrize("args, extra_env, cause", [
    (["-n", "9"], {}, "only 8 could ever fit"),
    (["--min-free=80G"], {}, "less than --min-free 80.0 GiB"),
    ([], {"CUDA_VISIBLE_DEVICES": ""}, "CUDA_VISIBLE_DEVICES hides every GPU"),
    ([], {"CUDA_VISIBLE_DEVICES": "-1"}, "CUDA_VISIBLE_DEVICES hides every GPU"),
    ([], {"CUDA_VISIBLE_DEVICES": "abc"}, '("abc") of CUDA_VISIBLE_DEVICES is not a GPU index'),
    ([], {"CUDA_VISIBLE_DEVICES": "7,7"}, "CUDA_VISIBLE_DEVICES names a device twice"),
    ([], {"CUDA_VISIBLE_DEVICES": "99"}, '("99") of CUDA_VISIBLE_DEVICES is beyond the last'),
    (["--exclude=0,1,2,3,4,5,6,7"], {}, "--exclude 0,1,2,3,4,5,6,7 leaves none"),
    (["--gpus=3"], {"CUDA_VISIBLE_DEVICES": "1,2"}, "--gpus 3 names none"),
])
def test_impossible_request_says_so_without_wait(env, args, extra_env, cause):
    """Without --wait, a request no state of the machine could satisfy is
    not sent to --wait: it says waiting cannot help, and why."""
    for wait in ([], ["--wait"]):
        result = gk(["run", *args, *wait, "--", "true"], {**env, **extra_env})
        assert result.returncode == EXIT_BUSY
        assert cause in result.stderr
        assert "waiting cannot help" in result.stderr
        assert "hint: --wait" not in result.stderr


def test_cpu_fallback_when_no_gpu_is_usable_here(env):
    """--cpu-fallback runs on the CPU when this process may use no GPU:
    CUDA_VISIBLE_DEVICES hides them all, or --exclude leaves none; GPUs that
    are too few or busy still fail."""
    show = ["--", "sh", "-c", "echo CVD=[$CUDA_VISIBLE_DEVICES]"]
    for args, extra_env in ((["--cpu-fallback"], {"CUDA_VISIBLE_DEVICES": ""}),
                            (["--cpu-fallback"], {"CUDA_VISIBLE_DEVICES": "99"}),
                            (["--cpu-fallback", "--exclude=0,1,2,3,4,5,6,7"], {})):
        result = gk(["run", *args, *show], {**env, **extra_env})
        assert result.returncode == EXIT_OK, result.stderr
        assert result.stdout == "CVD=[]\n"
        assert "no usable GPU, so running on the CPU" in result.stderr
    result = gk(["run", "--cpu-fallback", "-n", "9", *show], env)
    assert result.returncode == EXIT_BUSY and result.stdout == ""


def test_busy_gpus_suggest_wait(env):
    holder = start(["run", "--gpus", "3", "--", "sleep", "30"], env)
    try:
        wait_for(lambda: holding(env))
        result = gk(["run", "--gpus", "3", "--", "true"], env)
        assert result.returncode == EXIT_BUSY
        assert "reserved by pid" in result.stderr
        assert "hint: --wait waits in line until they are free" in result.stderr
        assert "waiting cannot help" not in result.stderr
    finally:
        holder.kill()
        holder.wait()


def test_waiters_are_served_first_come_first_served(env, tmp_path):
    log = tmp_path / "order.log"
    holder = start(["run", "--gpus", "3", "--", "sleep", "30"], env)
    wait_for(lambda: holding(env))
    waiters = []
    for name in "ABCD":
        waiters.append(start(["run", "--gpus", "3", "--wait=60", "--", "sh", "-c",
                              f"echo {name} >> {log}; sleep 0.1"], env))
        wait_for(lambda: len(leases(env)) == len(waiters) + 1)
    queue = [lease for lease in leases(env) if lease["state"] == "waiting"]
    assert [lease["pid"] for lease in queue] == [w.pid for w in waiters]
    assert queue[0]["request"] == "1 GPU, --gpus 3"
    assert "4 job(s) waiting" in gk(["leases"], env).stdout
    holder.kill()
    holder.wait()
    for w in waiters:
        assert w.wait(30) == 0, w.stderr.read()
    assert log.read_text().split() == list("ABCD")


def test_a_killed_waiter_leaves_the_line(env, tmp_path):
    holder = start(["run", "--gpus", "3", "--", "sleep", "30"], env)
    wait_for(lambda: holding(env))
    first = start(["run", "--gpus", "3", "--wait", "--", "true"], env)
    wait_for(lambda: len(leases(env)) == 2)
    second = start(["run", "--gpus", "3", "--wait", "--", "true"], env)
    wait_for(lambda: len(leases(env)) == 3)
    first.kill()
    first.wait()
    holder.kill()
    holder.wait()
    assert second.wait(30) == 0


def launch_many(env, tmp_path, count, extra):
    """Starts `count` jobs at once that log when they start and end on which
    GPU; returns {uuid: [(time, +1/-1)]} and the max live leases per GPU seen
    by a sampler running `gpukit leases` meanwhile."""
    log = tmp_path / "jobs.log"
    job = (f'echo "$CUDA_VISIBLE_DEVICES $(date +%s%N) 1" >> {log}; sleep 0.2; '
           f'echo "$CUDA_VISIBLE_DEVICES $(date +%s%N) -1" >> {log}')
    jobs = [start(["run", *extra, "--wait=120", "--", "sh", "-c", job], env)
            for _ in range(count)]
    samples = []
    while any(j.poll() is None for j in jobs):
        samples.append(holding(env))
        time.sleep(0.05)
    failures = [(j.returncode, j.stderr.read()) for j in jobs if j.returncode != 0]
    assert not failures, failures[:3]
    events = collections.defaultdict(list)
    for line in log.read_text().splitlines():
        uuid, when, delta = line.split()
        events[uuid].append((int(when), int(delta)))
    assert sum(len(e) for e in events.values()) == 2 * count
    return events, samples


def peak(events):
    """The most jobs running at once on one GPU (an end before a start at the
    same instant)."""
    depth = best = 0
    for _, delta in sorted(events):
        depth += delta
        best = max(best, depth)
    return best


# The job of a `gpukit run -n 2` (or a gpukit kernel's notebook) runs
# `gpukit run` again: each inner run takes one of the job's own GPUs, as
# Slurm's steps share out their job's, and never waits for the job itself.
JOB_OF_JOBS = """
import json, subprocess, sys
gpukit = sys.argv[1]
hold = "echo $CUDA_VISIBLE_DEVICES; read line"
inner = [subprocess.Popen([gpukit, "run", "--", "sh", "-c", hold], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) for _ in range(2)]
got = [job.stdout.readline().strip() for job in inner]
third = subprocess.run([gpukit, "run", "--", "true"], capture_output=True, text=True)
for job in inner:
    job.communicate("")
print(json.dumps({"inner": got, "third": [third.returncode, third.stderr]}))
"""


def test_runs_inside_a_job_share_out_its_own_gpus(env, tmp_path):
    script = tmp_path / "job.py"
    script.write_text(JOB_OF_JOBS)
    result = gk(["run", "-n", "2", "--", sys.executable, str(script), str(GPUKIT)], env)
    assert result.returncode == EXIT_OK, result.stderr
    seen = json.loads(result.stdout)
    assert sorted(seen["inner"]) == sorted([UUID[3], UUID[6]]), seen
    # Its siblings' leases still count.
    code, message = seen["third"]
    assert code == EXIT_BUSY and "reserved by pid" in message, message
    # Naming a job's lease is not enough to share its GPUs: only the job's
    # own processes may.
    job = subprocess.Popen([str(GPUKIT), "run", "--gpus", "3", "--", "sh", "-c",
                            "echo $GPUKIT_LEASE; read line"], env=env, text=True,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    name = job.stdout.readline().strip()
    outsider = dict(env, GPUKIT_LEASE=name, CUDA_VISIBLE_DEVICES=UUID[3])
    result = gk(["run", "--", "true"], outsider)
    assert result.returncode == EXIT_BUSY and "reserved by pid" in result.stderr
    job.communicate("", timeout=10)


@pytest.mark.skipif(SANITIZE, reason="timing-heavy; covered by the plain build")
def test_concurrent_launches_never_share_a_gpu(env, tmp_path):
    events, samples = launch_many(env, tmp_path, 200, [])
    assert len(events) == 8
    assert all(peak(e) == 1 for e in events.values()), {u: peak(e) for u, e in events.items()}
    for sample in samples:
        uuids = [d["uuid"] for lease in sample for d in lease["devices"]]
        assert len(uuids) == len(set(uuids)), sample


@pytest.mark.skipif(SANITIZE, reason="timing-heavy; covered by the plain build")
def test_concurrent_shared_launches_never_overcommit(env, tmp_path):
    # Free GiB per GPU 0-7: 40.4 40.4 8.8 79.1 64.1 64.1 71.7 20.5, so 20 GiB
    # each fits 2 2 0 3 3 3 3 1 times.
    capacity = {"GPU-2bdfff79": 2, "GPU-040ab24f": 2, "GPU-e184d64f": 3, "GPU-20130455": 3,
                "GPU-41d110c0": 3, "GPU-41f31581": 3, "GPU-7de8eeb7": 1}
    events, samples = launch_many(env, tmp_path, 120, ["--share", "--min-free", "20G"])
    peaks = {uuid[:12]: peak(e) for uuid, e in events.items()}
    assert set(peaks) <= set(capacity), peaks
    assert all(peaks[u] <= capacity[u] for u in peaks), peaks
    assert max(peaks.values()) >= 2, "no GPU was ever shared"
    for sample in samples:
        per_gpu = collections.Counter(d["uuid"][:12] for lease in sample
                                      for d in lease["devices"])
        assert all(n <= capacity[u] for u, n in per_gpu.items()), per_gpu


def test_share_counts_what_the_job_already_holds(env, tmp_path):
    """A shared lease sets aside its --min-free less what its own processes
    already use on the GPU (NVML lists them), so memory is not counted twice."""
    def free_of_gpu3(scenario):
        e = dict(env, FAKE_NVML_SCENARIO=str(scenario))
        data = json.loads(gk(["pick", "--share", "--format", "json"], e).stdout)
        return {c["index"]: c["memory.free"] for c in data["candidates"]}[3]

    base = SCENARIOS / "h100x8.scn"
    before = free_of_gpu3(base)
    job = start(["run", "--share", "--min-free", "30G", "--gpus", "3", "--", "sleep", "30"], env)
    try:
        wait_for(lambda: holding(env))
        assert free_of_gpu3(base) == before - 30 * 1024
        # Now NVML shows the job using 10 GiB there.
        lines = base.read_text().splitlines()
        gpu3 = next(i for i, line in enumerate(lines) if UUID[3] in line)
        lines[gpu3] = lines[gpu3].replace("mem_used=0", "mem_used=10240")
        lines.insert(gpu3 + 1, f"proc type=compute pid={job.pid} mem=10240")
        busy = tmp_path / "busy.scn"
        busy.write_text("\n".join(lines) + "\n")
        assert free_of_gpu3(busy) == before - 10240 - 20 * 1024
    finally:
        job.kill()
        job.wait()
