"""GDPO and NaN-aware GRPO against hand computations (numpy and torch)."""

import math

import numpy as np
import pytest

from train.gdpo import gdpo_advantages, grpo_advantages

S = math.sqrt


def test_single_channel_is_group_normalized_with_unbiased_std():
    # group a: [1, 3] mean 2, std sqrt(2); group b: [0, 0, 6] mean 2, std sqrt(12)
    adv = gdpo_advantages(np.array([[1.0], [0.0], [3.0], [0.0], [6.0]]), np.ones((5, 1), bool),
                          np.array(["a", "b", "a", "b", "b"]))
    expected = [-1 / S(2), -2 / S(12), 1 / S(2), -2 / S(12), 4 / S(12)]
    np.testing.assert_allclose(adv, expected, rtol=1e-5)


def test_channels_applicable_to_some_rollouts_only():
    # channel 0 applies to all four: [0, 1, 2, 3] mean 1.5, std sqrt(5/3)
    # channel 1 applies to rows 0 and 2 only: [10, 20] mean 15, std sqrt(50)
    scores = np.array([[0.0, 10.0], [1.0, 99.0], [2.0, 20.0], [3.0, np.nan]])
    applicable = np.array([[1, 1], [1, 0], [1, 1], [1, 1]], bool)  # row 3: NaN counts as masked
    adv = gdpo_advantages(scores, applicable, np.zeros(4))
    c0 = (np.array([0, 1, 2, 3]) - 1.5) / S(5 / 3)
    c1_row0, c1_row2 = -5 / S(50), 5 / S(50)
    np.testing.assert_allclose(adv, [(c0[0] + c1_row0) / 2, c0[1], (c0[2] + c1_row2) / 2, c0[3]], rtol=1e-5)


def test_zero_variance_lone_and_empty_rollouts_get_zero():
    scores = np.array([[0.5, 0.2], [0.5, 0.9], [0.7, 0.0], [0.1, 0.4]])
    applicable = np.array([[1, 0], [1, 0], [1, 1], [0, 0]], bool)
    groups = np.array([0, 0, 1, 1])
    adv = gdpo_advantages(scores, applicable, groups)
    # group 0: channel 0 is constant -> 0; group 1: row 2 is alone in both channels -> 0; row 3 has nothing.
    np.testing.assert_array_equal(adv, [0.0, 0.0, 0.0, 0.0])


def test_torch_in_torch_out_and_same_numbers():
    torch = pytest.importorskip("torch")
    scores = np.array([[0.0, 1.0], [1.0, 0.0], [4.0, 2.0], [2.0, np.nan]])
    applicable = np.ones((4, 2), bool)
    groups = np.array([0, 0, 0, 0])
    expected = gdpo_advantages(scores, applicable, groups)
    got = gdpo_advantages(torch.tensor(scores, dtype=torch.float32), torch.tensor(applicable), groups)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5)


def test_grpo_leaves_nan_out_of_its_group():
    adv = grpo_advantages(np.array([1.0, np.nan, 3.0, 5.0]), np.array([0, 0, 0, 0]))
    # [1, 3, 5]: mean 3, std 2
    np.testing.assert_allclose(adv, [-1.0, 0.0, 0.0, 1.0], atol=1e-5)


def test_shape_errors_are_clear():
    with pytest.raises(ValueError, match=r"scores \[B, C\]"):
        gdpo_advantages(np.zeros(3), np.zeros(3, bool), np.zeros(3))


def test_grpo_on_a_torch_tensor_worked_by_hand_with_its_own_eps():
    """torch in, torch out (same dtype), and `eps` reaches the normalisation: groups [1, 2] and
    [3, 10], unbiased std 0.7071 and 4.9497, advantages ±0.5/(0.7071+0.5) and ±3.5/(4.9497+0.5)."""
    torch = pytest.importorskip("torch")
    scores = torch.tensor([1.0, 2.0, 3.0, 10.0], dtype=torch.float32)
    got = grpo_advantages(scores, [0, 0, 1, 1], eps=0.5)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32 and got.shape == (4,)
    a, b = 0.5 / (math.sqrt(0.5) + 0.5), 3.5 / (math.sqrt(24.5) + 0.5)
    assert got.tolist() == pytest.approx([-a, a, -b, b], abs=1e-6)
    assert grpo_advantages([1, 2, 3, 10], np.array([0, 0, 1, 1]), eps=0.5).tolist() == pytest.approx([-a, a, -b, b])


def test_gdpo_eps_is_added_to_the_std():
    got = gdpo_advantages(np.array([[0.0], [1.0]]), np.ones((2, 1), bool), [7, 7], eps=1.0)
    std = math.sqrt(0.5)
    assert got.tolist() == pytest.approx([-0.5 / (std + 1.0), 0.5 / (std + 1.0)])


@pytest.mark.parametrize("applicable_shape, groups", [((2, 3), [0, 0]), ((2, 2), [0, 0, 1])])
def test_gdpo_refuses_any_mismatched_shape(applicable_shape, groups):
    with pytest.raises(ValueError, match="want scores"):
        gdpo_advantages(np.zeros((2, 2)), np.ones(applicable_shape, bool), groups)


def test_gdpo_of_an_empty_batch_is_empty():
    got = gdpo_advantages(np.zeros((0, 3)), np.zeros((0, 3), bool), np.array([], dtype=int))
    assert isinstance(got, np.ndarray) and got.shape == (0,)
