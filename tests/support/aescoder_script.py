"""One scripted model for the local test server that plays every AesCoder role at once: the
policy (answers with PAGE), the VLM static judge (k samples 72, 73, 74, …) and the VLM web agent
(a plan, a click on the first labeled element, then a verdict of 1 and `finish`)."""

from __future__ import annotations

from support.openai_server import choices

PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" /><title>Demo</title><style>body{font-family:sans-serif;margin:40px}
button{padding:8px 16px}</style></head><body><h1>Scripted answer</h1><p id="out">Ready.</p>
<button onclick="document.getElementById('out').textContent='Clicked!'">Try it</button></body></html>"""

STATIC_JUDGE_MARK = "senior product designer"   # in the static judge's system prompt
WEB_AGENT_MARK = "You test generated web pages"  # in the web agent's system prompt


def role_of(request) -> str:
    system = request.messages[0]["content"] if request.messages and request.messages[0]["role"] == "system" else ""
    if STATIC_JUDGE_MARK in system:
        return "static"
    if WEB_AGENT_MARK in system:
        return "agent"
    return "policy"


def scripted_aescoder(request):
    role = role_of(request)
    if role == "static":
        samples = [{"alignment": 30 + i, "aesthetics": 22, "structure": 20, "total": 72 + i, "rationale": "ok"}
                   for i in range(request.n)]
        return choices(*samples)
    if role == "agent":
        last = request.messages[-1]["content"]
        text = " ".join(p.get("text", "") for p in last) if isinstance(last, list) else last
        if "Write the plan" in text:
            return {"plan": ["press the button"]}
        if "This is your first turn" in text:
            return {"previous_score": None, "action": "click [0]" if "[0]" in text else "wait"}
        return {"previous_score": 1, "previous_reason": "it responded", "action": "finish"}
    return f"Here it is.\n```html\n{PAGE}\n```"
