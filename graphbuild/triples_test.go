package graphbuild

import "testing"

func TestParseTriple(t *testing.T) {
	tests := []struct {
		line string
		want Triple
		ok   bool
	}{
		{"Kismet|directed_by|William Dieterle", Triple{Subject: "Kismet", Relation: "directed_by", Object: "William Dieterle"}, true},
		{" 9/11 | has_tags | 9/11 ", Triple{Subject: "9/11", Relation: "has_tags", Object: "9/11"}, true},
		{"a\tb\tc", Triple{Subject: "a", Relation: "b", Object: "c"}, true},
		{"a|b", Triple{}, false},
		{"a|b|c|d", Triple{}, false},
		{"a||c", Triple{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseTriple(tt.line)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseTriple(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRelationWords(t *testing.T) {
	for in, want := range map[string]string{
		"directed_by":                           "directed by",
		"starredActors":                         "starred actors",
		"film.film.directed_by":                 "film film directed by",
		"has_imdb_rating":                       "has imdb rating",
		"people.person.place_of_birth/location": "people person place of birth location",
	} {
		if got := RelationWords(in); got != want {
			t.Errorf("RelationWords(%q) = %q, want %q", in, got, want)
		}
	}
}
