"""Code2World's VLM judge: four scores of a predicted next screen, from an OpenAI-compatible endpoint.

Code2World (section 4.1) scores next-screen prediction with a vision-language judge on two
axes, each with two scores:

- functional logic: **S_ad**, action adherence (does the predicted screen show what this action
  does to the current one?) and **S_id**, action identifiability (could one tell from the
  current and predicted screens alone which action was taken?);
- visual quality: **S_ele**, element alignment (are the real next screen's elements there, with
  their text, state and style?) and **S_lay**, layout integrity (do they sit where the real
  screen puts them, nothing overlapping or cut off?).

The judge sees the current screen with the action drawn on it, the real next screen and the
render of the prediction, and answers each score on 0-10; the figures report them x10, on the
0-100 scale of the paper's tables (Code2World-8B in-domain: 94.28 / 88.64 / 71.35 / 70.32). The
prompt below is written once, here. A render that failed scores 0 on all four without a request.

Answers are read leniently (`parse_scores`): JSON or "S_ad: 8" lines amid chatter, names spelt
out, scores out of range clamped; a score missing from the answer is None, and an answer with
none (a refusal) is None on all four. Answers, refusals too (asked at temperature 0), are cached
on disk per (judge model, prompt, current screen, action, real next screen, render), so
re-running an evaluation asks again only for what changed. A request that fails after the
client's retries gives None and is not cached.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from pathlib import Path

from .chat import ChatClient, ChatError
from .prompt import draw_action
from .types import png_bytes, png_data_url

SCORES = ("S_ad", "S_id", "S_ele", "S_lay")
SCALE = 10.0  # answers are 0-10; figures are x SCALE, 0-100 as in Code2World's tables
_ALIASES = {
    "S_ad": ("s_ad", "sad", "action_adherence", "adherence"),
    "S_id": ("s_id", "sid", "action_identifiability", "identifiability"),
    "S_ele": ("s_ele", "sele", "element_alignment", "element"),
    "S_lay": ("s_lay", "slay", "layout_integrity", "layout"),
}

JUDGE_PROMPT = """You evaluate a GUI world model: it predicted the screen an app shows after an action.
Image 1: the current screen, the action drawn on it (a circle is a tap, an arrow a swipe).
Image 2: the real next screen.
Image 3: the predicted next screen.
Action: {action}
Task goal: {goal}

Score the prediction (image 3) from 0 (worst) to 10 (best) on four criteria:
- S_ad (action adherence): does image 3 show the effect this action really has on image 1, as image 2 does (a page opened, text typed, an item checked, the list scrolled)?
- S_id (action identifiability): from image 1 and image 3 alone, could one tell that this action was the one taken?
- S_ele (element alignment): are image 2's elements present in image 3 with the same text, icons, state and style, and nothing made up?
- S_lay (layout integrity): are the elements placed, sized and ordered as in image 2, with nothing overlapping, cut off or misaligned?

