"""The rules of ``edgevox.language.intent``, one row each (see its module docstring)."""

from __future__ import annotations

import pytest

from edgevox.language.clauses import split_clauses
from edgevox.language.frames import read_frame
from edgevox.language.intent import analyze, answer_polarity

INTENT_RULES = [
    # (utterance, kind, the clause to act on for commands or None)
    # -- commands: verb first, elliptical, polite and indirect requests
    ("turn left", "command", "turn left"),
    ("oh move forward two", "command", "oh move forward two"),
    ("lights off in the bedroom", "command", "lights off in the bedroom"),
    ("emergency stop", "command", "emergency stop"),
    ("please turn right", "command", "please turn right"),
    ("can you turn left", "command", "can you turn left"),
    ("could you please open the door?", "command", "could you please open the door?"),
    ("would you please go to the office", "command", "would you please go to the office"),
    ("will you fetch my keys", "command", "will you fetch my keys"),
    ("I want you to go to the kitchen", "command", "I want you to go to the kitchen"),
    ("I need the kitchen light on", "command", "I need the kitchen light on"),
    ("I'd like the blinds open", "command", "I'd like the blinds open"),
    ("we should go to the office", "command", "we should go to the office"),
    ("you need to charge now", "command", "you need to charge now"),
    ("let's go to the garden", "command", "let's go to the garden"),
    ("the kitchen lights on please", "command", "the kitchen lights on please"),
    ("don't forget to turn off the lights", "command", "don't forget to turn off the lights"),
    ("if you could turn left", "command", "if you could turn left"),
    ("do a little dance", "command", "do a little dance"),
    ("do something with your light", "command", "do something with your light"),
    ("pick the stripes and do the back lawn", "command", "pick the stripes and do the back lawn"),
    ("have a look at the door", "command", "have a look at the door"),
    ("be quiet", "command", "be quiet"),
    (
        "turn your head 30 degrees to the left",
        "command",
        "turn your head 30 degrees to the left",
    ),  # "your" opens an object
    # -- the command clause of several
    ("don't go to the kitchen, go to the office", "command", "go to the office"),
    ("I'm cold, close the window", "command", "close the window"),
    ("turn on the light because it is dark", "command", "turn on the light"),
    ("turn left and don't go forward", "command", "turn left"),
    ("go forward, but not too fast", "command", "go forward"),
    # -- negation
    ("don't go to the kitchen", "negated", None),
    ("do not open the door", "negated", None),
    ("never turn the kitchen light on", "negated", None),
    ("please never drive backwards", "negated", None),
    ("there's no need to pick anything up", "negated", None),
    ("no need to set a timer", "negated", None),
    ("forget about the timer", "negated", None),
    ("avoid the bathroom", "negated", None),
    ("I don't want you to move", "negated", None),
    ("you shouldn't open the window", "negated", None),
    ("go to the kitchen, actually no, don't", "negated", None),
    ("turn left, never mind", "negated", None),
    # -- questions
    ("are the kitchen lights still on", "question", None),
    ("is the door open?", "question", None),
    ("did you turn the lamp off", "question", None),
    ("what is the gripper for", "question", None),
    ("what does the set timer function do", "question", None),
    ("how far is the kitchen", "question", None),
    ("where is the charging dock", "question", None),
    ("why did you stop", "question", None),
    ("can I open the window myself", "question", None),
    ("do you see the door", "question", None),
    ("do the lights work", "question", None),
    ("are you able to go upstairs", "question", None),
    ("turn left?", "question", None),
    # -- reports (past tense) and statements
    ("yesterday I drove to the office", "report", None),
    ("the kids switched the lamp off", "report", None),
    ("my dad picked up the groceries", "report", None),
    ("I switched the bedroom light off before bed", "report", None),
    ("we went to the kitchen an hour ago", "report", None),
    ("last night the robot moved a lot", "report", None),
    ("left the kitchen an hour ago", "report", None),
    ("the office is too cold", "statement", None),
    ("I love the kitchen in this house", "statement", None),
    ("My room is a mess.", "statement", None),
    ("it is dark in here", "statement", None),
    ("you are in the kitchen", "statement", None),
    # -- hypotheticals and conditions
    ("what would you do if I asked you to go outside", "hypothetical", None),
    ("if it gets dark turn on the light", "hypothetical", None),
    ("if it gets dark, turn on the light", "hypothetical", None),
    ("turn on the light when I get home", "hypothetical", None),
    ("once we are done, take the cup to the sink", "command", "take the cup to the sink"),  # for later: asked
    ("open the gate once the car is out", "hypothetical", None),
    ("as soon as she leaves, dim the lights", "command", "dim the lights"),  # for later: asked
    ("spin around once more", "command", None),
    ("what would happen if you turned left", "hypothetical", None),
    ("suppose you drove ten meters", "hypothetical", None),
    ("imagine you could fly", "hypothetical", None),
    ("unless I say so, stay here", "hypothetical", None),
    ("in case it rains, close the window", "hypothetical", None),
    ("what if you opened the gripper", "hypothetical", None),
    # -- a bare negation negates the clause after it; a reporting verb quotes it
    ("do not, under any circumstances, open the window", "negated", None),
    ("never, ever drive into the pool", "negated", None),
    ("Don't. Open. The. Door.", "negated", None),
    ("not yet, close the blinds first", "negated", None),
    ("the poster says: jump three times", "report", None),
    ("the recipe says stir for two minutes", "statement", None),
    # -- stories, games, suppositions
    ("in theory you could open the fridge", "hypothetical", None),
    ("pretend you are flying to the moon", "hypothetical", None),
    ("let's say you closed the door", "hypothetical", None),
    ("in the movie the dog opened the gate", "hypothetical", None),
    # -- subjects that are not the robot: nouns, gerunds, infinitives, verb phrases
    ("the kids set the alarm for seven", "statement", None),
    ("my aunt usually waters the roses", "statement", None),
    ("farmers often plant corn in spring", "statement", None),
    ("grandpa closed the garage door", "report", None),
    ("my cousin used to fly drones", "report", None),
    ("garage lights are still on", "statement", None),
    ("closing the door is hard for a robot", "statement", None),
    ("to open a jar you need strong hands", "statement", None),
    ("open the door is what she always says", "statement", None),
    ("vacuum mode uses a lot of power", "statement", None),
    # -- questions about ability, alternative questions
    ("can you even open the garage door", "question", None),
    ("could you open the garage or is it locked", "question", None),
    # -- a negator after a determiner or a particle opens a name, it negates no verb
    ("turn on do not disturb", "command", "turn on do not disturb"),
    ("switch off the do not disturb mode", "command", "switch off the do not disturb mode"),
    ("remember to not go there", "negated", None),
    # -- a clause that is only an interjection counts for nothing; reasons do not undo a command
    ("whoa, close the door", "command", "close the door"),
    ("follow me, Rex", "command", "follow me"),  # a name alone is the one spoken to
    ("two sugars in my coffee, please", "command", "two sugars in my coffee"),
    ("emergency brake now, there's a cat in front of you", "command", "emergency brake now"),
    # -- a verb whose object is a whether/if clause asks a yes/no question (an indirect question)
    ("check whether the back door is locked", "question", None),
    ("see if the window is open", "question", None),
    ("could you check if the oven is off", "question", None),
    # -- a verb that names reading tools asks to read its object
    ("check your battery", "question", None),
    ("please read the pressure gauge", "question", None),
    ("get the red cup", "command", "get the red cup"),
    ("open the door if it is locked", "hypothetical", None),
    # -- a verb of telling addressed to the speaker asks for information, as a question does
    ("tell me your battery level", "question", None),
    ("could you tell us where you are", "question", None),
    ("let me know how full the bin is", "question", None),
    ("remind me to water the plants", "command", "remind me to water the plants"),
    ("remind me in five minutes", "command", "remind me in five minutes"),
    ("give me the red cup", "command", "give me the red cup"),
    ("tell me a joke about robots", "command", "tell me a joke about robots"),  # made up, no state
    # -- a modal and "you" alone after a request is a tag that softens it
    ("close the window, would you", "command", "close the window"),
    ("close the window, can you?", "command", "close the window"),
    # -- verbless and polite forms still act
    ("garage lights off", "command", "garage lights off"),
    ("the left one", "command", "the left one"),  # a word right after a determiner is no verb
    ("robot, close the door", "command", None),
    ("if you would close the door", "command", None),
]


