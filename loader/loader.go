// Package loader is docgraph's first stage: it reads text, Markdown, PDF,
// HTML, Office Open XML (DOCX, PPTX), OpenDocument (ODT, ODP), EPUB,
// reStructuredText and LaTeX files, plain or gzipped, into Documents.
// It normalises text (BOM, CRLF, invalid UTF-8) and rebuilds PDF words and lines from glyph positions.
package loader

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Document is one loaded file (or, via NewDocument, one in-memory text).
type Document struct {
	ID      string // first 32 hex chars of sha256(Text): identical text, identical ID
	Hash    string // full hex sha256 of Text
	Path    string
	Title   string // metadata title, else the first heading that is not generic, else from the file name
	Text    string // UTF-8, LF line ends
	Format  string // "txt", "md", "pdf", "html", "docx", "pptx", "odt", "odp", "epub", "rst" or "tex"; gzipped files carry the inner format
	Size    int64  // bytes on disk
	ModTime time.Time
	// Warnings are problems that were repaired rather than rejected, one
	// line each, for people; Issues holds the same warnings counted and
	// by kind (Warnings[i] == Issues[i].Message), for programs.
	Warnings []string
	Issues   []Warning
}

// ContentID is the document id of content with the given Hash: the
// identity NewDocument gives it ("" for a hash too short to be one).
func ContentID(hash string) string {
	if len(hash) < 32 {
		return ""
	}
	return hash[:32]
}

// NewDocument makes a Document for text that does not come from a file
// (for example evaluation passages); ID and Hash are computed from text.
func NewDocument(path, format, title, text string) *Document {
	sum := sha256.Sum256([]byte(text))
	hash := hex.EncodeToString(sum[:])
	return &Document{
		ID:     ContentID(hash),
		Hash:   hash,
		Path:   path,
		Title:  title,
		Text:   text,
		Format: format,
		Size:   int64(len(text)),
	}
}

// Sentinel causes. Every error from Load is a *FileError wrapping one of
// these where one applies, so callers can branch with errors.Is.
var (
	ErrUnsupported  = errors.New("unsupported file type")
	ErrEmpty        = errors.New("empty document")
	ErrBinary       = errors.New("binary content")
	ErrTooLarge     = errors.New("file too large")
	ErrInvalidUTF8  = errors.New("invalid UTF-8")
	ErrMalformedPDF = errors.New("malformed PDF")
	ErrEncryptedPDF = errors.New("encrypted PDF")
	// ErrMalformed is a document other than a PDF whose container or
	// markup cannot be read: a broken zip or gzip, a missing part, XML
	// that is not well formed, nests too deeply or declares entities.
	ErrMalformed = errors.New("malformed document")
	// ErrEncrypted is a password-protected Office, OpenDocument or EPUB file.
	ErrEncrypted = errors.New("encrypted document")
)

// Version names the loader's way of reading files. A file that failed to
// load for a reason in its own bytes is not read again while it and the
// loader stay the same; change Version when the loader reads more files.
const Version = "2026-11-27.2"

// InContent reports whether err is a load failure caused by the file's
// bytes alone (empty, binary, invalid UTF-8, malformed or encrypted PDF):
// the same bytes fail the same way with the same loader. A size limit, an
// unsupported name or an I/O error are not: they depend on settings or luck.
func InContent(err error) bool {
	for _, c := range []error{ErrEmpty, ErrBinary, ErrInvalidUTF8, ErrMalformedPDF, ErrEncryptedPDF, ErrMalformed, ErrEncrypted} {
		if errors.Is(err, c) {
			return true
		}
	}
	return false
}

// FileError names the file a load failed on and why.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return "load " + e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// UTF8Policy says what to do with text files that are not valid UTF-8.
type UTF8Policy int

const (
	// Repair replaces every invalid byte with U+FFFD and records a Warning.
	Repair UTF8Policy = iota
	// Reject fails the load with ErrInvalidUTF8.
	Reject
)

// DefaultMaxBytes is the size limit used unless WithMaxBytes says otherwise.
const DefaultMaxBytes int64 = 64 << 20

// Loader reads files into Documents. It is safe for concurrent use.
type Loader struct {
	maxBytes int64
	utf8     UTF8Policy
}

