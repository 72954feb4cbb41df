"""The environment-only install (no torch, no rich): tools say what is missing before any work.

Each case runs in a fresh interpreter where the optional module is blocked
(``sys.modules[name] = None`` makes ``import name`` raise ``ModuleNotFoundError``, as on a
machine without it).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tt_env.optional import MissingDependencyError, install_hint, missing_dependency, require

ROOT = Path(__file__).resolve().parents[1]


def _run_without(blocked: list[str], code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run ``code`` in a new interpreter (cwd ``tmp_path``) in which the modules ``blocked`` are missing."""
    shim = "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in blocked)
    return subprocess.run([sys.executable, "-c", shim + textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)


def test_a_shipped_agent_without_torch_says_torch_is_needed(tmp_path):
    proc = _run_without(["torch"], """
        import json
        from tt_env.agents import agent_names, list_agents, make_agent
        from tt_env.optional import MissingDependencyError
        out = {"names": agent_names(), "buildable": list_agents(), "torch_loaded": "torch" in sys.modules and
               sys.modules["torch"] is not None}
        for spec in ("ppo-2p-v1", "ppo-4p-v0", "models/checkpoints/ppo-2p-v0.pt", "nobody-v0"):
            try:
                make_agent(spec)
            except ValueError as exc:
                out[spec] = [type(exc).__name__, isinstance(exc, ImportError), str(exc)]
        print(json.dumps(out))
    """, ROOT)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert {"ppo-2p-v0", "ppo-2p-v1", "ppo-3p-v0", "ppo-4p-v0", "expert-v0"} <= set(out["names"])
    assert "ppo-2p-v1" not in out["buildable"] and "expert-v0" in out["buildable"]
    for spec in ("ppo-2p-v1", "ppo-4p-v0", "models/checkpoints/ppo-2p-v0.pt"):
        kind, is_import_error, message = out[spec]
        assert kind == "MissingDependencyError" and is_import_error
        assert "needs torch, which is not installed: pip install 'three-thirteen[train]'" in message
        assert "unknown agent" not in message
    assert out["nobody-v0"][0] == "ValueError" and "unknown agent 'nobody-v0'" in out["nobody-v0"][2]
    assert "ppo-2p-v1" in out["nobody-v0"][2], "the list of names shows the shipped agents too"


def test_listing_the_shipped_agents_imports_no_torch(tmp_path):
    proc = subprocess.run([sys.executable, "-c", "import sys; import models.shipped; from tt_env.agents import "
                           "agent_names; agent_names(); import tt_env.ui.play; print('torch' in sys.modules)"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_evaluate_without_rich_refuses_before_the_first_game(tmp_path):
    proc = _run_without(["rich"], """
        from training import evaluate
        def no_games(*args, **kwargs):
            raise SystemExit("a game was started")
        evaluate.run_deals = no_games
        evaluate.main(["greedy-v0", "random-v0", "--games", "2000", "--json", "out.json"])
    """, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == ("python -m training.evaluate: error: the results table needs rich, which is not "
                                   "installed: pip install 'three-thirteen[train]'")
    assert not (tmp_path / "out.json").exists()


def test_evaluate_plot_without_matplotlib_refuses_before_the_first_game(tmp_path):
    proc = _run_without(["matplotlib"], """
        from training import evaluate
        evaluate.run_deals = lambda *a, **k: (_ for _ in ()).throw(SystemExit("a game was started"))
        evaluate.main(["greedy-v0", "random-v0", "--plot", "scores.png"])
    """, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "--plot needs matplotlib, which is not installed" in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_evaluate_of_a_shipped_agent_without_torch_is_one_line(tmp_path):
    proc = _run_without(["torch"], """
        from training import evaluate
        evaluate.main(["ppo-2p-v1", "greedy-v0", "--games", "2000", "--quiet"])
    """, tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("python -m training.evaluate: error: agent 'ppo-2p-v1' (a trained network) needs "
                                   "torch, which is not installed: pip install 'three-thirteen[train]'")


@pytest.mark.parametrize("module, argv", [("tt_env.ui.play", []), ("tt_env.ui.replay", ["game.json"])])
def test_the_terminal_tools_without_rich_are_one_line(module, argv, tmp_path):
    (tmp_path / "game.json").write_text("{}")
    proc = _run_without(["rich"], f"""
        import {module} as tool
        sys.exit(tool.main({argv!r}))
    """, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().endswith("error: playing or replaying in the terminal needs rich, which is not "
                                        "installed: pip install 'three-thirteen[render]'")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_the_console_command_without_torch_names_it(tmp_path):
    proc = _run_without(["torch"], """
        from tt_env.cli import main
        sys.exit(main(["train", "selfplay", "--config", "main_job"]))
    """, tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("three-thirteen train selfplay: error: this command needs torch, which is not "
                                   "installed: pip install 'three-thirteen[train]'")


def test_require_and_the_error_type():
    require(["json"], "x")
    with pytest.raises(MissingDependencyError, match=r"^the thing needs no_such_module_xyz, which is not installed: "
                                                     r"pip install no_such_module_xyz$") as info:
        require(["json", "no_such_module_xyz"], "the thing")
    assert isinstance(info.value, ImportError) and isinstance(info.value, ValueError)
    assert info.value.name == "no_such_module_xyz"
    assert install_hint("yaml") == "pip install 'three-thirteen[train]'"
    assert install_hint("PIL.Image", extra="render") == "pip install 'three-thirteen[render]'"
    assert missing_dependency(ModuleNotFoundError("x", name="ray"), "it") is not None
    assert missing_dependency(ModuleNotFoundError("x", name="tt_env.nothing"), "it") is None  # a bug, not an extra
    assert missing_dependency(ImportError("cannot import name 'x'", name="torch"), "it") is None
