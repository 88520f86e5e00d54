package llm

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/docgraph/docgraph/internal/termtext"
)

// LineHandler is a slog handler for what a program tells its user while
// model calls run (a call being retried, WithLogger): one line "prefix:
// message (key value, ...)" per record, warnings and above only, each
// line escaped and cut to 600 bytes, so that an endpoint's error page
// cannot garble a terminal or flood a log.
func LineHandler(w io.Writer, prefix string) slog.Handler {
	return &logHandler{w: w, prefix: prefix}
}

type logHandler struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	attrs  []slog.Attr
}

func (h *logHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	var parts []string
	add := func(a slog.Attr) bool {
		parts = append(parts, a.Key+" "+a.Value.String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	line := r.Message
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := fmt.Fprintf(h.w, "%s: %s\n", h.prefix, termtext.OneLine(line, 600))
	return err
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &logHandler{w: h.w, prefix: h.prefix, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *logHandler) WithGroup(string) slog.Handler { return h }
