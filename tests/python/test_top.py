"""`gpukit top` driven in a real terminal (tmux) against the fake NVML:
start, resize, sort, filter, signal one's own process, refusal for another
user's, quit on q and Ctrl-C with the terminal restored, colors only when
wanted; and `--once` checked against `gpukit ls --json`."""
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from conftest import (EXIT_USAGE, FAKE_NVML, GPUKIT, SCENARIOS, base_env, parse_scenario, run,
                      scenario_env)


class Terminal:
    """A tmux server of our own with one window running `command`."""

    def __init__(self, command, env, width=80, height=24):
        self.socket = f"gpukit-test-{uuid.uuid4().hex[:8]}"
        self.env = env
        self.tmux(["new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height),
                   command])

    def tmux(self, args):
        return subprocess.run(["tmux", "-L", self.socket, *args], env=self.env,
                              capture_output=True, text=True, timeout=30, check=True).stdout

    def screen(self, escapes=False):
        return self.tmux(["capture-pane", "-p", "-t", "t", *(["-e"] if escapes else [])])

    def keys(self, *keys):
        self.tmux(["send-keys", "-t", "t", *keys])

    def type(self, text):
        self.tmux(["send-keys", "-t", "t", "-l", text])

    def wait_for(self, predicate, timeout=20, what=""):
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if predicate(screen):
                return screen
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; the screen:\n{screen}")

    def resize(self, width, height):
        self.tmux(["resize-window", "-t", "t", "-x", str(width), "-y", str(height)])

    def close(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], env=self.env,
                       capture_output=True, timeout=30)


@pytest.fixture
def world(tmp_path):
    """A directory every user can read: the command, the fake NVML and a
    scenario, so `gpukit top` can run as `nobody` (whose processes it may
    signal) beside root's."""
    place = Path(tempfile.mkdtemp(prefix="gpukit-top-"))
    place.chmod(0o755)
    shutil.copy(GPUKIT, place / "gpukit")
    shutil.copy(FAKE_NVML, place / "libnvidia-ml.so.1")
    (place / "leases").mkdir(mode=0o1777)
    (place / "leases").chmod(0o1777)
    yield place
    shutil.rmtree(place, ignore_errors=True)


def top_env(tmp_path, world, scenario):
    env = base_env(tmp_path)
    env.update(GPUKIT_NVML_LIBRARY=str(world / "libnvidia-ml.so.1"),
               FAKE_NVML_SCENARIO=str(scenario), GPUKIT_LEASE_DIR=str(world / "leases"),
               TERM="xterm-256color", LANG="C.UTF-8",
               # tmux, setpriv, stty and sleep (no NVIDIA software lives there
               # on the test machines)
               PATH="/usr/bin:/bin")
    env.pop("NO_COLOR", None)
    return env


SHELL_TAIL = "; echo EXIT=$?; stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo; sleep 60"


