"""Where recorded actions come from: a scripted explorer and MiniWoB++ task solvers."""

from __future__ import annotations

import re

from worldmodel.goal import goal_quotes
from worldmodel.types import Action

from .recorder import Element, StepContext, leaves_app

WORDS = ["milk", "hello", "trip", "report", "alice", "notes", "budget", "blue", "meeting", "ok"]


def explore(ctx: StepContext) -> Action | None:
    """Random but plausible actions: mostly taps on what is clickable, some typing and scrolling."""
    rng, s = ctx.rng, ctx.screen.device_scale_factor
    els = [e for e in ctx.elements if not leaves_app(e.href, ctx.app)]
    inputs = [e for e in els if e.editable]
    taps = [e for e in els if not e.editable] or els
    r = rng.random()
    phone = ctx.app.kind == "phone"
    if inputs and r < 0.25:
        e = rng.choice(inputs)
        return Action("type", x=e.x * s, y=e.y * s, text=rng.choice(WORDS))
    if phone:  # the system buttons and long press, drawn apart from the rest
        r2 = rng.random()
        if r2 < 0.08:
            return Action("back")
        if r2 < 0.11:
            return Action("home")
        if r2 < 0.14:
            return Action("open_app", app=rng.choice(["Notes", "Contacts", "Settings"]))
        rows = [e for e in els if e.h == 64]  # list rows of the phone app
        if rows and r2 < 0.20:
            e = rng.choice(rows)
            return Action("long_press", x=e.x * s, y=e.y * s)
    if ctx.app.kind == "web" and r > 0.85:  # pages scroll as a whole
        w, h = ctx.screen.size
        return Action("scroll", x=w / 2, y=h / 2, direction=rng.choice(["down", "down", "up"]))
    scrollable = [e for e in els if e.scrollable]
    if scrollable and r < 0.52:
        e = rng.choice(scrollable)
        return Action("scroll", x=e.x * s, y=e.y * s, direction=rng.choice(["down", "down", "up"]))
    if inputs and r < 0.56:
        return Action("key", key="Enter")
    if not taps:
        return Action("wait")
    e = rng.choice(taps)
    return Action("tap", x=e.x * s, y=e.y * s)


def _quoted(goal: str) -> list[str]:
    return [q for _, q in goal_quotes(goal)]  # empty quotes too: a task may ask for ""


def _find(els: list[Element], text: str, tags=None) -> Element | None:
    for e in els:
        if (tags is None or e.tag in tags) and e.text.strip().lower() == text.strip().lower():
            return e
    return None


def solve_miniwob(task: str, goal: str, els: list[Element], scale: float = 1.0) -> list[Action]:
    """A scripted plan for the simple MiniWoB++ tasks; [] where no solver is known."""
    q = _quoted(goal)

    def tap(e):
        return Action("tap", x=e.x * scale, y=e.y * scale)

    if task in ("click-button", "click-link") and q:
        e = _find(els, q[0], ["button"] if task == "click-button" else ["span", "a"])
        return [tap(e)] if e else []
    if task in ("enter-text", "focus-text"):
        box = next((e for e in els if e.editable), None)
        if box is None:
            return []
        if task == "focus-text":
            return [tap(box)]
        return [
            Action("type", x=box.x * scale, y=box.y * scale, text=q[0] if q else ""),
            *_submit(els, scale),
        ]
    if task == "click-checkboxes":
        m = re.search(r"Select (.*?) and click Submit", goal)
        want = [w.strip() for w in m.group(1).split(",")] if m and "nothing" not in m.group(1) else []
        acts = []
        for w in want:
            e = _find(els, w, ["label"])
            if e:
                acts.append(tap(e))
        return acts + _submit(els, scale)
    if task == "login-user" and len(q) >= 2:
        boxes = [e for e in els if e.editable]
        if len(boxes) < 2:
            return []
        return [
            Action("type", x=boxes[0].x * scale, y=boxes[0].y * scale, text=q[0]),
            Action("type", x=boxes[1].x * scale, y=boxes[1].y * scale, text=q[1]),
            *_submit(els, scale),
        ]
    return []


def _submit(els: list[Element], scale: float) -> list[Action]:
    e = next((e for e in els if e.tag == "button" and e.text.lower() in ("submit", "login")), None)
    return [Action("tap", x=e.x * scale, y=e.y * scale)] if e else []


SOLVED_TASKS = (
    "click-button",
    "click-link",
    "click-checkboxes",
    "enter-text",
    "focus-text",
    "login-user",
)


def solver_policy(ctx: StepContext) -> Action | None:
    """Plan once from the first screen, then follow the plan; stop when it runs out."""
    if ctx.step == 0:
        task = ctx.app.name.removeprefix("miniwob-")
        ctx.page._wm_plan = solve_miniwob(task, ctx.goal, ctx.elements, ctx.screen.device_scale_factor)
    plan = ctx.page._wm_plan
    return plan[ctx.step] if ctx.step < len(plan) else None
