"""The web inspector, served at `/`: what a tenant's agent remembers, what it forgot and why, with pin,
forget, restore and erase buttons. Server-rendered HTML (Jinja2, autoescaped), a few lines of plain JS,
charts as inline SVG; every action is a POST form that calls one `Memory` method and redirects back.
`/inspector/reviews` lists the review queue (newer values a source's authority held back) with Accept and
Reject forms for the roles that may change memories.

Who is asking comes from the REST server's own dependencies (`tenancy.principal`: a Bearer header or the
HttpOnly session cookie that the login form sets; the key itself never leaves the form's POST). A foreign or
purged id is a 404 like any other. Every POST must come from this site (`same_origin`); the pages run no
inline script or style, so the strict Content-Security-Policy of `headers.py` fits them.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' Annotated dependencies at runtime,
# and they name values local to `build_router`.

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Protocol
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from ebbing import Memory, validate
from ebbing.clock import now as wall_clock
from ebbing.errors import EbbingError, InvalidInput, NotFound
from ebbing.model import Tier
from ebbing.server import inspector_svg as svg
from ebbing.server import inspector_view as view

HERE = Path(__file__).parent
STATIC = {"inspector.css": "text/css", "inspector.js": "text/javascript"}
ACTIONS = ("pin", "unpin", "forget", "restore", "purge")
LOG_DAYS = 7
WRITERS = ("agent", "admin")  # roles that may change memories here (erasing needs admin besides)
REVIEWS = "/inspector/reviews"
REVIEW_STATUSES = ("pending", "accepted", "rejected", "any")
REVIEW_DECISIONS = ("accept", "reject")
REVIEW_ROWS = 500  # reviews listed at most on the page
NAV_PENDING = 99  # the header counts pending reviews up to this, then says "99+"

_templates = Environment(loader=FileSystemLoader(HERE / "templates" / "inspector"),
                         autoescape=select_autoescape(default=True, default_for_string=True))
_templates.filters["day"] = view.day


class Who(Protocol):
    """What the inspector needs to know of the caller (`tenancy.Principal` has it)."""

    @property
    def tenant(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def key_id(self) -> str: ...


def _page(name: str, code: int = 200, **values: Any) -> HTMLResponse:
    return HTMLResponse(_templates.get_template(name).render(**values), status_code=code)


def _error(who: Who | None, status: int, message: str) -> HTMLResponse:
    return _page("error.html", status, who=who, status=status, message=message)


def _back(value: str | None) -> str:
    """A same-site path to go back to after an action; anything else goes home (no open redirect)."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    return value


def _user(value: str | None) -> str | None:
    return validate.name(value.strip(), "user") if value and value.strip() else None


def _pending(memory: Memory) -> str:
    """How many reviews wait for a decision in the caller's tenant, for the header ("" for none)."""
    waiting = memory.review_count(None, "pending", limit=NAV_PENDING + 1)
    return f"{NAV_PENDING}+" if waiting > NAV_PENDING else str(waiting) if waiting else ""


SAME_SITE_FETCHES = ("same-origin", "none")  # `none`: the user's own navigation (typed, bookmarked)


def same_origin(request: Request) -> None:
    """Dependency of every POST: a form sent from another site is refused, even in open mode where no cookie
    is needed. Browsers send `Origin` with every POST, and `Sec-Fetch-Site` with every request to an HTTPS or
    localhost origin (even where an extension or a policy drops `Origin`); either one naming another origin,
    a sibling subdomain included, is refused. Clients that send neither, like curl, pass: they are not a
    browser tricked by a page."""
    origin = request.headers.get("origin")
    if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
        raise HTTPException(403, "a form from another site cannot change memories here")
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site.strip().lower() not in SAME_SITE_FETCHES:
        raise HTTPException(403, f"a request from another site ({fetch_site}) cannot change memories here")


class Sessions(Protocol):
    """How the login form opens and the logout button closes a session (`tenancy` does it in the key store)."""

    def open(self, request: Request, key: str, response: Response) -> Who | None:
        """Sets the session cookie on `response` for a live key; None for a bad one."""

    def close(self, request: Request, response: Response) -> None:
        """Ends the caller's session on the server and clears its cookie on `response`."""