def test_top_live_sort_filter_signals_resize_quit(tmp_path, world):
    # A process of nobody's (which top, run as nobody, may signal) and one of
    # root's (which it must refuse), both "on" GPU 0 of the fake.
    own = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                            "sleep", "300"])
    other = subprocess.Popen(["sleep", "300"])
    scenario = world / "two.scn"
    laptop = "\n".join(l for l in (SCENARIOS / "laptop.scn").read_text().splitlines()
                       if not l.startswith("proc "))
    scenario.write_text(laptop + f"\nproc type=compute pid={own.pid} mem=2000\n"
                        f"proc type=compute pid={other.pid} mem=1000\n")
    scenario.chmod(0o644)
    env = top_env(tmp_path, world, scenario)
    command = (f"setpriv --reuid=nobody --regid=nogroup --clear-groups "
               f"{world / 'gpukit'} top --interval 0.2" + SHELL_TAIL)
    term = Terminal(command, env)
    try:
        screen = term.wait_for(lambda s: str(own.pid) in s and str(other.pid) in s,
                               what="both processes")
        assert "gpukit top" in screen and "RTX 4050" in screen
        lines = screen.splitlines()
        assert len(lines) <= 24 and all(len(l) <= 80 for l in lines)
        # largest GPU memory first: nobody's 2000 MiB above root's 1000 MiB
        assert screen.index(str(own.pid)) < screen.index(str(other.pid))
        assert "GPU-MEM\u25bc" in screen
        row = next(l for l in lines if str(own.pid) in l)
        assert "nobody" in row and "sleep 300" in row and "2000MiB" in row

        # long command lines scroll sideways
        term.keys("Right")
        # ("sleep 300" less its first 8 characters)
        term.wait_for(lambda s: re.search(rf"^ +0 +{own.pid} .* -\s+0\s*$", s, re.M),
                      what="the command scrolled")
        term.keys("Left")
        term.wait_for(lambda s: "sleep 300" in s, what="the command back")

        # sort: one column back (USER), then reversed
        term.keys("<")
        term.wait_for(lambda s: "USER\u25bc" in s, what="sorted by user")
        term.keys("r")
        screen = term.wait_for(lambda s: "USER\u25b2" in s, what="reversed")
        assert screen.index(str(own.pid)) < screen.index(str(other.pid))  # nobody < root
        term.keys("r")
        screen = term.wait_for(lambda s: "USER\u25bc" in s, what="reversed back")
        assert screen.index(str(other.pid)) < screen.index(str(own.pid))

        # filter by user, then clear it
        term.keys("/")
        term.type("user:root")
        term.keys("Enter")
        screen = term.wait_for(lambda s: str(own.pid) not in s.split("GPU ")[-1]
                               and str(other.pid) in s, what="the filter")
        term.keys("Escape")
        term.wait_for(lambda s: str(own.pid) in s and str(other.pid) in s, what="no filter")

        # another user's process: refused with a message, nothing sent
        term.keys("/")
        term.type(f"pid:{other.pid}")
        term.keys("Enter")
        term.wait_for(lambda s: str(own.pid) not in s.split("GPU ")[-1], what="root's process")
        term.keys("T")
        term.wait_for(lambda s: "not yours" in s, what="the refusal")
        assert other.poll() is None

        # one's own: asked first, "n" sends nothing, "y" sends SIGTERM
        term.keys("Escape", "/")
        term.type(f"pid:{own.pid}")
        term.keys("Enter")
        term.wait_for(lambda s: str(other.pid) not in s.split("GPU ")[-1], what="nobody's")
        term.keys("T")
        term.wait_for(lambda s: f"Send SIGTERM to pid {own.pid}? [y/N]" in s, what="the question")
        term.keys("n")
        term.wait_for(lambda s: "no signal sent" in s, what="no")
        assert own.poll() is None
        term.keys("T")
        term.wait_for(lambda s: "[y/N]" in s, what="the question again")
        term.keys("y")
        term.wait_for(lambda s: f"sent SIGTERM to pid {own.pid}" in s, what="sent")
        assert own.wait(timeout=10) == -15

        # resize: the frame follows the terminal's new width and height
        term.keys("Escape")
        term.resize(120, 40)
        screen = term.wait_for(lambda s: max(len(l) for l in s.splitlines()) > 80,
                               what="the wider frame")
        assert "UTIL [" in screen and "history" in screen and len(screen.splitlines()) > 24
        term.resize(80, 24)
        term.wait_for(lambda s: max(len(l) for l in s.splitlines()) <= 80, what="smaller again")

        # q quits and gives the terminal back as it was
        term.keys("q")
        screen = term.wait_for(lambda s: re.search(r"^-?echo$", s, re.M), what="the exit")
        assert "EXIT=0" in screen
        assert "icanon" in screen.split() and "echo" in screen.split()
        assert "-icanon" not in screen.split() and "-echo" not in screen.split()
    finally:
        term.close()
        for p in (own, other):
            if p.poll() is None:
                p.kill()
            p.wait()


def test_ctrl_c_quits_and_no_gpu_says_why(tmp_path, world):
    env = top_env(tmp_path, world, world / "none.scn")
    env["GPUKIT_NVML_LIBRARY"] = str(tmp_path / "no-such" / "libnvidia-ml.so.1")
    term = Terminal(f"{world / 'gpukit'} top" + SHELL_TAIL, env)
    try:
        screen = term.wait_for(lambda s: "No NVIDIA GPU" in s, what="the diagnosis")
        assert "no NVIDIA driver" in screen
        term.keys("T")
        term.wait_for(lambda s: "no process is selected" in s, what="nothing to signal")
        term.keys("C-c")
        screen = term.wait_for(lambda s: re.search(r"^-?echo$", s, re.M), what="the exit")
        assert "EXIT=0" in screen and "-icanon" not in screen.split()
    finally:
        term.close()


@pytest.mark.parametrize("setting", ["color", "NO_COLOR", "monochrome"])
def test_colors_only_when_wanted(tmp_path, world, setting):
    env = top_env(tmp_path, world, SCENARIOS / "h100x8.scn")
    if setting == "NO_COLOR":
        env["NO_COLOR"] = "1"
    # (tmux sets TERM inside its panes: a terminal without colors is named
    # on the command line.)
    terminal = "env TERM=vt100 " if setting == "monochrome" else ""
    term = Terminal(f"{terminal}{world / 'gpukit'} top" + SHELL_TAIL, env)
    try:
        term.wait_for(lambda s: "H100" in s and "4012345" in s, what="the GPUs")
        screen = term.screen(escapes=True)
        colors = re.findall(r"\x1b\[[0-9;]*(?:3[0-7]|38;5;\d+|9[0-7])[;m]", screen)
        if setting == "color":
            assert colors
        else:
            assert not colors, colors[:5]
            assert "\x1b[7m" in screen or "\x1b[1m" in screen  # still bold / reverse
        term.keys("q")
        term.wait_for(lambda s: re.search(r"^-?echo$", s, re.M), what="the exit")
    finally:
        term.close()


