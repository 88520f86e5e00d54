package graphbuild

// foldTable maps Latin letters with diacritics to their base letters, so
// "Aschenbrödel" and "Aschenbrodel" share a key. It covers Latin-1 and Latin
// Extended-A, where almost all diacritics in European names live; other
// scripts pass through unchanged.
var foldTable = func() map[rune]string {
	m := map[rune]string{}
	groups := map[string]string{
		"a": "àáâãäåāăą", "c": "çćĉċč", "d": "ďđ", "e": "èéêëēĕėęě", "g": "ĝğġģ", "h": "ĥħ",
		"i": "ìíîïĩīĭįı", "j": "ĵ", "k": "ķ", "l": "ĺļľŀł", "n": "ñńņňŉ", "o": "òóôõöøōŏő",
		"r": "ŕŗř", "s": "śŝşšſ", "t": "ţťŧ", "u": "ùúûüũūŭůűų", "w": "ŵ", "y": "ýÿŷ", "z": "źżž",
		"ae": "æ", "oe": "œ", "ss": "ß", "th": "þ", "dh": "ð",
	}
	for base, letters := range groups {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
}()
