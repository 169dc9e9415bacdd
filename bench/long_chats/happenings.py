"""What people tell each other: things that happened, each with its phrasings and the questions it answers.

A happening is told in one of two ways: in one turn (``core``), or asked
about by the other speaker (``ask``, naming it) and answered by the teller
referring back to it (``answer``). The other speaker then reacts with a
follow-up (``follow``) that the teller answers with a detail (``detail``);
later sessions mention it again in passing (``again``) without the detail.
Placeholders: ``{when}`` a relative time, ``{kid}`` one child, ``{kids}`` the
children, ``{partner}``, ``{other}`` the listener's nickname, and the
happening's own slots. Questions use ``{X}`` (full name), ``{poss}``,
``{subj}`` and the slots; they are written apart from the turns (other
words, other inflections, American spelling).
"""

from dataclasses import dataclass

SINGLE_HOP, TEMPORAL = "single_hop", "temporal"


@dataclass(frozen=True)
class Happening:
    key: str
    group: str  # what a multi-hop question gathers: kids, trip, class, show, home_life
    traits: tuple[str, ...]  # what an open-domain question infers from it
    slots: dict[str, tuple[str, ...]]
    core: tuple[str, ...]
    ask: tuple[str, ...]
    answer: tuple[str, ...]
    follow: tuple[str, ...]
    detail: tuple[str, ...]
    again: tuple[str, ...]
    questions: tuple[tuple[str, str, str], ...]  # (category, "core" | "detail", template)
    needs_kids: bool = False


