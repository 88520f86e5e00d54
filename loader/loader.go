// Package loader is docgraph's first stage: it reads .txt, Markdown and PDF files into Documents.
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
	"strings"
	"syscall"
	"time"
)

// Document is one loaded file (or, via NewDocument, one in-memory text).
type Document struct {
	ID      string // first 32 hex chars of sha256(Text): identical text, identical ID
	Hash    string // full hex sha256 of Text
	Path    string
	Title   string // first Markdown heading, PDF metadata title, else the file name without extension
	Text    string // UTF-8, LF line ends
	Format  string // "txt", "md" or "pdf"
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
)

// Version names the loader's way of reading files. A file that failed to
// load for a reason in its own bytes is not read again while it and the
// loader stay the same; change Version when the loader reads more files.
const Version = "2026-11-23"

// InContent reports whether err is a load failure caused by the file's
// bytes alone (empty, binary, invalid UTF-8, malformed or encrypted PDF):
// the same bytes fail the same way with the same loader. A size limit, an
// unsupported name or an I/O error are not: they depend on settings or luck.
func InContent(err error) bool {
	for _, c := range []error{ErrEmpty, ErrBinary, ErrInvalidUTF8, ErrMalformedPDF, ErrEncryptedPDF} {
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

var formats = map[string]string{
	".txt":      "txt",
	".text":     "txt",
	".md":       "md",
	".markdown": "md",
	".pdf":      "pdf",
}

// Supported reports whether Load handles path, judged by its extension alone.
func Supported(path string) bool {
	_, ok := formats[strings.ToLower(filepath.Ext(path))]
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
	ext := filepath.Ext(path)
	format, ok := formats[strings.ToLower(ext)]
	if !ok {
		if ext == "" {
			return nil, fmt.Errorf("%w: no file extension", ErrUnsupported)
		}
		return nil, fmt.Errorf("%w: extension %q", ErrUnsupported, ext)
	}
	data, info, err := l.read(path)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: file is empty or only whitespace", ErrEmpty)
	}

	var text, title string
	var warnings []Warning
	switch format {
	case "pdf":
		text, title, warnings, err = extractPDF(ctx, data)
	default:
		text, warnings, err = decodeText(data, l.utf8)
		if err == nil && format == "md" {
			title = markdownTitle(text)
		}
	}
	if err != nil {
		return nil, err
	}
	if title == "" {
		title = strings.TrimSuffix(filepath.Base(path), ext)
	}
	doc := NewDocument(path, format, title, text)
	doc.Size = info.Size()
	doc.ModTime = info.ModTime()
	doc.Issues, doc.Warnings = warnings, messages(warnings)
	return doc, nil
}

// read returns the whole file, refusing anything over the size limit. The
// limit is enforced on the bytes actually read too, because Stat lies for
// pipes and files that grow while we read them.
func (l *Loader) read(path string) ([]byte, os.FileInfo, error) {
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
