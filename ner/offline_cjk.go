package ner

import (
	"context"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docgraph/docgraph/cjk"
)

// Chinese, Japanese and Korean have no capitals and no spaces between
// words, so the offline extractor finds their terms without a dictionary
// from what the text itself marks: titles in 《》 and terms in 「」『』“”,
// Latin words and numbers with their units or dates, the document title and
// headings, and strings that recur within the chunk (the longest form that
// recurs as often, not starting or ending with a function character).
// Every known term is then found wherever it occurs, longest first.
// Questions (Mentions) are too short to recur; they are cut into terms at
// question and function words (Chinese), at hiragana (Japanese) and before
// particles (Korean).

// cjkMaxTerm bounds the length, in characters, of a recurring term.
const cjkMaxTerm = 8

// cjkTerm is a known term of the chunk and its type.
type cjkTerm struct {
	typ string
}

// cjkPrepare collects the chunk's known terms.
func (x *offExtraction) cjkPrepare() {
	x.cjkTerms = map[string]cjkTerm{}
	// Text in which hiragana is common is Japanese, and the kanji between
	// it are cut as Japanese (Chinese function characters such as 入, 更
	// or 所 are parts of Japanese words: 入力, 変更, 場所). A Chinese text
	// that quotes a Japanese title has a few, Japanese prose a third.
	kana, all := 0, 0
	for _, c := range x.text {
		if cjk.Is(c) {
			all++
			if hiragana(c) {
				kana++
			}
		}
	}
	x.japanese = kana > 0 && kana*10 >= all
	addTerm := func(s, typ string) {
		s = strings.TrimSpace(s)
		if n := utf8.RuneCountInString(s); n < 2 || n > 40 || !cjk.Contains(s) {
			return
		}
		if _, ok := x.cjkTerms[s]; !ok || typ == "document" {
			x.cjkTerms[s] = cjkTerm{typ: typ}
		}
		x.cjkMax = max(x.cjkMax, utf8.RuneCountInString(s))
	}
	addTerm(x.title, "document")
	addTerm(x.alias, x.aliasType)
	// Markdown headings name what their section is about.
	for _, line := range strings.Split(x.text, "\n") {
		line = strings.TrimSpace(line)
		if h := strings.TrimLeft(line, "#"); len(h) < len(line) && len(line)-len(h) <= 6 {
			addTerm(strings.TrimSpace(h), cjkTypeOf(strings.TrimSpace(h), x.japanese))
		}
	}
	for _, b := range x.cjkBrackets(0, len(x.toks)) {
		addTerm(x.text[b.start:b.end], b.typ)
	}
	if !x.query { // a question is too short for anything to recur
		for term, f := range x.cjkRecurring() {
			typ := cjkTypeOf(term, x.japanese)
			// A name before 表示 or さん is a person's, unless it is as
			// short as a country's (韩国表示).
			if f.person && cjkPersonName(term, x.japanese) && (typ == "other" || typ == "location" && utf8.RuneCountInString(term) > 2) {
				typ = "person"
			}
			addTerm(term, typ)
		}
	}
}

// queryOffline finds the terms of questions for QueryTerms.
var queryOffline = NewOffline()

// QueryTerms cuts a question's CJK text into the terms it asks about, the
// way Mentions does, and keeps the common Japanese words Mentions leaves
// out as names: "稻花香2号的亲本是哪个品种？" gives 稻花香2号, 亲本 and 品种,
// "ディレクトリを作成する" ディレクトリ and 作成. Text without CJK
// characters gives nothing.
func QueryTerms(text string) []string {
	if !cjk.Contains(text) {
		return nil
	}
	x := &offExtraction{o: queryOffline, text: text, query: true, bridge: true, words: true}
	defer x.release()
	_ = x.run(context.Background(), "")
	var out []string
	for _, e := range x.entities() {
		out = append(out, e.Name)
	}
	return out
}

// cjkBracket is the content of a bracket pair.
type cjkBracket struct {
	start, end int // bytes of the content
	t0, t1     int // tokens of the content
	typ        string
}

// cjkOpenClose maps opening brackets to their closing ones.
var cjkOpenClose = map[rune]rune{'《': '》', '〈': '〉', '「': '」', '『': '』', '“': '”', '‘': '’', '【': '】', '〔': '〕'}

// cjkBrackets finds bracketed titles and quoted terms in tokens [s0, s1):
// 《》 and 〈〉 hold titles of works; quotes and corner brackets hold terms
// when short, without a clause inside, and with CJK text.
func (x *offExtraction) cjkBrackets(s0, s1 int) []cjkBracket {
	var out []cjkBracket
	for k := s0; k < s1; k++ {
		t := x.toks[k]
		closeR, ok := cjkOpenClose[t.r]
		if t.kind != offPunct || !ok {
			continue
		}
		limit := 16
		if t.r == '《' || t.r == '〈' {
			limit = 40
		}
		for j := k + 1; j < s1 && j-k <= 48; j++ {
			u := x.toks[j]
			if u.kind == offPunct && u.r == closeR {
				start, end := int(t.end), int(u.start)
				content := x.text[start:end]
				n := utf8.RuneCountInString(content)
				if j > k+1 && n <= limit && !strings.ContainsAny(content, "\n。！？；，,") && cjk.Contains(content) {
					typ := "other"
					if t.r == '《' || t.r == '〈' {
						typ = "work"
					}
					out = append(out, cjkBracket{start: start, end: end, t0: k + 1, t1: j, typ: typ})
				}
				k = j
				break
			}
			if u.kind == offPunct && (offCJKEnd(u.r) || u.r == t.r) || u.has(offNL) {
				break
			}
		}
	}
	return out
}

// cjkRun is a stretch of CJK characters, digits and Latin letters with no
// space or punctuation inside: "稻花香2号的亲本为松粳9号".
type cjkRun struct {
	text  string
	runes []rune
	off   []int // byte offset of each rune in text, and of the end
}

