package glyphs

import "testing"

func TestName(t *testing.T) {
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"A", "A", true},
		{"fi", "\uFB01", true},
		{"f_f_i", "ffi", true},
		{"uni00660069", "fi", true},
		{"u1F600", "😀", true},
		{"a.sc", "a", true},
		{"Asmall", "a", true},
		{"dotlessj", "ȷ", true},
		{"angbracketleft", "⟨", true},
		{"parenleftbigg", "(", true},
		{"summationdisplay", "∑", true},
		{"compwordmark", "", true},
		{".notdef", "", false},
		{"g41", "", false},
		{"uni0066006", "", false},
		{"unid800", "", false},
	}
	for _, tc := range tests {
		got, ok := Name(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Name(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCodeName(t *testing.T) {
	for name, want := range map[string]rune{"a65": 'A', "g41": ')', "c32": ' ', "index97": 'a', "G3": 0, "x": 0, "a9": 0} {
		got, ok := CodeName(name)
		if got != want || ok != (want != 0) {
			t.Errorf("CodeName(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

func TestEncodings(t *testing.T) {
	checks := []struct {
		table *[256]rune
		code  byte
		want  rune
	}{
		{&StandardEncoding, 0xAE, 'ﬁ'}, {&StandardEncoding, '\'', '’'}, {&WinAnsiEncoding, 0x93, '“'},
		{&WinAnsiEncoding, 0xE9, 'é'}, {&MacRomanEncoding, 0x8E, 'é'}, {&SymbolEncoding, 'a', 'α'},
	}
	for _, c := range checks {
		if got := c.table[c.code]; got != c.want {
			t.Errorf("code %#x: %q, want %q", c.code, got, c.want)
		}
	}
}
