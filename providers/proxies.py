"""Which proxy the environment sends an endpoint's requests through, and how messages name
it: its URL (a password hidden) and the variable that set it."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

__all__ = ["named_proxy", "proxy_route", "shown_proxy"]


def proxy_route(base_url: str) -> tuple[str, str] | None:
    """The proxy requests to `base_url` go through and the variable that says so
    (`HTTPS_PROXY`, `all_proxy`, ... as it is spelt in the environment), or None. The
    lower-case spelling wins, as urllib reads them."""
    import urllib.request  # with http.client and email: only once a model is asked

    parts = urlsplit(base_url)
    for scheme in (parts.scheme, "all"):
        for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY"):
            proxy = os.environ.get(name)
            if proxy:
                if urllib.request.proxy_bypass(parts.hostname or ""):
                    return None
                return proxy, name
    return None


def named_proxy(base_url: str) -> str:
    """The proxy requests to `base_url` go through, as messages name it (`shown_proxy`), or
    '' when none does."""
    route = proxy_route(base_url)
    return "" if route is None else shown_proxy(route)


def shown_proxy(route: tuple[str, str]) -> str:
    """A proxy route as messages name it: the URL, its password hidden, and its variable."""
    proxy, name = route
    parts = urlsplit(proxy)
    if parts.password:
        netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        proxy = parts._replace(netloc=netloc).geturl()
    return f"{proxy} (from {name})"
