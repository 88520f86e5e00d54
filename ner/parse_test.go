package ner

import (
	"regexp"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/prompts"
)

func TestParseRecords(t *testing.T) {
	tests := []struct {
		name         string
		answer       string
		wantEntities []string // "name/type"
		wantRels     []string // "source>target"
		wantRejected int
	}{
		{
			name: "clean answer",
			answer: `("entity"<|>Ada Lovelace<|>person<|>Wrote the first program.)##
("entity"<|>Analytical Engine<|>technology<|>Babbage's machine.)##
("relationship"<|>Ada Lovelace<|>Analytical Engine<|>She programmed it.<|>programming<|>9)##
<|COMPLETE|>`,
			wantEntities: []string{"Ada Lovelace/person", "Analytical Engine/technology"},
			wantRels:     []string{"Ada Lovelace>Analytical Engine"},
		},
		{
			name: "chatter, fences, no record delimiters",
			answer: "Sure! Here are the records you asked for:\n```text\n" +
				`("entity"<|>Rust<|>Technology<|>A systems language.)` + "\n" +
				`( "entity" <|> "Mozilla" <|> organization <|> Sponsored Rust. )` + "\n" +
				"```\nLet me know if you need anything else.",
			wantEntities: []string{"Rust/technology", "Mozilla/organization"},
		},
		{
			name: "several records on one line",
			answer: `("entity"<|>A<|>x<|>a)##("entity"<|>B<|>x<|>b)##("relationship"<|>A<|>B<|>d<|>k<|>2)##` +
				`<|COMPLETE|>`,
			wantEntities: []string{"A/x", "B/x"},
			wantRels:     []string{"A>B"},
		},
		{
			name: "answer cut off mid-record",
			answer: `("entity"<|>Go<|>technology<|>A language.)##
("relationship"<|>Go<|>Google<|>Google created`,
			wantEntities: []string{"Go/technology"},
			wantRejected: 1,
		},
		{
			name: "malformed records are rejected and counted",
			answer: `("entity"<|>OnlyName<|>person)##
("entity"<|><|>person<|>no name)##
("entity"<|>NoType<|> <|>no type)##
("entity"<|>Extra<|>person<|>d<|>surplus field)##
("relationship"<|><|>B<|>no source<|>k<|>1)##
("relationship"<|>A<|><|>no target<|>k<|>1)##
("relationship"<|>A<|>a<|>self loop<|>k<|>1)##
("relationship"<|>A<|>B<|>too short)##
("entity"<|>Good<|>concept<|>fine)##`,
			wantEntities: []string{"Good/concept"},
			wantRejected: 8,
		},
		{
			name:     "strength optional or written oddly",
			answer:   `("relationship"<|>A<|>B<|>d<|>k)## ("relationship"<|>C<|>D<|>d<|>k<|>8/10)## ("relationship"<|>E<|>F<|>d<|>k<|>strong)##`,
			wantRels: []string{"A>B", "C>D", "E>F"},
		},
		{
			name: "reasoning drafts and text after completion are ignored",
			answer: "<think>maybe (\"entity\"<|>Draft<|>x<|>y)## then</think>\n" +
				`("entity"<|>Final<|>x<|>y)##` + "\n<|COMPLETE|>\n" + `("entity"<|>After<|>x<|>y)##`,
			wantEntities: []string{"Final/x"},
		},
		{name: "no records at all", answer: "I could not find any entities in this text."},
		{name: "empty", answer: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := ParseRecords(tt.answer)
			var ents, rels []string
			for _, e := range x.Entities {
				ents = append(ents, e.Name+"/"+e.Type)
			}
			for _, r := range x.Relations {
				rels = append(rels, r.Source+">"+r.Target)
			}
			if strings.Join(ents, ",") != strings.Join(tt.wantEntities, ",") {
				t.Errorf("entities %q, want %q", ents, tt.wantEntities)
			}
			if strings.Join(rels, ",") != strings.Join(tt.wantRels, ",") {
				t.Errorf("relations %q, want %q", rels, tt.wantRels)
			}
			if x.Rejected != tt.wantRejected {
				t.Errorf("rejected %d, want %d", x.Rejected, tt.wantRejected)
			}
		})
	}
}

