"""Photographs `pld-tool serve` on a real store (see Tests/Browser/screenshot)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_inspector import Serve, make_driver, tool, wait_until  # noqa: E402


def main(output):
    folder = tempfile.mkdtemp(prefix="pld-screenshot-")
    server = None
    driver = None
    try:
        path = os.path.join(folder, "app.db")
        lines = [
            ("settings", {"theme": "light", "fontSize": 12, "tags": ["work"]}),
            ("settings", {"theme": "dark", "fontSize": 12, "tags": ["work", "home"]}),
            ("session/current", {"user": "ada", "expires": "2026-12-01T09:00:00Z"}),
            ("feature-flags", {"newCheckout": False, "search": {"engine": "v1", "fuzzy": True}}),
            ("feature-flags", {"newCheckout": True, "search": {"engine": "v2", "fuzzy": True}}),
            ("cart", {"items": [{"sku": "A-100", "qty": 1}], "currency": "EUR"}),
            ("cart", {"items": [{"sku": "A-100", "qty": 2}, {"sku": "B-7", "qty": 1}], "currency": "EUR"}),
            ("counter", 41),
            ("drafts/2026-11-27 notes #1", {"title": "Notes", "body": "Ship the inspector"}),
        ] + [(f"cache/page-{n:02d}", {"etag": f"W/\"{n:04x}\"", "bytes": 1000 + 37 * n}) for n in range(8)]
        source = os.path.join(folder, "export.jsonl")
        authors = {"settings": ("ada", None), "feature-flags": ("deploy-bot", "release 4.2"),
                   "cart": ("checkout-service", None)}
        with open(source, "w", encoding="utf-8") as handle:
            for key, value in lines:
                line = {"key": key, "value": value}
                author, reason = authors.get(key, ("cache-warmer" if key.startswith("cache/") else "app", None))
                if author:
                    line["author"] = author
                if reason:
                    line["reason"] = reason
                handle.write(json.dumps(line) + "\n")
        tool("import", path, source, "--create")
        tool("set", path, "settings", json.dumps({"theme": "dark", "fontSize": 14, "tags": ["home"]}),
             "--author", "ada", "--reason", "bigger font")
        tool("prune", path, "counter", "--keep", "5")
        server = Serve(path)
        driver = make_driver()
        driver.set_window_size(1400, 820)
        driver.get(server.address)
        wait_until(lambda: driver.find_element(By.ID, "status").text == "live")
        driver.find_element(By.CSS_SELECTOR, '#keys .row[data-key="settings"]').click()
        wait_until(lambda: driver.find_elements(By.CSS_SELECTOR, '#timeline article[data-version="3"]'))
        # A live update from another process, as it arrives.
        tool("set", path, "feature-flags", json.dumps({"newCheckout": True, "search": {"engine": "v2", "fuzzy": False}}),
             "--author", "ops", "--reason", "INC-42: fuzzy search too slow")
        wait_until(lambda: driver.find_element(By.CSS_SELECTOR, '#keys .row[data-key="feature-flags"]')
                   .get_attribute("data-version") == "3")
        driver.execute_script("document.getElementById('keys-pane').scrollTo(0, 0)")
        time.sleep(0.2)
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        driver.save_screenshot(output)
        print(f"wrote {output}")
    finally:
        if driver:
            driver.quit()
        if server:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1])
