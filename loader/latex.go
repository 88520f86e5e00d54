package loader

import (
	"strings"
)

// latex reads LaTeX as text: comments and the preamble dropped, sectioning
// commands kept as heading lines, formatting commands reduced to their
// argument text, and math and verbatim environments kept as written. The
// title is \title{...}.
func (l *Loader) latex(data []byte) (*parsed, error) {
	text, warnings, err := decodeText(data, l.utf8)
	if err != nil {
		return nil, err
	}
	t := &texReader{src: []rune(text)}
	out := t.render()
	return &parsed{text: tidy(out), title: cleanTitle(t.title), headings: t.headings, warnings: warnings}, nil
}

type texReader struct {
	src      []rune
	i        int
	out      strings.Builder
	title    string
	headings []string
	depth    int
}

// texVerbatim environments are copied as written, up to their \end.
var texVerbatim = set("verbatim", "verbatim*", "lstlisting", "minted", "Verbatim", "alltt", "comment",
	"equation", "equation*", "align", "align*", "gather", "gather*", "multline", "multline*",
	"eqnarray", "eqnarray*", "displaymath", "math", "flalign", "flalign*", "alignat", "alignat*")

// texDrop are commands whose arguments are not text.
var texDrop = set("label", "ref", "eqref", "pageref", "cite", "citep", "citet", "nocite", "usepackage",
	"documentclass", "includegraphics", "bibliographystyle", "bibliography", "input", "include",
	"vspace", "hspace", "vskip", "hskip", "setlength", "addtolength", "newcommand", "renewcommand",
	"providecommand", "newenvironment", "renewenvironment", "setcounter", "addtocounter", "pagestyle",
	"thispagestyle", "pagenumbering", "geometry", "hypersetup", "definecolor", "graphicspath",
	"newtheorem", "DeclareMathOperator", "index", "glossary", "addcontentsline", "color", "linespread",
	"fontsize", "selectfont", "tableofcontents", "maketitle", "newpage", "clearpage", "cleardoublepage",
	"noindent", "centering", "raggedright", "raggedleft", "small", "large", "Large", "LARGE", "huge",
	"Huge", "footnotesize", "scriptsize", "tiny", "normalsize", "bfseries", "itshape", "ttfamily",
	"rmfamily", "sffamily", "mdseries", "upshape", "scshape", "hline", "cline", "toprule", "midrule",
	"bottomrule", "vfill", "hfill", "bigskip", "medskip", "smallskip", "par", "indent", "protect",
	"phantomsection", "appendix", "frontmatter", "mainmatter", "backmatter", "author", "date",
	"thanks", "and", "url", "makeatletter", "makeatother", "noalign", "multicolumn", "caption*")

var texSection = set("part", "chapter", "section", "subsection", "subsubsection", "paragraph", "subparagraph", "frametitle")

func (t *texReader) peek() rune {
	if t.i < len(t.src) {
		return t.src[t.i]
	}
	return 0
}

func (t *texReader) render() string {
	// The preamble holds no text but the title.
	s := string(t.src)
	if b := strings.Index(s, `\begin{document}`); b >= 0 {
		pre := &texReader{src: []rune(s[:b])}
		pre.scanTitle()
		t.title = pre.title
		t.src = []rune(s[b+len(`\begin{document}`):])
		if e := strings.Index(string(t.src), `\end{document}`); e >= 0 {
			t.src = []rune(string(t.src)[:e])
		}
	}
	t.run(0)
	return t.out.String()
}

// scanTitle finds \title{...} in a preamble.
func (t *texReader) scanTitle() {
	for t.i < len(t.src) {
		if t.src[t.i] == '%' {
			t.skipComment()
			continue
		}
		if t.src[t.i] == '\\' {
			name := t.command()
			if name == "title" {
				t.optional()
				t.title = t.groupText()
			}
			continue
		}
		t.i++
	}
}

func (t *texReader) skipComment() {
	for t.i < len(t.src) && t.src[t.i] != '\n' {
		t.i++
	}
	// A comment eats its line end and the next line's indentation.
	if t.i < len(t.src) {
		t.i++
	}
	for t.i < len(t.src) && (t.src[t.i] == ' ' || t.src[t.i] == '\t') {
		t.i++
	}
}

// command reads "\name" (t.i at the backslash) and returns name; for a
// control symbol ("\%") the symbol itself.
func (t *texReader) command() string {
	t.i++
	start := t.i
	for t.i < len(t.src) && (t.src[t.i] >= 'a' && t.src[t.i] <= 'z' || t.src[t.i] >= 'A' && t.src[t.i] <= 'Z' || t.src[t.i] == '@') {
		t.i++
	}
	if t.i == start && t.i < len(t.src) {
		t.i++
		return string(t.src[start:t.i])
	}
	name := string(t.src[start:t.i])
	if t.peek() == '*' {
		t.i++
	}
	return name
}

func (t *texReader) skipSpace() {
	for t.i < len(t.src) && (t.src[t.i] == ' ' || t.src[t.i] == '\t') {
		t.i++
	}
}

// optional skips a [...] argument.
func (t *texReader) optional() {
	j := t.i
	for j < len(t.src) && (t.src[j] == ' ' || t.src[j] == '\t') {
		j++
	}
	if j >= len(t.src) || t.src[j] != '[' {
		return
	}
	depth := 0
	for ; j < len(t.src); j++ {
		switch t.src[j] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				t.i = j + 1
				return
			}
		}
	}
}

// group returns the raw text of a {...} argument ("" if none follows).
func (t *texReader) group() (string, bool) {
	t.skipSpace()
	if t.peek() != '{' {
		return "", false
	}
	depth := 0
	start := t.i + 1
	for ; t.i < len(t.src); t.i++ {
		switch t.src[t.i] {
		case '\\':
			t.i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				s := string(t.src[start:t.i])
				t.i++
				return s, true
			}
		}
	}
	return string(t.src[start:]), true
}

