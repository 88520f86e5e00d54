package loader

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// odfLevel is one level of an OpenDocument list style.
type odfLevel struct {
	number        bool   // list-level-style-number (else a bullet or image)
	format        string // style:num-format: "1", "a", "A", "i", "I", "" (none)
	prefix        string
	suffix        string
	start         int
	displayLevels int
}

// odfLists numbers OpenDocument list items as their list styles say
// ("1.", "a)", "ii.", "1.2."), where the text holds only the structure.
// Bullets stay "- ". Each text:list starts its count afresh unless it
// continues the one before (text:continue-numbering, text:continue-list).
type odfLists struct {
	styles map[string]*[10]odfLevel
	open   []string // style name of each open text:list, innermost last
	count  [10]int  // counters of the current list, by level
	last   string   // style of the list counted
}

// readListStyles adds the text:list-style definitions of an ODF part.
func (o *odfLists) readListStyles(part string, b []byte) error {
	d := newXMLDecoder(b)
	var cur *[10]odfLevel
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errXML(part, err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			depth--
			if t.Name.Local == "list-style" {
				cur = nil
			}
		case xml.StartElement:
			if depth++; depth > maxXMLDepth {
				return fmt.Errorf("%w: part %s nests elements more than %d deep", ErrMalformed, part, maxXMLDepth)
			}
			switch t.Name.Local {
			case "list-style":
				cur = new([10]odfLevel)
				o.styles[attr(t, "name")] = cur
			case "list-level-style-number", "list-level-style-bullet", "list-level-style-image":
				level, err := strconv.Atoi(attr(t, "level"))
				if cur == nil || err != nil || level < 1 || level > 10 {
					continue
				}
				lv := odfLevel{number: t.Name.Local == "list-level-style-number", start: 1, displayLevels: 1}
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "num-format":
						lv.format = a.Value
					case "num-prefix":
						lv.prefix = a.Value
					case "num-suffix":
						lv.suffix = a.Value
					case "start-value":
						if v, err := strconv.Atoi(a.Value); err == nil {
							lv.start = v
						}
					case "display-levels":
						if v, err := strconv.Atoi(a.Value); err == nil && v >= 1 && v <= 10 {
							lv.displayLevels = v
						}
					}
				}
				cur[level-1] = lv
			}
		}
	}
}

// onStart follows lists and returns an item's label.
func (o *odfLists) onStart(se xml.StartElement) string {
	switch se.Name.Local {
	case "list":
		style := attr(se, "style-name")
		if style == "" && len(o.open) > 0 {
			style = o.open[len(o.open)-1] // a nested list inherits its style
		}
		if len(o.open) == 0 {
			// continue-list names the list to go on from by id; the
			// one before with the same style stands in for it.
			goesOn := attr(se, "continue-numbering") == "true" || attr(se, "continue-list") != ""
			if !goesOn || style != o.last {
				o.count = [10]int{}
			}
			o.last = style
		}
		o.open = append(o.open, style)
	case "list-item":
		return o.label(se)
	}
	return ""
}

func (o *odfLists) onEnd(name string) string {
	if name == "list" && len(o.open) > 0 {
		o.open = o.open[:len(o.open)-1]
	}
	return ""
}

func (o *odfLists) label(se xml.StartElement) string {
	level := len(o.open) - 1
	if level < 0 || level >= 10 {
		return ""
	}
	levels := o.styles[o.open[level]]
	if levels == nil || !levels[level].number || levels[level].format == "" {
		return ""
	}
	if v, err := strconv.Atoi(attr(se, "start-value")); err == nil {
		o.count[level] = v
	} else if o.count[level] == 0 {
		o.count[level] = levels[level].start
	} else {
		o.count[level]++
	}
	for d := level + 1; d < 10; d++ {
		o.count[d] = 0
	}
	lv := levels[level]
	var parts []string
	for k := max(0, level-lv.displayLevels+1); k <= level; k++ {
		v := o.count[k]
		if v == 0 {
			v = levels[k].start
		}
		parts = append(parts, odfNumber(v, levels[k].format))
	}
	return lv.prefix + strings.Join(parts, ".") + lv.suffix + " "
}

// odfNumber writes v in a style:num-format.
func odfNumber(v int, format string) string {
	switch format {
	case "a":
		return letters(v)
	case "A":
		return strings.ToUpper(letters(v))
	case "i":
		return strings.ToLower(roman(v))
	case "I":
		return roman(v)
	}
	return strconv.Itoa(v)
}
