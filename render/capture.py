"""Capture a live page as one self-contained document that keeps the page's own stylesheets.

Per-element computed styles (corpus/snapshot.py) lose what a property list cannot carry:
pseudo-elements' details, icon fonts, background textures, placeholder styles, and the exact
cascade that decides text metrics. Real apps nobody here wrote lost 5% of their pixels that way.
This capture does what rrweb-snapshot and SingleFile do instead:

- the page's stylesheets are kept as text, in order (linked, inline, imported and adopted
  ones), with every `url()` (images, fonts) turned into a data URL (a photo over the
  per-resource cap re-encoded smaller, as a screen shows it no larger); rules whose selector
  matches nothing on the page are dropped, and `@media`/`@supports` blocks that do not apply
  at this viewport are dropped and the rest flattened, which keeps targets short;
- interaction state a static document cannot have becomes classes: an element under the mouse
  gets `wm-hover`, the focused one `wm-focus` (and `wm-focus-visible`, `wm-focus-within` up the
  tree), the URL fragment's target `wm-target`, and the stylesheet's `:hover`/`:focus...`/
  `:target` selectors are rewritten to match them;
- form state is frozen into attributes, images and canvases become data URLs; the window's
  scroll stays a scroll (a shadow root on <body> with a `scroll-initial-target` where the view
  was: see placeScroll), a scrolled box's offset becomes a `translate` on its children (a
  sticky child keeps the offset stickiness gave it); scripts, frames and event handlers are
  removed;
- nothing stands between `<body>` and its children, so every selector (`body > x`, `.open >
  .panel` with the class on body, `:nth-child`, `~`/`+`, `:root > body > x`) matches exactly what
  it matched live: the output contract's root is the body itself, `<body id="screen"
  data-wm-size="WxH">` (the id only where the page's body has none; the size is an attribute, as a
  style would change the page's layout). Captures made before this kept the body's content in a
  `<div id="screen" style="display:contents">` and rewrote `body > ...` selectors through it; such
  a capture captured again keeps its wrapper, and loads and renders as it always did;
- open shadow roots (web components) are written as declarative shadow DOM, `<template
  shadowrootmode="open">` holding the root's own and adopted stylesheets and its children.

The result renders with scripts off and no network, like every model output. It lives in the
render layer because two stages use it: the recorder (corpus) captures live apps, and the `sim`
world model re-captures a captured screen after acting on it, so a capture of a capture must be
stable: an old capture's `#screen` wrapper is kept (not wrapped again), stale state classes and focus rings
are dropped before the current ones are written, and a new scroll adds to an earlier one.

The names of the state classes and of the focus-ring marker are written once, below; the
capture's own script, the sim's (render/interact.py), compaction (render/compact.py) and every
Python reader (worldmodel/focus.py, transplant, the sim backend, planning's progress scorer)
take them from here.
"""

import json
import re

# The classes the capture writes for state a static document cannot have, by the pseudo-class
# they stand for (the order is the rewrite's: `:focus-visible` before `:focus`).
HOVER_CLASS = "wm-hover"
FOCUS_CLASS = "wm-focus"  # the focused element's own; the sim gives focus back from it
FOCUS_VISIBLE_CLASS = "wm-focus-visible"
FOCUS_WITHIN_CLASS = "wm-focus-within"
TARGET_CLASS = "wm-target"
STATE_OF_PSEUDO = (
    (":hover", HOVER_CLASS),
    (":focus-visible", FOCUS_VISIBLE_CLASS),
    (":focus-within", FOCUS_WITHIN_CLASS),
    (":focus", FOCUS_CLASS),
    (":target", TARGET_CLASS),
)
STATE_CLASSES = tuple(c for _, c in STATE_OF_PSEUDO)
STATE_PREFIX = "wm-"
STATE_CLASS = re.compile("^" + re.escape(STATE_PREFIX))  # matches the name of any state class
# the attribute marking a focus ring the capture drew as an inline outline
RING_ATTR = "data-wm-ring"


def with_state_names(js: str) -> str:
    """A script with the state names filled in: __WM_STATE__ (the [pseudo, class] pairs),
    __WM_FOCUS__, __WM_HOVER__, __WM_PREFIX__ and __WM_RING__ (as JavaScript strings)."""
    return (
        js.replace("__WM_STATE__", json.dumps([list(p) for p in STATE_OF_PSEUDO]))
        .replace("__WM_FOCUS__", json.dumps(FOCUS_CLASS))
        .replace("__WM_HOVER__", json.dumps(HOVER_CLASS))
        .replace("__WM_PREFIX__", json.dumps(STATE_PREFIX))
        .replace("__WM_RING__", json.dumps(RING_ATTR))
    )


