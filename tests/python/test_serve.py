"""`gpukit serve`: Prometheus metrics with DCGM-exporter's names checked
against the fake NVML's values, OpenMetrics, promtool's check, the JSON and
event-stream endpoints, leases and processes, and a server that survives
malformed, slow and many clients."""
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

import pytest
from prometheus_client.openmetrics import parser as openmetrics_parser
from prometheus_client.parser import text_string_to_metric_families

from conftest import (EXIT_USAGE, GPUKIT, SCENARIOS, expected_int, parse_scenario, run,
                      scenario_env, base_env)
from serve_helpers import serving

sys.path.insert(0, os.path.dirname(__file__))

MIB = 1024 * 1024
DCGM_LABELS = {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "hostname",
               "DCGM_FI_DRIVER_VERSION"}


def samples(text):
    """{metric name: [(labels, value), ...]} from the text format."""
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append((sample.labels, sample.value))
    return out


def by_gpu(found, name):
    return {int(labels["gpu"]): value for labels, value in found.get(name, [])
            if "GPU_I_ID" not in labels}


def test_dcgm_metrics_are_the_fakes_values(tmp_path):
    _, gpus = parse_scenario("h100x8")
    with serving(scenario_env(tmp_path, "h100x8")) as server:
        status, headers, text = server.get("/metrics")
    assert status == 200
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    found = samples(text)
    # DCGM name -> (scenario key, scale from the scenario's unit)
    expected = {
        "DCGM_FI_DEV_SM_CLOCK": ("clock_sm", 1), "DCGM_FI_DEV_MEM_CLOCK": ("clock_mem", 1),
        "DCGM_FI_DEV_GPU_TEMP": ("temp", 1), "DCGM_FI_DEV_GPU_UTIL": ("util_gpu", 1),
        "DCGM_FI_DEV_MEM_COPY_UTIL": ("util_mem", 1), "DCGM_FI_DEV_ENC_UTIL": ("enc", 1),
        "DCGM_FI_DEV_DEC_UTIL": ("dec", 1), "DCGM_FI_DEV_FB_USED": ("mem_used", 1),
        "DCGM_FI_DEV_FB_TOTAL": ("mem_total", 1),
        "DCGM_FI_DEV_ENFORCED_POWER_LIMIT": ("power_limit", 1),
    }
    for name, (key, scale) in expected.items():
        values = by_gpu(found, name)
        assert values == {i: expected_int(g, key) * scale for i, g in enumerate(gpus)}, name
    power = by_gpu(found, "DCGM_FI_DEV_POWER_USAGE")
    assert power == {i: pytest.approx(float(g["power"]), abs=1e-3) for i, g in enumerate(gpus)}
    free = by_gpu(found, "DCGM_FI_DEV_FB_FREE")
    reserved = by_gpu(found, "DCGM_FI_DEV_FB_RESERVED")
    for i, g in enumerate(gpus):
        assert reserved[i] == float(g.get("mem_reserved", 0))
        assert free[i] == int(g["mem_total"]) - int(g["mem_used"]) - float(g.get("mem_reserved", 0))
    # An unreadable field is absent, never 0: no fan on these boards, and
    # GPU 3 reports no energy counter.
    assert "DCGM_FI_DEV_FAN_SPEED" not in found
    # (prometheus_client's parser names every counter sample ..._total; the
    # text itself keeps dcgm-exporter's name)
    energy = by_gpu(found, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total")
    assert "\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=" in text
    assert 3 not in energy
    assert energy == {i: round(float(g["energy"]) * 1000) for i, g in enumerate(gpus)
                      if "energy" in g}
    assert "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter" in text
    # dcgm-exporter's labels on every sample
    for labels, _ in found["DCGM_FI_DEV_GPU_UTIL"]:
        assert set(labels) == DCGM_LABELS
        gpu = gpus[int(labels["gpu"])]
        assert labels["UUID"] == gpu["uuid"]
        assert labels["pci_bus_id"] == gpu["pci"]
        assert labels["modelName"] == gpu["name"]
        assert labels["device"] == f"nvidia{labels['gpu']}"
        assert labels["Hostname"] == labels["hostname"] == socket.gethostname()
        assert labels["DCGM_FI_DRIVER_VERSION"] == "550.54.15"
    assert by_gpu(found, "gpukit_gpu_up") == {i: 1 for i in range(8)}
    assert found["gpukit_gpus"] == [({}, 8)]
    # the fake's processes, with their GPU memory in bytes
    memory = {(int(l["gpu"]), int(l["pid"])): v for l, v in found["gpukit_process_gpu_memory_bytes"]}
    assert memory == {(i, int(p["pid"])): int(p["mem"]) * MIB
                      for i, g in enumerate(gpus) for p in g["procs"]}
    assert found["gpukit_leases"] == [({}, 0)]
    assert found["gpukit_monitor_failed_readings_total"] == [({}, 0)]


def test_openmetrics_when_asked(tmp_path):
    with serving(scenario_env(tmp_path, "h100x8")) as server:
        status, headers, text = server.get(
            "/metrics", {"Accept": "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"})
    assert status == 200
    assert headers["Content-Type"] == \
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    assert text.endswith("# EOF\n")
    # prometheus_client's OpenMetrics parser is strict: it rejects a counter
    # sample without _total, a missing EOF, a bad escape.
    families = {f.name: f for f in openmetrics_parser.text_string_to_metric_families(text)}
    assert families["gpukit_monitor_readings"].type == "counter"
    assert families["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"].type == "unknown"
    names = {s.name for f in families.values() for s in f.samples}
    assert "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" in names  # the name dashboards query
    assert "gpukit_monitor_readings_total" in names


def test_promtool_accepts_the_metrics(tmp_path):
    with serving(scenario_env(tmp_path, "mig")) as server:
        _, _, text = server.get("/metrics")
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                            text=True, timeout=60)
    problems = (result.stdout + result.stderr).strip().splitlines()
    # It parses (exit 1 and "error while linting" would say it did not); the
    # only findings are dcgm-exporter's own label names (modelName, UUID),
    # which dashboards need as they are.
    assert result.returncode in (0, 3), problems
    for line in problems:
        assert line.endswith("label names should be written in 'snake_case' not 'camelCase'"), line


