#!/usr/bin/env bash
# The wheels benchmarks/gpu_figures.sh needs on a GPU machine without network: the pure-Python
# packages that machine lacks (../shared/GPU.md), at the versions this checkout's environment
# tests with, for the GPU machine's Python (3.12 unless PYTHON_VERSION says otherwise), into .whl/
# (ignored by git: pass it to the device with carry=[".whl"]). Run it here, with the project's
# environment active, before the GPU run.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
PACKAGES="gymnasium pettingzoo farama-notifications stable-baselines3 sb3-contrib cloudpickle"
PINS=$("$PYTHON" - $PACKAGES <<'PY'
import importlib.metadata as metadata
import sys

print(" ".join(f"{name}=={metadata.version(name)}" for name in sys.argv[1:]))
PY
)
rm -rf .whl && mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "${PYTHON_VERSION:-3.12}" \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .whl $PINS
echo "wheels in .whl/ for $PINS:"; ls .whl
