"""The dashboard (``/dashboard``) and the API docs (``/docs``), served from files in this package.

Everything a browser loads comes from ``static/``: the dashboard's HTML shell, scripts and styles,
and vendored uPlot and Swagger UI (``static/vendor/README.md`` names their versions). Nothing is
fetched from another host, so both pages work offline; their Content-Security-Policy lets the
browser load and connect to this origin only, and neither may be framed by another site.

The page holds no data: it asks for a token (an API key or a JWT, kept in the tab's
sessionStorage) and reads the JSON API with it, so a user sees exactly what the API gives them.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response

#: the folder of the files served (the dashboard's, and the vendored uPlot and Swagger UI)
STATIC = Path(__file__).parent / "static"
#: where they are served
STATIC_URL = "/static"

#: the dashboard's Content-Security-Policy: only this origin; no inline script or style (the
#: page sets styles through the DOM only)
DASHBOARD_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)


#: headers of both pages: no framing by another site (clickjacking), no sniffing, no referrer
PAGE_HEADERS = {
    "Cache-Control": "no-cache",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}

_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def docs_csp(html: str) -> str:
    """The Content-Security-Policy of ``/docs``: the dashboard's (this origin only), plus the
    one inline script of FastAPI's Swagger UI page (which starts Swagger UI), allowed by its
    SHA-256."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in _INLINE_SCRIPT.findall(html)
    )
    return (
        f"default-src 'none'; script-src 'self' {hashes}; style-src 'self'; "
        "img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'"
    )


class PackageFiles(StaticFiles):
    """The package's files, revalidated on every load (``no-cache`` with their ETag): after an
    upgrade of rankscope a browser never runs an old module beside a new one."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = "no-cache"
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response


def install(app: FastAPI) -> None:
    """Serve ``/dashboard``, ``/docs`` (Swagger UI from the package) and ``/static``."""
    app.mount(STATIC_URL, PackageFiles(directory=STATIC), name="static")

    @app.get("/dashboard", include_in_schema=False)
    def dashboard() -> FileResponse:
        return FileResponse(
            STATIC / "dashboard" / "index.html",
            media_type="text/html",
            headers={"Content-Security-Policy": DASHBOARD_CSP, **PAGE_HEADERS},
        )

    @app.get("/dashboard/", include_in_schema=False)
    def dashboard_slash() -> RedirectResponse:
        return RedirectResponse("/dashboard", status_code=308)

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        page = get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - API docs",
            swagger_js_url=f"{STATIC_URL}/vendor/swagger-ui/swagger-ui-bundle.js",
            swagger_css_url=f"{STATIC_URL}/vendor/swagger-ui/swagger-ui.css",
            swagger_favicon_url=f"{STATIC_URL}/dashboard/favicon.svg",
            # the validator badge would send the document to validator.swagger.io
            swagger_ui_parameters={"validatorUrl": None},
        )
        html = bytes(page.body).decode()
        headers = {"Content-Security-Policy": docs_csp(html), **PAGE_HEADERS}
        return HTMLResponse(html, headers=headers)


__all__ = [
    "DASHBOARD_CSP",
    "PAGE_HEADERS",
    "STATIC",
    "STATIC_URL",
    "PackageFiles",
    "docs_csp",
    "install",
]
