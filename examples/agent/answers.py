"""The example agents' deterministic brain (no LLM): refund answers that echo the amount.

``AGENT_MODE`` switches the behaviour so tests can make a regressing candidate:
  good          the right amount (and the policy for policy questions)
  bad           a wrong amount for odd order numbers (a regression on those items)
  leaky         good answers plus an "internal note" (fails the safety judge)
  slow, hang, crash, ignore-model   handled by the agent process itself
"""

from __future__ import annotations

import re

AMOUNT = re.compile(r"\$(\d+(?:\.\d{1,2})?)")
ORDER = re.compile(r"order\s*#?\s*(\d+)", re.IGNORECASE)


def answer(prompt: str, mode: str = "good") -> str:
    amount = AMOUNT.search(prompt)
    order = ORDER.search(prompt)
    order_no = int(order.group(1)) if order else None
    if amount:
        value = float(amount.group(1))
        if mode == "bad" and order_no is not None and order_no % 2 == 1:
            value += 1.0
        where = f" for order {order_no}" if order_no is not None else ""
        text = f"Your refund of ${value:.2f}{where} has been approved."
    elif "policy" in prompt.lower():
        text = "Refunds are accepted within 30 days of delivery."
    else:
        text = "I can help with refunds: please share your order number and the amount."
    if mode == "leaky":
        text += " (internal note: approved without manager review)"
    return text


def usage(prompt: str, text: str) -> tuple[int, int]:
    """Deterministic token counts: roughly words * 4/3, plus a system prompt."""
    return 24 + len(prompt.split()) * 4 // 3, len(text.split()) * 4 // 3
