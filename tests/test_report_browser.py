"""The HTML report rendered in headless Chromium: the rules table and the graph are visible."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import versapub

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREENSHOT = Path(__file__).resolve().parents[1] / "docs" / "report-screenshot.png"


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make test tries to install it)")
def test_report_renders_in_chromium(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    table = versapub.datasets.adult()
    cfg = versapub.datasets.adult_config()
    versapub.write_release(versapub.publish(table, cfg.rules, l=2, seed=1), tmp_path / "adult-release")
    report = tmp_path / "adult-release" / "report.html"
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"],
        )  # fmt: skip
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1700})
            page.goto(report.as_uri())
            rules = page.locator("#rules table")
            assert rules.is_visible()
            assert rules.locator("tr").count() == 1 + len(cfg.rules)
            assert page.locator("#rules .badge.pass").count() == len(cfg.rules)
            graph = page.locator("#attribute-graph")
            assert graph.is_visible()
            box = graph.bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 300
            assert page.locator("#attribute-graph polygon").count() == 2  # one shape per published table
            assert page.locator("#attacks").is_visible()
            if not SCREENSHOT.exists():  # keep one screenshot under docs/
                page.screenshot(path=str(SCREENSHOT))
        finally:
            browser.close()
