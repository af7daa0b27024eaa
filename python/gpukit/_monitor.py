"""gpukit.monitor(): the live view of every GPU inside a notebook.

The readings come from the sampler of `gpukit top` and `gpukit serve` (the
C Monitor); the drawing is the dashboard of `gpukit serve` (its script and
style are built into the extension), fed each reading through a display
that a thread updates while the notebook runs its other cells. No JupyterLab
extension is involved. Outside a notebook it prints `gpukit top --once`."""
import json
import re
import shutil
import sys
import threading
import uuid

from . import _gpukit

__all__ = ["Monitor", "monitor"]

# The gpu label of a Prometheus series line (a sample, not a comment).
_GPU_LABEL = re.compile(r'^[^#].*?[{,]gpu="(\d+)"')


def _in_notebook():
    """Whether this runs in a Jupyter kernel (which can show HTML)."""
    shell = sys.modules.get("IPython")
    shell = shell.get_ipython() if shell and hasattr(shell, "get_ipython") else None
    return shell is not None and getattr(shell, "kernel", None) is not None


class Monitor:
    """A live view of the GPUs, made by :func:`gpukit.monitor`.

    ``stop()`` ends it (the view keeps its last reading); so does the end of
    a ``with`` block, and the end of the kernel. ``text()``, ``json()`` and
    ``metrics()`` give the latest reading as ``gpukit top --once``, the
    ``gpukit serve`` document and Prometheus metrics.
    """

    def __init__(self, interval=1.0, gpus=None, history=120):
        self._sampler = _gpukit._Sampler(interval, history)
        self._gpus = None if gpus is None else sorted({int(g) for g in gpus})
        if self._gpus is not None and not self._gpus:
            raise ValueError("gpus: name at least one GPU index, or None for all")
        if self._gpus is not None and not 0 <= self._gpus[0] <= self._gpus[-1] < 64:
            raise ValueError(f"gpus: GPU indices are 0 to 63 (nvidia-smi's), not {self._gpus}")
        self._id = "gpukit-monitor-" + uuid.uuid4().hex[:12]
        self._handle = None
        self._thread = None
        self._stopped = False
        self._sampler.read()  # a first reading, so that every method answers

    # --- what a reading says ---

    def json(self):
        """The latest reading as a dict: the ``gpukit ls --json`` document
        with leases (what ``gpukit serve`` gives at /api/v1/gpus)."""
        return self._only_chosen(json.loads(self._sampler.json()))

    def text(self, width=None):
        """The latest reading as ``gpukit top --once`` prints it."""
        if width is None:
            width = shutil.get_terminal_size((100, 24)).columns
        mask = sum(1 << g for g in self._gpus) if self._gpus is not None else 0
        return self._sampler.text(width=width, gpu_mask=mask)

    def metrics(self, openmetrics=False):
        """The latest reading as Prometheus metrics (``gpukit serve``'s), of
        the chosen GPUs (series of the others, by their ``gpu`` label, left
        out)."""
        text = self._sampler.metrics(openmetrics=openmetrics)
        if self._gpus is None:
            return text
        chosen = {str(g) for g in self._gpus}
        return "".join(line for line in text.splitlines(keepends=True)
                       if (m := _GPU_LABEL.search(line)) is None or m.group(1) in chosen)

    @property
    def interval(self):
        """Seconds between readings."""
        return self._sampler.interval

    def _only_chosen(self, document):
        if self._gpus is not None:
            document["gpus"] = [g for g in document["gpus"] if g["index"] in self._gpus]
        return document

    def _html(self, note=""):
        document = self.json()
        history = json.loads(self._sampler.history_json())
        if self._gpus is not None:
            history["gpus"] = [g for g in history["gpus"] if g["index"] in self._gpus]
        if note:
            document["diagnosis"] = ((document.get("diagnosis") or "") + " " + note).strip()
        # "</" inside a script would end it: JSON allows "<\/" for "</".
        data = json.dumps({"document": document, "history": history}).replace("</", "<\\/")
        return (f"<style>{_gpukit._dashboard_file('dashboard.css')}</style>"
                f'<div id="{self._id}" class="gpukit-dashboard"></div>'
                f"<script>{_gpukit._dashboard_file('dashboard.js')}</script>"
                "<script>(function () {"
                f"var data = {data};"
                f"var view = new window.GpukitDashboard(document.getElementById('{self._id}'));"
                "view.prefill(data.history, data.document);"
                "view.update(data.document, false);"
                "})();</script>")

    # --- the live view ---

    def _show(self):
        from IPython.display import HTML, display
        self._sampler.start()
        self._handle = display(HTML(self._html()), display_id=self._id)
        self._thread = threading.Thread(target=self._follow, name="gpukit-monitor", daemon=True)
        self._thread.start()

    def _follow(self):
        from IPython.display import HTML
        seen = 0
        while not self._stopped:
            latest = self._sampler.wait(seen, timeout=5.0)
            if latest == 0 or self._stopped:
                break
            if latest != seen:
                seen = latest
                try:
                    self._handle.update(HTML(self._html()))
                except Exception:  # noqa: BLE001 (the kernel is going away)
                    break

    def stop(self):
        """Stops the readings; the view keeps the last one."""
        if self._stopped:
            return
        self._stopped = True
        self._sampler.stop()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        if self._handle is not None:
            from IPython.display import HTML
            self._handle.update(HTML(self._html("(monitor stopped)")))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def _ipython_display_(self):
        """Already on show (gpukit.monitor() displayed it): nothing more."""

    def __repr__(self):
        state = ("stopped" if self._stopped else "live" if self._thread is not None
                 else "one reading")
        chosen = "all GPUs" if self._gpus is None else f"GPUs {self._gpus}"
        return f"<gpukit.Monitor {chosen}, every {self._sampler.interval:g} s, {state}>"


def monitor(interval=1.0, gpus=None):
    """Shows every GPU live in a notebook cell: utilization, memory, power
    and temperature charts, the processes (with their user, gpukit lease and
    Jupyter kernel), the leases and the waiting line; the same view as
    ``gpukit serve``'s dashboard, updated every ``interval`` seconds while
    the notebook runs its other cells, until ``stop()`` or the kernel ends.

    ``gpus``: the indices (nvidia-smi's) of the GPUs to show; all by default.
    Outside a notebook it prints ``gpukit top --once`` instead.

    Returns the :class:`Monitor`.

    Raises ``ValueError`` for an interval outside 0.05 to 3600 seconds, or
    for ``gpus`` empty or naming an index outside 0 to 63.
    """
    view = Monitor(interval=interval, gpus=gpus)
    if _in_notebook():
        view._show()
    else:
        print(view.text())
        view._stopped = True
    return view


# Public as gpukit.Monitor and gpukit.monitor (help(gpukit) lists them there).
Monitor.__module__ = "gpukit"
monitor.__module__ = "gpukit"
