package ner

import (
	"context"
	"fmt"
	"os"
	"testing"
)

func TestScratchDump(t *testing.T) {
	txt := os.Getenv("NER_TXT")
	if txt == "" {
		t.Skip()
	}
	x, _ := NewOffline().Extract(context.Background(), Chunk{DocTitle: os.Getenv("NER_TITLE"), Text: txt})
	for _, e := range x.Entities {
		fmt.Printf("E %-40q %-12s | %s\n", e.Name, e.Type, e.Description)
	}
	for _, r := range x.Relations {
		fmt.Printf("R %q -> %q [%s] %v | %s\n", r.Source, r.Target, r.Keywords, r.Weight, r.Description)
	}
}
