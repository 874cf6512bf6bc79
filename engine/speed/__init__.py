"""Speed and cost of a layout: calibrated decode, prefill and time to first token per engine (estimate.py), the
request's numbers turned into a workload (layout.py)."""
