"""One template worker process, seen from the parent: start it, ask it, kill it on time.

A request is one line written to the worker's stdin and one line read back from
its stdout. The read blocks the calling thread; a watchdog thread kills the
process when the request's deadline passes, which ends the read with EOF. A
watchdog (rather than ``select`` on the pipe) works on every platform; it is
woken only when a deadline comes earlier than the one it already waits for, so
back-to-back requests cost a lock each, not a thread switch.
"""

from __future__ import annotations

import math
import subprocess
import threading
import time
from typing import IO, final

__all__ = ["TemplateWorker", "WorkerExited", "WorkerTimedOut"]


class WorkerTimedOut(Exception):
    """Raised when the worker did not answer before the deadline; it has been killed."""


class WorkerExited(Exception):
    """Raised when the worker ended (crashed, was killed, or closed) instead of answering."""

    def __init__(self, returncode: int | None) -> None:
        self.returncode = returncode
        how = "was stopped" if returncode is None else f"exited with code {returncode}"
        super().__init__(f"the template worker {how}")


@final
class TemplateWorker:
    """A started worker process and its watchdog.

    Args:
        argv: The command line that starts the worker.
        env: The worker's whole environment.
        ready: The line the worker writes once it can take requests.
        start_timeout: How long, in seconds, the worker may take to say ``ready``.
    """

    def __init__(self, argv: list[str], env: dict[str, str], *, ready: bytes, start_timeout: float) -> None:
        self._process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self._condition = threading.Condition()
        self._deadline: float | None = None
        self._waiting_until = math.inf  # what the watchdog sleeps until
        self._expired = False
        self._closed = False
        self._watchdog = threading.Thread(target=self._watch, name=f"template-worker-{self.pid}", daemon=True)
        self._watchdog.start()
        self._ready = ready
        self._start_timeout = start_timeout
        self._started = False

    @property
    def pid(self) -> int:
        """The worker's process id."""
        return self._process.pid

    @property
    def alive(self) -> bool:
        """Whether the process is still running."""
        return not self._closed and self._process.poll() is None

    def ask(self, line: bytes, timeout: float) -> bytes:
        """Send one request line and return the reply line.

        Raises:
            WorkerTimedOut: No reply within ``timeout`` seconds; the worker was killed.
            WorkerExited: The worker ended before replying.
        """
        if not self._started:
            # Starting (importing Jinja2) is not the template's time: it has its own allowance.
            if self._exchange(None, self._start_timeout) != self._ready:
                raise WorkerExited(self._process.poll())
            self._started = True
        return self._exchange(line, timeout)

    def close(self) -> None:
        """Kill the process, reap it and stop the watchdog (idempotent)."""
        with self._condition:
            self._closed = True
            self._condition.notify()
        self._process.kill()
        self._process.wait()
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                stream.close()
        if threading.current_thread() is not self._watchdog:
            self._watchdog.join()

    def _exchange(self, line: bytes | None, timeout: float) -> bytes:
        stdin, stdout = self._streams()
        deadline = time.monotonic() + timeout
        with self._condition:
            self._deadline, self._expired = deadline, False
            if deadline < self._waiting_until:
                self._condition.notify()
        try:
            if line is not None:
                stdin.write(line)
                stdin.flush()
            reply = stdout.readline()
        except (OSError, ValueError):  # a broken pipe, or a stream closed under us by close()
            reply = b""
        finally:
            with self._condition:
                self._deadline = None
                expired = self._expired
        if expired:
            raise WorkerTimedOut
        if not reply.endswith(b"\n"):
            self._process.kill()
            raise WorkerExited(None if self._closed else self._process.wait())
        return reply

    def _streams(self) -> tuple[IO[bytes], IO[bytes]]:
        stdin, stdout = self._process.stdin, self._process.stdout
        if stdin is None or stdout is None:  # pragma: no cover - both are pipes by construction
            raise WorkerExited(None)
        return stdin, stdout

    def _watch(self) -> None:
        with self._condition:
            while not self._closed:
                deadline = self._deadline
                if deadline is None:
                    self._waiting_until = math.inf
                    self._condition.wait()
                    continue
                remaining = deadline - time.monotonic()
                if remaining > 0:
                    self._waiting_until = deadline
                    self._condition.wait(remaining)
                    continue
                self._expired, self._deadline = True, None
                self._process.kill()
