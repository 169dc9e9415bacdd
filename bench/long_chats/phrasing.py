"""How turns are worded: greetings, chit-chat, reactions, relative dates, British spelling, state facts."""

import random
import re

WHEN = (
    "yesterday", "last weekend", "last Friday", "on Saturday", "a few days ago", "last week",
    "this past Sunday", "two weekends ago", "on Tuesday night",
)  # fmt: skip

GREET = (
    "Hey {other}! Long time no chat, how's it going?",
    "Hi {other}! Good to hear from you. How have you been?",
    "Hey {other}, happy {weekday}! What's new with you?",
    "{other}! I was just thinking about you. How are things?",
    "Hiya {other}, sorry I went quiet, it's been a week. How are you?",
)
GREET_BACK = (
    "Hey {other}! I'm good, just swamped with work and the kids as usual. You?",
    "Hi {other}! Doing well, thanks. Busy but good. What about you?",
    "Hey! Things are pretty good here, {other}. Anything new with you?",
    "Oh hey {other}! I'm hanging in there. What's been going on?",
    "Hi! Great timing, I just sat down with a coffee. How are you doing?",
)
BYE = (
    "I have to run, {other}, but this was so nice. Talk soon!",
    "Okay, dinner's calling. Take care, {other}!",
    "Gotta go pick up the kids, chat later!",
    "It was great catching up, {other}. Let's not wait so long next time!",
    "Anyway, I should get some sleep. Night, {other}!",
)
BYE_BACK = (
    "Bye {other}! Take care of yourself.",
    "Talk soon, {other}! Have a good one.",
    "Same here! Good night!",
    "Sounds good, catch you later!",
    "Bye! Say hi to everyone for me.",
)
REACT = (
    "That's awesome, {other}! I'm so happy for you.",
    "Wow, I'd love to see pics!",
    "Haha, that sounds like so much fun.",
    "Aww, that's so sweet.",
    "No way, that's amazing!",
    "Sounds like a perfect day, honestly.",
    "I love that for you, {other}!",
    "That's so cool. You always find the best things to do.",
    "Oh wow, good for you!",
    "Ha, classic. I can totally picture it.",
)
THANKS = (
    "Thanks, {other}! It really was.",
    "Haha yes, I'll send some photos later!",
    "Thank you! It means a lot that you're interested.",
    "Right? I'm still smiling about it.",
    "It was! We needed that.",
)
SMALL_TALK = (
    ("Work has been nonstop lately, I barely have time to breathe.",
     "Ugh, I feel that. Make sure you take some time for yourself, {other}."),
    ("Any plans for the weekend?",
     "Not really, maybe just a lazy day at home. That sounds perfect right now."),
    ("How's the family doing?", "Everyone's good, thanks for asking! Just the usual chaos."),
    ("The weather has been so weird, sunny one day and freezing the next.",
     "Right? I never know what to wear anymore."),
    ("Have you been watching anything good lately?",
     "I just started a new series, I'll tell you if it's worth it."),
    ("I've been trying to get more sleep, it's not going well haha.",
     "Same. My phone is the enemy."),
    ("Do you ever feel like the weeks just fly by?",
     "All the time. It's already the middle of the month somehow."),
    ("I made a really good soup last night, I'll send you the recipe.",
     "Yes please! I need new dinner ideas."),
    ("We should plan a trip together sometime!", "Totally, let's actually do it this year."),
    ("The kids have been driving me a bit crazy this week.",
     "Haha, hang in there. They grow up so fast though!"),
    ("I've been thinking I need a new hobby, something just for me.",
     "You should! Something creative maybe?"),
    ("How's work treating you these days?", "Honestly not bad. Some days are long, but I like the people."),
    ("I finally cleaned out the garage, it only took three years.", "Haha, that's an achievement, {other}!"),
    ("Traffic this morning was unbelievable.", "Ugh, the worst. I've started leaving earlier."),
    ("I keep meaning to call my family more often.", "Same here. It's hard with everything going on."),
    ("I tried that new coffee place near the park.", "Ooh, was it good? I need a new spot."),
    ("Do you have any book recommendations?", "Let me think about it, I'll text you a few."),
    ("I'm so proud of how far you've come, {other}.", "Thank you, that really means a lot to me."),
    ("It's been a rough few days, but talking to you helps.", "I'm always here for you, you know that."),
    ("Remember when we used to stay up all night talking?", "Haha, I could never do that now!"),
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# The listener's follow-up after a passing mention: shares the common words of questions.
AGAIN_REACT = (
    "Haha, I bet! When are you going to do it again?",
    "That made me smile, {other}.",
    "Aww, that's the best kind of memory.",
    "Ha, I know exactly what you mean.",
)

# State facts: told early, changed later (the last telling is the current one).
JOB_FIRST = (
    "Work's been hectic, being {role} at {place} is no joke this month.",
    "I've been {role} at {place} for a while now and I still like it most days.",
)
JOB_CHANGE = (
    "Big news: I quit! Starting as {role} at {place} next month.",
    "So I took the plunge and switched jobs, I'm {role} at {place} now.",
)
JOB_FIRST_REACT = (
    "Sounds intense! Do you like the people you work with?",
    "Wow, I don't know how you do it, {other}.",
)
JOB_REACT = (
    "Wait, what?! Congrats, {other}! How do you feel about it?",
    "Whoa, congrats! That's a big step.",
)
HOME_FIRST = ("Our place is {kind} {where}, small but cozy.",)
HOME_MOVE = ("We moved! We're in {kind} in {where} now, there are boxes everywhere.",)
HOME_FIRST_REACT = ("Cozy is the best kind of place, honestly.", "That sounds lovely, {other}!")
HOME_REACT = ("Congrats on the new place! Do you like the neighborhood?",)
FAVORITES = (
    ("color", "My favorite color has always been {value}, my whole closet is {value} lol.",
     ("teal", "mustard yellow", "forest green", "lavender")),
    ("book", "Have you read {value}? It's my favorite book, I reread it every summer.",
     ("The Night Circus", "Little Women", "The Hobbit", "Circe")),
    ("food", "Honestly, {value} is my favorite food in the world. I could eat it every day.",
     ("pad thai", "lasagna", "dumplings", "fish tacos")),
)  # fmt: skip
FAVORITE_REACT = ("Ha, that's so you, {other}.", "Good taste! I'll remember that.")
SIBLING_INTRO = ("My {relation} {sibling} is coming to stay with us for a few days.",)
SIBLING_JOB = ("{sibling} just got hired as {job}, we're all so proud!",)
SIBLING_INTRO_REACT = ("Oh fun! Are you two close?", "Aww, that'll be nice. Say hi to {sibling} for me!")
SIBLING_REACT = ("That's great news! Tell {sibling} congrats from me.", "Yay for {sibling}!")

_BRITISH = {
    "favorite": "favourite", "favorites": "favourites", "color": "colour", "colorful": "colourful",
    "neighborhood": "neighbourhood", "neighbors": "neighbours", "center": "centre",
    "theater": "theatre", "traveled": "travelled", "traveling": "travelling", "practicing": "practising",
    "cozy": "cosy", "mom": "mum", "organized": "organised", "jewelry": "jewellery", "gray": "grey",
}  # fmt: skip
_WORD = re.compile(r"[A-Za-z]+")


def british(text: str) -> str:
    """Spell ``text`` the British way (a listed word keeps its capital)."""

    def swap(match: re.Match) -> str:
        word = match.group(0)
        spelled = _BRITISH.get(word.lower())
        if spelled is None:
            return word
        return spelled.capitalize() if word[0].isupper() else spelled

    return _WORD.sub(swap, text)


_SENTENCE = re.compile(r"(^|[.!?]\s+)([a-z])")


def fill(template: str, slots: dict[str, str]) -> str:
    """Fill ``template`` and capitalise each sentence's first letter."""
    text = template.format(**slots)
    return _SENTENCE.sub(lambda m: m.group(1) + m.group(2).upper(), text)


def pick(rng: random.Random, choices: tuple, used: set) -> str:
    """A choice not yet ``used`` in this session if one is left (a session never repeats a line)."""
    fresh = [choice for choice in choices if choice not in used] or list(choices)
    choice = rng.choice(fresh)
    used.add(choice)
    return choice
