"""The lease directory's security rules (include/gpukit/lease.h): gpukit refuses
a directory another user could tamper with, never follows, writes or deletes
what others planted in it, and lets nobody but its owner (or root) remove a
lease.

Every case has its own GPUKIT_LEASE_DIR. The cases that act as other users
switch with setpriv(1), which needs root; they live in a world-accessible
directory under /tmp, because pytest's tmp_path is private to its user."""
import fcntl
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

import pytest

from conftest import EXIT_OK, GPUKIT, parse_scenario, run, scenario_env

EXIT_LEASES = 7
NOBODY, OTHER, STRANGER = 65534, 65533, 12345  # OTHER: a second unprivileged user
SETPRIV = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")
TRUE = shutil.which("true", path="/usr/bin:/bin")
SLEEP = shutil.which("sleep", path="/usr/bin:/bin")
RM = shutil.which("rm", path="/usr/bin:/bin")
UUIDS = [gpu["uuid"] for gpu in parse_scenario("h100x8")[1]]

IS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not IS_ROOT, reason="giving files to another uid (chown) "
                                "needs root; CI runs these tests as root")
needs_users = pytest.mark.skipif(not IS_ROOT or SETPRIV is None,
                                 reason="acting as other users needs root and setpriv "
                                 "(util-linux); CI runs these tests as root")


