"""The stylesheet capture keeps what every selector matches (issue 27): hand-written pages whose
rules hang on the body's structure, the viewport and shadow roots, captured live and rendered back.

Each page's script changes what only the structure decides (a class on <body> that a child
combinator reads, a sibling toggled): a capture with anything between <body> and its children,
or without the shadow roots, lays these pages out differently from the screenshot.
"""

import pytest
from bs4 import BeautifulSoup

from corpus.apps import folder_app
from corpus.recorder import Recorder
from render import Renderer, Viewport
from render.capture import MAX_RESOURCE_BYTES
from render.metrics import blur_ssim, pixels_off
from worldmodel.edit import annotate
from worldmodel.extract import root_size
from worldmodel.types import Action

FLOOR = 0.99

# A class on <body> and on <html> that child and sibling combinators read, the way a menu
# opens: `.open > .panel` moves a panel into view, everything else reads body's own children.
COMBINATORS = """<!DOCTYPE html><html class="js"><head><style>
html{box-sizing:border-box} *,*::before,*::after{box-sizing:inherit}
body{margin:0;font:15px sans-serif}
main{width:300px;padding:0 24px;border-right:8px solid #90a4ae}
body > *{margin:0;padding:6px 10px}
body > header{background:#1e88e5;color:#fff}
.open > .panel{position:absolute;left:0;top:0;width:200px;height:100%;background:#263238;color:#fff}
body:not(.open) > .panel{position:absolute;left:-300px}
html.js > body > main{border-left:6px solid #8e24aa}
:root > body > footer{background:#ffe082;height:600px}
header + .panel + main{color:#2e7d32}
header ~ footer{border-top:4px dashed #d81b60}
body > :first-child{letter-spacing:2px}
body > :last-child{font-style:italic}
main > p:nth-child(2n+1){background:#e3f2fd}
main > p:nth-child(2){background:#fce4ec}
main > p:only-child{background:red}
main > div:empty{height:20px;background:#ff7043}
main > div:only-child{background:red}
main:has(> p.hot){outline:3px solid #43a047}
li:first-child{font-weight:bold} li:last-child{color:#6d4c41} li:nth-last-child(2){color:#00838f}
</style></head><body>
<header>Title</header>
<nav class="panel">Side panel<br><button id="close">close</button></nav>
<main><p>one</p><p class="hot">two</p><p>three</p><div></div>
<ul><li>a</li><li>b</li><li>c</li><li>d</li></ul>
<button id="menu">menu</button> <button id="more">more</button></main>
<footer>footer</footer>
<script>
document.getElementById('menu').onclick = () => document.body.classList.add('open');
document.getElementById('close').onclick = () => document.body.classList.remove('open');
document.getElementById('more').onclick = () => {
  const li = document.createElement('li'); li.textContent = 'new'; document.querySelector('ul').appendChild(li);
};
</script></body></html>"""

# Custom properties on :root, a fixed 100vh app shell with a sticky header inside a scroller,
# and @media (min-width) rules that hold on one side of the viewport and not on the other.
LAYOUT = """<!DOCTYPE html><html><head><style>
:root{--accent:#00897b;--pad:12px;--bar:48px}
:root.dark{--accent:#f4511e}
*{box-sizing:border-box}
body{margin:0;font:14px sans-serif;height:100vh;display:flex;flex-direction:column}
.top{position:fixed;top:0;left:0;right:0;height:var(--bar);background:var(--accent);color:#fff;padding:var(--pad)}
.shell{margin-top:var(--bar);height:calc(100vh - var(--bar));overflow:auto}
.sticky{position:sticky;top:0;background:#eceff1;padding:8px;border-bottom:2px solid var(--accent)}
.row{padding:var(--pad);border-bottom:1px solid #ddd}
.cols{display:block}
.wide-only{display:none}
@media (min-width: 700px){.cols{display:grid;grid-template-columns:1fr 2fr}.wide-only{display:block;background:#fff59d}
  .narrow-only{display:none}}
@media (max-width: 699px){.row:nth-child(odd){background:#f3e5f5}}
.fab{position:fixed;right:16px;bottom:16px;width:56px;height:56px;border-radius:50%;background:var(--accent)}
</style></head><body>
<div class="top">App <button id="theme">theme</button></div>
<div class="shell"><div class="sticky">Sticky section header</div>
<div class="cols"><div class="wide-only">wide sidebar</div><div>
<p class="narrow-only">narrow note</p>
<div class="row">row 1</div><div class="row">row 2</div><div class="row">row 3</div><div class="row">row 4</div>
<div class="row">row 5</div><div class="row">row 6</div><div class="row">row 7</div><div class="row">row 8</div>
<div class="row">row 9</div><div class="row">row 10</div><div class="row">row 11</div><div class="row">row 12</div>
<div class="row">row 13</div><div class="row">row 14</div><div class="row">row 15</div><div class="row">row 16</div>
</div></div></div>
<div class="fab"></div>
<script>
document.getElementById('theme').onclick = () => document.documentElement.classList.toggle('dark');
</script></body></html>"""

