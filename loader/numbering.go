package loader

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// docxLevel is one level of a WordprocessingML list definition.
type docxLevel struct {
	start int
	fmt   string // w:numFmt: decimal, lowerLetter, upperRoman, bullet, none...
	text  string // w:lvlText: "%1.", "%2)", "•", "%1.%2."
}

// docxNumbering renders list labels the way numbering.xml defines them:
// the paragraph's w:numPr names a list (numId) and level (ilvl); each
// list counts its own items, and an item resets the deeper levels.
type docxNumbering struct {
	lists  map[string]*[9]docxLevel // numId -> levels (abstractNum with overrides)
	count  map[string]*[9]int       // numId -> current counter per level (0: not yet)
	styles map[string]styleNum      // paragraph styles that number ("List Number")
	ilvl   int
	style  string // the paragraph's w:pStyle
	direct bool   // the paragraph has its own w:numPr
}

// styleNum is the numbering a paragraph style gives its paragraphs.
type styleNum struct {
	numID string
	ilvl  int
}

// parseNumbering reads word/numbering.xml. Unknown or odd definitions are
// left out rather than refused: a label is a nicety, the text is not.
func parseNumbering(b []byte) (*docxNumbering, error) {
	n := &docxNumbering{lists: map[string]*[9]docxLevel{}, count: map[string]*[9]int{}, styles: map[string]styleNum{}}
	abstract := map[string]*[9]docxLevel{}
	type num struct {
		abs       string
		overrides map[int]int // level -> start
	}
	var nums []struct {
		id string
		num
	}
	d := newXMLDecoder(b)
	var cur *[9]docxLevel // abstractNum being read
	var curNum *num
	lvl, depth := -1, 0
	for {
		tok, err := xmlToken(d, "word/numbering.xml")
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			depth--
			switch t.Name.Local {
			case "abstractNum":
				cur = nil
			case "num":
				curNum = nil
			case "lvl", "lvlOverride":
				lvl = -1
			}
		case xml.StartElement:
			if depth++; depth > maxXMLDepth {
				return nil, fmt.Errorf("%w: part word/numbering.xml nests elements more than %d deep", ErrMalformed, maxXMLDepth)
			}
			val := attr(t, "val")
			switch t.Name.Local {
			case "abstractNum":
				cur = new([9]docxLevel)
				for i := range cur {
					cur[i] = docxLevel{start: 1, fmt: "decimal"}
				}
				abstract[attr(t, "abstractNumId")] = cur
			case "num":
				nums = append(nums, struct {
					id string
					num
				}{id: attr(t, "numId"), num: num{overrides: map[int]int{}}})
				curNum = &nums[len(nums)-1].num
			case "abstractNumId":
				if curNum != nil {
					curNum.abs = val
				}
			case "lvl", "lvlOverride":
				lvl = -1
				if i, err := strconv.Atoi(attr(t, "ilvl")); err == nil && i >= 0 && i < 9 {
					lvl = i
				}
			case "start":
				if cur != nil && lvl >= 0 {
					if v, err := strconv.Atoi(val); err == nil {
						cur[lvl].start = v
					}
				}
			case "startOverride":
				if curNum != nil && lvl >= 0 {
					if v, err := strconv.Atoi(val); err == nil {
						curNum.overrides[lvl] = v
					}
				}
			case "numFmt":
				if cur != nil && lvl >= 0 {
					cur[lvl].fmt = val
				}
			case "lvlText":
				if cur != nil && lvl >= 0 {
					cur[lvl].text = val
				}
			}
		}
	}
	for _, m := range nums {
		a := abstract[m.abs]
		if a == nil {
			continue
		}
		levels := *a
		for l, s := range m.overrides {
			levels[l].start = s
		}
		n.lists[m.id] = &levels
	}
	return n, nil
}

// readStyles notes the paragraph styles of word/styles.xml that number
// their paragraphs, as Word's "List Number" and "List Bullet" do.
func (n *docxNumbering) readStyles(b []byte) error {
	d := newXMLDecoder(b)
	var id string
	var cur styleNum
	depth := 0
	for {
		tok, err := xmlToken(d, "word/styles.xml")
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxXMLDepth {
				return fmt.Errorf("%w: part word/styles.xml nests elements more than %d deep", ErrMalformed, maxXMLDepth)
			}
			switch t.Name.Local {
			case "style":
				id, cur = attr(t, "styleId"), styleNum{}
			case "ilvl":
				if v, err := strconv.Atoi(attr(t, "val")); err == nil && v >= 0 && v < 9 {
					cur.ilvl = v
				}
			case "numId":
				cur.numID = attr(t, "val")
			}
		case xml.EndElement:
			depth--
			if t.Name.Local == "style" && id != "" && cur.numID != "" {
				n.styles[id] = cur
			}
		}
	}
}