@pytest.fixture
def shared():
    """A directory every user can reach (pytest's tmp_path is mode 0700)."""
    path = Path(tempfile.mkdtemp(prefix="gpukit-lease-safety-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    for root, dirs, _ in os.walk(path):  # undo any read-only mode before removing
        for name in dirs:
            try:
                os.chmod(os.path.join(root, name), 0o755)
            except OSError:
                pass
    shutil.rmtree(path, ignore_errors=True)


def lease_env(tmp_path, lease_dir, reachable=None):
    """The 8xH100 fake with `lease_dir` as GPUKIT_LEASE_DIR. `reachable`: a
    directory other users can reach, for the paths base_env() puts in tmp_path
    (so that the gpukit of uid 65534 sees what root's sees: nothing there)."""
    env = scenario_env(tmp_path, "h100x8")
    env["GPUKIT_LEASE_DIR"] = str(lease_dir)
    if reachable is not None:
        missing = reachable / "no-such-dir"
        env["PATH"] = str(missing)
        env["GPUKIT_SYSFS_ROOT"] = str(missing / "sys")
        env["GPUKIT_PROC_ROOT"] = str(missing / "proc")
        env["GPUKIT_BUMBLEBEE_SOCKET"] = str(missing / "bumblebee.socket")
    return env


def as_user(uid, argv):
    """argv run as `uid` (and its gid, no supplementary groups)."""
    return [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv]


def gpukit_as(uid, args, env, timeout=60):
    return subprocess.run(as_user(uid, [str(GPUKIT), *args]), env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def leases_json(env, uid=None):
    result = run(["leases", "--json"], env) if uid is None else \
        gpukit_as(uid, ["leases", "--json"], env)
    assert result.returncode == EXIT_OK, result.stderr
    return json.loads(result.stdout)


def job_lease(env, job):
    """The lease of a started `gpukit run` job, once `leases` lists it."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and job.poll() is None:
        mine = [entry for entry in leases_json(env) if entry["pid"] == job.pid]
        if mine:
            return mine
        time.sleep(0.05)
    raise AssertionError(f"the job's lease never showed up: {job.poll()} {job.stderr}")


def picked_uuid(env, uid=None):
    args = ["pick", "--format", "uuid"]
    result = run(args, env) if uid is None else gpukit_as(uid, args, env)
    assert result.returncode == EXIT_OK, result.stderr
    return result.stdout.strip(), result.stderr


def lease_files(directory):
    return sorted(p.name for p in Path(directory).iterdir() if p.name.startswith("lease-"))


def snapshot(path):
    """What must not change: type, owner, mode, links, size, mtime, content."""
    st = os.lstat(path)
    content = Path(path).read_bytes() if stat.S_ISREG(st.st_mode) else None
    return (stat.S_IFMT(st.st_mode), st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode),
            st.st_nlink, st.st_size, st.st_mtime_ns, content)


def record(uuid, index, uid, pid=1, state="holding"):
    return (f"gpukit-lease 2\nstate {state}\npid {pid}\nuid {uid}\nsince 1700000000.000000000\n"
            f"share 0\nreserved 0\ndevice {uuid} {index}\ncommand planted\n")


@contextmanager
def held(path):
    """Keeps a write lock on `path`, as a lease's job does (an open file
    description lock; lockf's is the same kind to other processes, and this
    process holds it: gpukit opens the file itself, so it sees it as taken)."""
    fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # drops the lock


def sticky_dir(path, mode=0o1777, uid=None):
    path.mkdir()
    path.chmod(mode)  # not mkdir(mode=...): the umask would trim it
    if uid is not None:
        os.chown(path, uid, uid)
    return path


# --- the directory itself ---------------------------------------------------


@pytest.mark.parametrize("command", [["run", "--", TRUE], ["pick"], ["leases"]],
                         ids=["run", "pick", "leases"])
def test_symlinked_directory_is_refused(tmp_path, command):
    target = sticky_dir(tmp_path / "real")
    link = tmp_path / "leases"
    link.symlink_to(target)
    before = snapshot(target)
    result = run(command, lease_env(tmp_path, link))
    assert result.returncode == EXIT_LEASES, result.stderr
    assert "symbolic link" in result.stderr and str(link) in result.stderr
    assert list(target.iterdir()) == [], "nothing may be created through the link"
    assert snapshot(target)[:5] == before[:5]
    assert link.is_symlink()


@pytest.mark.parametrize("suffix", ["/", "/."], ids=["slash", "slash-dot"])
def test_symlinked_directory_is_refused_however_spelled(tmp_path, suffix):
    """GPUKIT_LEASE_DIR=/path/link/ names the same link: lstat() of a path
    ending in a slash follows the link, so the check must not rely on it."""
    target = sticky_dir(tmp_path / "real")
    link = tmp_path / "leases"
    link.symlink_to(target)
    result = run(["run", "--", TRUE], lease_env(tmp_path, f"{link}{suffix}"))
    assert result.returncode == EXIT_LEASES, "a lease was created through the link"
    # "link/" is the link itself; "link/." is refused for its final ".".
    assert ("symbolic link" if suffix == "/" else "without a final '.'") in result.stderr
    assert list(target.iterdir()) == []


def test_a_file_in_place_of_the_directory_is_refused(tmp_path):
    impostor = tmp_path / "leases"
    impostor.write_text("not a directory\n")
    result = run(["run", "--", TRUE], lease_env(tmp_path, impostor))
    assert result.returncode == EXIT_LEASES
    assert "not a directory" in result.stderr
    assert impostor.read_text() == "not a directory\n"


@needs_root
@pytest.mark.parametrize("owner,shown", [(STRANGER, str(STRANGER)), (NOBODY, "nobody")],
                         ids=["uid-12345", "nobody"])
@pytest.mark.parametrize("command", [["run", "--", TRUE], ["pick"]], ids=["run", "pick"])
def test_directory_of_another_user_is_refused(tmp_path, owner, shown, command):
    leases = sticky_dir(tmp_path / "leases", uid=owner)
    result = run(command, lease_env(tmp_path, leases))
    assert result.returncode == EXIT_LEASES, result.stderr
    assert f"belongs to {shown}" in result.stderr
    assert "install -d -m 1777 -o root" in result.stderr, "the message names the fix"
    assert list(leases.iterdir()) == []


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o757], ids=oct)
def test_shared_directory_without_sticky_bit_is_refused(tmp_path, mode):
    leases = sticky_dir(tmp_path / "leases", mode=mode)
    for command in (["run", "--", TRUE], ["pick"], ["leases"]):
        result = run(command, lease_env(tmp_path, leases))
        assert result.returncode == EXIT_LEASES, (command, result.stderr)
        assert "sticky bit" in result.stderr and f"chmod +t {leases}" in result.stderr
    assert list(leases.iterdir()) == []
    assert stat.S_IMODE(leases.stat().st_mode) == mode


def test_sticky_shared_directory_is_accepted(tmp_path):
    leases = sticky_dir(tmp_path / "leases", mode=0o1777)
    result = run(["run", "--", TRUE], lease_env(tmp_path, leases))
    assert result.returncode == EXIT_OK, result.stderr
    assert len(lease_files(leases)) == 1


def test_missing_directory_is_created_sticky_by_run_only(tmp_path):
    leases = tmp_path / "leases"
    env = lease_env(tmp_path, leases)
    for command in (["pick"], ["leases", "--json"]):
        result = run(command, env)
        assert result.returncode == EXIT_OK, result.stderr
        assert not leases.exists(), f"{command[0]} only reads: it must not create the directory"
    result = subprocess.run([str(GPUKIT), "run", "--", TRUE], env=env, capture_output=True,
                            text=True, timeout=60, stdin=subprocess.DEVNULL, umask=0o077)
    assert result.returncode == EXIT_OK, result.stderr
    st = os.lstat(leases)
    assert stat.S_ISDIR(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o1777, oct(st.st_mode)  # whatever the umask
    assert st.st_uid == os.geteuid()


@needs_users
def test_directory_created_by_a_user_is_refused_to_others(tmp_path, shared):
    leases = sticky_dir(shared / "tmp") / "leases"  # a /tmp-like parent
    env = lease_env(tmp_path, leases, reachable=shared)
    result = gpukit_as(NOBODY, ["run", "--", TRUE], env)
    assert result.returncode == EXIT_OK, result.stderr
    st = os.lstat(leases)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (NOBODY, 0o1777)
    # Its owner could delete everybody's leases: another user must not use it.
    result = gpukit_as(OTHER, ["run", "--", TRUE], env)
    assert result.returncode == EXIT_LEASES
    assert "belongs to nobody" in result.stderr


# --- what others plant inside it --------------------------------------------


@pytest.mark.parametrize("name", ["lease-1-deadbeef", "wait-00000000000000000001-1"],
                         ids=["lease", "wait"])
def test_planted_symlink_is_neither_followed_nor_removed(tmp_path, name):
    leases = sticky_dir(tmp_path / "leases")
    victim = tmp_path / "victim"
    victim.write_text(record(UUIDS[3], 3, os.geteuid()))  # even a valid-looking record
    with held(victim):  # ... that is live: through a link it still does not count
        link = leases / name
        link.symlink_to(victim)
        before = snapshot(victim)
        env = lease_env(tmp_path, leases)
        alone, _ = picked_uuid(lease_env(tmp_path, tmp_path / "empty-leases"))
        for command in (["run", "--", TRUE], ["pick", "--format", "uuid"], ["leases", "--json"]):
            result = run(command, env)
            assert result.returncode == EXIT_OK, (command, result.stderr)
            assert "warning:" in result.stderr and str(link) in result.stderr
            assert "symbolic link" in result.stderr
            if command[0] == "pick":
                assert result.stdout.strip() == alone, "the link's record must not count"
            if command[0] == "leases":
                assert json.loads(result.stdout) == []
        assert snapshot(victim) == before
        assert link.is_symlink() and os.readlink(link) == str(victim)


@needs_root
def test_foreign_owned_lease_is_ignored(tmp_path):
    leases = sticky_dir(tmp_path / "leases")
    env = lease_env(tmp_path, leases)
    best, _ = picked_uuid(env)
    index = UUIDS.index(best)
    planted = leases / "lease-4242-0badf00d"
    planted.write_text(record(best, index, uid=0))  # claims root's uid...
    os.chown(planted, STRANGER, STRANGER)            # ...but user 12345 wrote it
    planted.chmod(0o644)
    before = snapshot(planted)
    with held(planted):
        uuid, stderr = picked_uuid(env)
        assert uuid == best, "a forged lease must not take the GPU it names"
        assert "warning:" in stderr and str(planted) in stderr
        assert f"claims uid 0 but belongs to uid {STRANGER}" in stderr
        assert leases_json(env) == []
        result = run(["run", "-v", "--", TRUE], env)
        assert result.returncode == EXIT_OK, result.stderr
        assert f"chose {best}" in result.stderr
        assert snapshot(planted) == before


def test_genuine_lease_held_the_same_way_counts(tmp_path):
    """The control for the test above: a record whose owner matches its uid
    line, held the same way, does reserve its GPU."""
    leases = sticky_dir(tmp_path / "leases")
    env = lease_env(tmp_path, leases)
    best, _ = picked_uuid(env)
    genuine = leases / "lease-4242-0badf00d"
    genuine.write_text(record(best, UUIDS.index(best), uid=os.geteuid()))
    with held(genuine):
        uuid, stderr = picked_uuid(env)
        assert uuid != best and "warning" not in stderr
        listed = leases_json(env)
        assert [(entry["file"], entry["devices"][0]["uuid"]) for entry in listed] == \
            [(genuine.name, best)]
    assert picked_uuid(env)[0] == best, "once nobody holds it, the lease is stale"


def test_record_that_is_not_utf8_is_listed_with_question_marks(tmp_path):
    """A record's command and UUID are its writer's bytes (a command line cut
    at 255 bytes can end inside a UTF-8 character): `leases --json` and the
    table show each byte that is not UTF-8 as '?', as `ls --json` does,
    rather than dropping the value or garbling the terminal."""
    leases = sticky_dir(tmp_path / "leases")
    env = lease_env(tmp_path, leases)
    planted = leases / "lease-4242-0badf00d"
    planted.write_bytes(record(UUIDS[0], 0, uid=os.geteuid(), pid=os.getpid())
                        .replace("command planted", "command python3 caf\xe9.py \xe2\x82")
                        .encode("latin-1")
                        .replace(UUIDS[0].encode(), UUIDS[0].encode() + b"\xff"))
    with held(planted):
        (entry,) = leases_json(env)
        table = subprocess.run([str(GPUKIT), "leases"], env=env, capture_output=True,
                               timeout=60, stdin=subprocess.DEVNULL)
    assert entry["command"] == "python3 caf?.py ??"
    assert entry["devices"] == [{"index": 0, "uuid": UUIDS[0] + "?"}]
    assert table.returncode == EXIT_OK and b"python3 caf?.py ??\n" in table.stdout, table.stderr


def test_since_past_any_date_is_shown_as_seconds(tmp_path):
    """`since` is any number a record says; one past the years localtime
    can express is shown as the seconds themselves (as date -d takes them)."""
    leases = sticky_dir(tmp_path / "leases")
    env = lease_env(tmp_path, leases)
    planted = leases / "lease-4242-0badf00d"
    planted.write_text(record(UUIDS[0], 0, uid=os.geteuid(), pid=os.getpid())
                       .replace("since 1700000000.000000000", "since 9223372036854775807.5"))
    with held(planted):
        (entry,) = leases_json(env)
        table = run(["leases"], env)
    assert entry["since"] == "@9223372036854775807"
    assert table.returncode == EXIT_OK and " @9223372036854775807 " in table.stdout, table.stderr


# An empty file of this user that nobody holds is not here: it is what a
# gpukit killed while writing its record leaves, and is removed
# (test_half_written_record_is_removed).
@pytest.mark.parametrize("name,content,locked", [
    ("lease-2-00000000", "hello, I am not a lease\n", True),
    ("lease-2-00000000", "hello, I am not a lease\n", False),
    ("lease-2-00000001", "", True),
    ("wait-00000000000000000002-2", "gpukit-lease 3\nstate waiting\n", True),
    ("wait-00000000000000000002-2", "gpukit-lease 3\nstate waiting\n", False),
], ids=["text-held", "text-not-held", "empty-held", "wrong-version-held",
        "wrong-version-not-held"])
def test_garbage_file_is_left_alone(tmp_path, name, content, locked):
    """Files that are not gpukit leases are skipped with a warning and never
    deleted, whether or not some process holds a lock on them."""
    leases = sticky_dir(tmp_path / "leases")
    garbage = leases / name
    garbage.write_text(content)
    before = snapshot(garbage)
    env = lease_env(tmp_path, leases)
    with held(garbage) if locked else nullcontext():
        for command in (["leases", "--json"], ["pick"], ["run", "--", TRUE]):
            result = run(command, env)
            assert result.returncode == EXIT_OK, (command, result.stderr)
            assert garbage.exists(), f"gpukit {command[0]} deleted {name}, which is not a lease"
            assert "warning:" in result.stderr and str(garbage) in result.stderr, \
                f"gpukit {command[0]} skipped {name} without a warning"
        assert snapshot(garbage) == before


def test_half_written_record_is_removed(tmp_path):
    """A gpukit killed between creating its record and writing it leaves an
    empty file that nobody holds; its user's next gpukit removes it, quietly."""
    leases = sticky_dir(tmp_path / "leases")
    empty = leases / "lease-2-00000001"
    empty.write_text("")
    result = run(["leases", "--json"], lease_env(tmp_path, leases))
    assert result.returncode == EXIT_OK and "warning" not in result.stderr, result.stderr
    assert not empty.exists()


def test_fifo_is_skipped_without_hanging(tmp_path):
    leases = sticky_dir(tmp_path / "leases")
    fifo = leases / "lease-3-00000000"
    os.mkfifo(fifo, 0o644)
    env = lease_env(tmp_path, leases)
    for command in (["leases", "--json"], ["pick"], ["run", "--", TRUE]):
        start = time.monotonic()
        result = run(command, env, timeout=20)  # a blocking open would hang here
        assert result.returncode == EXIT_OK, (command, result.stderr)
        assert time.monotonic() - start < 10
        assert "warning:" in result.stderr and str(fifo) in result.stderr
        assert "not a plain file" in result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_hard_link_to_a_lease_still_reserves(tmp_path):
    """A lease with a second name still reserves its GPU (with a warning):
    skipping it would let whoever made the link free somebody's GPU."""
    leases = sticky_dir(tmp_path / "leases")
    env = lease_env(tmp_path, leases)
    best, _ = picked_uuid(env)
    original = tmp_path / "original"
    original.write_text(record(best, UUIDS.index(best), uid=os.geteuid()))
    link = leases / "lease-5-00000000"
    os.link(original, link)
    with held(original):
        uuid, stderr = picked_uuid(env)
        assert uuid != best
        assert "warning:" in stderr and str(link) in stderr and "hard links" in stderr
    assert link.exists() and os.stat(link).st_nlink == 2


def test_hard_link_to_a_waiter_is_skipped(tmp_path):
    """A waiter's record under a second name would stand in line twice."""
    leases = sticky_dir(tmp_path / "leases")
    env = lease_env(tmp_path, leases)
    original = tmp_path / "original"
    place = f"wait-{time.time_ns():020d}-5"
    original.write_text(record(UUIDS[0], 0, uid=os.geteuid(), state="waiting"))
    os.link(original, leases / place)
    with held(original):
        result = run(["leases", "--json"], env)
        assert result.returncode == EXIT_OK, result.stderr
        assert json.loads(result.stdout) == []
        assert "hard links" in result.stderr and place in result.stderr


# --- other users # --- other users ------------------------------------------------------------


@needs_users
@pytest.mark.parametrize("mode", [0o755, 0o1755], ids=oct)
def test_unwritable_directory(tmp_path, shared, mode):
    leases = sticky_dir(shared / "leases", mode=mode, uid=0)
    env = lease_env(tmp_path, leases, reachable=shared)
    result = gpukit_as(NOBODY, ["run", "--", TRUE], env)
    assert result.returncode == EXIT_LEASES, result.stderr
    assert "cannot create a lease" in result.stderr
    assert "GPUKIT_LEASE_DIR" in result.stderr and "chmod 1777" in result.stderr
    assert list(leases.iterdir()) == []
    result = gpukit_as(NOBODY, ["pick"], env)
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stdout.strip().startswith("GPU-")
    assert gpukit_as(NOBODY, ["leases"], env).returncode == EXIT_OK


@needs_users
def test_nobody_else_can_remove_a_live_lease(tmp_path, shared):
    leases = sticky_dir(shared / "leases", uid=0)
    env = lease_env(tmp_path, leases, reachable=shared)
    job = subprocess.Popen(as_user(NOBODY, [str(GPUKIT), "run", "--", SLEEP, "30"]), env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    try:
        mine = job_lease(env, job)
        lease = leases / mine[0]["file"]
        st = os.lstat(lease)
        assert (st.st_uid, stat.S_IMODE(st.st_mode), st.st_nlink) == (NOBODY, 0o644, 1)
        before = snapshot(lease)

        removal = subprocess.run(as_user(OTHER, [RM, "-f", str(lease)]), capture_output=True,
                                 text=True, timeout=30, env={"LC_ALL": "C"})
        assert removal.returncode != 0 and "not permitted" in removal.stderr
        overwrite = subprocess.run(as_user(OTHER, ["/bin/sh", "-c", 'echo forged > "$0"',
                                                   str(lease)]),
                                   capture_output=True, text=True, timeout=30)
        assert overwrite.returncode != 0
        assert snapshot(lease) == before

        for uid in (None, NOBODY, OTHER):  # root, its owner, and somebody else
            listed = leases_json(env, uid)
            assert [(e["file"], e["pid"], e["uid"], e["user"], e["state"]) for e in listed] \
                == [(lease.name, job.pid, NOBODY, "nobody", "holding")], uid
        taken = mine[0]["devices"][0]["uuid"]
        assert picked_uuid(env, OTHER)[0] != taken
        assert job.poll() is None
    finally:
        job.kill()
        job.wait()


@needs_users
def test_stale_lease_of_another_user_is_ignored_but_kept(tmp_path, shared):
    leases = sticky_dir(shared / "leases", uid=0)
    env = lease_env(tmp_path, leases, reachable=shared)
    result = gpukit_as(NOBODY, ["run", "-v", "--", TRUE], env)
    assert result.returncode == EXIT_OK, result.stderr
    taken = result.stderr.split("chose ", 1)[1].split()[0]
    (stale,) = lease_files(leases)  # `true` ended: nobody holds it now
    before = snapshot(leases / stale)
    assert before[1] == NOBODY

    assert leases_json(env, OTHER) == []
    assert picked_uuid(env, OTHER)[0] == taken, "a stale lease reserves nothing"
    result = gpukit_as(OTHER, ["run", "--", TRUE], env)
    assert result.returncode == EXIT_OK, result.stderr
    assert stale in lease_files(leases), "only its owner (or root) may remove a stale lease"
    assert snapshot(leases / stale) == before

    assert leases_json(env, NOBODY) == []
    assert stale not in lease_files(leases), "its owner's next gpukit removes it"


# --- locks of others, places in line ----------------------------------------

# Opens a lease for reading (all another user may do) and flocks it; once
# told that the job has ended, takes a read lock too (the job's write lock
# kept it out before).
READ_LOCKER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
fcntl.flock(fd, fcntl.LOCK_SH)
print("flocked", flush=True)
sys.stdin.readline()
fcntl.lockf(fd, fcntl.LOCK_SH)
print("read-locked", flush=True)
sys.stdin.read()
"""


def test_locks_of_readers_cannot_keep_an_ended_lease_alive(tmp_path):
    """Anyone can open a lease for reading and lock it (flock, or a read
    lock): that must not keep the lease alive once its job has ended."""
    leases = sticky_dir(tmp_path / "leases")
    env = lease_env(tmp_path, leases)
    job = subprocess.Popen([str(GPUKIT), "run", "--", SLEEP, "30"], env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    reader = None
    try:
        mine = job_lease(env, job)
        reader = subprocess.Popen([sys.executable, "-c", READ_LOCKER, str(leases / mine[0]["file"])],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert reader.stdout.readline() == "flocked\n"
        job.kill()
        job.wait()
        reader.stdin.write("the job ended\n")
        reader.stdin.flush()
        assert reader.stdout.readline() == "read-locked\n"
        assert leases_json(env) == [], "a reader's lock kept an ended job's lease alive"
        assert picked_uuid(env)[0] == mine[0]["devices"][0]["uuid"]
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
        if reader is not None:
            reader.stdin.close()
            reader.wait()


@pytest.mark.parametrize("place,kept", [
    ("wait-00000000000000000001-4242", False),  # claims 1970: ignored
    (None, True),                               # now: a genuine place, waited for
], ids=["back-dated", "genuine"])
def test_nobody_can_take_a_place_in_line_before_arriving(tmp_path, place, kept):
    leases = sticky_dir(tmp_path / "leases")
    env = lease_env(tmp_path, leases)
    waiter = leases / (place or f"wait-{time.time_ns():020d}-4242")
    waiter.write_text(record(UUIDS[0], 0, uid=os.geteuid(), pid=4242, state="waiting"))
    with held(waiter):
        result = run(["run", "--wait=1", "--", TRUE], env)
        if kept:
            assert result.returncode == 6, result.stderr  # behind it, until the limit
            assert "ahead in line" in result.stderr
        else:
            assert result.returncode == EXIT_OK, result.stderr
            assert "claims a place in line from before the file was made" in result.stderr
            assert str(waiter) in result.stderr


@needs_users
def test_a_lease_cannot_name_another_users_process(tmp_path, shared):
    """The pid in a record is its writer's word: one that is another user's
    process is not shown as the lease's job (nor its GPU memory counted)."""
    leases = sticky_dir(shared / "leases", uid=0)
    env = lease_env(tmp_path, leases, reachable=shared)
    stranger = subprocess.Popen(as_user(NOBODY, [SLEEP, "30"]))
    try:
        give_up = time.monotonic() + 20
        while os.stat(f"/proc/{stranger.pid}").st_uid != NOBODY:  # setpriv switches, then execs
            assert time.monotonic() < give_up and stranger.poll() is None
            time.sleep(0.01)
        for pid, shown in ((stranger.pid, 0), (os.getpid(), os.getpid())):
            planted = leases / f"lease-{pid}-0badf00d"
            planted.write_text(record(UUIDS[0], 0, uid=os.geteuid(), pid=pid))
            with held(planted):
                result = run(["leases", "--json"], env)
                assert result.returncode == EXIT_OK, result.stderr
                assert [(e["file"], e["pid"]) for e in json.loads(result.stdout)] == \
                    [(planted.name, shown)]
                assert (f"names pid {pid}, a process of another user" in result.stderr) == \
                    (shown == 0)
            planted.unlink()
    finally:
        stranger.kill()
        stranger.wait()
