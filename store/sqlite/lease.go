package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/docgraph/docgraph/store"
)

// Claim leases a document row to lease.Owner: one conditional upsert in
// the write transaction (taken at BEGIN), so of several processes claiming
// one id exactly one gets it. The row as it was is read in the same
// transaction, to say why a claim was refused and what a claimed row was.
func (s *Store) Claim(ctx context.Context, doc store.Document, lease store.Lease) (*store.Document, error) {
	return store.ClaimOne(ctx, s, doc, lease)
}

// ClaimDocuments is Claim for each of docs in one write transaction.
func (s *Store) ClaimDocuments(ctx context.Context, docs []store.Document, lease store.Lease) ([]store.ClaimResult, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	what := store.ClaimsOp(docs)
	if err := lease.Check(); err != nil {
		return nil, fmt.Errorf("sqlite store %s: %s: %w", s.path, what, err)
	}
	sel, upsert, err := s.claimStatements(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %s: %w", s.path, what, err)
	}
	claims := make([]store.ClaimResult, len(docs))
	err = s.retrying(ctx, func() error {
		clear(claims)
		tx, err := s.wdb.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		sel, upsert := tx.StmtContext(ctx, sel), tx.StmtContext(ctx, upsert)
		wrote := false
		for i, doc := range docs {
			if doc.ID == "" {
				claims[i].Err = fmt.Errorf("sqlite store %s: claim %s: empty document id", s.path, doc.Path)
				continue
			}
			var before *store.Document
			d, err := scanDocument(sel.QueryRowContext(ctx, doc.ID))
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return err
			default:
				before = &d
			}
			now := time.Now()
			// The WHERE of the upsert is the claim rule itself: a done row
			// with these settings and a live lease of another run are left
			// alone. A done row keeps its status.
			res, err := upsert.ExecContext(ctx,
				doc.ID, doc.Path, doc.Title, doc.Hash, doc.Format, doc.Fingerprint,
				doc.Size, unixNano(doc.ModTime), now.UnixNano(), encodeWarnings(doc.Warnings),
				lease.Owner, now.Add(lease.TTL).UnixNano(), lease.TakeOver, now.UnixNano())
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			claims[i].Before = before
			if n == 0 {
				claims[i].Err = fmt.Errorf("sqlite store %s: claim %s: %w", s.path, doc.ID, refusal(before, doc.Fingerprint))
				continue
			}
			wrote = true
		}
		if !wrote {
			return nil // nothing written; the rollback ends the transaction
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %s: %w", s.path, what, err)
	}
	return claims, nil
}

// claimStatements returns Claim's lookup and upsert, prepared on the
// writer the first time. A failure is not kept: the next claim tries again.
func (s *Store) claimStatements(ctx context.Context) (sel, upsert *sql.Stmt, err error) {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	if s.claimStmts[0] == nil {
		if s.claimStmts[0], err = s.wdb.PrepareContext(ctx, `SELECT `+documentColumns+` FROM documents WHERE id = ?`); err != nil {
			return nil, nil, err
		}
	}
	if s.claimStmts[1] == nil {
		if s.claimStmts[1], err = s.wdb.PrepareContext(ctx, `
		INSERT INTO documents(id, path, title, hash, format, fingerprint, status, error, size, mod_time, updated_at, chunks, file_key, warnings, lease_owner, lease_until)
		VALUES (?, ?, ?, ?, ?, ?, 'processing', '', ?, ?, ?, 0, '', ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET
			status = CASE WHEN documents.status = 'done' THEN 'done' ELSE 'processing' END,
			error = CASE WHEN documents.status = 'done' THEN documents.error ELSE '' END,
			updated_at = excluded.updated_at,
			lease_owner = excluded.lease_owner,
			lease_until = excluded.lease_until
		WHERE NOT (documents.status = 'done' AND documents.fingerprint = excluded.fingerprint)
			AND (documents.lease_owner IN ('', excluded.lease_owner, ?) OR documents.lease_until <= ?)`); err != nil {
			return nil, nil, err
		}
	}
	return s.claimStmts[0], s.claimStmts[1], nil
}

// refusal says why a claim changed nothing, from the row it found.
func refusal(d *store.Document, fingerprint string) error {
	switch {
	case d == nil:
		return errors.New("claim refused on a missing row")
	case d.Status == store.StatusDone && d.Fingerprint == fingerprint:
		return store.ErrUpToDate
	}
	return &store.ClaimedError{ID: d.ID, Owner: d.LeaseOwner, Until: d.LeaseUntil}
}

// RenewLeases extends owner's leases: one statement for the whole run.
func (s *Store) RenewLeases(ctx context.Context, owner string, ttl time.Duration) (int, error) {
	if owner == "" {
		return 0, nil
	}
	var n int64
	err := s.retrying(ctx, func() error {
		res, err := s.wdb.ExecContext(ctx, `UPDATE documents SET lease_until = ? WHERE lease_owner = ?`, time.Now().Add(ttl).UnixNano(), owner)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite store %s: renew leases of %s: %w", s.path, owner, err)
	}
	return int(n), nil
}

// ReleaseLease clears owner's lease on one document.
func (s *Store) ReleaseLease(ctx context.Context, id, owner string) error {
	err := s.retrying(ctx, func() error {
		_, err := s.wdb.ExecContext(ctx, `UPDATE documents SET lease_owner = '', lease_until = 0 WHERE id = ? AND lease_owner = ?`, id, owner)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite store %s: release lease of %s: %w", s.path, id, err)
	}
	return nil
}
