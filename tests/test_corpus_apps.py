"""Serving bundled apps (corpus/apps.py): an app's files never escape its folder."""

from corpus.apps import local_file_for


def test_app_files_cannot_escape_their_folder():
    assert local_file_for("http://wm.local/phone/index.html") is not None
    assert local_file_for("http://wm.local/phone/../../../etc/passwd") is None
    assert local_file_for("http://example.com/phone/index.html") is None