@pytest.mark.parametrize(
    ("text", "confirm"),
    [
        ("open the garage door later", "later"),
        ("tomorrow water the roses", "later"),
        ("after lunch vacuum the hall", "later"),
        ("at six close the blinds", "later"),
        ("in ten minutes close the blinds", "duration"),
        ("maybe you could close the blinds", "hedged"),
        ("once we are done, take the cup to the sink", "later"),  # waits for an event
        ("as soon as she leaves, dim the lights", "later"),
        ("Maybe you could speed up a bit?", "hedged"),  # a hedged request said rising: no inversion
        ("Maybe lower the mast a bit?", "hedged"),
        ("close the blinds", ""),
    ],
)
def test_a_command_for_later_or_a_hedged_one_is_asked_about_before_acting(text, confirm):
    intent = analyze(text)
    assert intent.kind == "command" and intent.confirm == confirm, intent


@pytest.mark.parametrize(("text", "kind", "clause"), INTENT_RULES)
def test_intent_rules(text, kind, clause):
    intent = analyze(text)
    assert intent.kind == kind, (text, intent)
    if clause is not None:
        assert intent.clause == clause
    assert intent.acts == (kind == "command")


def test_the_rule_table_covers_every_kind_with_several_rows():
    kinds = [k for _, k, _ in INTENT_RULES]
    for kind in ("command", "negated", "question", "report", "statement", "hypothetical"):
        assert kinds.count(kind) >= 5, kind


