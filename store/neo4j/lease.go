package neo4j

import (
	"context"
	"fmt"
	"time"

	"github.com/docgraph/docgraph/store"
)

// Claim leases a document node to lease.Owner in one statement (stmtClaim).
func (s *Store) Claim(ctx context.Context, doc store.Document, lease store.Lease) (*store.Document, error) {
	op := "claim " + doc.ID
	if doc.ID == "" {
		return nil, s.fail(op, fmt.Errorf("document %s has an empty id", doc.Path))
	}
	if lease.Owner == "" || lease.TTL <= 0 {
		return nil, s.fail(op, fmt.Errorf("a lease needs an owner and a positive duration"))
	}
	props := documentProps(doc)
	props["file_key"] = "" // a lifecycle row never lets a file be skipped unread
	params := map[string]any{
		"id":          doc.ID,
		"props":       props,
		"fingerprint": doc.Fingerprint,
		"owner":       lease.Owner,
		"takeover":    lease.TakeOver,
		"ttl_ms":      lease.TTL.Milliseconds(),
		"updated_at":  time.Now().UTC(),
		"done":        string(store.StatusDone),
		"processing":  string(store.StatusProcessing),
		"no_error":    "",
	}
	var outcome int64
	var before *store.Document
	err := s.write(ctx, op, func(tx runner) error {
		recs, err := collect(ctx, tx, stmtClaim, params)
		if err != nil {
			return err
		}
		if len(recs) != 1 {
			return fmt.Errorf("claim returned %d rows", len(recs))
		}
		outcome, before = recordInt(recs[0], "outcome"), nil
		if m := recordMap(recs[0], "before"); m != nil {
			d := decodeDocument(m)
			before = &d
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch outcome {
	case 0:
		return before, nil
	case 1:
		return before, s.fail(op, store.ErrUpToDate)
	}
	return before, s.fail(op, &store.ClaimedError{ID: doc.ID, Owner: before.LeaseOwner, Until: before.LeaseUntil})
}

// RenewLeases extends owner's leases by the server's clock.
func (s *Store) RenewLeases(ctx context.Context, owner string, ttl time.Duration) (int, error) {
	if owner == "" {
		return 0, nil
	}
	params := map[string]any{"owner": owner, "ttl_ms": ttl.Milliseconds()}
	var n int64
	err := s.write(ctx, "renew leases of "+owner, func(tx runner) error {
		recs, err := collect(ctx, tx, stmtRenewLeases, params)
		if err != nil {
			return err
		}
		n = 0
		if len(recs) > 0 {
			n = recordInt(recs[0], "n")
		}
		return nil
	})
	return int(n), err
}

// ReleaseLease clears owner's lease on one document.
func (s *Store) ReleaseLease(ctx context.Context, id, owner string) error {
	params := map[string]any{"id": id, "owner": owner}
	return s.write(ctx, "release lease of "+id, func(tx runner) error {
		return exec(ctx, tx, stmtReleaseLease, params)
	})
}