// str is runes [i, j) as a slice of the text, without allocating.
func (r cjkRun) str(i, j int) string { return r.text[r.off[i]:r.off[j]] }

// runsOf cuts plain text (no tokens) into runs.
func runsOf(text string) []cjkRun {
	var out []cjkRun
	var r cjkRun
	flush := func(end int) {
		if len(r.runes) > 0 && cjk.Contains(r.text[r.off[0]:end]) {
			r.off = append(r.off, end)
			out = append(out, r)
		}
		r = cjkRun{text: text}
	}
	r.text = text
	for i, c := range text {
		if cjk.Is(c) || alnum(c) {
			r.runes = append(r.runes, c)
			r.off = append(r.off, i)
			continue
		}
		flush(i)
	}
	flush(len(text))
	return out
}

func (x *offExtraction) cjkRuns(s0, s1 int) []cjkRun {
	var out []cjkRun
	for k := s0; k < s1; {
		if x.toks[k].kind != offCJK {
			k++
			continue
		}
		a, b := k, k+1
		for a > s0 && x.joins(a-1, s0, s1) && x.toks[a-1].end == x.toks[a].start {
			a--
		}
		for b < s1 && x.joins(b, s0, s1) && x.toks[b].start == x.toks[b-1].end {
			b++
		}
		r := cjkRun{text: x.text}
		for i := int(x.toks[a].start); i < int(x.toks[b-1].end); {
			c, w := utf8.DecodeRuneInString(x.text[i:])
			if 0xFE00 <= c && c <= 0xFE0F {
				i += w
				continue
			}
			r.runes = append(r.runes, c)
			r.off = append(r.off, i)
			i += w
		}
		r.off = append(r.off, int(x.toks[b-1].end))
		out = append(out, r)
		k = b
	}
	return out
}

// joins reports whether token k belongs in a run: any word, and the
// middle dot of transliterated names between two of them ("派西·卫斯理").
func (x *offExtraction) joins(k, s0, s1 int) bool {
	t := x.toks[k]
	if t.kind != offPunct {
		return true
	}
	return (t.r == '·' || t.r == '‧') && k > s0 && k+1 < s1 && x.toks[k-1].kind != offPunct && x.toks[k+1].kind != offPunct &&
		x.toks[k-1].end == t.start && x.toks[k+1].start == t.end
}

// alnum reports a Latin letter or digit: a term may not start or end inside a word or number.
func alnum(r rune) bool { return !cjk.Is(r) && (unicode.IsLetter(r) || unicode.IsDigit(r)) }

// boundary reports whether a term may span runes [i, j) of the run: it
// starts and ends at the edges of Latin words and numbers.
func (r cjkRun) boundary(i, j int) bool {
	if i > 0 && alnum(r.runes[i]) && alnum(r.runes[i-1]) {
		return false
	}
	return j >= len(r.runes) || !(alnum(r.runes[j-1]) && alnum(r.runes[j]))
}

// kanaWhole reports whether runes [i, j) start and end at the edges of
// katakana runs, as a new term must: a run's tail is no word ("バージョン"
// gives no "ージ"). Known terms are still found inside katakana compounds,
// which Japanese writes without a break (コード in 文字コードセット).
func (r cjkRun) kanaWhole(i, j int) bool {
	if i > 0 && katakana(r.runes[i-1]) && katakana(r.runes[i]) {
		return false
	}
	return j >= len(r.runes) || !(katakana(r.runes[j-1]) && katakana(r.runes[j]))
}

// kanjiTail reports whether a string from rune i would open with the last
// kanji of a longer kanji word right before a katakana one: 力 of 入力 in
// 入力ファイル. Japanese builds terms from two-kanji words, so a lone kanji
// cut from its run is a word's tail.
func (r cjkRun) kanjiTail(i int) bool {
	han := func(k int) bool { return k >= 0 && k < len(r.runes) && unicode.Is(unicode.Han, r.runes[k]) }
	return han(i-1) && han(i) && i+1 < len(r.runes) && katakana(r.runes[i+1])
}

// katakana reports a character of a katakana word: the letters, the
// prolonged sound mark and the iteration marks, full- or half-width (not
// the middle dot ・, which separates words).
func katakana(r rune) bool {
	return 0x30A1 <= r && r <= 0x30FA || 0x30FC <= r && r <= 0x30FE || 0xFF66 <= r && r <= 0xFF9F
}

// hiragana reports a hiragana letter: in Japanese the script of particles,
// auxiliaries and inflectional endings (する, ます, される), never a
// term on its own and never the edge of one.
func hiragana(r rune) bool { return 0x3041 <= r && r <= 0x309F }

