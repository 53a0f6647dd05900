package queries

import "strings"

func set(words string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(words) {
		out[w] = true
	}
	return out
}

// englishStop and germanStop are words that carry no search value. Both
// lists are also used to tell the claim's language (for the few words
// queries add: "timeline", "evidence").
var englishStop = set(`a about above after again against all almost along already also although always am among an
and another any anyone anything are aren't around as at be became because been before being below between both but by
can can't cannot could couldn't did didn't do does doesn't doing don't down during each either else enough even ever
every few for from further had hadn't has hasn't have haven't having here how however if in into is isn't it it's its
itself just least less like many may might more most much must my neither no nor not now of off often on once only or
other others otherwise our ours out over own per perhaps quite rather really same shall should shouldn't since so some
still such than that that's the their theirs them themselves then there there's these they this those though through
thus to too toward towards under until up upon us very via was wasn't we were weren't what when where whether which
while who whom whose why will with within without won't would wouldn't yet you your yours he him his himself she her
hers herself i me myself we'd they're they've i'm i've let's onto whereas whilst amid across amongst
throughout despite except regarding concerning besides`)

var germanStop = set(`der die das den dem des ein eine einer einem einen eines und oder aber doch sondern denn weil dass
daß ob wenn als wie auch noch schon nur sehr mehr nicht kein keine keinen keinem keiner ist sind war waren wird werden
wurde wurden hat haben hatte hatten habe sei seien im in ins am an auf aus bei mit nach von vor zu zum zur über unter
durch für gegen ohne um bis seit es er sie wir ihr ich du man sich sein seine seiner seinem seinen ihre ihrer ihrem
ihren ihm ihn dies diese dieser dieses diesem diesen jene laut so also dann da dort hier wo was wer
soll sollen sollte sollten kann können konnte konnten muss müssen musste mussten darf dürfen will wollen wollte
wollten habe hätte hätten wäre wären würde würden worden`)

// otherStop covers French, Spanish and Russian articles and particles, enough not
// to search for them.
var otherStop = set(`le la les un une des du de et ou mais est sont était été pour par avec sans dans sur au aux ce cette a à
ces qui que quoi dont il elle ils elles nous vous se sa son ses leur leurs el los las unos unas y o pero es son fue
para por con sin en sobre al lo que quien su sus del
и в во не что на с со как а то все но да к у же за бы по ее о из от до для при об про под над без через это этот
эта эти был была были быть году`)

// fillerWords are frequent in claims and useless in a search: reporting
// verbs and vague quantities.
var fillerWords = set(`said says say saying claim claims claimed claiming stated states according reportedly
allegedly told tells tell announced noted added argued argues believe believes believed think thinks thought
behauptet behauptete sagte sagt erklärte laut meint`)

// weakWords are kept only when nothing better is left.
var weakWords = set(`number numbers official total beginning end recent recently new many several various much
certain really actually currently today now year years time times people thing things way part lot`)

// Pronouns and the class of name they stand for.
const (
	classUnknown = iota
	classPerson
	classOrg
)

var englishPronouns = map[string]int{
	"he": classPerson, "him": classPerson, "his": classPerson, "himself": classPerson,
	"she": classPerson, "her": classPerson, "hers": classPerson, "herself": classPerson,
	"it": classOrg, "its": classOrg, "itself": classOrg,
	"they": classOrg, "them": classOrg, "their": classOrg, "theirs": classOrg, "themselves": classOrg,
}

// germanPronouns are only the unambiguous ones: "sie", "ihr", "es" stand
// for too many things.
var germanPronouns = map[string]int{
	"er": classPerson, "ihm": classPerson, "ihn": classPerson, "sein": classPerson, "seine": classPerson,
	"seiner": classPerson, "seinem": classPerson, "seinen": classPerson, "seines": classPerson,
}

// orgNouns after "the" or "this" stand for an organisation named earlier:
// "the company", "this agency".
var orgNouns = set(`company firm corporation organisation organization agency ministry party group bank
university institute insurer broadcaster newspaper startup manufacturer`)

// personTitles before a name make it a person; they are not part of it.
var personTitles = set(`mr mrs ms miss dr prof professor president senator sen rep representative minister
chancellor governor mayor judge justice sir dame lord lady king queen pope ceo chairman chairwoman secretary
general herr frau bundeskanzler kanzler ministerin minister präsident präsidentin abgeordneter abgeordnete`)

// orgWords inside a name make it an organisation.
var orgWords = set(`inc corp corporation ltd llc plc gmbh ag co company group bank university institute agency
ministry department council commission party association foundation organisation organization fund court
parliament government office bureau service authority society union administration committee agency nasa
partei ministerium gericht bundesamt verband stiftung universität`)

// placeWords inside a name make it a place, never a person.
var placeWords = set(`new united north south east west saint san santa los las states kingdom city republic
island islands river mount lake county street sea ocean bay valley`)

// nameJoiners may join the words of one name: "Bank of England",
// "Ludwig van Beethoven".
var nameJoiners = set(`of de von van der den del la le du da di bin al y`)

var monthsAndDays = set(`january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday jan feb mar apr jun jul aug sep sept oct nov dec
januar februar märz juni juli oktober dezember montag dienstag mittwoch donnerstag freitag samstag sonntag`)

// causalMarkers make a claim causal: a cause is asserted, so a timeline
// query can show whether the cause came before the effect. Each is a
// whole-word phrase, lower case.
var causalMarkers = []string{
	"because", "caused", "causes", "cause", "causing", "led to", "leads to", "lead to", "leading to",
	"due to", "owing to", "resulted in", "results in", "result in", "resulting in", "as a result",
	"therefore", "triggered", "triggers", "trigger", "consequently", "hence", "thanks to", "blamed on",
	"weil", "wegen", "aufgrund", "deshalb", "daher", "führte zu", "führten zu", "verursacht", "verursachte",
	"infolge", "dadurch",
}

// causalPhrases are causalMarkers split into words.
var causalPhrases = func() [][]string {
	out := make([][]string, len(causalMarkers))
	for i, m := range causalMarkers {
		out[i] = strings.Fields(m)
	}
	return out
}()

// causalWords are the words of the markers, never keywords of a timeline
// query.
var causalWords = set(strings.Join(causalMarkers, " ") + " after following nachdem result")

// afterOpeners start an "After X, Y" sentence.
var afterOpeners = set(`after following nachdem`)

// Words queries add, by language.
type lexicon struct {
	name     string
	angles   []string // added to short keyword queries
	timeline string
	pronouns map[string]int
	// nouns: capitalised words inside a sentence are nouns, not names
	// (German); only acronyms and words after a title are names then.
	nouns bool
}

var (
	english   = lexicon{name: "en", angles: []string{"evidence", "study", "facts"}, timeline: "timeline", pronouns: englishPronouns}
	german    = lexicon{name: "de", angles: []string{"Belege", "Studie", "Fakten"}, timeline: "Chronologie", pronouns: germanPronouns, nouns: true}
	otherLang = lexicon{name: "other", angles: english.angles, timeline: english.timeline, pronouns: map[string]int{}}
)
