"""`Registry.register`: the same object again is a no-op; a different object under a taken name raises."""

import pytest

from aesenv.registry import Registry


def builtin():
    return "built-in"


def plugin():
    return "plugin"


def test_registering_the_same_object_twice_is_a_no_op():
    registry: Registry = Registry("widget")
    registry.register("a")(builtin)
    assert registry.register("a")(builtin) is builtin
    assert registry["a"] is builtin and len(registry) == 1


def test_a_different_object_under_a_taken_name_raises_and_keeps_the_first():
    registry: Registry = Registry("widget")
    registry.register("a")(builtin)
    with pytest.raises(ValueError) as err:
        registry.register("a")(plugin)
    message = str(err.value)
    assert "widget" in message and "'a'" in message
    assert f"{__name__}.builtin" in message and f"{__name__}.plugin" in message
    assert registry["a"] is builtin


def test_an_equal_but_distinct_object_is_still_a_different_object():
    registry: Registry = Registry("widget")
    registry.register("a")([1])
    with pytest.raises(ValueError, match="widget 'a'"):
        registry.register("a")([1])

