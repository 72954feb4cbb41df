"""The argument checks the command-line tools share: number ranges and writable output paths."""

from __future__ import annotations

import argparse
import os

import pytest

from tt_env import cli_checks
from tt_env.cli_checks import (decks_arg, int_at_least, int_list, output_dir_problem, output_file_problem,
                               positive_float, seed_arg, workers_note)

needs_non_root = pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                                    reason="root may write anywhere: permission checks mean nothing")


def test_int_at_least_names_the_value_and_the_range():
    at_least_one = int_at_least(1)
    assert at_least_one("3") == 3
    with pytest.raises(argparse.ArgumentTypeError, match=r"^0 is not allowed: use an integer >= 1$"):
        at_least_one("0")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^'x' is not an integer: use an integer >= 1$"):
        at_least_one("x")


def test_int_list_names_the_value_and_the_range():
    assert int_list(1)("1024, 4096,1") == [1024, 4096, 1]
    assert int_list(2, 8, noun="player counts")("2,8") == [2, 8]
    with pytest.raises(argparse.ArgumentTypeError,
                       match=r"^'256,0' is not allowed: use comma-separated integers >= 1$"):
        int_list(1)("256,0")
    with pytest.raises(argparse.ArgumentTypeError,
                       match=r"^'2,9' is not allowed: use comma-separated player counts 2\.\.8$"):
        int_list(2, 8, noun="player counts")("2,9")
    for text in ("1k", "", "4096,", "1.5"):
        with pytest.raises(argparse.ArgumentTypeError, match=r"is not a list of integers: use comma-separated"):
            int_list(1)(text)


def test_negative_seeds_are_refused_by_name():
    assert seed_arg("0") == 0 and seed_arg("123456789012") == 123456789012
    with pytest.raises(argparse.ArgumentTypeError, match=r"^-3 is not allowed: use a seed, an integer >= 0$"):
        seed_arg("-3")


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "-inf", "101", "fast"])
def test_positive_float_refuses_zero_negative_non_finite_and_too_large(text):
    with pytest.raises(argparse.ArgumentTypeError, match=r"use a number > 0 and <= 100"):
        positive_float(100)(text)


@pytest.mark.parametrize("make, text, message", [
    (lambda: positive_float(), "0", "use a number > 0$"),
    (lambda: positive_float(why=" (seconds)"), "-1", r"use a number > 0 \(seconds\)$"),
    (lambda: positive_float(100, low=0.002), "0.001", "use a number >= 0.002 and <= 100$"),
    (lambda: positive_float(low=2.5), "2", "use a number >= 2.5$"),
])
def test_positive_float_names_exactly_the_bounds_it_has(make, text, message):
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        make()(text)
    assert make()("2.5") == 2.5


def test_positive_float_accepts_the_range():
    assert positive_float(100)("0.5") == 0.5 and positive_float(100)("100") == 100.0
    assert positive_float()("1e9") == 1e9


@pytest.mark.parametrize("text", ["0", "-2", "many", "1.5", "65", "99999"])
def test_decks_is_auto_or_a_positive_integer(text):
    assert decks_arg("auto") == "auto" and decks_arg("AUTO") == "auto" and decks_arg("3") == 3
    assert decks_arg("1") == 1 and decks_arg("64") == 64
    with pytest.raises(argparse.ArgumentTypeError, match=r"use 'auto' or a number of decks from 1 to 64"):
        decks_arg(text)


def test_workers_note_only_beyond_the_cores(monkeypatch):
    monkeypatch.setattr(cli_checks, "available_cpus", lambda: 2)
    assert workers_note(2) is None
    assert workers_note(3) == ("note: --workers 3 is more than the 2 CPU core(s) here: the extra workers share "
                               "the cores and do not make the run faster")


def test_a_writable_file_in_missing_folders_is_fine_and_nothing_is_created(tmp_path):
    assert output_file_problem(tmp_path / "a" / "b" / "out.json") is None
    assert output_file_problem(tmp_path / "out.gif", (".gif",)) is None
    existing = tmp_path / "old.json"
    existing.write_text("{}")
    assert output_file_problem(existing, overwrite=True) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json"]


def test_an_existing_file_is_refused_unless_overwrite(tmp_path, monkeypatch):
    """Nothing is replaced without --overwrite; a problem --overwrite would not cure is reported first."""
    existing = tmp_path / "old.json"
    existing.write_text("{}")
    assert output_file_problem(existing) == cli_checks.EXISTS == \
        "the file exists: give --overwrite to replace it, or another name"
    assert output_file_problem(existing, (".json",), overwrite=False) == cli_checks.EXISTS
    assert output_file_problem(existing, (".gif",)) == "the file name does not end in .gif"
    real_access = os.access
    monkeypatch.setattr(cli_checks.os, "access",
                        lambda path, mode: False if os.fspath(path) == str(tmp_path) else real_access(path, mode))
    assert output_file_problem(existing) == f"no permission to write in {tmp_path}"
    assert existing.read_text() == "{}" and sorted(p.name for p in tmp_path.iterdir()) == ["old.json"]


def test_a_folder_is_not_a_file_name(tmp_path):
    assert output_file_problem(tmp_path, (".png",)) == f"it is a folder: give a file name, such as {tmp_path}/out.png"


def test_a_file_name_needs_its_suffix(tmp_path):
    assert output_file_problem(tmp_path / "game.png", (".gif",)) == "the file name does not end in .gif"
    assert output_file_problem(tmp_path / "GAME.GIF", (".gif",)) is None


