package loader

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// latex reads LaTeX as text: comments and the preamble dropped, sectioning
// commands kept as heading lines, formatting commands reduced to their
// argument text, and math and verbatim environments kept as written. The
// title is \title{...}. \input and \include read files from the folder of
// the file at name (and below it), and \newcommand macros without
// arguments are expanded.
func (l *Loader) latex(name string, data []byte) (*parsed, error) {
	text, warnings, err := decodeText(data, l.utf8)
	if err != nil {
		return nil, err
	}
	env := &texEnv{l: l, macros: map[string]string{}, budget: l.maxBytes - int64(len(data)), expand: maxTexExpansion, stack: []string{filepath.Base(name)}}
	if root, err := os.OpenRoot(filepath.Dir(name)); err == nil {
		// os.Root refuses any path, symbolic links included, that leads
		// out of the folder: a document cannot pull in ~/.ssh/id_rsa.
		defer root.Close()
		env.root = root
	}
	t := &texReader{src: []rune(text), env: env}
	out := t.render()
	warnings = append(warnings, env.warnings...)
	return &parsed{text: tidy(out), title: cleanTitle(t.title), headings: t.headings, warnings: warnings}, nil
}

// maxTexInputDepth bounds \input nesting; real documents nest two or three.
const maxTexInputDepth = 8

// texEnv is what a document's readers share: the folder \input reads
// from, the files being read (to refuse cycles), the macros defined so far
// and the bytes that input and macro expansion may still add, so neither
// a macro that doubles itself nor a chain of inputs can blow up.
type texEnv struct {
	l        *Loader
	root     *os.Root
	stack    []string // files being read, outermost first, relative to root
	macros   map[string]string
	budget   int64 // bytes \input may still read
	expand   int64 // bytes macro expansion may still write
	warnings []Warning
}

// maxTexExpansion bounds what macros may write in all: real documents'
// abbreviations stay far below it, and a macro defined through two copies
// of another (a "billion laughs" in TeX) stops at it.
const maxTexExpansion = 4 << 20

func (e *texEnv) warn(format string, args ...any) {
	if len(e.warnings) < 20 {
		e.warnings = append(e.warnings, newWarning(WarnInputSkipped, 1, format, args...))
	}
}

// read returns the text of \input{arg} (name.tex, else name) from the main
// file's folder, where LaTeX looks when run there, or an error saying why not.
func (e *texEnv) read(arg string) (string, string, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return "", "", errors.New("no file name")
	}
	if e.root == nil {
		return "", "", errors.New("the document's folder cannot be read")
	}
	if len(e.stack) > maxTexInputDepth {
		return "", "", fmt.Errorf("nested more than %d deep", maxTexInputDepth)
	}
	if filepath.IsAbs(arg) || !filepath.IsLocal(filepath.FromSlash(arg)) {
		return "", "", errors.New("outside the document's folder")
	}
	// Relative to the main file's folder, as LaTeX resolves it (the
	// working directory of the run), not to the including file.
	rel := path.Clean(arg)
	names := []string{rel}
	if path.Ext(rel) == "" {
		names = []string{rel + ".tex", rel}
	}
	var lastErr error
	for _, n := range names {
		for _, open := range e.stack {
			if open == n {
				return "", "", errors.New("a cycle: it is being read already")
			}
		}
		// Non-blocking, so that a named pipe does not wait for a writer.
		f, err := e.root.OpenFile(filepath.FromSlash(n), os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			if lastErr == nil || errors.Is(lastErr, fs.ErrNotExist) {
				lastErr = err
			}
			continue
		}
		info, err := f.Stat()
		if err == nil && !info.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
		var data []byte
		if err == nil {
			if info.Size() > e.budget {
				err = fmt.Errorf("over --max-file-size %s with the files before it", SizeText(e.l.maxBytes))
			} else {
				data = make([]byte, info.Size())
				_, err = f.ReadAt(data, 0)
			}
		}
		f.Close()
		if err != nil {
			return "", "", err
		}
		e.budget -= int64(len(data))
		text, _, err := decodeText(data, e.l.utf8)
		return text, n, err
	}
	if errors.Is(lastErr, fs.ErrNotExist) {
		return "", "", errors.New("no such file")
	}
	var pe *fs.PathError
	if errors.As(lastErr, &pe) {
		return "", "", pe.Err
	}
	return "", "", lastErr
}

type texReader struct {
	src      []rune
	i        int
	out      strings.Builder
	title    string
	headings []string
	depth    int
	env      *texEnv
}

// sub makes a reader of src that shares t's environment.
func (t *texReader) sub(src string) *texReader {
	return &texReader{src: []rune(src), depth: t.depth + 1, env: t.env}
}

