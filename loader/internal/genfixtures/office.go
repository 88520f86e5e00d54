package main

import (
	"html"
	"strings"
)

// officeBlocks is the text of the LibreOffice fixture: "# " marks a heading,
// "- " a list item; everything else is a justified paragraph.
var officeBlocks = []string{
	"# A Short History of the Lending Library",
	"Long before public libraries were paid for by taxes, readers clubbed together. In 1731 a group of tradesmen in Philadelphia pooled their books and their money; each member paid 40 shillings to join and 10 shillings a year after that. The idea spread quickly, and within fifty years there were dozens of “subscription libraries” in English-speaking towns.",
	"Circulating libraries were a commercial cousin. A bookseller would rent out novels at a penny a volume, which is why three-volume novels were so profitable: a reader who wanted the ending had to pay three times. Critics complained that such shops sold nothing but fluffy romances — yet they taught a generation to read for pleasure.",
	"## What a Member Could Borrow",
	"- Sermons, histories and travel journals, usually for two weeks;",
	"- maps and atlases, which could only be consulted in the reading room;",
	"- newspapers, which were kept for 30 days and then sold as waste paper.",
	"The rules were strict. A late return cost 2 pence per day, and a damaged binding could cost the whole value of the book. One surviving ledger from 1802 records a fine of 7s 6d for “a volume of Hume, left out in the rain”. Efficient clerks kept such ledgers for decades, which is why historians know so much about what ordinary people read.",
	"## From Subscription to Public",
	"The great change came in the nineteenth century, when cities began to fund free libraries from local rates. Opponents called it a waste of money; supporters argued that a library cost less than a prison. By 1914 there were more than 600 public library authorities in Britain alone, and many of the old subscription collections had been absorbed into them.",
	"Today the café in the atrium may be busier than the stacks, but the principle is unchanged: a community shares what no single reader could afford.",
}

// officeDoc returns the fixture as HTML for LibreOffice and as the plain
// text a perfect extractor would find (no line breaks inside paragraphs).
func officeDoc() (doc, text string) {
	var h, t strings.Builder
	h.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>Lending Libraries</title>` +
		`<style>body{font-family:"DejaVu Serif";font-size:11pt} p,li{text-align:justify} h1{font-family:"DejaVu Sans";font-size:20pt} h2{font-family:"DejaVu Sans";font-size:14pt}</style></head><body>`)
	inList := false
	for _, b := range officeBlocks {
		item, isItem := strings.CutPrefix(b, "- ")
		if isItem != inList {
			if isItem {
				h.WriteString("<ul>")
			} else {
				h.WriteString("</ul>")
				t.WriteString("\n")
			}
			inList = isItem
		}
		switch {
		case isItem:
			h.WriteString("<li>" + html.EscapeString(item) + "</li>")
			t.WriteString(item)
		case strings.HasPrefix(b, "## "):
			h.WriteString("<h2>" + html.EscapeString(b[3:]) + "</h2>")
			t.WriteString(b[3:])
		case strings.HasPrefix(b, "# "):
			h.WriteString("<h1>" + html.EscapeString(b[2:]) + "</h1>")
			t.WriteString(b[2:])
		default:
			h.WriteString("<p>" + html.EscapeString(b) + "</p>")
			t.WriteString(b)
		}
		if isItem {
			t.WriteString("\n") // list items are lines of one block, not paragraphs
		} else {
			t.WriteString("\n\n")
		}
	}
	if inList {
		h.WriteString("</ul>")
	}
	h.WriteString("</body></html>\n")
	return h.String(), t.String()
}