KIDS = (
    Happening(
        "camping",
        "kids",
        ("outdoors",),
        {"place": ("Pine Lake", "Bear Creek", "the state forest")},
        (
            "We took the kids camping at {place} {when}! First time sleeping in a tent for {kid}.",
            "So {when} we packed up the car and went camping out at {place} with the kids.",
        ),
        ("Did you guys end up going camping with the kids?", "How was the camping trip, did it happen?"),
        (
            "We did! Went up {when}, it rained a bit but nobody cared.",
            "Yes, finally, {when}! The kids were thrilled.",
        ),
        (
            "That sounds so fun, {other}! How did the kids like sleeping outside?",
            "Aww I love that. Did the kids have fun?",
        ),
        ("They loved it. {kid} spotted a {animal} right by the tent and won't stop talking about it.",),
        ("The kids keep asking when we're going camping again, haha.",),
        (
            (SINGLE_HOP, "core", "Where did {X} go camping with {poss} children?"),
            (TEMPORAL, "core", "When did {X} go on a camping trip with the family?"),
            (SINGLE_HOP, "detail", "What wild animal did {X}'s child see near the tent?"),
            (SINGLE_HOP, "core", "Which campsite did {X}'s family stay at?"),
        ),
        needs_kids=True,
    ),
    Happening(
        "museum",
        "kids",
        ("curious",),
        {"museum": ("the natural history museum", "the science museum")},
        (
            "Took the kids to {museum} {when}, {kid} was obsessed with the dinosaur skeletons.",
            "We spent the afternoon at {museum} {when}, the kids had a blast.",
        ),
        ("Weren't you taking the kids to {museum}?",),
        ("Yep, we went {when}! Totally worth the ticket price.",),
        ("Oh fun! What did the kids like most there?", "Nice, {other}! Were the kids into it?"),
        ("{kid} spent ages at the {exhibit} exhibit, we practically had to drag {kid} out.",),
        ("{kid} is still drawing pictures from the museum day.",),
        (
            (SINGLE_HOP, "core", "Which museum did {X} visit with {poss} kids?"),
            (TEMPORAL, "core", "When did {X} bring the children to the museum?"),
            (SINGLE_HOP, "detail", "Which exhibit did {X}'s kid love the most?"),
            (TEMPORAL, "core", "When did {X}'s kids see the dinosaur bones?"),
        ),
        needs_kids=True,
    ),
    Happening(
        "beach",
        "kids",
        ("outdoors",),
        {"beach": ("Crescent Beach", "the lake shore", "Sandy Point")},
        ("We had a beach day at {beach} {when}, sun, sandcastles, the works.",),
        ("Did you make it to the beach with the kids in the end?",),
        ("We did, {when}! The water was freezing but the kids didn't care.",),
        ("Love it! Did they build sandcastles?", "That's awesome! How did the little ones like the water?"),
        ("{kid} built a huge sandcastle and then found a {shell} to bring home.",),
        ("Still finding sand in the car from that beach trip lol.",),
        (
            (SINGLE_HOP, "core", "Which beach did {X} and the kids go to?"),
            (TEMPORAL, "core", "When did {X} spend a day at the seaside with the kids?"),
            (SINGLE_HOP, "detail", "What did {X}'s kid bring back from the seashore?"),
        ),
        needs_kids=True,
    ),
    Happening(
        "pottery",
        "kids",
        ("creative",),
        {"piece": ("a lopsided bowl", "a little mug", "a plate with handprints")},
        ("The kids and I did a pottery workshop {when}. We each made something out of clay!",),
        ("How was that clay workshop you signed the kids up for?",),
        ("So messy and so fun. We went {when} and everyone made something.",),
        (
            "Haha I can imagine the mess! What did you make?",
            "That's so cute, {other}. What did you all make?",
        ),
        ("I made {piece}. It's wonky but I love it.",),
        ("The pottery from the workshop is finally out of the kiln!",),
        (
            (SINGLE_HOP, "detail", "What did {X} create at the clay class?"),
            (TEMPORAL, "core", "When did {X} do pottery with {poss} kids?"),
            (SINGLE_HOP, "core", "What kind of workshop did {X} attend with the kids?"),
        ),
        needs_kids=True,
    ),
    Happening(
        "zoo",
        "kids",
        ("animals",),
        {"zoo": ("the city zoo", "the wildlife park")},
        ("We went to {zoo} {when}, {kid}'s been begging for months.",),
        ("Did you finally take {kid} to the zoo?",),
        ("Finally, yes! {when}. It was packed but worth it.",),
        ("Yay! What was the favorite animal?", "So fun! Which animals did the kids like?"),
        ("{kid} couldn't stop watching the {animal2}, we stood there for like half an hour.",),
        ("{kid} now wants to be a zookeeper, thanks to that trip.",),
        (
            (SINGLE_HOP, "core", "Where did {X} take {poss} kid that they had been begging to visit?"),
            (TEMPORAL, "core", "When did {X} visit the zoo with the children?"),
            (SINGLE_HOP, "detail", "Which animals did {X}'s child watch for a long time?"),
            (SINGLE_HOP, "core", "Which zoo did {X}'s family go to?"),
        ),
        needs_kids=True,
    ),
    Happening(
        "swimming",
        "kids",
        ("fitness",),
        {"pool": ("the community pool", "the YMCA")},
        ("{kid} started swimming lessons at {pool} {when}, I was so nervous watching.",),
        ("How are {kid}'s swim lessons going?",),
        ("Started {when}! {kid} was scared at first but now jumps right in.",),
        ("That's great! Can {kid} swim on their own yet?",),
        ("Almost! {kid} did a whole length with a {float} this week.",),
        ("Swim class again tonight, wish us luck.",),
        (
            (SINGLE_HOP, "core", "Where does {X}'s child take swim classes?"),
            (TEMPORAL, "core", "When did {X}'s kid begin learning to swim?"),
            (SINGLE_HOP, "detail", "What swimming aid did {X}'s kid use to do a full length?"),
        ),
        needs_kids=True,
    ),
    Happening(
        "painting",
        "kids",
        ("creative",),
        {"subject": ("a sunset over the lake", "our cat", "a field of sunflowers")},
        ("The kids and I painted together {when}, we did {subject}.",),
        ("Did you do that painting afternoon with the kids?",),
        ("We did, {when}! We painted {subject}.",),
        (
            "Aww I'd love to see it! Are you going to hang it up?",
            "That's lovely. Who's the best artist in the family?",
        ),
        ("It's on the fridge now. {kid} insists {kid}'s part is the best.",),
        ("The painting from the other weekend is still on the fridge.",),
        (
            (SINGLE_HOP, "core", "What did {X} and the kids paint?"),
            (TEMPORAL, "core", "When did {X} paint with {poss} children?"),
            (SINGLE_HOP, "detail", "Where did {X} put the picture the family painted?"),
        ),
        needs_kids=True,
    ),
)
ANIMALS = ("deer", "fox", "owl", "raccoon")
ANIMALS2 = ("penguins", "giraffes", "otters", "red pandas")
EXHIBITS = ("space", "ocean", "volcano", "ancient Egypt")
SHELLS = ("crab shell", "piece of sea glass", "starfish")
FLOATS = ("pool noodle", "kickboard")