// cjkRecurring returns the chunk's recurring terms: strings of 2 to
// cjkMaxTerm characters seen at least twice, not inside a known term,
// of a term's shape (cjkTermShape), with a word edge on both sides, and
// no longer string containing them recurring as often.
//
// A word edge is where the chunk's own statistics put one (the accessor
// variety of dictionary-free segmenters): a string always preceded by the
// same character is the tail of a longer word, not a word ("果不指定" is
// always in "如果不指定", "有者" in "所有者"), however often it recurs.
// The edge of the run, of a known term, a particle (的, 在, 和; hiragana in
// Japanese) or a change of script count as a new neighbour each time.
func (x *offExtraction) cjkRecurring() map[string]cjkFound {
	runs := x.cjkRuns(0, len(x.toks))
	// Occurrences of the known terms are masked: their parts are no new terms.
	known := make([]string, 0, len(x.cjkTerms))
	for t := range x.cjkTerms {
		known = append(known, t)
	}
	sort.Slice(known, func(i, j int) bool { return len(known[i]) > len(known[j]) })
	total := 0
	for _, r := range runs {
		total += len(r.runes)
	}
	counts := make([]map[string]cjkCount, cjkMaxTerm+2)
	for n := range counts {
		counts[n] = make(map[string]cjkCount, total)
	}
	for _, r := range runs {
		masked := make([]bool, len(r.runes))
		s := r.str(0, len(r.runes))
		for _, t := range known {
			for from := 0; ; {
				i := strings.Index(s[from:], t)
				if i < 0 {
					break
				}
				b := r.off[0] + from + i
				for k := sort.SearchInts(r.off, b); k < len(r.runes) && r.off[k] < b+len(t); k++ {
					masked[k] = true
				}
				from += i + len(t)
			}
		}
		// neighbour is rune k beside the edge rune e of a string, or
		// cjkEdge where a word edge is plain.
		neighbour := func(k, e int) rune {
			if k < 0 || k >= len(r.runes) || masked[k] {
				return cjkEdge
			}
			c := r.runes[k]
			if hiragana(c) || alnum(c) != alnum(r.runes[e]) || x.japanese && katakana(c) != katakana(r.runes[e]) {
				return cjkEdge
			}
			if x.japanese {
				return c
			}
			// A function character is a word of its own (这, 至, 最), unless
			// it makes a function word with the string's edge: 如 before
			// 果不指定 is in 如果.
			pair := [2]rune{c, r.runes[e]}
			if k > e {
				pair = [2]rune{r.runes[e], c}
			}
			if (cjkStartStop[c] || cjkEndStop[c] || zhParticles[c]) && !zhFunctionPairs[pair] {
				return cjkEdge
			}
			return c
		}
		// A verb of saying or an honorific of more than one character ends
		// the name before it: no term runs into one ("王建国表" in 王建国表示).
		cueAt := make([]bool, len(r.runes))
		for p := range r.runes {
			for _, cue := range cjkNameEnders {
				cueAt[p] = cueAt[p] || len(r.runes)-p >= len(cue) && slices.Equal(r.runes[p:p+len(cue)], cue)
			}
		}
		for i := range r.runes {
			for n := 2; n <= cjkMaxTerm+1 && i+n <= len(r.runes); n++ {
				if masked[i+n-1] || masked[i] || cueAt[i+n-1] {
					break
				}
				if !r.boundary(i, i+n) || !r.kanaWhole(i, i+n) || x.japanese && r.kanjiTail(i) || !x.cjkTermShape(r.runes[i:i+n]) {
					continue
				}
				g := r.str(i, i+n)
				c := counts[n][g]
				c.n++
				c.left = c.left.see(neighbour(i-1, i))
				// An honorific or a verb of saying after a name ends it.
				cue := cjkPersonCue(r, i+n, x.japanese)
				if cue {
					c.right = c.right.see(cjkEdge)
				} else {
					c.right = c.right.see(neighbour(i+n, i+n-1))
				}
				c.person = c.person || cue
				counts[n][g] = c
			}
		}
	}
	// A string is kept unless the one-character-longer strings holding it
	// that recur, on one side, account for all its occurrences: 力ファイル
	// is only ever in 出力ファイル and 入力ファイル.
	out := map[string]cjkFound{}
	for n := 2; n <= cjkMaxTerm; n++ {
		byLeft, byRight := map[string]int32{}, map[string]int32{}
		for h, c := range counts[n+1] {
			if c.n < 2 {
				continue
			}
			_, first := utf8.DecodeRuneInString(h)
			_, last := utf8.DecodeLastRuneInString(h)
			byRight[h[:len(h)-last]] += c.n
			byLeft[h[first:]] += c.n
		}
		for g, c := range counts[n] {
			if c.n < 2 || byLeft[g] >= c.n || byRight[g] >= c.n || !c.left.edge() || !c.right.edge() || x.commonWord(g) {
				continue
			}
			if !x.japanese && n > 2 {
				// "中执行", "时使用": a postposition before a word that
				// also recurs without it.
				if r, w := utf8.DecodeRuneInString(g); zhPostpositions[r] {
					if counts[n-1][g[w:]].n > c.n {
						continue
					}
				}
			}
			out[g] = cjkFound{person: c.person}
		}
	}
	return out
}

// cjkCount is what the chunk shows of a candidate term.
type cjkCount struct {
	n           int32 // small: the maps hold one for every substring
	left, right cjkSide
	person      bool // seen before an honorific or a verb of saying (cjkPersonCue)
}

// cjkFound is what a recurring term brings besides its text.
type cjkFound struct{ person bool }

// cjkSide is the neighbour a string has on one side at every occurrence
// so far: 0 before the first, cjkEdge once two differ or one is a word edge.
type cjkSide rune

const cjkEdge = -1

func (s cjkSide) see(c rune) cjkSide {
	if s == 0 || s == cjkSide(c) {
		return cjkSide(c)
	}
	return cjkEdge
}

// edge reports whether the side is a word edge: the string has met more
// than one neighbour there, or a plain edge.
func (s cjkSide) edge() bool { return s == cjkEdge }

// zhParticles are Chinese function characters that stand as words of
// their own between terms: beside one, a string has a word edge.
var zhParticles = runeSet(`的了着是在和与及或并且也都就而被把将从向对给为于以由`)

// zhFunctionPairs are the pairs of characters inside Chinese function
// and common words (如果, 所有, 以上): a string that starts or ends
// inside one is a fragment.
var zhFunctionPairs = func() map[[2]rune]bool {
	m := map[[2]rune]bool{}
	add := func(w []rune) {
		for i := 1; i < len(w); i++ {
			m[[2]rune{w[i-1], w[i]}] = true
		}
	}
	for _, ws := range zhStops {
		for _, w := range ws {
			add(w)
		}
	}
	for w := range zhCommon {
		add([]rune(w))
	}
	return m
}()

