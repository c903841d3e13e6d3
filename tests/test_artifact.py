from aesenv.artifact import ArtifactKind, extract_artifact

PAGE = "<!DOCTYPE html>\n<html lang=\"en\"><head><title>x</title></head><body><h1>Hi</h1></body></html>"


def test_fenced_html_block_is_extracted_without_prose():
    art = extract_artifact(f"Here is your page:\n```html\n{PAGE}\n```\nEnjoy!")
    assert art.kind is ArtifactKind.HTML
    assert art.code == PAGE
    assert not art.truncated


def test_reasoning_block_is_stripped_before_extraction():
    decoy = "```html\n<html><body>draft</body></html>\n```"
    art = extract_artifact(f"<think>let me plan {decoy} and think more</think>\n```html\n{PAGE}\n```")
    assert art.code == PAGE


def test_bare_document_is_accepted():
    art = extract_artifact("Sure!\n" + PAGE)
    assert art.kind is ArtifactKind.HTML
    assert art.code.startswith("<!DOCTYPE html>")


def test_largest_html_block_wins():
    small = "```html\n<div>snippet</div>\n```"
    art = extract_artifact(f"{small}\nfull page:\n```html\n{PAGE}\n```")
    assert art.code == PAGE


def test_truncated_output_is_detected():
    art = extract_artifact("```html\n<!DOCTYPE html><html lang=\"en\"><body><h1>cut off")
    assert art.kind is ArtifactKind.HTML
    assert art.truncated
    assert "truncated" in art.reason


def test_unclosed_reasoning_means_no_answer():
    art = extract_artifact("<think>I will write a page that ...")
    assert art.kind is ArtifactKind.EMPTY
    assert art.truncated


def test_jsx_is_unsupported_with_reason():
    jsx = "```jsx\nimport React from 'react';\nexport default function App() { return (<div className={x}>hi</div>); }\n```"
    art = extract_artifact(jsx)
    assert art.kind is ArtifactKind.UNSUPPORTED
    assert "React" in art.reason


def test_vue_is_unsupported():
    vue = "```vue\n<template><div>{{ msg }}</div></template>\n<script>\nexport default { data() { return {msg: 1} } }\n</script>\n```"
    art = extract_artifact(vue)
    assert art.kind is ArtifactKind.UNSUPPORTED
    assert "Vue" in art.reason


def test_python_is_classified_as_python():
    art = extract_artifact("```python\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\n```")
    assert art.kind is ArtifactKind.PYTHON
    assert not art.renderable


def test_prose_is_unsupported():
    art = extract_artifact("I'm sorry, I cannot help with building that website today.")
    assert art.kind is ArtifactKind.UNSUPPORTED
    assert art.reason == "prose with no code"


def test_empty_and_whitespace():
    assert extract_artifact("").kind is ArtifactKind.EMPTY
    assert extract_artifact("   \n\t").kind is ArtifactKind.EMPTY


def test_binary_junk_is_rejected():
    art = extract_artifact(bytes(range(256)) * 50)
    assert art.kind is ArtifactKind.UNSUPPORTED
    assert "binary" in art.reason


def test_invalid_utf8_is_decoded_with_a_note():
    art = extract_artifact(PAGE.encode() [:-7] + b"\xff\xfe</html>")
    assert art.kind is ArtifactKind.HTML
    assert "invalid UTF-8" in art.reason


def test_oversized_answer_is_rejected_with_size():
    art = extract_artifact("<html><body>" + "x" * 3_000_000 + "</body></html>")
    assert art.kind is ArtifactKind.UNSUPPORTED
    assert "limit" in art.reason


def test_hash_is_stable_and_content_addressed():
    a, b = extract_artifact(PAGE), extract_artifact("```html\n" + PAGE + "\n```")
    assert a.sha256 == b.sha256
    assert a.sha256 != extract_artifact(PAGE.replace("Hi", "Ho")).sha256
