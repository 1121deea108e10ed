"""A screen's HTML parsed once: the numbered document the edit language, focus, transplant and sim share.

An edit addresses a screen's body elements by number, in document order with the body as 0
(worldmodel/edit.py), and its stylesheet by line. Every module that reads a screen that way (the
edit language, the action's target in focus.py, transplant.py re-addressing an edit, the sim
keeping a screen's stylesheet) takes this one parsed form instead of parsing and numbering the
HTML itself, so the numbering is written once and a screen read by several of them is parsed
once: `Doc.of(html)` keeps the last screens parsed (the same screen is read by focus, transplant
and the prompt in one prediction). A `Doc.of` document is shared, so it is read, never changed;
`Doc(html)` is a fresh one to change (applying an edit, numbering a view).
"""

from __future__ import annotations

from functools import lru_cache

from bs4 import BeautifulSoup, Tag

CACHE_SIZE = 16  # screens; a parsed screen takes some MB, and one prediction reads a few


class Doc:
    """`soup` (BeautifulSoup, html.parser), `elements` (the body first, then every element in it,
    in document order: element N of an edit), `stylesheet` (the head's first <style>, or None)."""

    __slots__ = ("html", "soup", "elements", "stylesheet", "_index")

    def __init__(self, html: str):
        self.html = html
        self.soup = BeautifulSoup(html or "", "html.parser")
        body = self.soup.body
        self.elements: list[Tag] = [body, *body.find_all(True)] if body is not None else []
        head = self.soup.head
        self.stylesheet: Tag | None = head.find("style") if head is not None else None
        self._index: dict[int, int] | None = None

    @staticmethod
    def of(html: str) -> Doc:
        """The parsed screen, shared with every other reader of the same HTML: do not change it."""
        return _parsed(html)

    @property
    def body(self) -> Tag | None:
        return self.soup.body

    @property
    def sheet_lines(self) -> list[str] | None:
        """The stylesheet's lines (what `css-del L` and `css-ins L` address), or None without one."""
        s = self.stylesheet
        return s.string.split("\n") if s is not None and s.string is not None else None

    def number(self, el) -> int | None:
        """Element `el`'s number, or None when it is not one of this document's body elements."""
        if self._index is None:
            self._index = {id(e): i for i, e in enumerate(self.elements)}
        return self._index.get(id(el))

    def __len__(self) -> int:
        return len(self.elements)


@lru_cache(maxsize=CACHE_SIZE)
def _parsed(html: str) -> Doc:
    return Doc(html)
