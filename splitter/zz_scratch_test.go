package splitter

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

func TestScratchHunt(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", " ", "\n", ".", "。", "\xff", "\xe5", "字", "🙂", "\t", ",", "b", "0", "'s", "\r"}
	for i := 0; i < 200000; i++ {
		n := r.IntN(40)
		var b []byte
		for k := 0; k < n; k++ {
			if r.IntN(3) == 0 {
				b = append(b, byte(r.IntN(256)))
			} else {
				b = append(b, alphabet[r.IntN(len(alphabet))]...)
			}
		}
		text := string(b)
		size := 4 + r.IntN(60)
		overlap := r.IntN(size)
		done := make(chan bool)
		go func() {
			select {
			case <-done:
			case <-time.After(3 * time.Second):
				fmt.Printf("HANG size=%d overlap=%d text=%q\n", size, overlap, text)
				os.Exit(1)
			}
		}()
		s, _ := New(WithChunkSize(size), WithOverlap(overlap))
		checkChunks(t, s, "f", text, s.Split("f", text))
		s.Tokenizer().Truncate(text, size)
		close(done)
	}
}