def parse_once(text):
    """GPU lines and process rows of `top --once` (wide enough for all)."""
    gpus, processes = {}, []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*(\d+) (.+?)\s+(\d+)°C\s+(\d+)/(\d+)W", line)
        if m:
            bars = lines[i + 1]
            util = re.search(r"\]\s+(\d+)%", bars).group(1)
            used, total = re.search(r"(\d+)/(\d+) MiB", bars).groups()
            gpus[int(m.group(1))] = dict(name=m.group(2).strip(), temp=int(m.group(3)),
                                         power=int(m.group(4)), limit=int(m.group(5)),
                                         util=int(util), used=int(used), total=int(total))
        m = re.match(r"\s*(\d+)\s+(\d+) \S+\s+(\d+)MiB", line)
        if m:
            processes.append(tuple(int(x) for x in m.groups()))
    return gpus, processes


def test_once_says_what_ls_says(tmp_path):
    env = scenario_env(tmp_path, "h100x8")
    env["COLUMNS"] = "160"
    once = run(["top", "--once"], env)
    assert once.returncode == 0, once.stderr
    assert "\x1b[" not in once.stdout  # not a terminal: no color
    listed = json.loads(run(["ls", "--json"], env).stdout)
    gpus, processes = parse_once(once.stdout)
    assert sorted(gpus) == list(range(8))
    for gpu in listed["gpus"]:
        shown = gpus[gpu["index"]]
        assert shown == dict(name=gpu["name"], temp=gpu["temperature.gpu"],
                             power=gpu["power.draw"], limit=gpu["enforced.power.limit"],
                             util=gpu["utilization.gpu"], used=gpu["memory.used"],
                             total=gpu["memory.total"])
    assert sorted(processes) == sorted((g["index"], p["pid"], p["gpu_memory_usage"])
                                       for g in listed["gpus"] for p in g["processes"])
    # sorted by GPU memory, largest first (the default)
    assert [p[2] for p in processes] == sorted((p[2] for p in processes), reverse=True)
    by_pid = run(["top", "--once", "--sort=pid", "--ascending", "--filter=gpu:7"], env)
    _, rows = parse_once(by_pid.stdout)
    assert [r[1] for r in rows] == [4050001, 4050002]
    # gpu:N and pid:N take a whole number only: "x" is not 0, "7x" not 7
    for bad in ("gpu:x", "gpu:7x", "gpu:", "pid:abc", "pid:4050001x", "gpu:99999999999999999999"):
        result = run(["top", "--once", f"--filter={bad}"], env)
        assert result.returncode == 0 and parse_once(result.stdout)[1] == [], bad
        assert "no GPU process matches the filter" in result.stdout, bad
    _, rows = parse_once(run(["top", "--once", "--filter=pid:4050002"], env).stdout)
    assert [r[1] for r in rows] == [4050002]
    # ASCII: no degree sign; an unknown temperature has no unit
    ascii_env = dict(env, LC_ALL="C")
    ascii_once = run(["top", "--once"], ascii_env).stdout
    assert "\u00b0" not in ascii_once and re.search(r"^\s*0 .* 61C ", ascii_once, re.M)
    for locale in ("C", "C.UTF-8"):
        unknown = run(["top", "--once"], dict(scenario_env(tmp_path, "notsupported"),
                                              LC_ALL=locale)).stdout
        assert re.search(r"^\s*0 GRID T4-8Q\s+N/A ", unknown, re.M), unknown
        assert "N/A\u00b0C" not in unknown and "N/AC" not in unknown
        assert "/N/A" not in unknown  # power without a limit: not "N/A/N/AW"
    # a lost GPU is shown with its error
    lost = run(["top", "--once"], scenario_env(tmp_path, "lost"))
    assert re.search(r"^\s*1 .*lost: GPU is lost", lost.stdout, re.M)
    for args in (["--sort=nope"], ["--interval=0"], ["extra"], ["--color=sometimes"]):
        result = run(["top", *args], env)
        assert result.returncode == EXIT_USAGE and result.stderr, args
    # Interactive without a terminal: told to use --once.
    result = run(["top"], env)
    assert result.returncode == EXIT_USAGE and "--once" in result.stderr


def test_readonly_sends_no_signal(tmp_path, world):
    victim = subprocess.Popen(["sleep", "300"])
    scenario = world / "victim.scn"
    scenario.write_text((SCENARIOS / "laptop.scn").read_text().split("proc ")[0] +
                        f"\nproc type=compute pid={victim.pid} mem=100\n")
    term = Terminal(f"{world / 'gpukit'} top --readonly" + SHELL_TAIL,
                    top_env(tmp_path, world, scenario))
    try:
        term.wait_for(lambda s: str(victim.pid) in s and "[read-only]" in s, what="the process")
        term.keys("K")
        term.wait_for(lambda s: "read-only (--readonly): no signals are sent" in s,
                      what="the refusal")
        term.keys("y")
        time.sleep(0.3)
        assert victim.poll() is None
        term.keys("q")
    finally:
        term.close()
        victim.kill()
        victim.wait()
