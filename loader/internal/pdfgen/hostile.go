package pdfgen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// Hostile returns syntactically valid PDFs whose structure makes an
// unguarded pdf library hang, overflow the stack or allocate without bound.
// Each has one page whose text would be "Hostile" if it were readable.
func Hostile() map[string][]byte {
	page := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>",
		Stream("BT /F1 12 Tf 72 700 Td (Hostile) Tj ET"),
	}
	files := map[string][]byte{
		// The trailer's /Prev points back at the same xref table.
		"prevloop.pdf": rawPDF(page, func(xref int) string { return fmt.Sprintf("/Prev %d", xref) }, ""),
		// A subsection claiming object number four billion.
		"hugexref.pdf": rawPDF(page, nil, "4000000000 1\n0000000009 00000 n \n"),
		// A content stream whose PNG predictor rows are 100 GB wide.
		"hugecolumns.pdf": rawPDF(append(page[:3:3],
			"<< /Length 8 /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 100000000000 >> >>\nstream\nxxxxxxxx\nendstream"), nil, ""),
	}
	// Objects 1-4 stored inside object stream 5, which is stored inside itself.
	files["objstmcycle.pdf"] = xrefStreamPDF(nil, [][3]int64{{0, 0, 65535}, {2, 5, 0}, {2, 5, 1}, {2, 5, 2}, {2, 5, 3}, {2, 5, 4}}, "")
	// An xref stream that asks for a table of 99 billion entries.
	files["hugesize.pdf"] = xrefStreamPDF(page, nil, "/Size 99999999999")
	return files
}

// rawPDF is Raw with extra trailer entries (given the xref offset) and
// extra xref subsections appended after the real one.
func rawPDF(bodies []string, trailer func(xref int) string, extraXref string) []byte {
	var out bytes.Buffer
	out.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(bodies))
	for i, b := range bodies {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, b)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(bodies)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	out.WriteString(extraXref)
	extra := ""
	if trailer != nil {
		extra = " " + trailer(xref)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(bodies)+1, extra, xref)
	return out.Bytes()
}

// xrefStreamPDF writes bodies as plain objects followed by an uncompressed
// cross-reference stream (W [1 4 2]). entries overrides the generated
// table; dictExtra is added to (and may override) the stream dictionary.
func xrefStreamPDF(bodies []string, entries [][3]int64, dictExtra string) []byte {
	var out bytes.Buffer
	out.WriteString("%PDF-1.5\n")
	if entries == nil {
		entries = append(entries, [3]int64{0, 0, 65535})
	}
	for i, b := range bodies {
		entries = append(entries, [3]int64{1, int64(out.Len()), 0})
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, b)
	}
	n := len(entries)
	entries = append(entries, [3]int64{1, int64(out.Len()), 0}) // the xref stream itself
	var data bytes.Buffer
	for _, e := range entries {
		data.WriteByte(byte(e[0]))
		binary.Write(&data, binary.BigEndian, uint32(e[1]))
		binary.Write(&data, binary.BigEndian, uint16(e[2]))
	}
	xref := out.Len()
	dict := fmt.Sprintf("/Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Length %d", n+1, data.Len())
	if dictExtra != "" {
		key := strings.Fields(dictExtra)[0]
		dict = strings.Replace(dict, key+" ", "/Replaced ", 1) + " " + dictExtra
	}
	fmt.Fprintf(&out, "%d 0 obj\n<< %s >>\nstream\n", n, dict)
	out.Write(data.Bytes())
	fmt.Fprintf(&out, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xref)
	return out.Bytes()
}
