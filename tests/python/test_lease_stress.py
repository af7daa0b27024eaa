"""Many `gpukit run` jobs at once against the 8-GPU fake, with random --wait
limits, random SIGKILLs of running jobs and of launchers waiting in line, and
a rogue process taking and dropping the lease directory's lock:

- no GPU is ever held by two jobs: each job takes an flock on a file named
  after each of its GPUs for its whole life, and records it when it cannot
  (the kernel, not gpukit, is the judge);
- nobody waits past its deadline (its --wait limit, or the 5 s a command
  without one tries for the lock), give or take MARGIN seconds;
- no lease outlives its job: once every job has ended, `gpukit leases` lists
  nothing and no lease or waiter record is left in the directory, let alone
  one whose write lock is still held.

The seed is printed (and GPUKIT_STRESS_SEED repeats a run)."""
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

from conftest import GPUKIT, run, scenario_env

JOBS = 200  # about 15 s on 2 cores, in the sanitizer build too
PATIENCE = 5.0  # GK_LEASE_LOCK_PATIENCE, include/gpukit/lease.h
MARGIN = 4.0    # what a loaded 2-core machine may add to a deadline
EXIT_BUSY, EXIT_TIMEOUT = 5, 6

# The job: an flock on gpu-<UUID> for each of its GPUs, held until it ends.
# The files go on high descriptors: when a killed job's last process exits,
# the kernel releases them before the lease (on descriptor 4 or so), so the
# next job on the GPU cannot find its file still locked; -w 0.5 covers a
# kernel that releases in the other order.
JOB = r"""
results=$1 id=$2 seconds=$3
: > "$results/started-$id"
fd=8
for uuid in $(echo "$CUDA_VISIBLE_DEVICES" | tr ',' ' '); do
    eval "exec $fd>\"\$results/gpu-\$uuid\""
    flock -w 0.5 "$fd" || echo "$uuid" >> "$results/double-$id"
    fd=$((fd + 1))
done
exec sleep "$seconds"
"""

# Takes the directory's lock for a while and drops it, until stdin closes;
# once, it keeps it longer than PATIENCE, so that commands without a --wait
# limit give up while jobs come and go.
ROGUE = """
import fcntl, os, random, select, sys, time
rng = random.Random(int(sys.argv[2]))
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
long_hold_at = time.monotonic() + 3
while True:
    fcntl.flock(fd, fcntl.LOCK_EX)
    hold = rng.uniform(0.01, 0.3)
    if long_hold_at and time.monotonic() >= long_hold_at:
        hold, long_hold_at = 6.0, None
    done = select.select([sys.stdin], [], [], hold)[0]
    fcntl.flock(fd, fcntl.LOCK_UN)
    if done or select.select([sys.stdin], [], [], rng.uniform(0.05, 0.5))[0]:
        break
"""


def write_lock_held(path):
    """Whether some process holds a write lock on `path` (as a live lease's
    job does); lockf's probe conflicts with it."""
    import fcntl
    try:
        fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
    except FileNotFoundError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def test_stress(tmp_path):
    seed = int(os.environ.get("GPUKIT_STRESS_SEED", time.time_ns() % 1_000_000))
    print(f"GPUKIT_STRESS_SEED={seed}")
    rng = random.Random(seed)
    leases = tmp_path / "leases"
    leases.mkdir()
    leases.chmod(0o1777)
    results = tmp_path / "results"
    results.mkdir()
    job = tmp_path / "job.sh"
    job.write_text(textwrap.dedent(JOB))
    env = scenario_env(tmp_path, "h100x8")
    env["GPUKIT_LEASE_DIR"] = str(leases)
    env["PATH"] = "/usr/bin:/bin"  # sh, flock, sleep

    rogue = subprocess.Popen([sys.executable, "-c", ROGUE, str(leases), str(seed)],
                             stdin=subprocess.PIPE)
    launched = {}  # id -> (process, deadline or None, launch time, wall launch time)
    ended = {}     # id -> monotonic time its end was seen
    killed = set()
    try:
        # Arrivals in bursts, so that many pick at the same moment.
        plan = sorted((rng.randrange(10) * 0.8, i) for i in range(JOBS))
        start = time.monotonic()
        while len(ended) < JOBS:
            now = time.monotonic()
            while plan and now - start >= plan[0][0]:
                _, i = plan.pop(0)
                kind = rng.random()
                wait = (None if kind < 0.2 else        # no --wait: fails at once if busy
                        0.0 if kind < 0.35 else        # --wait without limit
                        rng.uniform(0.5, 8.0))         # --wait=T
                args = ["run", "-n", "2" if rng.random() < 0.2 else "1"]
                if wait is not None:
                    args.append("--wait" if wait == 0.0 else f"--wait={wait:.2f}")
                args += ["--", "sh", str(job), str(results), str(i),
                         f"{rng.uniform(0.2, 2.0):.2f}"]
                deadline = PATIENCE if wait is None else (wait or None)
                with open(results / f"stderr-{i}", "w") as err:
                    process = subprocess.Popen([str(GPUKIT), *args], env=env,
                                               stdin=subprocess.DEVNULL,
                                               stdout=subprocess.DEVNULL, stderr=err,
                                               start_new_session=True)
                launched[i] = (process, deadline, time.monotonic(), time.time())
            for i, (process, _, _, _) in launched.items():
                if i not in ended and process.poll() is not None:
                    ended[i] = time.monotonic()
            alive = [i for i in launched if i not in ended]
            if alive and rng.random() < 0.03:  # a job, or a launcher in line
                victim = rng.choice(alive)
                try:
                    os.killpg(launched[victim][0].pid, signal.SIGKILL)
                    killed.add(victim)
                except ProcessLookupError:
                    pass
            assert time.monotonic() - start < 120, "the jobs never finished"
            time.sleep(0.01)
    finally:
        rogue.stdin.close()
        rogue.wait(timeout=30)
        for process, _, _, _ in launched.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    outcomes = {}
    for i, (process, deadline, launched_at, launched_wall) in sorted(launched.items()):
        code = process.returncode
        outcomes[code] = outcomes.get(code, 0) + 1
        stderr = (results / f"stderr-{i}").read_text()
        assert not (results / f"double-{i}").exists(), \
            f"job {i} got a GPU another job held: {(results / f'double-{i}').read_text()}"
        if i in killed:
            continue
        assert code in (0, EXIT_BUSY, EXIT_TIMEOUT), (i, code, stderr)
        started = results / f"started-{i}"
        if deadline is None:
            continue
        if started.exists():  # leased and started in time
            waited = started.stat().st_mtime - launched_wall
        else:                 # gave up
            assert code in (EXIT_BUSY, EXIT_TIMEOUT), (i, code, stderr)
            waited = ended[i] - launched_at
        assert waited <= deadline + MARGIN, \
            f"job {i} waited {waited:.1f} s, past its deadline of {deadline:.1f} s: {stderr}"
    print(f"{JOBS} jobs, {len(killed)} killed; exit statuses {outcomes}")

    # Every job has ended. A killed job's other processes (a flock(1) it was
    # running) may still be exiting: held records must be gone soon after.
    give_up = time.monotonic() + 30
    while any(write_lock_held(path) for path in leases.iterdir()):
        assert time.monotonic() < give_up, \
            [path.name for path in leases.iterdir() if write_lock_held(path)]
        time.sleep(0.05)
    listed = run(["leases", "--json"], env)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []
    assert sorted(p.name for p in leases.iterdir()) == [], \
        "records of ended jobs are left (this user's gpukit removes its own)"
