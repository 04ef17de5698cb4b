"""Screenshots of every screen of ``versapub serve`` for the README and docs/web.md:
``python scripts/web_screenshots.py`` serves a temporary copy of ``examples/`` and drives a
whole job in headless Chromium, writing ``docs/web/*.png``."""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import expect, sync_playwright

from versapub.web.app import make_app
from versapub.web.server import free_port

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "web"
TOKEN = "screenshots"
AGE = "17-24;17-34;*\n25-34;17-34;*\n35-44;35-54;*\n45-54;35-54;*\n55-64;55+;*\n65+;55+;*\n"
ROLES = {"age": "quasi_identifying", "sex": "quasi_identifying", "race": "insensitive", "hours": "insensitive"}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "steward"
        root.mkdir()
        shutil.copy(REPO / "examples" / "data.csv", root / "data.csv")
        (root / "hierarchies").mkdir()
        (root / "hierarchies" / "age.csv").write_text(AGE)
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(make_app(root, TOKEN), host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        try:
            shoot(f"http://127.0.0.1:{port}", root)
        finally:
            server.should_exit = True
            thread.join(10)


def second(root: Path) -> None:
    """A second release of the same input (l = 3), published with the CLI, to compare."""
    from click.testing import CliRunner

    from versapub.cli.main import cli

    args = ["publish", "--input", str(root / "data.csv"), "--rule", "age, sex -> disease", "--rule"]
    args += ["zip -> education", "--identifying", "patient_id", "--insensitive", "race,hours", "--l", "3"]
    r = CliRunner().invoke(cli, [*args, "--out", str(root / "releases" / "l3")])
    assert r.exit_code == 0, r.output


def shoot(base: str, root: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        pg = browser.new_page(viewport={"width": 1280, "height": 860})
        pg.goto(f"{base}/?token={TOKEN}")
        pg.select_option("#file-list", "data.csv")
        pg.click("#open-file")
        expect(pg.locator("#data-info")).to_contain_text("records")
        pg.screenshot(path=OUT / "1-data.png")
        pg.click("nav button[data-screen=columns]")
        pg.click("#apply-suggestions")
        for column, role in ROLES.items():
            pg.select_option(f"select.role[data-column={column}]", role)
        pg.screenshot(path=OUT / "2-columns.png")
        pg.click("nav button[data-screen=privacy]")
        for i, (rule, own) in enumerate((("age, sex -> disease", ""), ("zip -> education", "l-diversity:l=3"))):
            pg.click("#add-rule")
            pg.locator(".rule-text").nth(i).fill(rule)
            pg.locator(".rule-guarantee").nth(i).fill(own)
        pg.click("#check-rules")
        expect(pg.locator("#why")).to_be_visible()
        pg.screenshot(path=OUT / "3-privacy.png", full_page=True)
        pg.click("#eligible-box summary")
        pg.select_option("#e-sensitive", "disease")
        pg.click("#show-eligible")
        expect(pg.locator("#eligible-lines")).to_be_visible()
        pg.locator("#eligible-box").screenshot(path=OUT / "3b-eligible.png")
        pg.click("nav button[data-screen=hierarchies]")
        pg.select_option("select.hierarchy[data-column=age]", "hierarchies/age.csv")
        pg.click("button.show-hierarchy[data-column=age]")
        expect(pg.locator("#hierarchy-view")).to_contain_text("level 1")
        pg.screenshot(path=OUT / "4-hierarchies.png")
        pg.click("nav button[data-screen=publish]")
        pg.fill("#out", "releases/first")
        pg.click("#publish")
        expect(pg.locator("#verdict")).to_contain_text("ALL CHECKS PASSED", timeout=120_000)
        pg.screenshot(path=OUT / "5-publish.png")
        pg.click("nav button[data-screen=use]")
        pg.select_option("#release-list", "releases/first")
        pg.click("#open-release")
        pg.fill("#query", "age = '25-34' AND sex = 'Female'")
        pg.click("#run-query")
        expect(pg.locator("#query-result")).to_contain_text("actual")
        pg.click("#run-check")
        expect(pg.locator("#check-verdict")).to_be_visible(timeout=60_000)
        pg.screenshot(path=OUT / "6-use.png")
        pg.fill("#risk-fraction", "0.05")
        pg.click("#run-risk")
        expect(pg.locator("#risk-table")).to_be_visible()
        pg.screenshot(path=OUT / "6b-risk.png", full_page=True)
        pg.click("#run-evaluate")
        expect(pg.locator("#evaluate-title")).to_be_visible(timeout=60_000)
        pg.screenshot(path=OUT / "6c-evaluate.png", full_page=True)
        second(root)
        pg.click("nav button[data-screen=job]")
        pg.click("nav button[data-screen=use]")  # lists the second release
        pg.select_option("#compare-list", ["releases/first", "releases/l3"])
        pg.click("#run-compare")
        expect(pg.locator("#compare-table")).to_be_visible(timeout=120_000)
        pg.locator("#use-result").screenshot(path=OUT / "6d-compare.png")
        pg.click("nav button[data-screen=job]")
        pg.fill("#job-path", "jobs/first.toml")
        pg.click("#save-job")
        expect(pg.locator("#toml")).to_contain_text("[privacy]")
        pg.screenshot(path=OUT / "7-job.png")
        browser.close()


if __name__ == "__main__":
    main()