def test_unsupported_fields_are_absent_and_lost_gpus_are_down(tmp_path):
    with serving(scenario_env(tmp_path, "notsupported")) as server:
        found = samples(server.get("/metrics")[2])
    for name in ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_FAN_SPEED", "DCGM_FI_DEV_POWER_USAGE",
                 "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_SM_CLOCK"):
        assert name not in found
    assert by_gpu(found, "DCGM_FI_DEV_FB_TOTAL")  # what the vGPU does give is there
    process = found["gpukit_process_gpu_memory_bytes"] if \
        "gpukit_process_gpu_memory_bytes" in found else []
    assert process == []  # its one process reports no memory: no sample

    with serving(scenario_env(tmp_path, "lost")) as server:
        found = samples(server.get("/metrics")[2])
    up = {int(l["gpu"]): (v, l["state"], l["error"]) for l, v in found["gpukit_gpu_up"]}
    assert up[0][:2] == (1, "ok") and up[2][:2] == (1, "ok")
    assert up[1][:2] == (0, "lost") and "lost" in up[1][2]
    assert up[3][:2] == (0, "error")
    assert set(by_gpu(found, "DCGM_FI_DEV_GPU_UTIL")) == {0, 2}


def test_unreadable_leases_are_unknown_not_zero(tmp_path):
    # A lease directory gpukit cannot trust is no leases known, not none:
    # no sample for the counts, and the readable flag 0
    (tmp_path / "not-a-dir").write_text("")
    env = dict(scenario_env(tmp_path, "h100x8"), GPUKIT_LEASE_DIR=str(tmp_path / "not-a-dir"))
    with serving(env) as server:
        found = samples(server.get("/metrics")[2])
    assert "gpukit_leases" not in found and "gpukit_waiting_jobs" not in found
    assert found["gpukit_monitor_leases_readable"] == [({}, 0)]
    assert found["gpukit_gpus"] == [({}, 8)]


