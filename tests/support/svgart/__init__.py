"""`svgart`: a page kind that lives only here, to show what a new kind is (tests/test_new_kind.py).

Its answer is a standalone SVG document (its own artifact type, `svg`), shown as an image on a
page by the page renderer; its channels are its own (`svg_shape`: the document a viewer can
scale; `svg_look`: its judge on the drawing as shown), its judge a role of its own with an offline
backend, its reward its own formula. Nothing outside this package names it: the test registers it
with one `register_kind` call.
"""

from support.svgart.kind import SVG, SvgArtKind

__all__ = ["SVG", "SvgArtKind"]