// onStart follows a paragraph's w:numPr (ilvl comes before numId in the
// schema) and returns the label to write in front of its text.
func (n *docxNumbering) onStart(se xml.StartElement) string {
	switch se.Name.Local {
	case "pPr":
		n.style, n.direct = "", false
	case "pStyle":
		n.style = attr(se, "val")
	case "numPr":
		n.ilvl, n.direct = 0, true
	case "ilvl":
		if v, err := strconv.Atoi(attr(se, "val")); err == nil && v >= 0 && v < 9 {
			n.ilvl = v
		}
	case "numId":
		return n.label(attr(se, "val"), n.ilvl)
	}
	return ""
}

// onEnd labels, at the end of its properties, a paragraph numbered by its
// style alone.
func (n *docxNumbering) onEnd(local string) string {
	if local != "pPr" || n.direct {
		return ""
	}
	if sn, ok := n.styles[n.style]; ok {
		return n.label(sn.numID, sn.ilvl)
	}
	return ""
}

// label advances list id's counter at level and renders its lvlText.
func (n *docxNumbering) label(id string, level int) string {
	levels := n.lists[id]
	if levels == nil {
		return "" // numId 0 (numbering switched off) or undefined
	}
	c := n.count[id]
	if c == nil {
		c = new([9]int)
		n.count[id] = c
	}
	if c[level] == 0 {
		c[level] = levels[level].start
	} else {
		c[level]++
	}
	for d := level + 1; d < 9; d++ {
		c[d] = 0
	}
	lv := levels[level]
	if lv.fmt == "none" {
		return ""
	}
	if lv.fmt == "bullet" {
		return bulletText(lv.text) + " "
	}
	var b strings.Builder
	t := lv.text
	for i := 0; i < len(t); i++ {
		if t[i] == '%' && i+1 < len(t) && t[i+1] >= '1' && t[i+1] <= '9' {
			k := int(t[i+1] - '1')
			v := c[k]
			if v == 0 {
				v = levels[k].start
			}
			b.WriteString(numberText(v, levels[k].fmt))
			i++
			continue
		}
		b.WriteByte(t[i])
	}
	if s := strings.TrimSpace(b.String()); s != "" {
		return s + " "
	}
	return ""
}

// bulletText maps a bullet's lvlText to a character worth keeping: Word
// and LibreOffice often write symbol-font code points in the private use
// area (U+F0B7 is Symbol's bullet), which mean nothing as text.
func bulletText(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "•"
	}
	for _, r := range s {
		if r >= 0xE000 && r <= 0xF8FF {
			return "•"
		}
	}
	return s
}

// numberText writes v in a w:numFmt.
func numberText(v int, format string) string {
	switch format {
	case "lowerLetter", "upperLetter":
		s := letters(v)
		if format == "upperLetter" {
			s = strings.ToUpper(s)
		}
		return s
	case "lowerRoman", "upperRoman":
		s := roman(v)
		if format == "lowerRoman" {
			s = strings.ToLower(s)
		}
		return s
	case "decimalZero":
		return fmt.Sprintf("%02d", v)
	case "bullet", "none":
		return ""
	}
	return strconv.Itoa(v)
}

// letters counts a, b, ... z, aa, bb, ... as Word does.
func letters(v int) string {
	if v < 1 {
		return strconv.Itoa(v)
	}
	return strings.Repeat(string(rune('a'+(v-1)%26)), (v-1)/26+1)
}

func roman(v int) string {
	if v < 1 || v > 3999 {
		return strconv.Itoa(v)
	}
	var b strings.Builder
	for _, p := range []struct {
		n int
		s string
	}{{1000, "M"}, {900, "CM"}, {500, "D"}, {400, "CD"}, {100, "C"}, {90, "XC"}, {50, "L"}, {40, "XL"}, {10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"}} {
		for v >= p.n {
			b.WriteString(p.s)
			v -= p.n
		}
	}
	return b.String()
}
