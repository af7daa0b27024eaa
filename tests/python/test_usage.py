"""Command-line conventions: --help, --version, usage errors and exit codes."""
import re
import subprocess

import pytest

from conftest import EXIT_OK, EXIT_USAGE, GPUKIT, scenario_env


def test_help_documents_commands_and_exit_codes(gk):
    result = gk(["--help"])
    assert result.returncode == EXIT_OK
    for word in ("ls", "info", "--interval", "Exit status", "GPUKIT_NVML_LIBRARY"):
        assert word in result.stdout
    for code in range(5):
        assert re.search(rf"^\s+{code}\s", result.stdout, re.M)


@pytest.mark.parametrize("command", ["ls", "info"])
def test_command_help(gk, command):
    result = gk([command, "--help"])
    assert result.returncode == EXIT_OK and "Usage: gpukit " + command in result.stdout


def test_version(gk):
    result = gk(["--version"])
    assert result.returncode == EXIT_OK
    assert re.fullmatch(r"gpukit \d+\.\d+\.\d+\n", result.stdout)


@pytest.mark.parametrize("args,words", [
    (["frobnicate"], "not a gpukit command"),
    (["ls", "--bogus"], "Try 'gpukit ls --help'"),
    (["ls", "--json", "--csv"], "cannot be used together"),
    (["ls", "extra"], "unexpected argument"),
    (["info", "--json", "--quiet"], "cannot be used together"),
    (["--bogus"], "gpukit --help"),
    (["-i"], "gpukit --help"),
    (["slurm", "gres", "--node="], "--node: give the node's name"),
    (["pick", "--max-util=50%%"], "percentage from 0 to 100"),
])
def test_usage_errors(gk, args, words):
    result = gk(args, scenario="laptop")
    assert result.returncode == EXIT_USAGE
    assert words in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("command", [
    ["ls"], ["info"], ["pick"], ["run"], ["leases"], ["kernel", "install"], ["kernel", "list"],
    ["kernel", "remove"], ["top"], ["serve"], ["slurm"], ["bench"],
])
def test_bad_option_names_the_command_and_its_help(gk, command):
    """getopt's message names the command, then one line points at --help
    (not the whole help on stderr), as well-behaved tools do."""
    result = gk([*command, "--bogus"], scenario="laptop")
    assert result.returncode == EXIT_USAGE
    name = "gpukit " + " ".join(command)
    help_of = "gpukit " + command[0]
    assert result.stderr == (f"{name}: unrecognized option '--bogus'\n"
                             f"Try '{help_of} --help' for more information.\n")
    assert result.stdout == ""


@pytest.mark.parametrize("args", [["--version"], [], ["ls"], ["ls", "--json"], ["info"],
                                  ["info", "--json"], ["leases"], ["pick"],
                                  ["top", "--once"]])
def test_output_that_cannot_be_written_fails(tmp_path, args):
    """A full disk (/dev/full) is a failure that says so, for every command
    (main's check after it), never exit 0 with the output lost."""
    env = scenario_env(tmp_path, "h100x8")
    with open("/dev/full", "w") as full:
        result = subprocess.run([str(GPUKIT), *args], env=env, stdout=full,
                                stderr=subprocess.PIPE, text=True, timeout=60,
                                stdin=subprocess.DEVNULL)
    assert result.returncode != EXIT_OK
    assert "cannot write the output: No space left on device" in result.stderr
