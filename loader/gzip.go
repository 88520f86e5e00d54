package loader

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// gunzip decompresses data in a stream that stops one byte past the size
// limit, so a gzip bomb is refused by what it inflates to without holding
// more than the limit in memory, then reads the inner file by its content
// and the name without ".gz".
func (l *Loader) gunzip(ctx context.Context, name string, data []byte, depth int) (*parsed, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: broken gzip stream: %w", ErrMalformed, err)
	}
	zr.Multistream(true)
	inner, err := io.ReadAll(io.LimitReader(zr, l.maxBytes+1))
	if int64(len(inner)) > l.maxBytes {
		return nil, fmt.Errorf("%w: decompresses to more than --max-file-size %s", ErrTooLarge, SizeText(l.maxBytes))
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: gzip stream cut short", ErrMalformed)
		}
		return nil, fmt.Errorf("%w: broken gzip stream: %w", ErrMalformed, err)
	}
	innerName := name
	if strings.EqualFold(filepath.Ext(name), ".gz") {
		innerName = strings.TrimSuffix(name, filepath.Ext(name))
	}
	if filepath.Ext(innerName) == "" || !Supported(innerName) {
		// No usable inner extension: the name stored in the header may have one.
		if h := filepath.Base(zr.Name); h != "." && h != "" && Supported(h) {
			innerName = filepath.Join(filepath.Dir(name), h)
		}
	}
	p, err := l.parse(ctx, innerName, inner, depth+1)
	if err != nil {
		return nil, fmt.Errorf("inside gzip: %w", err)
	}
	return p, nil
}
