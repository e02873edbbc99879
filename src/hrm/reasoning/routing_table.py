"""The routing table as data (issue 33, D260): request class x stance -> what the turn does.

The table lives in ``hrm/data/routing/table.toml`` so that how hrm routes is read, reviewed and
changed in one place, not in scoring weights spread over the router. `load_routing_table`
parses it strictly (an unknown class, stance, action, strategy or reducer is an error naming
the file and the row) and `RoutingTable.lookup` answers one question: for this class in this
stance, which `Route`. A class with no row for the stance takes its ``any`` row; every class
must have one, so a lookup never fails.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal, cast

from hrm.errors import HRMError
from hrm.reasoning.types import STRATEGIES
from hrm.types import ReducerType, Stance

__all__ = [
    "ACTIONS",
    "REQUEST_CLASSES",
    "Route",
    "RoutingTable",
    "load_routing_table",
    "parse_routing_table",
]

RouteAction = Literal["respond_direct", "execute_plan", "run_agents", "ask"]
ACTIONS: tuple[RouteAction, ...] = ("respond_direct", "execute_plan", "run_agents", "ask")
"""What a route may do: answer, run a plan, run agents with a reducer, or ask."""

REQUEST_CLASSES = ("simple", "multi_step", "needs_perspectives", "high_stakes", "conflict")
"""The request classes of issue 33, as the classifier names them."""

CANDIDATE_FOR: dict[str, str] = {
    "respond_direct": "respond_direct",
    "execute_plan": "execute_plan",
    "run_agents": "delegate_agents",
    "ask": "ask_clarify",
}
"""The router's candidate id that carries out each route action."""

_FILE = "table.toml"
_ANY = "any"


@dataclass(frozen=True, slots=True)
class Route:
    """One row: what a request of `request_class` does in `stance` (``any``: every stance)."""

    request_class: str
    stance: str
    action: RouteAction
    strategy: str
    reducer: ReducerType | None = None
    commit: bool = False
    """Run under a commitment, made before Focus governs unless one is active."""
    enter: Stance | None = None
    """A stance to move to through its gate before acting."""

    @property
    def candidate_id(self) -> str:
        """The router's candidate that carries the route out."""
        return CANDIDATE_FOR[self.action]

    def to_record(self) -> dict[str, Any]:
        """The row as the decision record shows it."""
        return {
            "class": self.request_class,
            "stance": self.stance,
            "action": self.action,
            "strategy": self.strategy,
            "reducer": None if self.reducer is None else self.reducer.value,
            "commit": self.commit,
            "enter": None if self.enter is None else self.enter.value,
        }

    def describe(self) -> str:
        """One line for the strategy's reason and /why."""
        reducer = f" ({self.reducer.value})" if self.reducer is not None else ""
        return (
            f"routing table: {self.request_class} in {self.stance} -> {self.action}{reducer}"
        )


@dataclass(frozen=True, slots=True)
class RoutingTable:
    """Every route, by class and stance."""

    routes: dict[tuple[str, str], Route]

    def lookup(self, request_class: str, stance: Stance | str | None) -> Route:
        """The route for `request_class` in `stance` (its ``any`` row without its own)."""
        name = Stance(stance).value if stance is not None else _ANY
        found = self.routes.get((request_class, name)) or self.routes.get((request_class, _ANY))
        if found is None:
            raise HRMError.validation_failed(
                f"the routing table has no row for request class {request_class!r}; "
                f"known: {', '.join(sorted({c for c, _ in self.routes}))}",
                field="request_class",
            )
        return found


@cache
def load_routing_table() -> RoutingTable:
    """The package's table (``hrm/data/routing/table.toml``), parsed once per process.

    Raises:
        HRMError: PARSE_ERROR naming the file and the row that is wrong.
    """
    source = resources.files("hrm").joinpath("data", "routing", _FILE)
    text = source.read_text(encoding="utf-8")
    return parse_routing_table(text, source=f"hrm/data/routing/{_FILE}")


def parse_routing_table(text: str, *, source: str = _FILE) -> RoutingTable:
    """A table from TOML text; strict (module docstring)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HRMError.parse_error(str(exc), path=source) from exc
    rows = data.get("route")
    if not isinstance(rows, list) or not rows:
        raise HRMError.parse_error("no [[route]] rows", path=source)
    routes: dict[tuple[str, str], Route] = {}
    for number, row in enumerate(rows, start=1):
        route = _route(row, f"{source} route {number}")
        key = (route.request_class, route.stance)
        if key in routes:
            raise HRMError.parse_error(f"route {number} repeats {key}", path=source)
        routes[key] = route
    missing = [c for c in REQUEST_CLASSES if (c, _ANY) not in routes]
    if missing:
        raise HRMError.parse_error(
            f"every class needs a stance = \"any\" row; missing for {', '.join(missing)}",
            path=source,
        )
    return RoutingTable(routes)


_KEYS = frozenset({"class", "stance", "action", "strategy", "reducer", "commit", "enter"})


def _route(row: Any, where: str) -> Route:
    if not isinstance(row, dict):
        raise HRMError.parse_error("a route must be a table", path=where)
    unknown = sorted(set(row) - _KEYS)
    if unknown:
        raise HRMError.parse_error(f"unknown keys {unknown}; known: {sorted(_KEYS)}", path=where)
    request_class = _one_of(row, "class", REQUEST_CLASSES, where)
    stance = _one_of(row, "stance", (_ANY, *(s.value for s in Stance)), where)
    action = cast("RouteAction", _one_of(row, "action", ACTIONS, where))
    strategy = _one_of(row, "strategy", STRATEGIES, where)
    reducer_name = row.get("reducer")
    reducer = None
    if reducer_name is not None:
        reducer = ReducerType(_one_of(row, "reducer", tuple(r.value for r in ReducerType), where))
    if (action == "run_agents") != (reducer is not None):
        raise HRMError.parse_error("run_agents needs a reducer, and only it has one", path=where)
    commit = row.get("commit", False)
    if not isinstance(commit, bool):
        raise HRMError.parse_error("commit must be true or false", path=where)
    enter = row.get("enter")
    if enter is not None:
        enter = Stance(_one_of(row, "enter", tuple(s.value for s in Stance), where))
    return Route(request_class, stance, action, strategy, reducer, commit, enter)


def _one_of(row: dict[str, Any], key: str, allowed: tuple[str, ...], where: str) -> str:
    value = row.get(key)
    if value not in allowed:
        raise HRMError.parse_error(
            f"{key} = {value!r} is not one of {', '.join(allowed)}", path=where
        )
    return str(value)