def build_router(principal_dep: Callable[[Request], Who], memory_dep: Callable[..., Any],
                 sessions: Sessions) -> APIRouter:
    """The inspector's routes over the server's own ways to know who asks and to open their `Memory`.

    `memory_dep` is a FastAPI dependency (it may yield, and may hold the tenant's lock while the page renders);
    `principal_dep` is called first, so a browser without a valid key is sent to the login form instead.
    """
    router = APIRouter(include_in_schema=False)

    def caller(request: Request) -> Who | None:
        try:
            return principal_dep(request)
        except EbbingError:  # no key, a bad or revoked one, too many requests: the login form says what to do
            return None

    def page_caller(request: Request) -> Who:
        """Dependency listed before the Memory: a caller who is nobody is redirected to the login form."""
        who = caller(request)
        if who is None:
            raise HTTPException(303, "log in first", headers={"Location": "/inspector/login"})
        return who

    Caller = Annotated[Who, Depends(page_caller)]
    Mem = Annotated[Memory, Depends(memory_dep)]

    @router.get("/", response_class=HTMLResponse)
    def index(who: Caller, memory: Mem, user: str | None = None, q: str | None = None, slot: str | None = None,
              more: str | None = None, days: float = LOG_DAYS) -> Response:
        now = wall_clock()
        try:
            chosen = _user(user)
            if not 0 < days <= 366:
                raise InvalidInput("days", "must be more than 0 and at most 366")
            values = _overview(memory, chosen, q, slot, more, days, now)
            pending = _pending(memory)
        except InvalidInput as exc:
            return _error(who, 400, str(exc))
        here = "/?" + urlencode({k: v for k, v in {"user": chosen, "q": q, "slot": slot}.items() if v})
        return _page("index.html", who=who, user=chosen, q=q or "", slot=slot or "", days=days, here=here,
                     pending=pending, **values)

    @router.get("/inspector/memories/{memory_id}", response_class=HTMLResponse)
    def record_page(who: Caller, memory: Mem, memory_id: str) -> Response:
        now = wall_clock()
        try:
            record = memory.get(memory_id)
            events = memory.history(memory_id)
            why = None if record.tier is Tier.TRASH else memory.explain(memory_id, at=now)
            timeline = memory.timeline(record.user_id, record.text, at=now)
            drawn = view.curves(memory, [record], now) if why else []
            pending = _pending(memory)
        except NotFound:
            return _error(who, 404, f"no memory with id {memory_id}")
        except InvalidInput as exc:
            return _error(who, 400, str(exc))
        chart = svg.curve_chart(drawn, view.thresholds(memory), view.CURVE_DAYS) if drawn else None
        return _page("record.html", who=who, record=record, events=events, why=why, timeline=timeline,
                     chart=chart, here=f"/inspector/memories/{memory_id}", user=record.user_id, pending=pending)

    @router.post("/inspector/memories/{memory_id}/{action}", dependencies=[Depends(same_origin)])
    def act(who: Caller, memory: Mem, memory_id: str, action: str, back: Annotated[str, Form()] = "/") -> Response:
        if action not in ACTIONS:
            return _error(who, 404, f"no action {action}")
        if action == "purge" and who.role != "admin":
            return _error(who, 403, "erasing a memory for good needs an admin key")
        now = wall_clock()
        try:
            if action == "forget":
                memory.forget(memory_id, at=now, reason="forgotten in the inspector")
            elif action == "purge":
                memory.purge(memory_id, at=now)
            else:
                getattr(memory, action)(memory_id, at=now)
        except NotFound:
            return _error(who, 404, f"no memory with id {memory_id}")
        except InvalidInput as exc:
            return _error(who, 400, str(exc))
        except EbbingError as exc:  # a legal hold, say: the page says why and nothing changed
            return _error(who, 409, str(exc))
        target = _back(back)
        if action == "purge" and target.startswith("/inspector/memories/"):
            target = "/"
        return RedirectResponse(target, status_code=303)

    @router.get(REVIEWS, response_class=HTMLResponse)
    def reviews_page(who: Caller, memory: Mem, status: str = "pending", user: str | None = None) -> Response:
        try:
            if status not in REVIEW_STATUSES:
                raise InvalidInput("status", f"must be one of {', '.join(REVIEW_STATUSES)}")
            chosen = _user(user)
            found = memory.reviews(chosen, None if status == "any" else status, limit=REVIEW_ROWS)
            pending = _pending(memory)
        except InvalidInput as exc:
            return _error(who, 400, str(exc))
        here = REVIEWS + "?" + urlencode({k: v for k, v in {"status": status, "user": chosen}.items() if v})
        return _page("reviews.html", who=who, reviews=found, status=status, statuses=REVIEW_STATUSES,
                     user=chosen, users=memory.users(), here=here, pending=pending, can_decide=who.role in WRITERS,
                     limit=REVIEW_ROWS)

    @router.post(REVIEWS + "/{review_id}/{decision}", dependencies=[Depends(same_origin)])
    def decide(who: Caller, memory: Mem, review_id: str, decision: str, note: Annotated[str, Form()] = "",
               back: Annotated[str, Form()] = REVIEWS) -> Response:
        if decision not in REVIEW_DECISIONS:
            return _error(who, 404, f"no decision {decision}")
        if who.role not in WRITERS:
            return _error(who, 403, f"a {who.role} key cannot decide reviews")
        decide_review = memory.accept_review if decision == "accept" else memory.reject_review
        try:
            decide_review(review_id, note=note.strip(), at=wall_clock(), by=f"key:{who.key_id}")
        except NotFound:
            return _error(who, 404, f"no review with id {review_id}")
        except InvalidInput as exc:
            return _error(who, 400, str(exc))
        except EbbingError as exc:  # Conflict: decided already, or the value it would replace changed meanwhile
            return _error(who, 409, str(exc))
        target = _back(back)  # back to the queue as it was filtered; nowhere else
        return RedirectResponse(target if target == REVIEWS or target.startswith(REVIEWS + "?") else REVIEWS,
                                status_code=303)

    @router.get("/inspector/login", response_class=HTMLResponse)
    def login_form(request: Request) -> Response:
        if caller(request) is not None:
            return RedirectResponse("/", status_code=303)
        return _page("login.html", who=None, failed=False)

    @router.post("/inspector/login", dependencies=[Depends(same_origin)])
    def login(request: Request, key: Annotated[str, Form()] = "") -> Response:
        key = key.strip()
        response = RedirectResponse("/", status_code=303)
        if not key or sessions.open(request, key, response) is None:  # the key itself is never echoed back
            return _page("login.html", 401, who=None, failed=True)
        return response

    @router.post("/inspector/logout", dependencies=[Depends(same_origin)])
    def logout(request: Request) -> Response:
        response = RedirectResponse("/inspector/login", status_code=303)
        sessions.close(request, response)
        return response

    @router.get("/inspector/static/{name}")
    def static(name: str) -> Response:
        if name not in STATIC:
            return Response("not found", status_code=404, media_type="text/plain")
        return Response((HERE / "static" / "inspector" / name).read_bytes(), media_type=STATIC[name],
                        headers={"Cache-Control": "no-cache"})

    return router