def test_a_file_where_a_folder_should_be(tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("x")
    assert output_file_problem(blocker / "sub" / "out.json") == f"{blocker} is a file, not a folder"
    assert output_dir_problem(blocker / "frames") == f"{blocker} is a file, not a folder"
    assert output_dir_problem(blocker) == "it is a file, not a folder"


def test_a_path_that_is_not_a_regular_file_is_refused():
    assert output_file_problem(os.devnull) == "it exists and is not a regular file"


def test_existing_and_missing_folders_are_fine(tmp_path):
    assert output_dir_problem(tmp_path) is None
    assert output_dir_problem(tmp_path / "new" / "deeper") is None
    assert list(tmp_path.iterdir()) == []


@needs_non_root
def test_a_read_only_folder_is_reported(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert output_file_problem(locked / "out.json") == f"no permission to write in {locked}"
        assert output_dir_problem(locked / "frames") == f"no permission to write in {locked}"
        assert output_dir_problem(locked) == f"no permission to write in {locked}"
    finally:
        locked.chmod(0o755)


@needs_non_root
def test_a_read_only_file_is_reported(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("{}")
    target.chmod(0o444)
    assert output_file_problem(target) == "no permission to write it"


def test_permission_denied_as_os_access_reports_it(tmp_path, monkeypatch):
    """The permission branch, also where the tests run as root (``os.access`` says no for one folder)."""
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(cli_checks.os, "access",
                        lambda path, mode: False if os.fspath(path) == str(locked) else real_access(path, mode))
    assert output_file_problem(locked / "sub" / "out.json") == f"no permission to write in {locked}"
    assert output_dir_problem(locked) == f"no permission to write in {locked}"
    assert output_file_problem(tmp_path / "fine.json") is None


# ---------------------------------------------------------------- issue 19: search permission, a real write
def test_a_folder_that_can_be_written_but_not_searched_is_not_writable(tmp_path, monkeypatch):
    """Mode 0o200 semantics (write without search): no file can be created there, so the check refuses it.

    ``os.access`` is what says so (as root it says yes to nearly everything, so it is simulated here)."""
    locked = tmp_path / "nosearch"
    locked.mkdir()
    real_access = os.access

    def access(path, mode):
        if os.fspath(path) == str(locked):
            return not mode & os.X_OK  # writable, not searchable
        return real_access(path, mode)

    monkeypatch.setattr(cli_checks.os, "access", access)
    assert output_file_problem(locked / "out.json") == f"no permission to write in {locked}"
    assert output_dir_problem(locked / "frames") == f"no permission to write in {locked}"
    assert output_dir_problem(locked) == f"no permission to write in {locked}"


@needs_non_root
@pytest.mark.parametrize("mode", [0o200, 0o100, 0o500])
def test_real_folders_without_write_and_search_are_refused(tmp_path, mode):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(mode)
    try:
        assert output_file_problem(locked / "out.json") == f"no permission to write in {locked}"
    finally:
        locked.chmod(0o755)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no /proc here")
@pytest.mark.parametrize("path", ["/proc/x.json", "/proc/self/out.json"])
def test_places_where_the_kernel_refuses_new_files_are_found(path):
    """``/proc`` passes ``os.access`` as root (``/proc`` itself is mode 0o555: as another user the permission
    check refuses it first); only creating a file shows that it cannot be written."""
    for problem in (output_file_problem(path), output_dir_problem(path + ".d")):
        assert problem.startswith(("cannot create files in /proc", "no permission to write in /proc")), problem
    if os.geteuid() == 0 and path == "/proc/x.json":
        assert output_file_problem(path).startswith("cannot create files in /proc (")


def test_the_write_check_leaves_nothing_behind(tmp_path):
    assert output_file_problem(tmp_path / "a.json") is None
    assert output_dir_problem(tmp_path / "sub") is None
    assert output_file_problem(tmp_path / "deeper" / "b.json") is None
    assert list(tmp_path.iterdir()) == []


def test_a_failing_write_is_reported_with_its_reason(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(cli_checks.tempfile, "mkstemp", refuse)
    assert output_file_problem(tmp_path / "x.json") == f"cannot create files in {tmp_path} (Read-only file system)"
    assert output_dir_problem(tmp_path / "d") == f"cannot create files in {tmp_path} (Read-only file system)"


def test_the_evaluator_refuses_proc_before_any_game(capsys, monkeypatch):
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc here")
    from training import evaluate

    monkeypatch.setattr(evaluate, "evaluate", lambda *a, **k: pytest.fail("games were played"))
    with pytest.raises(SystemExit) as info:
        evaluate.main(["random-v0", "greedy-v0", "--games", "1", "--json", "/proc/x.json"])
    assert info.value.code == 2
    assert "--json /proc/x.json: cannot create files in /proc" in capsys.readouterr().err


@pytest.mark.parametrize("make", [lambda d: d / ("a" * 300 + ".json"), lambda d: d / ("x" * 300) / "out.json",
                                  lambda d: d / "a\0b.json"])
def test_names_the_system_cannot_take_are_reported_not_raised(tmp_path, make):
    """A name too long for the system, or holding a NUL, used to raise (``OSError``,
    ``ValueError``) from the checks' own lookups, a traceback for every output flag."""
    path = make(tmp_path)
    for problem in (output_file_problem(path, (".json",)), output_file_problem(path, overwrite=True),
                    output_dir_problem(path)):
        assert problem is not None
        assert ("too long for this system: at most 255 bytes a name" in problem
                or "NUL character" in problem), problem
    assert list(tmp_path.iterdir()) == []


def test_the_evaluator_refuses_a_name_too_long_before_any_game(capsys, tmp_path):
    from training import evaluate
    with pytest.raises(SystemExit) as exit_info:
        evaluate.main(["random-v0", "greedy-v0", "--games", "1", "--json", str(tmp_path / ("a" * 300 + ".json"))])
    assert exit_info.value.code == 2
    assert "too long for this system" in capsys.readouterr().err
