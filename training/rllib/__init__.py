"""What ``python -m training.train_rllib`` uses: the multi-agent env wrapper (``env``), the
action-masked RLlib modules (``masking``) and the export of a checkpoint to a ``.pt`` (``export``).
Importing this package does not import Ray; its modules do.
"""
