"""The duplicate evaluator: seating, replayed deals, reproducible JSON, statistics, command line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tt_env.agents import GreedyAgent, RandomAgent
from tt_env.engine import Rules, least_penalty
from training import evaluate as ev
from tt_env.observation.decode import decode_observation
from tt_env.evaluation.duplicate import play_deal, play_game, run_deals, seat_of, seating_count, seats_in
from tt_env.evaluation.stats import mean_ci, summarize, unique_names, win_rate_ci

SHORT = Rules(rounds=(1, 2, 3))
VARIABLE = ("seconds", "games_per_second")


def _stable(report: dict) -> dict:
    """The report without the wall-clock numbers."""
    out = {k: v for k, v in report.items() if k not in VARIABLE}
    out["agents"] = [{k: v for k, v in a.items() if k != "ms_per_move"} for a in report["agents"]]
    return out


@pytest.mark.parametrize("num_agents", [2, 3, 4])
def test_every_agent_plays_every_seat_of_every_deal(num_agents: int) -> None:
    rules = Rules(num_players=num_agents, rounds=(1, 2))
    specs = ["greedy-v0", "random-v0", "expert-v0", "random-v0"][:num_agents]
    deals = run_deals(specs, rules, num_deals=3, seed=4)
    assert [d[0].deal for d in deals] == [0, 1, 2]
    for deal in deals:
        assert sorted(g.rotation for g in deal) == list(range(num_agents))
        for i in range(num_agents):
            assert sorted(g.seats[i] for g in deal) == list(range(num_agents))
        for g in deal:
            assert sorted(g.seats) == list(range(num_agents))


class _Recorder:
    """Wraps an agent; keeps the hand it was dealt in each round (its first decision of the round)."""

    def __init__(self, agent) -> None:
        self.agent, self.name, self.dealt = agent, agent.name, {}

    def act(self, observation, action_mask, rng):
        view = decode_observation(observation)
        self.dealt.setdefault(view.round_number, sorted(view.hand))
        return self.agent.act(observation, action_mask, rng)


class _Hopeless:
    """Deterministic and never goes out: discards the card that leaves the most penalty;
    draws from the stock (so the stock runs out and is reshuffled), or, with ``take``, takes the
    discard when its rank is even (so the two seatings reshuffle at different times)."""

    def __init__(self, rules: Rules, take: bool) -> None:
        self.rules, self.take, self.name = rules, take, f"hopeless-{take}"

    def act(self, observation, action_mask, rng):
        legal = np.flatnonzero(action_mask).tolist()
        view = decode_observation(observation)
        if legal[0] < 2:
            even = view.discard_top is not None and (view.discard_top % 13 + 1) % 2 == 0
            return 1 if self.take and even and 1 in legal else legal[0]

        def left(a: int) -> int:
            rest = list(view.hand)
            rest.remove(a - 2)
            return least_penalty(rest, view.wild_rank)

        return max(legal, key=left)


def test_each_rotation_replays_the_same_deal() -> None:
    """Every seat is dealt the same hands in every round in every rotation, even after the
    stock was reshuffled in earlier rounds and the two agents played differently."""
    rules = Rules(rounds=(9, 10, 11), max_turns_per_round=150)
    for deal in range(2):
        dealt = {}
        for rotation in range(2):
            agents = [_Recorder(_Hopeless(rules, take=False)), _Recorder(_Hopeless(rules, take=True))]
            record = play_game(agents, rules, seed=8, deal=deal, rotation=rotation)
            assert record.turns == 450  # every round ran to the turn limit: 75+ stock draws, reshuffles
            for i, agent in enumerate(agents):
                for rnd, hand in agent.dealt.items():
                    dealt.setdefault((record.seats[i], rnd), []).append(hand)
        assert len(dealt) == 6
        for hands in dealt.values():
            assert hands[0] == hands[1]


def test_two_copies_of_a_deterministic_agent_mirror() -> None:
    rules = Rules(rounds=(9, 10, 11))
    agents = [GreedyAgent(rules), GreedyAgent(rules)]
    for deal in range(3):
        first, second = play_deal(agents, rules, seed=8, deal=deal)
        assert first.scores == second.scores[::-1] and first.turns == second.turns


def test_random_agents_draw_from_their_own_seeded_stream() -> None:
    rules = SHORT
    a = play_deal([RandomAgent(rules), RandomAgent(rules)], rules, seed=3, deal=1)
    b = play_deal([RandomAgent(rules), RandomAgent(rules)], rules, seed=3, deal=1)
    assert [g.scores for g in a] == [g.scores for g in b]


def test_report_is_reproducible_whatever_the_workers() -> None:
    one, _ = ev.evaluate(["greedy-v0", "random-v0"], 6, seed=5, rules=SHORT, workers=1)
    again, _ = ev.evaluate(["greedy-v0", "random-v0"], 6, seed=5, rules=SHORT, workers=1)
    two, _ = ev.evaluate(["greedy-v0", "random-v0"], 6, seed=5, rules=SHORT, workers=2)
    assert _stable(one) == _stable(again) == _stable(two)
    other, _ = ev.evaluate(["greedy-v0", "random-v0"], 6, seed=6, rules=SHORT, workers=1)
    assert _stable(other) != _stable(one)


def test_report_format() -> None:
    rules = Rules(num_players=3, rounds=(1, 2))
    report, deals = ev.evaluate(["greedy-v0", "random-v0", "greedy-v0"], 5, seed=0, rules=rules)
    assert report["format"] == ev.FORMAT
    assert (report["games"], report["seatings"], report["games_played"], report["seating"]) == (5, 3, 15,
                                                                                              "rotations")
    assert [a["name"] for a in report["agents"]] == ["greedy-v0", "random-v0", "greedy-v0#2"]
    for a in report["agents"]:
        assert set(a) >= {"name", "mean_score", "win_rate", "win_rate_ci95"}
        lo, hi = a["win_rate_ci95"]
        assert 0.0 <= lo <= a["win_rate"] <= hi <= 1.0
    assert abs(sum(a["win_rate"] for a in report["agents"]) - 1.0) < 1e-9  # ties share the win
    pairs = {(p["a"], p["b"]): p for p in report["pairwise"]}
    assert len(pairs) == 6
    for (a, b), p in pairs.items():
        assert set(p) >= {"a", "b", "mean_score_diff", "ci95"}
        assert p["mean_score_diff"] == pytest.approx(-pairs[(b, a)]["mean_score_diff"])
        means = {x["name"]: x["mean_score"] for x in report["agents"]}
        assert p["mean_score_diff"] == pytest.approx(means[a] - means[b])
        assert p["ci95"][0] <= p["mean_score_diff"] <= p["ci95"][1]
    json.dumps(report)


def test_intervals_are_over_deals() -> None:
    mean, (lo, hi) = mean_ci(np.array([1.0, 2.0, 3.0, 4.0]))
    assert mean == 2.5 and hi - lo == pytest.approx(2 * 1.959963984540054 * np.std([1, 2, 3, 4], ddof=1) / 2)
    assert mean_ci(np.array([7.0])) == (7.0, None)  # one deal: no spread to estimate, no interval
    assert unique_names(["a", "b", "a", "a"]) == ["a", "b", "a#2", "a#3"]
    # winning every deal still leaves some uncertainty; the interval stays inside [0, 1]
    lo, hi = win_rate_ci(np.ones(100))
    assert 0.9 < lo < 1.0 and hi == 1.0
    assert win_rate_ci(np.zeros(100))[0] == 0.0 and 0.0 < win_rate_ci(np.zeros(100))[1] < 0.1
    # two copies of greedy: every deal is a mirror, so the difference and its interval are exactly 0
    deals = run_deals(["greedy-v0", "greedy-v0"], SHORT, 4, seed=0)
    pair = summarize(deals, ["greedy-v0", "greedy-v0"])["pairwise"][0]
    assert pair["mean_score_diff"] == 0.0 and pair["ci95"] == [0.0, 0.0]


def test_per_agent_intervals_are_taken_over_deals_not_games() -> None:
    """Hand-made deals where the games of a deal disagree: intervals over 3 deal means, not 6 games."""
    from tt_env.evaluation.duplicate import GameRecord

    def game(deal, rotation, scores):
        low = min(scores)
        shares = [1.0 / scores.count(low) if s == low else 0.0 for s in scores]
        return GameRecord(deal, rotation, [rotation, 1 - rotation], scores, shares, 10, [5, 5], [0.0, 0.0])

    table = [[[10, 30], [50, 20]], [[0, 40], [20, 60]], [[70, 10], [40, 10]]]
    deals = [[game(d, r, scores) for r, scores in enumerate(rows)] for d, rows in enumerate(table)]
    report = summarize(deals, ["a", "b"])
    per_deal = {0: [30.0, 10.0, 55.0], 1: [25.0, 50.0, 10.0]}  # agent i's mean over the seatings of each deal
    wins = {0: [0.5, 1.0, 0.0], 1: [0.5, 0.0, 1.0]}
    for i, agent in enumerate(report["agents"]):
        mean, ci = mean_ci(np.array(per_deal[i]))
        assert agent["mean_score"] == pytest.approx(mean)
        assert agent["mean_score_ci95"] == pytest.approx(ci)
        half = 1.959963984540054 * np.std(per_deal[i], ddof=1) / np.sqrt(3)
        assert agent["mean_score_ci95"][1] - agent["mean_score_ci95"][0] == pytest.approx(2 * half)
        assert agent["win_rate"] == pytest.approx(np.mean(wins[i]))
        assert agent["win_rate_ci95"] == pytest.approx(win_rate_ci(np.array(wins[i])))
    diff = [a - b for a, b in zip(per_deal[0], per_deal[1], strict=True)]
    pair = report["pairwise"][0]
    assert (pair["a"], pair["b"]) == ("a", "b") and pair["ci95"] == pytest.approx(mean_ci(np.array(diff))[1])


def test_command_line(tmp_path, capsys) -> None:
    out, png = tmp_path / "r.json", tmp_path / "r.png"
    ev.main(["greedy-v0", "random-v0", "--games", "3", "--seed", "1", "--rounds", "1,2", "--quiet",
             "--json", str(out), "--plot", str(png)])
    report = json.loads(out.read_text())
    assert report["games"] == 3 and report["rules"]["rounds"] == [1, 2]
    assert png.stat().st_size > 1000
    assert "greedy-v0" in capsys.readouterr().out


@pytest.mark.parametrize("argv, match", [
    (["greedy-v0"], "2 to 6 agents"),
    (["greedy-v0"] * 7, "2 to 6 agents"),
    (["greedy-v0", "nobody-v3"], "unknown agent"),
    (["greedy-v0", "random-v0", "--games", "0"], "argument --games: 0 is not allowed: use an integer >= 1"),
    (["greedy-v0", "random-v0", "--rounds", "3,1"], "increasing"),
    (["greedy-v0", "random-v0", "--decks", "many"], "decks"),
    (["greedy-v0", "random-v0", "--workers", "0"], "argument --workers: 0 is not allowed: use an integer >= 1"),
])
def test_bad_input_names_the_problem(argv: list[str], match: str, capsys) -> None:
    with pytest.raises(SystemExit):
        ev.main(argv + ["--quiet"])
    assert match in capsys.readouterr().err


def test_agent_objects_need_one_worker() -> None:
    with pytest.raises(ValueError, match="workers=1"):
        run_deals([GreedyAgent(SHORT), "random-v0"], SHORT, 2, seed=0, workers=2)


def test_saved_games_replay_to_the_evaluated_scores(tmp_path) -> None:
    """``--save-games`` writes one record per game; each replays to the scores the evaluator saw."""
    from tt_env.ui.records import load_record, replay_final

    from training.evaluate import main

    out = tmp_path / "games"
    report = main(["greedy-v0", "random-v0", "--games", "2", "--seed", "3", "--rounds", "1,2",
                   "--quiet", "--save-games", str(out)])
    files = sorted(out.glob("*.json"))
    assert len(files) == report["games"] * 2
    for path in files:
        record = load_record(path)
        env = replay_final(record)
        assert list(env.game_state.scores) == list(record.final_scores)


def test_seats_in_gives_every_order_once_the_rotations_first() -> None:
    for n in range(2, 6):
        orders = [tuple(seats_in(k, n)) for k in range(math.factorial(n))]
        assert len(set(orders)) == math.factorial(n) and all(sorted(o) == list(range(n)) for o in orders)
        assert [list(o) for o in orders[:n]] == [[seat_of(i, k, n) for i in range(n)] for k in range(n)]


def test_every_order_makes_the_numbers_independent_of_the_agents_order() -> None:
    """With three deterministic agents, the N rotations fix who takes whose discards by the order
    they are named in, and the means moved with it; all N! orders play every arrangement once."""
    rules = Rules(num_players=3, rounds=(1, 2, 3))
    orders = (["expert-v0", "greedy-v0", "ppo-3p-v0"], ["ppo-3p-v0", "greedy-v0", "expert-v0"])

    def means(specs, seatings):
        report, _ = ev.evaluate(specs, 3, seed=1, rules=rules, seatings=seatings)
        return {a["name"]: a["mean_score"] for a in report["agents"]}

    assert means(orders[0], "permutations") == pytest.approx(means(orders[1], "permutations"), abs=1e-9)
    assert means(orders[0], "auto") == means(orders[0], "permutations")
    assert means(orders[0], "rotations") != pytest.approx(means(orders[1], "rotations"), abs=1e-9)
    with pytest.raises(ValueError, match=r"--seatings all is not allowed: use auto or one of rotations, permutations"):
        ev.evaluate(orders[0], 1, seed=1, rules=rules, seatings="all")


def test_auto_seats_two_agents_as_before_and_five_by_rotations() -> None:
    assert ev.resolved_seatings("auto", ["a", "b", "c"]) == ev.resolved_seatings("auto", ["a", "b", "c", "a"]) \
        == "permutations"
    for specs in (["a", "b"], ["a", "b", "b"], ["a", "b", "b", "b"], ["a", "b", "c", "d", "e"]):
        assert ev.resolved_seatings("auto", specs) == "rotations", specs
    assert seating_count(2, "permutations") == seating_count(2, "rotations") == 2
    report, _ = ev.evaluate(["greedy-v0", "random-v0"], 2, seed=5, rules=SHORT)
    before, _ = ev.evaluate(["greedy-v0", "random-v0"], 2, seed=5, rules=SHORT, seatings="rotations")
    assert _stable(report) == _stable(before)
