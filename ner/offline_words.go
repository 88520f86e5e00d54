package ner

import "strings"

// The offline extractor's vocabulary. The lists are space separated so they
// stay readable; offWordSet turns them into lookup sets once at start up.

func offWordSet(lists ...string) map[string]bool {
	m := make(map[string]bool)
	for _, l := range lists {
		for _, w := range strings.Fields(l) {
			m[w] = true
		}
	}
	return m
}

// offStopWords are lowercase function and discourse words. A capitalised
// stop word that opens a sentence is capitalised only because it opens the
// sentence, so it is no part of a name; alone it is never an entity.
var offStopWords = offWordSet(
	// determiners, pronouns, possessives
	`a an the this that these those some any each every all both either neither no none
	another other others such same several many much more most few fewer less least own
	i me my mine myself we us our ours ourselves you your yours yourself yourselves
	he him his himself she her hers herself it its itself they them their theirs themselves
	one ones someone somebody something anyone anybody anything everyone everybody everything
	nobody nothing whatever whoever whichever`,
	// prepositions and conjunctions
	`about above across after against along alongside amid among amongst around as at
	before behind below beneath beside besides between beyond by despite down during
	except for from in inside into like near nearby of off on onto opposite out outside
	over past per since than through throughout till to toward towards under underneath
	unlike until unto up upon versus via with within without and but or nor so yet if
	unless whereas while whilst although though because once whether lest plus minus`,
	// wh-words, auxiliaries and modals
	`what which who whom whose when where why how whereby wherein
	is are was were be been being am do does did done doing has have had having
	can could will would shall should may might must ought let lets`,
	// adverbs and discourse words that often open sentences
	`also however therefore thus hence moreover furthermore additionally meanwhile
	nevertheless nonetheless otherwise instead indeed still then now here there today
	tomorrow yesterday currently recently previously formerly originally initially
	eventually finally subsequently later earlier soon afterwards afterward thereafter
	again already always never often sometimes usually generally typically especially
	particularly mainly mostly largely partly only even just perhaps maybe probably
	possibly certainly clearly simply rather quite very too not yes ok okay well
	together alone apart ago else ever far first second third last next
	consequently accordingly similarly likewise specifically notably overall
	unfortunately fortunately interestingly importantly ultimately alternatively
	conversely regardless whenever wherever`,
	// verbs and participles that open encyclopaedic sentences
	`born located situated founded established based considered known called named
	according following including regarding concerning given considering assuming
	note see use using consider suppose imagine recall remember notice assume
	make makes made get gets got go goes went take takes took give gives gave
	put set run runs ran add adds added call calls create creates created define defines
	keep keeps try tries look looks find finds found show shows shown`,
	// numerals written as words
	`two three four five six seven eight nine ten eleven twelve twenty hundred thousand
	million billion half`,
	// contractions
	`it's that's there's here's what's who's let's don't doesn't didn't isn't aren't wasn't
	weren't can't couldn't won't wouldn't shouldn't i'm i've i'd i'll you're you've we're
	we've they're they've he's she's`,
)

// offConnectors are lowercase words that may sit inside a capitalised name:
// "Bishop of Elmham", "Ludwig van Beethoven", "Alexander the Great".
var offConnectors = offWordSet(`of the a an de von van da del della la le las los and y di du des der den dos das degli dei delle bin bint ibn mac ap zu zur vom ter ten op af und et for upon with`)

// offWeakConnectors join titles ("Society for Science", "Gone with the
// Wind") as often as they sit between two names ("Milestone for
// Paramount"), so a span joined by one yields the whole and both parts.
// "in", "at" and "on" join two names far more often than a title, so they
// are no connectors at all.
var offWeakConnectors = offWordSet(`for upon with`)

// offHonorifics are abbreviations that never end a sentence.
var offHonorifics = offWordSet(`Mr Mrs Ms Dr Prof St Mt Ft Gen Col Lt Capt Cpt Sgt Maj Adm Gov Sen Rep Rev Hon Pres Fr Br Messrs Mme Mlle Ste Sr Jr Gov Supt Cmdr Brig Rt`)

