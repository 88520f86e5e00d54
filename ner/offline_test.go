package ner

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var _ Extractor = (*Offline)(nil)

func entityNames(es []Entity) map[string]Entity {
	m := make(map[string]Entity, len(es))
	for _, e := range es {
		m[e.Name] = e
	}
	return m
}

func TestOfflineSpans(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		want  map[string]string // name -> type ("" for any type)
		avoid []string
	}{
		{
			name: "names with connectors and roman numerals",
			text: "Teutberga( died 11 November 875) was a queen of Lotharingia by marriage to Lothair II. Theodred II was a medieval Bishop of Elmham.",
			want: map[string]string{"Teutberga": "person", "11 November 875": "date", "Lotharingia": "", "Lothair II": "",
				"Theodred II": "", "Bishop of Elmham": "", "Elmham": ""},
			avoid: []string{"Teutberga( died", "Bishop"},
		},
		{
			name:  "name-internal particles",
			text:  "Ludwig van Beethoven was born in Bonn. Leonardo da Vinci painted it.",
			want:  map[string]string{"Ludwig van Beethoven": "", "Bonn": "location", "Leonardo da Vinci": ""},
			avoid: []string{"Ludwig", "Beethoven"},
		},
		{
			name:  "initials",
			text:  "The association was founded by G. Stanley Hall in 1887.",
			want:  map[string]string{"G. Stanley Hall": "person", "1887": "date"},
			avoid: []string{"The", "Stanley Hall"},
		},
		{
			name:  "possessives",
			text:  "When Guy died, Hugh married Guy's widow, Marozia. Hucbert was lay-abbot of St. Maurice's Abbey.",
			want:  map[string]string{"Guy": "", "Hugh": "", "Marozia": "", "Hucbert": "", "St. Maurice's Abbey": "location"},
			avoid: []string{"Guy's", "When", "St. Maurice", "Maurice's Abbey"},
		},
		{
			name: "quoted titles",
			text: "Etan Boritzer is best known for his book\" What is God?\" first published in 1989. He sang “Hello Love” and ``Brother'' and 'Veliki Prezir' live.",
			want: map[string]string{"What is God?": "work", "Hello Love": "work", "Brother": "work", "Veliki Prezir": "work", "Etan Boritzer": ""},
		},
		{
			name:  "quoted speech is not a title",
			text:  `She said "we will win the war because nobody else can do it" loudly.`,
			avoid: []string{"we will win the war because nobody else can do it"},
		},
		{
			name:  "dates",
			text:  "He was born on March 3, 1990 in Bonn. The journal began in January 1960; its peak was the 1940s. She died 17 October 931.",
			want:  map[string]string{"March 3, 1990": "date", "January 1960": "date", "1940s": "date", "17 October 931": "date"},
			avoid: []string{"March", "January", "October"},
		},
		{
			name:  "numbers with units",
			text:  "BEA took a 25% stake for $5 million. The atoll covers 885 km2 and has 35 people. It had 12 rooms.",
			want:  map[string]string{"25%": "number", "$5 million": "number", "885 km2": "number", "35 people": "number"},
			avoid: []string{"12", "12 rooms"},
		},
		{
			name:  "sentence-initial function words",
			text:  "However, the Treaty of Verdun divided the empire. In 843 it was signed. Today Paris is large. Pruning is hard.",
			want:  map[string]string{"Treaty of Verdun": "", "Verdun": "", "Paris": ""},
			avoid: []string{"However", "In", "Today", "Today Paris", "Pruning"},
		},
		{
			name:  "leading determiner",
			text:  "The Journal of Mathematical Physics is a journal. Ray Nazarro directed The Lone Prairie in 1942.",
			want:  map[string]string{"Journal of Mathematical Physics": "", "The Lone Prairie": "", "Ray Nazarro": ""},
			avoid: []string{"The Journal of Mathematical Physics", "Lone Prairie"},
		},
		{
			name:  "and separates two names",
			text:  "Do Jen Armbruster and Gus Triandos have the same nationality? Procter & Gamble sells soap.",
			want:  map[string]string{"Jen Armbruster": "", "Gus Triandos": "", "Procter & Gamble": ""},
			avoid: []string{"Do Jen Armbruster", "Jen Armbruster and Gus Triandos"},
		},
		{
			name: "styles and disambiguations",
			text: "He was a son of Adolph I, Duke of Cleves and Marie of Burgundy. Are By The Grace Of God (Film) and Johnnycake, West Virginia related?",
			want: map[string]string{"Adolph I, Duke of Cleves": "person", "Marie of Burgundy": "", "By The Grace Of God (Film)": "work",
				"By The Grace Of God": "", "Johnnycake, West Virginia": "location", "West Virginia": ""},
			avoid: []string{"Adolph I, Duke of Cleves and Marie of Burgundy", "Film"},
		},
		{
			name:  "hyphens",
			text:  "French-held Kassel fell. Kim Jong-il ruled after post-World War II talks with Wiley-Blackwell.",
			want:  map[string]string{"Kassel": "", "Kim Jong-il": "", "World War II": "", "Wiley-Blackwell": ""},
			avoid: []string{"French-held Kassel", "post-World War II"},
		},
		{
			name: "CJK text",
			text: "東京は日本の首都です。Tokyo 東京 is in Japan.",
			want: map[string]string{"Tokyo": "", "Japan": ""},
		},
		{
			name:  "code keywords",
			text:  "You can add an ORDER BY clause to the cursor in SQL.",
			want:  map[string]string{"SQL": ""},
			avoid: []string{"ORDER", "BY"},
		},
	}
	o := NewOffline()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := o.Extract(context.Background(), Chunk{ID: "c1", Text: tt.text})
			if err != nil {
				t.Fatal(err)
			}
			got := entityNames(x.Entities)
			for name, typ := range tt.want {
				e, ok := got[name]
				if !ok {
					t.Errorf("missing entity %q; got %v", name, keys(got))
					continue
				}
				if typ != "" && e.Type != typ {
					t.Errorf("entity %q has type %q, want %q", name, e.Type, typ)
				}
			}
			for _, name := range tt.avoid {
				if _, ok := got[name]; ok {
					t.Errorf("unexpected entity %q", name)
				}
			}
		})
	}
}