Answer with JSON only: {{"S_ad": n, "S_id": n, "S_ele": n, "S_lay": n}}"""
PROMPT_VERSION = hashlib.sha1(JUDGE_PROMPT.encode()).hexdigest()[:12]


def parse_scores(text: str | None) -> dict[str, float | None]:
    """The four scores on 0-10 from a judge's answer; None for each it did not give."""
    text = text or ""
    out: dict[str, float | None] = {k: None for k in SCORES}
    for m in re.finditer(r"\{[^{}]*\}", text):
        try:
            d = json.loads(m.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(d, dict):
            for k, v in d.items():
                name = _canonical(str(k))
                if name and out[name] is None:
                    out[name] = _number(v)
    for name, aliases in _ALIASES.items():
        if out[name] is not None:
            continue
        words = "|".join(re.escape(a).replace("_", r"[_ \-]?") for a in (name.lower(), *aliases))
        m = re.search(rf"(?<![a-z])(?:{words})\W{{0,4}}(\d+(?:\.\d+)?)", text, re.IGNORECASE)
        if m:
            out[name] = _number(m.group(1))
    return out


def _canonical(key: str) -> str | None:
    k = key.strip().lower().replace(" ", "_").replace("-", "_")
    for name, aliases in _ALIASES.items():
        if k == name.lower() or k in aliases:
            return name
    return None


def _number(v) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return None if x != x else min(10.0, max(0.0, x))


class Judge:
    """Code2World's four judge scores for (transition, predicted image) pairs, cached on disk.

    `spec`: URL#MODEL or openai:URL#MODEL, an OpenAI-compatible endpoint and its model name."""

    def __init__(
        self,
        spec: str,
        cache: str | Path | None = None,
        api_key: str | None = None,
        timeout_s: float = 300.0,
        concurrency: int = 8,
    ):
        from .spec import parse_spec

        ms = parse_spec(spec if spec.startswith("openai:") else f"openai:{spec}")
        if len(ms.stages) != 1 or ms.first.kind != "openai":
            raise ValueError(f"judge {spec!r} is not URL#MODEL (an OpenAI-compatible endpoint and model)")
        self.chat = ChatClient(ms.first.arg, ms.first.model, api_key, timeout_s, concurrency)
        self.model = ms.first.model
        self.cache_path = Path(cache) if cache else None
        self._lock = threading.Lock()
        self._cache: dict[str, dict] = self._read_cache()
        self.asked = 0  # requests sent (a cache hit sends none)

    def _read_cache(self) -> dict[str, dict]:
        if not self.cache_path or not self.cache_path.is_file():
            return {}
        out = {}
        for line in self.cache_path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
                out[rec["key"]] = rec["scores"]
            except (json.JSONDecodeError, KeyError, TypeError):
                continue  # a line cut short by a crash: asked again
        return out

    def _key(self, t, image) -> str:
        h = hashlib.sha1(f"{self.model}|{PROMPT_VERSION}|{t.action.to_json()}|{t.goal}".encode())
        for im in (t.screen.image, t.next_screen.image, image):
            h.update(png_bytes(im))
        return h.hexdigest()

    def _messages(self, t, image) -> list[dict]:
        shots = (draw_action(t.screen.image, t.action), t.next_screen.image, image)
        text = JUDGE_PROMPT.format(action=t.action.describe(), goal=t.goal or "(none given)")
        content = [{"type": "image_url", "image_url": {"url": png_data_url(s)}} for s in shots]
        return [{"role": "user", "content": [*content, {"type": "text", "text": text}]}]

    def score_many(self, pairs: list) -> list[dict[str, float | None] | None]:
        """Per (transition, predicted image or None for a failed render): the four scores x10
        (0-100), or None where the endpoint gave no answer."""
        out: list = [None] * len(pairs)
        ask: list[tuple[int, str]] = []
        for i, (t, image) in enumerate(pairs):
            if image is None:
                out[i] = {k: 0.0 for k in SCORES}
                continue
            key = self._key(t, image)
            if key in self._cache:
                out[i] = self._cache[key]
            else:
                ask.append((i, key))
        if ask:
            answers = self._ask([self._messages(*pairs[i]) for i, _ in ask])
            for (i, key), ans in zip(ask, answers):
                if ans is None:
                    continue
                s = parse_scores(ans)
                out[i] = {k: None if v is None else v * SCALE for k, v in s.items()}
                self._remember(key, out[i])
        return out

    def _ask(self, batch: list[list[dict]]) -> list[str | None]:
        def one(m):
            try:
                return self.chat.complete(m, temperature=0)
            except ChatError:
                return None

        self.asked += len(batch)
        if len(batch) == 1:
            return [one(batch[0])]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(self.chat.concurrency, len(batch))) as ex:
            return list(ex.map(one, batch))

    def _remember(self, key: str, scores: dict) -> None:
        with self._lock:
            self._cache[key] = scores
            if self.cache_path:
                self.cache_path.parent.mkdir(parents=True, exist_ok=True)
                with self.cache_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps({"key": key, "scores": scores}) + "\n")

    def close(self) -> None:
        self.chat.close()