// zhPostpositions close a phrase ("在环境中", "使用时"): a string
// that opens with one is a word only when its tail recurs no more often.
var zhPostpositions = runeSet(`中时上后里内下前`)

// cjkPersonCue reports whether what follows rune j of the run marks the
// string before it as a person: a Japanese honorific (さん, 氏, 先生) or a
// Chinese one or verb of saying (说, 表示, 认为).
func cjkPersonCue(r cjkRun, j int, japanese bool) bool {
	cues := zhPersonCues
	if japanese {
		cues = jaPersonCues
	}
	rest := r.runes[j:]
	for _, cue := range cues {
		if len(rest) >= len(cue) && slices.Equal(rest[:len(cue)], cue) {
			return true
		}
	}
	return false
}

var (
	jaPersonCues = runeStrings(`さん 氏 先生 くん ちゃん`)
	zhPersonCues = runeStrings(`说 说道 表示 认为 指出 先生 女士`)
)

var cjkNameEnders = runeStrings(`表示 认为 指出 说道 强调 先生 女士 教授 博士`)

func runeStrings(s string) [][]rune {
	var out [][]rune
	for _, w := range strings.Fields(s) {
		out = append(out, []rune(w))
	}
	return out
}

// cjkTermShape reports whether a string can be a term: it has a CJK
// character, opens with no digit, neither opens nor ends with a function
// character, and holds no hiragana. Terms that recur in Japanese are kanji
// compounds and katakana words; the hiragana between them is grammar
// (する, ます, され), and a term that took some in would carry an ending
// (設定する) or a particle. A Chinese term holds no particle that joins
// clauses (的, 了, 并, 且, 或, 被, 把: "信息并退出" is two words) and opens
// with no numeral and measure word ("一个命令").
func (x *offExtraction) cjkTermShape(rs []rune) bool {
	starts, ends := cjkStartStop, cjkEndStop
	if x.japanese {
		starts, ends = jaStartStop, jaEndStop
	}
	if unicode.IsDigit(rs[0]) || starts[rs[0]] || ends[rs[len(rs)-1]] {
		return false
	}
	if !x.japanese && rs[0] == '一' && zhMeasures[rs[1]] {
		return false
	}
	has := false
	for _, r := range rs {
		if hiragana(r) || !x.japanese && zhJoiners[r] {
			return false
		}
		has = has || cjk.Is(r)
	}
	return has
}

// zhJoiners never stand inside a Chinese term.
var zhJoiners = runeSet(`的了并且或被把`)

// zhMeasures are measure words: 一 before one is "a" or "one" ("一个", "一行").
var zhMeasures = runeSet(`个种些次项条段组块下位名件点行部`)

func runeSet(s string) map[rune]bool {
	m := map[rune]bool{}
	for _, r := range s {
		if !unicode.IsSpace(r) {
			m[r] = true
		}
	}
	return m
}

// Function characters no term opens or ends with (Chinese particles,
// prepositions, conjunctions, pronouns and adverbs; Japanese particles).
// Japanese, whose particles are hiragana, has its own few kanji.
var (
	cjkStartStop = runeSet(`的了着过是在和与及或等也都就而之其这那并但又还被把将从向对于以为由所因如若则即不没很更最已曾便才再仍每各该此他她它们我你到给让使至后里个号称地得入
		はがをにへとでもやのかな`)
	cjkEndStop = runeSet(`的了着过是在和与及或等也都就而之其这那并但又还被把将从向对于以为由所因如若则即不没很更最已曾便才再仍每各该此他她它我你到给让使至自时中上里内个一称地得
		はがをにへとでもやのかなしてた`)
)

var (
	jaStartStop = runeSet(`各毎等約`)
	jaEndStop   = runeSet(`等毎`)
)

// commonWord reports a frequent word of the chunk's language.
func (x *offExtraction) commonWord(w string) bool { return zhCommon[w] || x.japanese && jaCommon[w] }

// jaCommon are frequent Japanese words that name nothing in particular:
// the generic verbal nouns and nouns among the words found in the most
// documents of Japanese manuals (作成, 場合, 指定, 表示 are in a third to
// nearly all of them), which would gather mentions from every document
// and crowd the graph's hubs, as English stop words would.
var jaCommon = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`書式 関連 名前 説明 項目 情報 場合 指定 参照 詳細 完全 作者 文書 標準 設定 無視 実行 動作 複数
		区切 通常 形式 必要 同様 有効 無効 作成 注意 意味 処理 必須 確認 追加 削除 選択 解釈 変換 結果 報告 省略 影響 生成 定義
		失敗 制御 先頭 位置 起動 表現 対応 機能 操作 実際 効果 優先 順番 対象 任意 決定 区別 保存 両方 一致 適用 認識 状態 要求
		自動 末尾 同時 許可 記述 特殊 普通 判断 停止 使用 利用 変更 以下 以上 以外 以降 以前 入力 出力 表示 取得 存在 可能 不要
		最初 最後 最大 最小 部分 一部 全部 全体 方法 内容 現在 上記 下記 場所 成功 問題 理由 目的 方式 種類 例外 一般 特定 同一
		通知 提供 指示 開始 終了 後述 前述`) {
		m[w] = true
	}
	return m
}()