// Option configures a Loader.
type Option func(*Loader)

// WithMaxBytes sets the largest file Load accepts; larger files fail with
// ErrTooLarge, in a message naming the setting the commands expose it as
// (--max-file-size). n <= 0 keeps the default (64 MiB).
func WithMaxBytes(n int64) Option {
	return func(l *Loader) {
		if n > 0 {
			l.maxBytes = n
		}
	}
}

// WithInvalidUTF8 sets how text files with invalid UTF-8 are handled (default Repair).
func WithInvalidUTF8(policy UTF8Policy) Option {
	return func(l *Loader) { l.utf8 = policy }
}

// New returns a Loader with the given options applied.
func New(opts ...Option) *Loader {
	l := &Loader{maxBytes: DefaultMaxBytes, utf8: Repair}
	for _, o := range opts {
		o(l)
	}
	return l
}

// formats maps file extensions to the format they are read as when the
// content does not say otherwise (see sniff).
var formats = map[string]string{
	".txt":      "txt",
	".text":     "txt",
	".md":       "md",
	".markdown": "md",
	".pdf":      "pdf",
	".html":     "html",
	".htm":      "html",
	".xhtml":    "html",
	".xht":      "html",
	".docx":     "docx",
	".pptx":     "pptx",
	".odt":      "odt",
	".odp":      "odp",
	".epub":     "epub",
	".rst":      "rst",
	".rest":     "rst",
	".tex":      "tex",
	".latex":    "tex",
}

// Extensions lists the file extensions Load reads, sorted, for messages.
func Extensions() []string {
	exts := make([]string, 0, len(formats)+1)
	for e := range formats {
		exts = append(exts, e)
	}
	exts = append(exts, ".gz")
	sort.Strings(exts)
	return exts
}

// Supported reports whether Load handles path, judged by its name alone.
// A gzipped file is supported when its inner name is, or when the inner
// name has no extension or is a changelog, NEWS or README (as in
// /usr/share/doc), whose content then decides.
func Supported(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".gz" {
		inner := strings.TrimSuffix(path, filepath.Ext(path))
		if strings.EqualFold(filepath.Ext(inner), ".gz") {
			return false
		}
		if Supported(inner) || filepath.Ext(inner) == "" {
			return true
		}
		base := strings.ToLower(filepath.Base(inner))
		for _, p := range []string{"changelog", "news", "readme", "changes", "copyright", "todo", "faq"} {
			if strings.HasPrefix(base, p) {
				return true
			}
		}
		return false
	}
	_, ok := formats[ext]
	return ok
}

// Load reads the file at path into a Document. Errors are *FileError.
func (l *Loader) Load(ctx context.Context, path string) (*Document, error) {
	doc, err := l.load(ctx, path)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return doc, nil
}

func (l *Loader) load(ctx context.Context, path string) (*Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !Supported(path) && sniffFile(path) == "" {
		// The name says nothing Load knows, and neither do the first bytes
		// (see Readable); the content then decides in parse.
		if ext := filepath.Ext(path); ext != "" {
			return nil, fmt.Errorf("%w: extension %q", ErrUnsupported, ext)
		}
		return nil, fmt.Errorf("%w: no file extension", ErrUnsupported)
	}
	data, info, err := l.read(path)
	if err != nil {
		return nil, err
	}
	p, err := l.parse(ctx, path, data, 0)
	if err != nil {
		return nil, err
	}
	doc := NewDocument(path, p.format, pickTitle(p.title, p.headings, path), p.text)
	doc.Size = info.Size()
	doc.ModTime = info.ModTime()
	doc.Issues, doc.Warnings = p.warnings, messages(p.warnings)
	return doc, nil
}

// parsed is what a format's reader makes of a file's bytes.
type parsed struct {
	format   string
	text     string
	title    string   // from the format's metadata, "" if none
	headings []string // in document order, for a title when metadata has none
	warnings []Warning
}

