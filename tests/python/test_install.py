"""`make install` honours PREFIX and DESTDIR and installs the command, both
libraries, the headers and a pkg-config file that builds a working program."""
import configparser
import os
import shlex
import subprocess

import pytest

from conftest import BUILD, EXIT_NO_GPU
from serve_helpers import serving

PROGRAM = r"""
#include <gpukit/gpukit.h>
#include <stdio.h>
int main(void)
{
    gk_probe *probe;
    gk_snapshot *snapshot;
    if (gk_probe_open(&probe) != GK_OK || gk_probe_read(probe, 0, &snapshot) != GK_OK) {
        fprintf(stderr, "%s\n", gk_last_error());
        return 1;
    }
    printf("gpukit %s: %zu GPU(s), %u CPU cores\n", GPUKIT_VERSION, snapshot->gpu_count,
           snapshot->cpu.logical_cores);
    gk_snapshot_destroy(snapshot);
    gk_probe_close(probe);
    return 0;
}
"""


def install(tmp_path, how):
    """Installs into a staging DESTDIR under PREFIX; returns (root, env)."""
    destdir = tmp_path / "stage"
    prefix = "/opt/gpukit-test"
    env = dict(os.environ, DESTDIR=str(destdir))
    if how == "make":
        command = ["make", "-C", str(BUILD), "install", f"PREFIX={prefix}", f"DESTDIR={destdir}"]
    else:
        command = ["cmake", "--install", str(BUILD), "--prefix", prefix]
    subprocess.run(command, env=env, check=True, capture_output=True)
    return destdir / prefix.lstrip("/"), env


@pytest.mark.parametrize("how", ["make", "cmake"])
def test_install_with_prefix_and_destdir(tmp_path, how):
    root, env = install(tmp_path, how)
    libdir = next(d for d in (root / "lib", root / "lib64",
                              *(root / "lib").glob("*-linux-gnu")) if (d / "libgpukit.a").exists())
    for path in (root / "bin" / "gpukit", libdir / "libgpukit.a", libdir / "libgpukit.so",
                 root / "include" / "gpukit" / "gpukit.h",
                 root / "include" / "gpukit" / "version.h", libdir / "pkgconfig" / "gpukit.pc"):
        assert path.exists(), path
    assert not (tmp_path / "stage" / "usr").exists(), "nothing may land outside PREFIX"

    # Build a program the way a user would, through pkg-config (the .pc file
    # finds its prefix from where it lies, here in the staging directory).
    source = tmp_path / "probe.c"
    source.write_text(PROGRAM)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "gpukit"],
                           env=dict(env, PKG_CONFIG_PATH=str(libdir / "pkgconfig")),
                           check=True, capture_output=True, text=True).stdout.split()
    program = tmp_path / "probe"
    # A sanitized libgpukit needs the sanitizer runtime in the program too.
    sanitize = ["-fsanitize=address,undefined"] if os.environ.get("GPUKIT_SANITIZE") == "1" else []
    subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", *sanitize, str(source), "-o",
                    str(program), *flags], check=True)
    run_env = dict(os.environ, LD_LIBRARY_PATH=str(libdir),
                   GPUKIT_NVML_LIBRARY=str(tmp_path / "none"), PATH="/usr/bin:/bin")
    result = subprocess.run([str(program)], env=run_env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "0 GPU(s)" in result.stdout

    installed = subprocess.run([str(root / "bin" / "gpukit"), "info", "-q"], env=run_env)
    assert installed.returncode == EXIT_NO_GPU


def test_systemd_unit_runs_the_installed_serve(tmp_path):
    """The unit names the installed gpukit under the prefix chosen at install
    time, and its command line (with a free port) really serves."""
    root, _ = install(tmp_path, "make")
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str
    unit.read(root / "share" / "gpukit" / "systemd" / "gpukit-serve.service")
    command = shlex.split(unit["Service"]["ExecStart"])
    assert command[0] == "/opt/gpukit-test/bin/gpukit" and command[1] == "serve"
    assert command[command.index("--listen") + 1] == "127.0.0.1:9400"
    assert unit["Service"]["PrivateTmp"] == "no"  # the leases live in /tmp
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    # The unit's own options, with a free port instead of 9400 (the last
    # --listen wins).
    env = dict(os.environ, GPUKIT_NVML_LIBRARY=str(tmp_path / "none"), PATH="/usr/bin:/bin")
    with serving(env, *command[2:], program=root / "bin" / "gpukit") as server:
        assert server.get("/metrics")[0] == 200
