"""What every training run uses: its config (``config``, its values' checks in ``value_checks``, the
YAML files in ``config_files``), the device (``device``), resuming (``resume``; the signals that
stop a run, ``signals``), the run folder's lock (``run_lock``), its outputs and signals
(``run_utils``), the evaluations every trainer runs on a schedule and saves (``evaluations``) and
the PPO trainers' shared command line (``trainer_cli``).

No command lives here: the commands are ``python -m training.<name>``.
"""
