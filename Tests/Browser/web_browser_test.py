#!/usr/bin/env python3
"""Real-browser test of `hp-sync web`: headless Chromium driven by Selenium.

One scenario, checked against `hp-sync list --json` at every step: a request without the token
is refused; open the URL with the token; add an item with a photo through the form; see its
card; open it; edit its value; select two cards; remove them. Then a real clash: a second
store syncs with this one through `hp-sync serve` after both renamed the same item; the item
page links to the Conflicts page, which shows both names side by side; "Take this value" on
the losing name makes it the item's name and resolves the clash (`hp-sync conflicts --json`
agrees, on both nodes after their next sync). Screenshots go to the test's temporary folder
(printed), or to --screenshots DIR.

Usage: web_browser_test.py PATH-TO-hp-sync [--screenshots DIR]
Needs: chromium, chromium-driver (Debian) and the selenium package (Scripts/test installs them).
"""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main() -> int:
    binary = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="hpsync-web-browser.")
    shots = sys.argv[sys.argv.index("--screenshots") + 1] if "--screenshots" in sys.argv else work
    os.makedirs(shots, exist_ok=True)
    store = os.path.join(work, "store")

    def hps(*args: str) -> str:
        return subprocess.run([binary, *args, "--store", store], check=True, capture_output=True, text=True).stdout

    def items() -> list:
        return json.loads(hps("list", "--json"))

    def jpeg(name: str, seed: int) -> str:
        path = os.path.join(work, name)
        subprocess.run([sys.executable, os.path.join(ROOT, "Scripts", "make-sample-jpeg.py"), path, "3000", str(seed)],
                       check=True)
        return path

    hps("init")
    server = subprocess.Popen([binary, "web", "--store", store, "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                              text=True)
    driver = None
    try:
        url = read_url(server)
        base = url.split("/?token=")[0]
        step("server printed " + base + "/?token=…")

        # Without the token: refused, and nothing of the inventory in the answer.
        try:
            urllib.request.urlopen(base + "/")
            fail("a request without the token was served")
        except urllib.error.HTTPError as error:
            expect(error.code == 401, f"no token -> {error.code}, want 401")
        step("a request without the token is refused (401)")
        rebound = urllib.request.Request(url, headers={"Host": "evil.example:8080"})
        try:
            urllib.request.urlopen(rebound)
            fail("a request for another host name (DNS rebinding) was served")
        except urllib.error.HTTPError as error:
            expect(error.code == 403, f"foreign Host -> {error.code}, want 403")
        step("a request naming another host (DNS rebinding) is refused (403), token or not")

        options = webdriver.ChromeOptions()
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1200,900"):
            options.add_argument(flag)
        options.binary_location = first_existing(["/usr/bin/chromium", "/usr/bin/chromium-browser"])
        driver = webdriver.Chrome(service=Service(first_existing(["/usr/bin/chromedriver"])), options=options)
        driver.implicitly_wait(5)

        driver.get(url)
        expect("token=" not in driver.current_url, "the token stayed in the address bar")
        expect("Inventory" in driver.title, f"title {driver.title!r}")
        step("opened the URL with the token; the cookie keeps it")

        # Add an item with a photo through the form.
        navigate(driver, driver.find_element(By.LINK_TEXT, "Add item"))
        driver.find_element(By.NAME, "name").send_keys("Road bike")
        driver.find_element(By.NAME, "serial").send_keys("RB-2024")
        value = driver.find_element(By.NAME, "value")
        value.clear()
        value.send_keys("1200")
        driver.find_element(By.NAME, "photo").send_keys(jpeg("bike.jpg", 1))
        navigate(driver, driver.find_element(By.CSS_SELECTOR, "#add button[type=submit]"))
        expect(driver.find_element(By.TAG_NAME, "h1").text == "Road bike", "no detail page after adding")
        listed = items()
        expect(len(listed) == 1 and listed[0]["name"] == "Road bike" and listed[0]["valueInDollars"] == 1200
               and listed[0].get("serialNumber") == "RB-2024" and listed[0]["image"]["size"] == 3000,
               f"list --json after add: {listed}")
        bike = listed[0]["key"]
        step("added an item with a photo through the form; list --json agrees")

        for name, value, seed in (("Guitar", "800", 2), ("Old radio", "35", 3)):
            hps("add", "--name", name, "--value", value, "--image", jpeg(name + ".jpg", seed))
        navigate(driver, driver.find_element(By.LINK_TEXT, "Inventory"))
        names = [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".card .name")]
        expect(sorted(names) == ["Guitar", "Old radio", "Road bike"], f"cards {names}")
        expect("$2,035" in driver.find_element(By.ID, "totals").text, "total value not shown")
        driver.save_screenshot(os.path.join(shots, "web-grid.png"))
        step("the inventory shows the card (and two added by the CLI), count and total")

        # Open it and edit its value.
        navigate(driver, driver.find_element(By.CSS_SELECTOR, f".card[data-key='{bike}'] a"))
        value = driver.find_element(By.CSS_SELECTOR, "#edit input[name=value]")
        value.clear()
        value.send_keys("1350")
        navigate(driver, driver.find_element(By.CSS_SELECTOR, "#edit button[type=submit]"))
        expect("Saved" in driver.find_element(By.CSS_SELECTOR, ".notice").text, "no 'Saved' notice")
        driver.save_screenshot(os.path.join(shots, "web-detail.png"))
        edited = {i["key"]: i for i in items()}
        expect(edited[bike]["valueInDollars"] == 1350, f"value after edit: {edited[bike]}")
        step("opened the item and edited its value; list --json agrees")

        # Select two cards (tap to select, as in ColorCollection) and remove them.
        navigate(driver, driver.find_element(By.LINK_TEXT, "Inventory"))
        driver.find_element(By.ID, "select-mode").click()
        chosen = [i["key"] for i in items() if i["name"] in ("Road bike", "Guitar")]
        for key in chosen:
            driver.find_element(By.CSS_SELECTOR, f".card[data-key='{key}']").click()
        checked = [e.get_attribute("value") for e in driver.find_elements(By.CSS_SELECTOR, "input[name=key]:checked")]
        expect(sorted(checked) == sorted(chosen), f"selected {checked}, want {chosen}")
        expect(driver.find_element(By.ID, "remove-selected").text == "Remove selected (2)", "selection count")
        driver.save_screenshot(os.path.join(shots, "web-selection.png"))
        expect(len(items()) == 3, "selecting changed the store")
        navigate(driver, driver.find_element(By.ID, "remove-selected"))
        report = driver.find_element(By.ID, "changeset").text
        expect("deleted 2" in report, f"change set: {report}")
        remaining = items()
        expect([i["name"] for i in remaining] == ["Old radio"], f"list --json after remove: {remaining}")
        step("selected two cards and removed them in one batch; list --json agrees")

        driver.get(base + "/report")
        driver.save_screenshot(os.path.join(shots, "web-report.png"))
        expect("Total: 1 item" in driver.page_source, "report totals")
        pdf = base64.b64decode(driver.print_page())
        with open(os.path.join(shots, "web-report.pdf"), "wb") as f:
            f.write(pdf)
        expect(pdf.startswith(b"%PDF"), "the report did not print to PDF")
        step(f"report rendered and printed to PDF ({len(pdf)} bytes)")

        resolve_a_clash(driver, base, binary, work, store, shots, hps)
        print(f"screenshots: {shots}")
        print("PASS")
        return 0
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def resolve_a_clash(driver, base: str, binary: str, work: str, store: str, shots: str, hps) -> None:
    """A real clash between this store (the web's, which serves) and a second one (which syncs),
    seen and resolved on the Conflicts page."""
    desktop = os.path.join(work, "desktop")

    def other(*args: str) -> str:
        return subprocess.run([binary, *args, "--store", desktop], check=True, capture_output=True, text=True).stdout

    def conflicts(run) -> list:
        return json.loads(run("conflicts", "--json"))

    other("init")
    laptop_id, desktop_id = hps("id").split()[-1], other("id").split()[-1]
    hps("peer", "add", "desktop", desktop_id, "--allow", "read-write")
    serve_log = os.path.join(work, "serve.log")
    with open(serve_log, "w") as log:
        server = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--store", store],
                                  stdout=subprocess.DEVNULL, stderr=log)
    try:
        port = read_port(server, serve_log)
        other("peer", "add", "laptop", laptop_id, "--address", f"127.0.0.1:{port}")
        other("pull", "laptop")
        (radio,) = [i["key"] for i in json.loads(other("list", "--json")) if i["name"] == "Old radio"]

        # Both nodes rename the radio since their common version: a clash on the name.
        hps("edit", radio, "--name", "Tube radio")
        other("edit", radio, "--name", "Transistor radio")
        other("sync", "laptop")
        listed = conflicts(hps)
        expect(len(listed) == 1 and listed[0]["key"] == radio and listed[0]["field"] == "name",
               f"conflicts --json after the clash: {listed}")
        kept, losing = listed[0]["kept"]["value"], listed[0]["losing"]["value"]
        expect({kept, losing} == {"Tube radio", "Transistor radio"}, f"kept {kept!r}, losing {losing!r}")
        expect([same_everywhere(c) for c in conflicts(other)] == [same_everywhere(c) for c in listed],
               f"the nodes list different conflicts: {conflicts(other)} and {listed}")
        step(f"two nodes renamed one item and synced through serve: {kept!r} kept, {losing!r} lost, on both")

        # The item page says so and links to the Conflicts page of that item.
        navigate(driver, driver.find_element(By.LINK_TEXT, "Inventory"))
        navigate(driver, driver.find_element(By.CSS_SELECTOR, f".card[data-key='{radio}'] a"))
        expect(driver.find_element(By.TAG_NAME, "h1").text == kept, "the item page does not show the kept name")
        banner = driver.find_element(By.ID, "item-conflicts")
        expect("1 open conflict" in banner.text, f"item page: {banner.text!r}")
        navigate(driver, banner.find_element(By.LINK_TEXT, "See both values"))
        expect(driver.current_url.endswith(f"/conflicts?key={radio}"), f"link led to {driver.current_url}")
        cards = driver.find_elements(By.CSS_SELECTOR, "section.conflict")
        expect(len(cards) == 1 and cards[0].get_attribute("id") == f"conflict-{radio}-name",
               f"conflict cards {[c.get_attribute('id') for c in cards]}")
        kept_side = cards[0].find_element(By.CSS_SELECTOR, ".sides .side.kept")
        losing_side = cards[0].find_element(By.CSS_SELECTOR, ".sides .side.losing")
        expect(kept_side.find_element(By.CSS_SELECTOR, ".value").text == kept, f"kept side: {kept_side.text!r}")
        expect(losing_side.find_element(By.CSS_SELECTOR, ".value").text == losing, f"lost side: {losing_side.text!r}")
        expect(kept_side.location["y"] == losing_side.location["y"]
               and kept_side.location["x"] < losing_side.location["x"],
               f"the values are not side by side: kept at {kept_side.location}, lost at {losing_side.location}")
        expect(not kept_side.find_elements(By.TAG_NAME, "button"), "the kept side offers to take its own value")
        driver.save_screenshot(os.path.join(shots, "web-conflicts.png"))
        step("the item page links to its Conflicts page, which shows the kept and the lost name side by side")

        # Take the losing value: an edit of the name, which resolves the clash.
        navigate(driver, losing_side.find_element(By.XPATH, ".//button[normalize-space()='Take this value']"))
        expect("Taken" in driver.find_element(By.CSS_SELECTOR, ".notice").text, "no 'Taken' notice")
        expect(driver.find_elements(By.ID, "no-conflicts") and not driver.find_elements(By.CSS_SELECTOR,
                                                                                       "section.conflict"),
               "the Conflicts page still lists a conflict after taking the value")
        driver.save_screenshot(os.path.join(shots, "web-conflict-taken.png"))
        driver.get(f"{base}/items/{radio}")
        expect(driver.find_element(By.TAG_NAME, "h1").text == losing, "the item does not show the taken name")
        expect(not driver.find_elements(By.ID, "item-conflicts"), "the item page still announces a conflict")
        expect(conflicts(hps) == [], f"conflicts --json after taking the value: {conflicts(hps)}")
        named = {i["key"]: i["name"] for i in json.loads(hps("list", "--json"))}
        expect(named[radio] == losing, f"list --json after taking the value: {named[radio]!r}")
        step(f"'Take this value' made {losing!r} the name; the page, list --json and conflicts --json agree")

        other("sync", "laptop")
        expect(conflicts(other) == [], f"the other node after its sync: {conflicts(other)}")
        named = {i["key"]: i["name"] for i in json.loads(other("list", "--json"))}
        expect(named[radio] == losing, f"the other node's name after its sync: {named[radio]!r}")
        step("after the next sync the other node holds the taken name and no conflict")
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def same_everywhere(conflict: dict) -> tuple:
    """A listed conflict without the names each node gives the nodes ("this node", a peer's name)."""
    return (conflict["key"], conflict["field"], conflict["name"],
            *((side["value"], side["node"], side["at"]) for side in (conflict["kept"], conflict["losing"])))


