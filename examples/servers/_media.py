"""Small media payloads the example servers answer with."""

from __future__ import annotations

import io
import wave


def tiny_wav() -> bytes:
    """Ten milliseconds of 8 kHz mono silence as a valid WAV file."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(8000)
        wav.writeframes(b"\x00\x00" * 80)
    return buffer.getvalue()
