"""`hrm turn` through the resident process, as a person runs it: the real console script, a
real resident process in a runtime directory of the test's own, real signals."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the resident process is Linux only")

HRM = str(Path(sys.executable).with_name("hrm"))
WAIT = 60.0
MESSAGE = "How do I rename a git branch?"


def _hrm(*args: str, env: dict[str, str], stdin: bytes = b"", cwd: Path | None = None,
         timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([HRM, *args], env=env, input=stdin, capture_output=True,
                          timeout=timeout, check=False, cwd=cwd)


def _status(env: dict[str, str]) -> dict[str, object]:
    done = _hrm("resident", "status", "--json", env=env)
    assert done.returncode == 0, done.stderr
    status: dict[str, object] = json.loads(done.stdout)
    return status


def _wait_running(env: dict[str, str]) -> dict[str, object]:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        status = _status(env)
        if status["running"]:
            return status
        time.sleep(0.1)
    raise AssertionError(f"no resident process answered within {WAIT:.0f} s")


def _socket_dir(env: dict[str, str]) -> Path:
    return Path(env["XDG_RUNTIME_DIR"]) / "hrm"


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A person's environment with the resident process on, in a runtime directory of its own;
    whatever resident process the test started is stopped after it."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    environment = {
        "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HRM_HOME": str(tmp_path / "home"),
        "HRM_PROVIDER": "offline", "XDG_RUNTIME_DIR": str(runtime), "HRM_RESIDENT": "1",
    }
    yield environment
    status = _status(environment)
    _hrm("resident", "stop", env=environment)
    if status.get("running"):
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and _status(environment)["running"]:
            time.sleep(0.1)
        if _status(environment)["running"]:
            os.kill(int(str(status["pid"])), signal.SIGKILL)


@pytest.fixture
def started(env: dict[str, str]) -> dict[str, str]:
    """`env` after one in-process turn, which started the resident process."""
    first = _hrm("turn", MESSAGE, env=env)
    assert first.returncode == 0, first.stderr
    _wait_running(env)
    return env


def _traced(env: dict[str, str]) -> dict[str, str]:
    return {**env, "HRM_RESIDENT_TRACE": "1"}


def test_the_first_turn_runs_in_process_and_starts_the_resident_process_for_the_next(
    env: dict[str, str],
) -> None:
    first = _hrm("turn", MESSAGE, env=_traced(env))
    assert first.returncode == 0
    assert b"hrm resident: child" not in first.stderr
    _wait_running(env)
    second = _hrm("turn", "and how do I delete the old one?", env=_traced(env))
    assert second.returncode == 0, second.stderr
    assert b"hrm resident: child" in second.stderr
    assert b"(offline model)" in second.stdout
    assert _status(env)["served"] == 1
    socket = next(_socket_dir(env).glob("*.sock"))
    assert socket.stat().st_mode & 0o777 == 0o600
    assert _socket_dir(env).stat().st_mode & 0o777 == 0o700


def test_a_turn_in_the_resident_process_prints_and_records_what_an_in_process_turn_does(
    started: dict[str, str], tmp_path: Path,
) -> None:
    here = {**started, "HRM_HOME": str(tmp_path / "in-process"), "HRM_RESIDENT": "0"}
    there = {**started, "HRM_HOME": str(tmp_path / "resident")}
    for text in ("remember that I deploy with Netlify", MESSAGE, "Decided: we use Postgres."):
        a, b = _hrm("turn", text, env=here), _hrm("turn", text, env=_traced(there))
        assert (a.returncode, a.stdout) == (b.returncode, b.stdout)
        assert b.stderr.decode().startswith(a.stderr.decode())  # then the trace line
    a = json.loads(_hrm("why", "--json", env=here).stdout)
    b = json.loads(_hrm("why", "--json", env=there).stdout)
    assert a["turn"] == b["turn"] == 3
    # The trace ids and the model call's milliseconds differ between any two runs.
    untimed = [[re.sub(r"\b\d+ ms\b", "… ms", line["text"]) for line in why["explanation"]
                if line["layer"] != "trace"] for why in (a, b)]
    assert untimed[0] == untimed[1]
    assert [e["kind"] for e in a["events"]] == [e["kind"] for e in b["events"]]


def test_the_child_takes_the_clients_directory_environment_stdin_and_exit_status(
    started: dict[str, str], tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = {key: value for key, value in _traced(started).items() if key != "HRM_HOME"}
    env["HOME"] = str(tmp_path / "elsewhere")
    done = _hrm("turn", "-", "--home", "relative-home", env=env, cwd=project,
                stdin=b"remember that I use fish shell\n")
    assert done.returncode == 0, done.stderr
    assert b"hrm resident: child" in done.stderr
    assert (project / "relative-home" / "HO2").is_dir()
    assert not (tmp_path / "home" / "relative-home").exists()
    bad = _hrm("turn", "x", "--provider", "nonsense", env=env, cwd=project)
    one_shot = _hrm("turn", "x", "--provider", "nonsense", env={**env, "HRM_RESIDENT": "0"},
                    cwd=project)
    assert bad.returncode == one_shot.returncode == 3
    assert b"Unknown LLM provider 'nonsense'" in bad.stderr


def test_the_child_adopts_the_clients_umask_zone_and_stream_encodings(tmp_path: Path) -> None:
    # The home is private whatever the umask, so a turn cannot show it: the child's set-up is
    # run on its own, in a process of its own, with pipes for the client's streams.
    script = (
        "import json, os, sys, time\n"
        "from hrm.resident import server\n"
        "read_out, write_out = os.pipe()\n"
        "fds = [os.open(os.devnull, os.O_RDONLY), write_out, os.dup(2)]\n"
        "request = {'cwd': sys.argv[1], 'umask': 0o027, 'env': {'TZ': 'Asia/Kolkata', 'X': '1'},\n"
        "           'streams': [['utf-8', 'strict'], ['latin-1', 'replace'], ['utf-8', 'strict']]}\n"
        "os.umask(0o022)\n"
        "server._adopt(request, fds)\n"
        "mask = os.umask(0)\n"
        "print(json.dumps({'umask': mask, 'cwd': os.getcwd(), 'env': dict(os.environ),\n"
        "                  'zone': time.strftime('%z', time.localtime(0)),\n"
        "                  'encoding': sys.stdout.encoding, 'fds': fds}), flush=True)\n"
        "os.close(1)\n"
        "sys.__stderr__.write(os.read(read_out, 65536).decode())\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    adopted = json.loads(done.stderr.decode().splitlines()[-1])
    assert adopted == {"umask": 0o027, "cwd": str(tmp_path), "env": {"TZ": "Asia/Kolkata", "X": "1"},
                       "zone": "+0530", "encoding": "latin-1", "fds": []}


_READ = {"x86_64": 0, "aarch64": 63}.get(os.uname().machine)


def _children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _reading_stdin(pid: int) -> bool:
    """Is `pid` blocked in read(0, …) now (started, waiting for its input)?"""
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False  # gone already
    return fields[:2] == [str(_READ), "0x0"]


def _wait_reading_stdin(pid: int) -> None:
    """Wait until `pid` is blocked in read(0, …): it has started and waits for its input."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if _reading_stdin(pid):
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} never waited on its standard input")


