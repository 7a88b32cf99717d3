"""What a sync refuses from the remote: oversized files, files not named
for their label's slug, files failing import's checks, trees over the size
limit; and credentials it holds back from the remote."""

from __future__ import annotations

import json

from thatch_cli.support import secrets
from thatch_cli.sync import records, tree

from helpers import git


def _plant(clone, tmp_path, files: dict[str, bytes]) -> None:
    """Push a commit adding `files` to the remote's memories ref."""
    other = tmp_path / "hostile"
    git(tmp_path, "clone", "-q", str(clone.remote), str(other))
    git(other, "fetch", "-q", "origin", "refs/thatch/memories:refs/heads/mem")
    git(other, "checkout", "-q", "mem")
    for path, data in files.items():
        (other / path).parent.mkdir(parents=True, exist_ok=True)
        (other / path).write_bytes(data)
    git(other, "add", "-A")
    git(other, "commit", "-qm", "planted")
    git(other, "push", "-q", "origin", "HEAD:refs/thatch/memories")


def _record(label: str, content: str, **extra) -> bytes:
    from thatch_cli.support.slugs import slugify

    data = {"slug": slugify(label), "label": label, "content": f"# {label}\n\n{content}",
            "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z",
            "author": "Eve <eve@example.com>", "hlc": "1767225600000.00000.e", **extra}
    return json.dumps(data).encode()


def test_bad_files_are_skipped_and_reported_the_rest_imported(team, tmp_path):
    ann, bob = team(2)
    ann.ok("remember", "Seed", "So the ref exists.")
    ann.sync()
    _plant(ann, tmp_path, {
        records.path_of("good-one"): _record("Good one", "Fine."),
        records.path_of("big"): _record("Big", "x" * (records.MAX_RECORD_BYTES + 10)),
        records.path_of("not-its-label"): _record("Another label", "Named for someone else."),
        "m/00/misplaced.json": _record("Misplaced", "Wrong shard."),
        records.path_of("bad-confidence"): _record("Bad confidence", "x", confidence=11),
        records.path_of("no-stamp"): _record("No stamp", "x", hlc="yesterday"),
        records.path_of("escape-label"): _record("Escape\x1b[2J label", "x"),
    })
    result = bob.run("sync", "--json")
    assert result.exit_code == 5, result
    report = result.json()
    reasons = {item["path"].rsplit("/", 1)[1]: item["reason"] for item in report["skipped"]}
    assert reasons["big.json"].endswith(f"the limit is {records.MAX_RECORD_BYTES}")
    assert "gives 'another-label'" in reasons["not-its-label.json"]
    assert "not where a memory's file belongs" in reasons["misplaced.json"]
    assert "confidence" in reasons["bad-confidence.json"] and "hlc" in reasons["no-stamp.json"]
    assert "control character" in reasons["escape-label.json"]
    assert bob.labels() == ["Good one", "Seed"]
    # What the remote holds that this thatch will not read is left there untouched.
    bob.ok("remember", "Bob's", "Pushes a new commit.")
    bob.sync()
    names = git(bob.path, "ls-tree", "-r", "--name-only", "refs/thatch/memories")
    assert "m/00/misplaced.json" in names and records.path_of("big") in names


def test_a_tree_over_the_limit_is_refused_whole(team, tmp_path, monkeypatch):
    ann, bob = team(2)
    for n in range(6):
        ann.ok("remember", f"Note {n}", "x")
    ann.sync()
    monkeypatch.setattr(tree, "MAX_FILES", 5)
    result = bob.run("sync")
    assert result.exit_code == 5 and "holds over 5 files" in result.stderr
    assert bob.labels() == []
    monkeypatch.setattr(tree, "MAX_FILES", 1000)
    monkeypatch.setattr(tree, "MAX_TREE_BYTES", 100)
    assert "MiB; nothing was read" in bob.run("sync").stderr