func keys(m map[string]Entity) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestOfflineTitleEntity(t *testing.T) {
	x, err := NewOffline().Extract(context.Background(), Chunk{
		ID:       "p1",
		DocTitle: "Theodred II (Bishop of Elmham)",
		Text:     "Theodred II was a medieval Bishop of Elmham. The date of Theodred's consecration unknown, but the date of his death was sometime between 995 and 997.",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Entities) < 2 {
		t.Fatalf("got %d entities, want the title and its short form first", len(x.Entities))
	}
	if e := x.Entities[0]; e.Name != "Theodred II (Bishop of Elmham)" || e.Type != "document" {
		t.Errorf("first entity = %+v, want the document title", e)
	}
	if e := x.Entities[1]; e.Name != "Theodred II" {
		t.Errorf("second entity = %+v, want the title without its disambiguation", e)
	}
	want := map[[2]string]bool{
		{"Theodred II (Bishop of Elmham)", "Theodred II"}:      false,
		{"Theodred II (Bishop of Elmham)", "Bishop of Elmham"}: false,
	}
	for _, r := range x.Relations {
		if _, ok := want[[2]string{r.Source, r.Target}]; ok {
			want[[2]string{r.Source, r.Target}] = true
		}
	}
	for pair, found := range want {
		if !found {
			t.Errorf("missing title relation %q -> %q", pair[0], pair[1])
		}
	}

	// A title the text mentions merges with the mention, keeping the title's name.
	x, err = NewOffline().Extract(context.Background(), Chunk{DocTitle: "Teutberga", Text: "Teutberga was a queen of Lotharingia by marriage to Lothair II."})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range x.Entities {
		if strings.EqualFold(e.Name, "teutberga") {
			n++
		}
	}
	if n != 1 || x.Entities[0].Type != "document" {
		t.Errorf("title entity appears %d times (first %+v), want once as the document", n, x.Entities[0])
	}
	rel := map[string]Relation{}
	for _, r := range x.Relations {
		rel[r.Source+" -> "+r.Target] = r
	}
	if r, ok := rel["Teutberga -> Lothair II"]; !ok || !strings.Contains(r.Keywords, "queen") {
		t.Errorf("relation Teutberga -> Lothair II = %+v, %v; want keywords naming the queen", r, ok)
	}
}

func TestOfflineRelationsWithinSentence(t *testing.T) {
	text := "Alice Smith met Bob Jones in Paris. Carol White lives in Berlin. Bob Jones thanked Alice Smith."
	x, err := NewOffline().Extract(context.Background(), Chunk{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	sentences := [][]string{{"Alice Smith", "Bob Jones", "Paris"}, {"Carol White", "Berlin"}, {"Bob Jones", "Alice Smith"}}
	together := func(a, b string) bool {
		for _, s := range sentences {
			hasA, hasB := false, false
			for _, n := range s {
				hasA, hasB = hasA || n == a, hasB || n == b
			}
			if hasA && hasB {
				return true
			}
		}
		return false
	}
	names := entityNames(x.Entities)
	byPair := map[string]Relation{}
	for _, r := range x.Relations {
		if _, ok := names[r.Source]; !ok {
			t.Errorf("relation source %q is not an entity", r.Source)
		}
		if _, ok := names[r.Target]; !ok {
			t.Errorf("relation target %q is not an entity", r.Target)
		}
		if !together(r.Source, r.Target) {
			t.Errorf("relation %q -> %q links entities of different sentences", r.Source, r.Target)
		}
		byPair[r.Source+"|"+r.Target] = r
	}
	r, ok := byPair["Alice Smith|Bob Jones"]
	if !ok {
		t.Fatalf("no relation Alice Smith -> Bob Jones in %+v", x.Relations)
	}
	if r.Weight != 2 {
		t.Errorf("Alice Smith -> Bob Jones weight %v, want 2 (two sentences)", r.Weight)
	}
	if r.Keywords != "met" || r.Description != "Alice Smith met Bob Jones" {
		t.Errorf("relation keywords %q description %q, want the words between", r.Keywords, r.Description)
	}
	if _, ok := byPair["Carol White|Berlin"]; !ok {
		t.Errorf("no relation Carol White -> Berlin")
	}
}

func TestOfflineRelationWindow(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("The guests were ")
	for i := range 40 {
		fmt.Fprintf(&sb, "Guest%c Person%c, ", 'A'+i%26, 'A'+i/26)
	}
	sb.WriteString("and nobody else.")
	for _, window := range []int{1, 3} {
		x, err := NewOffline(WithRelationWindow(window)).Extract(context.Background(), Chunk{Text: sb.String()})
		if err != nil {
			t.Fatal(err)
		}
		if len(x.Entities) != 40 {
			t.Fatalf("got %d entities, want 40", len(x.Entities))
		}
		if max := 40 * window; len(x.Relations) > max || len(x.Relations) < max-window*window {
			t.Errorf("window %d: %d relations, want about %d (linear, not quadratic)", window, len(x.Relations), max)
		}
	}
}

func TestOfflineDeterministic(t *testing.T) {
	text := strings.Repeat("Lambert( died after 938) was the second son of Adalbert II of Tuscany and Bertha, daughter of Lothair II of Lotharingia. "+
		"In 931, before 17 October, Hugh, King of Italy, disowned and removed Lambert, giving Tuscany and the familial possession of Lucca to his brother Boso. ", 20)
	o := NewOffline()
	first, err := o.Extract(context.Background(), Chunk{ID: "a", DocTitle: "Lambert, Margrave of Tuscany", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, err := o.Extract(context.Background(), Chunk{ID: "a", DocTitle: "Lambert, Margrave of Tuscany", Text: text})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(first, again) {
			t.Fatal("two extractions of the same chunk differ")
		}
	}
	if !reflect.DeepEqual(o.Mentions(text), o.Mentions(text)) {
		t.Fatal("two Mentions calls on the same text differ")
	}
}

func TestOfflineRobustInput(t *testing.T) {
	huge := strings.Repeat("Teutberga was a queen of Lotharingia by marriage to Lothair II in 875. ", 1<<15) // about 2.3 MB
	if testing.Short() {
		huge = huge[:len(huge)/8]
	}
	inputs := map[string]string{
		"invalid utf-8":      "Teut\xffberga \xc3 was queen of \xe2\x80 Lotharingia and \"Hello \xff Love\" \xed\xa0\x80.",
		"only punctuation":   "...!!! ??? ((( ''' \"\"\" ``",
		"empty":              "",
		"unclosed quote":     `He wrote "The Long Road and never closed it`,
		"control characters": "Alice\x00Smith met\x07 Bob\tJones\r\nin Paris\u2028today.",
		"huge":               huge,
		"one long word":      strings.Repeat("A", 1<<16),
		"long sentence":      strings.Repeat("Alice Bob ", 20000),
	}
	o := NewOffline()
	for name, text := range inputs {
		t.Run(name, func(t *testing.T) {
			x, err := o.Extract(context.Background(), Chunk{ID: name, DocTitle: "Doc \xff Title", Text: text})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range x.Entities {
				if !utf8.ValidString(e.Name) || !utf8.ValidString(e.Description) {
					t.Fatalf("entity %q has invalid UTF-8", e.Name)
				}
				if len(e.Description) > 200 {
					t.Fatalf("entity %q description is %d bytes, want at most 200", e.Name, len(e.Description))
				}
			}
			for _, r := range x.Relations {
				if !utf8.ValidString(r.Description) || !utf8.ValidString(r.Keywords) || len(r.Description) > 200 {
					t.Fatalf("relation %q -> %q has invalid or long text", r.Source, r.Target)
				}
			}
			if name == "huge" && len(x.Entities) == 0 {
				t.Fatal("no entities in a large input")
			}
		})
	}
}

func TestOfflineCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewOffline().Extract(ctx, Chunk{ID: "c9", Text: "Alice met Bob."})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "c9") {
		t.Fatalf("Extract with a canceled context = %v, want context.Canceled naming the chunk", err)
	}
}

func TestOfflineName(t *testing.T) {
	tests := []struct {
		opts []OfflineOption
		want string
	}{
		{nil, "offline-v4"},
		{[]OfflineOption{WithRelationWindow(3), WithDescriptionLength(200)}, "offline-v4"},
		{[]OfflineOption{WithRelationWindow(5)}, "offline-v4(window=5)"},
		{[]OfflineOption{WithNumbers(false), WithDescriptionLength(100)}, "offline-v4(desc=100,numbers=false)"},
	}
	for _, tt := range tests {
		if got := NewOffline(tt.opts...).Name(); got != tt.want {
			t.Errorf("Name() = %q, want %q", got, tt.want)
		}
	}
}

func TestOfflineOptions(t *testing.T) {
	text := "Ray Nazarro, a director of The Lone Prairie and many other pictures that nobody remembers today, took a 25% stake in Columbia Pictures in 1942."
	x, err := NewOffline(WithNumbers(false), WithDescriptionLength(60)).Extract(context.Background(), Chunk{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	got := entityNames(x.Entities)
	if _, ok := got["25%"]; ok {
		t.Error("WithNumbers(false) still extracted 25%")
	}
	if _, ok := got["1942"]; !ok {
		t.Error("WithNumbers(false) dropped the date 1942")
	}
	e, ok := got["Columbia Pictures"]
	if !ok {
		t.Fatalf("missing Columbia Pictures in %v", keys(got))
	}
	if len(e.Description) > 60 || !strings.Contains(e.Description, "Columbia Pictures") {
		t.Errorf("description %q: want at most 60 bytes around the mention", e.Description)
	}
}

func TestOfflineMentions(t *testing.T) {
	tests := []struct {
		question string
		want     []string
	}{
		{"Who died first, Thomas Valentine Cooper or John Ellis Roosevelt?", []string{"Thomas Valentine Cooper", "John Ellis Roosevelt"}},
		{"What is the date of death of Vlatko Vuković's father?", []string{"Vlatko Vuković"}},
		{"Which film came out first, 3 Dots or Dying God?", []string{"3 Dots", "Dying God"}},
		{"Where was the father of David Ogilvy, 12Th Earl Of Airlie born?", []string{"David Ogilvy, 12Th Earl Of Airlie", "David Ogilvy"}},
		{"Which film was released earlier, Tarzan'S Hidden Jungle or Hot Saturday?", []string{"Tarzan'S Hidden Jungle", "Hot Saturday"}},
	}
	o := NewOffline()
	for _, tt := range tests {
		got := entityNames(o.Mentions(tt.question))
		for _, w := range tt.want {
			if _, ok := got[w]; !ok {
				t.Errorf("Mentions(%q) lacks %q; got %v", tt.question, w, keys(got))
			}
		}
		for name := range got {
			if w := strings.Fields(name)[0]; offStopWords[strings.ToLower(w)] && !strings.EqualFold(w, "the") {
				t.Errorf("Mentions(%q) returned %q, which starts with a function word", tt.question, name)
			}
		}
	}
}

// TestOfflineReusedMemoryLeavesNoTrace: extractions reuse the working
// memory of those before them (offScratch); what one finds must not depend
// on which ran before it, so every text extracts alike after any other,
// and alike to an extraction in memory of its own.
func TestOfflineReusedMemoryLeavesNoTrace(t *testing.T) {
	texts := []string{
		"Teutberga( died 11 November 875) was a queen of Lotharingia by marriage to Lothair II.",
		"Ludwig van Beethoven was born in Bonn on 17 December 1770. Leonardo da Vinci painted it.",
		"The International Business Machines Corporation (IBM) sold 5 million units in 1981; Today it says so.",
		"稻花香2号是五常市选育的水稻品种，亲本为松粳9号。《红楼梦》是曹雪芹的小说。",
		strings.Repeat("Alan Turing worked at Bletchley Park with Gordon Welchman. ", 40),
		"",
		"a",
		// A word one text writes in lower case and the next capitalises
		// alone at a sentence's start.
		"we walked along the river and the canal to reach the harbour before noon.",
		"Harbour fees rose. Canal boats left. River traffic grew.",
		// ...and a word one text capitalises inside a sentence, which the
		// next has alone at a sentence's start.
		"The band met Reading at the station.",
		"Reading was hard. Nothing followed.",
	}
	const title = "A Title (film)"
	o := NewOffline()
	fresh := func(text string, query bool) *offExtraction {
		x := &offExtraction{o: o, text: text, query: query, bridge: query,
			s: &offScratch{lowerSeen: map[string]bool{}, capMid: map[string]bool{}}}
		if query {
			_ = x.run(context.Background(), "")
		} else if err := x.run(context.Background(), title); err != nil {
			t.Fatal(err)
		}
		return x
	}
	for round := range 3 {
		for k := range texts {
			i := (k*5 + round) % len(texts)
			got, err := o.Extract(context.Background(), Chunk{ID: "c", DocTitle: title, Text: texts[i]})
			if err != nil {
				t.Fatal(err)
			}
			if want := fresh(texts[i], false).result(); !reflect.DeepEqual(got, want) {
				t.Fatalf("text %d extracted after others differs:\n got %+v\nwant %+v", i, got, want)
			}
			got2, want2 := o.Mentions(texts[i]), fresh(texts[i], true).entities()
			if !reflect.DeepEqual(got2, want2) && (len(got2) > 0 || len(want2) > 0) {
				t.Fatalf("mentions of text %d differ after others:\n got %+v\nwant %+v", i, got2, want2)
			}
		}
	}
}
