package llm

import (
	"log/slog"
	"strings"
	"testing"
)

func TestLineHandler(t *testing.T) {
	var b strings.Builder
	log := slog.New(LineHandler(&b, "ingest: llm")).With("model", "openai:m")
	log.Info("not shown")
	log.Warn("llm call failed, retrying", "error", "HTTP 500:\n<html>\x1b[31m"+strings.Repeat("x", 1000))
	got := b.String()
	if strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "ingest: llm: llm call failed, retrying (model openai:m, error HTTP 500: <html>\\x1b[31m") ||
		len(got) > len("ingest: llm: ")+600+1 {
		t.Errorf("want one escaped, bounded warning line, got %q", got)
	}
}