PLANTED = [
    "The staging deploy uses AKIAIOSFODNN7EXAMPLF as its key id.",
    "CI token: ghp_Zx9Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3W",
    "Slack bot: xoxb-2931841023-4829103847-QzP8Lm2Vk7Rt9Yw3Xn6Bc1Df",
    "stripe live key sk_live_4eC39HqLyjWDarjtT1zdp7dc9Q",
    "maps key AIzaSyB1x2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAr9Xq2LmP8vR4tYw7ZbN0cd3Fg5Hj6Kl7Mn8Op9Qr\n-----END RSA PRIVATE KEY-----",
    "DATABASE_URL=postgres://app:Zq8kP2vL9xWm4@db.internal:5432/app",
    'config: api_key = "k9Xq2LmP8vR4tYw7ZbN3cD5f"',
    "npm publish uses npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    # formats only gitleaks' maintained rules know
    "Linear: lin_api_k9Xq2LmP8vR4tYw7ZbN3cD5fH1jK6mQ0sT8uV2wY",
    "shop admin token 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",
]

ORDINARY = [
    "Fixed in commit 3f2a9c1e4b5d6a7f8e9d0c1b2a3f4e5d6c7b8a9f; see the release notes.",
    "The cache key is sha256(e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855).",
    "Request ids look like 123e4567-e89b-12d3-a456-426614174000 in the logs.",
    "Never commit the API key; it lives in the 1Password vault under 'staging'.",
    "The token refresh runs every 15 minutes (see auth/refresh.py).",
    "password = os.environ['DB_PASSWORD'] is how support/settings.py reads it.",
    "Docker image digest sha256:9b2a4c6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d3e5f7a9b1c",
    "Run `git log --oneline | head` and pick the abbreviated hash, e.g. 9fceb02.",
    "Use the example key AKIAIOSFODNN7EXAMPLE from the AWS docs in tests.",
]


def test_planted_secrets_are_caught_and_ordinary_notes_are_not():
    scanner = secrets.load()
    assert scanner.skipped == 0 and len(scanner.rules) > 200  # gitleaks' set and thatch's, every rule compiled
    missed = [text for text in PLANTED if not scanner.scan(text)]
    assert {f.rule for f in scanner.scan(PLANTED[-1])} == {"shopify-access-token"}
    flagged = {text: [f.rule for f in scanner.scan(text)] for text in ORDINARY if scanner.scan(text)}
    assert missed == [] and flagged == {}


def test_rules_in_gitleaks_go_syntax_are_read(tmp_path):
    extra = tmp_path / "gitleaks.toml"
    extra.write_text("[[rules]]\nid = 'acme-key'\nregex = '''\\b(acme-(?i)[a-z0-9]{24})\\b'''\n"
                     "keywords = ['acme-']\nentropy = 3\n")
    scanner = secrets.load(str(extra))
    assert [f.rule for f in scanner.scan("key acme-Q8z2M4k9X7p1V5n3B6c0L2d4")] == ["acme-key"]


def test_a_held_memory_stays_here_until_allowed(team):
    ann, bob = team(2)
    ann.ok("remember", "Staging access", PLANTED[1])
    ann.ok("remember", "Fine", ORDINARY[0])
    result = ann.run("sync")
    assert result.exit_code == 5
    assert "held back: 'Staging access' looks like it holds a credential" in result.stderr
    assert "ghp_…" in result.stderr and "Zx9Ab3" not in result.stderr  # never the secret itself
    bob.sync()
    assert bob.labels() == ["Fine"]
    assert ann.run("sync", "--allow", "Staging access").exit_code == 0
    bob.sync()
    assert bob.labels() == ["Fine", "Staging access"]


def test_a_save_reads_the_bundled_rules_without_parsing_toml():
    """The rules `remember` checks come from credential_rules.py (generated
    from the TOML files): a save never pays for tomllib and the Go-pattern
    translation."""
    import subprocess
    import sys

    code = ("import sys; from thatch_cli.support import secrets; "
            "found = secrets.warning('deploy', 'stripe live key sk_live_4eC39HqLyjWDarjtT1zdp7dc9Q'); "
            "print(bool(found), 'tomllib' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["True", "False"]
