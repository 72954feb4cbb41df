"""The batched engine: many Three Thirteen tables as tensors, on CPU or GPU.

``tt_env.batch.solver.least_penalty`` is the batched exact meld solver (a torch dynamic program,
or the C solver's batched entry point on CPU).
"""
