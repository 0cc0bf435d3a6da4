"""The one randomness policy: every accepted input resolves to a recorded integer seed that reproduces the run."""

import ast
from pathlib import Path

import numpy as np
import pytest

from privaudit.mechanisms import InvalidParameterError, ParameterTypeError
from privaudit.mechanisms.randomness import (
    SEED_BOUND,
    draw_seed,
    int_seed,
    int_seeds,
    keyed_rng,
    keyed_seed_sequence,
    name_entropy,
    named_seed_sequence,
    resolve_seed,
    spawn_generators,
    torch_generator,
    torch_seed,
    uint32_seed,
)


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


# --------------------------------------------------------------------------- derived streams
# Each helper below replaced a copy elsewhere (audit/app/seeding.int_seed, modulated_server.keyed_rng,
# testing.node_seed, dpsgd.noise_generator/torch_generator, the experiments' _seed). The "legacy"
# expressions are those copies verbatim: the same draw keeps every report number at the same seed.
def test_int_seed_is_the_31_bit_draw_it_always_was():
    assert int_seed(np.random.default_rng(0)) == int(np.random.default_rng(0).integers(2**31 - 1))
    g = np.random.default_rng(1)
    draws = [int_seed(g) for _ in range(200)]
    assert all(type(s) is int and 0 <= s < 2**31 - 1 for s in draws) and len(set(draws)) == 200
    np.testing.assert_array_equal(int_seeds(np.random.default_rng(2), 5),
                                  np.random.default_rng(2).integers(0, 2**31, size=5))
    with pytest.raises(ParameterTypeError, match="rng"):
        int_seed(0)  # an integer seed is not drawn from: pass it on as is


def test_keyed_streams_are_the_spawned_children_whatever_the_root():
    root = np.random.SeedSequence(3)
    legacy = np.random.Generator(np.random.PCG64(np.random.SeedSequence(root.entropy, spawn_key=(1, 2))))
    assert keyed_rng(root, 1, 2).random() == legacy.random()
    assert np.array_equal(keyed_seed_sequence(root, 4).generate_state(2), root.spawn(5)[4].generate_state(2))
    # A root that is itself a child keeps its spawn key (the experiments' _seed dropped it, so two
    # children of one root gave identical streams).
    child = np.random.SeedSequence(3).spawn(2)[1]
    assert np.array_equal(keyed_seed_sequence(child, 2).generate_state(2), child.spawn(3)[2].generate_state(2))
    assert keyed_rng(child, 0).random() != keyed_rng(np.random.SeedSequence(3), 0).random()


def test_uint32_seed_is_the_first_state_word():
    ss = np.random.SeedSequence(9)
    assert uint32_seed(ss) == int(ss.generate_state(1)[0])
    words = {uint32_seed(c) for c in np.random.SeedSequence(0).spawn(100)}
    assert len(words) == 100 and all(0 <= w < 2**32 for w in words)
    with pytest.raises(ParameterTypeError, match="SeedSequence"):
        uint32_seed(9)


@pytest.mark.parametrize("call, err", [(lambda: keyed_seed_sequence(3, 1), ParameterTypeError),
                                       (lambda: keyed_rng(np.random.SeedSequence(0), -1), InvalidParameterError),
                                       (lambda: keyed_rng(np.random.SeedSequence(0), 1.5), ParameterTypeError),
                                       (lambda: named_seed_sequence(0, 7), ParameterTypeError),
                                       (lambda: named_seed_sequence(True, "a"), ParameterTypeError),
                                       (lambda: named_seed_sequence(-1, "a"), InvalidParameterError)])
def test_bad_keys_and_names_are_refused(call, err):
    with pytest.raises(err):
        call()


def test_named_streams_depend_on_seed_and_name_only():
    import hashlib

    node = "tests/test_x.py::test_y[a]"
    legacy = np.random.SeedSequence([5, int.from_bytes(hashlib.sha256(node.encode()).digest()[:8], "little")])
    assert np.array_equal(named_seed_sequence(5, node).generate_state(4), legacy.generate_state(4))
    assert name_entropy(node) == legacy.entropy[1]
    states = {tuple(named_seed_sequence(s, n).generate_state(2)) for s in (0, 1) for n in ("iwp data", "iwp dat", "")}
    assert len(states) == 6
    # 64 bits of the name: CRC-32 collides on these two names, the name entropy does not.
    import zlib

    assert zlib.crc32(b"plumless") == zlib.crc32(b"buckeroo")
    assert name_entropy("plumless") != name_entropy("buckeroo")


def test_torch_generators_record_their_seed_and_pass_torch_generators_through():
    torch = pytest.importorskip("torch")
    assert torch_generator(7).initial_seed() == 7
    g = torch.Generator().manual_seed(1)
    assert torch_generator(g) is g
    a = torch_generator(np.random.default_rng(0)).initial_seed()
    assert a == draw_seed(np.random.default_rng(0))
    with pytest.raises(ParameterTypeError, match="rng"):
        torch_generator("x", "rng")
    legacy = int(torch.randint(0, 2**62, (1,), generator=torch.Generator().manual_seed(3), dtype=torch.int64))
    gen = torch_generator(3)
    first, second = torch_seed(gen), torch_seed(gen)
    assert first == legacy and first != second and 0 <= second < 2**62
    with pytest.raises(ParameterTypeError, match="torch.Generator"):
        torch_seed(np.random.default_rng(0))


