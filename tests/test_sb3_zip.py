"""Stable-Baselines3 ``.zip`` models play as agents and export, with nothing unpickled (issue 19)."""

from __future__ import annotations

import base64
import io
import json
import pickle
import zipfile

import numpy as np
import pytest
import torch

pytest.importorskip("sb3_contrib")
import gymnasium  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.logger import Logger  # noqa: E402

import tt_env  # noqa: E402,F401
from models.checkpoint import CheckpointError, load_checkpoint, read_metadata  # noqa: E402
from models.sb3_zip import export, main as export_main, read_sb3_zip  # noqa: E402
from training import evaluate  # noqa: E402
from tt_env.agents import make_agent  # noqa: E402
from tt_env.engine.rules import Rules  # noqa: E402

from test_models import sample_positions  # noqa: E402


def train_and_save(path, num_players=2, activation=torch.nn.Tanh, pi=(16, 16), vf=(16, 16)):
    env = gymnasium.make("tt_env/ThreeThirteen-v0", opponents=["random-v0"] * (num_players - 1),
                         num_players=num_players, rounds=[1])
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=16, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": {"pi": list(pi), "vf": list(vf)}, "activation_fn": activation})
    model.set_logger(Logger(None, []))  # SB3's default logger makes a folder in /tmp at every learn()
    model.learn(64)
    model.save(path)
    return model


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    path = tmp_path_factory.mktemp("sb3") / "model.zip"
    return train_and_save(path), path


def test_a_trained_zip_is_evaluated_by_the_cli(trained, tmp_path, capsys):
    _, path = trained
    report = evaluate.main([str(path), "random-v0", "--games", "2", "--rounds", "1", "--quiet",
                            "--json", str(tmp_path / "e.json")])
    assert report["games_played"] == 4 and report["agents"][0]["spec"] == str(path)
    assert json.loads((tmp_path / "e.json").read_text())["agents"][0]["name"] == str(path)


def test_the_agent_plays_sb3s_own_masked_argmax(trained):
    model, path = trained
    agent = make_agent(str(path), Rules())
    obs, masks = sample_positions(2, 30)
    rng = np.random.default_rng(0)
    ours = [agent.act(o, m, rng) for o, m in zip(obs, masks, strict=True)]
    theirs = [int(model.predict(o, action_masks=m.astype(bool), deterministic=True)[0]) for o, m in zip(obs, masks, strict=True)]
    assert ours == theirs
    assert all(masks[i][a] for i, a in enumerate(ours))


def test_export_writes_our_checkpoint_with_the_same_policy(trained, tmp_path, capsys):
    model, path = trained
    out = export_main([str(path), str(tmp_path / "m.pt")])
    meta = read_metadata(out)
    assert meta["network"] == {"class": "MLPPolicy", "kwargs": {"num_players": 2, "hidden_sizes": [16, 16]}}
    assert meta["training_steps"] == model.num_timesteps and "rules_assumed" in meta["extra"]
    net, _ = load_checkpoint(out, num_players=2)
    direct, _ = read_sb3_zip(path)
    assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), direct.state_dict().values(), strict=True))
    with pytest.raises(SystemExit) as info:
        export_main([str(path), str(out)])
    assert info.value.code == 2 and "give --overwrite" in capsys.readouterr().err
    assert export_main([str(path), str(out), "--overwrite"]) == out  # (the command line's own check lets it)
    _, direct_meta = read_sb3_zip(path)
    assert direct_meta["network"]["class"] == "MLPPolicy" and direct_meta["num_actions"] == 54


def test_export_names_the_file_that_exists_and_keeps_a_json_that_is_not_a_sidecar(trained, tmp_path, capsys):
    _, path = trained
    out, side = tmp_path / "m.pt", tmp_path / "m.json"
    side.write_text('{"game": "a record, not a checkpoint"}')
    for extra in ([], ["--overwrite"]):
        with pytest.raises(SystemExit) as info:
            export_main([str(path), str(out), *extra])
        err = capsys.readouterr().err
        assert info.value.code == 2 and f"'{side}', the sidecar m.pt would have, exists and is not a checkpoint " \
                                         f"sidecar: it is not replaced, even with --overwrite" in err
        assert side.read_text() == '{"game": "a record, not a checkpoint"}' and not out.exists()
    side.unlink()
    export(path, out)
    side.unlink()  # a .pt alone: the refusal names it, not its sidecar
    with pytest.raises(CheckpointError, match=rf"^'{out}' exists: give --overwrite to replace the checkpoint$"):
        export(path, out)
    export(path, out, overwrite=True)  # no sidecar: nothing but the checkpoint is replaced
    with pytest.raises(CheckpointError, match=rf"^'{out}' and '{side}' exist: give --overwrite"):
        export(path, out)
    assert export(path, out, overwrite=True) == out and read_metadata(out)["num_players"] == 2


