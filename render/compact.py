"""Compact a screen's HTML without changing a pixel of its render.

Training targets pay for every character. A capture carries things that never reach the screen:
whole subtrees positioned outside the viewport (MiniWoB++'s click canvas and reward panel, whose
data-URL image changes after every click), `data-*` attributes no stylesheet reads, the state
classes the capture writes (`wm-hover`, `wm-focus-within`, ...) where no rule selects on them
(they churn on every tap and change nothing on screen), and the stylesheet's spaces. `Renderer.compact()` loads the page (scripts off), removes those in an
isolated world, minifies the CSS, and keeps the result only if its screenshot is identical to
the original's; otherwise the original comes back unchanged. So compaction can only ever shorten
a target, never change what it shows.
"""

from __future__ import annotations

import re

from .capture import with_state_names

# Runs in an isolated world; returns the compacted document or null when nothing changed.
COMPACT_JS = r"""(() => {
  const W = innerWidth, H = innerHeight;
  const css = [...document.querySelectorAll('style')].map(s => s.textContent).join('\n');
  let changed = false;
  const outside = (el) => {
    const r = el.getBoundingClientRect();
    return r.right <= 0 || r.bottom <= 0 || r.left >= W || r.top >= H || (r.width === 0 && r.height === 0);
  };
  // out-of-view subtrees that cannot move anything else: absolutely or fixed positioned
  const doomed = [];
  for (const el of document.body ? document.body.querySelectorAll('*') : []) {
    if (doomed.some(d => d.contains(el))) continue;
    const pos = getComputedStyle(el).position;
    if (pos !== 'absolute' && pos !== 'fixed') continue;
    if (el.id === 'screen') continue;
    if (outside(el) && [...el.querySelectorAll('*')].every(outside)) doomed.push(el);
  }
  for (const el of doomed) { el.remove(); changed = true; }
  // data-* attributes nothing in the stylesheet mentions
  for (const el of document.querySelectorAll('*')) {
    for (const a of [...el.attributes]) {
      if (a.name.startsWith('data-') && a.name !== 'data-wm-size' && !css.includes(a.name)) { el.removeAttribute(a.name); changed = true; }
    }
  }
  // state classes the capture wrote (hover, focus-within, ...) that no rule selects on; the
  // focused element's own `wm-focus` stays: the sim gives focus back from it
  for (const el of document.querySelectorAll('[class]')) {
    for (const c of [...el.classList]) {
      if (c.startsWith(__WM_PREFIX__) && c !== __WM_FOCUS__ && !css.includes('.' + c)) { el.classList.remove(c); changed = true; }
    }
    if (!el.classList.length) { el.removeAttribute('class'); changed = true; }
  }
  if (!changed) return null;
  const dt = document.doctype ? '<!DOCTYPE html>' : '';
  // declarative shadow roots (render/capture.py writes them serializable) are written back
  const h = document.documentElement;
  if (!h.getHTML) return dt + h.outerHTML;
  const attrs = [...h.attributes].map(a => ` ${a.name}="${a.value.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"`).join('');
  return dt + `<html${attrs}>` + h.getHTML({serializableShadowRoots: true}) + '</html>';
})()"""
COMPACT_JS = with_state_names(COMPACT_JS)

_STYLE = re.compile(r"(<style[^>]*>)(.*?)(</style>)", re.S | re.I)
_TOKENS = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|url\([^)]*\))|[{}]""")


def minify_css(css: str) -> str:
    """Spaces around punctuation and each block's last semicolon dropped; strings and url()s kept.

    Outside blocks (selectors) only `>` and `,` lose their padding and line breaks between
    rules stay, so a capture keeps one rule per line (the edit language's stylesheet lines);
    inside blocks `;` `:` `,` lose theirs and a block becomes one line."""
    out, depth, i = [], 0, 0
    for m in _TOKENS.finditer(css):
        out.append(_squeeze(css[i : m.start()], inside=depth > 0))
        tok = m.group(0)
        if tok == "{":
            out[-1] = out[-1].rstrip()
            depth += 1
        elif tok == "}":
            out[-1] = out[-1].rstrip().rstrip(";").rstrip()
            depth = max(0, depth - 1)
        out.append(tok)
        i = m.end()
    out.append(_squeeze(css[i:], inside=depth > 0))
    return "".join(out).strip()


def _squeeze(seg: str, inside: bool) -> str:
    if inside:
        return re.sub(r"\s+", " ", re.sub(r"\s*([;:,])\s*", r"\1", seg))
    seg = re.sub(r"[ \t]*([>,])[ \t]*", r"\1", seg)
    seg = re.sub(r"\s+", lambda m: "\n" if "\n" in m.group(0) else " ", seg)
    return seg


def minify_styles(html: str) -> str:
    """`html` with every <style> element's text minified."""
    return _STYLE.sub(lambda m: m.group(1) + minify_css(m.group(2)) + m.group(3), html)