func TestParseRecordsFields(t *testing.T) {
	x := ParseRecords(`("entity"<|> "Marie  Curie" <|>PERSON<|>Won two
Nobel prizes. )##
("relationship"<|>Marie Curie<|>Radium<|>She discovered radium.<|>discovery, chemistry<|>9.5)##
("entity"<|>Pierre Curie<|>person<|>Her husband,
a physicist.)
("entity"<|>Radium<|>element<|>An element.)`)
	// With its record delimiter a description may span lines; without one a
	// record ends with its line, so the Pierre record is cut and rejected.
	if len(x.Entities) != 2 || x.Rejected != 1 {
		t.Fatalf("entities %+v rejected %d, want Marie Curie and Radium, 1 rejected", x.Entities, x.Rejected)
	}
	if e := x.Entities[0]; e.Name != "Marie Curie" || e.Type != "person" || e.Description != "Won two Nobel prizes." {
		t.Errorf("entity %+v: want trimmed, whitespace collapsed, type lower-cased", e)
	}
	r := x.Relations[0]
	if r.Source != "Marie Curie" || r.Description != "She discovered radium." || r.Keywords != "discovery, chemistry" || r.Weight != 9.5 {
		t.Errorf("relation %+v", r)
	}
}

// The examples inside the extraction prompt must be answers the parser
// accepts in full, or the model is taught a format we reject.
func TestPromptExamplesParse(t *testing.T) {
	p, err := prompts.RenderExtract(prompts.ExtractData{Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	outputs := regexp.MustCompile(`(?s)Output:\n(.*?)<\|COMPLETE\|>`).FindAllStringSubmatch(p, -1)
	if len(outputs) != 3 {
		t.Fatalf("found %d example outputs, want 3", len(outputs))
	}
	for i, o := range outputs {
		x := ParseRecords(o[1])
		lines := strings.Count(strings.TrimSpace(o[1]), "\n") + 1
		if x.Rejected != 0 || len(x.Entities)+len(x.Relations) != lines {
			t.Errorf("example %d: %d entities, %d relations, %d rejected from %d lines",
				i+1, len(x.Entities), len(x.Relations), x.Rejected, lines)
		}
		known := map[string]bool{}
		for _, e := range x.Entities {
			known[e.Name] = true
		}
		for _, r := range x.Relations {
			if !known[r.Source] || !known[r.Target] {
				t.Errorf("example %d: relation %s -> %s names an entity it does not list", i+1, r.Source, r.Target)
			}
		}
	}
}

func TestParseJudge(t *testing.T) {
	tests := []struct {
		in      string
		yes, ok bool
	}{
		{"YES", true, true},
		{"yes", true, true},
		{"  Yes.\n", true, true},
		{"**NO**", false, true},
		{`"no"`, false, true},
		{"No!", false, true},
		{"<think>The text names more people.</think>\nYES", true, true},
		{"Yes, there are more entities.", false, false},
		{"NO WAY", false, false},
		{"maybe", false, false},
		{"", false, false},
		{"y", false, false},
	}
	for _, tt := range tests {
		yes, ok := ParseJudge(tt.in)
		if yes != tt.yes || ok != tt.ok {
			t.Errorf("ParseJudge(%q) = %v, %v; want %v, %v", tt.in, yes, ok, tt.yes, tt.ok)
		}
	}
}

func TestMergeAndEndpoints(t *testing.T) {
	x := ParseRecords(`("entity"<|>Acme<|>unknown<|>A firm.)##("relationship"<|>Acme<|>Ohio<|>Based in Ohio.<|>location<|>5)##`)
	recMerge(x, ParseRecords(`("entity"<|>ACME<|>organization<|>Builds rockets.)##("entity"<|>Acme<|>organization<|>A firm.)##`+
		`("relationship"<|>acme<|>ohio<|>Founded there.<|>origin<|>8)##`))
	recAddEndpoints(x)
	if len(x.Entities) != 2 {
		t.Fatalf("entities %+v, want Acme and Ohio", x.Entities)
	}
	acme, ohio := x.Entities[0], x.Entities[1]
	if acme.Type != "organization" || acme.Description != "A firm.; Builds rockets." {
		t.Errorf("merged entity %+v", acme)
	}
	if ohio.Name != "Ohio" || ohio.Type != recUnknownType {
		t.Errorf("endpoint entity %+v", ohio)
	}
	r := x.Relations[0]
	if len(x.Relations) != 1 || r.Weight != 8 || r.Keywords != "location, origin" || r.Description != "Based in Ohio.; Founded there." {
		t.Errorf("merged relations %+v", x.Relations)
	}
}

func FuzzParseRecords(f *testing.F) {
	f.Add(`("entity"<|>A<|>x<|>d)##("relationship"<|>A<|>B<|>d<|>k<|>1)##<|COMPLETE|>`)
	f.Add("```\n(\"entity\"<|><|>\n")
	f.Add(`("relationship"<|>`)
	f.Add("<think>")
	f.Fuzz(func(t *testing.T, s string) {
		x := ParseRecords(s)
		for _, e := range x.Entities {
			if e.Name == "" || e.Type == "" {
				t.Fatalf("accepted entity %+v", e)
			}
		}
		for _, r := range x.Relations {
			if r.Source == "" || r.Target == "" {
				t.Fatalf("accepted relation %+v", r)
			}
		}
		ParseJudge(s)
	})
}
