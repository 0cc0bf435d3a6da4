"""The one randomness policy: every accepted input resolves to a recorded integer seed that reproduces the run."""

import numpy as np
import pytest

from privaudit.mechanisms import InvalidParameterError, ParameterTypeError
from privaudit.mechanisms.randomness import SEED_BOUND, draw_seed, resolve_seed, spawn_generators


@pytest.mark.parametrize("make", [lambda: 7, lambda: None, lambda: np.random.default_rng(3),
                                  lambda: np.random.SeedSequence(5), lambda: np.int64(11)])
def test_every_input_records_an_integer_seed_that_reproduces_the_root(make):
    root, seed = resolve_seed(make())
    assert type(seed) is int and 0 <= seed < SEED_BOUND
    again, same = resolve_seed(seed)
    assert same == seed
    assert np.array_equal(root.generate_state(4), again.generate_state(4))


def test_int_seed_is_kept_and_generators_are_consumed():
    assert resolve_seed(42)[1] == 42
    g = np.random.default_rng(0)
    assert resolve_seed(g)[1] != resolve_seed(g)[1]          # two draws from one generator differ
    assert resolve_seed(np.random.default_rng(0))[1] == resolve_seed(np.random.default_rng(0))[1]
    assert resolve_seed(np.random.SeedSequence(1))[1] == resolve_seed(np.random.SeedSequence(1))[1]


def test_children_are_spawned_and_independent():
    root, _ = resolve_seed(0)
    a, b = spawn_generators(root, 2)
    assert a.random() != b.random()
    root2, _ = resolve_seed(0)
    a2, _ = spawn_generators(root2, 2)
    assert a2.random() == np.random.default_rng(np.random.SeedSequence(0).spawn(1)[0]).random()


@pytest.mark.parametrize("bad, err", [(True, ParameterTypeError), (1.5, ParameterTypeError), ("0", ParameterTypeError),
                                      (-1, InvalidParameterError), (2**63, InvalidParameterError)])
def test_bad_seeds_are_refused_by_name(bad, err):
    with pytest.raises(err, match="random_state"):
        draw_seed(bad, "random_state")
