"""Pull one HTML document out of a completion, repairing what generation broke."""

from __future__ import annotations

import html as htmllib
import re

from bs4 import BeautifulSoup

_FENCE = re.compile(r"```(?:html|HTML)?\s*\n(.*?)(?:```|$)", re.DOTALL)
_START = re.compile(r"<!DOCTYPE html|<html\b|<body\b|<div\b", re.IGNORECASE)


def extract_html(completion: str) -> tuple[str, bool]:
    """Return (html, repaired). Fences and chatter are stripped; truncated tags are closed.

    An empty or tag-less completion becomes a plain page without the root element,
    so it still renders (and scores badly) instead of failing.
    """
    text = completion or ""
    repaired = False
    m = _FENCE.search(text)
    if m:
        text = m.group(1)
    start = _START.search(text)
    if start is None:
        # No root element: it renders, but the format reward sees that the contract was not kept.
        body = f"<p>{htmllib.escape(text.strip())}</p>" if text.strip() else ""
        return f'<!DOCTYPE html><html><body style="margin:0">{body}</body></html>', True
    if start.start() > 0 and text[: start.start()].strip():
        repaired = True
    text = text[start.start() :]
    end = text.lower().rfind("</html>")
    if end >= 0:
        if text[end + 7 :].strip():
            repaired = True
        text = text[: end + 7]
    soup = BeautifulSoup(text, "html.parser")
    for s in soup.find_all("script"):
        s.decompose()
        repaired = True
    out = str(soup)
    if "</html>" not in text.lower():
        repaired = True
    if not out.lower().lstrip().startswith("<!doctype"):
        out = "<!DOCTYPE html>" + out
    return out, repaired


def root_size(html: str) -> tuple[float, float] | None:
    """The declared px size of the root element, if any: a `#screen` (or `[data-root]`) element's
    style width and height, or a captured screen's `data-wm-size="WxH"` (render/capture.py: there
    the body is the root and carries its size as an attribute, since a style would change its
    layout)."""
    soup = BeautifulSoup(html, "html.parser")
    sized = soup.find(attrs={"data-wm-size": True})
    if sized is not None:
        m = re.fullmatch(r"\s*([\d.]+)x([\d.]+)\s*", str(sized.get("data-wm-size")))
        if m:
            return float(m.group(1)), float(m.group(2))
    root = soup.find(id="screen") or soup.find(attrs={"data-root": True})
    if root is None:
        return None
    style = root.get("style") or ""
    w = re.search(r"(?:^|;)\s*width:\s*([\d.]+)px", style)
    h = re.search(r"(?:^|;)\s*height:\s*([\d.]+)px", style)
    if not (w and h):
        return None
    return float(w.group(1)), float(h.group(1))
