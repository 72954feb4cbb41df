"""Position data files shared by the data tools (``python -m training.oracle_data``,
``python -m training.belief_data``): ``npz`` writes and reads them (arrays plus a JSON ``meta``,
no pickles).
"""
