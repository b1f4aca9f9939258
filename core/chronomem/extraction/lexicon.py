"""Small word lists the rule extractor checks objects against (all lowercase)."""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    """A set of words from a whitespace-separated list (``_`` joins multi-word entries)."""
    return _words(text)


def _words(text: str) -> frozenset[str]:
    return frozenset(w.replace("_", " ") for w in text.split())


LANGUAGES = _words(
    """english french german spanish italian portuguese dutch flemish swedish norwegian danish
    finnish icelandic polish czech slovak slovenian hungarian romanian bulgarian serbian croatian
    bosnian albanian greek turkish russian ukrainian belarusian lithuanian latvian estonian
    georgian armenian azerbaijani kazakh uzbek arabic hebrew persian farsi dari pashto urdu hindi
    bengali bangla punjabi gujarati marathi tamil telugu kannada malayalam sinhala nepali chinese
    mandarin cantonese japanese korean vietnamese thai lao khmer burmese malay indonesian tagalog
    filipino swahili amharic somali yoruba igbo hausa zulu xhosa afrikaans catalan basque galician
    welsh irish gaelic scots_gaelic latin esperanto maltese luxembourgish yiddish kurdish
    tigrinya haitian_creole asl sign_language"""
)

NATIONALITIES = _words(
    """american canadian mexican brazilian argentinian argentine chilean colombian peruvian
    venezuelan cuban jamaican british english scottish welsh irish french german spanish italian
    portuguese dutch belgian swiss austrian swedish norwegian danish finnish icelandic polish
    czech slovak hungarian romanian bulgarian serbian croatian greek turkish russian ukrainian
    israeli lebanese egyptian moroccan tunisian algerian nigerian ghanaian kenyan ethiopian
    south_african indian pakistani bangladeshi sri_lankan nepali chinese japanese korean
    vietnamese thai filipino indonesian malaysian singaporean australian kiwi iranian iraqi
    saudi emirati syrian jordanian lithuanian latvian estonian"""
)

# Places the rules know by name: enough to read "I left London" as a move, not a job.
PLACES = _words(
    """usa us america united_states uk britain united_kingdom england scotland wales ireland
    canada mexico brazil argentina chile colombia peru france germany spain portugal italy
    netherlands holland belgium switzerland austria sweden norway denmark finland iceland poland
    czechia czech_republic hungary romania bulgaria greece turkey russia ukraine israel egypt
    morocco nigeria ghana kenya ethiopia south_africa india pakistan bangladesh china japan korea
    south_korea vietnam thailand philippines indonesia malaysia singapore australia new_zealand
    iran iraq dubai uae qatar taiwan hong_kong europe asia africa london paris berlin munich
    hamburg frankfurt cologne vienna zurich geneva amsterdam rotterdam brussels madrid barcelona
    lisbon porto rome milan naples turin florence venice athens istanbul moscow kyiv kiev warsaw
    krakow prague budapest bucharest stockholm oslo copenhagen helsinki dublin edinburgh glasgow
    manchester liverpool birmingham bristol leeds oxford cambridge lyon marseille toulouse nice
    bordeaux new_york nyc brooklyn manhattan boston chicago seattle portland denver austin dallas
    houston miami atlanta philadelphia washington dc los_angeles la san_francisco sf oakland
    san_diego san_jose sacramento phoenix las_vegas detroit minneapolis nashville toronto
    montreal vancouver calgary ottawa mexico_city sao_paulo rio buenos_aires santiago lima bogota
    tokyo osaka kyoto seoul beijing shanghai shenzhen bangkok hanoi saigon manila jakarta
    mumbai delhi bangalore bengaluru hyderabad chennai kolkata karachi lahore sydney melbourne
    brisbane perth auckland wellington cairo lagos nairobi cape_town johannesburg tel_aviv
    jerusalem the_bay_area bay_area silicon_valley the_midwest midwest"""
)

