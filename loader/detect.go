package loader

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"syscall"
	"unicode/utf8"
)

// sniffLen is how much of a file Readable looks at: enough for every
// signature and an HTML head, little enough that walking a folder of
// photos and archives costs a few KiB per file.
const sniffLen = 4 << 10

// maxSniffDir bounds the zip central directory Readable reads; documents'
// directories are a few KiB, and a larger one is an archive of something else.
const maxSniffDir = 1 << 20

// Readable reports whether Load reads the file at path: by its name (see
// Supported), or, for a regular file whose name says nothing Load knows,
// by its first bytes: a PDF, a DOCX, PPTX, ODT, ODP or EPUB (by a zip's
// member names), an HTML page, or gzip around text, HTML or a PDF. So a
// DOCX named report.bin, an HTML page named "page" and gzipped Markdown
// named notes.z are read; photos, archives, executables and plain text
// under unknown names are not. Only the first 4 KiB are read (and a zip's
// central directory, up to 1 MiB), and a named pipe or device is never
// opened for reading.
func Readable(path string) bool {
	return Supported(path) || sniffFile(path) != ""
}

// sniffFile names the format a file's first bytes show, "" for none.
func sniffFile(path string) string {
	if PseudoFS(path) != "" {
		return "" // never opened: see Loader.read
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() == 0 {
		return ""
	}
	head := make([]byte, sniffLen)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return "pdf"
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return sniffZip(f, info.Size())
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		// The inflated start decides: text or a document, not a tar or an image.
		zr, err := gzip.NewReader(io.NewSectionReader(f, 0, info.Size()))
		if err != nil {
			return ""
		}
		inner := make([]byte, sniffLen)
		m, _ := io.ReadFull(zr, inner)
		if m == 0 {
			return ""
		}
		inner = inner[:m]
		if bytes.HasPrefix(inner, []byte("%PDF-")) || looksHTML(inner) || looksText(inner) {
			return "gzip"
		}
		return ""
	case looksHTML(head):
		return "html"
	}
	return ""
}

// sniffZip reads a zip's central directory, when small, to tell a
// document from any other zip (an .xlsx, a .jar, photos).
func sniffZip(f *os.File, size int64) string {
	// The end record is the last 22 bytes unless a comment follows it;
	// documents carry none, so look only at the last KiB.
	tail := make([]byte, min(size, 1024))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
		return ""
	}
	i := bytes.LastIndex(tail, []byte("PK\x05\x06"))
	if i < 0 || len(tail)-i < 22 {
		return ""
	}
	if dir := binary.LittleEndian.Uint32(tail[i+12:]); dir > maxSniffDir {
		return ""
	}
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return ""
	}
	format, err := zipReaderFormat(zr, "")
	if err != nil {
		return ""
	}
	return format
}

// looksText reports whether data reads as text: UTF-8 (a rune cut at
// the end allowed) or a single-byte encoding, with no NUL and few control
// bytes. UTF-16 text is left to names: it is rare under unknown ones.
func looksText(data []byte) bool {
	if bytes.IndexByte(data, 0) >= 0 {
		return false
	}
	ctrl := 0
	for _, c := range data {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != 0x1b {
			ctrl++
		}
	}
	if ctrl*100 > len(data) {
		return false
	}
	// Invalid UTF-8 is repaired on load; here it only must not be mostly junk.
	bad, total := 0, len(data)
	for len(data) > utf8.UTFMax {
		r, n := utf8.DecodeRune(data)
		if r == utf8.RuneError && n == 1 {
			bad++
		}
		data = data[n:]
	}
	return bad*10 <= total
}