// zhCommon are frequent Chinese words that recur in any text: they are
// no entity, however often a chunk repeats them (like English stop words,
// a short fixed list, not a dictionary of terms).
var zhCommon = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`所有 必须 许多 工作 人员 可以 一个 没有 我们 他们 她们 它们 你们 这些 那些 进行 成为 开始 包括 其中
		以及 主要 重要 由于 因此 目前 之后 之前 以后 以前 时间 时候 地方 方面 问题 情况 部分 一些 一种 一样 一起 一直 一般 一定 已经
		正在 还是 或者 而且 但是 因为 所以 如果 虽然 然后 于是 不过 只是 就是 也是 都是 还有 并且 同时 此外 另外 其他 其它 各种 各个
		这个 那个 这种 那种 非常 十分 特别 更加 比较 最后 最终 首先 其次 然而 仍然 依然 曾经 当时 现在 今天 后来 随后 不久 之间 期间
		以上 以下 之一 之外 以外 左右 大约 超过 不同 相同 类似 同样 共同 一同 各自 自己 本身 自身 对方 双方 有关 相关 关于 对于 根据
		通过 按照 作为 属于 位于 来自 具有 拥有 出现 发生 发现 认为 表示 提出 进入 离开 加入 参加 参与 采取 设立 建立 使用 利用 需要
		可能 能够 应该 发展 影响 作用 结果 原因 方式 方法 过程 时期 早期 中期 后期 初期 年代 世纪 地区 区域 国家 世界 全国 全球 社会
		人们 一共 总共 共有 包含 组成 形成 成立 举行 举办 获得 得到 取得 受到 给予 提供 支持 继续 名字 名称 意思 颜色 类型 措施 特点
		人物 作品 地点 目的 数量 东西 事情 事件 部门 单位 其后 此后 最初 开始时 当中 其间 以来 以后 不断 一度 主要是 成员 之中 由此
		同年 次年 翌年 当年 该年 今年 去年 明年 多年 每年 全年 上午 下午 晚上 早上 第一 第二 第三 一次 两次 再次 首次 多次 进一步
		可分 分为 称为 叫做 被称为 又称 简称 俗称 包括了 开办 创办 创建 建成 完成 开始了 结束 期限 范围 内容 方向 水平 程度 标准 条件`) {
		m[w] = true
	}
	return m
}()

// CommonWord reports a frequent word of a CJK language that is no name.
func CommonWord(w string) bool { return zhCommon[w] }

// cjkTypeOf guesses a term's type from its edges: 市, 省, 県, 江 end
// places, 公司, 大学, 委員会 organisations (株式会社 also opens one), and
// an honorific (先生, 氏, 女士) a person's name.
func cjkTypeOf(term string, japanese bool) string {
	for _, suf := range cjkOrgSuffixes {
		if strings.HasSuffix(term, suf) && term != suf {
			return "organization"
		}
	}
	for _, pre := range cjkOrgPrefixes {
		if strings.HasPrefix(term, pre) && term != pre {
			return "organization"
		}
	}
	honorifics := zhHonorifics
	if japanese {
		honorifics = jaHonorifics
	}
	for _, suf := range honorifics {
		if stem, ok := strings.CutSuffix(term, suf); ok && cjkPersonName(stem, japanese) {
			return "person"
		}
	}
	r, _ := utf8.DecodeLastRuneInString(term)
	if cjkPlaceEnds[r] {
		for _, w := range cjkNotPlaces {
			if strings.HasSuffix(term, w) {
				return "other"
			}
		}
		return "location"
	}
	return "other"
}

// cjkNotPlaces are common words that end with a place's character
// (缺省 with 省, 管道 with 道, 缓冲区 with 区) and the terms that end with them.
var cjkNotPlaces = strings.Fields(`缺省 节省 管道 通道 频道 声道 轨道 渠道 知道 报道 冲区 分区 时区 网站 全国 各国 外国 軌道 報道`)

var cjkOrgSuffixes = strings.Fields(`公司 集团 大学 学院 学校 中学 小学 协会 学会 委员会 银行 医院 研究所 研究院 政府 法院
	俱乐部 球队 乐队 出版社 报社 电视台 电台 基金会 联盟 组织 党 会社 株式会社 大学校 협회 대학교 회사 은행
	協会 委員会 財団 銀行 病院 新聞社 放送局 研究会 組合 学園 高校 機構 公社 庁 団体 基金 联合会 工作室`)

var cjkOrgPrefixes = strings.Fields(`株式会社 有限会社 合同会社 財団法人 社団法人`)

// Honorifics follow a person's name (not 教授 or 博士, which follow a
// field as often: 医学博士; nor Chinese 氏, a clan's or Celsius: 摄氏).
var (
	jaHonorifics = strings.Fields(`先生 氏`)
	zhHonorifics = strings.Fields(`先生 女士`)
)

// cjkPersonName reports whether a term is shaped like a person's name:
// two to four Han characters (a Japanese name, or a Chinese one that
// opens with a common surname), or a katakana name.
func cjkPersonName(term string, japanese bool) bool {
	rs := []rune(term)
	if len(rs) < 2 || len(rs) > 4 {
		return japanese && len(rs) > 4 && len(rs) <= 10 && allRunes(rs, func(r rune) bool { return katakana(r) || r == '・' })
	}
	if !allRunes(rs, func(r rune) bool { return unicode.Is(unicode.Han, r) }) {
		return japanese && allRunes(rs, func(r rune) bool { return katakana(r) || r == '・' })
	}
	return japanese || len(rs) <= 3 && (zhSurnames[rs[0]] || len(rs) == 3 && zhDoubleSurnames[string(rs[:2])])
}

func allRunes(rs []rune, f func(rune) bool) bool {
	for _, r := range rs {
		if !f(r) {
			return false
		}
	}
	return true
}

// zhSurnames are the common Chinese surnames: a name of two or three
// characters that opens with one and is followed by 说 or 表示 is a person's.
var zhSurnames = runeSet(`王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤`)

var zhDoubleSurnames = map[string]bool{"欧阳": true, "司马": true, "诸葛": true, "上官": true, "东方": true, "皇甫": true, "令狐": true, "慕容": true}

var cjkPlaceEnds = runeSet(`省市县区镇乡村州郡国岛山峰河江湖海洋湾港路街站桥城岭谷洲都府道県駅町川시군구도읍면동리산강섬`)