# A web component: an open shadow root styled by an adopted sheet and an inline <style>,
# with :host, ::slotted and a :host([open]) state its button toggles.
SHADOW = """<!DOCTYPE html><html><head><style>
body{margin:0;font:15px sans-serif;padding:10px}
x-card{display:block;margin:8px 0}
</style></head><body>
<x-card><span slot="title">First card</span>light text one</x-card>
<x-card open><span slot="title">Second card</span>light text two</x-card>
<script>
const sheet = new CSSStyleSheet();
sheet.replaceSync(`:host{border:2px solid #5e35b1;border-radius:8px;overflow:hidden}
.head{background:#5e35b1;color:#fff;padding:8px;display:flex;justify-content:space-between}
::slotted([slot=title]){font-weight:bold;text-transform:uppercase}`);
customElements.define('x-card', class extends HTMLElement {
  constructor() {
    super();
    const r = this.attachShadow({mode: 'open'});
    r.adoptedStyleSheets = [sheet];
    r.innerHTML = `<style>.body{padding:10px;display:none;background:#ede7f6}
:host([open]) .body{display:block} button{background:#ffca28;border:0;padding:4px 8px}</style>
<div class="head"><slot name="title"></slot><button>toggle</button></div>
<div class="body"><slot></slot></div>`;
    r.querySelector('button').onclick = () => this.toggleAttribute('open');
  }
});
</script></body></html>"""

# A site's hero: a full-size photo over the per-resource inlining cap (the capture re-encodes it
# smaller), drawn under a gradient as a two-layer background whose size, position and repeat are
# single-valued longhands (Chromium's shorthand text keeps those on the first layer only); and
# smooth scrolling, so a tapped in-page link glides for a while before the page holds still.
MEDIA = """<!DOCTYPE html><html><head><style>
html{scroll-behavior:smooth}
body{margin:0;font:16px sans-serif}
.hero{height:520px;color:#fff;padding:40px 20px;box-sizing:border-box;
  background:linear-gradient(to bottom, rgba(20, 20, 60, 0.35), rgba(20, 20, 60, 0.35)), url("photo.png");
  background-position:center;background-repeat:no-repeat;background-size:cover}
.hero a{display:inline-block;background:#ff7043;color:#fff;padding:12px 18px;text-decoration:none}
section{height:900px;padding:20px;background:#eceff1}
#end{height:700px;background:#c5e1a5}
</style></head><body>
<div class="hero"><h1>Big photo</h1><a id="jump" href="#end">to the end</a></div>
<section>middle</section><section id="end">the end</section>
</body></html>"""