// offAbbrevs are other abbreviations that keep their full stop.
var offAbbrevs = offWordSet(`Inc Ltd Co Corp Bros Jr Sr No Nos Vol vs etc al approx Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Ave Blvd Rd Dept Univ Assn Est Op Fig Eq Ch`)

var offMonths = map[string]bool{
	"january": true, "february": true, "march": true, "april": true, "may": true, "june": true,
	"july": true, "august": true, "september": true, "october": true, "november": true, "december": true,
	"jan": true, "feb": true, "mar": true, "apr": true, "jun": true, "jul": true, "aug": true,
	"sep": true, "sept": true, "oct": true, "nov": true, "dec": true,
}

var offWeekdays = offWordSet(`monday tuesday wednesday thursday friday saturday sunday`)

// offGenericHeads are name heads too generic to stand alone when a name
// like "University of Copenhagen" is split at "of".
var offGenericHeads = offWordSet(`university college school institute academy bank church cathedral
	abbey bishop archbishop king queen prince princess duke duchess count countess earl lord lady
	emperor empress margrave marquess baron baroness president prime minister governor mayor
	secretary chancellor battle siege treaty act house department ministry board council committee
	city county state province district region republic kingdom empire river lake mount mountain
	island islands isle bay sea gulf cape port fort museum hospital journal society association
	federation union league party army navy order house book history museum office court
	chief head member members director general captain commander saint pope cardinal
	province kingdom army corps band club team group company corporation list map
	siege war order dynasty family son daughter father mother brother sister wife husband
	bishopric diocese parish borough town village municipality commune canton`)

// offPossessiveHeads are heads that keep a possessive inside a name:
// "St. Maurice's Abbey", "Queen's College".
var offPossessiveHeads = offWordSet(`abbey church cathedral chapel college school hospital university
	day park bay island islands hall house street road square bridge landing crossing cove
	point creek lake hill hills well wells inn garden gardens gate lane cross party republic
	army league liberation front union market theatre theater club guild`)

// offPossessiveOwners form names with any following capitalised word.
var offPossessiveOwners = offWordSet(`children's women's men's people's workers' king's queen's`)

// offUnits are what make a bare number worth keeping.
var offUnits = offWordSet(`% percent per km km2 kilometres kilometers kilometre kilometer miles mile mi
	m metres meters metre meter cm mm ft feet foot inches inch in. yards yd
	kg kilograms kilogram g grams gram lb lbs pounds tons tonnes tonne hectares hectare acres acre
	sq square mph km/h knots mw kw gw watts w volts v hz khz mhz ghz
	bits bit bytes byte kb mb gb tb kib mib gib bps kbps mbps gbps ms ns μs seconds
	people inhabitants residents employees students members households families
	°c °f degrees`)

// offScales multiply a number: "$5 million".
var offScales = offWordSet(`thousand million billion trillion m bn mn k`)

// offPersonCues precede person names.
var offPersonCues = offWordSet(`mr mrs ms dr prof sir dame lord lady king queen prince princess
	duke duchess earl count countess baron baroness emperor empress pope saint st president
	senator governor general colonel captain lieutenant sergeant admiral bishop archbishop
	cardinal reverend rev father sister brother uncle aunt judge justice chancellor margrave
	marquess viscount tsar czar sultan shah emir khan pharaoh rabbi imam sheikh`)

var offPersonSuffixes = offWordSet(`jr jr. sr sr. ii iii iv v vi vii viii ix x xi xii xiii xiv xv phd`)

var offOrgWords = offWordSet(`inc inc. ltd ltd. llc plc corp corp. corporation company co co.
	university college school academy institute institution association society foundation
	federation union league party council committee commission agency authority bureau
	department ministry office bank group records studios studio entertainment pictures
	films productions press publishing publishers airlines airways railway railways
	club fc team army navy corps regiment brigade orchestra band choir
	organization organisation network broadcasting channel systems technologies labs
	laboratories hospital museum library court parliament congress senate government
	administration service services trust fund order brothers & industries`)

