"""Tracing (001 §7): spans and events every layer emits, written as JSON Lines when enabled.

A span is a context manager: entering emits a ``started`` event, leaving emits ``completed`` or,
when an exception escapes, ``error`` (the exception is re-raised, never swallowed). The current
span lives in a `contextvars.ContextVar`, so nesting gives each span its parent's id and the
parent survives into worker threads started with ``contextvars.copy_context().run``.

Ids have the form ``{hrm}_{timestamp}_{random}`` (e.g. ``altitude_20260102T030405123Z_9f3a2c1b``).
Traces carry summaries, not payloads: inputs and outputs are cut to `Tracer.summary_chars`
characters, and every string is scrubbed of secrets before anything sees it.

A disabled tracer costs one attribute test per call: `Tracer.span` returns a shared no-op span
and `Tracer.event` returns at once, with no id generation and no clock read. Tests use
`capture_traces` to collect events in memory, which also switches the tracer on for its block.

The process-wide tracer (`get_tracer` / `set_tracer`) is an explicit global by design (001 §7
calls the Tracer an observability singleton); components may also receive a `Tracer` directly.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from hrm._private import make_private_dirs
from hrm._process import random_hex
from hrm.errors import HRMError
from hrm.scrubbing import scrub, scrub_text
from hrm.types import Clock, system_clock

if TYPE_CHECKING:
    from hrm.config import HRMConfig
    from hrm.home import HRMHome

__all__ = [
    "STATUSES",
    "SpanContext",
    "TraceEvent",
    "Tracer",
    "capture_traces",
    "current_span_id",
    "get_tracer",
    "set_tracer",
]

logger = logging.getLogger(__name__)

STATUSES = frozenset({"started", "completed", "error", "info"})
"""The statuses a `TraceEvent` may carry (001 §7)."""

_DEFAULT_SUMMARY_CHARS = 200
_SCRUB_MARGIN = 16_384
_METADATA_STRING_CHARS = 1000

Sink = Callable[["TraceEvent"], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceEvent:
    """One trace record (001 §7.1)."""

    trace_id: str
    """The span's id (shared by its ``started`` and closing events) or the event's own id."""
    parent_id: str | None
    """The enclosing span's id, if any."""
    hrm: str
    """altitude | reasoning | focus | learning (or another hrm component family)."""
    operation: str
    component: str
    status: str
    """started | completed | error | info."""
    timestamp: datetime
    duration_ms: int | None
    input_summary: str | None
    output_summary: str | None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the line written to the trace file."""
        return {
            "trace_id": self.trace_id,
            "parent_id": self.parent_id,
            "hrm": self.hrm,
            "operation": self.operation,
            "component": self.component,
            "status": self.status,
            "timestamp": self.timestamp.isoformat(),
            "duration_ms": self.duration_ms,
            "input_summary": self.input_summary,
            "output_summary": self.output_summary,
            "metadata": self.metadata,
        }


_CURRENT: ContextVar[SpanContext | None] = ContextVar("hrm_current_span", default=None)


def current_span_id() -> str | None:
    """The id of the span the caller runs inside, or None."""
    span = _CURRENT.get()
    return span.id if span is not None else None


class SpanContext:
    """A span of work: use as a context manager, obtained from `Tracer.span`."""

    __slots__ = (
        "_input",
        "_metadata",
        "_output",
        "_parent",
        "_start",
        "_token",
        "_tracer",
        "component",
        "hrm",
        "id",
        "operation",
    )

    def __init__(
        self,
        tracer: Tracer | None,
        hrm: str,
        operation: str,
        component: str,
        input_summary: str | None,
    ) -> None:
        self._tracer = tracer
        self.hrm = hrm
        self.operation = operation
        self.component = component
        self.id: str | None = None
        """Set when the span is entered."""
        self._input = input_summary
        self._output: str | None = None
        self._metadata: dict[str, Any] = {}
        self._parent: str | None = None
        self._start = 0.0
        self._token: Token[SpanContext | None] | None = None

    def __enter__(self) -> SpanContext:
        tracer = self._tracer
        if tracer is None:
            return self
        parent = _CURRENT.get()
        self._parent = parent.id if parent is not None else None
        self.id = tracer.generate_id(self.hrm)
        self._token = _CURRENT.set(self)
        self._start = time.perf_counter()
        tracer._emit(self._event("started", duration_ms=None, output=None, metadata={}))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        tracer = self._tracer
        if tracer is None:
            return
        duration_ms = int((time.perf_counter() - self._start) * 1000)
        if self._token is not None:
            try:
                _CURRENT.reset(self._token)
            except ValueError:  # left in another context than it was entered in
                _CURRENT.set(None)
        metadata = dict(self._metadata)
        status = "completed"
        if exc is not None:
            status = "error"
            metadata["error_type"] = type(exc).__name__
            metadata["error"] = str(exc)
            if isinstance(exc, HRMError):
                metadata["error_code"] = exc.code.value
        tracer._emit(
            self._event(status, duration_ms=duration_ms, output=self._output, metadata=metadata)
        )

    def set_output(self, output: str) -> None:
        """Record a summary of what the span produced (cut to the tracer's summary length)."""
        self._output = output

    def add_metadata(self, key: str, value: Any) -> None:
        """Attach a value to the span's closing event (scrubbed; long strings cut)."""
        self._metadata[key] = value

    def _event(
        self, status: str, *, duration_ms: int | None, output: str | None, metadata: dict[str, Any]
    ) -> TraceEvent:
        tracer = self._tracer
        if tracer is None:  # pragma: no cover - only real spans build events
            raise HRMError.internal("a no-op span cannot build trace events")
        return TraceEvent(
            trace_id=self.id or "",
            parent_id=self._parent,
            hrm=self.hrm,
            operation=self.operation,
            component=self.component,
            status=status,
            timestamp=tracer.clock(),
            duration_ms=duration_ms,
            input_summary=tracer.summarize(self._input),
            output_summary=tracer.summarize(output),
            metadata=_clean_metadata(metadata),
        )


class _NoOpSpan(SpanContext):
    """The span a disabled tracer hands out: shared, stateless, free."""

    __slots__ = ()

    def __enter__(self) -> SpanContext:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    def set_output(self, output: str) -> None:
        return None

    def add_metadata(self, key: str, value: Any) -> None:
        return None


_NOOP_SPAN = _NoOpSpan(None, "", "", "", None)


class Tracer:
    """Creates spans and events and writes them where configured (001 §7.1).

    Thread-safe: events from several threads are written as whole lines; sinks are called in
    the emitting thread.
    """

    def __init__(
        self,
        enabled: bool = False,
        path: Path | None = None,
        *,
        clock: Clock = system_clock,
        summary_chars: int = _DEFAULT_SUMMARY_CHARS,
    ) -> None:
        """Create a tracer.

        Args:
            enabled: Whether spans and events are recorded at all.
            path: The JSON Lines file to append to when enabled (None: in-memory sinks only).
            clock: Source of event timestamps and id timestamps.
            summary_chars: Longest input/output summary kept.
        """
        self.enabled = enabled
        self.path = Path(path) if path is not None else None
        self.clock = clock
        self.summary_chars = summary_chars
        self._sinks: list[Sink] = []
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._file_failed = False
        self._active = enabled

    @classmethod
    def from_config(
        cls, config: HRMConfig, home: HRMHome | None = None, *, clock: Clock = system_clock
    ) -> Tracer:
        """A tracer for ``trace_enabled`` / ``trace_file`` (relative: in the home's logs)."""
        path = Path(config.trace_file).expanduser()
        if not path.is_absolute():
            from hrm.home import HRMHome

            path = (home or HRMHome.resolve()).logs_dir / path
        return cls(enabled=config.trace_enabled, path=path, clock=clock)

    @property
    def active(self) -> bool:
        """True when spans and events are recorded (enabled, or a capture is running)."""
        return self._active

    def span(
        self, hrm: str, operation: str, component: str, input_data: str | None = None
    ) -> SpanContext:
        """A new span (context manager) nested under the current one."""
        if not self._active:
            return _NOOP_SPAN
        return SpanContext(self, hrm, operation, component, input_data)

    def event(
        self, hrm: str, operation: str, status: str = "info", data: dict[str, Any] | None = None
    ) -> None:
        """Record a single event inside the current span.

        Raises:
            HRMError: ``VALIDATION_FAILED`` for a status outside `STATUSES` (when active).
        """
        if not self._active:
            return
        if status not in STATUSES:
            raise HRMError.validation_failed(
                f"Unknown trace status {status!r}: use one of {', '.join(sorted(STATUSES))}",
                status=status,
            )
        parent = _CURRENT.get()
        self._emit(
            TraceEvent(
                trace_id=self.generate_id(hrm),
                parent_id=parent.id if parent is not None else None,
                hrm=hrm,
                operation=operation,
                component=parent.component if parent is not None else hrm,
                status=status,
                timestamp=self.clock(),
                duration_ms=None,
                input_summary=None,
                output_summary=None,
                metadata=_clean_metadata(data or {}),
            )
        )

    def generate_id(self, hrm: str) -> str:
        """A trace id ``{hrm}_{timestamp}_{random}``: ``focus_20260102T030405123Z_1a2b3c4d``."""
        moment = self.clock()
        stamp = (  # fields, not strftime: one id a turn, and strftime pads no year below 1000
            f"{moment.year:04d}{moment.month:02d}{moment.day:02d}T{moment.hour:02d}"
            f"{moment.minute:02d}{moment.second:02d}{moment.microsecond // 1000:03d}Z"
        )
        return f"{hrm}_{stamp}_{random_hex(8)}"

    def summarize(self, text: str | None) -> str | None:
        """`text` scrubbed and cut to `summary_chars` (with an ellipsis when cut)."""
        if text is None:
            return None
        # Scrubbed before it is cut: a secret cut short no longer matches its family's pattern
        # and would be kept as it is. A margin far longer than any secret (a PEM key is ~3 KB)
        # bounds the scrubbing of a long text to what can reach the summary.
        cleaned = scrub_text(str(text)[: self.summary_chars + _SCRUB_MARGIN])
        if len(cleaned) <= self.summary_chars:
            return cleaned
        return cleaned[: max(0, self.summary_chars - 1)] + "…"

    @contextlib.contextmanager
    def capture(self) -> Iterator[list[TraceEvent]]:
        """Collect this tracer's events in a list for the block (switches it on meanwhile)."""
        events: list[TraceEvent] = []
        sink = events.append
        self.add_sink(sink)
        try:
            yield events
        finally:
            self.remove_sink(sink)

    def add_sink(self, sink: Sink) -> None:
        """Also hand every event to `sink` (called in the emitting thread)."""
        with self._lock:
            self._sinks.append(sink)
            self._active = True

    def remove_sink(self, sink: Sink) -> None:
        """Stop handing events to `sink`."""
        with self._lock:
            with contextlib.suppress(ValueError):
                self._sinks.remove(sink)
            self._active = self.enabled or bool(self._sinks)

    def close(self) -> None:
        """Close the trace file (reopened on the next event)."""
        with self._lock:
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None

    def _emit(self, event: TraceEvent) -> None:
        with self._lock:
            sinks = list(self._sinks)
        for sink in sinks:
            sink(event)
        if self.enabled and self.path is not None and not self._file_failed:
            self._write(self.path, event)

    def _write(self, path: Path, event: TraceEvent) -> None:
        line = (json.dumps(event.to_dict(), ensure_ascii=False, default=str) + "\n").encode()
        with self._lock:
            try:
                if self._fd is None:
                    make_private_dirs(path.parent)
                    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
                    self._fd = os.open(path, flags, 0o600)
                os.write(self._fd, line)  # one write per line: whole lines even across processes
            except OSError as exc:
                # Tracing must never break the work it observes: report once, stop writing.
                self._file_failed = True
                logger.warning("trace file %s disabled: %s", self.path, exc)


def _clean_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """Scrubbed, JSON-safe metadata with long strings cut."""
    return {str(key): _clean_value(value) for key, value in scrub(metadata).items()}


def _clean_value(value: Any) -> Any:
    if isinstance(value, str):
        if len(value) > _METADATA_STRING_CHARS:
            return value[: _METADATA_STRING_CHARS - 1] + "…"
        return value
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, dict):
        return {str(k): _clean_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_value(v) for v in value]
    return _clean_value(scrub_text(str(value)))


_TRACER = Tracer()


def get_tracer() -> Tracer:
    """The process-wide tracer (disabled until `set_tracer` installs another)."""
    return _TRACER


def set_tracer(tracer: Tracer) -> Tracer:
    """Install `tracer` as the process-wide tracer; return the previous one."""
    global _TRACER
    previous, _TRACER = _TRACER, tracer
    return previous


@contextlib.contextmanager
def capture_traces(tracer: Tracer | None = None) -> Iterator[list[TraceEvent]]:
    """Collect the events of `tracer` (default: the process-wide one) in a list, for tests."""
    with (tracer or get_tracer()).capture() as events:
        yield events