def test_mig_instances_carry_dcgm_labels(tmp_path):
    with serving(scenario_env(tmp_path, "mig")) as server:
        found = samples(server.get("/metrics")[2])
    migs = [(l, v) for l, v in found["DCGM_FI_DEV_FB_USED"] if "GPU_I_ID" in l]
    _, gpus = parse_scenario("mig")
    expected = {(m["name"].split("MIG ")[1], m["gi"], int(m["mem_used"]))
                for m in gpus[0]["migs"]}
    assert {(l["GPU_I_PROFILE"], l["GPU_I_ID"], v) for l, v in migs} == expected
    assert all(l["UUID"] == gpus[0]["uuid"] and l["gpu"] == "0" for l, _ in migs)


def test_without_a_gpu_it_serves_why(tmp_path):
    with serving(base_env(tmp_path)) as server:
        found = samples(server.get("/metrics")[2])
        document = json.loads(server.get("/api/v1/gpus")[2])
    assert found["gpukit_gpus"] == [({}, 0)]
    assert not any(name.startswith("DCGM_") for name in found)
    assert document["gpus"] == [] and "no NVIDIA driver" in document["diagnosis"]


def test_gpus_document_is_ls_json_with_leases(tmp_path):
    env = scenario_env(tmp_path, "h100x8")
    listed = json.loads(run(["ls", "--json"], env).stdout)
    with serving(env) as server:
        status, headers, body = server.get("/api/v1/gpus")
    assert status == 200 and headers["Content-Type"] == "application/json"
    document = json.loads(body)
    for key in ("hostname", "driver_version", "cuda_driver_version", "source"):
        assert document[key] == listed[key]
    assert len(document["gpus"]) == 8
    for served, ls in zip(document["gpus"], listed["gpus"]):
        for process in served["processes"]:
            assert process.pop("lease") is None
            for key in ("jupyter_kernel", "jupyter_kernel_id", "notebook"):
                assert process.pop(key) is None
        assert served == ls
    assert document["leases"] == [] and document["waiting"] == []
    assert document["reading"]["number"] >= 1


def read_events(server, count, timeout=20):
    """The first `count` server-sent events of /api/v1/events as (id, data)."""
    host, port = server.url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
        buffer, events = b"", []
        deadline = time.monotonic() + timeout
        while len(events) < count and time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            buffer += chunk
            for match in re.finditer(rb"id: (\d+)\ndata: (\{.*?\})\n\n", buffer, re.S):
                events.append((int(match.group(1)), json.loads(match.group(2))))
            buffer = buffer[buffer.rfind(b"\n\n") + 2:] if events else buffer
        head = b""
    assert len(events) >= count, events
    return events[:count]


def test_events_stream_each_reading_and_follow_the_gpus(tmp_path):
    scenario = tmp_path / "live.scn"
    text = (SCENARIOS / "laptop.scn").read_text()
    scenario.write_text(text)
    env = scenario_env(tmp_path, str(scenario))
    env["FAKE_NVML_RELOAD"] = "1"
    with serving(env, "--interval", "0.2") as server:
        (first, doc1), (second, doc2) = read_events(server, 2)
        assert second > first
        assert doc1["gpus"][0]["name"] == "NVIDIA GeForce RTX 4050 Laptop GPU"
        old = doc2["gpus"][0]["temperature.gpu"]
        # The GPU heats up, then falls off the bus: the next readings say so.
        scenario.write_text(re.sub(r"temp=\d+", "temp=91", text))
        os.utime(scenario, (time.time() + 5, time.time() + 5))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            found = samples(server.get("/metrics")[2])
            if by_gpu(found, "DCGM_FI_DEV_GPU_TEMP") == {0: 91}:
                break
        assert by_gpu(found, "DCGM_FI_DEV_GPU_TEMP") == {0: 91} != {0: old}
        scenario.write_text(text.replace("gpu name=", "gpu error=15 name=", 1))
        os.utime(scenario, (time.time() + 10, time.time() + 10))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            document = json.loads(server.get("/api/v1/gpus")[2])
            if document["gpus"][0]["state"] == "lost":
                break
        assert document["gpus"][0]["state"] == "lost"
        history = json.loads(server.get("/api/v1/history")[2])
        assert history["interval"] == 0.2
        points = history["gpus"][0]["points"]
        assert len(points) >= 3
        assert [p[0] for p in points] == sorted(p[0] for p in points)
        assert 91 in [p[5] for p in points]
        assert points[-1][1:] == [None] * 5  # lost: nothing known


