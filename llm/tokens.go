package llm

import (
	"unicode"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"
)

// EstimateTokens guesses how many tokens s costs without a tokenizer: about
// four bytes per token for Latin text, one token per character for scripts
// (CJK and the like) that BPE vocabularies split finely. It is what the rate
// limiter and the context budget use when no real count is at hand; it errs
// a little high for English, which is the safe side for both.
func EstimateTokens(s string) int {
	if s == "" {
		return 0
	}
	ascii, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
			unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r):
			other += 2 // counted as a whole token below
		default:
			other++ // accented Latin, Cyrillic...: about two per token
		}
	}
	return (ascii+3)/4 + (other+1)/2
}

// EstimateMessageTokens estimates the prompt tokens of a conversation,
// counting a few tokens of framing per message as chat templates do.
func EstimateMessageTokens(messages []llms.MessageContent) int {
	n := 0
	for _, m := range messages {
		n += 4
		for _, p := range m.Parts {
			if t, ok := p.(llms.TextContent); ok {
				n += EstimateTokens(t.Text)
			}
		}
	}
	return n
}