def _overview(memory: Memory, user: str | None, q: str | None, slot: str | None, more: str | None, days: float,
              now: float) -> dict[str, Any]:
    """Everything the main page shows for one user (or the whole tenant when `user` is None)."""
    records = view.user_records(memory, user)
    ids = {r["id"] for r in records}
    hits = (memory.search(q, user_id=user, limit=10, at=now, include_cold=True, count_use=False)
            if q and q.strip() else None)
    timeline = memory.timeline(user, slot, at=now) if slot and slot.strip() else None
    times, counts = view.tier_history(memory, records, now)
    live = [r for r in records if r["tier"] in ("hot", "warm")]
    drawn = view.curves(memory, [memory.get(r["id"]) for r in live[: view.CURVES]], now)
    return {
        "users": memory.users(),
        "stats": memory.stats(user),
        "pages": view.tier_pages(memory, records, now, more),
        "hits": hits,
        "timeline": timeline,
        "log": view.forgetting_log(memory, ids if user else None, now, days),
        "tier_chart": svg.tier_chart(times, counts),
        "curve_chart": svg.curve_chart(drawn, view.thresholds(memory), view.CURVE_DAYS),
        "legend": svg.legend(drawn),
        "page_size": view.PAGE,
    }


def _default_router() -> APIRouter:
    from ebbing.server import tenancy

    return build_router(tenancy.principal, tenancy.memory_for, tenancy.InspectorSessions())


router = _default_router()
