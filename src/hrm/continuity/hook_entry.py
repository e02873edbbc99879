"""`hrm hook [EVENT]`: one Claude Code hook invocation, from stdin bytes to exit code 0.

`hrm.cli.__main__` calls `run_hook` before typer or rich are imported, because Claude Code starts
this process on every prompt. Module level imports only the standard library's cheapest modules
and the record base of `hrm.continuity.skills`; the protocol, the orchestrator and whatever an
event needs are imported when it runs. A UserPromptSubmit answered from the skill rules alone
imports neither `typing`, `dataclasses` nor `logging` (``tests/continuity/test_hook_entry.py``
checks it): each costs a fraction of the interpreter's own start-up.

The contract (reference/claude-code-hooks.md §9): read at most `MAX_INPUT_BYTES` of stdin, answer
with nothing or exactly one JSON object on stdout, always exit 0, never block because of our own
failure. Failures and a one-line record of every invocation go to ``<home>/logs/hooks.log``
(JSON Lines, scrubbed); stderr gets a line only when the home itself is unusable.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

from hrm._values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import IO, Any

    from hrm.continuity.hook_protocol import HookEvent, ParsedHook
    from hrm.continuity.hooks import HookOrchestrator, HookSettings
    from hrm.home import HRMHome

__all__ = [
    "EXIT_OK",
    "HOOK_LOG_NAME",
    "MAX_INPUT_BYTES",
    "HookRun",
    "answer_hook",
    "read_input",
    "run_hook",
]

EXIT_OK = 0
"""The only exit code `hrm hook` uses: decisions travel as JSON, failures as silence."""
MAX_INPUT_BYTES = 8 << 20
"""At most 8 MB of stdin is read; a larger payload is answered with silence."""
HOOK_LOG_NAME = "hooks.log"
_LOG_ROTATE_BYTES = 5 << 20
_LOG_MESSAGE_CHARS = 2000
_UUID = r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"

_USAGE = """\
usage: hrm hook [EVENT] < payload.json

