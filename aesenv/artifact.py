"""Turn raw model text into an `Artifact`: the code to run, its kind, or why there is none.

Model answers wrap code in reasoning blocks, prose and fences, get cut off at the token
limit, or answer in a framework aesenv cannot render as a single file. Each case is
classified here once, so every consumer sees the same verdict and reason.
"""

from __future__ import annotations

import hashlib
import re
from enum import Enum

from pydantic import BaseModel

MAX_ARTIFACT_BYTES = 2_000_000

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_UNCLOSED_THINK = re.compile(r"^\s*<(think|thinking|reasoning)>(?!.*</\1>).*", re.S | re.I)
_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_DOC_START = re.compile(r"<!doctype\s+html|<html[\s>]", re.I)
_HTML_TAGS = re.compile(r"<(body|div|section|main|canvas|svg|style|script|h1|p)[\s>]", re.I)
_PY_HINT = re.compile(r"^\s*(import \w+|from \w+(\.\w+)* import |def \w+\(|plt\.)", re.M)
_JSX_HINT = re.compile(r"(^|\n)\s*(import React|export default|import \{[^}]*\} from ['\"]react)|"
                       r"return\s*\(\s*<\w|className=\{", re.S)
_VUE_HINT = re.compile(r"<template>[\s\S]*</template>[\s\S]*<script[\s\S]*(export default|setup)", re.I)

HTML_LANGS = {"html", "htm", "xhtml", ""}


class ArtifactKind(str, Enum):
    """What an answer holds. The built-in kinds' are the members below; a kind package adds its
    own with `register_artifact_kind` (an enum is closed, and a new artifact type must not be an
    edit here)."""

    HTML = "html"
    PYTHON = "python"
    UNSUPPORTED = "unsupported"
    EMPTY = "empty"


# What a channel calls an answer of each artifact kind in its reason ("no HTML page: ...").
ANSWER_NAMES: dict[ArtifactKind, str] = {ArtifactKind.HTML: "HTML page", ArtifactKind.PYTHON: "Python script"}


def register_artifact_kind(value: str, answer_name: str) -> ArtifactKind:
    """The `ArtifactKind` member `value`, added when new, with what a channel calls such an answer.
    Registering the same value and name again is a no-op; another name under a taken value is refused."""
    try:
        member = ArtifactKind(value)
    except ValueError:
        member = str.__new__(ArtifactKind, value)
        member._name_, member._value_, member.__objclass__ = value.upper(), value, ArtifactKind
        ArtifactKind._value2member_map_[value] = member
        ArtifactKind._member_map_[member._name_] = member
        ArtifactKind._member_names_.append(member._name_)
    if ANSWER_NAMES.setdefault(member, answer_name) != answer_name:
        raise ValueError(f"artifact kind {value!r} is already called {ANSWER_NAMES[member]!r}")
    return member


class Artifact(BaseModel):
    """The code extracted from one model answer, with the verdict on it."""

    kind: ArtifactKind
    code: str = ""
    reason: str = ""
    truncated: bool = False
    source_bytes: int = 0

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.code.encode("utf-8", "surrogatepass")).hexdigest()

    @property
    def renderable(self) -> bool:
        return self.kind is ArtifactKind.HTML


def _decode(raw: str | bytes) -> tuple[str, str]:
    if isinstance(raw, bytes):
        try:
            return raw.decode("utf-8"), ""
        except UnicodeDecodeError as exc:
            return raw.decode("utf-8", "replace"), f"invalid UTF-8 at byte {exc.start}"
    return raw, ""


def _looks_binary(text: str) -> bool:
    sample = text[:4096]
    if not sample:
        return False
    bad = sum(1 for c in sample if (ord(c) < 32 and c not in "\n\r\t\f") or c == "\ufffd")
    return bad / len(sample) > 0.05