// groupText renders a {...} argument as text.
func (t *texReader) groupText() string {
	g, _ := t.group()
	if t.depth > 64 {
		return g
	}
	sub := &texReader{src: []rune(g), depth: t.depth + 1}
	sub.run(0)
	t.headings = append(t.headings, sub.headings...)
	return sub.out.String()
}

func (t *texReader) run(_ int) {
	for t.i < len(t.src) {
		c := t.src[t.i]
		switch c {
		case '%':
			t.skipComment()
		case '{', '}':
			t.i++
		case '~':
			t.out.WriteByte(' ')
			t.i++
		case '$':
			t.math()
		case '\\':
			t.control()
		default:
			t.out.WriteRune(c)
			t.i++
		}
	}
}

// math copies $...$, $$...$$ as written.
func (t *texReader) math() {
	start := t.i
	delim := "$"
	if t.i+1 < len(t.src) && t.src[t.i+1] == '$' {
		delim = "$$"
	}
	j := t.i + len(delim)
	for j < len(t.src) {
		if t.src[j] == '\\' {
			j += 2
			continue
		}
		if strings.HasPrefix(string(t.src[j:min(j+2, len(t.src))]), delim) {
			j += len(delim)
			t.out.WriteString(string(t.src[start:j]))
			t.i = j
			return
		}
		j++
	}
	t.out.WriteString(string(t.src[start:]))
	t.i = len(t.src)
}

func (t *texReader) control() {
	start := t.i
	name := t.command()
	switch name {
	case "%", "&", "$", "#", "_", "{", "}":
		t.out.WriteString(name)
		return
	case "\\":
		t.optional()
		t.out.WriteByte('\n')
		return
	case ",", ";", ":", " ", "!", "/":
		t.out.WriteByte(' ')
		return
	case "[", "(":
		end := `\]`
		if name == "(" {
			end = `\)`
		}
		rest := string(t.src[t.i:])
		if k := strings.Index(rest, end); k >= 0 {
			t.out.WriteString(string(t.src[start:t.i]) + rest[:k+2])
			t.i += len([]rune(rest[:k+2]))
		} else {
			t.out.WriteString(string(t.src[start:]))
			t.i = len(t.src)
		}
		return
	case "item":
		t.optional()
		t.skipSpace()
		t.out.WriteString("\n- ")
		return
	case "begin":
		env, _ := t.group()
		if texVerbatim[env] {
			end := `\end{` + env + `}`
			rest := string(t.src[t.i:])
			k := strings.Index(rest, end)
			if k < 0 {
				k = len(rest)
			}
			body := rest[:k]
			if strings.HasPrefix(env, "verbatim") || env == "lstlisting" || env == "minted" || env == "Verbatim" || env == "alltt" {
				if env == "minted" {
					body = skipArgPrefix(body)
				}
				t.out.WriteString("\n" + strings.Trim(body, "\n") + "\n")
			} else if env != "comment" {
				t.out.WriteString("\n" + `\begin{` + env + `}` + body + end + "\n")
			}
			t.i += len([]rune(rest[:min(len(rest), k+len(end))]))
			return
		}
		// Environment arguments (tabular's column spec, figure's placement).
		t.optional()
		if env == "tabular" || env == "tabularx" || env == "longtable" || env == "array" {
			if env == "tabularx" {
				t.group()
			}
			t.group()
		}
		t.out.WriteByte('\n')
		return
	case "end":
		t.group()
		t.out.WriteByte('\n')
		return
	case "title":
		t.optional()
		if s := t.groupText(); t.title == "" {
			t.title = s
		}
		return
	}
	if texSection[name] {
		t.optional()
		h := cleanTitle(t.groupText())
		t.out.WriteString("\n\n" + h + "\n\n")
		if h != "" {
			t.headings = append(t.headings, h)
		}
		return
	}
	if texDrop[name] {
		t.optional()
		for t.peek() == '{' || t.peek() == ' ' && t.i+1 < len(t.src) && t.src[t.i+1] == '{' {
			if _, ok := t.group(); !ok {
				break
			}
		}
		return
	}
	if name == "footnote" || name == "emph" || name == "textbf" || name == "textit" || name == "texttt" ||
		name == "underline" || name == "text" || name == "mbox" || name == "textsc" || name == "textrm" ||
		name == "textsf" || name == "caption" || name == "href" || name == "textnormal" || name == "hbox" {
		t.optional()
		if name == "href" {
			t.group() // the URL
		}
		s := t.groupText()
		if name == "footnote" {
			s = " (" + strings.TrimSpace(s) + ")"
		}
		t.out.WriteString(s)
		return
	}
	// Unknown commands: the name goes, the arguments' text stays (run
	// meets the braces and reads through them).
	switch name {
	case "LaTeX":
		t.out.WriteString("LaTeX")
	case "TeX":
		t.out.WriteString("TeX")
	case "ldots", "dots":
		t.out.WriteString("...")
	}
	if t.peek() == ' ' && name != "" && (name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z') {
		// A control word eats the spaces after it; keep one between words.
		t.skipSpace()
		t.out.WriteByte(' ')
	}
}

// skipArgPrefix drops a minted environment's {language} argument.
func skipArgPrefix(body string) string {
	s := strings.TrimLeft(body, " \t")
	if strings.HasPrefix(s, "[") {
		if k := strings.IndexByte(s, ']'); k >= 0 {
			s = s[k+1:]
		}
	}
	if strings.HasPrefix(s, "{") {
		if k := strings.IndexByte(s, '}'); k >= 0 {
			return s[k+1:]
		}
	}
	return body
}
