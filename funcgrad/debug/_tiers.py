"""``funcgrad.debug.tier_stats()``: where eager work ran (host tier or compiled), what
was compiled in the background and how long it took, and what came from the disk."""

from __future__ import annotations

from typing import Any

from funcgrad.core import disk_cache, tiers


def tier_stats() -> dict[str, Any]:
    """Counters of the execution tiers since the last :func:`reset_tier_stats`.

    Returns:
        A dict: ``mode`` (the tier mode in force), ``host_calls`` and
        ``host_equations`` (programs and equations run on the host tier),
        ``host_seconds``, ``fallback_equations`` (equations without a host rule, run
        compiled one by one), ``compiled_calls`` (calls of executables that replaced
        the host tier), ``background_compiles``, ``background_kept_host``
        (executables dropped after their first calls were slower than the host
        tier's), ``background_trials`` (executables judged in context: calls
        alternated between the tiers), ``background_seconds`` (the
        background thread's compile time), ``background_pending``,
        ``shape_templates`` (compat ops traced once at symbolic dimensions),
        ``template_calls`` (calls run through them at a new shape), and the
        persistent cache's ``disk_hits``/``disk_misses`` (XLA executables read from
        or not found on the disk).
    """
    disk = disk_cache.stats()
    return {**tiers.stats(), "disk_hits": disk["hits"], "disk_misses": disk["misses"]}


def reset_tier_stats() -> None:
    """Zero the counters :func:`tier_stats` reports."""
    tiers.reset_stats()
