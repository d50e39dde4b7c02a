"""A deliberately stubborn upstream-style adapter for the fault benchmarks.

Written against upstream's `nemo-fabric-adapters-common` `lifecycle.serve`. It ignores
SIGTERM, never returns from `stop()`, and sleeps 30 s when the input is "sleep". Used by
bench/host/host.rs to show the stop escalation and the invoke timeout (behaviour, not speed).
"""