// cjkUnits are what make a number worth keeping; longest first.
var cjkUnits = func() []string {
	u := strings.Fields(`平方公里 平方千米 平方米 公里 千米 厘米 毫米 公分 英里 米 公顷 亩 公斤 千克 克 吨 立方米 升
		亿港元 亿美元 亿元 万元 万美元 美元 港元 日元 欧元 元 人民币 亿 万 % ％ 度 岁 人 名 座 所 家 层 倍 届 部 集 卷 册 页
		メートル キロメートル キロ 円 万円 億円 人 歳 年目 킬로미터 미터 원 달러 명 세`)
	sort.SliceStable(u, func(i, j int) bool { return len(u[i]) > len(u[j]) })
	return u
}()

// cjkSentence adds the CJK mentions of one sentence, tokens [s0, s1).
func (x *offExtraction) cjkSentence(si, s0, s1 int) {
	var taken [][2]int
	free := func(a, b int) bool {
		for _, t := range taken {
			if a < t[1] && t[0] < b {
				return false
			}
		}
		return true
	}
	add := func(start, end, t0, t1 int, typ string) {
		taken = append(taken, [2]int{start, end})
		x.add(offSpan{start: start, end: end, t0: t0, t1: t1, sent: si, name: x.text[start:end], typ: typ, quoted: typ == "work"})
	}
	for _, b := range x.cjkBrackets(s0, s1) {
		add(b.start, b.end, b.t0, b.t1, b.typ)
	}
	x.cjkNumbers(s0, s1, free, add)
	x.cjkLatin(s0, s1, free, add)
	for _, r := range x.cjkRuns(s0, s1) {
		found := x.cjkKnown(r, free, add)
		if x.query {
			r.segments(found, func(i int) bool { return !free(r.off[i], r.off[i+1]) }, x.bridge, x.words, func(i, j int) {
				start, end := r.off[i], r.off[j]
				add(start, end, x.tokenAt(start), x.tokenAt(end-1)+1, cjkTypeOf(x.text[start:end], x.japanese))
			})
		}
	}
}

// cjkLatin adds the Latin words written inside CJK text ("ω-force",
// "Go语言", "Ken Thompson"): a CJK writer spells a term in Latin letters
// because it is one. Capitalised names are also found by names(), typed.
func (x *offExtraction) cjkLatin(s0, s1 int, free func(a, b int) bool, add func(start, end, t0, t1 int, typ string)) {
	for k := s0; k < s1; k++ {
		if x.toks[k].kind != offWord {
			continue
		}
		j := k + 1
		for j < s1 && x.toks[j].kind == offWord && x.toks[j].start == x.toks[j-1].end+1 && x.text[x.toks[j-1].end] == ' ' {
			j++
		}
		start, end := int(x.toks[k].start), int(x.toks[j-1].end)
		nextToCJK := k > s0 && x.toks[k-1].kind == offCJK || j < s1 && x.toks[j].kind == offCJK
		lone := j == k+1 && !x.toks[k].has(offCap) && (offStopWords[x.lower(k)] || offConnectors[x.lower(k)])
		if nextToCJK && end-start >= 2 && !lone && free(start, end) {
			add(start, end, k, j, x.cjkLatinType(k, j, s0, s1))
		}
		k = j - 1
	}
}

// cjkLatinType types a Latin name in CJK text, tokens [k, j) of the
// sentence [s0, s1), from the CJK words around it: a program where a word
// for one follows ("tar コマンド", "ftp 命令") or a manual section does
// ("bzip2(1)"), a person where two to four capitalised words stand in a
// sentence about authorship ("作者 David MacKenzie", "由 Jim Meyering 编写").
func (x *offExtraction) cjkLatinType(k, j, s0, s1 int) string {
	if j == k+1 && x.toks[k].has(offLower) {
		if j+2 < s1 && x.isPunct(j, '(') && x.toks[j].start == x.toks[k].end && x.toks[j+1].kind == offNum && x.isPunct(j+2, ')') {
			return "technology"
		}
		if j < s1 && x.toks[j].kind == offCJK {
			w := x.word(j)
			for _, cue := range cjkProgramCues {
				if strings.HasPrefix(w, cue) {
					return "technology"
				}
			}
		}
		return "other"
	}
	if j-k < 2 || j-k > 4 {
		return "other"
	}
	for i := k; i < j; i++ {
		if !x.toks[i].has(offCap) || x.toks[i].has(offAllCaps) {
			return "other"
		}
	}
	sentence := x.text[x.toks[s0].start:x.toks[s1-1].end]
	for _, cue := range cjkAuthorCues {
		if strings.Contains(sentence, cue) {
			return "person"
		}
	}
	return "other"
}

// cjkProgramCues name a program or command right after its name.
var cjkProgramCues = strings.Fields(`コマンド プログラム ユーティリティ 命令 程序 指令 工具 实用程序`)

// cjkAuthorCues make a sentence one about who wrote or translated something.
var cjkAuthorCues = strings.Fields(`作者 著者 作成者 翻訳者 開発者 書いた 编写 编著 写成 译者 翻译者 开发者 维护者 撰写`)

// tokenAt returns the index of the token holding byte b.
func (x *offExtraction) tokenAt(b int) int {
	return sort.Search(len(x.toks), func(i int) bool { return int(x.toks[i].end) > b })
}

// cjkKnown adds every occurrence of a known term in the run, longest first,
// and returns the rune ranges it covered.
func (x *offExtraction) cjkKnown(r cjkRun, free func(a, b int) bool, add func(start, end, t0, t1 int, typ string)) [][2]int {
	var found [][2]int
	if len(x.cjkTerms) == 0 {
		return nil
	}
	for i := 0; i < len(r.runes); {
		matched := 0
		for n := min(x.cjkMax, len(r.runes)-i); n >= 2; n-- {
			term, ok := x.cjkTerms[r.str(i, i+n)]
			if !ok || !r.boundary(i, i+n) || !free(r.off[i], r.off[i+n]) {
				continue
			}
			start, end := r.off[i], r.off[i+n]
			add(start, end, x.tokenAt(start), x.tokenAt(end-1)+1, term.typ)
			found = append(found, [2]int{i, i + n})
			matched = n
			break
		}
		i += max(matched, 1)
	}
	return found
}

