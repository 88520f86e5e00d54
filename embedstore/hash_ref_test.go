package embedstore

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/docgraph/docgraph/cjk"
)

// The hashing embedder must give the vectors it gave, bit for bit: stores
// hold them (their embedder is named hash-v1 or hash-v2) and new queries
// must keep landing next to them. Two guards: digests of vectors recorded
// with the code before it was made faster, and that code itself
// (referenceVector), compared on random and real text.

func vectorDigest(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func TestHashVectorsAsRecorded(t *testing.T) {
	embedders := map[string]*Hash{
		"hash-v2/384":  NewHash(),
		"hash-v1/384":  NewHash(WithVersion(1)),
		"hash-v2/64":   NewHash(WithDimension(64)),
		"hash-v1/1000": NewHash(WithDimension(1000), WithVersion(1)),
	}
	for _, tc := range []struct{ embedder, text, digest string }{
		{"hash-v2/384", "", "80422bc3d307b4a25bdafcc84ac7fb01cb55a09810e8b0f37bb12e0edb5c48ca"},
		{"hash-v2/384", "a", "4fe1efaae79514b6b6bab9cd52501448ec0cf0cb69c28db74c69a5537a5f5187"},
		{"hash-v2/384", "The", "82a5c91116e04fd50a4ade9bd87a6dca91dcaea5405c5d522f362acbcb31ecfb"},
		{"hash-v2/384", "Lothair II married Teutberga", "c04065fbc81270c802372bc3c3767b991d7e898ce8cba8124ac793aec6bb0b6b"},
		{"hash-v2/384", "Teutberga (died 11 November 875) was a queen of Lotharingia by marriage to Lothair II.", "b5bf7aeef044ef83cf8d72c097271601181aa401dd35e8ac31b337feb8eb2578"},
		{"hash-v2/384", "the of and to in", "086bd306a97fdb7cfe381a1ed492b0783c0646d3e6d4f502ce5f6f69e7d2b09a"},
		{"hash-v2/384", "ÉCOLE Normale Supérieure, naïve café; İstanbul ΣΊΣΥΦΟΣ straße", "c05c3032d36492e2df6945864ef57384cd5e291ca3052aaaa562d934ce96d1ca"},
		{"hash-v2/384", "松粳9号是黑龙江省的水稻品种。Ada Lovelace (1815) wrote about the Analytical Engine.", "0fb0f2c68a7d085f331d251a4575f84917f5e9ea5d9657e820d2183dabaab23e"},
		{"hash-v2/384", "한국어 텍스트와 日本語のテキスト ＣＰＵ２０１４\u3000全角", "77d05257cb7122405a3d18ea6fdd554b2536f6954a375b0d04ec975545adcb0b"},
		{"hash-v2/384", "x\xffy\xc3 bad utf8 \xe2\x82", "76fd659366c5b41a4fd1f227ab83919cf4cc5517c653e1ae495a4f7d2298387f"},
		{"hash-v2/384", "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis supercalifragilisticexpialidocious-and-more-words-joined-by-hyphens", "234dd8bac8857a77d4c1369449cf68db3f18d552b9b9fce323945b01697b3721"},
		{"hash-v2/384", "Lothair II\nThe king of Lotharingia, son of Lothair I.\nHe married Teutberga in 855.", "bbdca430c7ddcc76d60bfcc606254081c612eacf3847e28ce103cd2ff1eedcc6"},
		{"hash-v1/384", "", "80422bc3d307b4a25bdafcc84ac7fb01cb55a09810e8b0f37bb12e0edb5c48ca"},
		{"hash-v1/384", "a", "4fe1efaae79514b6b6bab9cd52501448ec0cf0cb69c28db74c69a5537a5f5187"},
		{"hash-v1/384", "The", "82a5c91116e04fd50a4ade9bd87a6dca91dcaea5405c5d522f362acbcb31ecfb"},
		{"hash-v1/384", "Lothair II married Teutberga", "c04065fbc81270c802372bc3c3767b991d7e898ce8cba8124ac793aec6bb0b6b"},
		{"hash-v1/384", "Teutberga (died 11 November 875) was a queen of Lotharingia by marriage to Lothair II.", "b5bf7aeef044ef83cf8d72c097271601181aa401dd35e8ac31b337feb8eb2578"},
		{"hash-v1/384", "the of and to in", "086bd306a97fdb7cfe381a1ed492b0783c0646d3e6d4f502ce5f6f69e7d2b09a"},
		{"hash-v1/384", "ÉCOLE Normale Supérieure, naïve café; İstanbul ΣΊΣΥΦΟΣ straße", "c05c3032d36492e2df6945864ef57384cd5e291ca3052aaaa562d934ce96d1ca"},
		{"hash-v1/384", "松粳9号是黑龙江省的水稻品种。Ada Lovelace (1815) wrote about the Analytical Engine.", "42214fd5398e20829eae0c621d297a47626df0ea1f35fe07a7e05967980abfa6"},
		{"hash-v1/384", "한국어 텍스트와 日本語のテキスト ＣＰＵ２０１４\u3000全角", "d7cebe92b6282f6efe59dac096a0ed93cb1cea04f0af38709f96a65364d8fadb"},
		{"hash-v1/384", "x\xffy\xc3 bad utf8 \xe2\x82", "76fd659366c5b41a4fd1f227ab83919cf4cc5517c653e1ae495a4f7d2298387f"},
		{"hash-v1/384", "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis supercalifragilisticexpialidocious-and-more-words-joined-by-hyphens", "234dd8bac8857a77d4c1369449cf68db3f18d552b9b9fce323945b01697b3721"},
		{"hash-v1/384", "Lothair II\nThe king of Lotharingia, son of Lothair I.\nHe married Teutberga in 855.", "bbdca430c7ddcc76d60bfcc606254081c612eacf3847e28ce103cd2ff1eedcc6"},
		{"hash-v2/64", "", "5341e6b2646979a70e57653007a1f310169421ec9bdd9f1a5648f75ade005af1"},
		{"hash-v2/64", "a", "6a8d3821ab07b7bbe66f7f7aa8b0ac554827ec3baa697abd688274b19df8f855"},
		{"hash-v2/64", "The", "608b4a387a6789ccbcada3e17b1f3748a878f8d34eb319e974b57e55f3af1dcc"},
		{"hash-v2/64", "Lothair II married Teutberga", "3eafaa55bda41feb2d697fd056df539ff7ec911b3d107f56936bb5342b16985e"},
		{"hash-v2/64", "Teutberga (died 11 November 875) was a queen of Lotharingia by marriage to Lothair II.", "338c8da5706e4222e48fed7fe315162fec79f85ddaf506cb523cda8130e113e3"},
		{"hash-v2/64", "the of and to in", "3a574b5b52853df29d643b79669a75d9b0fee209b7524080fcdd45f65563dd7f"},
		{"hash-v2/64", "ÉCOLE Normale Supérieure, naïve café; İstanbul ΣΊΣΥΦΟΣ straße", "4016822a271d984386d70c3a5bfc3b937982910db96eb8a3fb1eda7636ec0124"},
		{"hash-v2/64", "松粳9号是黑龙江省的水稻品种。Ada Lovelace (1815) wrote about the Analytical Engine.", "95f4f4c77195ce87f5d36961d38bb731cf3ec42ee96ca615f500c0e1d6f28c51"},
		{"hash-v2/64", "한국어 텍스트와 日本語のテキスト ＣＰＵ２０１４\u3000全角", "c95b18faaa03231d382a6953b175e9f90f508a358f9fedc75843ed14d273b25b"},
		{"hash-v2/64", "x\xffy\xc3 bad utf8 \xe2\x82", "56c2c06c4ae720b32f3ca622e289d0b44b500460055c9ebb92d34e83046995ba"},
		{"hash-v2/64", "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis supercalifragilisticexpialidocious-and-more-words-joined-by-hyphens", "74811590c06e75892c5fccf1c4ec2b374ccee6bf2d050d359da748caa60d20fb"},
		{"hash-v2/64", "Lothair II\nThe king of Lotharingia, son of Lothair I.\nHe married Teutberga in 855.", "5042b435bbc6bdf3302d8fc692e83566c73d3976745e7b21d1287f897188dc34"},
		{"hash-v1/1000", "", "fc19b1997119425765295aeab72d76faa6927d4f83985d328c26f20468d6cc76"},
		{"hash-v1/1000", "a", "76e44e909a10b808ed41588de02f539dd7e6785f847b717d7febde9a41eeed54"},
		{"hash-v1/1000", "The", "24099b54cc3edd336d32d97a81517a829c01fce32fe2014143199d15620763c8"},
		{"hash-v1/1000", "Lothair II married Teutberga", "b58bb7bf56f70774582693303ca9eb55208faf230dd86446eb610e57d081afda"},
		{"hash-v1/1000", "Teutberga (died 11 November 875) was a queen of Lotharingia by marriage to Lothair II.", "4e2fef8a30c339552d78a79df6dcaa178a00bca87ead93c235413c2371dea2c8"},
		{"hash-v1/1000", "the of and to in", "270998a14f546cb3a61124e974cd6b457a0f5816661609c94d052354379cab24"},
		{"hash-v1/1000", "ÉCOLE Normale Supérieure, naïve café; İstanbul ΣΊΣΥΦΟΣ straße", "1e5b9cbe7faa92c05dc09dc18b9738afd270bc654e08dfdaa47e3ed8e5a91365"},
		{"hash-v1/1000", "松粳9号是黑龙江省的水稻品种。Ada Lovelace (1815) wrote about the Analytical Engine.", "c7ecfd175d4deaf21568ebc79704d437045b35cfb3a5441baa103ba0fb713dde"},
		{"hash-v1/1000", "한국어 텍스트와 日本語のテキスト ＣＰＵ２０１４\u3000全角", "cf7c8bb698be8272cc87dec24452f0d73096c3c6fb0d6dea48f95edabcb7d55d"},
		{"hash-v1/1000", "x\xffy\xc3 bad utf8 \xe2\x82", "a991d0658804901650979fac750b558bc014105d01cf7234fcb62e9484edf9cb"},
		{"hash-v1/1000", "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis supercalifragilisticexpialidocious-and-more-words-joined-by-hyphens", "491124d44ed47b64442ae752cde8db3af9bfd2445e3be53f1ecb1e876ebc79f0"},
		{"hash-v1/1000", "Lothair II\nThe king of Lotharingia, son of Lothair I.\nHe married Teutberga in 855.", "54e094c1470764f3a8292634fe7e81bad00f879ac7fab19c1903e875feeb6bc0"},
	} {
		if got := vectorDigest(embedders[tc.embedder].Vector(tc.text)); got != tc.digest {
			t.Errorf("%s vector of %q changed: digest %s, want %s", tc.embedder, tc.text, got, tc.digest)
		}
	}
}

// referenceVector is Hash.Vector as it was written before it was made
// faster, kept to compare with.
func referenceVector(h *Hash, text string) []float32 {
	v := make([]float32, h.dim)
	var prev uint64
	havePrev := false
	var buf [64]byte
	add := func(hv uint64, w float32) {
		idx := int(hv % uint64(h.dim))
		if hv>>63 == 1 {
			w = -w
		}
		v[idx] += w
	}
	fnv := func(s string) uint64 { return fnv64b([]byte(s)) }
	referenceWords(text, h.version >= 2, func(word string, isCJK bool) {
		if isCJK {
			var ends [4]int
			n := 0
			for i, r := range word {
				w := utf8.RuneLen(r)
				copy(ends[:3], ends[1:])
				ends[3] = i
				n++
				for k := 1; k <= 3 && k <= n; k++ {
					add(fnv(word[ends[4-k]:i+w])^cjkSeed[k-1], h.cjkW[k-1])
				}
			}
			havePrev = false
			return
		}
		w := h.wordW
		if stopWords[word] {
			w *= h.stopWeight
		}
		hw := fnv(word)
		add(hw, w)
		if havePrev {
			add(mix(prev, hw), h.bigramW*w)
		}
		prev, havePrev = hw, true
		if len(word) > 3 && !stopWords[word] {
			p := append(buf[:0], '<')
			p = append(p, word...)
			p = append(p, '>')
			for i := 0; i+3 <= len(p); {
				_, size := utf8.DecodeRune(p[i:])
				add(fnv64b(p[i:min(i+3, len(p))])^0x9e3779b97f4a7c15, h.trigramW)
				i += size
			}
		}
	})
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum != 0 {
		inv := float32(1 / math.Sqrt(sum))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}

func referenceWords(text string, cjkRuns bool, fn func(word string, isCJK bool)) {
	var sb, run strings.Builder
	flush := func() {
		if sb.Len() > 0 {
			fn(sb.String(), false)
			sb.Reset()
		}
	}
	flushRun := func() {
		if run.Len() > 0 {
			fn(run.String(), true)
			run.Reset()
		}
	}
	for _, r := range text {
		if cjkRuns {
			r = cjk.Fold(r)
		}
		switch {
		case cjkRuns && r >= 0x1100 && cjk.Is(r):
			flush()
			run.WriteRune(r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushRun()
			sb.WriteRune(unicode.ToLower(r))
			if !cjkRuns && r >= 0x2E80 && unicode.Is(unicode.Han, r) {
				flush()
			}
		default:
			flush()
			flushRun()
		}
	}
	flush()
	flushRun()
}

func sameVectors(t *testing.T, text string, hs ...*Hash) {
	t.Helper()
	for _, h := range hs {
		got, want := h.Vector(text), referenceVector(h, text)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s/%d vector of %q differs at %d: %v, want %v", h.Name(), h.dim, text, i, got[i], want[i])
			}
		}
	}
}

func TestHashVectorsMatchReference(t *testing.T) {
	hs := []*Hash{NewHash(), NewHash(WithVersion(1)), NewHash(WithDimension(100))}
	alphabet := []string{
		"a", "Z", "é", "Ä", "ß", "ж", "İ", "ǅ", "0", "٣", "²", "中", "ア", "한", "々", "ｰ", "Ａ", "２", "\u3000",
		" ", " ", " ", "\n", "'", ".", "-", "(", "\u0301", "👍", "\xff", "\xc3",
		"the", "of", "which", "These", "Lothair", "international", "straße", "稻花香", "東京タワー",
	}
	r := rand.New(rand.NewPCG(21, 3))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		var b strings.Builder
		for k := r.IntN(40); k > 0; k-- {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		sameVectors(t, b.String(), hs...)
	}
	// A word longer than the buffers kept on the stack.
	sameVectors(t, strings.Repeat("abcdefghij", 30)+" "+strings.Repeat("数据", 60), hs...)
}

// TestHashVectorsMatchReferenceOnCorpora compares the passages of the
// shared corpora (English and Chinese), when present.
func TestHashVectorsMatchReferenceOnCorpora(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the benchmark corpora")
	}
	h := NewHash()
	n := 0
	for _, set := range []string{"2wiki", "musique", "cmrc2018"} {
		f, err := os.Open(filepath.Join("..", "..", "shared", "data", set, "corpus.jsonl"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var p struct{ Title, Text string }
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			sameVectors(t, p.Title+"\n"+p.Text, h)
			n++
		}
		f.Close()
	}
	if n == 0 {
		t.Skip("shared data absent")
	}
}

func TestStopWordSlots(t *testing.T) {
	for w := range stopWords {
		if !stopWordSlots.has([]byte(w), fnv64b([]byte(w))) {
			t.Errorf("stop word %q not found", w)
		}
	}
	for _, w := range []string{"", "ab", "the1", "them ", "thes", "whos", "lothair", "i'm"} {
		if stopWordSlots.has([]byte(w), fnv64b([]byte(w))) {
			t.Errorf("%q found among the stop words", w)
		}
	}
}
