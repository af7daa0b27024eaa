"""`gpukit kernel`: Jupyter kernelspecs that start the kernel through
`gpukit run`, exercised with the real jupyter_client and ipykernel.

Each test has its own Jupyter world in tmp_path (HOME, IPYTHONDIR,
JUPYTER_DATA_DIR, JUPYTER_RUNTIME_DIR, JUPYTER_CONFIG_DIR), its own lease
directory, and, for the fake NVML, its own copy of the scenario: each gpukit
process reads the file afresh, so rewriting the copy between kernel starts
changes what the next pick sees. jupyter_client reads its directories and the
kernel's environment from os.environ, so the whole environment of the test
process is swapped (monkeypatch) before a kernel starts.

Kernels are never installed outside tmp_path: every install names --user
(JUPYTER_DATA_DIR) or --prefix, except as an unprivileged user, where the
default falls back to --user."""
import json
import os
import re
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("ipykernel")
pytest.importorskip("jupyter_client")
from jupyter_client.manager import KernelManager  # noqa: E402

from conftest import (EXIT_FAILURE, EXIT_NO_GPU, EXIT_OK, EXIT_USAGE, GPUKIT,  # noqa: E402
                      SCENARIOS, base_env, parse_scenario, run, scenario_env)
from test_optimus import daemon, fake_machine  # noqa: E402,F401 (a fixture)

EXIT_BUSY, EXIT_PYTHON = 5, 8
VENV_BIN = Path(sys.executable).parent  # the tests' interpreter: jupyter_client, ipykernel
JUPYTER = VENV_BIN / "jupyter"
UUIDS = [gpu["uuid"] for gpu in parse_scenario("h100x8")[1]]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SPEC_FILES = {"kernel.json", "logo-32x32.png", "logo-64x64.png", "logo-svg.svg"}
SETPRIV = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")
NOBODY = 65534
SANITIZE = os.environ.get("GPUKIT_SANITIZE") in ("1", "ON", "TRUE")

if not JUPYTER.exists():
    pytest.skip(f"no jupyter command next to {sys.executable}", allow_module_level=True)

needs_users = pytest.mark.skipif(os.geteuid() != 0 or SETPRIV is None,
                                 reason="acting as another user needs root and setpriv")


def interpreter_of(script):
    """The Python a venv's console script runs (its #! line)."""
    first = Path(script).read_text().splitlines()[0]
    assert first.startswith("#!/"), f"{script}: unexpected first line {first!r}"
    return first[2:].strip()


VENV_PYTHON = interpreter_of(JUPYTER)  # what gpukit should find through `jupyter`


def wait_for(condition, timeout=20, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what} not met within {timeout} s"
        time.sleep(0.02)


def shell_script(path, body):
    """An executable /bin/sh script at `path` (parents made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def python_wrapper(path):
    """A script that runs the tests' Python (which has ipykernel)."""
    return shell_script(path, f'exec "{sys.executable}" "$@"\n')


def png_size(path):
    data = Path(path).read_bytes()
    assert data.startswith(PNG_SIGNATURE), path
    assert data[12:16] == b"IHDR", path
    return struct.unpack(">II", data[16:24])


class Kernel:
    """One kernel started by jupyter_client from a spec, with its stderr in a
    file."""

    def __init__(self, km, err):
        self.km, self.kc, self.err = km, None, err
        self.process = None
        # Open for the kernel's whole life: a restart passes it on again.
        self.err_file = open(err, "a")

    def connect(self, timeout=60):
        if self.kc is not None:
            self.kc.stop_channels()
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=timeout)
        self.process = self.km.provisioner.process
        return self

    def stderr(self):
        return self.err.read_text()

    def execute(self, code, timeout=30):
        """Runs `code`; returns (reply content, what it printed)."""
        out = []

        def hook(msg):
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])

        # Right after a cell fails (a KeyboardInterrupt included), ipykernel
        # aborts requests that reach it before its stop-on-error window
        # closes: such a request never ran, so it is sent again.
        for _ in range(20):
            reply = self.kc.execute_interactive(code, output_hook=hook, timeout=timeout)
            if reply["content"]["status"] != "aborted":
                break
        return reply["content"], "".join(out)

    def facts(self):
        """CUDA_VISIBLE_DEVICES (None when unset) and the pid, from inside."""
        content, out = self.execute(
            "import json, os; print(json.dumps([os.environ.get('CUDA_VISIBLE_DEVICES'), "
            "os.getpid(), os.environ.get('CUDA_DEVICE_ORDER')]))")
        assert content["status"] == "ok", content
        visible, pid, order = json.loads(out)
        if visible:
            assert order == "PCI_BUS_ID"
        return visible, pid

    def close(self):
        try:
            if self.kc is not None:
                self.kc.stop_channels()
        except Exception:  # noqa: BLE001 (teardown goes on)
            pass
        try:
            if self.km.has_kernel:
                self.km.shutdown_kernel(now=True)
            else:
                self.km.cleanup_resources()
        except Exception:  # noqa: BLE001
            pass
        self.err_file.close()