def photo_png() -> bytes:
    """A 1600x1000 picture with large shapes (wrong scale or placement shows) and faint pixel
    noise, like a camera's (so the PNG is well over the 400 kB inlining cap)."""
    import io

    import numpy as np
    from PIL import Image

    y, x = np.mgrid[0:1000, 0:1600]
    img = np.zeros((1000, 1600, 3), np.uint8)
    img[..., 0] = np.where(((x // 190) + (y // 140)) % 2, 230, 40)
    img[..., 1] = (x * 255 // 1600).astype(np.uint8)
    img[..., 2] = np.where((x - 800) ** 2 + (y - 500) ** 2 < 280**2, 240, 30)
    noise = np.random.default_rng(0).integers(0, 5, img.shape, dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(img - np.minimum(img, noise)).save(buf, format="PNG")
    return buf.getvalue()


PAGES = {"combinators": COMBINATORS, "layout": LAYOUT, "shadow": SHADOW, "media": MEDIA}
# What each page's episode does: taps on these elements ("host/inner" reaches into a shadow
# root) or a scroll of the view, in this order.
STEPS = {
    "combinators": ("#menu", "#close", "#more", "#menu", "scroll"),
    "layout": ("scroll", "#theme", "scroll", "#theme"),
    "shadow": ("x-card/button", "scroll", "x-card:nth-of-type(2)/button"),
    "media": ("#jump", "scroll", "scroll"),
}
_CENTRE_JS = """(path) => {
  let [host, inner] = path.split('/'), el = document.querySelector(host);
  if (inner) el = el.shadowRoot.querySelector(inner);
  const r = el.getBoundingClientRect();
  return [r.left + r.width / 2, r.top + r.height / 2];
}"""


def scripted(steps):
    def policy(ctx):
        if ctx.step >= len(steps):
            return None
        w, h = ctx.screen.size
        if steps[ctx.step] == "scroll":
            return Action(type="scroll", x=w / 2, y=h / 2, direction="down")
        x, y = ctx.page.evaluate(_CENTRE_JS, steps[ctx.step])
        return Action(type="tap", x=x, y=y)

    return policy


SIZES = {"phone": Viewport(360, 640), "desktop": Viewport(1280, 800)}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = {}
    with Recorder() as rec:
        for name, page in PAGES.items():
            d = tmp_path_factory.mktemp(name)
            (d / "index.html").write_text(page)
            (d / "photo.png").write_bytes(photo_png())
            for size, vp in SIZES.items():
                app = folder_app(d, name=f"{name}-{size}", viewport=vp)
                out[name, size] = rec.record_trajectory(app, scripted(STEPS[name]), max_steps=5, seed=2)
    return out


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", PAGES)
def test_hand_written_pages_render_back_as_captured(recorded, renderer, name, size):
    ts = recorded[name, size]
    assert len(ts) >= 3
    shots = [ts[0].screen] + [t.next_screen for t in ts]
    res = renderer.render_many([(s.html, s.viewport()) for s in shots])
    assert not [r for r in res if isinstance(r, Exception)]
    scores = [(blur_ssim(r.image, s.array), pixels_off(r.image, s.array)) for r, s in zip(res, shots)]
    assert min(b for b, _ in scores) >= FLOOR, (name, size, scores)
    for s in shots:  # the body is the contract's root, sized by an attribute, with nothing inside it
        soup = BeautifulSoup(s.html, "html.parser")
        assert soup.body.get("id") == "screen" and soup.find("div", id="screen") is None
        assert root_size(s.html) == (s.viewport().width, s.viewport().height)


def test_structure_the_script_changed_is_what_the_capture_shows(recorded):
    # the menu tapped on some step puts `open` on the body: the capture keeps it there, with
    # the panel still body's own child, so `.open > .panel` matches in the render (checked above)
    htmls = [t.next_screen.html for ts in (recorded["combinators", s] for s in SIZES) for t in ts]
    shadow = recorded["shadow", "phone"][0].screen.html
    assert 'shadowrootmode="open"' in shadow and shadow.count("<template") == 2
    assert ":host([open]) .body" in shadow and "::slotted" in shadow  # inline and adopted sheets
    assert all("#screen >" not in h for h in htmls)
    assert sum('<body class="open' in h for h in htmls) == 6  # open after 3 of 5 steps, per size
    # the phone's window scrolled on the last step: kept as a scroll, not a wrapper or translate
    assert "data-wm-scroll" in recorded["combinators", "phone"][-1].next_screen.html


def test_an_oversized_photo_is_inlined_smaller_and_a_layered_background_keeps_its_size(recorded):
    assert len(photo_png()) > MAX_RESOURCE_BYTES
    for size in SIZES:
        first = recorded["media", size][0].screen.html
        assert first.count("data:image/webp") == 1  # re-encoded under the cap, not dropped
        hero = first[first.index(".hero{") :].split("}", 1)[0]
        assert "background-size: cover" in hero and "background-repeat: no-repeat" in hero


def test_a_shadow_root_numbers_where_its_template_stood(recorded, renderer):
    # the sim's hit test counts a shadow root's elements where the parser found its template:
    # the first card's toggle button (inside its shadow root, at the header's right end)
    s = recorded["shadow", "desktop"][0].screen
    soup = BeautifulSoup(annotate(s.html), "html.parser")
    button = soup.find("button")
    points = [(x, y) for x in range(1180, 1270, 6) for y in range(14, 50, 4)]
    (hits,) = renderer.hit_many([(s.html, s.viewport(), points)])
    assert [int(button["n"]), "button"] in hits, hits


def test_an_old_capture_with_the_screen_wrapper_still_renders_and_recaptures(renderer):
    # corpora recorded before this kept the body's content in a display:contents #screen
    old = (
        "<!DOCTYPE html><html><head><style>body > #screen > p{color:rgb(200, 0, 0)}</style></head>"
        '<body><div id="screen" style="display:contents;width:200px;height:100px"><p>hi</p></div></body></html>'
    )
    assert root_size(old) == (200, 100)
    vp = Viewport(200, 100)
    res = renderer.render_many([(old, vp)])[0]
    assert not isinstance(res, Exception)
    red = (res.image[..., 0] > 150) & (res.image[..., 1] < 80)
    assert red[:40, :60].any()


def test_a_page_rendered_after_a_smoothly_scrolled_one_opens_at_its_top(recorded):
    # one pooled page renders both: the first asks for smooth scrolling and is captured after
    # its in-page link scrolled the window; the window goes home at once before the next document
    ts = recorded["media", "phone"]
    top, jumped = ts[0].screen, ts[0].next_screen
    assert "data-wm-scroll" in jumped.html
    with Renderer(pool_size=1, cache_size=0) as r:
        r.render_many([(jumped.html, jumped.viewport())])
        (res,) = r.render_many([(top.html, top.viewport())])
    assert blur_ssim(res.image, top.array) >= FLOOR
