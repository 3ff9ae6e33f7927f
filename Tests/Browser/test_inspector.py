"""Browser tests of `pld-tool serve`: the page in headless Chromium, driven by Selenium.

Run through Tests/Browser/run, which sets PLD_TOOL to the built pld-tool. Every test starts its own
`pld-tool serve` on a fresh store in a temporary folder; writers are other processes (`pld-tool set`,
the shared-store test's `pld-postgres-child` replicas). The browser resolves no host name but 127.0.0.1
and localhost (and pld-rebind.test, mapped to 127.0.0.1 for the Host check), so a page that loaded
anything from elsewhere would fail.
"""

import datetime
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

TOOL = os.environ.get("PLD_TOOL", "")
HELPER = os.path.join(os.path.dirname(TOOL), "pld-postgres-child")

# The goals of the inspector (issue 32).
FIRST_KEYS_GOAL_MS = 300
LIVE_P99_GOAL_MS = 50
PAGE_WEIGHT_GOAL_BYTES = 150 * 1024

RESULTS = {}


def tool(*arguments, check=True):
    """Runs pld-tool and returns its standard output."""
    completed = subprocess.run([TOOL, *arguments], capture_output=True, text=True, timeout=120)
    if check and completed.returncode != 0:
        raise AssertionError(f"pld-tool {' '.join(arguments)}: {completed.returncode} {completed.stderr}")
    return completed.stdout


def css_string(text):
    """`text` as a CSS string literal for an attribute selector."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\a ") + '"'


def file_digest(path):
    digest = hashlib.sha256()
    for name in (path, path + "-wal"):
        if os.path.exists(name):
            with open(name, "rb") as handle:
                digest.update(handle.read())
    return digest.hexdigest()


class Serve:
    """A `pld-tool serve` process and its address."""

    def __init__(self, *arguments):
        self.process = subprocess.Popen(
            [TOOL, "serve", *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().strip()
        match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{64})", line)
        if not match:
            self.process.kill()
            raise AssertionError(f"unexpected first line {line!r}: {self.process.stderr.read()}")
        self.address = line
        self.port = int(match.group(1))
        self.token = match.group(2)

    def stop(self):
        status = self.process.returncode
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.send_signal(signal.SIGTERM)
            try:
                status = self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                status = None
        self.process.stdout.close()
        self.process.stderr.close()
        return status


def make_driver():
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900",
                     "--host-resolver-rules=MAP pld-rebind.test 127.0.0.1, MAP * ~NOTFOUND, "
                     "EXCLUDE 127.0.0.1, EXCLUDE localhost"):
        options.add_argument(argument)
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary:
        options.binary_location = binary
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    # Page-side timing without WebDriver round trips, by the test alone (the page has no hook for it):
    # when the first key row is in the document and painted, in milliseconds after the navigation
    # started; and each version a row shows, with the wall-clock time of the frame that painted it.
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.__firstRowAt = null;
        window.__shown = [];
        new MutationObserver(function (records, observer) {
          if (document.querySelector('#keys .row[data-key]')) {
            observer.disconnect();
            requestAnimationFrame(function () { window.__firstRowAt = performance.now(); });
          }
        }).observe(document, {childList: true, subtree: true});
        new MutationObserver(function (records) {
          var seen = [];
          records.forEach(function (record) {
            var nodes = record.type === 'attributes' ? [record.target] : Array.from(record.addedNodes);
            nodes.forEach(function (node) {
              if (node.nodeType === 1 && node.matches('#keys .row[data-key]')) {
                seen.push([node.dataset.key, Number(node.dataset.version)]);
              }
            });
          });
          if (seen.length) requestAnimationFrame(function () {
            var at = Date.now();
            seen.forEach(function (entry) { window.__shown.push([entry[0], entry[1], at]); });
          });
        }).observe(document, {childList: true, subtree: true, attributes: true, attributeFilter: ['data-version']});
    """})
    return driver


def wait_until(condition, timeout=10.0, message="condition"):
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition()
        except Exception:  # an element replaced meanwhile
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {message}")
        time.sleep(0.02)