TRIPS = Happening(
    "trip",
    "trip",
    ("travel",),
    {},
    (
        "Just got back from {city}! We were there for {days} days {when}.",
        "{partner} and I flew to {city} {when}, a long overdue getaway.",
    ),
    ("Wait, weren't you going to {city}? How was it?",),
    ("Oh it was incredible. We got back {when}, I'm still on cloud nine.",),
    ("Jealous! What was the best thing you ate?", "Amazing, {other}! Any highlights?"),
    ("Honestly the {food}. I'd go back just for that.",),
    ("Still dreaming about that trip, back to reality is rough.",),
    (
        (SINGLE_HOP, "detail", "What dish did {X} enjoy most in {city}?"),
        (TEMPORAL, "core", "When did {X} travel to {city}?"),
        (SINGLE_HOP, "core", "How many days did {X} spend in {city}?"),
    ),
)
CITIES = (
    ("Lisbon", "custard tarts"), ("Chicago", "deep dish pizza"), ("Tokyo", "ramen"),
    ("Mexico City", "tacos al pastor"), ("Barcelona", "seafood paella"), ("New Orleans", "beignets"),
    ("Vancouver", "sushi"), ("Rome", "cacio e pepe"), ("Austin", "brisket"), ("Edinburgh", "haggis"),
)  # fmt: skip

CLASSES = (
    Happening(
        "salsa",
        "class",
        ("music", "fitness"),
        {"studio": ("a dance studio downtown", "the community center")},
        ("I signed up for salsa lessons at {studio}! First class was {when}.",),
        ("Did you go to that salsa class you were thinking about?",),
        ("I did! Went for the first time {when} and I was terrible but loved every minute.",),
        ("Haha that's brave! Did you step on anyone's toes?",),
        ("Only twice! The teacher says I have {compliment}.",),
        ("My legs are sore from dance class again.",),
        (
            (SINGLE_HOP, "core", "What kind of dancing is {X} learning?"),
            (TEMPORAL, "core", "When did {X} start taking dance lessons?"),
            (SINGLE_HOP, "detail", "What did the dance instructor say about {X}?"),
        ),
    ),
    Happening(
        "climbing",
        "class",
        ("outdoors", "fitness"),
        {"gym": ("the bouldering gym", "a climbing gym near work")},
        ("I started rock climbing {when} at {gym}, my arms are jelly.",),
        ("So have you tried {gym} yet?",),
        ("Yes! Went {when} and I'm hooked already.",),
        ("No way! Is it scary up there?",),
        ("A bit, but I made it to the top of a {grade} route on my third try.",),
        ("Climbing again tomorrow, my hands are all calluses now.",),
        (
            (SINGLE_HOP, "core", "What new sport has {X} taken up?"),
            (TEMPORAL, "core", "When did {X} begin climbing?"),
            (SINGLE_HOP, "detail", "Which climbing route did {X} finish on the third attempt?"),
        ),
    ),
    Happening(
        "photography",
        "class",
        ("creative",),
        {"course": ("an evening photography course", "a weekend photo workshop")},
        ("I joined {course} {when}, we're learning to shoot in manual.",),
        ("Did you end up signing up for {course}?",),
        ("I did, started {when}! Way harder than I expected.",),
        ("Cool! What have you been photographing?",),
        ("Mostly {photo_subject}, the teacher liked my shots.",),
        ("Took my camera out again this weekend, practicing what I learned.",),
        (
            (SINGLE_HOP, "core", "What course did {X} enroll in?"),
            (SINGLE_HOP, "detail", "What does {X} like to take pictures of?"),
            (TEMPORAL, "core", "When did {X} begin the photography classes?"),
        ),
    ),
    Happening(
        "guitar",
        "class",
        ("music",),
        {"teacher": ("a teacher from church", "an old guy down the street")},
        ("I finally started guitar lessons {when}, with {teacher}.",),
        ("Are you still thinking about learning guitar?",),
        ("Actually I started guitar lessons {when}!",),
        ("That's awesome! Can you play a song yet?",),
        ("Just {song}, badly, haha. My fingertips are killing me.",),
        ("Practiced guitar for an hour last night, getting better slowly.",),
        (
            (SINGLE_HOP, "core", "Which instrument is {X} learning to play?"),
            (SINGLE_HOP, "detail", "What song can {X} play so far?"),
            (TEMPORAL, "core", "When did {X} begin learning the guitar?"),
        ),
    ),
    Happening(
        "volunteering",
        "class",
        ("animals", "caring"),
        {"shelter": ("the animal shelter", "a dog rescue")},
        ("I started volunteering at {shelter} {when}, walking dogs on Saturdays.",),
        ("Did you ever start volunteering at {shelter}?",),
        ("I started {when}! Best part of my week now.",),
        ("That's so kind of you, {other}. Do you have a favorite there?",),
        ("There's a shy old dog called {dog} who finally lets me pet him.",),
        ("Shelter shift again this Saturday, can't wait to see the dogs.",),
        (
            (SINGLE_HOP, "core", "Where does {X} volunteer?"),
            (TEMPORAL, "core", "When did {X} start helping out at the shelter?"),
            (SINGLE_HOP, "detail", "What is the name of the shy dog {X} met while volunteering?"),
        ),
    ),
    Happening(
        "baking",
        "class",
        ("food", "creative"),
        {"bake": ("sourdough", "croissants", "macarons")},
        ("I've gotten really into baking, {when} I made {bake} from scratch for the first time.",),
        ("Are you still on your baking kick?",),
        ("More than ever! {when} I finally made {bake} from scratch.",),
        ("Yum! How did they turn out?",),
        ("Honestly pretty good, {partner} ate {count} in one sitting.",),
        ("Baked again this weekend, the kitchen is a disaster.",),
        (
            (SINGLE_HOP, "core", "What has {X} managed to bake at home for the first time?"),
            (TEMPORAL, "core", "When did {X} first bake {bake}?"),
            (SINGLE_HOP, "detail", "How many of {X}'s {bake} did {partner} eat?"),
        ),
    ),
)
COMPLIMENTS = ("natural rhythm", "good hips", "great energy")
GRADES = ("beginner", "blue", "green")
PHOTO_SUBJECTS = ("birds in the park", "old buildings downtown", "street portraits")
SONGS = ("Wonderwall", "a Beatles song", "Happy Birthday")
DOGS = ("Rusty", "Duke", "Pickles", "Bear")
COUNTS = ("three", "four", "half the batch")

