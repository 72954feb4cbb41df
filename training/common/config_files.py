"""The YAML configs shipped with the package, and what ``--config`` names.

The repository keeps them in ``configs/`` at its top (``python training/selfplay.py --config
configs/selfplay_default.yaml`` in a checkout); a wheel carries the same files as package data
of ``training`` (``training/configs/*.yaml``, put there by ``setup.py``), found through
``importlib.resources``. So every training command finds its config from any working directory
in any kind of install:

- ``--config PATH`` that exists is that file;
- otherwise a shipped config by name: ``main_job``, ``main_job.yaml`` or ``configs/main_job.yaml``
  (the README's form, which then works outside the checkout too);
- anything else is an error naming the shipped configs.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path, PurePath

SUFFIX = ".yaml"


def config_dir() -> Path:
    """The folder of the shipped configs: ``training/configs`` in an install, else the checkout's ``configs/``."""
    packaged = files("training").joinpath("configs")
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged
    return Path(str(files("training"))).resolve().parent / "configs"


def shipped_configs() -> list[str]:
    """Names of the shipped configs (``main_job``, ``ppo_2p_v1``, ...), sorted."""
    folder = config_dir()
    return sorted(p.stem for p in folder.glob(f"*{SUFFIX}")) if folder.is_dir() else []


def shipped_config(name: str) -> Path | None:
    """The shipped config that ``name`` means (``main_job``, ``main_job.yaml``, ``configs/main_job.yaml``), or None."""
    pure = PurePath(name)
    if len(pure.parts) > 2 or (len(pure.parts) == 2 and pure.parts[0] != "configs"):
        return None
    stem = pure.name[:-len(SUFFIX)] if pure.name.endswith(SUFFIX) else pure.name
    if pure.suffix not in ("", SUFFIX) or stem not in shipped_configs():
        return None
    return config_dir() / f"{stem}{SUFFIX}"


def resolve_config(text: str | Path) -> Path:
    """The config file ``--config text`` means; ``FileNotFoundError`` naming the shipped configs if none."""
    path = Path(text)
    if path.exists():
        return path
    shipped = shipped_config(str(text))
    if shipped is not None:
        return shipped
    raise FileNotFoundError(f"config file {str(text)!r} does not exist, and it is not the name of a shipped config "
                            f"(shipped: {', '.join(shipped_configs()) or 'none'})")
