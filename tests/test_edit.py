"""The edit language: diff writes it, apply carries it out, and every bundled transition's edit
renders to its real next screen; malformed edits fail with the line named."""

import re

import numpy as np
import pytest
from bs4 import BeautifulSoup

from corpus.store import load_corpus
from render import Viewport
from render.metrics import ssim
from worldmodel.edit import EditError, annotate, apply, diff, try_apply

A = """<!DOCTYPE html><html><head><style>p{color:red}
b{font-weight:bold}</style></head><body><div id="screen"><h1>Notes</h1>
<ul><li>one</li><li>two</li></ul><input id="t" value=""><p>Hello <b>you</b></p></div></body></html>"""


def test_each_operation_applies():
    edit = "\n".join(
        [
            'attr 6 value "Kasie"',  # the input
            'text 2 "My notes"',  # the h1 (0 is the body, 1 the #screen div: see annotate)
            'after 5 "<li>three</li>"',
            "remove 4",
            'css-ins 1 "i{color:blue}"',
            "css-del 0 1",
        ]
    )
    numbered = annotate(A)
    assert 'n="0"' in numbered and numbered.count(" n=") == 9
    out = BeautifulSoup(apply(A, edit), "html.parser")
    assert out.find("input")["value"] == "Kasie" and out.h1.text == "My notes"
    assert [li.text for li in out.find_all("li")] == ["two", "three"]
    assert out.style.string == "i{color:blue}\nb{font-weight:bold}"
    # a whole document is an edit, and so is nothing
    assert apply(A, "<html><body>new</body></html>") == "<html><body>new</body></html>"
    assert apply(A, "  \n") == A


def test_class_changes_keep_the_other_classes():
    html = A.replace('<input id="t"', '<input id="t" class="field big"')
    out = BeautifulSoup(apply(html, "class 6 +wm-hover -big +on"), "html.parser")
    assert out.find("input")["class"] == ["field", "wm-hover", "on"]
    gone = BeautifulSoup(apply(html, "class 6 -field -big"), "html.parser")
    assert "class" not in gone.find("input").attrs
    # diff writes the short form when the kept classes keep their order, else the whole list
    nxt = html.replace('class="field big"', 'class="field big wm-hover"')
    assert diff(html, nxt) == "class 6 +wm-hover"
    swapped = html.replace('class="field big"', 'class="big field"')
    assert diff(html, swapped) == 'attr 6 class "big field"'  # order kept exactly
    assert diff(html, html.replace('class="field big"', 'class="x"')) == 'attr 6 class "x"'


@pytest.mark.parametrize(
    "edit, says",
    [
        ("jump 3", "line 1"),
        ('text 99 "x"', "no element 99"),
        ("attr x value 1", "element number"),
        ('text 2 "unterminated', "bad quoted string"),
        ('remove 3\ntext 4 "x"', "line 2"),  # the li inside the removed ul
        ("css-del 50", "out of range"),
        ("remove 0", "body cannot be removed"),
        ('text 0 "x"', "wipe the whole body"),
        ("class 6 wm-hover", "class change"),
        ("class 6", "class takes"),
        ("text 2 +wm-focus", "quoted value"),  # a bare word is not a value
        ("attr 2 value x", "quoted value"),
        ("after 2 <b>x</b>", "quoted HTML"),
    ],
)
def test_malformed_edits_name_their_line(edit, says):
    with pytest.raises(EditError, match=says):
        apply(A, edit)
    html, err = try_apply(A, edit)
    assert html is None and says in err


def _canon(html: str) -> str:
    """The DOM with attributes sorted and whitespace-only text dropped: equal means same render."""
    soup = BeautifulSoup(html, "html.parser")
    for el in soup.find_all(True):
        el.attrs = dict(sorted((k, " ".join(v) if isinstance(v, list) else v) for k, v in el.attrs.items()))
    for t in soup.find_all(string=True):
        if not t.strip():
            t.extract()
    return str(soup)