def sleeper(env, *args):
    return subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def test_leases_waiting_line_and_process_owners(tmp_path):
    """A job holding GPU 0 under gpukit run, with a Jupyter-kernel-like child
    that the (fake) driver lists on that GPU; another job waiting in line."""
    connection = tmp_path / "kernel-4f5e6d.json"
    scenario = tmp_path / "one.scn"
    env = scenario_env(tmp_path, str(scenario))
    laptop = (SCENARIOS / "laptop.scn").read_text()
    laptop = "\n".join(line for line in laptop.splitlines() if not line.startswith("proc "))
    scenario.write_text(laptop + "\n")
    kernel_env = dict(env, GPUKIT_KERNEL="python3-gpu", JPY_SESSION_NAME="/home/ann/fit.ipynb")
    holder = sleeper(kernel_env, str(GPUKIT), "run", "--gpus", "0", "--", sys.executable, "-c",
                     "import time; time.sleep(120)", "ipykernel_launcher", "-f", str(connection))
    waiter = None
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            leases = json.loads(run(["leases", "--json"], env).stdout)
            if leases:
                break
            time.sleep(0.05)
        assert leases and leases[0]["state"] == "holding"
        # the Python child of gpukit run (it execs, so the same pid)
        child = holder.pid
        scenario.write_text(laptop + f"\nproc type=compute pid={child} mem=1234\n")
        waiter = subprocess.Popen([str(GPUKIT), "run", "--gpus", "0", "--wait", "--", "true"],
                                  env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=open(tmp_path / "waiter.log", "w"))
        with serving(env, "--interval", "0.2") as server:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                found = samples(server.get("/metrics")[2])
                if found.get("gpukit_waiting_jobs") == [({}, 1)]:
                    break
                time.sleep(0.05)
            document = json.loads(server.get("/api/v1/gpus")[2])
    finally:
        for process in (waiter, holder):
            if process:
                process.terminate()
                process.wait(timeout=10)
    assert found["gpukit_leases"] == [({}, 1)]
    assert found["gpukit_waiting_jobs"] == [({}, 1)], (waiter.returncode,
                                                       (tmp_path / "waiter.log").read_text())
    (labels, since), = found["gpukit_lease_start_time_seconds"]
    assert labels["gpu"] == "0" and labels["pid"] == str(holder.pid)
    assert labels["lease"] == leases[0]["file"]
    assert abs(since - leases[0]["since_epoch"]) < 1e-3
    (wait_labels, waited), = found["gpukit_waiting_job_wait_seconds"]
    assert wait_labels["position"] == "1" and wait_labels["pid"] == str(waiter.pid)
    assert 0 <= waited < 60
    (process_labels, memory), = found["gpukit_process_gpu_memory_bytes"]
    assert memory == 1234 * MIB
    assert process_labels["lease"] == leases[0]["file"]
    assert process_labels["kernel"] == "python3-gpu"
    assert process_labels["notebook"] == "/home/ann/fit.ipynb"
    assert "ipykernel_launcher" in process_labels["command"]
    process, = document["gpus"][0]["processes"]
    assert process["lease"] == leases[0]["file"]
    assert process["jupyter_kernel_id"] == "4f5e6d"
    assert document["leases"][0]["pid"] == holder.pid
    assert document["waiting"][0]["pid"] == waiter.pid


def raw_request(server, data, timeout=10):
    """Sends raw bytes and returns what came back before the server closed
    or went quiet."""
    host, port = server.url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        reply = b""
        try:
            while chunk := sock.recv(65536):
                reply += chunk
        except (socket.timeout, ConnectionResetError):
            pass
    return reply


