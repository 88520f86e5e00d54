package pdfgen

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/docgraph/docgraph/loader/internal/afm"
)

// Fixtures returns the loader's PDF test files and their expected texts,
// keyed by file name. The output is deterministic, so tests can check that
// the committed copies in testdata/pdf still match this code.
func Fixtures() map[string][]byte {
	files := make(map[string][]byte)
	prosePDF, proseText := Prose()
	files["prose.pdf"] = prosePDF
	files["prose.txt"] = []byte(proseText)
	// Cut in half: the xref table and %%EOF are gone.
	files["truncated.pdf"] = prosePDF[:len(prosePDF)/2]

	layoutPDF, layoutText := layout()
	files["layout.pdf"] = layoutPDF
	files["layout.txt"] = []byte(layoutText)

	nwPDF, nwText := noWidths()
	files["nowidths.pdf"] = nwPDF
	files["nowidths.txt"] = []byte(nwText)

	files["scanned.pdf"] = scanned()
	files["badpage.pdf"] = badPage()

	// A page tree whose /Kids include the tree itself, twice: readers that
	// follow it without limits never stop.
	files["cyclickids.pdf"] = Raw(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [2 0 R 3 0 R 2 0 R] /Count 3 >>",
		"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>",
		Stream("BT /F1 12 Tf 72 700 Td (Loop) Tj ET"))
	// A page without /Resources whose /Parent chain is a cycle.
	files["cyclicparent.pdf"] = Raw(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 5 0 R /Contents 4 0 R >>",
		Stream("BT /F1 12 Tf 72 700 Td (Never shown) Tj ET"),
		"<< /Type /Pages /Parent 5 0 R /Kids [3 0 R] /Count 1 >>")

	files["ligatures.pdf"] = ligatures()
	files["forms.pdf"] = forms()
	files["markedcontent.pdf"] = markedContent()
	files["oddtounicode.pdf"] = oddToUnicode()
	files["rtl.pdf"] = rtl()
	files["leaders.pdf"] = leadersAndSpacing()
	files["columns.pdf"] = columns()
	files["losses.pdf"] = losses()

	for name, data := range Hostile() {
		files[name] = data
	}

	rng := rand.New(rand.NewPCG(7, 11))
	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	files["garbage.pdf"] = noise
	files["brokenxref.pdf"] = fmt.Appendf(nil, "%%PDF-1.4\n%s\nstartxref\n999999\n%%%%EOF\n", noise[:1024])
	return files
}

// Prose is a three-page document of headings and body text in every line
// style, with its expected text.
func Prose() ([]byte, string) {
	d := &Doc{Title: "The Quiet Engineering of Rivers", Compress: true}
	var blocks []Block
	for i, p := range proseText {
		if i%3 == 0 && strings.HasPrefix(p, "# ") {
			blocks = append(blocks, Block{Text: p[2:], Font: afm.HelveticaBold, Size: 16, Style: DoubleDrawn})
			continue
		}
		if h, ok := strings.CutPrefix(p, "# "); ok {
			blocks = append(blocks, Block{Text: h, Font: afm.HelveticaBold, Size: 16, Style: Plain})
			continue
		}
		style := Mixed
		if i == len(proseText)-1 {
			style = Kerned
		}
		blocks = append(blocks, Block{Text: p, Font: afm.Helvetica, Size: 11, Style: style})
	}
	text := d.Typeset(Layout{}, blocks)
	return d.Bytes(), text + "\n"
}

var proseText = []string{
	"# The Quiet Engineering of Rivers",
	"Most rivers that run through old cities are not quite where nature left them. Over three or four centuries, engineers straightened bends, raised banks and dug side channels, usually one modest project at a time. The result looks natural to a visitor, yet almost every metre of it was argued over by a committee.",
	"Take the lower reach of a typical European river. In 1790 it meandered across a floodplain about 2.5 km wide; by 1910 it ran in a single trained channel of 180 m, held in place by 14 weirs and roughly 60 km of stone revetment. Navigation improved at once. Floods, on the other hand, moved downstream and arrived faster.",
	"Engineers learned, slowly, that a river is not a pipe. Water carries sediment, and sediment has to go somewhere: cut off a bend and the river scours its new bed, lowering the water table for farms on either side. Build a weir and silt settles behind it, year after year, until the pond is a meadow.",
	"# Measuring What Moves",
	"Before anyone can manage a river, someone has to measure it. The classic method is the current meter, a small propeller lowered on a cable at fixed depths. A hydrographer counts revolutions for 40 or 60 seconds, converts them to velocity, and multiplies by the area of each slice of the cross-section. Summed across the channel, the slices give the discharge in cubic metres per second.",
	"It is tedious work, and it is easy to get wrong. A gauging taken during a rising flood can differ by 10% from one taken at the same stage while the water falls, because the slope of the surface changes. Good records therefore note the time, the weather, the state of the weeds and even the name of the person holding the cable.",
	"Modern acoustic instruments do the same job from a boat in minutes. They send pulses into the water and listen for echoes from drifting particles; the Doppler shift gives the speed at hundreds of points at once. Yet the old paper ledgers remain valuable, because they are the only evidence of how the river behaved in 1887, 1923 or 1947.",
	"# Giving Room Back",
	"Since the 1990s, several countries have tried a different approach: instead of raising dikes again, they give the river room. Farmland is bought, the old embankment is moved inland by a few hundred metres, and the space in between floods once every few winters. Cattle graze there in summer; wading birds arrive in spring.",
	"Such schemes cost money and patience. One Dutch project needed 12 years of negotiation, 34 separate agreements with landowners and a budget of about 2.3 billion euros spread over 30 sites. Its engineers argue that the lower peak water levels, measured in centimetres, are worth every one of those meetings.",
	"Whether a city chooses walls or meadows, the lesson of three centuries is the same: every change upstream is felt downstream, sooner or later, by somebody else. The quiet engineering of rivers is mostly the engineering of agreements.",
}