// texVerbatim environments are copied as written, up to their \end.
var texVerbatim = set("verbatim", "verbatim*", "lstlisting", "minted", "Verbatim", "alltt", "comment",
	"equation", "equation*", "align", "align*", "gather", "gather*", "multline", "multline*",
	"eqnarray", "eqnarray*", "displaymath", "math", "flalign", "flalign*", "alignat", "alignat*")

// texDrop are commands whose arguments are not text.
var texDrop = set("label", "ref", "eqref", "pageref", "cite", "citep", "citet", "nocite", "usepackage",
	"documentclass", "includegraphics", "bibliographystyle", "bibliography", "includeonly",
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
		pre := t.sub(s[:b])
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

// scanTitle finds \title{...} and macro definitions in a preamble, and in
// the files it \inputs.
func (t *texReader) scanTitle() {
	for t.i < len(t.src) {
		if t.src[t.i] == '%' {
			t.skipComment()
			continue
		}
		if t.src[t.i] == '\\' {
			switch name := t.command(); name {
			case "title":
				t.optional()
				t.title = t.groupText()
			case "newcommand", "renewcommand", "providecommand", "def":
				t.define(name)
			case "input", "include":
				if src, ok := t.input(); ok {
					pre := t.sub(src)
					pre.scanTitle()
					t.leave()
					if pre.title != "" {
						t.title = pre.title
					}
				}
			}
			continue
		}
		t.i++
	}
}

// define reads a macro definition after \newcommand (or \def). Only
// macros without arguments are kept: their body is text to expand; one
// with arguments is dropped with its body, as before.
func (t *texReader) define(kind string) {
	t.skipSpace()
	var name string
	if t.peek() == '{' {
		g, _ := t.group()
		name = strings.TrimSpace(g)
	} else if t.peek() == '\\' {
		name = "\\" + t.command()
	}
	if kind == "def" {
		// \def\name#1{...} takes arguments; \def\name{...} does not.
		if t.peek() != '{' {
			for t.i < len(t.src) && t.src[t.i] != '{' {
				t.i++
			}
			t.group()
			return
		}
	}
	j := t.i
	t.skipSpace()
	args := t.peek() == '['
	t.i = j
	t.optional() // [n]: arguments
	t.optional() // [default]
	body, ok := t.group()
	if !ok || args || !strings.HasPrefix(name, "\\") || len(name) < 2 {
		return
	}
	if _, defined := t.env.macros[name[1:]]; defined && kind == "providecommand" {
		return
	}
	t.env.macros[name[1:]] = body
}

// input reads the file an \input{...} or \include{...} names and enters
// it (t.leave when done). A file that cannot be read is left out with a
// warning, as the rest of the document can still be read.
func (t *texReader) input() (string, bool) {
	arg, ok := t.group()
	if !ok {
		// \input name without braces (plain TeX style): up to a space.
		t.skipSpace()
		start := t.i
		for t.i < len(t.src) && !strings.ContainsRune(" \t\n%\\{}", t.src[t.i]) {
			t.i++
		}
		arg = string(t.src[start:t.i])
	}
	src, name, err := t.env.read(arg)
	if err != nil {
		t.env.warn("\\input{%s} left out: %v", arg, err)
		return "", false
	}
	t.env.stack = append(t.env.stack, name)
	return src, true
}

func (t *texReader) leave() { t.env.stack = t.env.stack[:len(t.env.stack)-1] }

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
	sub := t.sub(g)
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
	case "newcommand", "renewcommand", "providecommand", "def":
		t.define(name)
		return
	case "input", "include":
		if name == "include" {
			t.out.WriteByte('\n') // \include starts a new page
		}
		if src, ok := t.input(); ok {
			sub := t.sub(src)
			sub.run(0)
			t.leave()
			t.out.WriteString(sub.out.String())
			t.headings = append(t.headings, sub.headings...)
			if t.title == "" {
				t.title = sub.title
			}
		}
		return
	}
	if body, ok := t.env.macros[name]; ok {
		t.expand(name, body)
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

// expand writes a macro's body as text, within the document's budget and
// nesting depth, so that a macro defined through itself stops.
func (t *texReader) expand(name, body string) {
	cost := int64(len(body)) + 16 // an empty macro costs too
	if t.depth > 64 || cost > t.env.expand {
		t.env.warn("macro \\%s not expanded: defined through itself or expands too far", name)
		delete(t.env.macros, name)
		return
	}
	t.env.expand -= cost
	sub := t.sub(body)
	sub.run(0)
	t.out.WriteString(sub.out.String())
	if t.peek() == ' ' {
		// Like any control word, the macro eats the spaces after it; keep one.
		t.skipSpace()
		t.out.WriteByte(' ')
	} else if t.peek() == '{' && t.i+1 < len(t.src) && t.src[t.i+1] == '}' {
		t.i += 2 // \name{} : the empty group that keeps the space
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