def test_diff_then_apply_renders_the_next_screen_on_every_bundled_transition(renderer):
    dd = load_corpus()
    pairs = [
        (a, b, w, h, s)
        for sp in dd
        for a, b, w, h, s in zip(
            *(dd[sp][c] for c in ("screen_html", "next_html", "width", "height", "device_scale_factor"))
        )
        if a and b
    ]
    edits = [diff(a, b) for a, b, *_ in pairs]
    assert edits[:20] == [diff(a, b) for a, b, *_ in pairs[:20]]  # deterministic
    outs = [apply(a, e) for (a, *_), e in zip(pairs, edits)]
    differ = [i for i, (o, p) in enumerate(zip(outs, pairs)) if _canon(o) != _canon(p[1])]
    vps = [Viewport.for_screen(w, h, s) for _, _, w, h, s in pairs]
    got = renderer.render_many([(outs[i], vps[i]) for i in differ], boxes=False)
    want = renderer.render_many([(pairs[i][1], vps[i]) for i in differ], boxes=False)
    scores = [ssim(g.image, w.image) for g, w in zip(got, want)]
    assert all(s >= 0.99 for s in scores), min(scores)
    ratio = np.median([len(e) / len(p[1]) for e, p in zip(edits, pairs)])
    assert ratio < 1.0 and sum(not e for e in edits) > 0


def test_transplant_readdresses_an_edit_onto_another_screen():
    from worldmodel.transplant import transplant

    src = '<html><body><div id="screen"><p>Ann</p><input id="q" value=""><input type="checkbox"></div></body></html>'
    dst = (
        '<html><body><div id="screen"><h1>Other</h1><p>Bob</p><input type="checkbox">'
        '<input id="q" value=""></div></body></html>'
    )
    nxt = src.replace('value=""', 'value="alice"').replace('type="checkbox">', 'type="checkbox" checked="">')
    edit = diff(src, nxt)
    moved = transplant(edit, src, dst, text_from="alice", text_to="Kasie")
    out = BeautifulSoup(apply(dst, moved), "html.parser")
    assert out.find(id="q")["value"] == "Kasie" and out.find("input", type="checkbox").has_attr("checked")
    assert out.h1.text == "Other"  # nothing else moved
    # after the sim has carried the action out, only the app's reaction is left to transplant
    assert transplant(edit, src, dst, text_from="alice", text_to="Kasie", reaction_only=True) == ""
    assert transplant('screen "<p>x</p>"', src, dst) == ""  # a whole other screen is not a change here
    # an anchor made for another HTML (past this screen's elements) is no anchor: found by looks
    small = '<html><body><div id="screen"><p>Bob</p></div></body></html>'
    far = transplant(diff(src, src.replace("Ann", "Ann!")), src, small, anchors={2: 40}, reaction_only=True)
    assert BeautifulSoup(apply(small, far), "html.parser").p.text == "Ann!"


def test_the_reaction_leaves_out_what_only_moves_hover_and_focus():
    from worldmodel.transplant import reaction

    ring = "outline: rgb(16, 16, 16) auto 1px; outline-offset: 0px;"
    html = (
        f'<html><body><div id="screen"><input class="wm-focus" style="width: 150px; {ring}">'
        '<p class="wm-hover">x</p><div>y</div></div></body></html>'
    )
    noise = 'class 3 -wm-hover\nattr 2 style "width: 150px;"\nunattr 3 class\nattr 2 class ""'
    app = 'attr 4 class "hide"\nafter 1 "<div>cover</div>"\nattr 2 style "width: 10px"\nclass 4 +wm-focus +on'
    assert reaction(noise, html) == ""
    assert reaction(noise + "\n" + app, html) == app
    assert reaction("not an edit line\nclass 99 +wm-hover", html) == "not an edit line\nclass 99 +wm-hover"