def test_player_count_and_scoring_are_checked(trained):
    _, path = trained
    with pytest.raises(ValueError, match="player count mismatch"):
        make_agent(str(path), Rules(num_players=3))
    with pytest.raises(ValueError, match="rule mismatch"):
        make_agent(str(path), Rules(aces="high_or_low"))
    make_agent(str(path), Rules(aces="high_or_low"), allow_rule_mismatch=True)


def test_three_players_are_read_from_the_observation_length(tmp_path):
    train_and_save(tmp_path / "m3.zip", num_players=3)
    _, meta = read_sb3_zip(tmp_path / "m3.zip")
    assert meta["num_players"] == 3


@pytest.mark.parametrize("kwargs,message", [
    ({"activation": torch.nn.ReLU}, "only Tanh"),
    ({"pi": (16, 16), "vf": (8,)}, "differ in size"),
])
def test_policies_our_network_cannot_be_are_refused(tmp_path, kwargs, message):
    train_and_save(tmp_path / "m.zip", **kwargs)
    with pytest.raises(CheckpointError, match=message):
        read_sb3_zip(tmp_path / "m.zip")


def rewrite(src, dst, replace: dict[str, bytes | None]) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            if item.filename in replace:
                if replace[item.filename] is not None:
                    zout.writestr(item.filename, replace[item.filename])
            else:
                zout.writestr(item, zin.read(item.filename))


class Trap:
    """Unpickling this creates a file: the proof that something was unpickled."""

    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (open, (self.target, "w"))


def test_nothing_in_the_zip_is_unpickled(trained, tmp_path):
    _, path = trained
    trap = tmp_path / "unpickled"
    payload = base64.b64encode(pickle.dumps(Trap(str(trap)))).decode()
    with zipfile.ZipFile(path) as z:
        data = json.loads(z.read("data"))
    for key in ("policy_kwargs", "observation_space", "policy_class"):
        data[key] = {**(data[key] if isinstance(data[key], dict) else {}), ":serialized:": payload}
    safe = tmp_path / "data_trap.zip"
    rewrite(path, safe, {"data": json.dumps(data).encode()})
    read_sb3_zip(safe)  # loads: the pickles in data are never decoded
    buf = io.BytesIO()
    torch.save({"x": Trap(str(trap))}, buf)  # a policy.pth that runs code when unpickled
    hostile = tmp_path / "weights_trap.zip"
    rewrite(path, hostile, {"policy.pth": buf.getvalue()})
    with pytest.raises(CheckpointError, match="not plain tensor data"):
        read_sb3_zip(hostile)
    assert not trap.exists(), "something in the zip was unpickled"


def test_damaged_zips_are_refused_in_one_line(trained, tmp_path):
    _, path = trained
    cases = {"no_policy.zip": ({"policy.pth": None}, "has no 'policy.pth'"),
             "no_data.zip": ({"data": None}, "has no 'data'"),
             "bad_data.zip": ({"data": b"[" * 100000}, "nested too deeply"),
             "list_data.zip": ({"data": b"[1]"}, "its 'data' is not a JSON object"),
             "extra_weight.zip": ({"policy.pth": None}, "")}
    for name, (replace, message) in cases.items():
        if name == "extra_weight.zip":
            state = torch.load(io.BytesIO(zipfile.ZipFile(path).read("policy.pth")), weights_only=True)
            state["features_extractor.linear.weight"] = torch.zeros(2, 2)
            buf = io.BytesIO()
            torch.save(state, buf)
            replace, message = {"policy.pth": buf.getvalue()}, "a feature extractor with weights"
        rewrite(path, tmp_path / name, replace)
        with pytest.raises(CheckpointError, match=message) as info:
            read_sb3_zip(tmp_path / name)
        assert "\n" not in str(info.value)
    (tmp_path / "not.zip").write_bytes(b"PK but not really")
    with pytest.raises(CheckpointError, match="is not a readable zip file"):
        read_sb3_zip(tmp_path / "not.zip")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        make_agent(str(tmp_path / "missing.zip"), Rules())


def test_members_are_read_with_a_size_limit(trained, tmp_path, monkeypatch):
    import models.sb3_zip as sb3_zip

    _, path = trained
    monkeypatch.setattr(sb3_zip, "MAX_DATA_BYTES", 100)
    with pytest.raises(CheckpointError, match=r"its 'data' is \d+ bytes, over the 100 allowed"):
        read_sb3_zip(path)


def test_the_leaderboard_reads_a_zips_player_count(trained):
    from training.leaderboard import players_of

    assert players_of(str(trained[1])) == 2
