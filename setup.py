"""Builds the optional C accelerators (the meld solver, the batched engine's CPU kernels;
without a compiler, Python and torch code is used), and ships the training configs as package
data (everything else is in pyproject.toml)."""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

CONFIGS = Path(__file__).resolve().parent / "configs"


class OptionalBuildExt(build_ext):
    """Build the extensions if possible; fall back to their Python and torch twins otherwise."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any build failure means "use the fallback"
            print(f"warning: C extensions not built ({exc}); using the pure-Python solver and torch code")

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            print(f"warning: {ext.name} not built ({exc}); using its Python or torch twin")


class BuildPyWithConfigs(build_py):
    """Put ``configs/*.yaml`` into the wheel as ``training/configs/*.yaml``.

    The repository keeps the configs at the top (``--config configs/x.yaml`` in a checkout);
    an installed package finds them as package data of ``training`` through
    ``importlib.resources`` (``training/common/config_files.py``), from any directory. An editable
    install reads the checkout's ``configs/`` instead, so it is left out there.
    """

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "training" / "configs"
        self.mkpath(str(target))
        for config in sorted(CONFIGS.glob("*.yaml")):
            self.copy_file(str(config), str(target / config.name))


setup(
    ext_modules=[Extension("tt_env.engine._meldsolver",
                           [f"tt_env/engine/{name}.c" for name in ("_meldsolver", "_meldsolver_draws", "meld_fast",
                                                                       "meld_search", "meld_draws")],
                           depends=["tt_env/engine/meldsolver.h", "tt_env/engine/meldsolver_py.h"],
                           # no fused multiply-adds: draw_gain adds up floats exactly as Python does
                           extra_compile_args=["-O2", "-ffp-contract=off"], optional=True),
                 # the batched engine's CPU kernels: observation and mask, moves, deals, random-v0's choice.
                 # -O3 (Python's own default, which -O2 here would lower): gcc vectorises their
                 # per-card loops only there; still no fused multiply-adds, as above
                 Extension("tt_env.batch._kernels",
                           [f"tt_env/batch/{name}.c" for name in ("_kernels", "_kernels_observe", "_kernels_moves",
                                                                   "_kernels_deal", "_kernels_pick")],
                           depends=["tt_env/batch/_kernels.h"],
                           extra_compile_args=["-O3", "-ffp-contract=off"], optional=True)],
    cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPyWithConfigs},
)
