"""`hrm serve`: a governed assistant behind an OpenAI-compatible API, with a web view of why.

Needs the ``serve`` extra (Starlette, uvicorn, Jinja2). `KeyStore` and `ServeSettings` need
nothing beyond hrm itself, so keys can be managed where the extra is not installed.
"""

from __future__ import annotations

from hrm._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hrm.server.app import create_app
    from hrm.server.keys import KeyStore, Principal
    from hrm.server.runner import serve
    from hrm.server.settings import ServeSettings

__all__ = ["KeyStore", "Principal", "ServeSettings", "create_app", "serve"]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "KeyStore": "keys",
        "Principal": "keys",
        "ServeSettings": "settings",
        "create_app": "app",
        "serve": "runner",
    },
)
