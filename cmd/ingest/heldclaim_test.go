package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sync"

	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/sqlite"
)

// Environment of a child ingest whose store is heldclaim://PATH. Right
// after the claim of the document at heldPathEnv commits (its row is
// processing), the claim waits before it returns: until the run gives up
// the document (the claim's context ends), or, with heldUntilEnv=stop,
// until the run stops taking files (the first SIGINT or SIGTERM ends the
// context the store was opened with). The wait is announced on stderr
// with heldLine. The offline models build a document in milliseconds and
// claim it just before its write, so without the wait a test could not be
// sure to signal a run while a document is in flight.
const (
	heldPathEnv  = "DOCGRAPH_TEST_HELD_PATH"
	heldUntilEnv = "DOCGRAPH_TEST_HELD_UNTIL"
	heldLine     = "heldclaim: holding the claim of "
)

// heldClaimStore is a SQLite store whose claim of one document waits.
type heldClaimStore struct {
	*sqlite.Store
	path string
	stop <-chan struct{} // the run's end of taking files; nil: not waited for
	once sync.Once
}

func init() {
	store.Register(func(ctx context.Context, u *url.URL, opts store.Options) (store.Store, error) {
		s, err := sqlite.Open(ctx, u.Path, opts)
		if err != nil {
			return nil, err
		}
		h := &heldClaimStore{Store: s, path: os.Getenv(heldPathEnv)}
		if os.Getenv(heldUntilEnv) == "stop" {
			// ingest opens its store with the context its first signal
			// cancels.
			h.stop = ctx.Done()
		}
		return h, nil
	}, "heldclaim")
}

// hold waits if docs include the held document, the first time they do.
func (s *heldClaimStore) hold(ctx context.Context, docs ...store.Document) {
	if s.path == "" || !slices.ContainsFunc(docs, func(d store.Document) bool { return d.Path == s.path }) {
		return
	}
	s.once.Do(func() {
		fmt.Fprintln(os.Stderr, heldLine+s.path)
		select {
		case <-ctx.Done():
		case <-s.stop:
		}
	})
}

func (s *heldClaimStore) Claim(ctx context.Context, d store.Document, l store.Lease) (*store.Document, error) {
	before, err := s.Store.Claim(ctx, d, l)
	if err == nil {
		s.hold(ctx, d)
	}
	return before, err
}

func (s *heldClaimStore) ClaimDocuments(ctx context.Context, ds []store.Document, l store.Lease) ([]store.ClaimResult, error) {
	claims, err := s.Store.ClaimDocuments(ctx, ds, l)
	if err == nil {
		s.hold(ctx, ds...)
	}
	return claims, err
}
