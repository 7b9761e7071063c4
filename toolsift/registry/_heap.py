"""Keeping CPython's full garbage collections short once a large catalogue is registered.

A full collection walks every object the collector tracks. A catalogue of
10,000 tools adds some 60,000 of them (specs, schema dicts, index entries) to
the ~90,000 an imported toolsift already holds, and each full collection then
stops the event loop for 40-80 ms on a quiet 2-core machine (200-900 ms on a
busy one: ``benchmarks/bench_stall.py``), whichever task allocated the object
that set it off. These objects live as long as their
server, and so do the declarations exported from them for each format, so
after a large registration or export the settler moves every tracked object
into the collector's permanent generation (``gc.freeze``); later collections
walk only what was made since.

The price: a frozen object in a reference cycle is not reclaimed when it
becomes garbage (objects without cycles are freed by reference counting as
usual). So the settler collects before it freezes: young generations only
while nothing is frozen yet (a full pass then would be the very pause being
avoided), a full pass afterwards, which by then walks only unfrozen objects
and is short. The freeze moves the host's objects too, and no collection
reaches those of them that later become cyclic garbage: a library must not
decide that for its host, so the registry settles only when asked
(``ToolRegistry(settle_heap=True)``), as ``toolsift serve`` does in the
process it owns.
"""

from __future__ import annotations

import gc
import logging
import time

__all__ = ["HeapSettler"]

logger = logging.getLogger("toolsift.registry")

# Whether any settler of this process froze the heap (``gc.get_freeze_count`` walks it: too slow to ask).
_frozen_before = False


class HeapSettler:
    """Freezes the heap at the process's first registration, then after every ``threshold`` objects noted.

    Args:
        threshold: Tools registered or declarations exported between settlings;
            small servers coming and going never trigger one.
    """

    def __init__(self, threshold: int = 2_000) -> None:
        self.threshold = threshold
        self.settled = 0
        self._pending = 0

    def note(self, added: int) -> None:
        """Count tools registered or declarations exported, and settle once ``threshold`` is reached.

        An exported declaration weighs about what a registered tool does (a few
        containers the collector tracks), and a skill switch at 10,000 tools can
        export thousands. The first registration of the process settles at once:
        what imports and start-up made is the bulk of the heap, and nothing
        frozen yet means the next full collection would walk all of it.
        """
        if added <= 0:
            return
        self._pending += added
        if self._pending >= self.threshold or not _frozen_before:
            self._pending = 0
            self.settle()

    def settle(self) -> None:
        """Collect what is garbage now, then freeze what is left."""
        global _frozen_before
        started = time.perf_counter()
        gc.collect(2 if _frozen_before else 1)
        gc.freeze()
        _frozen_before = True
        self.settled += 1
        logger.debug("heap settled in %.1f ms", (time.perf_counter() - started) * 1000)
