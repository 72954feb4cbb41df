"""``python -m tt_env.web``: checked arguments (one line, exit 2), and a real start that serves and stops."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

if os.environ.get("CI"):
    import starlette  # noqa: F401  (CI installs the web extra: a missing one must fail, not skip)
else:
    pytest.importorskip("starlette")

from tt_env.web import main  # noqa: E402
from tt_env.web.cli import allowed_hosts, is_loopback  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _exit_code(argv: list[str], capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    return exc.value.code, capsys.readouterr().err


@pytest.mark.parametrize("argv, words", [
    (["--port", "70000"], "70000 is not a port"),
    (["--port", "http"], "'http' is not a port"),
    (["--max-games", "0"], "--max-games"),
    (["--checkpoint", "no/such/file.pt"], "no such file"),
    (["--colour"], "unrecognized arguments"),
])
def test_bad_arguments_exit_2_with_one_line(argv, words, capsys) -> None:
    code, err = _exit_code(argv + ["--no-browser"], capsys)
    errors = [line for line in err.splitlines() if "error:" in line]
    assert code == 2 and len(errors) == 1 and words in errors[0] and err.rstrip().endswith(errors[0])


def test_a_port_in_use_is_refused_before_serving(capsys) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        code, err = _exit_code(["--port", str(taken.getsockname()[1]), "--no-browser"], capsys)
    assert code == 2 and "the port is in use" in err


def test_loopback_names_only_unless_host_says_otherwise() -> None:
    assert allowed_hosts("127.0.0.1") == ["127.0.0.1", "localhost", "[::1]", "::1"]
    assert allowed_hosts("0.0.0.0") == ["*"]
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5") and not is_loopback("example.org")


def test_it_starts_prints_its_address_serves_and_stops_on_ctrl_c() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "tt_env.web", "--port", "0", "--no-browser"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("Three Thirteen is at http://127.0.0.1:"), (line, proc.poll())
        url = line.split()[4]
        seconds = time.monotonic() - start
        with urllib.request.urlopen(url + "api/options", timeout=10) as response:
            options = json.load(response)
        assert "expert-v0" in [a["name"] for a in options["agents"]]
        with urllib.request.urlopen(url, timeout=10) as response:  # / goes to the Play page
            assert response.url.endswith("/play") and "play.js" in response.read().decode()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert seconds < 60, f"the server took {seconds:.1f} s to start"
