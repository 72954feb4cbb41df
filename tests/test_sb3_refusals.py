"""Every refusal of the SB3 ``.zip`` loader, each with its message (issue 25: one-line bugs in the
refusals survived the tests of :mod:`models.sb3_zip`)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

pytest.importorskip("sb3_contrib")
import torch  # noqa: E402

from models.checkpoint import CheckpointError  # noqa: E402
from models.sb3_zip import read_sb3_zip  # noqa: E402
from test_sb3_zip import rewrite, trained  # noqa: E402,F401  (the module's trained model)


def weights_of(path) -> dict:
    return torch.load(io.BytesIO(zipfile.ZipFile(path).read("policy.pth")), weights_only=True)


def with_weights(src, dst, change) -> None:
    state = weights_of(src)
    change(state)
    buf = io.BytesIO()
    torch.save(state, buf)
    rewrite(src, dst, {"policy.pth": buf.getvalue()})


def with_data(src, dst, change) -> None:
    data = json.loads(zipfile.ZipFile(src).read("data"))
    change(data)
    rewrite(src, dst, {"data": json.dumps(data).encode()})


def _drop(key):
    return lambda s: s.pop(key)


def _rename(old, new):
    return lambda s: s.__setitem__(new, s.pop(old))


WEIGHT_CASES = {
    "gap": (lambda s: (_rename("mlp_extractor.policy_net.2.weight", "mlp_extractor.policy_net.4.weight")(s),
                       _rename("mlp_extractor.policy_net.2.bias", "mlp_extractor.policy_net.4.bias")(s)),
            "mlp_extractor.policy_net is not a stack of Linear layers"),
    "no bias": (_drop("mlp_extractor.value_net.0.bias"), "mlp_extractor.value_net.0 is not a Linear layer"),
    "bias shape": (lambda s: s.__setitem__("mlp_extractor.policy_net.0.bias", torch.zeros(3)),
                   "mlp_extractor.policy_net.0 is not a Linear layer"),
    "no chain": (lambda s: s.update({"mlp_extractor.policy_net.2.weight": torch.zeros(16, 15),
                                     "mlp_extractor.value_net.2.weight": torch.zeros(16, 15)}), "do not chain"),
    "action rows": (lambda s: s.update({"action_net.weight": torch.zeros(53, 16), "action_net.bias": torch.zeros(53)}),
                    "action_net does not map 16 features to 54 output"),
    "value rows": (lambda s: s.update({"value_net.weight": torch.zeros(2, 16), "value_net.bias": torch.zeros(2)}),
                   "value_net does not map 16 features to 1 output"),
    "no head": (_drop("action_net.weight"), "its policy has no action_net.weight: not an actor-critic MlpPolicy"),
    "no head bias": (_drop("action_net.bias"), "its policy has no action_net.bias: not an actor-critic MlpPolicy"),
    "no value bias": (_drop("value_net.bias"), "its policy has no value_net.bias"),
    "obs length": (lambda s: s.update({"mlp_extractor.policy_net.0.weight": torch.zeros(16, 100),
                                       "mlp_extractor.value_net.0.weight": torch.zeros(16, 100)}),
                   "observations of length 100"),
    "nan": (lambda s: s["action_net.bias"].__setitem__(0, float("nan")), "non-finite"),
    "not a tensor": (lambda s: s.__setitem__("action_net.bias", [0.0] * 54),
                     r"its 'policy.pth' does not hold a state_dict of tensors: its 'action_net.bias' is of type list"),
    "key not a string": (lambda s: s.__setitem__(5, torch.zeros(1)),
                         r"does not hold a state_dict of tensors: its key 5 \(of type int\) is not a parameter name"),
}


@pytest.mark.parametrize("case", list(WEIGHT_CASES))
def test_weights_our_network_cannot_take_are_refused(trained, tmp_path, case):  # noqa: F811
    change, message = WEIGHT_CASES[case]
    bad = tmp_path / "m.zip"
    with_weights(trained[1], bad, change)
    with pytest.raises(CheckpointError, match=message) as info:
        read_sb3_zip(bad)
    assert "\n" not in str(info.value) and str(bad) in str(info.value)  # (one line, naming the file)


DATA_CASES = {
    "relu": (lambda d: d["policy_kwargs"].__setitem__("activation_fn", "<class 'torch.nn.modules.activation.ReLU'>"),
             "activation <class 'torch.nn.modules.activation.ReLU'>; only Tanh"),
    "shared": (lambda d: d["policy_kwargs"].__setitem__("share_features_extractor", False),
               "share_features_extractor=False is not supported"),
    "policy module": (lambda d: d.__setitem__("policy_class", {"__module__": "my.policies"}),
                      "its policy comes from 'my.policies'"),
}


@pytest.mark.parametrize("case", list(DATA_CASES))
def test_what_the_data_says_is_checked(trained, tmp_path, case):  # noqa: F811
    change, message = DATA_CASES[case]
    bad = tmp_path / "m.zip"

    def ensure(d):
        if not isinstance(d.get("policy_kwargs"), dict):
            d["policy_kwargs"] = {}
        change(d)

    with_data(trained[1], bad, ensure)
    with pytest.raises(CheckpointError, match=message):
        read_sb3_zip(bad)


@pytest.mark.parametrize("steps", [-5, True, "12", None])
def test_a_step_count_that_is_no_count_is_read_as_0(trained, tmp_path, steps):  # noqa: F811
    odd = tmp_path / "m.zip"
    with_data(trained[1], odd, lambda d: d.update(num_timesteps=steps))
    assert read_sb3_zip(odd)[1]["training_steps"] == 0
    with_data(trained[1], odd, lambda d: d.update(num_timesteps=7))
    assert read_sb3_zip(odd)[1]["training_steps"] == 7


def test_the_data_that_is_allowed_loads(trained, tmp_path):  # noqa: F811
    ok = tmp_path / "ok.zip"
    with_data(trained[1], ok, lambda d: d.update(
        policy_kwargs={"activation_fn": "<class 'torch.nn.modules.activation.Tanh'>", "share_features_extractor": True},
        policy_class={"__module__": "stable_baselines3.common.policies"}))
    assert read_sb3_zip(ok)[1]["num_players"] == 2


def test_too_many_members_and_too_large_files_are_refused(trained, tmp_path, monkeypatch):  # noqa: F811
    import models.sb3_zip as sb3_zip

    def with_members(total: int):
        out = tmp_path / f"members{total}.zip"
        with zipfile.ZipFile(trained[1]) as zin, zipfile.ZipFile(out, "w") as zout:
            items = zin.infolist()
            for item in items:
                zout.writestr(item, zin.read(item.filename))
            for i in range(total - len(items)):
                zout.writestr(f"extra{i}", b"")
        return out

    assert read_sb3_zip(with_members(sb3_zip.MAX_MEMBERS))[1]["num_players"] == 2  # the limit itself is allowed
    with pytest.raises(CheckpointError, match=f"has over {sb3_zip.MAX_MEMBERS} files"):
        read_sb3_zip(with_members(sb3_zip.MAX_MEMBERS + 1))
    size = trained[1].stat().st_size
    monkeypatch.setattr(sb3_zip, "MAX_FILE_BYTES", size)
    assert read_sb3_zip(trained[1])[1]["num_players"] == 2
    monkeypatch.setattr(sb3_zip, "MAX_FILE_BYTES", size - 1)
    with pytest.raises(CheckpointError, match=f"is over the {size - 1} bytes allowed"):
        read_sb3_zip(trained[1])
    with pytest.raises(CheckpointError, match="is not a file"):
        read_sb3_zip(tmp_path)


def damaged(src, dst, how: str) -> None:
    """``src`` rewritten with its ``data`` member compressed by ``how`` and then damaged: a stream its
    decompressor refuses (``zlib.error``, ``LZMAError``, ``OSError``), or marked encrypted (``RuntimeError``)."""
    method = {"deflate": zipfile.ZIP_DEFLATED, "lzma": zipfile.ZIP_LZMA, "bzip2": zipfile.ZIP_BZIP2,
              "encrypted": zipfile.ZIP_DEFLATED}[how]
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", method) as zout:
        for item in zin.infolist():
            zout.writestr(item.filename, zin.read(item.filename))
    with zipfile.ZipFile(dst) as z:
        info, central = z.getinfo("data"), z.start_dir
    raw = bytearray(dst.read_bytes())
    at = info.header_offset
    start = at + 30 + int.from_bytes(raw[at + 26:at + 28], "little") + int.from_bytes(raw[at + 28:at + 30], "little")
    if how == "encrypted":  # flag bit 0 in the central directory entry of 'data'
        while raw[central:central + 4] == b"PK\x01\x02":
            sizes = [int.from_bytes(raw[central + k:central + k + 2], "little") for k in (28, 30, 32)]
            if raw[central + 46:central + 46 + sizes[0]] == b"data":
                raw[central + 8] |= 1
            central += 46 + sum(sizes)
    elif how == "lzma":  # zip's LZMA header (version, size and properties: 9 bytes) kept, the stream damaged
        raw[start + 9:start + info.compress_size] = b"\xff" * (info.compress_size - 9)
    else:  # 0xff: a deflate block of the reserved type 3; not a bzip2 magic
        raw[start:start + info.compress_size] = b"\xff" * info.compress_size
    dst.write_bytes(bytes(raw))


@pytest.mark.parametrize("how,error", [("deflate", "invalid block type"), ("lzma", "Corrupt input data"),
                                       ("bzip2", "Invalid data stream"), ("encrypted", "is encrypted")])
def test_a_damaged_compressed_member_is_refused_in_one_line(trained, tmp_path, how, error):  # noqa: F811
    bad = tmp_path / f"{how}.zip"
    damaged(trained[1], bad, how)
    with pytest.raises(CheckpointError, match=rf"SB3 model '{bad}' is not a readable zip file \(.*{error}") as info:
        read_sb3_zip(bad)
    assert "\n" not in str(info.value)


def test_the_cli_reports_a_damaged_zip_in_one_line(trained, tmp_path, capsys):  # noqa: F811
    from training import evaluate

    bad = tmp_path / "deflate.zip"
    damaged(trained[1], bad, "deflate")
    with pytest.raises(SystemExit) as info:
        evaluate.main([str(bad), "greedy-v0", "--games", "1", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert info.value.code == 2 and "Traceback" not in "\n".join(err)
    assert f"cannot load checkpoint '{bad}'" in err[-1] and "is not a readable zip file" in err[-1]


def test_an_unknown_compression_method_is_refused_before_it_is_read(trained, tmp_path):  # noqa: F811
    """zipfile raises ``NotImplementedError`` for a method it cannot read: the member's method is
    checked first and named instead."""
    bad = tmp_path / "method99.zip"
    with zipfile.ZipFile(trained[1]) as z:
        info, central = z.getinfo("data"), z.start_dir
    raw = bytearray(trained[1].read_bytes())
    raw[info.header_offset + 8:info.header_offset + 10] = (99).to_bytes(2, "little")  # the local header
    while raw[central:central + 4] == b"PK\x01\x02":
        sizes = [int.from_bytes(raw[central + k:central + k + 2], "little") for k in (28, 30, 32)]
        if raw[central + 46:central + 46 + sizes[0]] == b"data":
            raw[central + 10:central + 12] = (99).to_bytes(2, "little")  # and the central directory's entry
        central += 46 + sum(sizes)
    bad.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match=rf"SB3 model '{bad}' is not a readable zip file \('data' uses "
                                              rf"compression method 99: only stored, deflate, bzip2, LZMA are read\)$"):
        read_sb3_zip(bad)
