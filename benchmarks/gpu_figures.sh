#!/usr/bin/env bash
# Every GPU figure of the batched engine and the batched trainer, in one run on a GPU machine
# with no network (docs/speed.md, ../shared/GPU.md). Wheels of the pure-Python packages the
# machine lacks are in .whl/ (downloaded on the development machine). Figures go to $OUT.
set -u
OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
python3 setup.py build_ext --inplace -q >/dev/null 2>&1
{ nvidia-smi -L; python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"; nproc; } \
    | tee "$OUT/machine.txt"
# 1. the engine on CUDA equals the CPU's games and the scalar engine; no host sync inside step
timeout 75 python3 -m pytest -q -p no:cacheprovider tests/test_batch_api.py::test_cuda_plays_the_cpu_games \
    tests/test_batch_engine.py::test_gpu_matches_scalar_engine 2>&1 | tail -5 | tee "$OUT/cuda_tests.txt"
timeout 45 python3 - <<'PY' 2>&1 | tail -5 | tee "$OUT/sync_check.txt"
import warnings, torch
from tt_env.batch import BatchGame
from tt_env.batch.agents import BatchRandom
from tt_env.engine.rules import Rules
rules = Rules()
game = BatchGame(rules, 1024, device="cuda", check_actions=False)
agent = BatchRandom(rules, device="cuda")
ts = game.reset()
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
# 2. decisions per second, random masked play (the scalar raw_env on this machine's one core beside it)
timeout 110 python3 benchmarks/bench_batch.py --device cuda --batch-sizes 4096,16384,65536 --players 2 \
    --envs batch,tt_raw --repeats 2 --seconds 2 --warmup 1 2>&1 | tail -12 | tee "$OUT/bench_batch_2p.txt"
timeout 70 python3 benchmarks/bench_batch.py --device cuda --batch-sizes 16384 --players 4,8 \
    --envs batch --repeats 2 --seconds 2 --warmup 1 2>&1 | tail -8 | tee "$OUT/bench_batch_48p.txt"
# 3. the solver alone
timeout 70 python3 benchmarks/bench_batch_solver.py --device cuda --hands 20000 --torch-hands 2000 \
    --torch-seconds 3 --repeats 2 2>&1 | tail -25 | tee "$OUT/bench_solver.txt"
# 4. the batched trainer
timeout 80 python3 benchmarks/bench_training.py --contenders batch_ppo --device cuda --tables 4096 \
    --steps 200000 --repeats 1 2>&1 | tail -8 | tee "$OUT/bench_training.txt"
echo done | tee "$OUT/done.txt"