def test_a_question_about_what_a_thing_is_or_does_may_not_be_answered_by_a_query_tool():
    assert not analyze("what is the gripper for").may_query
    assert not analyze("how does the timer work").may_query
    assert analyze("what's your battery level").may_query
    assert analyze("how high is the arm").may_query


def test_clauses_split_at_punctuation_and_clause_conjunctions_but_not_inside_numbers():
    assert split_clauses("don't go to the kitchen, go to the office") == ["don't go to the kitchen", "go to the office"]
    assert split_clauses("turn left then go forward") == ["turn left", "then go forward"]
    assert split_clauses("move forward two and a half meters") == ["move forward two and a half meters"]
    assert split_clauses("set a timer for a hundred and five minutes") == ["set a timer for a hundred and five minutes"]
    assert split_clauses("move 2.5 meters") == ["move 2.5 meters"]
    assert split_clauses("turn left and don't stop") == ["turn left", "and don't stop"]
    # a conjunct of a verb that English has as a verb, followed as a verb is (the tagger said noun)
    assert split_clauses("tilt up fifteen and pan left twenty") == ["tilt up fifteen", "and pan left twenty"]
    assert split_clauses("bring me salt and pepper") == ["bring me salt and pepper"]


@pytest.mark.parametrize(
    ("answer", "polarity"),
    [
        ("yes", True),
        ("yes please", True),
        ("yeah", True),
        ("sure", True),
        ("do it", True),
        ("go ahead", True),
        ("okay", True),
        ("no", False),
        ("nope", False),
        ("no thanks", False),
        ("cancel", False),
        ("never mind", False),
        ("don't", False),
        ("yes but ninety degrees", None),
        ("two meters", None),
        ("the bedroom", None),
        ("turn left", None),
    ],
)
def test_yes_and_no_answers(answer, polarity):
    assert answer_polarity(answer) is polarity


@pytest.mark.parametrize(
    ("name", "description", "query"),
    [
        ("get_battery", "Report the battery charge level.", True),
        ("read_sensor", "", True),
        ("arm_state", "Report the arm's height.", True),
        ("check_door", "", True),
        ("move", "Move or drive straight forward.", False),
        ("set_light", "Switch the lights on or off.", False),
        ("pick", "Pick up one of the blocks.", False),
    ],
)
def test_query_tools_are_named_by_a_reading_verb(name, description, query):
    assert read_frame(name, description, {"properties": {}}).reads is query
