"""gpukit.monitor(): run in a real notebook through nbclient on a gpukit
kernel, its live view updated while other cells run, then rendered in
headless Chromium and checked through the DOM; and, outside a notebook,
the text of `gpukit top --once`."""
import re
import sys

import pytest

from conftest import SCENARIOS, SOURCE, child_env, run_python

sys.path.insert(0, str(SOURCE / "tests" / "python"))
from browser import browser  # noqa: E402  (tests/python/browser.py)
from test_notebooks import (  # noqa: E402,F401  (kernel_cache: a fixture)
    KERNEL_NAME, install_kernel, jupyter_env, kernel_cache, use_environment)

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")


def html_of(cell):
    (output,) = [o for o in cell.outputs if o.output_type == "display_data"]
    return output.data["text/html"]


def reading_of(html):
    """The reading number inside the view's data."""
    return int(re.search(r'"reading": \{"number": (\d+)', html).group(1))


def test_monitor_live_in_a_notebook(tmp_path, monkeypatch, kernel_cache):
    # The kernel's own process, listed by the (reloading) fake driver on GPU 7,
    # so the view has a process with a lease and a Jupyter kernel to show.
    scenario = tmp_path / "live.scn"
    scenario.write_text((SCENARIOS / "h100x8.scn").read_text())
    env, prefix = jupyter_env(tmp_path, str(scenario), kernel_cache)
    env["FAKE_NVML_RELOAD"] = "1"
    install_kernel(env, prefix)
    use_environment(monkeypatch, env)

    cells = [
        "import os, time, gpukit\n"
        f"with open({str(scenario)!r}, 'a') as f:\n"
        "    f.write(f'proc type=compute pid={os.getpid()} mem=777\\n')\n"
        f"os.utime({str(scenario)!r}, (time.time() + 5, time.time() + 5))\n"
        "print(os.getpid())",
        "m = gpukit.monitor(interval=0.2, gpus=[0, 7])",
        "time.sleep(2.5)",
        "print(repr(m)); m.stop(); print(repr(m))",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    seen = {}

    def after_cell(cell, cell_index, execute_reply):
        if cell_index in (1, 2):
            seen[cell_index] = reading_of(html_of(notebook.cells[1]))

    client = nbclient.NotebookClient(notebook, kernel_name=KERNEL_NAME, timeout=240,
                                     startup_timeout=60, on_cell_executed=after_cell)
    client.execute()
    kernel_pid = int(notebook.cells[0].outputs[0].text)
    printed = "".join(o.text for o in notebook.cells[3].outputs if o.output_type == "stream")
    assert "GPUs [0, 7], every 0.2 s, live" in printed and "stopped>" in printed
    # The view was updated while the next cell ran (the sleep): later
    # readings replaced the first one in place.
    assert seen[2] >= seen[1] + 3, seen
    html = html_of(notebook.cells[1])
    assert "(monitor stopped)" in html

    page_file = tmp_path / "view.html"
    page_file.write_text(f"<!doctype html><meta charset=utf-8><body>{html}</body>")
    with browser(tmp_path) as page:
        page.goto(page_file.as_uri())
        page.wait_for("document.querySelectorAll('section.gpu').length === 2")
        cards = page.evaluate("[...document.querySelectorAll('section.gpu')]"
                              ".map(c => [+c.dataset.index, c.innerText])")
        rows = page.evaluate("[...document.querySelectorAll('table.processes tr')].slice(1)"
                             ".map(r => [...r.cells].map(c => c.innerText))")
        points = page.evaluate("[...document.querySelectorAll('svg.chart')]"
                               ".map(c => +c.dataset.points)")
        stopped = page.evaluate("document.querySelector('.diagnosis').innerText")
        screenshot = page.screenshot(tmp_path / "notebook-monitor.png")
    assert [c[0] for c in cards] == [0, 7]
    assert "NVIDIA H100 80GB HBM3" in cards[1][1] and "99 %" in cards[1][1]
    (kernel_row,) = [r for r in rows if r[1] == str(kernel_pid)]
    assert kernel_row[0] == "7" and kernel_row[3] == "777 MiB"
    assert kernel_row[5].startswith("lease-")  # the gpukit kernel's lease
    assert kernel_row[6].startswith(KERNEL_NAME)  # GPUKIT_KERNEL from the kernelspec
    assert {r[1] for r in rows} == {str(kernel_pid), "4012345", "4050001", "4050002"}
    assert min(points) >= 3  # the history came along, for each GPU shown
    assert "monitor stopped" in stopped
    assert screenshot.stat().st_size > 20_000


def test_monitor_outside_a_notebook_prints_top_once(tmp_path):
    (tmp_path / "empty-path").mkdir()
    env = child_env(tmp_path, "h100x8", COLUMNS="120")
    result = run_python("""
        import re, gpukit
        m = gpukit.monitor(gpus=[2])
        document = m.json()
        print("GPUS", [g["index"] for g in document["gpus"]])
        print("METRICS", "DCGM_FI_DEV_GPU_UTIL{" in m.metrics())
        print("LABELS", sorted(set(re.findall(r'[{,]gpu="(\\d+)"', m.metrics()))))
        print(repr(m))
        made = gpukit.Monitor(gpus=[1, 3])  # made directly: it answers too
        print("MADE", [g["index"] for g in made.json()["gpus"]], repr(made))
        print("MADE TEXT", " 3 NVIDIA" in made.text() and " 2 NVIDIA" not in made.text())
    """, env)
    text = result.stdout
    assert text.startswith("gpukit top ")
    assert re.search(r"^ 2 NVIDIA H100 80GB HBM3 .*68°C", text, re.M)
    assert not re.search(r"^ [013-7] NVIDIA", text, re.M)  # only GPU 2
    assert "4020001" in text and "4012345" not in text  # and only its processes
    assert "GPUS [2]" in text and "METRICS True" in text
    assert "LABELS ['2']" in text  # metrics of the chosen GPUs too
    assert "MADE [1, 3] <gpukit.Monitor GPUs [1, 3], every 1 s, one reading>" in text
    assert "MADE TEXT True" in text
    for bad in ("interval=0", "interval=float('nan')", "interval=-1", "gpus=[]", "gpus=[-1]",
                "gpus=[64]"):
        failed = run_python(f"import gpukit; gpukit.monitor({bad})", env, check=False)
        assert failed.returncode != 0 and "ValueError" in failed.stderr, bad


def test_sampler_close_races_other_threads(tmp_path):
    """close() while other threads read, wait and draw: they finish or get
    ValueError, never a crash; bad timeouts are ValueErrors."""
    (tmp_path / "empty-path").mkdir()
    run_python("""
        import threading, gpukit
        from gpukit import _gpukit
        for round in range(30):
            sampler = _gpukit._Sampler(0.05)
            sampler.read()
            errors = []
            def busy(call):
                try:
                    for _ in range(50):
                        call()
                except ValueError:
                    pass  # closed under it
                except Exception as error:
                    errors.append(error)
            threads = [threading.Thread(target=busy, args=(c,)) for c in
                       (sampler.read, sampler.json, lambda: sampler.wait(0, 0.01),
                        lambda: sampler.text(width=100))]
            for t in threads:
                t.start()
            sampler.close()
            for t in threads:
                t.join()
            assert not errors, errors
        sampler = _gpukit._Sampler(0.05)
        for bad in (float("inf"), float("nan"), -1.0):
            try:
                sampler.wait(0, bad)
            except ValueError:
                pass
            else:
                raise AssertionError(bad)
        sampler.start()
        try:
            sampler.read()
        except ValueError as error:
            assert "own thread" in str(error)
        else:
            raise AssertionError("read() while started")
        assert len(sampler.text(width=10**9).splitlines()[0]) <= 1000
        sampler.close()
        sampler.close()
    """, child_env(tmp_path, "h100x8"))
