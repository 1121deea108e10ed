"""The element an action acts on: the browser's hit test names it (in edit.py's numbering), the
focused element stands in for keys, and the edit prompt leads with it; a WorldModel carries out
the lines of an edit that apply and names the first that does not."""

from PIL import Image

from render import Viewport
from worldmodel import Action, Backend, Screen, WorldModel
from worldmodel.edit import annotate
from worldmodel.focus import action_targets, focus_header, window
from worldmodel.prompt import prompt_text
from worldmodel.types import Query

PAGE = """<!DOCTYPE html><html><head><style>
.row{display:flex;height:60px;padding:0 16px;align-items:center}
.meta{margin-left:auto}</style></head><body><div id="screen">
<div class="list"><div class="row" data-note="1"><span>Milk</span><span class="meta">2 min</span></div>
<div class="row" data-note="2"><span>Eggs</span><span class="meta">5 min</span></div></div>
<input id="q" class="field wm-focus" value="ab"></div></body></html>"""


def _screen(html: str = PAGE) -> Screen:
    return Screen(Image.new("RGB", (360, 640), "white"), html=html)


def test_hit_test_finds_the_row_between_its_texts(renderer):
    # (180, 90) lies in the second row's padding, between its two spans: no text box is there
    hits = renderer.hit_many([(PAGE, Viewport(360, 640), [(180, 90), (30, 38)])])[0]
    numbered = annotate(PAGE)
    second_row = numbered.index('data-note="2"')
    assert hits[0][1] == "div" and f'n="{hits[0][0]}"' in numbered[second_row : second_row + 40]
    assert hits[1][1] == "span"  # the first row's "Milk"


def test_action_targets_point_then_focus(renderer):
    s = _screen()
    qs = [
        Query(s, Action("tap", 180, 90)),
        Query(s, Action("key", key="Enter")),  # no point: the focused field
        Query(s, Action("back")),
        Query(Screen(Image.new("RGB", (360, 640)), html=None), Action("tap", 5, 5)),
    ]
    got = action_targets(renderer, qs)
    assert got[0] == 6 and got[1] == 9 and got[2] is None and got[3] is None
    header = focus_header(PAGE, got[0])
    assert header.startswith('Action target: n=6 <div class="row" data-note="2">')
    assert "inside 2 div.list < 1 div#screen < 0 body" in header
    assert "none found" in focus_header(PAGE, None)


def test_edit_prompt_leads_with_the_target_and_shows_the_html_around_it():
    html = PAGE.replace("</div></div>", "</div>" + "<p>filler line</p>" * 80 + "</div>", 1)
    text = prompt_text(
        _screen(html), Action("tap", 180, 90), mode="edit", html_chars=400, focus=True, target=60
    )
    assert "Action target: n=60 <p>" in text
    shown = text.split("stylesheet lines):\n", 1)[1]
    assert ' n="60"' in shown and shown.startswith("<!-- ... -->")
    # without focus the view starts at the body, and the far element is cut off
    plain = prompt_text(_screen(html), Action("tap", 180, 90), mode="edit", html_chars=400)
    assert "Action target" not in plain and ' n="60"' not in plain
    assert window("short", 3, 100) == "short"


class _Writes(Backend):
    """A backend that writes a fixed edit: the real WorldModel applies and renders it."""

    name = "fixed"
    edits = True

    def __init__(self, edit):
        self.edit = edit

    def complete(self, queries):
        return [PAGE for _ in queries]

    def complete_edits(self, queries):
        return [self.edit for _ in queries]


def test_lines_that_apply_are_kept_and_the_first_bad_one_is_named(renderer):
    edit = 'text 4 "Bread"\ntext 99 "nowhere"\nclass 5 +gone -meta'
    q = Query(_screen(), Action("tap", 180, 30))
    lenient = WorldModel(_Writes(edit), renderer).predict_many([q], "edit")[0]
    assert lenient.ok and "Bread" in lenient.html and 'class="gone"' in lenient.html
    assert (
        lenient.edit_error.startswith("1 of 3 edit lines left out") and "no element 99" in lenient.edit_error
    )
    strict = WorldModel(_Writes(edit), renderer, strict_edits=True).predict_many([q], "edit")[0]
    assert not strict.ok and "edit line 2" in strict.render_error
    clean = WorldModel(_Writes('text 4 "Bread"'), renderer).predict_many([q], "edit")[0]
    assert clean.ok and clean.edit_error is None