def _with_sigint(disposition: str, *command: str) -> list[str]:
    """`command`, started with SIGINT at `disposition` (exec keeps an ignored signal ignored
    and a default one default): the same process id, as a shell would start it."""
    return [sys.executable, "-c",
            "import os, signal, sys\n"
            f"signal.signal(signal.SIGINT, signal.{disposition})\n"
            "os.execv(sys.argv[1], sys.argv[1:])", *command]


@pytest.mark.skipif(_READ is None, reason="read(2)'s number is known for x86_64 and aarch64")
def test_ctrl_c_reaches_the_child_and_ends_the_turn_as_it_would_in_process(
    started: dict[str, str],
) -> None:
    daemon = int(str(_status(started)["pid"]))
    codes = []
    for env in ({**started, "HRM_RESIDENT": "0"}, _traced(started)):
        # A shell starts a background job with SIGINT ignored: the clients get Ctrl-C's
        # default, as a terminal's foreground command has.
        client = subprocess.Popen(_with_sigint("SIG_DFL", HRM, "turn", "-"), env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        if env["HRM_RESIDENT"] == "1":
            deadline = time.monotonic() + WAIT
            while not _children(daemon) and time.monotonic() < deadline:
                time.sleep(0.05)
            _wait_reading_stdin(_children(daemon)[0])
        else:
            _wait_reading_stdin(client.pid)
        client.send_signal(signal.SIGINT)
        _, err = client.communicate(timeout=WAIT)
        codes.append(client.returncode)
        assert b"Traceback" not in err
    assert codes[0] == codes[1] != 0
    assert _status(started)["running"]
    assert _children(daemon) == []


@pytest.mark.skipif(_READ is None, reason="read(2)'s number is known for x86_64 and aarch64")
def test_a_client_that_ignores_sigint_has_a_child_that_ignores_it(
    started: dict[str, str],
) -> None:
    # As `nohup` or a background job would run it: the one-shot ignores SIGINT, so must the
    # child, and the turn finishes on its input.
    daemon = int(str(_status(started)["pid"]))
    client = subprocess.Popen(_with_sigint("SIG_IGN", HRM, "turn", "-"), env=_traced(started),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    deadline = time.monotonic() + WAIT
    while not _children(daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    _wait_reading_stdin(_children(daemon)[0])
    client.send_signal(signal.SIGINT)
    out, err = client.communicate(b"remember that I use fish shell", timeout=WAIT)
    assert client.returncode == 0, err
    assert b"hrm resident: child" in err
    assert out


@pytest.mark.skipif(_READ is None, reason="read(2)'s number is known for x86_64 and aarch64")
def test_a_child_killed_mid_turn_is_reported_not_hung(started: dict[str, str]) -> None:
    daemon = int(str(_status(started)["pid"]))
    # A child of an earlier test's turn may still be finishing: this turn's child is the new
    # one waiting for the turn's input (killing another let this turn finish normally on a
    # loaded machine, twice).
    earlier = set(_children(daemon))
    client = subprocess.Popen([HRM, "turn", "-"], env=started, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    children: list[int] = []
    deadline = time.monotonic() + WAIT
    while not children and time.monotonic() < deadline:
        time.sleep(0.05)
        children = [pid for pid in _children(daemon)
                    if pid not in earlier and _reading_stdin(pid)]
    assert children, "the resident process forked no child waiting for the turn's input"
    os.kill(children[0], signal.SIGKILL)
    _, err = client.communicate(timeout=WAIT)
    assert client.returncode == 1
    assert b"ended without an exit status" in err


def test_off_unsafe_or_absent_means_in_process_and_nothing_left_running(
    env: dict[str, str],
) -> None:
    off = _hrm("turn", MESSAGE, env={**env, "HRM_RESIDENT": "0"})
    assert off.returncode == 0
    assert not _socket_dir(env).exists()
    _socket_dir(env).mkdir(mode=0o700)
    os.chmod(_socket_dir(env), 0o777)  # anyone could have put a socket here: never used
    loose = _hrm("turn", MESSAGE, env=_traced(env))
    assert loose.returncode == 0
    time.sleep(0.5)
    assert b"hrm resident: child" not in loose.stderr
    assert list(_socket_dir(env).iterdir()) == []
    assert not _status(env)["running"]


def test_an_idle_resident_process_exits_and_removes_its_socket(env: dict[str, str]) -> None:
    quick = {**env, "HRM_RESIDENT_IDLE": "0.5"}
    assert _hrm("turn", MESSAGE, env=quick).returncode == 0
    deadline = time.monotonic() + WAIT
    seen = False
    while time.monotonic() < deadline:
        sockets = list(_socket_dir(env).glob("*.sock")) if _socket_dir(env).exists() else []
        seen = seen or bool(sockets)
        log = "".join(p.read_text() for p in _socket_dir(env).glob("*.log")) if seen else ""
        if seen and not sockets and "stopped" in log:
            return
        time.sleep(0.1)
    raise AssertionError(f"the resident process did not start and exit (socket seen: {seen})")


def test_stop_ends_it_and_the_next_turn_starts_a_new_one(started: dict[str, str]) -> None:
    first = _status(started)["pid"]
    stopped = _hrm("resident", "stop", "--json", env=started)
    assert json.loads(stopped.stdout) == {"stopped": first}
    deadline = time.monotonic() + WAIT
    while _status(started)["running"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _status(started)["running"]
    assert _hrm("turn", MESSAGE, env=started).returncode == 0
    assert _wait_running(started)["pid"] != first
    said = _hrm("resident", "status", env=started).stdout.decode()
    assert "0 turn(s) run" in said


def test_one_that_failed_to_start_is_not_started_again_for_a_minute(env: dict[str, str]) -> None:
    directory = _socket_dir(env)
    assert _hrm("turn", MESSAGE, env=env).returncode == 0
    _wait_running(env)
    _hrm("resident", "stop", env=env)
    deadline = time.monotonic() + WAIT
    while _status(env)["running"] and time.monotonic() < deadline:
        time.sleep(0.1)
    sockets = list(directory.glob("*.sock"))
    name = next(directory.glob("*.log")).stem
    assert not sockets and not (directory / f"{name}.starting").exists()  # it listened
    failed = directory / f"{name}.starting"
    failed.touch()  # as a start that crashed while importing leaves it
    stamped = time.time() - 5
    os.utime(failed, (stamped, stamped))
    assert _hrm("turn", MESSAGE, env=env).returncode == 0
    assert failed.stat().st_mtime == stamped  # a start would have stamped it anew
    os.utime(failed, (time.time() - 120, time.time() - 120))
    assert _hrm("turn", MESSAGE, env=env).returncode == 0
    _wait_running(env)
    assert not failed.exists()
