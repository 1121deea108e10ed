"""A self-contained HTML snapshot of a live page: what the world model learns to write.

The snapshot must render, in the sandbox, to what the screenshot shows: so
computed styles are inlined (stylesheets may be remote), scripts are removed,
form state is frozen into attributes, images and canvases become data URLs,
and scroll offsets become translations.
"""

SNAPSHOT_JS = r"""() => {
  const PROPS = ['display','position','top','left','right','bottom','width','height','min-width','min-height',
    'max-width','max-height','margin-top','margin-right','margin-bottom','margin-left','padding-top',
    'padding-right','padding-bottom','padding-left','border-top','border-right','border-bottom','border-left',
    'border-radius','box-sizing','background-color','background-image','background-size','background-position',
    'background-repeat','color','font-family','font-size','font-weight','font-style','line-height',
    'letter-spacing','text-align','text-decoration','text-transform','text-overflow','white-space','word-break',
    'vertical-align','overflow','overflow-x','overflow-y','opacity','visibility','z-index','float','clear',
    'flex-direction','flex-wrap','flex-grow','flex-shrink','flex-basis','justify-content','align-items',
    'align-self','align-content','gap','order','grid-template-columns','grid-template-rows','grid-column',
    'grid-row','box-shadow','transform','transform-origin','list-style-type','list-style-position',
    'table-layout','border-collapse','border-spacing','outline','object-fit','cursor','fill','stroke'];
  const SKIP = new Set(['SCRIPT','NOSCRIPT','TEMPLATE','LINK','META','STYLE','BASE','IFRAME','OBJECT','EMBED']);
  const canvasURL = (c) => { try { return c.toDataURL('image/png'); } catch (e) { return ''; } };
  const imgURL = (img) => {
    if (img.src.startsWith('data:')) return img.src;
    try {
      const c = document.createElement('canvas');
      c.width = img.naturalWidth; c.height = img.naturalHeight;
      c.getContext('2d').drawImage(img, 0, 0);
      return c.toDataURL('image/png');
    } catch (e) { return ''; }
  };
  // Keep a property only where it differs from what the snapshot would get anyway: the parent's
  // value for inherited properties, the tag's default otherwise. That keeps targets short.
  const INHERITED = new Set(['color','font-family','font-size','font-weight','font-style','line-height',
    'letter-spacing','text-align','text-transform','white-space','word-break','visibility','cursor',
    'list-style-type','list-style-position','border-collapse','border-spacing','fill','stroke']);
  const frame = document.createElement('iframe');
  frame.style.cssText = 'position:absolute;left:-9999px;width:10px;height:10px;border:0';
  document.documentElement.appendChild(frame);
  const fdoc = frame.contentDocument;
  // Odd values on the probe body reveal which inherited properties a tag's UA style overrides.
  fdoc.body.style.cssText = 'color:rgb(1,2,3);font-family:wmprobe;font-size:17px;font-weight:300;font-style:italic;' +
    'line-height:23px;letter-spacing:1px;text-align:right;text-transform:uppercase;white-space:pre;' +
    'word-break:break-all;cursor:crosshair;list-style-type:square;list-style-position:inside;border-spacing:3px;' +
    'border-collapse:collapse;fill:rgb(1,2,3);stroke:rgb(1,2,3)';
  const defaults = {};
  const defaultsFor = (el) => {
    const tag = el.tagName.toLowerCase();
    if (!defaults[tag]) {
      const d = fdoc.createElementNS(el.namespaceURI, tag);
      fdoc.body.appendChild(d);
      const cs = getComputedStyle(d), o = {};
      for (const p of PROPS) o[p] = cs.getPropertyValue(p);
      defaults[tag] = o;
    }
    return defaults[tag];
  };
  const rootDefaults = {}, bodyDefaults = {};
  { const cs = getComputedStyle(fdoc.documentElement); for (const p of PROPS) rootDefaults[p] = cs.getPropertyValue(p); }
  { const cs = getComputedStyle(fdoc.body); for (const p of PROPS) bodyDefaults[p] = cs.getPropertyValue(p); }
  // `pseudo` ('::before'/'::after') styles the generated box as a span inside `el`.
  const SPAN = document.createElement('span');
  function styleOf(el, pseudo) {
    const cs = getComputedStyle(el, pseudo || null);
    const pcs = pseudo ? getComputedStyle(el) : el.parentElement ? getComputedStyle(el.parentElement) : null;
    const def = pseudo ? defaultsFor(SPAN) : el.parentElement ? defaultsFor(el) : rootDefaults;
    let s = '';
    for (const p of PROPS) {
      let v = cs.getPropertyValue(p);
      if (!v) continue;
      // An inherited property the browser's own stylesheet sets for this tag (a button's colour,
      // an <i>'s style) is not inherited from the parent, so it is compared with the tag default.
      const inherits = INHERITED.has(p) && (!pcs || def[p] === bodyDefaults[p]);
      if (inherits ? v === (pcs ? pcs.getPropertyValue(p) : rootDefaults[p]) : (v === def[p] && p !== 'width' && p !== 'height')) continue;
      if (p === 'background-image' && v !== 'none' && !v.startsWith('url("data:') && !v.includes('gradient')) v = 'none';
      s += p + ':' + v + ';';
    }
    return s;
  }
  function copy(el) {
    if (el.nodeType === 3) return document.createTextNode(el.textContent);
    if (el.nodeType !== 1 || SKIP.has(el.tagName)) return null;
    const tag = el.tagName;
    let out;
    if (tag === 'CANVAS') {
      out = document.createElement('img');
      out.setAttribute('src', canvasURL(el));
    } else {
      out = document.createElementNS(el.namespaceURI, el.tagName.toLowerCase());
      for (const a of el.attributes) {
        const n = a.name.toLowerCase();
        if (n.startsWith('on') || n === 'style' || n === 'class' || n === 'srcset' || n === 'href') continue;
        if (n === 'src' && tag !== 'IMG') continue;
        try { out.setAttribute(a.name, a.value); } catch (e) {}
      }
    }
    if (tag === 'IMG') out.setAttribute('src', imgURL(el));
    if (tag === 'INPUT') {
      const t = (el.type || '').toLowerCase();
      if (t === 'checkbox' || t === 'radio') { if (el.checked) out.setAttribute('checked', ''); else out.removeAttribute('checked'); }
      else out.setAttribute('value', el.value);
    }
    if (tag === 'OPTION') { if (el.selected) out.setAttribute('selected', ''); else out.removeAttribute('selected'); }
    if (el.nodeType === 1 && el.namespaceURI === 'http://www.w3.org/1999/xhtml') out.setAttribute('style', styleOf(el));
    else if (el.namespaceURI === 'http://www.w3.org/2000/svg' && el.getAttribute('style')) out.setAttribute('style', el.getAttribute('style'));
    if (tag === 'TEXTAREA') { out.textContent = el.value; return out; }
    let target = out;
    const st = el.scrollTop, sl = el.scrollLeft;
    if ((st || sl) && tag !== 'BODY' && tag !== 'HTML') {
      target = document.createElement('div');
      target.setAttribute('style', `transform:translate(${-sl}px,${-st}px)`);
      out.appendChild(target);
    }
    // ::before/::after boxes (a toggle's knob, an icon) become real spans: the snapshot has no stylesheet.
    const pseudoBox = (which) => {
      const pc = getComputedStyle(el, which).getPropertyValue('content');
      if (!pc || pc === 'none' || pc === 'normal') return null;
      const span = document.createElement('span');
      span.setAttribute('style', styleOf(el, which));
      const m = pc.match(/^"(.*)"$/);
      if (m) span.textContent = m[1];
      return span;
    };
    const before = el.namespaceURI === 'http://www.w3.org/1999/xhtml' ? pseudoBox('::before') : null;
    if (before) target.appendChild(before);
    for (const child of el.childNodes) { const c = copy(child); if (c) target.appendChild(c); }
    const after = el.namespaceURI === 'http://www.w3.org/1999/xhtml' ? pseudoBox('::after') : null;
    if (after) target.appendChild(after);
    return out;
  }
  const body = copy(document.body) || document.createElement('body');
  // The output contract's root: a #screen of the viewport's size holding everything. It is not
  // positioned, so absolutely placed content keeps its containing block; a window scroll
  // becomes its translation.
  const root = document.createElement('div');
  root.setAttribute('id', 'screen');
  let rs = `width:${innerWidth}px;height:${innerHeight}px`;
  if (window.scrollX || window.scrollY) rs += `;transform:translate(${-window.scrollX}px,${-window.scrollY}px)`;
  root.setAttribute('style', rs);
  while (body.firstChild) root.appendChild(body.firstChild);
  body.appendChild(root);
  frame.remove();
  const htmlStyle = styleOf(document.documentElement).replace(/(^|;)(width|height):[^;]*;/g, '$1');
  return '<!DOCTYPE html><html style="' + htmlStyle.replace(/"/g, '&quot;') + '"><head><meta charset="utf-8"></head>'
    + body.outerHTML + '</html>';
}"""