SHOWS = (
    Happening(
        "support_group",
        "show",
        ("caring",),
        {"group": ("a grief support group", "a new parents' support group", "an LGBTQ support group")},
        ("I went to {group} {when}. It was really powerful hearing everyone's stories.",),
        ("Did you go to that support group you mentioned?",),
        ("I did, {when}. I was nervous but I'm so glad I went.",),
        ("That's really brave, {other}. What was it like?",),
        ("Everyone was so welcoming. One woman's story about {story} really stuck with me.",),
        ("Going back to the group next week, it helps a lot.",),
        (
            (TEMPORAL, "core", "When did {X} attend the support group meeting?"),
            (SINGLE_HOP, "core", "What kind of support group did {X} go to?"),
            (SINGLE_HOP, "detail", "Whose story stayed with {X} after the group?"),
        ),
    ),
    Happening(
        "concert",
        "show",
        ("music",),
        {"band": ("Coldplay", "a local jazz trio", "Taylor Swift", "the Lumineers")},
        ("{partner} surprised me with tickets and we saw {band} live {when}!",),
        ("Wait, didn't you have concert tickets?",),
        ("Yes! We saw {band} {when}, I'm still buzzing.",),
        ("Whoa! How was the show?",),
        ("Unreal. They played {encore} as the encore and I cried a little.",),
        ("Still have that concert stuck in my head.",),
        (
            (SINGLE_HOP, "core", "Which band or artist did {X} watch perform?"),
            (TEMPORAL, "core", "When did {X} go to a concert?"),
            (SINGLE_HOP, "detail", "What did the band play as the encore at {X}'s concert?"),
        ),
    ),
    Happening(
        "charity_run",
        "show",
        ("fitness", "caring"),
        {"cause": ("the children's hospital", "cancer research", "the food bank")},
        ("I ran a charity 5K {when} for {cause}! Didn't even walk once.",),
        ("How did the charity run go?",),
        ("I finished! It was {when}, and we raised money for {cause}.",),
        ("So proud of you! What was your time?",),
        ("About {minutes} minutes, not bad for someone who hated running a year ago.",),
        ("My running shoes are calling me again after that race.",),
        (
            (SINGLE_HOP, "core", "What cause did {X}'s race raise money for?"),
            (TEMPORAL, "core", "When did {X} run the charity race?"),
            (SINGLE_HOP, "detail", "How long did it take {X} to complete the 5K?"),
        ),
    ),
    Happening(
        "wedding",
        "show",
        ("social",),
        {"friend": ("my college roommate", "my best friend from work", "my cousin")},
        ("We went to {friend}'s wedding {when}, I danced until my feet hurt.",),
        ("How was the wedding? That was this month, right?",),
        ("It was beautiful, {when}. Everyone cried during the vows.",),
        ("Aww! Where was it held?",),
        ("At {venue}, the photos are going to be gorgeous.",),
        ("Still recovering from all that wedding dancing.",),
        (
            (SINGLE_HOP, "detail", "Where was the wedding {X} attended held?"),
            (TEMPORAL, "core", "When did {X} go to a wedding?"),
            (SINGLE_HOP, "core", "Whose wedding did {X} go to?"),
        ),
    ),
    Happening(
        "art_show",
        "show",
        ("creative",),
        {"gallery": ("a small gallery downtown", "the art museum")},
        ("I went to an art exhibition at {gallery} {when}, so inspiring.",),
        ("Did you make it to that art exhibit at {gallery}?",),
        ("I did, {when}! Spent two hours there.",),
        ("Nice! What kind of art was it?",),
        ("Mostly {art}, I bought a print for the hallway.",),
        ("That print from the gallery looks great in the hallway.",),
        (
            (SINGLE_HOP, "detail", "What style of art did {X} see at the exhibition?"),
            (TEMPORAL, "core", "When did {X} visit an art gallery?"),
            (SINGLE_HOP, "core", "Which gallery did {X} visit?"),
        ),
    ),
)
STORIES = ("losing her brother", "starting over at fifty", "coming out to her parents")
ENCORES = ("their biggest hit", "an acoustic version of an old song", "a cover I didn't expect")
MINUTES = ("31", "28", "35")
VENUES = ("an old barn in the countryside", "a vineyard", "a lighthouse by the sea")
ARTS = ("abstract paintings", "black and white photography", "huge colorful murals")

