"""The HTML report rendered in headless Chromium: the rules table, the graph and its legend,
the glossary with tooltips, and plots with both axes labelled."""

from __future__ import annotations

import shutil
from dataclasses import replace
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
    rel = versapub.publish(table, cfg.rules, l=2, seed=1)
    rel = replace(rel, utility=versapub.model.utility_summary(versapub.model_from_release(rel), table))
    versapub.write_release(rel, tmp_path / "adult-release")
    report = tmp_path / "adult-release" / "report.html"
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1700})
            page.goto(report.as_uri())
            rules = page.locator("#rules table")
            assert rules.is_visible()
            assert rules.locator("tr").count() == 1 + len(cfg.rules)  # the user's rules, as typed
            assert page.locator("#rules .badge.pass").count() == len(cfg.rules)
            graph = page.locator("#attribute-graph")
            assert graph.is_visible()
            box = graph.bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 300
            assert page.locator("#attribute-graph polygon").count() == 2  # one shape per published table
            assert page.locator("#attacks").is_visible()
            legend = page.locator("#graph .legend li")
            assert legend.count() == 2 and legend.first.is_visible()
            # glossary: every term explained, and the same words as tooltips in the text
            glossary = page.locator("#glossary dt")
            assert glossary.count() >= 15
            terms = [t.lower() for t in glossary.all_inner_texts()]
            for word in ("guardian table", "gnf", "reachable", "kl-divergence", "l-diversity"):
                assert word in terms
            assert page.locator(".term[title]").count() >= 5
            # every chart has both axes and both axis labels
            charts = page.locator("svg.chart")
            assert charts.count() >= 3  # group sizes of two tables, the KL scale, the error histogram
            for i in range(charts.count()):
                c = charts.nth(i)
                assert c.locator(".x-axis").count() == 1 and c.locator(".x-label").count() == 1
                if c.get_attribute("id") != "kl-scale":
                    assert c.locator(".y-axis").count() == 1 and c.locator(".y-label").count() == 1
            assert "nats" in (page.locator("#kl-scale").text_content() or "")
            if not SCREENSHOT.exists():  # keep one screenshot under docs/ (delete it to refresh)
                page.screenshot(path=str(SCREENSHOT), full_page=False)
        finally:
            browser.close()