class Jupyter:
    """A private Jupyter setup, a scenario copy and helpers."""

    def __init__(self, tmp_path, monkeypatch, scenario="h100x8", extra=None):
        self.tmp = tmp_path
        self.monkeypatch = monkeypatch
        self.scenario = None
        if scenario is None:
            env = base_env(tmp_path)  # no NVML at all
        else:
            self.scenario = tmp_path / "gpus.scn"
            shutil.copy(SCENARIOS / f"{scenario}.scn", self.scenario)
            env = scenario_env(tmp_path, self.scenario)
        for key in [k for k in env if k.startswith(("JUPYTER", "IPYTHON", "XDG_", "CONDA_"))
                    or k in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")]:
            del env[key]
        dirs = {name: tmp_path / "jupyter" / name
                for name in ("home", "ipython", "data", "runtime", "config")}
        for path in dirs.values():
            path.mkdir(parents=True, exist_ok=True)
        env.update(PATH=f"{VENV_BIN}:/usr/bin:/bin", HOME=str(dirs["home"]),
                   IPYTHONDIR=str(dirs["ipython"]), JUPYTER_DATA_DIR=str(dirs["data"]),
                   JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
                   JUPYTER_CONFIG_DIR=str(dirs["config"]),
                   GPUKIT_LEASE_DIR=str(tmp_path / "leases"))
        env.update(extra or {})
        self.env = env
        self.kernels_dir = dirs["data"] / "kernels"
        self.kernels = []

    # --- gpukit ---

    def gk(self, *args, env=None, timeout=60):
        return run([str(a) for a in args], env or self.env, timeout=timeout)

    def install(self, *args, where=("--user",), env=None):
        return self.gk("kernel", "install", *where, *args, env=env)

    def spec(self, name="python3-gpu", kernels_dir=None):
        return json.loads(((kernels_dir or self.kernels_dir) / name / "kernel.json").read_text())

    def leases(self):
        result = self.gk("leases", "--json")
        assert result.returncode == EXIT_OK, result.stderr
        return json.loads(result.stdout)

    def holding(self):
        return [lease for lease in self.leases() if lease["state"] == "holding"]

    def pick(self):
        result = self.gk("pick", "--format", "uuid")
        assert result.returncode == EXIT_OK, result.stderr
        return result.stdout.strip()

    def set_memory_used(self, used):
        """Rewrites the scenario copy: {GPU index: MiB used}. Atomic, so a
        gpukit reading it meanwhile sees the old or the new file."""
        lines = self.scenario.read_text().splitlines()
        for index, mib in used.items():
            at = next(i for i, line in enumerate(lines) if UUIDS[index] in line)
            lines[at], n = re.subn(r"\bmem_used=\d+", f"mem_used={mib}", lines[at])
            assert n == 1
        new = self.scenario.with_suffix(".new")
        new.write_text("\n".join(lines) + "\n")
        os.replace(new, self.scenario)

    def jupyter_kernelspecs(self):
        """What Jupyter itself finds: `jupyter kernelspec list --json`."""
        result = subprocess.run([str(JUPYTER), "kernelspec", "list", "--json"], env=self.env,
                                capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["kernelspecs"]

    # --- kernels ---

    def apply(self):
        """Makes os.environ this setup's environment, for jupyter_client."""
        for key in list(os.environ):
            if key not in self.env:
                self.monkeypatch.delenv(key)
        for key, value in self.env.items():
            self.monkeypatch.setenv(key, value)

    def launch(self, name="python3-gpu", apply=True):
        """Starts the kernel process without waiting for it to answer."""
        if apply:
            self.apply()
        km = KernelManager(kernel_name=name)
        # The spec comes from this test's directories, never from elsewhere.
        resource_dir = Path(km.kernel_spec.resource_dir)
        assert self.tmp in resource_dir.parents, resource_dir
        err = self.tmp / f"kernel-{len(self.kernels)}.stderr"
        kernel = Kernel(km, err)
        self.kernels.append(kernel)
        km.start_kernel(stderr=kernel.err_file, stdout=subprocess.DEVNULL)
        kernel.process = km.provisioner.process
        return kernel

    def start(self, name="python3-gpu", apply=True, timeout=60):
        return self.launch(name, apply).connect(timeout)

    def close(self):
        for kernel in self.kernels:
            kernel.close()


@pytest.fixture
def make_jupyter(tmp_path, monkeypatch):
    made = []

    def make(scenario="h100x8", **extra):
        setup = Jupyter(tmp_path, monkeypatch, scenario, extra)
        made.append(setup)
        return setup

    yield make
    for setup in made:
        setup.close()


@pytest.fixture
def jup(make_jupyter):
    return make_jupyter()


def hidden_entries(directory):
    return [p.name for p in Path(directory).iterdir() if p.name.startswith(".")]


# --- install: the kernelspec ---

def test_install_writes_a_kernelspec_jupyter_finds(jup):
    result = jup.install("--min-free", "20G", "--order=free-ratio", "-n", "1", "--gpu", "3",
                         "--tf-allow-growth")
    assert result.returncode == EXIT_OK, result.stderr
    directory = jup.kernels_dir / "python3-gpu"
    assert f"in {directory}" in result.stdout
    assert f"Python:  {VENV_PYTHON} (ipykernel " in result.stdout
    assert "warning" not in result.stderr, "Jupyter does look in JUPYTER_DATA_DIR/kernels"

    assert {p.name for p in directory.iterdir()} == SPEC_FILES
    raw = (directory / "kernel.json").read_bytes()
    assert raw.endswith(b"}\n")
    spec = json.loads(raw)
    options = ["--min-free=20G", "--order=free-ratio", "--count=1", "--gpus=3",
               "--tf-allow-growth", "--cpu-fallback"]
    assert spec["argv"] == [str(GPUKIT), "run", *options, "--", VENV_PYTHON, "-m",
                            "ipykernel_launcher", "-f", "{connection_file}"]
    # The Python of the jupyter command on PATH: the tests' own venv.
    assert Path(VENV_PYTHON).parent == VENV_BIN and os.path.samefile(VENV_PYTHON,
                                                                       sys.executable)
    assert spec["display_name"] == "Python 3 [GPU]"
    assert spec["language"] == "python"
    assert spec["interrupt_mode"] == "signal"
    # Its name in the kernel's environment: how the monitor tells kernels apart.
    assert spec["env"] == {"GPUKIT_KERNEL": "python3-gpu"}
    gpukit = spec["metadata"]["gpukit"]
    assert set(gpukit) == {"version", "python", "selection", "run_options"}
    assert gpukit["version"] == run(["--version"], jup.env).stdout.split()[-1]
    assert gpukit["python"] == VENV_PYTHON
    assert gpukit["run_options"] == options
    assert "--min-free 20.0 GiB" in gpukit["selection"]
    assert "the CPU when there is no GPU" in gpukit["selection"]

    # A system-wide kernel must be readable by everyone.
    assert stat.S_IMODE(directory.stat().st_mode) == 0o755
    for name in SPEC_FILES:
        assert stat.S_IMODE((directory / name).stat().st_mode) == 0o644, name
    assert png_size(directory / "logo-32x32.png") == (32, 32)
    assert png_size(directory / "logo-64x64.png") == (64, 64)
    assert b"<svg" in (directory / "logo-svg.svg").read_bytes()

    found = jup.jupyter_kernelspecs()
    assert found["python3-gpu"]["resource_dir"] == str(directory)
    assert found["python3-gpu"]["spec"]["argv"] == spec["argv"]
    assert found["python3-gpu"]["spec"]["display_name"] == "Python 3 [GPU]"


# --- the kernel's life: GPU, lease, interrupt, restart, shutdown ---

def test_kernel_runs_on_the_gpu_gpukit_picks(jup):
    assert jup.install().returncode == EXIT_OK
    expected = jup.pick()
    assert expected == UUIDS[3]  # the freest of h100x8
    kernel = jup.start()
    visible, pid = kernel.facts()
    assert visible == expected
    assert pid == kernel.process.pid, "gpukit run execs the kernel: one process"
    content, out = kernel.execute("import os; print(os.environ.get('GPUKIT_KERNEL'))")
    assert out.strip() == "python3-gpu", "Jupyter passed the kernelspec's env"
    leases = jup.holding()
    assert len(leases) == 1
    assert leases[0]["pid"] == pid
    assert leases[0]["devices"] == [{"index": 3, "uuid": expected}]
    assert "ipykernel_launcher" in leases[0]["command"]
    # The reservation counts: the next pick goes elsewhere.
    assert jup.pick() == UUIDS[6]


def test_interrupt_keeps_the_kernel_and_its_gpu(jup):
    assert jup.install().returncode == EXIT_OK
    kernel = jup.start()
    visible, pid = kernel.facts()
    kc = kernel.kc
    msg_id = kc.execute("import time; print('sleeping', flush=True); time.sleep(30)")

    def started_sleeping():
        msg = kc.get_iopub_msg(timeout=10)
        return (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream"
                and "sleeping" in msg["content"]["text"])

    wait_for(started_sleeping, timeout=20, what="the cell printing 'sleeping'")
    began = time.monotonic()
    kernel.km.interrupt_kernel()
    while True:
        reply = kc.get_shell_msg(timeout=10)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    assert time.monotonic() - began < 10
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"

    assert kernel.km.is_alive()
    content, out = kernel.execute("print(1 + 1)")
    assert content["status"] == "ok" and out.strip() == "2"
    assert kernel.facts() == (visible, pid)
    assert [(lease["pid"], lease["devices"][0]["uuid"]) for lease in jup.holding()] == \
        [(pid, visible)]


def test_restart_picks_again(jup):
    assert jup.install().returncode == EXIT_OK
    kernel = jup.start()
    visible, first_pid = kernel.facts()
    assert visible == UUIDS[3]

    # GPU 3 fills up and GPU 5 empties: a restart must pick anew.
    jup.set_memory_used({3: 70000, 5: 0})
    assert jup.pick() == UUIDS[5]
    kernel.kc.stop_channels()
    kernel.kc = None
    kernel.km.restart_kernel(now=False)
    kernel.connect()
    visible, second_pid = kernel.facts()
    assert visible == UUIDS[5]
    assert second_pid != first_pid and second_pid == kernel.km.provisioner.process.pid
    assert [(lease["pid"], lease["devices"][0]["index"]) for lease in jup.holding()] == \
        [(second_pid, 5)]

    # A hard restart (the old kernel SIGKILLed) picks again too.
    jup.set_memory_used({5: 70000, 7: 0})
    kernel.kc.stop_channels()
    kernel.kc = None
    kernel.km.restart_kernel(now=True)
    kernel.connect()
    visible, third_pid = kernel.facts()
    assert visible == UUIDS[7]
    assert third_pid not in (first_pid, second_pid)
    assert [(lease["pid"], lease["devices"][0]["index"]) for lease in jup.holding()] == \
        [(third_pid, 7)]


def test_shutdown_and_kill_release_the_gpu(jup):
    assert jup.install().returncode == EXIT_OK
    kernel = jup.start()
    _, pid = kernel.facts()
    assert [lease["pid"] for lease in jup.holding()] == [pid]
    kernel.kc.stop_channels()
    kernel.kc = None
    kernel.km.shutdown_kernel(restart=False)
    assert not kernel.km.is_alive()
    assert jup.holding() == []
    assert jup.pick() == UUIDS[3]

    kernel = jup.start()
    visible, pid = kernel.facts()
    assert visible == UUIDS[3] and [lease["pid"] for lease in jup.holding()] == [pid]
    os.kill(pid, signal.SIGKILL)  # not reaped here: the lock goes with the process
    wait_for(lambda: jup.holding() == [], what="the killed kernel's lease to end")
    assert jup.pick() == UUIDS[3]


def test_two_kernels_started_at_once_get_different_gpus(jup):
    assert jup.install().returncode == EXIT_OK
    jup.apply()
    barrier = threading.Barrier(2)
    started, errors = [None, None], []

    def start(slot):
        try:
            barrier.wait(timeout=10)
            started[slot] = jup.start(apply=False)
        except BaseException as error:  # noqa: BLE001 (reported below)
            errors.append(error)

    threads = [threading.Thread(target=start, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)
    assert not errors, errors
    assert all(started), "a kernel did not start within 90 s"
    facts = [kernel.facts() for kernel in started]
    assert {visible for visible, _ in facts} == {UUIDS[3], UUIDS[6]}
    leases = jup.holding()
    assert sorted(lease["pid"] for lease in leases) == sorted(pid for _, pid in facts)
    by_pid = {lease["pid"]: lease["devices"][0]["uuid"] for lease in leases}
    assert all(by_pid[pid] == visible for visible, pid in facts)


# --- without a GPU, with busy GPUs ---

def test_without_a_gpu_the_kernel_runs_on_the_cpu(make_jupyter):
    jup = make_jupyter(scenario=None)
    assert jup.install().returncode == EXIT_OK
    kernel = jup.start()
    visible, pid = kernel.facts()
    assert visible == "", "CUDA programs must see no device"
    assert pid == kernel.process.pid
    stderr = kernel.stderr()
    assert stderr.count("running on the CPU") == 1, stderr
    assert "gpukit run: no usable GPU" in stderr
    assert jup.holding() == []

    # --require-gpu: the kernel does not start, and says why.
    assert jup.install("--name", "strict", "--require-gpu").returncode == EXIT_OK
    spec = jup.spec("strict")
    assert "--cpu-fallback" not in spec["argv"]
    assert "fails without a GPU" in spec["metadata"]["gpukit"]["selection"]
    strict = jup.launch("strict")
    assert strict.process.wait(timeout=30) == EXIT_NO_GPU
    assert "no GPU" in strict.stderr() and "running on the CPU" not in strict.stderr()
    assert not strict.km.is_alive()
    client = strict.km.client()
    client.start_channels()
    try:
        with pytest.raises(RuntimeError):
            client.wait_for_ready(timeout=10)
    finally:
        client.stop_channels()


def test_busy_gpus_fail_or_wait(jup):
    assert jup.install().returncode == EXIT_OK
    assert jup.install("--name", "waiting", "--wait").returncode == EXIT_OK
    assert "--wait" in jup.spec("waiting")["argv"]
    holder = subprocess.Popen([str(GPUKIT), "run", "-n", "8", "--", "sleep", "60"],
                              env=jup.env, stdin=subprocess.DEVNULL)
    try:
        wait_for(lambda: [lease["pid"] for lease in jup.holding()] == [holder.pid],
                 what="the holder's lease")
        kernel = jup.launch()
        assert kernel.process.wait(timeout=30) == EXIT_BUSY
        assert "not enough GPUs" in kernel.stderr()
        assert "running on the CPU" not in kernel.stderr()

        waiting = jup.launch("waiting")
        pid = waiting.process.pid
        wait_for(lambda: any(lease["state"] == "waiting" and lease["pid"] == pid
                             for lease in jup.leases()), what="the kernel waiting in line")
        assert waiting.process.poll() is None
        holder.kill()
        holder.wait(timeout=10)
        waiting.connect(timeout=60)
        visible, kernel_pid = waiting.facts()
        assert kernel_pid == pid and visible == UUIDS[3]
        assert [(lease["pid"], lease["devices"][0]["uuid"]) for lease in jup.holding()] == \
            [(pid, UUIDS[3])]
    finally:
        holder.kill()
        holder.wait(timeout=10)


# --- names and locations ---

def test_names_and_locations(jup, tmp_path):
    for bad in (["--name", "my kernel"], ["--name", ""], ["--name="], ["--name", "a/b"],
                ["--name", ".."], ["--name", "."], ["--name", "ké"], ["--name", ".hidden"],
                ["--name", "x" * 201]):
        result = jup.install(*bad)
        assert result.returncode == EXIT_USAGE, (bad, result.stderr)
        assert "a kernel name is 1 to 200 ASCII letters" in result.stderr, bad
    assert not jup.kernels_dir.exists() or not any(jup.kernels_dir.iterdir())

    result = jup.install("--name", "MyGPU")
    assert result.returncode == EXIT_OK, result.stderr
    assert sorted(p.name for p in jup.kernels_dir.iterdir()) == ["mygpu"]
    assert "mygpu" in jup.jupyter_kernelspecs()

    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    result = jup.install(where=("--prefix", blocker / "sub"))
    assert result.returncode == EXIT_FAILURE
    assert str(blocker) in result.stderr and "not a directory" in result.stderr

    for where in (("--user", "--prefix", tmp_path / "x"), ("--sys-prefix", "--user"),
                  ("--prefix", tmp_path / "x", "--sys-prefix")):
        result = jup.install(where=where)
        assert result.returncode == EXIT_USAGE, where
        assert "only one of --user, --sys-prefix and --prefix" in result.stderr
    assert not (tmp_path / "x").exists()

    # A prefix Jupyter does not search: installed, with how to make it found.
    elsewhere = tmp_path / "elsewhere"
    result = jup.install(where=("--prefix", elsewhere))
    assert result.returncode == EXIT_OK, result.stderr
    kernels = elsewhere / "share" / "jupyter" / "kernels"
    assert (kernels / "python3-gpu" / "kernel.json").exists()
    assert f"Jupyter does not look in {kernels}" in result.stderr
    assert f"add {elsewhere / 'share' / 'jupyter'} to JUPYTER_PATH" in result.stderr
    env = dict(jup.env, JUPYTER_PATH=str(elsewhere / "share" / "jupyter"))
    result = jup.install("--name", "again", where=("--prefix", elsewhere), env=env)
    assert result.returncode == EXIT_OK and "warning" not in result.stderr, result.stderr


@pytest.fixture
def shared():
    """A directory other users can reach (tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="gpukit-kernel-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@needs_users
def test_unprivileged_user_locations(jup, shared):
    data, home, root_owned = shared / "data", shared / "home", shared / "root-owned"
    for path in (data, home, root_owned):
        path.mkdir()
    os.chown(data, NOBODY, NOBODY)
    os.chown(home, NOBODY, NOBODY)
    # The tests' own Python may live where nobody can reach it (a pyenv under
    # /root): a stand-in answers gpukit's probe as a Python with ipykernel
    # would (prefix, base prefix, user data dir, ipykernel version).
    python = shell_script(shared / "bin" / "python3",
                          "printf '%s\\n' /opt/fake-python /opt/fake-python '' 7.0.0\n")
    env = dict(jup.env, HOME=str(home), JUPYTER_DATA_DIR=str(data),
               IPYTHONDIR=str(home / ".ipython"), PATH=f"{shared / 'bin'}:/usr/bin:/bin")
    for key in ("JUPYTER_RUNTIME_DIR", "JUPYTER_CONFIG_DIR"):
        env.pop(key)

    def install_as_nobody(*args):
        return subprocess.run([SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}",
                               "--clear-groups", str(GPUKIT), "kernel", "install",
                               "--python", str(python), *args],
                              env=env, capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, cwd=shared)

    result = install_as_nobody()
    if SANITIZE and "Sanitizer" in result.stderr and result.returncode != EXIT_OK:
        pytest.skip("the sanitizer runtime does not run as nobody here")
    assert result.returncode == EXIT_OK, result.stderr
    assert "/usr/local/share/jupyter/kernels is not writable; installing for this user only " \
           "(--user)" in result.stderr
    installed = data / "kernels" / "python3-gpu" / "kernel.json"
    assert installed.stat().st_uid == NOBODY
    assert json.loads(installed.read_text())["metadata"]["gpukit"]["python"] == str(python)
    assert not Path("/usr/local/share/jupyter/kernels/python3-gpu").exists() or \
        Path("/usr/local/share/jupyter/kernels/python3-gpu").stat().st_uid != NOBODY

    result = install_as_nobody("--prefix", str(root_owned))
    assert result.returncode == EXIT_FAILURE
    assert str(root_owned) in result.stderr and "Permission denied" in result.stderr
    assert "hint: use --user" in result.stderr
    assert list(root_owned.iterdir()) == []

    env["JUPYTER_DATA_DIR"] = str(root_owned / "data")
    result = install_as_nobody("--user")
    assert result.returncode == EXIT_FAILURE
    assert "hint: check the permissions of your Jupyter data directory" in result.stderr
    assert list(root_owned.iterdir()) == []


def test_paths_with_spaces_quotes_and_non_ascii(jup, tmp_path):
    wrapper = python_wrapper(tmp_path / "dir with spaces é" / 'py"thon \'x\'')
    display = 'Python "GPU" \\ back\\slash – Ünïcødé ☃ 日本 \'q\''
    result = jup.install("--name", "odd", "--python", wrapper, "--display-name", display)
    assert result.returncode == EXIT_OK, result.stderr
    raw = (jup.kernels_dir / "odd" / "kernel.json").read_bytes()
    spec = json.loads(raw.decode("utf-8"))
    assert spec["display_name"] == display
    assert spec["argv"][spec["argv"].index("--") + 1] == str(wrapper)
    assert spec["metadata"]["gpukit"]["python"] == str(wrapper)
    assert jup.jupyter_kernelspecs()["odd"]["spec"]["display_name"] == display

    kernel = jup.start("odd")
    visible, _ = kernel.facts()
    assert visible == UUIDS[3]
    content, out = kernel.execute("print('ok', 6 * 7)")
    assert content["status"] == "ok" and out.strip() == "ok 42"


def test_install_replaces_its_own_spec_but_not_a_foreign_one(jup):
    assert jup.install("--min-free", "10G").returncode == EXIT_OK
    (jup.kernels_dir / "python3-gpu" / "leftover.txt").write_text("from before\n")
    result = jup.install("--min-free", "30G", "--display-name", "Second")
    assert result.returncode == EXIT_OK, result.stderr
    spec = jup.spec()
    assert "--min-free=30G" in spec["argv"] and "--min-free=10G" not in spec["argv"]
    assert spec["display_name"] == "Second"
    # The whole directory was replaced, and no staging directory is left.
    assert {p.name for p in (jup.kernels_dir / "python3-gpu").iterdir()} == SPEC_FILES
    assert hidden_entries(jup.kernels_dir) == []
    assert hidden_entries(jup.kernels_dir.parent) == []

    foreign = jup.kernels_dir / "theirs"
    foreign.mkdir()
    text = json.dumps({"argv": ["python3", "-m", "ipykernel_launcher", "-f",
                                "{connection_file}"], "display_name": "Theirs",
                       "language": "python"})
    (foreign / "kernel.json").write_text(text)
    result = jup.install("--name", "theirs")
    assert result.returncode == EXIT_FAILURE
    assert f"{foreign} is a kernelspec gpukit did not write" in result.stderr
    assert "--force" in result.stderr
    assert (foreign / "kernel.json").read_text() == text
    assert {p.name for p in foreign.iterdir()} == {"kernel.json"}
    assert hidden_entries(jup.kernels_dir) == []

    result = jup.install("--name", "theirs", "--force")
    assert result.returncode == EXIT_OK, result.stderr
    assert "gpukit" in jup.spec("theirs")["metadata"]
    assert {p.name for p in foreign.iterdir()} == SPEC_FILES
    assert hidden_entries(jup.kernels_dir) == []


# --- which Python ---

def test_python_without_ipykernel_or_missing(jup, tmp_path):
    bare = shell_script(tmp_path / "bare" / "python3", 'exec /usr/bin/python3 -S "$@"\n')
    if subprocess.run([str(bare), "-c", "import ipykernel"], capture_output=True).returncode == 0:
        pytest.skip("the system Python imports ipykernel even with -S")
    result = jup.install("--python", bare)
    assert result.returncode == EXIT_PYTHON
    assert str(bare) in result.stderr and "cannot import ipykernel" in result.stderr
    assert f"{bare} -m pip install ipykernel" in result.stderr
    assert "--python" in result.stderr

    result = jup.install("--python", "/nonexistent/python3")
    assert result.returncode == EXIT_PYTHON
    assert "/nonexistent/python3" in result.stderr

    nothing = tmp_path / "nothing-here"
    nothing.mkdir()
    result = jup.install(env=dict(jup.env, PATH=str(nothing)))
    assert result.returncode == EXIT_PYTHON
    assert "neither jupyter nor python3 is on PATH" in result.stderr

    # A jupyter that names no interpreter.
    odd = tmp_path / "odd-bin"
    odd.mkdir()
    (odd / "jupyter").write_text("print('no #! line')\n")
    (odd / "jupyter").chmod(0o755)
    result = jup.install(env=dict(jup.env, PATH=f"{odd}:/usr/bin:/bin"))
    assert result.returncode == EXIT_PYTHON
    assert "cannot tell which Python" in result.stderr
    assert not jup.kernels_dir.exists() or not any(jup.kernels_dir.iterdir())


def test_a_python_that_cannot_run_is_named_with_the_reason(jup, tmp_path):
    broken = tmp_path / "broken-python"
    broken.write_text("#!/nonexistent/interpreter\n")
    broken.chmod(0o755)
    result = jup.install("--python", broken)
    assert result.returncode == EXIT_PYTHON
    assert result.stderr.count("does not run") == 1, result.stderr
    assert "No such file or directory" in result.stderr, result.stderr


def test_python_found_through_the_jupyter_command(jup, tmp_path):
    pythons = tmp_path / "pythons"
    direct = python_wrapper(pythons / "direct-python")
    on_path = python_wrapper(pythons / "kpython")
    spaced = python_wrapper(tmp_path / "venv with spaces" / "bin" / "python3")
    cases = {
        "direct": (f"#!{direct}\n", direct),
        "env": ("#!/usr/bin/env kpython\n", on_path),
        "env-s": ("#!/usr/bin/env -S kpython -u\n", on_path),
        "trampoline": (f"#!/bin/sh\n'''exec' \"{spaced}\" \"$0\" \"$@\"\n' '''\n", spaced),
    }
    for name, (header, expected) in cases.items():
        bin_dir = tmp_path / f"bin-{name}"
        bin_dir.mkdir()
        (bin_dir / "jupyter").write_text(
            header + "import sys\nfrom jupyter_core.command import main\nsys.exit(main())\n")
        (bin_dir / "jupyter").chmod(0o755)
        env = dict(jup.env, PATH=f"{bin_dir}:{pythons}:/usr/bin:/bin")
        result = jup.install("--name", name, env=env)
        assert result.returncode == EXIT_OK, (name, result.stderr)
        assert f"Python:  {expected} (ipykernel" in result.stdout, name
        spec = jup.spec(name)
        assert spec["metadata"]["gpukit"]["python"] == str(expected), name
        assert spec["argv"][spec["argv"].index("--") + 1] == str(expected), name


# --- list and remove ---

def test_list_and_remove(jup, tmp_path):
    assert jup.install("--name", "listed", "--min-free", "10G").returncode == EXIT_OK
    user_dir = jup.kernels_dir / "listed"

    def mine(entries):
        return [e for e in entries if Path(e["directory"]).is_relative_to(tmp_path)]

    result = jup.gk("kernel", "list", "--json")
    assert result.returncode == EXIT_OK, result.stderr
    assert mine(json.loads(result.stdout)) == [{
        "name": "listed", "display_name": "Python 3 [GPU]", "directory": str(user_dir),
        "origin": "user",
        "selection": "1 GPU, --min-free 10.0 GiB, --order free; the CPU when there is no GPU",
        "run_options": "--min-free=10G --cpu-fallback", "python": VENV_PYTHON,
        "gpukit": str(GPUKIT), "shadowed_by": None, "problem": None}]
    text = jup.gk("kernel", "list").stdout
    assert f'listed  "Python 3 [GPU]"  (user)  {user_dir}' in text
    assert "  selects: 1 GPU, --min-free 10.0 GiB, --order free; the CPU when there is no GPU" in text
    assert f"  runs:    gpukit run --min-free=10G --cpu-fallback -- {VENV_PYTHON}" in text

    # A second copy in an earlier JUPYTER_PATH directory hides the first.
    front = tmp_path / "front"
    front_dir = front / "share" / "jupyter" / "kernels" / "listed"
    jup.env["JUPYTER_PATH"] = str(front / "share" / "jupyter")
    assert jup.install("--name", "listed", "--min-free", "30G",
                       where=("--prefix", front)).returncode == EXIT_OK
    entries = mine(json.loads(jup.gk("kernel", "list", "--json").stdout))
    assert [(e["directory"], e["origin"], e["shadowed_by"]) for e in entries] == [
        (str(front_dir), "JUPYTER_PATH", None), (str(user_dir), "user", str(front_dir))]
    assert f"  hidden:  Jupyter uses {front_dir} instead" in jup.gk("kernel", "list").stdout
    assert jup.jupyter_kernelspecs()["listed"]["resource_dir"] == str(front_dir)

    # A kernel whose Python is gone.
    doomed = python_wrapper(tmp_path / "doomed" / "python3")
    assert jup.install("--name", "broken", "--python", doomed).returncode == EXIT_OK
    doomed.unlink()
    broken = next(e for e in mine(json.loads(jup.gk("kernel", "list", "--json").stdout))
                  if e["name"] == "broken")
    assert str(doomed) in broken["problem"] and "Python" in broken["problem"]
    assert f"  broken:  its Python {doomed} is gone" in jup.gk("kernel", "list").stdout

    # remove takes the one Jupyter uses, and says another remains.
    result = jup.gk("kernel", "remove", "listed")
    assert result.returncode == EXIT_OK, result.stderr
    assert not front_dir.exists() and user_dir.exists()
    assert f"remains in {user_dir}" in result.stdout
    assert jup.jupyter_kernelspecs()["listed"]["resource_dir"] == str(user_dir)
    result = jup.gk("kernel", "remove", "--user", "LISTED")
    assert result.returncode == EXIT_OK, result.stderr
    assert not user_dir.exists()
    assert "listed" not in jup.jupyter_kernelspecs()
    result = jup.gk("kernel", "remove", "listed")
    assert result.returncode == EXIT_FAILURE
    assert "there is no gpukit kernel named listed" in result.stderr
    assert jup.gk("kernel", "remove", "--user", "broken").returncode == EXIT_OK

    foreign = jup.kernels_dir / "theirs"
    foreign.mkdir()
    (foreign / "kernel.json").write_text('{"argv": ["python3"], "display_name": "Theirs", '
                                         '"language": "python"}')
    result = jup.gk("kernel", "remove", "theirs")
    assert result.returncode == EXIT_FAILURE
    assert "is not a gpukit kernel" in result.stderr
    assert (foreign / "kernel.json").exists()
    assert "theirs" in jup.jupyter_kernelspecs()

    result = jup.gk("kernel", "remove", "bad name")
    assert result.returncode == EXIT_USAGE
    assert "is not a kernel name" in result.stderr
    assert hidden_entries(jup.kernels_dir) == []
    assert [e["name"] for e in mine(json.loads(jup.gk("kernel", "list", "--json").stdout))] == []


# --- Optimus: bumblebee keeps the GPU on through interrupts ---

def test_offload_kernel_under_bumblebee(make_jupyter, tmp_path, daemon):  # noqa: F811
    socket_path, log = daemon
    machine = fake_machine(tmp_path, driver=None, status="active", control="on",
                           bbswitch="OFF")
    jup = make_jupyter("laptop", GPUKIT_BUMBLEBEE_SOCKET=str(socket_path), **machine)

    def events():
        return log.read_text().splitlines()

    result = jup.install("--offload")
    assert result.returncode == EXIT_OK, result.stderr
    assert "--offload" in jup.spec()["argv"]
    assert "Optimus offload" in jup.spec()["metadata"]["gpukit"]["selection"]

    kernel = jup.start()
    visible, pid = kernel.facts()
    assert visible.startswith("GPU-")
    # gpukit stays as the kernel's parent, holding the daemon's connection.
    gpukit_pid = kernel.process.pid
    assert pid != gpukit_pid
    assert events()[1:4] == ["connect 1", "recv 1 Connect NoX", "card on"]
    assert [lease["pid"] for lease in jup.holding()] == [gpukit_pid]

    kc = kernel.kc
    msg_id = kc.execute("import time; print('sleeping', flush=True); time.sleep(30)")

    def started_sleeping():
        msg = kc.get_iopub_msg(timeout=10)
        return (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream"
                and "sleeping" in msg["content"]["text"])

    wait_for(started_sleeping, timeout=20, what="the cell printing 'sleeping'")
    kernel.km.interrupt_kernel()  # SIGINT to the process group: gpukit and Python
    while True:
        reply = kc.get_shell_msg(timeout=10)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    assert kernel.process.poll() is None, "gpukit must survive the interrupt"
    assert kernel.facts() == (visible, pid)
    assert "disconnect 1" not in events() and events().count("card on") == 1
    assert [lease["pid"] for lease in jup.holding()] == [gpukit_pid]

    kernel.kc.stop_channels()
    kernel.kc = None
    kernel.km.shutdown_kernel()
    wait_for(lambda: events()[-2:] == ["disconnect 1", "card off"],
             what="the daemon to see the connection close")
    assert jup.holding() == []
