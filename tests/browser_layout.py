"""Layout checks the browser tests run on the widgets as drawn (issue: "What a newcomer trips
on", item 4): nothing is clipped without a way to see it, and a variable's type and stats
line is one line high, at the sizes JupyterLab gives them by default."""
from __future__ import annotations

# Every element under ``root`` whose content is wider than its box: it must scroll (overflow
# auto or scroll), or clip with an ellipsis and say the whole text in a title (its own or
# its line's). An element that lets its content spill over (overflow visible) is reported
# too: what spills is painted over its neighbours or clipped further up. SVG is left out
# (a fitted graph, a heatmap: sized by their views, not by text).
CLIPPED = """(root) => {
  const bad = [];
  for (const top of document.querySelectorAll(root)) {
    for (const el of [top, ...top.querySelectorAll('*')]) {
      if (el instanceof SVGElement || el.closest('svg')) continue;
      if (el.scrollWidth <= el.clientWidth + 1 || !el.getClientRects().length) continue;
      const cs = getComputedStyle(el);
      if (cs.display === 'inline') continue;      // measured on its block instead
      if (cs.overflowX === 'auto' || cs.overflowX === 'scroll') continue;
      const titled = el.title || (el.closest('[title]') && el.closest('[title]') !== top);
      if ((cs.overflowX === 'hidden' || cs.overflowX === 'clip') &&
          cs.textOverflow === 'ellipsis' && titled) continue;
      bad.push({cls: String(el.className).slice(0, 60), tag: el.tagName,
                client: el.clientWidth, scroll: el.scrollWidth, overflow: cs.overflowX,
                text: (el.textContent || '').slice(0, 60)});
    }
  }
  return bad;
}"""

# The height of each variable's type-and-stats line, in units of its line height (which
# widgets.css sets in pixels' worth: line-height 1.4).
STATS_LINES = """(root) => [...document.querySelectorAll(root + ' .pd-vtype')]
  .filter((el) => el.getClientRects().length)
  .map((el) => el.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight))"""

# Lines of code cut with an ellipsis: (text shown, the title holding the whole line).
CUT_LINES = """(root) => [...document.querySelectorAll(root + ' .pd-line > .pd-text')]
  .filter((el) => el.scrollWidth > el.clientWidth + 1)
  .map((el) => [el.textContent, el.title])"""


def assert_nothing_clipped(page, root: str) -> None:
    bad = page.evaluate(CLIPPED, root)
    assert not bad, bad


def assert_stats_on_one_line(page, root: str) -> int:
    """Every type-and-stats line under ``root`` is one line high; returns how many."""
    heights = page.evaluate(STATS_LINES, root)
    assert heights and all(0 < h < 1.5 for h in heights), heights
    return len(heights)


def cut_lines(page, root: str) -> list:
    """The code lines under ``root`` shown cut, each as (text, title); every title holds
    that line's whole text (the op's line, then its comment)."""
    cut = page.evaluate(CUT_LINES, root)
    for text, title in cut:
        assert title.startswith(text), (text, title)
    return cut
