"""What `wm corpus` runs (corpus/pipelines.py), through the command line: import-android and
import-droidbot report and write, stats, compact, merge."""

import json
import re

import numpy as np
from phone_fixtures import android_fixture, droidbot_folder
from PIL import Image
from typer.testing import CliRunner

from corpus.store import load_corpus, save_corpus
from wmcli import app as cli


def test_import_android_cli_reports_drops(tmp_path, renderer):
    android_fixture(tmp_path / "ep.tfrecord", renderer)

    def run(out, *flags):
        args = ["corpus", "import-android", str(tmp_path / "ep.tfrecord"), "-o", str(tmp_path / out), *flags]
        return CliRunner().invoke(cli, args)

    res = run("c", "--floor", "0.9")
    assert res.exit_code == 0, res.output
    assert "kept 2 of 2 transitions, dropped 0" in res.output
    rows = [r for s in load_corpus(tmp_path / "c").values() for r in s]
    assert len(rows) == 2 and all(json.loads(r["meta"])["revision"][0]["round"] == 0 for r in rows)
    assert {r["app"] for r in rows} == {"org.example"}  # the episode's package, not "android"
    low = run("d", "--threshold", "0.9999", "--max-off", "0", "--rounds", "0").output
    assert "kept 0 of 2 transitions, dropped 2" in low and "below the blurred-SSIM floor" in low


def test_stats_on_bundled_corpus(tmp_path):
    res = CliRunner().invoke(cli, ["corpus", "stats", "--worst", "2", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output.strip().splitlines()[-1])
    assert report["train"]["transitions"] > 100 and report["test"]["transitions"] > 10
    assert set(report["train"]["apps"]).isdisjoint(report["test"]["apps"])
    cap = report["train"]["capture"]
    assert set(cap) == set(report["train"]["apps"])
    bad = {a: c for a, c in cap.items() if not (c["blur_ssim_mean"] > 0.95 and c["pixels_off_mean"] < 0.02)}
    assert not bad, bad
    worst = [line.split("worst: ")[1] for line in res.output.splitlines() if "worst: " in line]
    assert len(worst) == 2 and all(Image.open(p).size[0] > 300 for p in worst)


def _uncompacted(html: str) -> str:
    """A bundled (already compacted) screen with what compaction removes put back: an off-screen
    positioned panel, a data-* attribute and a state class no rule reads, stylesheet spaces."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    screen = soup.find(id="screen") or soup.body
    screen["data-junk"] = "1"
    screen["class"] = [*screen.get("class", []), "wm-focus-within"]
    panel = soup.new_tag("div", style="position:absolute;left:-900px;top:0;width:80px;height:80px")
    panel.string = "off to the side"
    soup.body.append(panel)
    if soup.style is not None and soup.style.string:
        soup.style.string = soup.style.string.replace("{", " {  ").replace(";", " ;  ")
    return str(soup)


def test_compact_shortens_a_corpus_and_keeps_every_render(tmp_path, renderer):
    import dataclasses

    from corpus.store import iter_transitions

    dd = load_corpus()
    src = [t for t in iter_transitions(dd["train"]) if t.app == "miniwob-click-button"][:3]
    src += [t for t in iter_transitions(dd["test"]) if t.app.startswith("phone-")][:2]
    src = [
        dataclasses.replace(
            t, next_screen=dataclasses.replace(t.next_screen, html=_uncompacted(t.next_screen.html))
        )
        for t in src
    ]
    splits = {t.app: ("test" if t.app.startswith("phone-") else "train") for t in src}
    save_corpus(src, tmp_path / "big", splits)
    res = CliRunner().invoke(cli, ["corpus", "compact", str(tmp_path / "big"), "-o", str(tmp_path / "small")])
    assert res.exit_code == 0, res.output
    small = load_corpus(tmp_path / "small")
    got = {(t.app, t.step, t.episode_id): t for sp in small for t in iter_transitions(small[sp])}
    for t in src:
        c = got[(t.app, t.step, t.episode_id)].next_screen.html
        assert len(c) < len(t.next_screen.html)
        assert "data-junk" not in c and "wm-focus-within" not in c and "off to the side" not in c
        a, b = renderer.render_many([(h, t.next_screen.viewport()) for h in (t.next_screen.html, c)])
        assert np.array_equal(a.image, b.image)


def test_merge_joins_corpora_keeping_each_apps_split(tmp_path):
    from corpus.store import iter_transitions

    dd = load_corpus()
    a = [t for t in iter_transitions(dd["train"]) if t.app == "miniwob-click-button"][:2]
    b = [t for t in iter_transitions(dd["test"]) if t.app == "miniwob-click-link"][:2]
    save_corpus(a, tmp_path / "a", {"miniwob-click-button": "train"})
    save_corpus(b, tmp_path / "b", {"miniwob-click-link": "test"})
    save_corpus(b, tmp_path / "c", {"miniwob-click-link": "train"})

    def merge(*args):
        return CliRunner().invoke(cli, ["corpus", "merge", *map(str, args)])

    res = merge(tmp_path / "a", tmp_path / "b", "-o", tmp_path / "ab")
    assert res.exit_code == 0, res.output
    ab = load_corpus(tmp_path / "ab")
    assert set(ab["train"]["app"]) == {"miniwob-click-button"} and len(ab["test"]) == len(b)
    # an app both corpora hold in different splits is named, and --split settles it
    res = merge(tmp_path / "b", tmp_path / "c", "-o", tmp_path / "bc")
    assert res.exit_code != 0 and "miniwob-click-link is in test" in res.output
    assert not (tmp_path / "bc").exists()
    res = merge(
        tmp_path / "b", tmp_path / "c", "-o", tmp_path / "bc", "--split", "miniwob-click-link=validation"
    )
    assert res.exit_code == 0, res.output
    assert list(load_corpus(tmp_path / "bc")) == ["validation"]
    assert "not APP=SPLIT" in merge(tmp_path / "a", "-o", tmp_path / "x", "--split", "nope").output


def test_import_droidbot_cli_writes_a_corpus_with_a_card(tmp_path):
    droidbot_folder(tmp_path / "db")
    res = CliRunner().invoke(
        cli,
        ["corpus", "import-droidbot", str(tmp_path / "db"), "-o", str(tmp_path / "c"), "--licence", "MIT"],
    )
    assert res.exit_code == 0, res.output
    assert "kept 3 of 4 transitions" in res.output and "1 intent event (not usable)" in res.output
    card = (tmp_path / "c" / "README.md").read_text()
    assert "| droidbot | MIT |" in card
    bad = CliRunner().invoke(cli, ["corpus", "import-droidbot", str(tmp_path), "-o", str(tmp_path / "e")])
    assert bad.exit_code == 2 and "not a DroidBot output folder" in re.sub(r"[\s│]+", " ", bad.output)