PET = Happening(
    "pet",
    "home_life",
    ("animals",),
    {},
    ("Big news, we adopted a {pet} {when}! {pet_sub} is called {pet_name}.",),
    ("Did you end up getting that {pet} you were talking about?",),
    ("We did! Brought {pet_obj} home {when}, {pet_sub} is called {pet_name}.",),
    ("Omg I'd love to see pics! How is the {pet} settling in?",),
    ("{pet_name} already rules the house. Sleeps on my feet every night.",),
    ("The {pet} chewed up my favorite slippers this week, little monster.",),
    (
        (SINGLE_HOP, "core", "What did {X} name {poss} new {pet_kind}?"),
        (TEMPORAL, "core", "When did {X} adopt a {pet_kind}?"),
        (SINGLE_HOP, "detail", "Where does {X}'s pet sleep at night?"),
    ),
)
PETS = (("puppy", "dog"), ("kitten", "cat"), ("rescue dog", "dog"), ("bunny", "rabbit"))
PET_NAMES = (("Biscuit", "she"), ("Milo", "he"), ("Luna", "she"), ("Oliver", "he"), ("Pepper", "she"))

PURCHASE = Happening(
    "purchase",
    "home_life",
    (),
    {"item": ("a new bike", "a standing desk", "a record player", "an espresso machine")},
    ("Treated myself {when} and got {item}. Zero regrets.",),
    ("Did you end up buying {item}?",),
    ("I did, {when}! Should have done it years ago.",),
    ("Ooh nice, was it expensive?",),
    ("It was on sale, about {price}, so I couldn't say no.",),
    ("Using my new purchase every day, best thing I bought this year.",),
    (
        (SINGLE_HOP, "core", "What did {X} purchase for {obj}self recently?"),
        (SINGLE_HOP, "detail", "How much did {X} pay for {poss} new {item_word}?"),
        (TEMPORAL, "core", "When did {X} buy the {item_word}?"),
    ),
)
PRICES = ("two hundred bucks", "half price", "eighty dollars")