class InspectorTests(unittest.TestCase):
    driver = None

    @classmethod
    def setUpClass(cls):
        if not TOOL or not os.access(TOOL, os.X_OK):
            raise unittest.SkipTest("PLD_TOOL is not an executable pld-tool")
        cls.driver = make_driver()

    @classmethod
    def tearDownClass(cls):
        if cls.driver:
            cls.driver.quit()

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="pld-browser-")
        self.servers = []

    def tearDown(self):
        for server in self.servers:
            server.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    # MARK: helpers

    def store(self, lines, name="app.db"):
        """A store made by `pld-tool import --create` from (key, value) pairs, in order."""
        path = os.path.join(self.folder, name)
        source = os.path.join(self.folder, name + ".jsonl")
        with open(source, "w", encoding="utf-8") as handle:
            for key, value in lines:
                handle.write(json.dumps({"key": key, "value": value}) + "\n")
        tool("import", path, source, "--create")
        return path

    def sample(self):
        return self.store([
            ("settings", {"theme": "light", "fontSize": 12, "tags": ["a"]}),
            ("settings", {"theme": "dark", "fontSize": 12, "tags": ["a", "b"]}),
            ("settings", {"theme": "dark", "fontSize": 14, "tags": ["b"]}),
            ("counter", 1), ("counter", 2),
            ("theme", "solarized"),
        ])

    def serve(self, *arguments):
        server = Serve(*arguments)
        self.servers.append(server)
        return server

    def open(self, server):
        self.driver.get(server.address)
        # "live" comes after every key was rendered: the page connects to its events then.
        wait_until(lambda: self.driver.find_element(By.ID, "status").text == "live", message="live")

    def shown_latencies(self, path, commits):
        """For each (key, version) of `commits`, milliseconds from its commit (its `writtenAt` in the
        store) to the frame that painted it in a row, once every one was shown."""
        wanted = set(commits)

        def shown():
            return {(key, version): at for key, version, at in reversed(
                self.driver.execute_script("return window.__shown"))}
        wait_until(lambda: wanted <= set(shown()), message="every version shown")
        painted = shown()
        written = {}
        for line in tool("export", path).splitlines():
            entry = json.loads(line)
            if (entry["key"], entry["version"]) in wanted:
                moment = datetime.datetime.fromisoformat(entry["writtenAt"].replace("Z", "+00:00"))
                written[(entry["key"], entry["version"])] = round(moment.timestamp() * 1000)
        return sorted(painted[commit] - written[commit] for commit in commits)

    def row(self, key):
        return self.driver.find_element(By.CSS_SELECTOR, "#keys .row[data-key=%s]" % css_string(key))

    def row_version(self, key):
        try:
            return int(self.row(key).get_attribute("data-version"))
        except Exception:
            return None

    def wait_version(self, key, version, timeout=10.0):
        wait_until(lambda: self.row_version(key) == version, timeout, f"{key!r} at version {version}")

    def open_timeline(self, key):
        self.row(key).click()
        return wait_until(
            lambda: self.driver.find_elements(By.CSS_SELECTOR, "#timeline article[data-key=%s]" % css_string(key)),
            message=f"the timeline of {key!r}")

    def assert_no_alert(self):
        with self.assertRaises(NoAlertPresentException):
            self.driver.switch_to.alert.text

    # MARK: the keys and the timeline

    def test_keys_with_reserved_characters_and_quotes(self):
        special = "a/b %c?d#e é \"q\" 'r'"
        path = self.store([("plain", 1), (special, {"x": 1}), (special, {"x": 2}), ("zeta", [1, 2])])
        server = self.serve(path)
        self.open(server)
        keys = [row.get_attribute("data-key") for row in self.driver.find_elements(By.CSS_SELECTOR, "#keys .row")]
        self.assertEqual(keys, sorted(keys, key=lambda k: k.encode()))
        self.assertEqual(set(keys), {"plain", special, "zeta"})
        row = self.row(special)
        self.assertEqual(row.get_attribute("data-version"), "2")
        self.assertEqual(row.find_element(By.CSS_SELECTOR, ".cell.key").text, special)
        articles = self.open_timeline(special)
        self.assertEqual([a.get_attribute("data-version") for a in articles], ["2", "1"])
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, "#timeline h2").text, special)
        value = articles[0].find_element(By.CSS_SELECTOR, "pre").text
        self.assertEqual(json.loads(value), {"x": 2})

    def test_timeline_shows_each_value_and_the_diff_of_pld_tool_diff(self):
        path = self.sample()
        server = self.serve(path)
        self.open(server)
        articles = self.open_timeline("settings")
        self.assertEqual([a.get_attribute("data-version") for a in articles], ["3", "2", "1"])
        for article, (old, new) in zip(articles, [(2, 3), (1, 2)]):
            expected = tool("diff", path, "settings", str(old), str(new)).splitlines()[1:-1]
            shown = [line.text for line in article.find_elements(By.CSS_SELECTOR, ".diff div:not(.note)")]
            self.assertEqual(shown, expected)
            pretty = json.loads(article.find_element(By.CSS_SELECTOR, "pre").text)
            self.assertEqual(pretty, json.loads(tool("get", path, "settings", "--version", str(new))))
        self.assertIn("oldest version shown", articles[2].find_element(By.CSS_SELECTOR, ".diff").text)
        self.assertIn("author", articles[0].find_element(By.CSS_SELECTOR, ".meta").text)

    def test_keyboard_filter_and_themes(self):
        path = self.store([("alpha", 1), ("beta", 2), ("gamma", 3)])
        server = self.serve(path)
        self.open(server)
        body = self.driver.find_element(By.TAG_NAME, "body")
        body.send_keys("/")
        active = self.driver.switch_to.active_element
        self.assertEqual(active.get_attribute("id"), "filter")
        active.send_keys("a")
        self.assertEqual(len([r for r in self.driver.find_elements(By.CSS_SELECTOR, "#keys .row") if r.is_displayed()]), 3)
        active.send_keys("mm")
        visible = [r.get_attribute("data-key") for r in self.driver.find_elements(By.CSS_SELECTOR, "#keys .row") if r.is_displayed()]
        self.assertEqual(visible, ["gamma"])
        active.send_keys(Keys.ESCAPE)
        self.assertEqual(len([r for r in self.driver.find_elements(By.CSS_SELECTOR, "#keys .row") if r.is_displayed()]), 3)
        body.send_keys("j")
        body.send_keys("j")
        body.send_keys(Keys.ARROW_UP)
        body.send_keys(Keys.ARROW_DOWN)
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, "#keys .row.selected").get_attribute("data-key"), "beta")
        body.send_keys(Keys.ENTER)
        wait_until(lambda: self.driver.find_elements(By.CSS_SELECTOR, '#timeline article[data-key="beta"]'))
        body.send_keys(Keys.ESCAPE)
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#timeline article"), [])
        scheme = lambda: self.driver.execute_script("return getComputedStyle(document.documentElement).colorScheme")
        background = lambda: self.driver.execute_script("return getComputedStyle(document.body).backgroundColor")
        first, first_background = scheme(), background()
        self.driver.find_element(By.ID, "theme").click()
        self.assertNotEqual(scheme(), first)
        self.assertNotEqual(background(), first_background)
        self.driver.find_element(By.ID, "theme").click()
        self.assertEqual(scheme(), first)

    # MARK: live updates

    def test_live_update_from_another_process(self):
        path = self.sample()
        server = self.serve(path)
        self.open(server)
        self.open_timeline("theme")
        self.driver.execute_script("window.__sameDocument = true")
        tool("set", path, "theme", '"paper"')
        tool("set", path, "brand new", '{"n": 1}')
        self.wait_version("theme", 2)
        self.wait_version("brand new", 1)
        wait_until(lambda: self.driver.find_elements(By.CSS_SELECTOR, '#timeline article[data-version="2"]'),
                   message="the timeline's new version")
        self.assertTrue(self.driver.execute_script("return window.__sameDocument === true"))
        self.assertEqual(self.row("theme").find_element(By.CSS_SELECTOR, ".cell.key").text, "theme")

    def test_keys_are_grouped_by_their_slash_prefix_with_counts(self):
        path = self.store([("todo/1", {"t": "milk"}), ("todo/2", {"t": "bread"}), ("todo/a/b", 1), ("plain", 1),
                           ("todos", 2), ("account/7/sessions/x", 3)])
        server = self.serve(path)
        self.open(server)

        def groups():
            return [(g.get_attribute("data-group"), g.find_element(By.CSS_SELECTOR, ".count").text)
                    for g in self.driver.find_elements(By.CSS_SELECTOR, "#keys .group") if g.is_displayed()]

        def visible():
            return [r.get_attribute("data-key") for r in self.driver.find_elements(By.CSS_SELECTOR, "#keys .row")
                    if r.is_displayed()]

        self.assertEqual(groups(), [("account/", "1 key"), ("todo/", "3 keys")])
        # Each header comes right before its keys, in the byte order of the list.
        children = self.driver.execute_script(
            "return Array.from(document.getElementById('keys').children).map(n => n.dataset.group || n.dataset.key)")
        self.assertEqual(children, ["account/", "account/7/sessions/x", "plain", "todo/", "todo/1", "todo/2",
                                    "todo/a/b", "todos"])
        # A click closes the group: its keys go, the others stay; another click opens it.
        self.driver.find_element(By.CSS_SELECTOR, '#keys .group[data-group="todo/"]').click()
        self.assertEqual(visible(), ["account/7/sessions/x", "plain", "todos"])
        # A key written meanwhile joins its group (closed: counted, not shown); a removed one leaves it.
        tool("set", path, "todo/3", '{"t": "eggs"}')
        tool("delete", path, "todo/1")
        wait_until(lambda: ("todo/", "3 keys") in groups() and "todo/1" not in [
            r.get_attribute("data-key") for r in self.driver.find_elements(By.CSS_SELECTOR, "#keys .row")],
            message="the group's count")
        self.assertEqual(visible(), ["account/7/sessions/x", "plain", "todos"])
        self.driver.find_element(By.CSS_SELECTOR, '#keys .group[data-group="todo/"]').click()
        self.assertEqual(visible(), ["account/7/sessions/x", "plain", "todo/2", "todo/3", "todo/a/b", "todos"])
        # A new group appears with its first key, before it; the last key's removal takes it away.
        tool("set", path, "cart/1", "1")
        wait_until(lambda: ("cart/", "1 key") in groups(), message="the new group")
        children = self.driver.execute_script(
            "return Array.from(document.getElementById('keys').children).map(n => n.dataset.group || n.dataset.key)")
        self.assertEqual(children[:4], ["account/", "account/7/sessions/x", "cart/", "cart/1"])
        tool("delete", path, "account/7/sessions/x")
        wait_until(lambda: [g for g, _ in groups()] == ["cart/", "todo/"], message="the emptied group to go")
        # The filter finds keys in any group, and hides the groups without a match.
        filter_box = self.driver.find_element(By.ID, "filter")
        filter_box.send_keys("todo/3")
        self.assertEqual(visible(), ["todo/3"])
        self.assertEqual([g for g, _ in groups()], ["todo/"])

    def test_a_stalled_server_catches_up(self):
        path = self.sample()
        server = self.serve(path)
        self.open(server)
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            for value in range(3):
                tool("set", path, "counter", str(10 + value))
            tool("set", path, "theme", '"stalled"')
            tool("set", path, "appeared while stalled", "true")
            time.sleep(0.3)
            self.assertEqual(self.row_version("counter"), 2)
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        self.wait_version("counter", 5)
        self.wait_version("theme", 2)
        self.wait_version("appeared while stalled", 1)

    def test_a_reconnect_brings_the_page_to_every_keys_latest(self):
        if not shutil.which("ss"):
            self.skipTest("no ss (iproute2) to drop the page's connection")
        path = self.sample()
        server = self.serve(path)
        self.open(server)
        # Hold the server, reset the page's connections to it (the kernel answers for the held process),
        # write meanwhile; the page reconnects by itself with the id of the last event it received.
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            dropped = subprocess.run(["ss", "-K", "dst", "127.0.0.1", "dport", "=", f":{server.port}"],
                                     capture_output=True, text=True)
            if dropped.returncode != 0:
                self.skipTest(f"ss -K cannot drop connections here: {dropped.stderr}")
            wait_until(lambda: self.driver.find_element(By.ID, "status").text != "live", message="the drop")
            tool("set", path, "counter", "42")
            tool("delete", path, "theme")
            tool("set", path, "settings", '{"theme": "offline"}')
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        self.wait_version("counter", 3)
        self.wait_version("settings", 4)
        wait_until(lambda: not self.driver.find_elements(By.CSS_SELECTOR, '#keys .row[data-key="theme"]'),
                   message="the removed key to go")
        wait_until(lambda: self.driver.find_element(By.ID, "status").text == "live", message="live again")

    # MARK: security

    def test_token_host_check_and_read_only(self):
        path = self.sample()
        before = file_digest(path)
        server = self.serve(path)
        self.driver.delete_all_cookies()
        self.driver.get(f"http://127.0.0.1:{server.port}/")
        self.assertEqual(self.driver.find_element(By.TAG_NAME, "body").text.strip(), "Unauthorized")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#keys .row"), [])
        self.driver.get(f"http://127.0.0.1:{server.port}/api/keys?token={'0' * 64}")
        self.assertEqual(self.driver.find_element(By.TAG_NAME, "body").text.strip(), "Unauthorized")
        # A name that resolves to 127.0.0.1 (DNS rebinding) is refused, token or not.
        self.driver.get(f"http://pld-rebind.test:{server.port}/?token={server.token}")
        self.assertEqual(self.driver.find_element(By.TAG_NAME, "body").text.strip(), "Misdirected Request")
        # localhost is this server; the token is then remembered in a cookie, and leaves the address bar.
        self.driver.get(f"http://localhost:{server.port}/?token={server.token}")
        wait_until(lambda: self.driver.find_elements(By.CSS_SELECTOR, '#keys .row[data-key="settings"]'))
        self.assertEqual(self.driver.current_url, f"http://localhost:{server.port}/")
        self.driver.refresh()
        wait_until(lambda: self.driver.find_elements(By.CSS_SELECTOR, '#keys .row[data-key="settings"]'))
        self.open_timeline("settings")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "button.rollback"), [])
        status = self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch('/api/keys/settings/rollback', {method: 'POST', headers: {'Content-Type': 'application/json'},
              body: JSON.stringify({version: 1})}).then(r => done(r.status), () => done(-1));
        """)
        self.assertEqual(status, 403)
        cookie = self.driver.get_cookie(f"pld-serve-{server.port}")
        self.assertTrue(cookie["httpOnly"])
        self.assertEqual(cookie["sameSite"], "Strict")
        self.assertIsNone(self.driver.execute_script("return document.cookie.match(/pld-serve/)"))
        self.assertEqual(server.stop(), 0)
        self.assertEqual(file_digest(path), before)

    def test_a_script_key_shows_as_text(self):
        key = "<script>window.__xss = 1; alert(1)</script>"
        value = {"html": "<img src=x onerror=\"window.__xss = 2; alert(2)\">", "k": "</pre><b>bold</b>"}
        path = self.store([(key, value), ("<img src=x onerror=alert(3)>", 1)])
        server = self.serve(path)
        self.open(server)
        row = self.row(key)
        self.assertEqual(row.find_element(By.CSS_SELECTOR, ".cell.key").text, key)
        articles = self.open_timeline(key)
        self.assertEqual(json.loads(articles[0].find_element(By.CSS_SELECTOR, "pre").text), value)
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, "#timeline h2").text, key)
        time.sleep(0.2)
        self.assert_no_alert()
        self.assertIsNone(self.driver.execute_script("return window.__xss === undefined ? null : window.__xss"))
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#timeline b, #keys img, #timeline img, #keys script"), [])

    # MARK: writes

    def test_rollback_with_allow_writes(self):
        path = self.sample()
        server = self.serve(path, "--allow-writes")
        self.open(server)
        articles = self.open_timeline("settings")
        button = articles[-1].find_element(By.CSS_SELECTOR, "button.rollback")
        button.click()
        self.assertIn("Confirm", button.text)
        button.click()
        self.wait_version("settings", 4)
        newest = wait_until(lambda: self.driver.find_elements(By.CSS_SELECTOR, '#timeline article[data-version="4"]'))
        self.assertIn("author pld-tool serve", newest[0].find_element(By.CSS_SELECTOR, ".meta").text)
        self.assertEqual(self.row("settings").find_elements(By.CSS_SELECTOR, ".cell")[5].text, "pld-tool serve")
        value = json.loads(tool("get", path, "settings"))
        self.assertEqual(value, json.loads(tool("get", path, "settings", "--version", "1")))

    def test_a_rollback_clicked_on_a_stale_timeline_is_refused(self):
        path = self.sample()
        server = self.serve(path, "--allow-writes")
        self.open(server)
        articles = self.open_timeline("settings")
        button = articles[-1].find_element(By.CSS_SELECTOR, "button.rollback")
        button.click()
        self.assertIn("Confirm", button.text)
        # In one script, before the page hears of it: another writer moves the key on (a rollback sent
        # without If-Match), then the user confirms on the timeline that still shows version 3.
        status = self.driver.execute_script("""
            const request = new XMLHttpRequest();
            request.open("POST", "/api/keys/settings/rollback", false);
            request.setRequestHeader("Content-Type", "application/json");
            request.send(JSON.stringify({version: 2}));
            arguments[0].click();
            return request.status;
        """, button)
        self.assertEqual(status, 200)
        notice = self.driver.find_element(By.ID, "notice")
        wait_until(lambda: "Not rolled back" in notice.text, message="the refusal on the stale page")
        self.assertIn("now at version 4", notice.text)
        self.assertIn("showed 3", notice.text)
        self.wait_version("settings", 4)
        self.assertEqual(json.loads(tool("history", path, "settings", "--json", "--limit", "1"))[0]["version"], 4,
                         "the stale rollback wrote nothing")

    # MARK: a shared store

    def postgres_server(self):
        """A throwaway PostgreSQL server in the test's folder; skips the test where there is none."""
        if not os.access(HELPER, os.X_OK):
            self.skipTest("pld-postgres-child is not built next to pld-tool")
        binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not binaries:
            self.skipTest("no PostgreSQL installation in /usr/lib/postgresql")
        return PostgresServer(os.path.dirname(binaries[-1]), self.folder)

    def test_a_shared_store_with_two_replicas_writing(self):
        server = self.postgres_server()
        try:
            url = f"postgres://test@/postgres?host={server.socket_folder}&port={server.port}"
            replica = [HELPER, "increment", server.socket_path, "test", "postgres", "shared counter", "1"]
            subprocess.run(replica, check=True, capture_output=True, timeout=60)
            inspector = self.serve("--postgres", url)
            self.open(inspector)
            self.wait_version("shared counter", 1)
            writers = [subprocess.Popen(replica[:-1] + ["10"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                       for _ in range(2)]
            other = subprocess.Popen([HELPER, "write", server.socket_path, "test", "postgres", "second key", "5"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for writer in writers + [other]:
                _, errors = writer.communicate(timeout=60)
                self.assertEqual(writer.returncode, 0, errors)
            self.wait_version("shared counter", 21, timeout=15)
            self.wait_version("second key", 5, timeout=15)
            articles = self.open_timeline("shared counter")
            self.assertEqual(articles[0].get_attribute("data-version"), "21")
            self.assertEqual(articles[0].find_element(By.CSS_SELECTOR, "pre").text, "21")
            # The header names the store, without a password.
            store = self.driver.find_element(By.ID, "store").text
            self.assertTrue(store.startswith("postgres://test@/postgres?host="), store)
        finally:
            for inspector in self.servers:
                inspector.stop()
            server.stop()

    def test_keys_of_value_schema_2_on_a_shared_store(self):
        """A key whose versions were written by an upgraded type (schema 2), before the inspector starts and
        while it runs, is listed and shown with its schema version; the inspector keeps running."""
        server = self.postgres_server()
        try:
            url = f"postgres://test@/postgres?host={server.socket_folder}&port={server.port}"
            def child(mode, key, count):
                subprocess.run([HELPER, mode, server.socket_path, "test", "postgres", key, str(count)],
                               check=True, capture_output=True, timeout=60)
            child("write", "flags", 1)
            child("write2", "flags", 1)
            inspector = self.serve("--postgres", url)
            self.open(inspector)
            self.wait_version("flags", 2)
            self.assertEqual(self.row("flags").find_elements(By.CSS_SELECTOR, ".cell")[3].text, "2")
            child("write2", "flags", 2)
            child("write2", "evolved later", 1)
            self.wait_version("flags", 4, timeout=15)
            self.wait_version("evolved later", 1, timeout=15)
            articles = self.open_timeline("flags")
            self.assertEqual([a.get_attribute("data-version") for a in articles], ["4", "3", "2", "1"])
            schemas = [a.text for a in articles]
            self.assertIn("schema 2", schemas[0])
            self.assertIn("schema 1", schemas[3])
            self.assertIn('"note": "schema 2"', articles[0].find_element(By.CSS_SELECTOR, "pre").text)
            self.assertIsNone(inspector.process.poll(), "the inspector is still running")
            # The inspector's own store is a replica: the line under the header names the replicas running.
            replicas = self.driver.find_element(By.ID, "replicas")
            # (With the helper processes that wrote, which ended without a word: their rows stay a minute.)
            wait_until(lambda: replicas.is_displayed() and f":{inspector.process.pid} (" in replicas.text, 15,
                       "the replica line")
            self.assertNotIn("warning", replicas.get_attribute("class"))
            # A replica of an older release that a newer release's read-only migration strands: a warning,
            # at the next look (every 10 s).
            psql = server.as_postgres + [os.path.join(server.binaries, "psql"), "-h", server.socket_folder, "-p",
                                         str(server.port), "-U", "test", "-d", "postgres", "-c"]
            subprocess.run(psql + ["""
                INSERT INTO pld_replicas (id, host, pid, library_version, schema_version, access)
                VALUES ('older', 'elsewhere', 7, '0.3.0', 5, 'read-write');
                INSERT INTO pld_schema (version, name, compatibility)
                VALUES (99, '0099_next.sql', 'read-only')"""], check=True, capture_output=True)
            wait_until(lambda: "stranded" in replicas.text, 25, "the stranded warning")
            self.assertIn("elsewhere:7 (0.3.0, schema 5) by 0099_next.sql (read-only)", replicas.text)
            self.assertIn("warning", replicas.get_attribute("class"))
            # Its JSON, with the token's cookie.
            self.driver.get(f"http://127.0.0.1:{inspector.port}/api/replicas")
            listed = json.loads(self.driver.find_element(By.TAG_NAME, "body").text)
            self.assertEqual(sorted(set(r["library"] for r in listed)), ["0.3.0", "0.4.0-dev"])
            self.assertIn(inspector.process.pid, [r["pid"] for r in listed])
        finally:
            for inspector in self.servers:
                inspector.stop()
            server.stop()

    def test_keys_of_value_schema_2_in_a_file(self):
        """The same on an SQLite file: versions of schema 1 and 2, before the start and while it runs."""
        path = self.store([("flags", {"beta": False})])
        tool("set", path, "flags", '{"beta": true, "since": 2}', "--schema-version", "2")
        server = self.serve(path)
        self.open(server)
        self.wait_version("flags", 2)
        self.assertEqual(self.row("flags").find_elements(By.CSS_SELECTOR, ".cell")[3].text, "2")
        self.assertTrue(self.driver.find_element(By.ID, "store").text.endswith("/app.db"))
        tool("set", path, "flags", '{"beta": false, "since": 3}', "--schema-version", "2")
        tool("set", path, "evolved", '{"a": 1}', "--schema-version", "2")
        self.wait_version("flags", 3)
        self.wait_version("evolved", 1)
        articles = self.open_timeline("flags")
        self.assertEqual([a.get_attribute("data-version") for a in articles], ["3", "2", "1"])
        self.assertIn("schema 2", articles[0].text)
        self.assertIn("schema 1", articles[2].text)
        self.assertIsNone(server.process.poll(), "the inspector is still running")

    # MARK: the goals

    def test_goal_first_keys_with_10000_keys(self):
        path = self.store([(f"key-{index:05d}", {"index": index, "name": f"item {index}"}) for index in range(10_000)])
        server = self.serve(path)
        times = []
        for _ in range(5):
            # Each navigation from an empty tab, as when the address is opened: leaving a page of
            # 10,000 rows costs the next navigation its unload, which is not the page's first paint.
            self.driver.get("about:blank")
            self.driver.get(server.address)
            first = wait_until(lambda: self.driver.execute_script("return window.__firstRowAt"), message="first row")
            times.append(first)
        count = wait_until(lambda: self.driver.execute_script(
            "return document.querySelectorAll('#keys .row').length === 10000"), message="all rows")
        self.assertTrue(count)
        median = sorted(times)[len(times) // 2]
        RESULTS["first keys (10,000 keys)"] = (
            f"median {median:.0f} ms of {len(times)} navigations ({', '.join(f'{t:.0f}' for t in times)}; "
            f"goal {FIRST_KEYS_GOAL_MS} ms)")
        self.assertLessEqual(median, FIRST_KEYS_GOAL_MS)

    def test_goal_live_p99(self):
        path = self.store([(f"key-{index:03d}", index) for index in range(100)])
        server = self.serve(path)
        self.open(server)
        self.driver.execute_script("window.__shown = []")
        commits = 100
        for index in range(commits):
            tool("set", path, f"key-{index % 100:03d}", str(1000 + index))
            time.sleep(0.03)
        latencies = self.shown_latencies(path, [(f"key-{index:03d}", 2) for index in range(commits)])
        p50 = latencies[len(latencies) // 2]
        # Nearest rank: the smallest latency that at least 99 % of the commits did not exceed.
        p99 = latencies[max(0, -(-len(latencies) * 99 // 100) - 1)]
        RESULTS["live update, commit to shown"] = f"p50 {p50} ms, p99 {p99} ms, max {latencies[-1]} ms over {len(latencies)} commits (goal p99 {LIVE_P99_GOAL_MS} ms)"
        self.assertLessEqual(p99, LIVE_P99_GOAL_MS)

    def test_live_updates_with_10000_keys(self):
        """Not a goal: the same measure with 10,000 keys (each commit costs the server a scan of the keys)."""
        path = self.store([(f"key-{index:05d}", index) for index in range(10_000)])
        server = self.serve(path)
        self.open(server)
        self.driver.execute_script("window.__shown = []")
        commits = 30
        for index in range(commits):
            tool("set", path, f"key-{index * 331 % 10_000:05d}", str(-index))
            time.sleep(0.03)
        latencies = self.shown_latencies(path, [(f"key-{index * 331 % 10_000:05d}", 2) for index in range(commits)])
        RESULTS["live update with 10,000 keys (not a goal)"] = (
            f"p50 {latencies[len(latencies) // 2]} ms, max {latencies[-1]} ms over {len(latencies)} commits")
        for index in range(commits):
            self.assertEqual(self.row_version(f"key-{index * 331 % 10_000:05d}"), 2)

    def test_goal_page_weight(self):
        path = self.sample()
        server = self.serve(path)
        self.open(server)
        entries = self.driver.execute_script("""
            const n = performance.getEntriesByType('navigation')[0];
            return {document: n.decodedBodySize, resources: performance.getEntriesByType('resource')
              .filter(r => r.initiatorType !== 'fetch' && r.initiatorType !== 'xmlhttprequest' && !r.name.includes('/api/'))
              .map(r => r.name)};
        """)
        RESULTS["page weight"] = f"{entries['document']} bytes, {len(entries['resources'])} other resources (goal {PAGE_WEIGHT_GOAL_BYTES} bytes)"
        self.assertEqual(entries["resources"], [])
        self.assertLessEqual(entries["document"], PAGE_WEIGHT_GOAL_BYTES)


class PostgresServer:
    """A throwaway PostgreSQL server in `root`, as Sources/PersistentLiveDataPostgresTesting starts one."""

    def __init__(self, binaries, root):
        self.binaries = binaries
        self.root = os.path.join(root, "postgres")
        self.data = os.path.join(self.root, "data")
        self.socket_folder = os.path.join(self.root, "socket")
        self.port = 55000 + os.getpid() % 1000
        os.makedirs(self.socket_folder)
        as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if as_postgres:
            subprocess.run(["chown", "-R", "postgres", self.root], check=True)
            os.chmod(os.path.dirname(self.root), 0o755)
        self.as_postgres = as_postgres
        subprocess.run(as_postgres + [os.path.join(binaries, "initdb"), "-D", self.data, "-A", "trust", "-U", "test",
                                      "--no-sync", "--locale=C", "-E", "UTF8"], check=True, capture_output=True)
        subprocess.run(as_postgres + [os.path.join(binaries, "pg_ctl"), "-D", self.data, "-l",
                                      os.path.join(self.root, "log"), "-w", "-o",
                                      f"-k {self.socket_folder} -c listen_addresses='' -p {self.port} -c fsync=off",
                                      "start"], check=True, capture_output=True)
        self.socket_path = os.path.join(self.socket_folder, f".s.PGSQL.{self.port}")

    def stop(self):
        subprocess.run(self.as_postgres + [os.path.join(self.binaries, "pg_ctl"), "-D", self.data, "-m", "immediate",
                                           "stop"], capture_output=True)


if __name__ == "__main__":
    program = unittest.main(exit=False, verbosity=2)
    print("\nGoals of the inspector (headless Chromium):")
    for name, figure in RESULTS.items():
        print(f"  {name}: {figure}")
    sys.exit(0 if program.result.wasSuccessful() else 1)
