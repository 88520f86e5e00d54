package retrieve

import (
	"strings"
	"testing"
)

func TestDatesAndNumbers(t *testing.T) {
	text := "Charles Babbage (26 December 1791 – 18 October 1871) held the chair from 1828 to 1839; " +
		"UTF-8 dates from September 2, 1992, the A-0 System from May 1952 and 2,500.5 units were sold on 1969-07-20."
	var ds []string
	for _, q := range dates(text) {
		ds = append(ds, q.text)
	}
	if got := strings.Join(ds, "|"); got != "26 December 1791|18 October 1871|1828|1839|September 2, 1992|May 1952|1969-07-20" {
		t.Errorf("dates = %s", got)
	}
	var ns []string
	for _, q := range numbers(text) {
		ns = append(ns, q.text)
	}
	// UTF-8 and A-0 are names, not numbers; 07 and 20 belong to a date.
	if got := strings.Join(ns, "|"); got != "26|1791|18|1871|1828|1839|2|1992|1952|2,500.5|1969" {
		t.Errorf("numbers = %s", got)
	}
	if q, _ := pick(dates(text), text, "October"); q.text != "18 October 1871" {
		t.Errorf("pick near October = %q", q.text)
	}
	if q, _ := pick(dates(text), text, "sold"); q.text != "1969-07-20" {
		t.Errorf("pick near sold = %q", q.text)
	}
	if q, _ := pick(dates(text), text, "absent"); q.text != "26 December 1791" {
		t.Errorf("pick near a missing word = %q; want the first", q.text)
	}
}

func TestCompute(t *testing.T) {
	lr := &logicRun{}
	tests := []struct {
		op, near string
		values   []string
		want     string
	}{
		{"earliest", "", []string{"Kismet, released in 1944", "Destry Rides Again (December 29, 1939)"}, "Destry Rides Again (December 29, 1939)"},
		{"latest", "", []string{"Kismet, released in 1944", "Destry Rides Again (December 29, 1939)"}, "Kismet, released in 1944"},
		{"max", "", []string{"Everest 8849 m", "K2 8611 m"}, "Everest 8849 m"},
		{"min", "", []string{"Everest 8849 m", "K2 8611 m"}, "K2 8611 m"},
		{"sum", "", []string{"3 films", "4.5 hours"}, "7.5"},
		{"diff", "", []string{"8849", "8611"}, "238"},
		{"diff", "born", []string{"died 1990, born 4 February 1943", "born 9 September 1941"}, "1 year"},
		{"count", "", []string{"a", "b", "c"}, "3"},
	}
	for _, tt := range tests {
		items, note := lr.compute(tt.op, tt.values, tt.near)
		if len(items) != 1 || items[0].Name != tt.want {
			t.Errorf("compute %s %v = %+v (%s), want %q", tt.op, tt.values, items, note, tt.want)
		}
	}
	if items, note := lr.compute("diff", []string{"only 1 value"}, ""); items != nil || !strings.Contains(note, "two values") {
		t.Errorf("diff of one value = %+v, %q", items, note)
	}
	if items, note := lr.compute("max", []string{"no numbers here"}, ""); items != nil || note != "no number or date found" {
		t.Errorf("max without numbers = %+v, %q", items, note)
	}
}