// cjkNumbers adds years and dates (1997年, 2012年1月12日, 5月10日) and
// numbers with units (548公里, 109亿港元) written in digits.
func (x *offExtraction) cjkNumbers(s0, s1 int, free func(a, b int) bool, add func(start, end, t0, t1 int, typ string)) {
	// unitAfter returns the bytes of a prefix of token k (a CJK token
	// right after a number) that is one of units.
	unitAfter := func(k int, units ...string) (string, bool) {
		if k >= s1 || x.toks[k].kind != offCJK || x.toks[k].start != x.toks[k-1].end {
			return "", false
		}
		w := x.word(k)
		for _, u := range units {
			if strings.HasPrefix(w, u) {
				return u, true
			}
		}
		return "", false
	}
	for k := s0; k < s1; k++ {
		t := x.toks[k]
		if t.kind != offNum || x.consumed[k] || k > s0 && x.toks[k-1].kind == offWord && x.toks[k-1].end == t.start {
			continue
		}
		start, end, last, typ := int(t.start), 0, k, ""
		digits := int(t.end - t.start)
		if u, ok := unitAfter(k+1, "号", "型", "式"); ok && k > s0 && x.toks[k-1].kind == offCJK && x.toks[k-1].end == t.start {
			// A designation: "松粳9号", "歼10型", named by the characters
			// before the number back to a function character.
			rs := []rune(x.word(k - 1))
			i := len(rs)
			for i > 0 && len(rs)-i < 4 && !cjkStartStop[rs[i-1]] && !cjkEndStop[rs[i-1]] && rs[i-1] != '第' {
				i--
			}
			if i < len(rs) {
				start = int(x.toks[k-1].end) - len(string(rs[i:]))
				end, last, typ = int(x.toks[k+1].start)+len(u), k+1, "other"
			}
		} else if u, ok := unitAfter(k+1, "年代", "年"); ok && t.has(offDigits) && digits == 4 {
			end, last, typ = int(x.toks[k+1].start)+len(u), k+1, "date"
			// ...and a month and day written right after.
			if u == "年" && int(x.toks[k+1].end) == end && k+2 < s1 && x.toks[k+2].kind == offNum && x.toks[k+2].start == x.toks[k+1].end {
				if m, ok := unitAfter(k+3, "月"); ok {
					end, last = int(x.toks[k+3].start)+len(m), k+3
					if int(x.toks[k+3].end) == end && k+4 < s1 && x.toks[k+4].kind == offNum && x.toks[k+4].start == x.toks[k+3].end {
						if d, ok := unitAfter(k+5, "日", "号"); ok {
							end, last = int(x.toks[k+5].start)+len(d), k+5
						}
					}
				}
			}
		} else if m, ok := unitAfter(k+1, "月"); ok && t.has(offDigits) && digits <= 2 {
			end, last, typ = int(x.toks[k+1].start)+len(m), k+1, "date"
			if int(x.toks[k+1].end) == end && k+2 < s1 && x.toks[k+2].kind == offNum && x.toks[k+2].start == x.toks[k+1].end {
				if d, ok := unitAfter(k+3, "日", "号"); ok {
					end, last = int(x.toks[k+3].start)+len(d), k+3
				}
			}
		} else if u, ok := unitAfter(k+1, cjkUnits...); ok {
			end, last, typ = int(x.toks[k+1].start)+len(u), k+1, "number"
		}
		if typ == "" || !free(start, end) {
			continue
		}
		for j := k; j <= last; j++ {
			if x.toks[j].kind == offNum {
				x.consumed[j] = true
			}
		}
		add(start, end, x.tokenAt(start), last+1, typ)
		k = last
	}
}