def _classify_code(lang: str, code: str) -> tuple[ArtifactKind, str]:
    lang = lang.lower()
    if lang in {"jsx", "tsx", "javascript", "js", "typescript", "ts"} and _JSX_HINT.search(code):
        return ArtifactKind.UNSUPPORTED, "React/JSX component: needs a build step, not a single HTML file"
    if lang == "vue" or _VUE_HINT.search(code):
        return ArtifactKind.UNSUPPORTED, "Vue single-file component: needs a build step"
    if _JSX_HINT.search(code) and not _DOC_START.search(code):
        return ArtifactKind.UNSUPPORTED, "React/JSX component: needs a build step, not a single HTML file"
    if lang in {"python", "py", "python3"} or (lang == "" and _PY_HINT.search(code) and not _HTML_TAGS.search(code)):
        return ArtifactKind.PYTHON, ""
    if lang in HTML_LANGS and (_DOC_START.search(code) or _HTML_TAGS.search(code)):
        return ArtifactKind.HTML, ""
    if lang in {"css", "javascript", "js"}:
        return ArtifactKind.UNSUPPORTED, f"a lone {lang} snippet is not a page"
    return ArtifactKind.UNSUPPORTED, f"code block in {lang or 'an unknown language'} is not HTML"


def extract_artifact(raw: str | bytes, *, max_bytes: int = MAX_ARTIFACT_BYTES) -> Artifact:
    """Extract the page (or plot script) from a model answer.

    Order of preference: the largest fenced html block, then a bare document, then the
    largest other fenced block (classified). Reasoning blocks are dropped first.
    """
    text, decode_note = _decode(raw)
    size = len(text.encode("utf-8", "surrogatepass"))
    if _looks_binary(text):
        return Artifact(kind=ArtifactKind.UNSUPPORTED, reason="binary data, not text", source_bytes=size)
    if size > max_bytes:
        return Artifact(kind=ArtifactKind.UNSUPPORTED, source_bytes=size,
                        reason=f"answer is {size} bytes, over the {max_bytes}-byte limit")
    text = _THINK.sub("", text)
    if _UNCLOSED_THINK.match(text):
        return Artifact(kind=ArtifactKind.EMPTY, truncated=True, source_bytes=size,
                        reason="answer ended inside an unclosed reasoning block")
    if not text.strip():
        return Artifact(kind=ArtifactKind.EMPTY, reason="empty answer", source_bytes=size)

    blocks = [(m.group(1), m.group(2)) for m in _FENCE.finditer(text)]
    html_blocks = [b for b in blocks if b[0].lower() in HTML_LANGS and (_DOC_START.search(b[1]) or _HTML_TAGS.search(b[1]))]
    if html_blocks:
        lang, code = max(html_blocks, key=lambda b: len(b[1]))
        return _finish(ArtifactKind.HTML, code, size, decode_note, fence_closed=_fence_closed(text, code))

    doc = _DOC_START.search(text)
    if doc and not blocks:
        return _finish(ArtifactKind.HTML, text[doc.start():], size, decode_note, fence_closed=True)

    if blocks:
        lang, code = max(blocks, key=lambda b: len(b[1]))
        kind, reason = _classify_code(lang, code)
        if kind is ArtifactKind.UNSUPPORTED:
            return Artifact(kind=kind, reason=reason, code=code, source_bytes=size)
        return _finish(kind, code, size, decode_note, fence_closed=_fence_closed(text, code))

    if doc:
        return _finish(ArtifactKind.HTML, text[doc.start():], size, decode_note, fence_closed=True)
    kind, reason = _classify_code("", text)
    if kind is ArtifactKind.UNSUPPORTED and not _HTML_TAGS.search(text):
        reason = "prose with no code"
    if kind is ArtifactKind.HTML:
        return _finish(kind, text.strip(), size, decode_note, fence_closed=True)
    return Artifact(kind=kind, reason=reason, code=text if kind is ArtifactKind.PYTHON else "", source_bytes=size)


def _fence_closed(text: str, code: str) -> bool:
    end = text.find(code) + len(code)
    return text[end:].lstrip().startswith("```")


def _finish(kind: ArtifactKind, code: str, size: int, decode_note: str, *, fence_closed: bool) -> Artifact:
    code = code.strip("\n")
    truncated = not fence_closed
    notes = []
    if kind is ArtifactKind.HTML and re.search(r"<html[\s>]", code, re.I) and not re.search(r"</html\s*>", code, re.I):
        truncated = True
    if truncated:
        notes.append("output looks truncated (no closing fence or </html>)")
    if decode_note:
        notes.append(decode_note)
    return Artifact(kind=kind, code=code, truncated=truncated, reason="; ".join(notes), source_bytes=size)
