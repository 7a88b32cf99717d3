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