var offLocationWords = offWordSet(`river city county lake mountain mountains mount mt mt.
	island islands isle bay sea ocean gulf strait valley canyon desert peninsula cape
	coast beach forest park national state province district region territory village
	town township borough municipality parish commune prefecture oblast street road avenue
	square bridge falls creek hill hills highlands plateau harbour harbor port airport
	station castle palace abbey cathedral church chapel priory monastery temple kingdom republic empire land lands glacier volcano reef`)

var offWorkCues = offWordSet(`film movie album song single novel book play opera series show
	episode poem painting magazine newspaper journal novella documentary sitcom musical
	soundtrack ep anthology comic manga anime game symphony ballet hymn`)

var offWorkWords = offWordSet(`journal magazine review gazette times post herald tribune chronicle`)

var offLocationCues = offWordSet(`in near`)

// offRegions complete "Johnnycake, West Virginia" style place names.
var offRegions = offWordSet(
	`alabama alaska arizona arkansas california colorado connecticut delaware florida georgia
	hawaii idaho illinois indiana iowa kansas kentucky louisiana maine maryland massachusetts
	michigan minnesota mississippi missouri montana nebraska nevada ohio oklahoma oregon
	pennsylvania tennessee texas utah vermont virginia washington wisconsin wyoming
	alberta manitoba ontario quebec saskatchewan yukon tasmania queensland victoria
	england scotland wales ireland france germany italy spain india china japan australia
	canada brazil mexico russia poland sweden norway denmark finland netherlands belgium
	austria switzerland portugal greece turkey iran iraq egypt nigeria kenya`,
	`new_hampshire new_jersey new_mexico new_york north_carolina north_dakota rhode_island
	south_carolina south_dakota west_virginia british_columbia new_brunswick nova_scotia
	new_south_wales south_australia western_australia northern_ireland new_zealand
	south_africa united_states united_kingdom`)

// offStripTitles are titles a person's name may carry in front: "Captain
// Bruce McCandless II" is also "Bruce McCandless II".
var offStripTitles = offWordSet(`mr mrs ms dr prof sir dame lord lady king queen prince princess
	duke duchess earl count countess baron baroness emperor empress pope president senator
	governor general colonel captain lieutenant sergeant admiral major marshal commander
	brigadier rear vice bishop archbishop cardinal reverend rev hon judge justice chancellor
	margrave margravine landgrave marquess viscount tsar czar sultan shah emir sheikh
	archduke archduchess grand crown infante infanta elector electress dauphin regent
	consort chief field`)

// offNobleWords open the style that follows a name after a comma:
// "Lambert, Margrave of Tuscany", "George Rodney, 3rd Baron Rodney".
var offNobleWords = offWordSet(`duke duchess earl count countess baron baroness baronet marquess
	marquis viscount viscountess prince princess king queen emperor empress margrave margravine
	landgrave landgravine elector electress dauphin dauphine lord lady abbess abbot bishop
	archbishop archduke archduchess grand crown sultan emir khan shah tsar tsarina regent infante
	infanta palatine burgrave laird thane`)

// offAdminWords end the name of an administrative area: "Volovo, Lipetsk Oblast".
var offAdminWords = offWordSet(`county oblast krai province state region district prefecture
	governorate voivodeship municipality department parish canton shire territory`)

// offHyphenHeads end adjectives made from names: "French-held", "Detroit-area".
var offHyphenHeads = offWordSet(`born based held area era language speaking owned run made style
	styled class type like led controlled occupied funded sponsored backed affiliated aligned
	oriented inspired themed dominated bound registered listed level wide only friendly specific
	related centric centered centred designed built produced directed written winning nominated
	certified standard compatible american british french german born-and-raised native national
	educated trained raised sized shaped influenced dependent speaking descent`)

// offHyphenPrefixes open words made from names: "post-World War II", "anti-Japanese".
var offHyphenPrefixes = offWordSet(`post pre anti mid non ex pro neo pan trans sub super ultra
	semi quasi counter inter intra proto pseudo`)

// offLabels name parts of a document; alone ("Chapter" of "Chapter 9") they are no entity.
var offLabels = offWordSet(`chapter figure fig table section example listing step part volume
	appendix page line item exercise note notes question answer lesson unit`)
