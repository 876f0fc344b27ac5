"""WordNet 3.0 read offline (``edgevox.language.lexicon``): synonyms relate, antonyms never do."""

from __future__ import annotations

import pytest

from edgevox.language.lexicon import Relation, antonyms, attribute_nouns, informs, relation


@pytest.mark.parametrize(
    ("a", "b", "pos", "at_least"),
    [
        ("lift", "raise", "v", Relation.SYNONYM),
        ("fetch", "bring", "v", Relation.SYNONYM),
        ("stop", "halt", "v", Relation.SYNONYM),
        ("switch off", "turn off", "v", Relation.SYNONYM),
        ("go up", "climb", "v", Relation.NEAR),
        ("climbing", "climb", "v", Relation.SAME),
    ],
)
def test_words_of_one_meaning_are_related(a, b, pos, at_least):
    assert relation(a, b, pos) >= at_least


@pytest.mark.parametrize(("a", "b"), [("raise", "lower"), ("open", "close"), ("ascend", "descend"), ("joke", "land")])
def test_antonyms_and_unrelated_words_are_not(a, b):
    assert relation(a, b, "v") == Relation.NONE


def test_antonyms_and_attributes_come_from_wordnet():
    assert "lower" in antonyms("raise", "v")
    assert "height" in attribute_nouns("high") and "speed" in attribute_nouns("fast")


def test_the_wordnet_index_is_immutable_so_the_garbage_collector_does_not_walk_it():
    import gc

    from edgevox.language.lexicon import wordnet

    index = wordnet()._lemma_pos_offset_map
    gc.collect()
    entries = [index[w] for w in ("dog", "climb", "raise", "kitchen")]
    assert all(isinstance(offsets, tuple) for e in entries for offsets in e.values())
    assert not any(gc.is_tracked(e) for e in entries)  # ~130 ms less per full collection


@pytest.mark.parametrize(
    ("verb", "telling"),
    [
        ("tell", True),
        ("describe", True),
        ("show", False),
        ("report", True),
        ("explain", True),
        ("give", False),
        ("bring", False),
        ("list", False),
    ],
)
def test_verbs_of_telling_are_kinds_of_informing(verb, telling):
    assert informs(verb) is telling


def test_a_verb_near_another_only_in_a_rare_sense_is_not_near_in_its_frequent_senses():
    from edgevox.language.lexicon import near_in_frequent_senses

    assert relation("snap", "move", "v") == Relation.NEAR  # "move with a snapping sound", sense 4
    assert not near_in_frequent_senses("snap", "move", "v")
    assert near_in_frequent_senses("lift", "move", "v")  # "raise from a lower to a higher position"
    assert not near_in_frequent_senses("grab", "move", "v")  # "a grasping motion": its third sense


def test_a_verb_is_defined_by_its_genus_and_by_the_first_sense_of_its_genus():
    from edgevox.language.lexicon import defined_by

    assert defined_by("grab", "take")  # "take hold of"
    assert defined_by("head", "move")  # "to go or travel towards"; travel.v.01 is "travel, go, move"
    assert not defined_by("head", "water") and not defined_by("snap", "move")
    assert not defined_by("fire", "get")  # start.v.01 holds "get", whose first sense is another


@pytest.mark.parametrize(
    ("verb", "adjective"),
    [("straighten", "straight"), ("widen", "wide"), ("flatten", "flat"), ("open", None), ("listen", None)],
)
def test_a_verb_in_en_makes_its_adjective(verb, adjective):
    from edgevox.language.lexicon import made_adjective

    assert made_adjective(verb) == adjective


@pytest.mark.parametrize(("a", "b"), [("photo", "picture"), ("exposure", "photo")])
def test_a_noun_whose_most_frequent_sense_is_also_called_the_other_is_near_it(a, b):
    # photograph.n.01 is "photo, exposure, picture, pic": a photo is a picture, whatever rank
    # that sense has among the senses of "picture"
    assert relation(a, b, "n") >= Relation.NEAR


@pytest.mark.parametrize(("a", "b"), [("light", "lamp"), ("arm", "leg"), ("bin", "box")])
def test_nouns_no_frequent_sense_joins_stay_apart(a, b):
    assert relation(a, b, "n") == Relation.NONE