// layout is one page built to defeat naive extraction: duplicate glyphs,
// words drawn right to left, lines drawn bottom up, rotated margin notes and
// a footnote in a small size.
func layout() ([]byte, string) {
	d := &Doc{}
	text := d.Typeset(Layout{}, []Block{
		{Text: "Field Notes from the Harbour", Font: afm.HelveticaBold, Size: 18, Style: DoubleGlyphs},
		{Text: "At dawn on 3 May the tide was already turning. Fishing boats came in low and slow, their decks stacked with crates, while gulls followed at a respectful distance of perhaps twenty metres.", Font: afm.Helvetica, Size: 11, Style: Words},
		{Text: "The harbour master, a patient woman named Ines, keeps a ledger of every arrival. Her entries are brief: time, name, catch, and a single word for the sea (calm, choppy, or wild).", Font: afm.Helvetica, Size: 11, Style: Kerned},
		{Text: "Summary of the morning", Font: afm.HelveticaBold, Size: 14, Style: DoubleDrawn},
	})
	p := d.pages[len(d.pages)-1]

	// Three lines drawn last line first, in Times.
	reversed := []string{
		"Seven boats landed before nine o'clock; two more waited",
		"outside the breakwater until the swell eased. Prices at the",
		"market opened 4% higher than last week's.",
	}
	y0 := 390.0
	for i := len(reversed) - 1; i >= 0; i-- {
		p.Op("BT /%s 12 Tf %s %s Td %s Tj ET", Res(afm.TimesRoman), num(72), num(y0-float64(i)*15), Str(reversed[i]))
	}
	text += "\n\n" + strings.Join(reversed, "\n")

	footnote := "Figures are provisional and were recorded by hand."
	p.Op("BT /%s 8 Tf 72 90 Td %s Tj ET", Res(afm.Helvetica), Str(footnote))
	text += "\n\n" + footnote

	// A note rotated 90° in the left margin, spaces made by positioning.
	up := []string{"Draft", "3", "of", "7,", "printed", "18", "March"}
	p.Op("BT /%s 9 Tf 0 1 -1 0 40 200 Tm [%s] TJ ET", Res(afm.Helvetica), tjWords(up, -300))
	// And one rotated 270° in the right margin, with real spaces.
	down := "Archive copy, not for sale"
	p.Op("BT /%s 9 Tf 0 -1 1 0 572 600 Tm %s Tj ET", Res(afm.Helvetica), Str(down))
	text += "\n\n" + strings.Join(up, " ") + "\n\n" + down

	if len(d.pages) != 1 {
		panic("pdfgen: layout fixture must fit one page")
	}
	return d.Bytes(), text + "\n"
}

// tjWords is a TJ array body showing words separated by displacement only.
func tjWords(words []string, gap int) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = Str(w)
	}
	return strings.Join(parts, fmt.Sprintf(" %d ", gap))
}

// noWidths is set in standard fonts declared without /Widths, as several
// small PDF libraries do; readers must fall back on built-in metrics.
func noWidths() ([]byte, string) {
	d := &Doc{Title: "Café Notes — Winter", OmitWidths: true}
	text := d.Typeset(Layout{}, []Block{
		{Text: "Winter menu", Font: afm.HelveticaBold, Size: 16, Style: Plain},
		{Text: "Our soups change daily. On Mondays we serve leek and potato; on Tuesdays, a spiced lentil soup with lemon; and from Wednesday to Friday, whatever the market offers. Bread is baked at 6 a.m. and usually sold out by noon.", Font: afm.Helvetica, Size: 11, Style: Plain},
		{Text: "Coffee is roasted in small batches of 5 kg, twice a week. Ask for the single-origin beans if you like a lighter cup; the house blend is darker, with notes of cocoa and toasted almond.", Font: afm.Helvetica, Size: 11, Style: Kerned},
		{Text: "Opening hours: Monday to Saturday, 7:30 to 18:00. Closed on Sundays and public holidays.", Font: afm.TimesRoman, Size: 12, Style: Words},
	})
	return d.Bytes(), text + "\n"
}

// scanned has a page with graphics but no text, like a scanned document.
func scanned() []byte {
	d := &Doc{}
	p := d.AddPage()
	p.Op("0.85 g 72 72 468 648 re f")
	p.Op("0 g 100 600 m 500 600 l S")
	return d.Bytes()
}

// badPage has a good first page and a second page whose content stream
// claims FlateDecode but holds plain bytes, so it cannot be decoded.
func badPage() []byte {
	good := "BT /F1 12 Tf 72 700 Td (This page is fine.) Tj ET"
	bad := "BT /F1 12 Tf 72 700 Td (This page is not.) Tj ET"
	return Raw(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 7 0 R >> >> /Contents 4 0 R >>",
		Stream(good),
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 7 0 R >> >> /Contents 6 0 R >>",
		fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", len(bad), bad),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
}