def read_port(server: subprocess.Popen, log: str) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with open(log) as f:
            found = re.search(r"listen=127\.0\.0\.1:(\d+)", f.read())
        if found:
            return found.group(1)
        if server.poll() is not None:
            fail(f"hp-sync serve exited ({server.returncode}) before printing its address")
        time.sleep(0.1)
    fail("hp-sync serve printed no address within 30 s")


def navigate(driver, element) -> None:
    """Clicks `element` and waits until the browser has left the page it was on."""
    page = driver.find_element(By.TAG_NAME, "html")
    element.click()

    def left(_driver) -> bool:
        try:
            page.is_enabled()
            return False
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            # Asked about a node of the page it is leaving, Chromium 156 may answer this instead
            # of "stale element" (CI, session 9): the page is gone all the same.
            if "does not belong to the document" in str(error):
                return True
            raise

    WebDriverWait(driver, 10).until(left)


def read_url(server: subprocess.Popen) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = server.stdout.readline()
        if not line:
            fail("hp-sync web exited before printing its URL")
        if "?token=" in line:
            return line.strip()
    fail("hp-sync web printed no URL within 30 s")


def first_existing(paths: list) -> str:
    for path in paths:
        if os.path.exists(path):
            return path
    fail(f"none of {paths} is installed")


def step(text: str) -> None:
    print("ok:   " + text, flush=True)


def expect(condition: bool, message: str) -> None:
    if not condition:
        fail(message)


def fail(message: str) -> None:
    print("FAIL: " + message, flush=True)
    raise SystemExit(1)


if __name__ == "__main__":
    sys.exit(main())
