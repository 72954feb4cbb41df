#!/usr/bin/env bash
# Every GPU figure of the batched engine and the batched trainer, in one run on a GPU machine
# with no network (docs/batched-engine.md, ../shared/GPU.md). Wheels of the pure-Python packages
# the machine lacks are in .whl/: `bash benchmarks/gpu_wheels.sh` on the development machine, then
# the device run with carry=[".whl"] (git ignores it). Figures go to $OUT, with the choices below.
# PARTS picks sections (default all): engine (smoke check, CUDA tests, CUDA graphs, host syncs,
# decisions/s at 2 players), players (4 and 8 players), solver, trainers (every trainer on cuda),
# training (the batched trainer's steps/s); and, only when asked for, soak (about 2 minutes: the
# GPU's engine against the scalar engine over random rule configurations), million (at most 4.5
# minutes: the fused meld kernels against the scalar C solver on a million random hands) and
# tuning (about 3.5 minutes: where a GPU step goes part by part, and the fused kernels' programs
# per launch with a count, solver_triton.PREFIX_PROGRAMS, side by side, gathered solving, 2 players).
# Where one command may run 10 minutes at most, run it in several calls, each under that limit even
# at its sections' timeouts: PARTS=engine (at most about 9 minutes), then
# PARTS=players,solver,trainers,training (at most about 8.5); then, if time is left,
# PARTS=soak,million (at most about 6.5) and PARTS=tuning. The engine part's choices (solver,
# step kernels, CUDA graphs: each falls back when its checks fail) are kept in
# /tmp/gpu_choices.env for the later calls on the same machine (and in $OUT/choices.env: on a fresh
# machine give them back as SOLVER=... KERNELS=... GRAPHS=... in the environment).
set -u
GIVEN_SOLVER=${SOLVER:-} GIVEN_KERNELS=${KERNELS:-} GIVEN_GRAPHS=${GRAPHS:-}
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"; SMOKE=/tmp/triton_smoke.txt
PARTS=${PARTS:-engine,players,solver,trainers,training}
CHOICES=/tmp/gpu_choices.env
SOLVER=auto KERNELS=auto GRAPHS=off
[ -f "$CHOICES" ] && source "$CHOICES"
SOLVER=${GIVEN_SOLVER:-$SOLVER} KERNELS=${GIVEN_KERNELS:-$KERNELS} GRAPHS=${GIVEN_GRAPHS:-$GRAPHS}
want() { [[ ",$PARTS," == *",$1,"* ]]; }
# passed: the last line of `pytest -q` says "N passed" and names no failure, error or skip
passed() { tail -1 "$1" | grep -qE '^[0-9]+ passed' && ! tail -1 "$1" | grep -qE '[0-9]+ (failed|errors?|skipped)'; }
if ! ls .whl/*.whl >/dev/null 2>&1; then
    echo "no wheels in .whl/: run 'bash benchmarks/gpu_wheels.sh' here first and pass carry=[\".whl\"]" \
        | tee "$OUT/machine.txt"; exit 2
fi
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
python3 setup.py build_ext --inplace -q > "$OUT/build.txt" 2>&1
if ! python3 -c "import tt_env.batch, stable_baselines3; from tt_env.engine import melds; assert melds.SOLVER_BACKEND == 'c'" \
        >> "$OUT/build.txt" 2>&1; then
    echo "the project does not import, or the C solver did not build: see build.txt" | tee "$OUT/machine.txt"; exit 2
fi
{ nvidia-smi -L; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name())"; nproc; } \
    | tee "$OUT/machine.txt"
if want engine; then
# 0. the fused (Triton) solver against the plain tensor program on random hands; the engine's
#    solver falls back to the plain program for the figures below if they differ
SOLVER=auto
timeout 60 python3 - <<'PY' 2>&1 | tail -8 | tee "$SMOKE" | tee -a "$OUT/machine.txt" || true
import torch
from tt_env.batch.solver import least_penalty
from tt_env.engine.rules import Rules
gen = torch.Generator().manual_seed(0)
for rules in (Rules(), Rules(aces="high_or_low", meld_needs_natural=True), Rules(num_players=5)):
    decks, b = rules.num_decks, 4096
    shoe = torch.rand(b, 52 * decks, generator=gen).argsort(1) % 52
    size = torch.randint(3, 15, (b, 1), generator=gen)
    take = torch.arange(52 * decks).unsqueeze(0) < size
    counts = torch.zeros(b, 52, dtype=torch.int64).scatter_add_(1, shoe, take.long()).to(torch.uint8).cuda()
    wild = torch.randint(0, 14, (b,), generator=gen).cuda()
    ref = least_penalty(counts, wild, rules, backend="torch")
    got = least_penalty(counts, wild, rules, backend="triton")
    print(f"decks={decks} aces={rules.aces} natural={rules.meld_needs_natural}: {int((ref != got).sum())} "
          f"mismatches in {b} hands")
PY
grep -q " 0 mismatches" "$SMOKE" && ! grep -q -E " [1-9][0-9]* mismatches" "$SMOKE" \
    || SOLVER=torch
echo "engine solver for the figures: $SOLVER" | tee -a "$OUT/machine.txt"
# 1. the engine on CUDA equals the CPU's games and the scalar engine; no host sync inside step
#    (through the step's fused Triton kernels, the default on CUDA: if these fail, the figures
#    below take the tensor code, and say so)
timeout 130 python3 -m pytest -q -p no:cacheprovider tests/test_batch_api.py::test_cuda_plays_the_cpu_games \
    tests/test_batch_engine.py::test_gpu_matches_scalar_engine \
    tests/test_batch_triton_kernels.py::test_the_compiled_kernels_play_the_tensor_code_s_games_on_cuda 2>&1 \
    | tail -5 | tee "$OUT/cuda_tests.txt"
KERNELS=auto,torch
passed "$OUT/cuda_tests.txt" || KERNELS=torch
echo "engine step kernels for the figures: $KERNELS (auto: the fused Triton kernels)" | tee -a "$OUT/machine.txt"
# 1b. CUDA graphs of the lockstep steps (BatchGame(cuda_graphs=True)) against eager steps; the
#     figures below time them beside eager steps if they pass
timeout 80 python3 -m pytest -q -p no:cacheprovider \
    tests/test_batch_graphs.py::test_cuda_graphs_play_the_eager_games_on_cuda 2>&1 | tail -5 \
    | tee "$OUT/cuda_graph_tests.txt"
GRAPHS=off,on
passed "$OUT/cuda_graph_tests.txt" || GRAPHS=off
echo "CUDA graphs for the figures: $GRAPHS" | tee -a "$OUT/machine.txt"
printf 'SOLVER=%s\nKERNELS=%s\nGRAPHS=%s\n' "$SOLVER" "$KERNELS" "$GRAPHS" > "$CHOICES"
cp "$CHOICES" "$OUT/choices.env"
timeout 40 python3 - "$SOLVER" <<'PY' 2>&1 | tail -5 | tee "$OUT/sync_check.txt"
import sys, warnings, torch
from tt_env.batch import BatchGame
from tt_env.batch.agents import BatchRandom
from tt_env.engine.rules import Rules
rules = Rules()
game = BatchGame(rules, 1024, device="cuda", check_actions=False, solver=sys.argv[1])
agent = BatchRandom(rules, device="cuda")
ts = game.reset()
for _ in range(4):  # compile the kernels first
    ts = game.step(agent.act(ts.observation, ts.action_mask))
torch.cuda.synchronize()
torch.cuda.set_sync_debug_mode("warn")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(30):
        ts = game.step(agent.act(ts.observation, ts.action_mask))
    torch.cuda.synchronize()
torch.cuda.set_sync_debug_mode(0)
print(f"host synchronisations in 30 steps of 1,024 tables: {len(caught)}")
for w in caught[:5]:
    print("  ", str(w.message)[:200], w.filename, w.lineno)
PY
fi
# the plain tensor program (SOLVER=torch, where the fused kernels failed the smoke check) solves
# every hand it is given: there, kept penalties and smaller batches, so the figures fit their time
if [ "$SOLVER" = torch ]; then SOLVING=kept SIZES_2P=16384,65536 SIZES_48P=16384
else SOLVING=gathered SIZES_2P=16384,65536,262144 SIZES_48P=16384,65536; fi
echo "solving for the figures: $SOLVING" | tee -a "$OUT/machine.txt"
if want engine; then
# 2. decisions per second, random masked play (the scalar raw_env on this machine's one core beside it)
#    (gathered solving, the default with the fused solver, with the step's fused kernels and with
#    the tensor code side by side, each eager and as CUDA graphs)
timeout 210 python3 benchmarks/bench_batch.py --device cuda --solver "$SOLVER" --batch-sizes "$SIZES_2P" \
    --solving "$SOLVING" --kernels "$KERNELS" --cuda-graphs "$GRAPHS" --players 2 --envs batch,tt_raw --repeats 2 \
    --seconds 2 --warmup 1 2>&1 | tail -20 | tee "$OUT/bench_batch_2p.txt"
fi
if want players; then
timeout 100 python3 benchmarks/bench_batch.py --device cuda --solver "$SOLVER" --batch-sizes "$SIZES_48P" --players 4,8 \
    --solving "$SOLVING" --kernels "${KERNELS%%,*}" --cuda-graphs "$GRAPHS" --envs batch --repeats 2 --seconds 2 \
    --warmup 1 2>&1 | tail -14 | tee "$OUT/bench_batch_48p.txt"
fi
if want solver; then
# 3. the solver alone, both tensor backends (exactness against the scalar C solver, then speed)
timeout 100 python3 benchmarks/bench_batch_solver.py --device cuda --backends torch,triton --hands 20000 \
    --torch-hands ${SOLVER_HANDS:-4000} --torch-seconds 2 --torch-batch-sizes 16384,65536 --repeats 2 2>&1 | tail -28 \
    | tee "$OUT/bench_solver.txt"
fi
if want trainers; then
# 4. every trainer with --device cuda: a tiny run from its command line, its checkpoint read on
#    the CPU, and the PPO trainers resumed on the GPU
timeout 170 python3 -m pytest -q -p no:cacheprovider tests/test_trainers_on_cuda.py 2>&1 | tail -6 \
    | tee "$OUT/trainers_on_cuda.txt"
fi
if want training; then
# 5. the batched trainer
#    (and, where the CUDA graph tests passed, beside itself with its engine steps as CUDA graphs)
timeout 130 python3 benchmarks/bench_training.py --device cuda --tables 4096 --steps 200000 --repeats 1 \
    --contenders "batch_ppo$([[ "$GRAPHS" == *on* ]] && echo ,batch_ppo_graphs)" 2>&1 | tail -10 \
    | tee "$OUT/bench_training.txt"
fi
if want soak; then
# 6. (opt-in) the GPU's engine against the scalar engine, every table at every step, over random
#    rule configurations (benchmarks/batch_soak.py; as CUDA graphs where they passed above)
timeout 110 python3 benchmarks/batch_soak.py --device cuda --paths auto --steps 100000000 --seconds 80 --quiet \
    $([[ "$GRAPHS" == *on* ]] && echo --cuda-graphs) 2>&1 | tail -12 | tee "$OUT/batch_soak_cuda.txt"
fi
if want million; then
# 7. (opt-in) the fused meld kernels against the scalar C solver on a million random hands (16
#    rule groups of 62,500: 1 to 4 decks, both ace rules, meld_needs_natural both ways)
timeout 270 python3 benchmarks/bench_batch_solver.py --device cuda --backends triton --hands 1000000 \
    --torch-hands 62500 --torch-seconds 14 --torch-batch-sizes 65536 --repeats 1 --filter-hands 16000 2>&1 \
    | tail -24 | tee "$OUT/bench_solver_million.txt"
fi
if want tuning; then
# 8. (opt-in) where a GPU step goes, part by part (each part waits for the device at both ends)
timeout 60 python3 benchmarks/step_breakdown.py --device cuda --tables 16384,65536 --repeats 2 --seconds 2 2>&1 \
    | tail -14 | tee "$OUT/step_breakdown_cuda.txt"
# 9. (opt-in) programs per launch of the fused kernels when they solve a gathered prefix
timeout 150 python3 benchmarks/bench_batch.py --device cuda --solver triton --solving gathered \
    --prefix-programs 1024,4096,8192,32768 --batch-sizes 65536,262144 --players 2 --envs batch \
    --repeats 2 --seconds 2 --warmup 1 2>&1 | tail -12 | tee "$OUT/bench_prefix_programs.txt"
fi
echo done | tee "$OUT/done.txt"
