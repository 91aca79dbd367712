"""Message builders shared by the history tests: short, readable conversations."""

from __future__ import annotations

from ctx_lsp.history.messages import message_tokens
from ctx_lsp.tokens import counter_for

COUNTER = counter_for()


def system(text: str = "You are a careful coding agent.") -> dict:
    return {"role": "system", "content": text}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant(text: str | None, *calls: tuple[str, str, str]) -> dict:
    message: dict = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}} for cid, name, args in calls
        ]
    return message


def tool(call_id: str, text: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def cost(message: dict) -> int:
    return message_tokens(message, COUNTER)


def simple_turns(n: int, words: int = 20) -> list[dict]:
    """`n` turns of user question → assistant answer, each about `words` words long."""
    out = []
    for i in range(n):
        out.append(user(f"question {i}: " + "please look at this " * (words // 4)))
        out.append(assistant(f"answer {i}: " + "here is what I found " * (words // 5)))
    return out