Answer one Claude Code hook. EVENT (optional; the payload's hook_event_name wins) is one of:
  session-start, user-prompt-submit, post-tool-use, pre-compact, stop, session-end
Reads the hook JSON on standard input and prints nothing or one JSON object. Always exits 0.
Register it in Claude Code with `hrm install claude-code`.
"""


class HookRun(Value):
    """The result of answering one payload (what `run_hook` prints, and what it left running)."""

    _fields = ("output", "event", "abandoned_workers")
    __slots__ = _fields
    output: str | None
    """The stdout text: one JSON object, or None for silence."""
    event: str | None
    abandoned_workers: int
    """Workers that overran their budget; the process should exit without waiting for them."""

    def __init__(
        self, output: str | None, event: str | None = None, abandoned_workers: int = 0
    ) -> None:
        self._init(output=output, event=event, abandoned_workers=abandoned_workers)


def run_hook(argv: list[str], *, exit_process: bool = False) -> int:
    """Run one hook invocation as a process: stdin → stdout, exit code 0. Never raises.

    With `exit_process` (the console script), the process ends as soon as the answer is
    flushed, without the interpreter's teardown: finalising every loaded module costs ~4 ms, a
    tenth of the hook, for nothing it needs — the log is written a line per ``write``, and the
    databases and files it used are closed by then.
    """
    if argv[:1] in (["-h"], ["--help"]):
        sys.stdout.write(_USAGE)
        return EXIT_OK
    run = HookRun(None)
    try:
        raw, oversized = read_input(sys.stdin.buffer)
        run = answer_hook(raw, argv, oversized=oversized)
        if run.output is not None:
            _write_answer(sys.stdout, run.output)
    except BaseException as exc:  # the protocol forbids a traceback or a non-zero exit
        _stderr_line(f"hrm hook: internal failure: {type(exc).__name__}")
    if run.abandoned_workers or exit_process:
        # An abandoned worker (e.g. a slow search) overran its budget: its result is no longer
        # wanted, and waiting for interpreter shutdown would spend the time the budget saved.
        _flush_quietly()
        os._exit(EXIT_OK)
    return EXIT_OK


def read_input(stream: IO[bytes], limit: int = MAX_INPUT_BYTES) -> tuple[bytes, bool]:
    """Read stdin up to `limit` bytes: ``(data, False)``, or ``(b"", True)`` past the limit.

    An oversized payload is answered with silence; the rest of it is left unread.
    """
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = stream.read(min(1 << 20, limit + 1 - size))
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)
        size += len(chunk)
    return b"", True


def answer_hook(
    raw: bytes,
    argv: list[str],
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    oversized: bool = False,
) -> HookRun:
    """Answer one payload: parse, run the event's handler, render. Never raises.

    Args:
        raw: The bytes read from stdin.
        argv: The arguments after ``hook`` (the optional event name).
        environ: The environment (``HRM_HOME``, ``CLAUDE_PROJECT_DIR``); default `os.environ`.
        cwd: The process directory; default `Path.cwd()`.
        oversized: The payload exceeded `MAX_INPUT_BYTES` and was not read (logged).
    """
    started = time.monotonic()
    env = os.environ if environ is None else environ
    from hrm.continuity.hook_protocol import event_from_argument, parse_hook_input

    argument = argv[0] if argv else None
    argument_event = event_from_argument(argument)
    parsed = parse_hook_input(raw, argument_event=argument_event, environ=dict(env), cwd=cwd)
    home = _open_home(env)
    if home is None:
        return HookRun(None)
    log = _HookLog(home.logs_dir / HOOK_LOG_NAME)
    _tighten_home(home, log)
    if argument and argument_event is None:
        log.write("warning", None, f"unknown event argument {argument[:80]!r}; using the input")
    if oversized:
        log.write("warning", argument_event, f"input larger than {MAX_INPUT_BYTES} bytes ignored")
    elif parsed.problem:
        log.write("warning", parsed.event, parsed.problem, input_bytes=len(raw))
    for note in parsed.notes:
        log.write("info", parsed.event, note)
    if parsed.request is None:
        return HookRun(None, event=parsed.event.value if parsed.event else None)
    detach = _capture_library_warnings(parsed.request.event, log)
    try:
        return _dispatch(parsed, home, log, env, started)
    finally:
        detach()


def _tighten_home(home: HRMHome, log: _HookLog) -> None:
    """A home other users can read is made private; the warning goes to the hook's log."""
    import stat

    from hrm._private import home_tightened_message, tighten_home

    try:
        mode = stat.S_IMODE(os.stat(home.root).st_mode)
        changed = tighten_home(home.root, warn=False)
    except OSError:
        return
    if changed:
        log.write("warning", None, home_tightened_message(str(home.root), mode, changed))


def _capture_library_warnings(event: HookEvent, log: _HookLog) -> Callable[[], None]:
    """Send hrm's own warnings to the hook log while the hook runs; return how to stop.

    Stderr is not read and stdout is the protocol's, so the log is their only place. The
    orchestrator, the skill matcher and the learnings search never use `logging` (they report
    through `HookOrchestrator.failures`; the learnings repository logs only when it stores,
    decays or misses its preference classifier); the collaborators behind handoffs and ledgers
    do. A UserPromptSubmit reaches none of them, so it skips importing `logging` (~9 ms, as
    much as the interpreter's start) unless something already did.
    """
    from hrm.continuity.hook_protocol import HookEvent

    quiet = event is HookEvent.USER_PROMPT_SUBMIT and "logging" not in sys.modules
    if quiet:
        return _nothing
    import logging

    class _LogHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                log.write(record.levelname.lower(), None, record.getMessage(), logger=record.name)
            except Exception:  # logging must never break the hook
                self.handleError(record)

    handler = _LogHandler(logging.WARNING)
    library_logger = logging.getLogger("hrm")
    library_logger.addHandler(handler)
    return lambda: library_logger.removeHandler(handler)


def _nothing() -> None:
    return None


def _dispatch(
    parsed: ParsedHook, home: HRMHome, log: _HookLog, env: Mapping[str, str], started: float
) -> HookRun:
    from hrm.continuity.hook_protocol import render_response

    request = parsed.request
    if request is None:
        return HookRun(None)
    event = request.event
    orchestrator = _orchestrator(home, _project_of(request.payload), env, log, event)
    session_id = getattr(request.payload, "session_id", "")
    try:
        response = _handler(orchestrator, event)(request.payload)
        output = render_response(event, response)
    except Exception as exc:  # hooks never raise: silence, and the log says why
        log.write("error", event, f"{type(exc).__name__}: {exc}", session_id=session_id)
        return HookRun(None, event=event.value, abandoned_workers=orchestrator.abandoned_workers)
    finally:
        if not orchestrator.abandoned_workers:
            orchestrator.close()
    for what, failure in orchestrator.failures:
        detail = f"{what}: {type(failure).__name__}: {failure}"
        log.write("warning", event, detail, session_id=session_id)
    log.write_summary(
        event,
        "answered" if output else "no answer",
        session_id=session_id,
        elapsed_ms=round((time.monotonic() - started) * 1000),
        metadata=response.metadata,
    )
    return HookRun(output, event=event.value, abandoned_workers=orchestrator.abandoned_workers)


def _handler(orchestrator: HookOrchestrator, event: HookEvent) -> Any:
    from hrm.continuity.hook_protocol import HookEvent

    return {
        HookEvent.SESSION_START: orchestrator.on_session_start,
        HookEvent.USER_PROMPT_SUBMIT: orchestrator.on_user_prompt_submit,
        HookEvent.POST_TOOL_USE: orchestrator.on_post_write,
        HookEvent.PRE_COMPACT: orchestrator.on_pre_compact,
        HookEvent.STOP: orchestrator.on_stop,
        HookEvent.SESSION_END: orchestrator.on_session_end,
    }[event]


def _project_of(payload: object) -> Path:
    project = getattr(payload, "project_path", None)
    return project if isinstance(project, Path) else Path.cwd()


def _orchestrator(
    home: HRMHome, project: Path, env: Mapping[str, str], log: _HookLog, event: HookEvent
) -> HookOrchestrator:
    from hrm.continuity.hooks import HookOrchestrator

    return HookOrchestrator(home, _settings(home, project, env, log, event))


def _settings(
    home: HRMHome, project: Path, env: Mapping[str, str], log: _HookLog, event: HookEvent
) -> HookSettings:
    """The continuity settings of this home and project; defaults if the config is unusable."""
    from hrm.continuity.hooks import HookSettings

    if not _has_configuration(home, project, env):
        return HookSettings()  # the defaults, without importing YAML and the config machinery
    files_only = not any(_is_config_variable(var) for var in env)
    key = _settings_key(home, project) if files_only else None
    cached = _read_cached_settings(home, project, key) if key is not None else None
    if cached is not None:
        return cached
    try:
        from hrm.config import load_config

        resolved = load_config(home, project, environ=env, announce=False)
        ignored = resolved.ignored[0] if resolved.ignored else None
        settings = HookSettings.from_continuity(resolved.config.continuity, ignored)
    except Exception as exc:
        log.write("warning", event, f"config not loaded, using defaults: {exc}")
        return HookSettings()
    if key is not None:
        _write_cached_settings(home, project, key, settings)
    return settings


_SETTINGS_CACHE_FORMAT = 1
"""Bump when `HookSettings` changes shape; older cache files are then ignored."""
_RACY_NS = 2_000_000_000
"""Config files changed more recently than this are read without the cache (git's racy rule)."""


def _settings_key(home: HRMHome, project: Path) -> str | None:
    """What the settings depend on when no ``HRM_*`` variable is set: the two config files,
    and the trust store, which decides what the project's file may set (D216).

    Loading the configuration imports YAML and the config machinery (~30 ms, twice the
    interpreter's start-up), so the hook keeps the continuity settings it derived, keyed by each
    file's size, modification and change times and inode. The modules that define the defaults
    and the mapping are part of the key, so an upgrade of hrm invalidates it; environment
    overrides are never cached.
    """
    package = Path(__file__).resolve().parent.parent
    code = (
        package / "config.py", package / "_config_trust.py", package / "continuity" / "hooks.py"
    )
    parts = [str(_SETTINGS_CACHE_FORMAT)]
    trust = home.root / "trust.json"  # `hrm.trust.TRUST_FILE`, not imported on this path
    for path in (home.config_path, project / ".hrm" / "config.yaml", trust, *code):
        try:
            st = path.stat()
        except FileNotFoundError:
            parts.append(f"{path}|-")
            continue
        except OSError:
            return None
        if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < _RACY_NS:
            return None  # changed within a clock tick or two: another change could keep its key
        parts.append(f"{path}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{st.st_ino}")
    return "\n".join(parts)


def _settings_cache_file(home: HRMHome, project: Path) -> Path:
    from hrm.continuity.skills import _path_digest  # one cache file per project

    return home.cache_dir / f"hook-settings-{_path_digest(project)}.json"


def _read_cached_settings(home: HRMHome, project: Path, key: str) -> HookSettings | None:
    from hrm.continuity.hooks import HookSettings

    try:
        doc = json.loads(_settings_cache_file(home, project).read_bytes())
        if not isinstance(doc, dict) or doc.get("key") != key:
            return None
        fields = dict(doc["settings"])
        fields["skill_rules"] = tuple(str(rule) for rule in fields["skill_rules"])
        return HookSettings(**fields)
    except (OSError, ValueError, TypeError, KeyError):
        return None  # no cache, another project's or version's, or damaged: load the config


def _write_cached_settings(home: HRMHome, project: Path, key: str, settings: HookSettings) -> None:
    fields = {name: getattr(settings, name) for name in settings._fields}
    target = _settings_cache_file(home, project)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        from hrm._private import make_private_dirs, write_private

        make_private_dirs(home.cache_dir)
        write_private(temporary, json.dumps({"key": key, "settings": fields}).encode())
        os.replace(temporary, target)
    except (OSError, ValueError, TypeError):  # a cache is an optimisation, never a failure
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            return


_CONFIG_ENV_IGNORED = frozenset({"HRM_HOME", "HRM_DEBUG", "HRM_LOG_LEVEL"})


def _is_config_variable(name: str) -> bool:
    return name.startswith("HRM_") and name not in _CONFIG_ENV_IGNORED


def _has_configuration(home: HRMHome, project: Path, env: Mapping[str, str]) -> bool:
    """Whether any config file or ``HRM_*`` variable could change a default.

    Most hook calls run on a home whose ``config.yaml`` is still the commented template; loading
    the configuration then costs a YAML import for nothing. Any doubt answers True.
    """
    if any(_is_config_variable(var) for var in env):
        return True
    from hrm._paths import read_bytes
    from hrm.errors import ErrorCode, HRMError

    for path in (home.config_path, project / ".hrm" / "config.yaml"):
        try:
            # Never a blocking open: a project's config.yaml may be a FIFO (D131).
            head = read_bytes(path, max_bytes=65_536, truncate=True, what="config file")
        except HRMError as exc:
            if exc.code is ErrorCode.SOURCE_NOT_FOUND:
                continue
            return True  # the config loader reports what is wrong with it
        for line in head.splitlines():
            text = line.strip()
            if text and not text.startswith(b"#"):
                return True
        if len(head) == 65_536:
            return True
    return False


def _open_home(env: Mapping[str, str]) -> HRMHome | None:
    """The home (``$HRM_HOME`` or ``~/.hrm``), created quietly if missing; None if unusable."""
    try:
        from hrm._private import make_private_dirs
        from hrm.home import ENV_HOME, HRMHome, initialize

        raw = env.get(ENV_HOME)
        home = HRMHome.resolve(raw) if raw else HRMHome(Path.home() / ".hrm")
        if not home.root.is_dir():
            initialize(home)
        make_private_dirs(home.logs_dir)
        return home
    except BaseException as exc:  # an unusable home means silence, with a word on stderr
        _stderr_line(f"hrm hook: home unusable ({type(exc).__name__}: {exc}); answering nothing")
        return None


class _HookLog:
    """Append-only JSON Lines log of hook invocations; one ``write`` call per line.

    Several hook processes append at once: each line is a single ``O_APPEND`` write, which POSIX
    keeps whole for lines this short. The log rotates once past 5 MB (``hooks.log.1``).
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, level: str, event: object, message: str, **fields: Any) -> None:
        try:
            from hrm.scrubbing import scrub, scrub_text

            record: dict[str, Any] = {
                "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "level": level,
                "event": getattr(event, "value", event),
                "pid": os.getpid(),
                # Scrubbed before it is cut: a secret cut in two is no longer recognisable.
                "message": scrub_text(message[: _LOG_MESSAGE_CHARS + 1024])[:_LOG_MESSAGE_CHARS],
            }
            record.update({k: v for k, v in fields.items() if v not in (None, "")})
            line = json.dumps(scrub(record), ensure_ascii=True, default=str) + "\n"
        except Exception as exc:  # logging must never break the hook
            _stderr_line(f"hrm hook: cannot log to {self.path}: {type(exc).__name__}")
            return
        self._append(line)

    def write_summary(
        self,
        event: object,
        message: str,
        *,
        session_id: str,
        elapsed_ms: int,
        metadata: Mapping[str, Any],
    ) -> None:
        """The one line every invocation writes, built only from values that cannot hold a secret.

        Numbers, booleans and a UUID-shaped session id pass as they are; anything else sends the
        line through the scrubber like every other line. Most hooks then skip importing it.
        """
        numbers = {
            k: v for k, v in metadata.items() if v is None or isinstance(v, bool | int | float)
        }
        plain_id = session_id == "" or re.fullmatch(_UUID, session_id) is not None
        if len(numbers) < len(metadata) or not plain_id:
            self.write("info", event, message, session_id=session_id, metadata=dict(metadata),
                       elapsed_ms=elapsed_ms)
            return
        record = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "level": "info",
            "event": getattr(event, "value", event),
            "pid": os.getpid(),
            "message": message,
            "session_id": session_id or None,
            "elapsed_ms": elapsed_ms,
            "metadata": numbers,
        }
        self._append(json.dumps({k: v for k, v in record.items() if v is not None}) + "\n")

    def _append(self, line: str) -> None:
        try:
            self._rotate_if_large()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line.encode("ascii"))
            finally:
                os.close(fd)
        except Exception as exc:  # logging must never break the hook
            _stderr_line(f"hrm hook: cannot write {self.path}: {type(exc).__name__}")

    def _rotate_if_large(self) -> None:
        try:
            if self.path.stat().st_size > _LOG_ROTATE_BYTES:
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        except OSError:
            return


def _write_answer(stream: IO[str], text: str) -> None:
    stream.write(text)
    stream.write("\n")
    stream.flush()


def _stderr_line(text: str) -> None:
    try:
        sys.stderr.write(text.replace("\n", " ")[:500] + "\n")
        sys.stderr.flush()
    except Exception:  # stderr may be closed; nothing else to tell
        return


def _flush_quietly() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed stream has nothing left to flush
            continue
