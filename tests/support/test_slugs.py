import pytest

from thatch_cli.support.slugs import body_of, derive_label, passage_text, slugify


@pytest.mark.parametrize(
    "label, slug",
    [
        # examples from the original thatch
        ("Build Steps!", "build-steps"),
        ("Setup   --  tips", "setup-tips"),
        (" -Leading and trailing- ", "-leading-and-trailing-"),
        ("v1.2.3", "v123"),
        ("Café ünïcode notes", "café-ünïcode-notes"),
        ("日本語のメモ", "日本語のメモ"),
        ("", "x0"),
        ("!!!", "xpa9"),
        ("🎉", "x2qo9"),
        # more of the same rules
        ("already-a-slug", "already-a-slug"),
        ("snake_case_kept", "snake_case_kept"),
        ("Tabs\tand\nnewlines", "tabs-and-newlines"),
        ("  padded  ", "padded"),
        ("--double--dash--", "-double-dash-"),
        ("C++ / Rust: notes", "c-rust-notes"),
        ("Ünïcödé ÀÉÎ", "ünïcödé-àéî"),
        ("Ελληνικά ΣΟΦΟΣ", "ελληνικά-σοφος"),
        ("emoji 🎉 party", "emoji-party"),
        ("١٢٣ arabic digits", "١٢٣-arabic-digits"),
        ("\u00a0nbsp\u00a0", "nbsp"),
        # JavaScript's \s, not Python's: checked with node against the original's slugify
        ("Zero\ufeffwidth note", "zero-width-note"),
        ("\ufeffBOM first", "bom-first"),
        ("File\x1cseparator", "fileseparator"),
        ("Group\x1dsep\x1erecord\x1funit", "groupseprecordunit"),
        ("Next\x85line", "nextline"),
        ("\x1c", "xs"),
        ("\x85", "x3p"),
    ],
)
def test_slug_table(label, slug):
    assert slugify(label) == slug


def test_symbol_only_labels_hash_the_untrimmed_label():
    assert slugify(" !!! ") != slugify("!!!")
    assert slugify(" !!! ").startswith("x")
    assert slugify("???") != slugify("!!!")


@pytest.mark.parametrize(
    "content, label, body",
    [
        ("# Release steps\n\nrun make", "Release steps", "run make"),
        ("intro line\n## Deploy ##\nbody", "Deploy", "intro line\n## Deploy ##\nbody"),
        ("\n\n  first real line  \nsecond", "first real line", "\n\n  first real line  \nsecond"),
        ("word " * 40, " ".join(["word"] * 16) + "…", "word " * 40),
    ],
)
def test_derive_label(content, label, body):
    assert derive_label(content) == (label, body)


def test_passage_round_trip():
    text = passage_text("Label", "body\ntext")
    assert text == "# Label\n\nbody\ntext"
    assert body_of("Label", text) == "body\ntext"


def test_an_ascii_label_slugs_as_the_general_rule_does():
    """slugify's one-pass ASCII path keeps, joins and drops exactly what the
    character-by-character rule does, for every ASCII character in every
    position (a run of spaces, of dashes and of dropped characters)."""
    import random

    from thatch_cli.support.slugs import _TRIM, _dashed, _keep, _label_hash

    def general(label: str) -> str:
        text = "".join(ch for ch in _dashed(label.strip(_TRIM).lower()) if _keep(ch))
        while "--" in text:
            text = text.replace("--", "-")
        return text if text else "x" + _label_hash(label)

    every = [chr(i) for i in range(128)]
    rng = random.Random(27)
    labels = [f"a{ch}b" for ch in every] + [f"{ch} x {ch}{ch}" for ch in every]
    labels += ["".join(rng.choice(every + [" ", "-", "\t"]) for _ in range(rng.randint(0, 14))) for _ in range(5000)]
    assert [slugify(label) for label in labels] == [general(label) for label in labels]
    # What lowercases into ASCII (the Kelvin sign) takes the same path as its ASCII twin.
    assert slugify("\u212aelvin Notes") == general("\u212aelvin Notes") == "kelvin-notes"