# --------------------------------------------------------------------------- one policy: no helper elsewhere
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("mechanisms", "learners", "attacks", "audit")
POLICY = PACKAGE_ROOT / "mechanisms" / "randomness.py"


def _int_constant(node: ast.AST) -> int | None:
    """The value of an integer constant expression (``2**31 - 1``, ``1 << 62``, ``4294967296``), else None."""
    try:
        value = ast.literal_eval(node)
    except ValueError:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow | ast.Sub | ast.Add | ast.LShift):
            left, right = _int_constant(node.left), _int_constant(node.right)
            if left is None or right is None:
                return None
            ops = {ast.Pow: pow, ast.Sub: int.__sub__, ast.Add: int.__add__, ast.LShift: int.__lshift__}
            return ops[type(node.op)](left, right)
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _callee(node: ast.Call) -> str:
    """``SeedSequence`` for ``np.random.SeedSequence(...)``, ``manual_seed`` for ``g.manual_seed(...)``..."""
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def seed_derivations(source: str) -> list[str]:
    """The seed derivations in ``source`` that belong in mechanisms/randomness.py.

    * ``SeedSequence(...)`` keyed (``spawn_key=``), fed a list/tuple of entropy (e.g. a seed and a
      hash of a name) or another sequence's ``.entropy``;
    * ``.generate_state(...)``: an integer seed taken from a SeedSequence;
    * ``torch.Generator(...)`` / ``.manual_seed(...)``: a torch generator made from an integer;
    * ``.integers(...)`` / ``randint(...)`` with a constant bound ≥ 2³¹ − 1: an integer seed drawn
      from a generator (data draws have data-sized bounds).
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name, where = _callee(node), f"line {node.lineno}"
        if name == "SeedSequence":
            keyed = any(k.arg == "spawn_key" for k in node.keywords)
            mixed = bool(node.args) and isinstance(node.args[0], ast.List | ast.Tuple)
            reused = any(isinstance(a, ast.Attribute) and a.attr == "entropy" for a in node.args)
            if keyed or mixed or reused:
                found.append(f"{where}: SeedSequence derived from a key, a name or another's entropy")
        elif name == "generate_state":
            found.append(f"{where}: integer seed from SeedSequence.generate_state")
        elif name == "manual_seed" or (name == "Generator" and isinstance(node.func, ast.Attribute)
                                       and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"):
            found.append(f"{where}: torch generator seeded by hand")
        elif name in ("integers", "randint"):
            bounds = [_int_constant(a) for a in node.args[:2]]
            if any(b is not None and b >= 2**31 - 1 for b in bounds):
                found.append(f"{where}: integer seed drawn with {name}")
    return found


def test_the_scan_finds_each_kind_of_seed_helper():
    """The helpers that used to live outside the policy module, verbatim: each must be found."""
    helpers = {
        "experiments _seed": "def _seed(root, *key):\n"
                             "    return int(np.random.SeedSequence(root.entropy, spawn_key=key).generate_state(1)[0])",
        "keyed_rng": "def keyed_rng(root, *key):\n"
                     "    ss = np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + key)\n"
                     "    return np.random.Generator(np.random.PCG64(ss))",
        "node_seed": "def node_seed(root, nodeid):\n    return np.random.SeedSequence([root, digest(nodeid)])",
        "crc32 seed": "def seed(self, name):\n    return draw_seed(np.random.SeedSequence([self.s, zlib.crc32(name)]))",
        "int_seed": "def int_seed(rng):\n    return int(rng.integers(2**31 - 1))",
        "noise_generator": "def noise_generator(gen):\n"
                           "    return np.random.default_rng(int(torch.randint(0, 2**62, (1,), generator=gen)))",
        "torch_generator": "def torch_generator(r):\n    return torch.Generator().manual_seed(draw_seed(r))",
        "seed vector": "seeds = rng.integers(0, 1 << 32, size=5)",
    }
    for name, source in helpers.items():
        assert seed_derivations(source), f"the scan misses the {name} helper"
    benign = ("x = rng.integers(0, n, size=5) + rng.integers(10)\n"
              "g = np.random.default_rng(seed).laplace(0.0, 1.0)\n"
              "children = np.random.SeedSequence(seed).spawn(4)\n"
              "gen = torch_generator(rng)\n")
    assert seed_derivations(benign) == []


def test_no_seed_helper_outside_the_policy_module():
    offenders = []
    for package in PACKAGES:
        for path in sorted((PACKAGE_ROOT / package).rglob("*.py")):
            if path == POLICY:
                continue
            for hit in seed_derivations(path.read_text(encoding="utf-8")):
                offenders.append(f"{path.relative_to(PACKAGE_ROOT)} {hit}")
    assert offenders == [], "seed derivations belong in mechanisms/randomness.py:\n" + "\n".join(offenders)


def test_the_policy_module_itself_is_scanned_as_holding_them():
    """Guards the scan's scope: the policy module does hold the derivations it refuses elsewhere."""
    assert len(seed_derivations(POLICY.read_text(encoding="utf-8"))) >= 5
