"""The dashboard of `gpukit serve`, loaded in a real headless Chromium: every
GPU of the fake appears with its values, the charts grow with each reading
over the event stream, processes, leases and the waiting line are listed,
and text from the machine cannot inject markup."""
import json
import subprocess
import sys
import time

from browser import browser
from conftest import GPUKIT, SCENARIOS, parse_scenario, run, scenario_env
from serve_helpers import serving


def test_dashboard_shows_every_gpu_live(tmp_path):
    _, gpus = parse_scenario("h100x8")
    with serving(scenario_env(tmp_path, "h100x8"), "--interval", "0.25") as server, \
            browser(tmp_path) as page:
        page.goto(server.url + "/")
        page.wait_for("document.querySelectorAll('section.gpu').length === 8")
        first = int(page.evaluate("document.getElementById('gpukit-dashboard').dataset.reading"))
        # Readings arrive over the event stream: the reading number and the
        # charts' points grow without reloading the page.
        page.wait_for(f"+document.getElementById('gpukit-dashboard').dataset.reading >= {first + 3}")
        cards = page.evaluate("""[...document.querySelectorAll('section.gpu')].map(c => ({
            index: +c.dataset.index, uuid: c.dataset.uuid, text: c.innerText,
            points: +c.querySelector('svg.chart').dataset.points,
            lines: [...c.querySelectorAll('svg.chart polyline')].map(l => l.getAttribute('class'))
        }))""")
        assert [c["index"] for c in cards] == list(range(8))
        for card, gpu in zip(cards, gpus):
            assert card["uuid"] == gpu["uuid"]
            assert gpu["name"] in card["text"] and gpu["pci"] in card["text"]
            assert f"{gpu['util_gpu']} %" in card["text"]
            assert f"{gpu['mem_used']} / {gpu['mem_total']} MiB" in card["text"]
            assert f"{gpu['temp']} \u00b0C" in card["text"]
            assert "fan N/A" in card["text"]  # no fan sensor: N/A, not 0
            assert card["points"] >= 3
            assert card["lines"] == ["util", "memory", "power", "temperature"]
        rows = page.evaluate("""[...document.querySelectorAll('table.processes tr')].slice(1)
            .map(r => [...r.cells].map(c => c.innerText))""")
        assert sorted((int(r[0]), int(r[1])) for r in rows) == \
            sorted((i, int(p["pid"])) for i, g in enumerate(gpus) for p in g["procs"])
        assert page.evaluate("document.querySelector('p.leases').innerText") == "No GPU is reserved."
        shot = page.screenshot(tmp_path / "dashboard.png")
    # A real picture: a PNG much larger than a blank page.
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000


def test_dashboard_lists_leases_and_waiting_jobs_safely(tmp_path):
    scenario = tmp_path / "one.scn"
    laptop = "\n".join(l for l in (SCENARIOS / "laptop.scn").read_text().splitlines()
                       if not l.startswith("proc "))
    scenario.write_text(laptop + "\n")
    env = scenario_env(tmp_path, str(scenario))
    # Command lines are outside text: markup in them must stay text.
    evil = "<img src=x onerror=window.pwned=1>"
    holder = subprocess.Popen([str(GPUKIT), "run", "--gpus", "0", "--", sys.executable, "-c",
                               "import time; time.sleep(120)", evil], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    waiter = None
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not json.loads(run(["leases", "--json"], env).stdout):
            time.sleep(0.05)
        scenario.write_text(laptop + f"\nproc type=compute pid={holder.pid} mem=2048\n")
        waiter = subprocess.Popen([str(GPUKIT), "run", "--gpus", "0", "--wait", "--", "true"],
                                  env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        with serving(env, "--interval", "0.25") as server, browser(tmp_path) as page:
            page.goto(server.url + "/")
            page.wait_for("document.querySelectorAll('table.waiting tr').length === 2")
            lease = page.evaluate("[...document.querySelectorAll('table.leases tr')[1].cells]"
                                  ".map(c => c.innerText)")
            waiting = page.evaluate("[...document.querySelectorAll('table.waiting tr')[1].cells]"
                                    ".map(c => c.innerText)")
            process = page.evaluate("[...document.querySelectorAll('table.processes tr')[1].cells]"
                                    ".map(c => c.innerText)")
            assert page.evaluate("window.pwned === undefined && !document.querySelector('img')")
    finally:
        for p in (waiter, holder):
            if p:
                p.terminate()
                p.wait(timeout=10)
    assert lease[0] == "0" and lease[1] == str(holder.pid) and lease[4] == "exclusive"
    assert evil in lease[5]
    assert waiting[0] == "1" and waiting[1] == str(waiter.pid)
    assert process[1] == str(holder.pid) and process[3] == "2048 MiB"
    assert process[5].startswith("lease-") or process[5]  # the lease it runs under
    assert evil in process[7]


def test_dashboard_says_when_the_server_is_gone(tmp_path):
    with serving(scenario_env(tmp_path, "laptop"), "--interval", "0.25") as server, \
            browser(tmp_path) as page:
        page.goto(server.url + "/")
        page.wait_for("document.querySelectorAll('section.gpu').length === 1")
        code, _ = server.stop()
        assert code == 0
        # The stream ends, reconnecting fails, polling says so; the last
        # reading stays on show.
        text = page.wait_for("(document.querySelector('.problem.connection') || {}).innerText",
                             timeout=60)
        assert "cannot reach gpukit serve" in text
        assert page.evaluate("document.querySelectorAll('section.gpu').length") == 1
