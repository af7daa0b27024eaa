"""`gpukit run --offload` on fake Optimus laptops: PRIME render offload sets
its variables and execs; bumblebee keeps the daemon connection for the job's
whole life with gpukit as the job's parent, which passes signals on, outlives
an interrupt of the process group and exits with the job's status."""
import os
import signal
import subprocess
import sys
import time

from conftest import GPUKIT, EXIT_DRIVER, EXIT_OK, scenario_env
from test_optimus import FAKE_BUMBLEBEE, daemon, fake_machine  # noqa: F401 (a fixture)


def laptop_env(tmp_path, machine, **extra):
    env = scenario_env(tmp_path, "laptop")
    env.update(machine, PATH="/usr/bin:/bin", GPUKIT_LEASE_DIR=str(tmp_path / "leases"),
               **extra)
    return env


def start(args, env, **kw):
    return subprocess.Popen([str(GPUKIT), "run", "--offload", *args], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def events(log):
    return log.read_text().splitlines()


def wait_until(condition, timeout=10):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_prime_offload_sets_its_variables_and_execs(tmp_path):
    env = laptop_env(tmp_path, fake_machine(tmp_path, status="suspended"))
    job = start(["--", "sh", "-c", "echo $$ $__NV_PRIME_RENDER_OFFLOAD "
                 "$__GLX_VENDOR_LIBRARY_NAME $__VK_LAYER_NV_optimus $CUDA_VISIBLE_DEVICES"], env)
    out, err = job.communicate(timeout=30)
    assert job.returncode == EXIT_OK, err
    pid, prime, glx, vulkan, visible = out.split()
    assert int(pid) == job.pid  # exec: the job is gpukit's own process
    assert (prime, glx, vulkan) == ("1", "nvidia", "NVIDIA_only")
    assert visible.startswith("GPU-")


def test_without_optimus_offload_runs_as_usual(tmp_path):
    env = laptop_env(tmp_path, fake_machine(tmp_path, igpu=None))
    job = start(["--", "sh", "-c", "echo ${__NV_PRIME_RENDER_OFFLOAD:-none}"], env)
    out, err = job.communicate(timeout=30)
    assert job.returncode == EXIT_OK, err
    assert out.strip() == "none"


def bumblebee_env(tmp_path, daemon):  # noqa: F811
    path, _ = daemon
    machine = fake_machine(tmp_path, driver=None, status="active", control="on",
                           bbswitch="OFF")
    return laptop_env(tmp_path, machine, GPUKIT_BUMBLEBEE_SOCKET=str(path))


def test_bumblebee_holds_the_gpu_for_the_job(tmp_path, daemon):  # noqa: F811
    _, log = daemon
    env = bumblebee_env(tmp_path, daemon)
    job = start(["--", "sh", "-c", "echo started; read line < /dev/null; sleep 0.5; exit 42"],
                env)
    assert job.stdout.readline().strip() == "started"
    assert events(log)[1:4] == ["connect 1", "recv 1 Connect NoX", "card on"]
    assert "disconnect 1" not in events(log)
    assert job.wait(30) == 42
    # The daemon logs the disconnect when it notices it, which may be a
    # moment after gpukit has exited.
    wait_until(lambda: events(log)[-2:] == ["disconnect 1", "card off"])
    # The reservation ended with the job, without waiting for a later cleanup.
    assert not list((tmp_path / "leases").glob("lease-*"))


def test_bumblebee_interrupt_reaches_the_job_and_gpukit_survives(tmp_path, daemon):  # noqa: F811
    _, log = daemon
    env = bumblebee_env(tmp_path, daemon)
    script = ("trap 'echo interrupted $$' INT; echo ready $$; "
              "sleep 1 & wait; echo still-running; exit 3")
    job = start(["--", "sh", "-c", script], env, start_new_session=True)
    ready, child = job.stdout.readline().split()
    assert ready == "ready" and int(child) != job.pid  # gpukit is the parent here
    os.killpg(job.pid, signal.SIGINT)  # what Ctrl-C and Jupyter's interrupt do
    out, err = job.communicate(timeout=30)
    assert out.split("\n")[:2] == [f"interrupted {child}", "still-running"], (out, err)
    assert job.returncode == 3
    # The connection (and so the GPU) stayed up through the interrupt.
    wait_until(lambda: events(log)[-2:] == ["disconnect 1", "card off"])
    assert events(log).count("card on") == 1


def test_bumblebee_forwards_term_and_reports_the_signal(tmp_path, daemon):  # noqa: F811
    env = bumblebee_env(tmp_path, daemon)
    job = start(["--", "sh", "-c", "echo ready; exec sleep 30"], env)
    assert job.stdout.readline().strip() == "ready"
    job.send_signal(signal.SIGTERM)  # to gpukit only
    assert job.wait(30) == 128 + signal.SIGTERM


def test_bumblebee_refusal_stops_before_the_job(tmp_path):
    log = tmp_path / "refusing.log"
    path = tmp_path / "refusing.socket"
    daemon_process = subprocess.Popen([sys.executable, str(FAKE_BUMBLEBEE), str(path), "--log",
                                       str(log), "--refuse"])
    try:
        wait_until(lambda: log.exists() and "listening" in log.read_text())
        machine = fake_machine(tmp_path, driver=None, status="active", control="on",
                               bbswitch="OFF")
        env = laptop_env(tmp_path, machine, GPUKIT_BUMBLEBEE_SOCKET=str(path))
        marker = tmp_path / "ran"
        job = start(["--", "touch", str(marker)], env)
        _, err = job.communicate(timeout=30)
        assert job.returncode == EXIT_DRIVER
        assert "Could not enable discrete graphics card" in err or "refused" in err, err
        assert not marker.exists()
    finally:
        daemon_process.terminate()
        daemon_process.wait(10)