MONTH_WORDS = _words(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday"""
)

# Interface and product words: "I moved to the Pro plan", "I live in Settings".
UI_WORDS = _words(
    """settings setting page pages tab tabs menu menus dashboard profile account accounts screen
    window button option options section workspace channel server repo branch folder file files
    app apps application mode tier plan plans version beta update release pro premium plus
    basic free enterprise starter standard business team teams admin billing inbox chat thread
    portal console panel sidebar view widget link form field editor browser chrome safari
    firefox edge windows linux mac macos ios android slack discord zoom teams excel word
    notion jira trello github gitlab docs login password cart checkout"""
)

# Lowercase-mode nouns that are not places or employers: "i live in fear", "i work at night".
GENERIC_NOUNS = _words(
    """fear trouble debt denial hope peace silence bed home house apartment flat dorm room car
    van office night nights morning mornings evening evenings weekend weekends shift shifts
    remote person place city town village country countryside suburbs area neighborhood
    neighbourhood company startup firm bank school university college hospital store shop
    restaurant cafe hotel factory warehouse lab agency nonprofit government myself yourself
    himself herself themselves ourselves you it them him her us me this that home-office
    money fun work job moment while time times bit lot end beginning middle front back top
    bottom side past future present reality world cloud internet web browser"""
)
GENERIC_NOUNS = GENERIC_NOUNS | UI_WORDS

CONNECTORS = _words(
    """of de du des la le les los las del da di do dos van von der den am upon on and y sur en
    & - 'n' el al"""
)

# Support-desk words: statements about these are tickets, not memories about a person.
SUPPORT_WORDS = _words(
    """login log-in logins password passwords account error errors bug bugs issue issues
    problem problems ticket tickets feature features update updates version interface ui ux
    dashboard layout design screen button buttons settings page pages plan pricing
    subscription billing invoice refund support service product website site your yours
    chatbot bot answer answers response responses reply suggestion suggestions idea ideas
    option options solution fix workaround feedback tool tools app apps software download
    installation install integration api sdk endpoint server servers checkout cart order orders
    shipping delivery tracking notification notifications email emails message messages
    link links file files upload uploads export import sync mode theme themes dark spam
    newsletter newsletters unsubscribe icon icons font fonts logo colors colours popup popups
    pop-up pop-ups ads adverts cookies captcha captchas"""
)

FREE_REJECT_FIRST = _words(
    """own it it's its this that these those them him her you your yours u ur ya how when what where
    why who whom which whether if to_be to_see to_think to_know to_say to_hear to_ask to_help
    to_get to_have to_do to_make to_go to_try to_use to_check to_add to_point to_mention
    doing being having something anything everything nothing stuff things one ones there
    here such me myself us about of with for so too very much more most all both either
    neither none each everyone anyone someone everybody anybody somebody because as like
    that's the_fact the_idea the_way the_fact_that the_thought the_sound the_way_you
    talking chatting working waiting"""
)

NAME_STOP = _words(
    """and but by from here btw though lol haha i i'm im the a an nice thanks thank please however
    not just and, so also too now currently actually really very well today tonight,
    sorry fine good ok okay back done sure glad happy excited tired ready new still looking
    trying having working using going doing getting feeling coming calling writing asking
    wondering hoping here! there yes no yeah yep nope hi hello hey at on in to for with of is
    was will can could would should my your his her their our it this that when whenever if
    once after before anytime any time later asap tomorrow soon again sometime maybe whatever
    what anything something nothing instead about around after back up out over as crazy
    names name"""
)

# Possessions the rules recognise after "I have ..." (singular -> plural).
HAS_KINDS = {
    "dog": "dogs", "puppy": "puppies", "cat": "cats", "kitten": "kittens", "hamster": "hamsters",
    "rabbit": "rabbits", "bunny": "bunnies", "parrot": "parrots", "bird": "birds",
    "fish": "fish", "goldfish": "goldfish", "turtle": "turtles", "tortoise": "tortoises",
    "snake": "snakes", "lizard": "lizards", "horse": "horses", "pony": "ponies",
    "guinea pig": "guinea pigs", "ferret": "ferrets", "chicken": "chickens", "gecko": "geckos",
    "son": "sons", "daughter": "daughters", "kid": "kids", "child": "children", "baby": "babies",
    "toddler": "toddlers", "stepson": "stepsons", "stepdaughter": "stepdaughters",
    "twin": "twins", "grandchild": "grandchildren", "grandson": "grandsons",
    "granddaughter": "granddaughters", "grandkid": "grandkids", "brother": "brothers", "sister": "sisters", "husband": "husbands",
    "wife": "wives", "boyfriend": "boyfriends", "girlfriend": "girlfriends",
    "fiance": "fiances", "fiancee": "fiancees", "car": "cars", "bike": "bikes",
    "bicycle": "bicycles", "motorcycle": "motorcycles", "motorbike": "motorbikes",
    "truck": "trucks", "boat": "boats", "house": "houses",
    # dog breeds people name instead of "dog": "a golden retriever called Sunny"
    "golden retriever": "golden retrievers", "retriever": "retrievers", "labrador": "labradors", "poodle": "poodles",
    "beagle": "beagles", "terrier": "terriers", "spaniel": "spaniels", "collie": "collies",
    "husky": "huskies", "dachshund": "dachshunds", "corgi": "corgis", "bulldog": "bulldogs",
    "chihuahua": "chihuahuas", "greyhound": "greyhounds", "pug": "pugs",
}  # fmt: skip
CHILD_KINDS = _words(
    "son sons daughter daughters kid kids child children baby babies toddler toddlers twin twins "
    "stepson stepdaughter grandchild grandchildren grandson grandsons granddaughter "
    "granddaughters grandkid grandkids"
)

# Kinds that can carry a name after them: "my daughter Lily", "our dog Biscuit".
NAMED_KINDS = _words(
    """son daughter kid child baby toddler twin stepson stepdaughter grandson granddaughter
    brother sister husband wife boyfriend girlfriend fiance fiancee partner dog puppy cat kitten
    hamster rabbit bunny parrot bird turtle tortoise snake lizard horse pony ferret gecko
    retriever labrador poodle beagle terrier spaniel collie husky dachshund corgi bulldog
    chihuahua greyhound pug"""
)

# Head nouns of job titles: "I'm a (high school) teacher", "I work as a data analyst".
JOB_HEADS = _words(
    """engineer developer programmer coder designer architect nurse doctor physician surgeon
    dentist hygienist pharmacist therapist psychologist psychiatrist counselor counsellor
    paramedic midwife veterinarian vet teacher professor lecturer tutor instructor coach
    trainer analyst scientist researcher economist statistician mathematician accountant
    auditor bookkeeper lawyer attorney solicitor barrister paralegal judge manager director
    executive administrator coordinator consultant specialist officer supervisor assistant
    secretary receptionist clerk cashier banker broker trader realtor agent recruiter
    writer author journalist reporter editor copywriter translator interpreter photographer
    videographer filmmaker artist illustrator animator painter sculptor musician composer
    singer producer actor actress dancer chef cook baker butcher barista bartender waiter
    waitress server plumber electrician carpenter mechanic technician welder builder
    contractor roofer painter gardener landscaper farmer fisherman driver pilot
    firefighter policeman policewoman cop detective soldier sailor marine librarian
    archivist curator pastor priest rabbi imam minister chaplain nanny caregiver carer
    housekeeper cleaner janitor entrepreneur founder ceo cto cfo coo freelancer intern
    apprentice scientist biologist chemist physicist geologist astronomer pharmacologist
    optometrist radiologist anesthesiologist pediatrician surveyor planner strategist
    marketer salesman saleswoman salesperson representative rep tester sysadmin devops
    investigator inspector dispatcher paramedic optician podcaster youtuber streamer
    influencer blogger practitioner worker nutritionist dietitian physiotherapist
    physio chiropractor midwife doula masseuse hairdresser barber stylist tailor
    jeweler jeweller locksmith machinist operator surveyor lifeguard"""
)