// parse reads data as the format its content shows, else as its name
// says. depth counts gzip layers, of which one is read.
func (l *Loader) parse(ctx context.Context, name string, data []byte, depth int) (*parsed, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: file is empty or only whitespace", ErrEmpty)
	}
	ext := strings.ToLower(filepath.Ext(name))
	byName := formats[ext]
	format, err := sniff(data, byName)
	if err != nil {
		return nil, err
	}
	if format == "" && byName == "" && ext == ".gz" {
		format = "gzip"
	}
	if format == "" {
		format = byName
	}
	if format == "" {
		// A gzipped file's inner name without a known extension: read as
		// text, or HTML if it looks like it.
		format = "txt"
		if looksHTML(data) {
			format = "html"
		}
	}
	var p *parsed
	switch format {
	case "gzip":
		if depth > 0 {
			return nil, fmt.Errorf("%w: gzip inside gzip", ErrMalformed)
		}
		return l.gunzip(ctx, name, data, depth)
	case "pdf":
		var text, title string
		var warnings []Warning
		text, title, warnings, err = extractPDF(ctx, data)
		p = &parsed{text: text, title: title, warnings: warnings}
	case "html":
		p, err = l.html(data)
	case "docx":
		p, err = l.docx(ctx, data)
	case "pptx":
		p, err = l.pptx(ctx, data)
	case "odt", "odp":
		p, err = l.odf(ctx, data)
	case "epub":
		p, err = l.epub(ctx, data)
	case "rst":
		p, err = l.rst(data)
	case "tex":
		p, err = l.latex(name, data)
	default:
		var text string
		var warnings []Warning
		text, warnings, err = decodeText(data, l.utf8)
		p = &parsed{text: text, warnings: warnings}
		if err == nil && format == "md" {
			p.title = markdownTitle(text)
		}
	}
	if err != nil {
		return nil, err
	}
	if p.format == "" {
		p.format = format
	}
	if strings.TrimSpace(p.text) == "" {
		return nil, fmt.Errorf("%w: no text in the %s file", ErrEmpty, p.format)
	}
	return p, nil
}

// read returns the whole file, refusing anything over the size limit. The
// limit is enforced on the bytes actually read too, because Stat lies for
// pipes and files that grow while we read them.
func (l *Loader) read(path string) ([]byte, os.FileInfo, error) {
	// Asked before the open: O_NONBLOCK does not keep a read of /proc/kmsg
	// from waiting (the runtime parks it until the kernel logs), and
	// nothing is to be had from such files anyway.
	if fs := PseudoFS(path); fs != "" {
		return nil, nil, fmt.Errorf("%w: %s", ErrUnsupported, PseudoFSReason(fs))
	}
	// Non-blocking, so that opening a named pipe returns at once (a plain
	// open waits for a writer, forever) and the check below refuses it;
	// reads of a regular file are unaffected.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		// FileError already names the path; keep the cause (and errors.Is
		// fs.ErrNotExist and friends) without saying the path twice.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, nil, fmt.Errorf("%s: %w", pe.Op, pe.Err)
		}
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if info.IsDir() {
		return nil, nil, fmt.Errorf("%w: is a directory", ErrUnsupported)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%w: not a regular file (a named pipe, device or socket)", ErrUnsupported)
	}
	if info.Size() > l.maxBytes {
		return nil, nil, fmt.Errorf("%w: is %s, over --max-file-size %s", ErrTooLarge, SizeText(info.Size()), SizeText(l.maxBytes))
	}
	data, err := io.ReadAll(io.LimitReader(f, l.maxBytes+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) > l.maxBytes {
		return nil, nil, fmt.Errorf("%w: grew past --max-file-size %s while read", ErrTooLarge, SizeText(l.maxBytes))
	}
	return data, info, nil
}

// SizeText writes n bytes for people: "80 MiB", "200 MB", "63.9 MiB", "120 bytes".
func SizeText(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	i, div := 0, int64(1<<10)
	for i < len(units)-1 && n >= div<<10 {
		i, div = i+1, div<<10
	}
	if n%div == 0 {
		return fmt.Sprintf("%d %s", n/div, units[i])
	}
	// A limit given in decimal units ("200MB") reads back as given.
	for _, u := range []struct {
		name string
		n    int64
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}} {
		if n%u.n == 0 {
			return fmt.Sprintf("%d %s", n/u.n, u.name)
		}
	}
	return fmt.Sprintf("%.1f %s", float64(n)/float64(div), units[i])
}