// segments cuts the parts of a question's run that are no known term
// (found: rune ranges) and not taken (dates and numbers found before) into
// terms at function words, calling emit with each term's rune range.
// bridge also reads terms joined by 和, 与, 及 or 之 as one; words keeps
// the common Japanese words (jaCommon), which name no entity but are
// words a full-text search wants (作成 in ディレクトリを作成する).
func (r cjkRun) segments(found [][2]int, taken func(i int) bool, bridge, words bool, emit func(i, j int)) {
	cut := make([]bool, len(r.runes)+1) // cut[i]: rune i is no part of a term
	for _, f := range found {
		for i := f[0]; i < f[1]; i++ {
			cut[i] = true
		}
	}
	for i := range r.runes {
		cut[i] = cut[i] || taken(i)
	}
	var split []int
	// asked[i]: a question word ends before rune i, so the term there is
	// what is asked for ("什么颜色", "哪一年", "何メートル"), not what the
	// question is about.
	asked := make([]bool, len(r.runes)+1)
	japanese, korean := false, false
	for _, c := range r.runes {
		japanese = japanese || unicode.Is(unicode.Hiragana, c) || unicode.Is(unicode.Katakana, c)
		korean = korean || unicode.Is(unicode.Hangul, c)
	}
	switch {
	case korean:
		// A Korean word ends in its particle: strip the longest one.
		end := len(r.runes)
		for _, p := range koParticles {
			if pr := []rune(p); len(pr) < end && r.str(end-len(pr), end) == p {
				for i := end - len(pr); i < end; i++ {
					cut[i] = true
				}
				end -= len(pr)
				break
			}
		}
		if w := r.str(0, end); koQuestions[w] {
			for i := range cut {
				cut[i] = true
			}
		}
	case japanese:
		for i, c := range r.runes {
			cut[i] = cut[i] || unicode.Is(unicode.Hiragana, c) || c == '何' || c == '誰'
			asked[i+1] = c == '何'
		}
	default:
		// Every stop word's every occurrence cuts: "是哪个品种" loses 是哪 and 哪个.
		for i, c := range r.runes {
			for _, w := range zhStops[c] {
				if n := len(w); n <= len(r.runes)-i && slices.Equal(r.runes[i:i+n], w) {
					for k := i; k < i+n; k++ {
						cut[k] = true
					}
					asked[i+n] = asked[i+n] || zhAsks[string(w)]
				}
			}
		}
	}
	// A Latin word next to CJK text is a term of its own ("Noctis最引人注目");
	// a single letter belongs to the name it is in ("城巴12M线").
	latin := func(r rune) bool { return unicode.IsLetter(r) && !cjk.Is(r) }
	for i := 1; i < len(r.runes); i++ {
		a, b := r.runes[i-1], r.runes[i]
		switch {
		case cjk.Is(a) && latin(b) && i+1 < len(r.runes) && latin(r.runes[i+1]):
			split = append(split, i)
		case latin(a) && cjk.Is(b) && i >= 2 && latin(r.runes[i-2]):
			split = append(split, i)
		}
	}
	for i := 0; i < len(r.runes); {
		if cut[i] {
			i++
			continue
		}
		j := i
		for j < len(r.runes) && !cut[j] && (j == i || !slices.Contains(split, j)) {
			j++
		}
		for j > i && !r.boundary(i, j) {
			j--
		}
		if w := r.str(i, j); j-i >= 2 && !asked[i] && !zhCommon[w] && !(japanese && !words && jaCommon[w]) && cjk.Contains(r.str(i, j)) {
			emit(i, j)
		}
		i = max(j, i+1)
	}
	if !bridge {
		return
	}
	// 和, 与, 及 and 之 also sit inside names (武藏浦和站, 中华人民共和国):
	// a question's terms on both sides are also read as one.
	for i := 1; i+1 < len(r.runes); i++ {
		if !cut[i] || cut[i-1] || cut[i+1] || !strings.ContainsRune("和与及之", r.runes[i]) {
			continue
		}
		a, b := i-1, i+2
		for a > 0 && !cut[a-1] {
			a--
		}
		for b < len(r.runes) && !cut[b] {
			b++
		}
		emit(a, b)
	}
}

// zhStops are Chinese question and function words, by first character: a
// question is cut into its terms wherever one occurs.
var zhStops = func() map[rune][][]rune {
	out := map[rune][][]rune{}
	for _, w := range strings.Fields(`什么 为什么 为何 怎么 怎样 如何 哪里 哪儿 哪个 哪些 哪一 哪位 哪种 哪家 哪年 哪国 哪一年
		是否 是不是 有没有 有哪些 有多少 多少 可以 能够 还是 或者 以及 并且 而且 但是 因为 所以 如果 虽然 之后 之前 以后 以前 时候
		叫做 称为 被称为 属于 位于 来自 根据 通过 关于 对于 由于 其中 其他 一个 一种 一些 这个 那个 这些 那些 主要 分别
		哪 谁 几 吗 呢 吧 啊 的 了 着 过 是 在 和 与 及 或 对 被 把 从 向 于 由 为 将 给 用 以 也 都 就 而 又 还 之 其 这 那 该 此
		会 能 要 让 使 到 并 等 叫`) {
		rs := []rune(w)
		out[rs[0]] = append(out[rs[0]], rs)
	}
	return out
}()

// zhAsks are the question words among zhStops that ask for a thing of
// the kind named right after them.
var zhAsks = map[string]bool{"什么": true, "哪": true, "哪个": true, "哪些": true, "哪一": true, "哪位": true, "哪种": true,
	"哪家": true, "哪国": true, "多少": true, "几": true, "有哪些": true, "有多少": true, "为什么": false}

// koParticles are Korean particles and endings that close a word, longest first.
var koParticles = func() []string {
	p := strings.Fields(`에서는 에서도 으로는 으로서 으로써 에게서 이라는 이라고 까지 부터 에서 에게 으로 로서 로써 처럼 보다 라는 라고 와는 과는
		은 는 이 가 을 를 의 에 로 와 과 도 만 나 요 야 인가 인지 입니까 습니까 했나 했는가 한 할 하는`)
	sort.SliceStable(p, func(i, j int) bool { return len(p[i]) > len(p[j]) })
	return p
}()

var koQuestions = map[string]bool{"무엇": true, "누구": true, "어디": true, "언제": true, "몇": true, "어느": true, "어떤": true, "왜": true, "어떻게": true, "얼마": true, "무슨": true}

// cjkKeywords describe what lies between two mentions, text[lo:hi], when
// it is CJK: its pieces between function words, as for a question.
func (x *offExtraction) cjkKeywords(lo, hi int) string {
	var kw []string
	seen := map[string]bool{}
	// Other mentions in between are no description of the relation.
	between := []byte(x.text[lo:hi])
	for i := sort.Search(len(x.spans), func(i int) bool { return x.spans[i].start >= lo }); i < len(x.spans) && x.spans[i].start < hi; i++ {
		for b := max(x.spans[i].start, lo); b < min(x.spans[i].end, hi); b++ {
			between[b-lo] = ' '
		}
	}
	for _, r := range runsOf(string(between)) {
		r.segments(nil, func(int) bool { return false }, false, false, func(i, j int) {
			if w := r.str(i, j); !seen[w] && len(kw) < x.o.maxKeywords && j-i <= cjkMaxTerm {
				seen[w] = true
				kw = append(kw, w)
			}
		})
	}
	return strings.Join(kw, ", ")
}