CAPTURE_JS = r"""async (opts) => {
  const MAX_RESOURCE = opts.maxResource, MAX_TOTAL = opts.maxTotal;
  let inlined = 0;
  const cache = new Map();
  // A raster image over the cap (a site's full-size hero photo) is drawn again at no more than
  // twice the viewport's pixels and re-encoded, smaller until it fits: the screen shows it at
  // most about that large, so the render keeps the photo instead of a flat background.
  const shrink = async (blob) => {
    if (!/^image\/(png|jpe?g|webp|gif|bmp|avif)/.test(blob.type)) return null;
    try {
      const bmp = await createImageBitmap(blob);
      const dpr = devicePixelRatio || 1;
      const room = 2 * innerWidth * innerHeight * dpr * dpr;
      let scale = Math.min(1, Math.sqrt(room / (bmp.width * bmp.height)));
      for (let i = 0; i < 6; i++, scale *= 0.75) {
        const w = Math.max(1, Math.round(bmp.width * scale)), h = Math.max(1, Math.round(bmp.height * scale));
        const c = new OffscreenCanvas(w, h);
        c.getContext('2d').drawImage(bmp, 0, 0, w, h);
        const out = await c.convertToBlob({type: 'image/webp', quality: 0.82});
        if (out.size <= MAX_RESOURCE) return out;
      }
    } catch (e) {}
    return null;
  };
  const toDataURL = async (url) => {
    if (!url || url.startsWith('data:')) return url;
    if (cache.has(url)) return cache.get(url);
    let out = null;
    try {
      const r = await fetch(url);
      if (r.ok) {
        let b = await r.blob();
        if (b.size > MAX_RESOURCE) b = await shrink(b);
        if (b && b.size <= MAX_RESOURCE && inlined + b.size <= MAX_TOTAL) {
          inlined += b.size;
          out = await new Promise((res) => {
            const fr = new FileReader();
            fr.onload = () => res(fr.result); fr.onerror = () => res(null);
            fr.readAsDataURL(b);
          });
        }
      }
    } catch (e) {}
    cache.set(url, out);
    return out;
  };
  const URL_RE = /url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"]*))\s*\)/g;
  const inlineUrls = async (css, base) => {
    const found = [...css.matchAll(URL_RE)];
    if (!found.length) return css;
    const map = new Map();
    for (const m of found) {
      const raw = (m[1] ?? m[2] ?? m[3] ?? '').trim();
      if (!raw || raw.startsWith('data:') || raw.startsWith('#') || map.has(raw)) continue;
      let abs = null;
      try { abs = new URL(raw, base).href; } catch (e) {}
      const d = abs ? await toDataURL(abs) : null;
      map.set(raw, d);
    }
    return css.replace(URL_RE, (all, a, b, c) => {
      const raw = (a ?? b ?? c ?? '').trim();
      if (!map.has(raw)) return all;
      const d = map.get(raw);
      return d ? `url("${d}")` : 'url("data:,")';
    });
  };

  // ---- interaction state as classes ------------------------------------------------------
  const STATE = __WM_STATE__;
  const STATE_CLASSES = STATE.map(([, c]) => c);
  const STATE_CLASS_RE = new RegExp('\\.(' + STATE_CLASSES.join('|') + ')(?![-\\w])', 'g');
  // a capture made before captures kept the body as the root, captured again: its body is just
  // the contract's #screen wrapper, and its selectors already go through it
  const kids = [...document.body.childNodes].filter(n => n.nodeType === 1 || (n.nodeType === 3 && n.textContent.trim()));
  const oldWrapper = kids.length === 1 && kids[0].id === 'screen' && kids[0].tagName === 'DIV' ? kids[0] : null;
  // every element, those inside open shadow roots too
  const allElements = (root, acc = []) => {
    for (const el of root.querySelectorAll('*')) {
      acc.push(el);
      if (el.shadowRoot) allElements(el.shadowRoot, acc);
    }
    return acc;
  };
  const stateOf = new Map();
  for (const el of allElements(document)) {
    const cls = [];
    for (const [pseudo, c] of STATE) { try { if (el.matches(pseudo)) cls.push(c); } catch (e) {} }
    if (cls.length) stateOf.set(el, cls);
  }
  const PSEUDO_RE = /::?[a-zA-Z-]+(\((?:[^()]|\([^()]*\))*\))?/g;
  // `scope`: the document, or the shadow root a sheet styles
  const matchesSomething = (sel, scope) => {
    for (const part of sel.split(',')) {
      let s = part.replace(PSEUDO_RE, '').replace(STATE_CLASS_RE, '').trim();
      if (!s || /[>+~]$/.test(s)) return true;
      try { if (scope.querySelector(s)) return true; } catch (e) { return true; }
    }
    return false;
  };
  const rewriteSelector = (sel) => {
    let s = sel;
    for (const [pseudo, c] of STATE) s = s.split(pseudo).join('.' + c);
    return s;
  };

  // ---- stylesheets -----------------------------------------------------------------------
  const loadedFaces = new Set();
  const W = {normal: '400', bold: '700', '': '400'};
  const faceKey = (family, weight, style) =>
    [family.replace(/^["']|["']$/g, '').trim().toLowerCase(), W[weight] || weight, style || 'normal'].join('|');
  try {
    for (const f of document.fonts) if (f.status === 'loaded') loadedFaces.add(faceKey(f.family, f.weight, f.style));
  } catch (e) {}
  // A rule's declarations as text. Chromium writes a background shorthand of several layers with
  // the single-valued longhands (`background-size: cover` after `background: a, url(b)`) on the
  // first layer only, so the others fall back to auto size and repeat; such a rule is written
  // as its longhands, which are exact (unless a var() leaves them pending).
  const depth0Commas = (v) => {
    let d = 0, n = 0;
    for (const ch of v) { if (ch === '(') d++; else if (ch === ')') d--; else if (ch === ',' && !d) n++; }
    return n;
  };
  const declarations = (style) => {
    const text = style.cssText;
    if (!/(^|;\s*)(background|mask):/.test(text) || text.includes('var(')) return text;
    if (!depth0Commas(style.getPropertyValue('background-image')) && !depth0Commas(style.getPropertyValue('mask-image'))) return text;
    let out = '';
    for (let i = 0; i < style.length; i++) {
      const p = style.item(i);
      out += `${p}: ${style.getPropertyValue(p)}${style.getPropertyPriority(p) ? ' !important' : ''}; `;
    }
    return out.trim();
  };
  const serializeRules = async (rules, base, scope = document) => {
    let out = '';
    for (const rule of rules) {
      if (rule instanceof CSSStyleRule) {
        if (!matchesSomething(rule.selectorText, scope)) continue;
        const sel = rewriteSelector(rule.selectorText);
        let body = declarations(rule.style);
        if (rule.cssRules && rule.cssRules.length) body += await serializeRules(rule.cssRules, base, scope);
        out += `${sel}{${await inlineUrls(body, base)}}\n`;
      } else if (rule instanceof CSSMediaRule) {
        if (matchMedia(rule.media.mediaText).matches) out += await serializeRules(rule.cssRules, base, scope);
      } else if (typeof CSSSupportsRule !== 'undefined' && rule instanceof CSSSupportsRule) {
        if (CSS.supports(rule.conditionText)) out += await serializeRules(rule.cssRules, base, scope);
      } else if (rule instanceof CSSImportRule) {
        if (rule.styleSheet && (!rule.media.mediaText || matchMedia(rule.media.mediaText).matches)) {
          out += await serializeSheet(rule.styleSheet, rule.styleSheet.href || base, scope);
        }
      } else if (rule instanceof CSSFontFaceRule) {
        // only faces the page actually loaded: an unused weight is dead weight in every target
        const st = rule.style;
        const key = faceKey(st.getPropertyValue('font-family'), st.getPropertyValue('font-weight'), st.getPropertyValue('font-style'));
        if (!loadedFaces.has(key)) continue;
        out += await inlineUrls(rule.cssText, base) + '\n';
      } else if (typeof CSSLayerBlockRule !== 'undefined' && rule instanceof CSSLayerBlockRule) {
        out += `@layer ${rule.name}{${await serializeRules(rule.cssRules, base, scope)}}\n`;
      } else {
        out += await inlineUrls(rule.cssText, base) + '\n';  // @keyframes, @page, @layer statements...
      }
    }
    return out;
  };
  const serializeSheet = async (sheet, base, scope = document) => {
    if (sheet.disabled) return '';
    if (sheet.media && sheet.media.mediaText && !matchMedia(sheet.media.mediaText).matches) return '';
    let rules = null;
    try { rules = sheet.cssRules; } catch (e) {}
    if (rules) return serializeRules(rules, base, scope);
    if (sheet.href) {  // cross-origin: read its text through the recorder's router
      try {
        const r = await fetch(sheet.href);
        if (r.ok) {
          const tmp = new CSSStyleSheet();
          tmp.replaceSync((await r.text()).replace(/@import[^;]*;/g, ''));
          return serializeRules(tmp.cssRules, sheet.href, scope);
        }
      } catch (e) {}
    }
    return '';
  };
  let css = '';
  for (const sheet of document.styleSheets) {
    const owner = sheet.ownerNode;
    if (owner && owner.closest && owner.closest('template,svg')) continue;
    css += await serializeSheet(sheet, sheet.href || document.baseURI);
  }
  for (const sheet of (document.adoptedStyleSheets || [])) css += await serializeSheet(sheet, document.baseURI);

  // ---- the DOM ---------------------------------------------------------------------------
  const SKIP = new Set(['SCRIPT','NOSCRIPT','TEMPLATE','LINK','STYLE','BASE','IFRAME','FRAME','OBJECT','EMBED','PORTAL']);
  const HTML_NS = 'http://www.w3.org/1999/xhtml';
  const out = document.implementation.createHTMLDocument('');
  const imgURL = async (img) => {
    const src = img.currentSrc || img.src;
    if (!src) return '';
    if (src.startsWith('data:')) return src;
    const d = await toDataURL(src);
    if (d) return d;
    try {
      const c = document.createElement('canvas');
      c.width = img.naturalWidth; c.height = img.naturalHeight;
      if (!c.width || !c.height) return 'data:,';
      c.getContext('2d').drawImage(img, 0, 0);
      return c.toDataURL('image/png');
    } catch (e) { return 'data:,'; }
  };
  const addTranslate = (node, dx, dy) => {
    // an earlier capture's scroll is already a translate: a new shift adds to it
    const [ox, oy] = (node.style.translate || '').split(/\s+/).map(v => parseFloat(v) || 0);
    node.style.setProperty('translate', `${(ox || 0) + dx}px ${(oy || 0) + dy}px`);
  };
  const shiftChildren = (el, target, dx, dy) => {
    for (const child of target.children) {
      const src = child.__wmSource;
      if (src && getComputedStyle(src).position === 'fixed') continue;
      addTranslate(child, -dx, -dy);
    }
  };
  // A sticky element stuck to its scroller's edge sits where no scroll puts it in the static
  // document (it rides the scroll's translate with everything else): how far stickiness moved
  // it, measured against the same element laid out static for a moment.
  const stickyShift = (el) => {
    const live = el.getBoundingClientRect();
    const had = el.hasAttribute('style');
    const prev = el.style.getPropertyValue('position'), prio = el.style.getPropertyPriority('position');
    el.style.setProperty('position', 'static', 'important');
    const still = el.getBoundingClientRect();
    if (prev) el.style.setProperty('position', prev, prio); else el.style.removeProperty('position');
    if (!had) el.removeAttribute('style');
    return [live.left - still.left, live.top - still.top];
  };
  // The window's scroll, kept as a scroll: a declarative shadow root on <body> holding a 0x0
  // target where the view's top-left was (absolutely placed, the page's scroll-padding added)
  // with `scroll-initial-target`, and a <slot> for the body's children. The browser then opens
  // the static page scrolled to exactly where the live one was, so fixed and sticky elements,
  // paint order and every selector (the light tree is untouched) are as they were live.
  const isScrollRoot = (sr) => !!sr && [...sr.children].some(c => c.hasAttribute('data-wm-scroll'));
  const placeScroll = (bodyNode, sx, sy) => {
    const b = document.body;
    if (b.shadowRoot && !isScrollRoot(b.shadowRoot)) return false;  // a shadow root of its own
    const sc = getComputedStyle(document.scrollingElement || document.documentElement);
    let ox = 0, oy = 0;  // the target's containing block, when <body> or <html> is positioned
    for (const cb of [b, document.documentElement]) {
      if (getComputedStyle(cb).position !== 'static') {
        const r = cb.getBoundingClientRect();
        ox = r.left + sx + cb.clientLeft; oy = r.top + sy + cb.clientTop;
        break;
      }
    }
    const x = sx + (parseFloat(sc.scrollPaddingLeft) || 0) - ox;
    const y = sy + (parseFloat(sc.scrollPaddingTop) || 0) - oy;
    const tpl = out.createElement('template');
    tpl.setAttribute('shadowrootmode', 'open');
    tpl.setAttribute('shadowrootserializable', '');
    const t = out.createElement('div');
    t.setAttribute('data-wm-scroll', '');
    t.setAttribute('style', `position:absolute;left:${x}px;top:${y}px;width:0;height:0;` +
      'scroll-initial-target:nearest;scroll-snap-align:start start');
    tpl.content.appendChild(t);
    // the body's children hang from the slot in the flat tree: it passes on every property of
    // the body, so `box-sizing: inherit` and the like see the body's values, as they did live
    const slot = out.createElement('slot');
    slot.setAttribute('style', 'all:inherit;display:contents');
    tpl.content.appendChild(slot);
    bodyNode.insertBefore(tpl, bodyNode.firstChild);
    return true;
  };
  const copy = async (el) => {
    if (el.nodeType === 3) return out.createTextNode(el.textContent);
    if (el.nodeType !== 1 || SKIP.has(el.tagName)) return null;
    if (el.tagName === 'META' && el.httpEquiv) return null;
    const tag = el.tagName;
    let node;
    if (tag === 'CANVAS') {
      node = out.createElement('img');
      let d = 'data:,';
      try { d = el.toDataURL('image/png'); } catch (e) {}
      node.setAttribute('src', d);
      const r = el.getBoundingClientRect();
      node.setAttribute('style', (el.getAttribute('style') || '') + `;width:${r.width}px;height:${r.height}px`);
      for (const a of ['id', 'class']) if (el.hasAttribute(a)) node.setAttribute(a, el.getAttribute(a));
    } else {
      node = out.createElementNS(el.namespaceURI || HTML_NS, el.namespaceURI === HTML_NS ? tag.toLowerCase() : el.tagName);
      for (const a of el.attributes) {
        const n = a.name.toLowerCase();
        if (n.startsWith('on') || n === 'srcset' || n === 'autofocus' || n === 'nonce' || n === 'integrity') continue;
        if (/^\s*javascript:/i.test(a.value)) continue;
        try { node.setAttribute(a.name, a.value); } catch (e) {}
      }
      if (el.hasAttribute('style')) node.setAttribute('style', await inlineUrls(el.getAttribute('style'), document.baseURI));
    }
    node.__wmSource = el;
    if (node.classList) {
      for (const c of STATE_CLASSES) node.classList.remove(c);
      if (node.getAttribute('class') === '') node.removeAttribute('class');
    }
    if (node.hasAttribute && node.hasAttribute(__WM_RING__)) {  // an earlier capture's focus ring
      node.style.removeProperty('outline');
      node.style.removeProperty('outline-offset');
      node.removeAttribute(__WM_RING__);
      if (node.getAttribute('style') === '') node.removeAttribute('style');
    }
    const state = stateOf.get(el);
    if (state) for (const c of state) node.classList.add(c);
    if (el === document.activeElement && el !== document.body) {
      // the browser's own focus ring comes from its UA stylesheet, which no rewrite reaches
      const cs = getComputedStyle(el);
      if (cs.outlineStyle !== 'none') {
        node.style.setProperty('outline', `${cs.outlineColor} ${cs.outlineStyle} ${cs.outlineWidth}`);
        node.style.setProperty('outline-offset', cs.outlineOffset);
        node.setAttribute(__WM_RING__, '');
      }
    }
    if (tag === 'IMG') node.setAttribute('src', await imgURL(el));
    if (tag === 'SOURCE' || tag === 'TRACK') return null;
    if ((tag === 'IMAGE' || tag === 'image') && el.namespaceURI !== HTML_NS) {
      const h = el.getAttribute('href') || el.getAttribute('xlink:href');
      if (h) { const d = await toDataURL(new URL(h, document.baseURI).href); if (d) node.setAttribute('href', d); }
    }
    if (tag === 'VIDEO') { node.removeAttribute('src'); node.removeAttribute('autoplay'); }
    if (tag === 'INPUT') {
      const t = (el.type || '').toLowerCase();
      if (t === 'checkbox' || t === 'radio') { if (el.checked) node.setAttribute('checked', ''); else node.removeAttribute('checked'); }
      else if (t !== 'file' && t !== 'password') node.setAttribute('value', el.value);
      else if (t === 'password') node.setAttribute('value', el.value);
    }
    if (tag === 'OPTION') { if (el.selected) node.setAttribute('selected', ''); else node.removeAttribute('selected'); }
    if (tag === 'DETAILS') { if (el.open) node.setAttribute('open', ''); else node.removeAttribute('open'); }
    if (tag === 'TEXTAREA') { node.textContent = el.value; return node; }
    if (el.shadowRoot && el.shadowRoot.mode === 'open' && !isScrollRoot(el.shadowRoot)) {
      // declarative shadow DOM: the root's sheets (its <style>/<link> ones, then adopted ones,
      // the order the cascade takes them in) and its children, ahead of the light children
      const sr = el.shadowRoot;
      const tpl = out.createElement('template');
      tpl.setAttribute('shadowrootmode', 'open');
      tpl.setAttribute('shadowrootserializable', '');  // render/compact.py writes it back
      if (sr.delegatesFocus) tpl.setAttribute('shadowrootdelegatesfocus', '');
      let scss = '';
      for (const sheet of sr.styleSheets) scss += await serializeSheet(sheet, sheet.href || document.baseURI, sr);
      for (const sheet of (sr.adoptedStyleSheets || [])) scss += await serializeSheet(sheet, document.baseURI, sr);
      if (scss) {
        const style = out.createElement('style');
        style.textContent = scss;
        tpl.content.appendChild(style);
      }
      for (const child of sr.childNodes) { const c = await copy(child); if (c) tpl.content.appendChild(c); }
      node.appendChild(tpl);
    }
    for (const child of el.childNodes) { const c = await copy(child); if (c) node.appendChild(c); }
    if (tag !== 'BODY' && tag !== 'HTML' && getComputedStyle(el).position === 'sticky') {
      const [sx, sy] = stickyShift(el);
      if (Math.abs(sx) >= 0.5 || Math.abs(sy) >= 0.5) {
        addTranslate(node, sx, sy);
        // the scrolled siblings after it are translated too, which paints them over it unless
        // it is lifted (live, they are in the flow, painted under it)
        if (getComputedStyle(el).zIndex === 'auto') node.style.setProperty('z-index', '1');
      }
    }
    const st = el.scrollTop, sl = el.scrollLeft;
    if ((st || sl) && tag !== 'BODY' && tag !== 'HTML') shiftChildren(el, node, sl, st);
    return node;
  };
  const body = (await copy(document.body)) || out.createElement('body');
  let root = oldWrapper ? body.querySelector(':scope > #screen') : null;
  if (!root) {
    // the body is the root: no wrapper, so no selector changes what it matches
    root = body;
    if (!body.hasAttribute('id')) body.setAttribute('id', 'screen');
    body.setAttribute('data-wm-size', `${innerWidth}x${innerHeight}`);
  }
  if (window.scrollX || window.scrollY) {
    if (!placeScroll(body, window.scrollX, window.scrollY)) shiftChildren(document.body, root, window.scrollX, window.scrollY);
  }
  for (const n of body.querySelectorAll('*')) delete n.__wmSource;
  const htmlAttrs = [...document.documentElement.attributes]
    .filter(a => !a.name.toLowerCase().startsWith('on') && a.name !== 'manifest')
    .map(a => ` ${a.name}="${a.value.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"`).join('');
  const doctype = document.doctype ? '<!DOCTYPE html>' : '';
  const head = '<head><meta charset="utf-8">' +
    [...document.head.querySelectorAll('meta[name=viewport]')].map(m => m.outerHTML).join('') +
    '<style>' + css.replace(/<\/style/gi, '<\\/style') + '</style></head>';
  return doctype + `<html${htmlAttrs}>` + head + body.outerHTML + '</html>';
}"""
CAPTURE_JS = with_state_names(CAPTURE_JS)

# Per inlined resource and per screen: fonts and textures up to these sizes travel as data URLs
# (a larger raster image is re-encoded smaller until it fits; see `shrink` above).
MAX_RESOURCE_BYTES = 400_000
MAX_INLINED_BYTES = 2_000_000
CAPTURE_OPTIONS = {"maxResource": MAX_RESOURCE_BYTES, "maxTotal": MAX_INLINED_BYTES}
