"""Numbers as a reviewer reads them: units, sensible precision, no e-notation.

Every renderer and builder formats figures through these helpers, so a pass rate is always
``50 %``, a pass-rate change ``▼ 50 pp``, a latency ``401 ms`` / ``2.3 s``, a cost ``$0.00021``
and a relative change ``+1,567 %``. ``None`` (not known) is ``n/a``.
"""

from __future__ import annotations

import math
import re

from neens_action.api.values import real

NA = "n/a"

STATUS_WORDS = {
    "completed": "completed",
    "completed_with_regressions": "completed with regressions",
    "awaiting_traces": "waiting for traces",
    "running": "scoring",
    "failed": "failed",
    "cancelled": "cancelled",
    "completed_with_failures": "completed with failures",
}


finite = real  # a finite float, or None for anything else (bools, strings, NaN, None)


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def number(value: object, digits: int = 2) -> str:
    """``1567.0`` -> ``1,567``; ``0.5`` -> ``0.5``; never e-notation."""
    n = finite(value)
    if n is None:
        return NA
    return _trim(f"{n:,.{digits}f}")


def rate(value: object) -> str:
    """A fraction 0..1 as a percentage: ``0.5`` -> ``50 %``, ``0.4444`` -> ``44.4 %``."""
    n = finite(value)
    if n is None:
        return NA
    return f"{_trim(f'{n * 100:.1f}')} %"


def points(before: object, after: object) -> str:
    """The change between two fractions in points: ``▼ 50 pp`` / ``▲ 5 pp`` / ``±0 pp``."""
    b, a = finite(before), finite(after)
    if b is None or a is None:
        return ""
    delta = round((a - b) * 100, 1)
    if delta == 0:
        return "±0 pp"
    return f"{'▲' if delta > 0 else '▼'} {_trim(f'{abs(delta):.1f}')} pp"


def rate_vs(after: object, before: object) -> str:
    """``50 % ▼ 50 pp vs 100 %`` (or just ``50 %`` without a before value)."""
    text = rate(after)
    move = points(before, after)
    return f"{text} {move} vs {rate(before)}" if move else text


def score(value: object) -> str:
    """A judge score 0..1 on its scale: ``0.5`` -> ``0.50/1``."""
    n = finite(value)
    return NA if n is None else f"{n:.2f}/1"


def usd(value: object) -> str:
    """Dollars with enough significant digits for tiny costs: ``$0.00021``, ``$1.50``."""
    n = finite(value)
    if n is None:
        return NA
    if n == 0:
        return "$0"
    if abs(n) >= 1:
        return f"${n:,.2f}"
    digits = max(2, 1 - math.floor(math.log10(abs(n))) + 1)  # two significant digits
    text = _trim(f"{n:.{min(digits, 10)}f}")
    decimals = len(text.partition(".")[2])
    return "$" + (text + "0" * (2 - decimals) if decimals < 2 else text)  # $0.60, not $0.6


def ms(value: object) -> str:
    """Milliseconds: ``401 ms`` below 10 s, ``12.3 s`` above, ``0.31 ms`` below 1 ms (two
    significant digits: a sub-millisecond latency is never shown as ``0 ms``)."""
    n = finite(value)
    if n is None:
        return NA
    if abs(n) >= 10_000:
        return f"{_trim(f'{n / 1000:,.1f}')} s"
    if 0 < abs(n) < 1:
        digits = min(1 - math.floor(math.log10(abs(n))), 6)
        return f"{_trim(f'{n:.{digits}f}')} ms"
    return f"{n:,.0f} ms"


def seconds(value: object) -> str:
    n = finite(value)
    return NA if n is None else f"{_trim(f'{n:,.1f}')} s"


TIMES_FROM = 900.0  # a rise of 900 % or more reads as a factor: ``×10``, ``×1,351``


def relative(pct: object) -> str:
    """A relative change given in percent: ``+23 %`` / ``-12 %``; from +900 % on a factor
    (``+134,983 %`` of a tiny baseline reads ``×1,351``)."""
    n = finite(pct)
    if n is None:
        return NA
    if n >= TIMES_FROM:
        factor = 1 + n / 100
        return f"×{number(factor, 0 if factor >= 100 else 1)}"
    return f"{'+' if n >= 0 else '-'}{number(abs(n), 0 if abs(n) >= 10 else 1)} %"


def change_pct(before: object, after: object) -> str:
    """The relative change ``+23 %`` / ``-12 %`` / ``×1,351``; empty unless both sides were
    measured (a zero or unknown side has no relative change)."""
    b, a = finite(before), finite(after)
    if b is None or a is None or b == 0 or a == 0:
        return ""
    return relative((a - b) / abs(b) * 100)


_UNIT_GAP = re.compile(r"(?<=\d) (?=%|pp\b|ms\b|s\b)|(?<=[▼▲]) ")


def unbreakable(text: str) -> str:
    """``0 % ▼ 100 pp`` with no-break spaces between a number and its unit (and after the
    arrow), so a narrow page never wraps ``0`` from its ``%``."""
    return _UNIT_GAP.sub("\u00a0", text)


def p_value(value: object) -> str:
    """A p-value as read, never in e-notation: ``p = 0.032``, ``p < 0.001``."""
    n = finite(value)
    if n is None:
        return f"p = {NA}"
    return "p < 0.001" if n < 0.001 else f"p = {_trim(f'{n:.3f}')}"


def status(value: object) -> str:
    """A readable run status (``completed_with_regressions`` -> ``completed with regressions``)."""
    text = str(value or "").strip()
    return STATUS_WORDS.get(text, text.replace("_", " ") or NA)


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


_REGRESSIONS = re.compile(r"^regressions (\d+) > (?:max_regressions )?(\d+)$")
_PASS_RATE = re.compile(r"^pass rate ([\d.]+) ?(%?) < (?:min_pass_rate )?([\d.]+) ?(%?)$")


def _as_rate(number_text: str, percent: str) -> str:
    value = float(number_text)
    return rate(value / 100 if percent else value)


def readable_reason(reason: str) -> str:
    """A server gate reason in the report's units: ``pass rate 0.5000 < min_pass_rate 0.9``
    -> ``pass rate 50 % (min 90 %)``, ``regressions 2 > max_regressions 0`` -> ``regressions
    2 (max 0)``; any other reason unchanged."""
    text = reason.strip()
    m = _REGRESSIONS.match(text)
    if m:
        return f"regressions {m.group(1)} (max {m.group(2)})"
    m = _PASS_RATE.match(text)
    if m:
        return (f"pass rate {_as_rate(m.group(1), m.group(2))} "
                f"(min {_as_rate(m.group(3), m.group(4))})")
    return reason
