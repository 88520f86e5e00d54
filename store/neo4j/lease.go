package neo4j

import (
	"context"
	"fmt"
	"time"

	"github.com/docgraph/docgraph/store"
)

// Claim leases a document node to lease.Owner in one statement (stmtClaim).
func (s *Store) Claim(ctx context.Context, doc store.Document, lease store.Lease) (*store.Document, error) {
	return store.ClaimOne(ctx, s, doc, lease)
}

// ClaimDocuments is Claim for each of docs, one statement each in one
// transaction.
func (s *Store) ClaimDocuments(ctx context.Context, docs []store.Document, lease store.Lease) ([]store.ClaimResult, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	op := store.ClaimsOp(docs)
	if err := lease.Check(); err != nil {
		return nil, s.fail(op, err)
	}
	claims := make([]store.ClaimResult, len(docs))
	err := s.write(ctx, op, func(tx runner) error {
		clear(claims)
		for i, doc := range docs {
			if doc.ID == "" {
				claims[i].Err = s.fail("claim "+doc.ID, fmt.Errorf("document %s has an empty id", doc.Path))
				continue
			}
			var err error
			claims[i], err = s.claimIn(ctx, tx, doc, lease)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return claims, nil
}

// claimIn runs stmtClaim for doc in tx. The error is the statement's; a
// refusal is the claim's.
func (s *Store) claimIn(ctx context.Context, tx runner, doc store.Document, lease store.Lease) (store.ClaimResult, error) {
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
	recs, err := collect(ctx, tx, stmtClaim, params)
	if err != nil {
		return store.ClaimResult{}, err
	}
	if len(recs) != 1 {
		return store.ClaimResult{}, fmt.Errorf("claim of %s returned %d rows", doc.ID, len(recs))
	}
	var c store.ClaimResult
	if m := recordMap(recs[0], "before"); m != nil {
		d := decodeDocument(m)
		c.Before = &d
	}
	op := "claim " + doc.ID
	switch recordInt(recs[0], "outcome") {
	case 0:
	case 1:
		c.Err = s.fail(op, store.ErrUpToDate)
	default:
		c.Err = s.fail(op, &store.ClaimedError{ID: doc.ID, Owner: c.Before.LeaseOwner, Until: c.Before.LeaseUntil})
	}
	return c, nil
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
