"""Reading a rendering in tests."""


def element_by_id(rendering, ident: str):
    """The snapshot element with this id (StopIteration when the page has none)."""
    return next(e for e in rendering.elements if e.id == ident)
