package loader

import (
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// genericTitles are headings that name a part of any document rather than
// this one; as a title they would make unrelated documents look alike (and,
// before this list, "Table of Contents" became an entity shared by many
// READMEs). Lower case, in the languages the extractors know.
var genericTitles = map[string]bool{}

func init() {
	for _, t := range []string{
		// English
		"contents", "table of contents", "toc", "index", "introduction", "intro",
		"overview", "readme", "read me", "readme.md", "abstract", "summary", "preface",
		"foreword", "about", "home", "title", "untitled", "document",
		"chapter 1", "chapter one", "welcome", "main page",
		"changelog", "change log", "license", "table of content", "slide 1", "agenda",
		"news", "changes", "usage", "authors", "copying", "todo", "history", "what's new",
		// sections of READMEs that never name one
		"features", "installation", "install", "installing", "description", "info", "highlights",
		"requirements", "prerequisites", "contributing", "sponsors",
		// German
		"inhalt", "inhaltsverzeichnis", "einleitung", "einführung", "übersicht", "überblick",
		"vorwort", "zusammenfassung", "inhaltsübersicht", "kapitel 1", "unbenannt",
		// French
		"sommaire", "table des matières", "table des matieres", "introduction générale",
		"aperçu", "vue d'ensemble", "résumé", "avant-propos", "préface", "index", "sans titre",
		// Spanish / Portuguese / Italian
		"índice", "indice", "contenido", "contenidos", "tabla de contenidos", "introducción",
		"resumen", "prólogo", "sumário", "sumario", "conteúdo", "introdução", "visão geral",
		"sommario", "introduzione", "panoramica", "prefazione", "senza titolo", "sin título",
		// Dutch
		"inhoud", "inhoudsopgave", "inleiding", "overzicht", "voorwoord",
		// Russian
		"содержание", "оглавление", "введение", "обзор", "предисловие",
		// Chinese / Japanese / Korean
		"目录", "目錄", "简介", "簡介", "概述", "介绍", "介紹", "引言", "前言", "索引",
		"目次", "はじめに", "概要", "序論", "목차", "소개", "개요",
	} {
		genericTitles[t] = true
	}
}

// GenericTitle reports whether a heading names a generic part of a
// document ("Table of Contents", "Introduction", "README", "1. Overview")
// and so does not say which document it is.
func GenericTitle(s string) bool {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	// Numbering and decoration around the words: "1. Introduction", "Contents:".
	s = strings.TrimLeftFunc(s, func(r rune) bool {
		return unicode.IsDigit(r) || unicode.IsPunct(r) || unicode.IsSpace(r) || unicode.IsSymbol(r)
	})
	s = strings.TrimRightFunc(s, func(r rune) bool {
		return unicode.IsPunct(r) || unicode.IsSpace(r) || unicode.IsSymbol(r)
	})
	return s == "" || genericTitles[s]
}

// pickTitle chooses a document's title: the metadata title, else the
// first heading that is not generic, else one made from the file name.
func pickTitle(meta string, headings []string, path string) string {
	if t := titleLine(meta); t != "" && !GenericTitle(t) {
		return t
	}
	for _, h := range headings {
		if t := titleLine(h); t != "" && !GenericTitle(t) {
			return t
		}
	}
	return fileTitle(path)
}

// titleLine makes one line of at most 200 runes of s.
func titleLine(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "")), " ")
	if r := []rune(s); len(r) > 200 {
		s = strings.TrimSpace(string(r[:200]))
	}
	return s
}

// fileTitle makes a title from a file name: the name without its known
// extensions ("guide.txt.gz" is "guide"); a generic name such as
// README or index is qualified by its folder ("axios README").
func fileTitle(path string) string {
	base := filepath.Base(path)
	for {
		ext := filepath.Ext(base)
		if ext == "" || ext == base {
			break
		}
		if _, ok := formats[strings.ToLower(ext)]; !ok && !strings.EqualFold(ext, ".gz") {
			break
		}
		base = strings.TrimSuffix(base, ext)
	}
	stem, _, _ := strings.Cut(base, ".")
	if GenericTitle(base) || GenericTitle(stem) {
		if dir := filepath.Base(filepath.Dir(path)); dir != "." && dir != string(filepath.Separator) && dir != "" {
			return dir + " " + base
		}
	}
	return base
}

var (
	mdBadge = regexp.MustCompile(`\[!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])\](?:\([^)]*\)|\[[^\]]*\])`)
	mdImage = regexp.MustCompile(`!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])`)
	mdLink  = regexp.MustCompile(`\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])`)
	mdTag   = regexp.MustCompile(`</?[A-Za-z][^>]*>`)
)

// markdownInline reduces a Markdown heading to its words: badges, images
// and HTML tags go, links keep their text, code and emphasis marks go.
func markdownInline(s string) string {
	if !strings.ContainsAny(s, "[]`*_<") {
		return s
	}
	s = mdBadge.ReplaceAllString(s, "")
	s = mdImage.ReplaceAllString(s, "")
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdTag.ReplaceAllString(s, "")
	s = strings.NewReplacer("`", "", "**", "", "__", "").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}