def test_malformed_requests_are_refused_and_it_carries_on(tmp_path):
    with serving(scenario_env(tmp_path, "laptop")) as server:
        assert server.get("/no/such/page")[0] == 404
        assert server.get("/../../etc/passwd")[0] == 404
        # A decoded NUL does not end the path: /metrics%00junk is not /metrics.
        for path in (b"/%00", b"/metrics%00junk", b"/index.html%00.png"):
            reply = raw_request(server, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            assert reply.startswith(b"HTTP/1.1 404"), (path, reply[:100])
        status, headers, _ = server.get("/metrics", {"X-Method-Override": "x"})
        assert status == 200
        for method in (b"POST", b"PUT", b"DELETE"):
            reply = raw_request(server, method + b" /metrics HTTP/1.1\r\nHost: x\r\n"
                                b"Content-Length: 0\r\n\r\n")
            assert reply.startswith(b"HTTP/1.1 405"), reply[:100]
            assert b"Allow: GET, HEAD" in reply
        reply = raw_request(server, b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                            b"\r\nhello")
        assert reply.startswith(b"HTTP/1.1 413"), reply[:100]
        reply = raw_request(server, b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " +
                            b"a" * 100000 + b"\r\n\r\n")
        assert reply == b"" or reply.split(b" ")[1] in (b"413", b"431"), reply[:100]
        for garbage in (b"\x00\xff\xfe garbage\r\n\r\n", b"GET\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                        b"\r\n" * 1000, os.urandom(4096)):
            reply = raw_request(server, garbage)
            assert not reply.startswith(b"HTTP/1.1 200"), (garbage[:20], reply[:100])
        assert server.get("/metrics")[0] == 200
        status, headers, body = server.get("/")
        assert status == 200 and headers["Content-Type"].startswith("text/html")


def test_many_clients_and_a_client_that_never_reads(tmp_path):
    with serving(scenario_env(tmp_path, "h100x8"), "--interval", "0.2") as server:
        host, port = server.url.split("//")[1].split(":")
        # Clients that stall: one never reads its event stream, one never
        # finishes its request.
        stalled = socket.create_connection((host, int(port)))
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
        half = socket.create_connection((host, int(port)))
        half.sendall(b"GET /metrics HTTP/1.1\r\nHo")
        results = []

        def client():
            try:
                results.append(server.get("/metrics", timeout=60)[0])
            except OSError as error:
                results.append(error)

        threads = [threading.Thread(target=client) for _ in range(200)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert results == [200] * 200
        assert server.get("/api/v1/gpus")[0] == 200
        # It still stops promptly with both stalled clients connected.
        started = time.monotonic()
        code, err = server.stop(timeout=30)
        assert code == 0, err
        assert time.monotonic() - started < 20
        stalled.close()
        half.close()


def test_bad_options(tmp_path):
    env = base_env(tmp_path)
    for args, text in ((["--listen", "127.0.0.1:99999"], "port"),
                       (["--listen", ""], "port"),
                       (["--listen", "127.0.0.1:"], "port"),
                       (["--listen", "[::1"], "IPv6"),
                       (["--interval", "0"], "--interval"),
                       (["--max-connections", "0"], "--max-connections"),
                       (["extra"], "unexpected")):
        result = run(["serve", *args], env)
        assert result.returncode == EXIT_USAGE, (args, result.stderr)
        assert text in result.stderr
    result = run(["serve", "--listen", "no-such-host.invalid:9400"], env)
    assert result.returncode == 9 and "cannot resolve" in result.stderr
    # A port that is taken: named, with the fix.
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    result = run(["serve", "--listen", f"127.0.0.1:{taken.getsockname()[1]}"], env)
    taken.close()
    assert result.returncode == 9
    assert "cannot listen on 127.0.0.1:" in result.stderr and "--listen" in result.stderr
    help_text = run(["serve", "--help"], env)
    assert help_text.returncode == 0 and "/metrics" in help_text.stdout


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_real_prometheus_scrapes_it(tmp_path):
    """Debian's Prometheus scrapes gpukit serve on loopback (negotiating
    OpenMetrics, as it does by default); PromQL gives back the fake's values
    under dcgm-exporter's names."""
    _, gpus = parse_scenario("h100x8")
    with serving(scenario_env(tmp_path, "h100x8"), "--interval", "0.5") as server:
        target = server.url.split("//")[1]
        port = free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1s\n"
                          "scrape_configs:\n  - job_name: gpukit\n"
                          f"    static_configs:\n      - targets: ['{target}']\n")
        prometheus = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(tmp_path / "prometheus.log", "w"))
        api = f"http://127.0.0.1:{port}/api/v1/query?query="
        from serve_helpers import OPENER

        def query(expression):
            from urllib.parse import quote
            try:
                with OPENER.open(api + quote(expression), timeout=5) as response:
                    return json.loads(response.read())["data"]["result"]
            except OSError:
                return None

        try:
            deadline = time.monotonic() + 90
            utilization = None
            while time.monotonic() < deadline:
                utilization = query("DCGM_FI_DEV_GPU_UTIL")
                if utilization and len(utilization) == 8:
                    break
                time.sleep(0.2)
            assert utilization and len(utilization) == 8, (tmp_path / "prometheus.log").read_text()
            assert {int(r["metric"]["gpu"]): float(r["value"][1]) for r in utilization} == \
                {i: float(g["util_gpu"]) for i, g in enumerate(gpus)}
            assert {r["metric"]["UUID"] for r in utilization} == {g["uuid"] for g in gpus}
            used = query('sum(DCGM_FI_DEV_FB_USED{modelName="NVIDIA H100 80GB HBM3"})')
            assert float(used[0]["value"][1]) == sum(int(g["mem_used"]) for g in gpus)
            energy = query("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")
            assert len(energy) == 7
            up = query('up{job="gpukit"}')
            assert float(up[0]["value"][1]) == 1
            processes = query("count(gpukit_process_gpu_memory_bytes)")
            assert float(processes[0]["value"][1]) == sum(len(g["procs"]) for g in gpus)
        finally:
            prometheus.terminate()
            prometheus.wait(timeout=30)


def test_connections_are_bounded(tmp_path):
    """--max-connections: the clients beyond it are turned away, and served
    again once the others leave."""
    with serving(scenario_env(tmp_path, "laptop"), "--max-connections", "2") as server:
        host, port = server.url.split("//")[1].split(":")
        held = [socket.create_connection((host, int(port))) for _ in range(2)]
        for sock in held:
            sock.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(64).startswith(b"HTTP/1.1 200")
        with pytest.raises(OSError):
            server.get("/metrics", timeout=3)
        for sock in held:
            sock.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                assert server.get("/metrics", timeout=3)[0] == 200
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError("not served again after the others left")


def test_every_address_means_ipv4_and_ipv6(tmp_path):
    """--listen :PORT answers on both families (one dual-stack socket)."""
    from serve_helpers import OPENER, wait_for_line
    process = subprocess.Popen([str(GPUKIT), "serve", "--listen", ":0"],
                               env=scenario_env(tmp_path, "laptop"), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        line = wait_for_line(process.stderr, 30)
        port = int(line.split("]:")[1].split("/")[0])
        hosts = ["127.0.0.1"]
        try:  # IPv6 too, where this machine's loopback has it
            with socket.socket(socket.AF_INET6) as probe:
                probe.bind(("::1", 0))
            hosts.append("[::1]")
        except OSError:
            pass
        for host in hosts:
            with OPENER.open(f"http://{host}:{port}/metrics", timeout=10) as response:
                assert response.status == 200, host
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_families_stay_together_and_leases_being_made_are_left_alone(tmp_path):
    """Each family's samples form one group (MIG instances beside their GPU),
    and a lease file that a gpukit is still creating (empty, not yet locked)
    survives the monitor's readings: only readers holding the directory's
    lock may clean up."""
    leases = tmp_path / "leases"
    leases.mkdir(mode=0o1777)
    leases.chmod(0o1777)
    being_made = leases / "lease-4242-deadbeef"
    being_made.touch()
    with serving(scenario_env(tmp_path, "mig"), "--interval", "0.1") as server:
        for _ in range(3):
            text = server.get("/metrics")[2]
            time.sleep(0.15)
    assert being_made.exists()
    seen, current = [], None
    for line in text.splitlines():
        name = line.split()[2] if line.startswith("# TYPE") else \
            None if line.startswith("#") else line.split("{")[0].split(" ")[0]
        if name and name != current:
            assert name not in seen, f"{name} split in two"
            seen.append(name)
            current = name
    assert text.count("GPU_I_PROFILE") == 9  # 3 instances x used, free, total


def test_top_once_is_valid_utf8_at_any_width(tmp_path):
    env = scenario_env(tmp_path, "mig")
    env["COLUMNS"] = "1000"
    result = subprocess.run([str(GPUKIT), "top", "--once"], env=env, capture_output=True,
                            timeout=60)
    assert result.returncode == 0
    text = result.stdout.decode("utf-8")  # raises on a character cut in two
    assert "MiB" in text.splitlines()[2]