def test_a_transplanted_reaction_names_the_row_this_action_tapped():
    from worldmodel.doc import Doc
    from worldmodel.transplant import transplant

    def lst(names: list[str]) -> str:
        rows = "".join(f'<div class="row"><div class="av">{n[0]}</div><span>{n}</span></div>' for n in names)
        return f'<html><body><div id="screen"><div class="list">{rows}</div></div></body></html>'

    src, dst = lst(["Maya Cohen", "Mark Ode"]), lst(["Alice Chen", "Farid Khan", "Maya Cohen"])
    page = '<div class="av">M</div><h2>Maya Cohen</h2><p>Mayan tea, Mark Ode</p>'
    nxt = src.replace('<div class="list">', f'<div class="list"><div class="page">{page}</div>', 1)
    edit = diff(src, nxt)
    row = lambda html, k: [i for i, e in enumerate(Doc.of(html).elements) if "row" in e.get("class", [])][k]  # noqa: E731
    # the recorded tap hit Maya's row; this one hits Farid's (the second row here)
    moved = BeautifulSoup(
        apply(dst, transplant(edit, src, dst, anchors={row(src, 0): row(dst, 1)})), "html.parser"
    )
    opened = moved.find(class_="page")
    assert opened.h2.text == "Farid Khan" and opened.find(class_="av").text == "F"
    assert opened.p.text == "Mayan tea, Mark Ode"  # other words, and words inside words, stay
    # elements that do not hold their words alike (a row with a badge) swap nothing
    odd = dst.replace("<span>Farid Khan</span>", "<span>Farid Khan</span><b>3</b>")
    kept = BeautifulSoup(
        apply(odd, transplant(edit, src, odd, anchors={row(src, 0): row(odd, 1)})), "html.parser"
    )
    assert kept.find(class_="page").h2.text == "Maya Cohen"


def test_a_list_the_recorded_edit_emptied_is_emptied_here_however_long():
    from worldmodel.transplant import transplant

    def lst(names: list[str], extra: str = "") -> str:
        rows = "".join(f'<div class="row"><span>{n}</span></div>' for n in names)
        return f'<html><body><div id="screen"><div class="list">{rows}</div>{extra}</div></body></html>'

    src = lst(["Ann", "Bo"])
    edit = diff(src, lst([], '<h2 class="page">Ann</h2>'))
    longer = lst(["Cy", "Di", "Ed", "Flo"])
    out = BeautifulSoup(apply(longer, transplant(edit, src, longer)), "html.parser")
    assert out.find(class_="row") is None and out.h2.text == "Ann"
    # where the recorded edit left one row of its list, the rows here stay
    kept = diff(src, src.replace('<div class="row"><span>Ann</span></div>', "", 1))
    out = BeautifulSoup(apply(longer, transplant(kept, src, longer)), "html.parser")
    assert len(out.find_all(class_="row")) == 3


def test_a_transplanted_rule_goes_only_into_a_sheet_it_was_written_beside():
    from worldmodel.transplant import transplant

    def page(sheet: str, cls: str = "") -> str:
        return f'<html><head><style>{sheet}</style></head><body class="{cls}"><div id="screen">x</div></body></html>'

    sheet = ".a{color:red}\n.b{color:blue}"
    src, nxt = page(sheet), page(sheet + "\nbody.dark{background:black}", "dark")
    edit = diff(src, nxt)
    assert "css-ins" in edit
    same = transplant(edit, src, page(".z{margin:0}\n" + sheet))  # the same sheet, one rule more
    assert "body.dark" in apply(page(".z{margin:0}\n" + sheet), same)
    other = transplant(edit, src, page("p{margin:0}"))  # another app's sheet: the rule stays out
    assert "css-ins" not in other and "body.dark" not in apply(page("p{margin:0}"), other)


def test_retrieval_in_edit_mode_transplants_and_never_breaks_a_screen(renderer):
    from corpus.store import iter_transitions
    from worldmodel import WorldModel

    ts = list(iter_transitions(load_corpus()["test"]))
    ts = [t for t in ts if t.app == "miniwob-enter-password"][:6]
    with WorldModel.load("retrieval", renderer=renderer) as wm:
        preds = wm.predict_many([(t.screen, t.action, t.goal) for t in ts], mode="edit")
    assert all(p.ok and p.edit is not None for p in preds)
    # where a recorded typing edit carried over, the field gets this action's text after its own
    typed = [(t, p) for t, p in zip(ts, preds) if t.action.type == "type" and " value " in (p.edit or "")]
    assert typed
    for t, p in typed:
        values = re.findall(r' value "([^"]*)"', p.edit)
        assert any(v.endswith(t.action.text) for v in values), (t.action.text, values)
