package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docgraph/docgraph/store"
)

// testClaim checks the per-document lease: one claimer wins, a live lease
// of another run is refused and named, an expired or dead run's lease is
// taken over, renewals and releases touch only the owner's rows, writes
// and SetStatus end leases, and a done row is never hidden by a claim.
func (s suite) testClaim(t *testing.T) {
	st, _ := s.fresh(t)
	ctx := ctxFor(t)
	w := rhineV1().write()
	doc := w.Document
	doc.Fingerprint = "fp1"
	w.Document.Fingerprint = "fp1"
	const ttl = time.Minute
	a := store.Lease{Owner: "host-a/1/run-a", TTL: ttl}
	b := store.Lease{Owner: "host-b/2/run-b", TTL: ttl}
	row := func(when string) *store.Document {
		t.Helper()
		d, err := st.Document(ctx, doc.ID)
		if err != nil {
			t.Fatalf("%s: Document: %v", when, err)
		}
		return d
	}

	// A new id: created bare, processing, leased.
	start := time.Now()
	before, err := st.Claim(ctx, doc, a)
	if err != nil || before != nil {
		t.Fatalf("Claim(new id) = %v, %v; want nil, nil", before, err)
	}
	d := row("claimed")
	if d.Status != store.StatusProcessing || d.Chunks != 0 || d.Path != doc.Path || d.LeaseOwner != a.Owner {
		t.Errorf("claimed row = status %s chunks %d path %q owner %q; want processing, 0, %q, %q", d.Status, d.Chunks, d.Path, d.LeaseOwner, doc.Path, a.Owner)
	}
	// Expiry is by the store's clock; allow for a server's clock a little off ours.
	if d.LeaseUntil.Before(start.Add(ttl-10*time.Second)) || d.LeaseUntil.After(time.Now().Add(ttl+10*time.Second)) {
		t.Errorf("lease until %s, want about a minute from %s", d.LeaseUntil, start)
	}
	if !d.Leased(b.Owner, time.Now()) || d.Leased(a.Owner, time.Now()) {
		t.Errorf("Leased: want held for b, not for its owner a")
	}

	// Another run is refused, and told who holds it; nothing changes.
	before, err = st.Claim(ctx, doc, b)
	var held *store.ClaimedError
	if !errors.Is(err, store.ErrClaimed) || !errors.As(err, &held) || held.Owner != a.Owner || before == nil || before.LeaseOwner != a.Owner {
		t.Fatalf("Claim by another run = %v, %v; want ErrClaimed naming %s", before, err, a.Owner)
	}
	if got := row("refused"); got.LeaseOwner != a.Owner || !got.LeaseUntil.Equal(d.LeaseUntil) {
		t.Errorf("a refused claim changed the lease: %q until %s", got.LeaseOwner, got.LeaseUntil)
	}
	// The holder's own claim renews.
	if _, err := st.Claim(ctx, doc, a); err != nil {
		t.Errorf("Claim by the holder again: %v", err)
	}

	// Renewal extends only the owner's leases.
	old := row("before renewal").LeaseUntil
	time.Sleep(5 * time.Millisecond)
	if n, err := st.RenewLeases(ctx, a.Owner, 2*ttl); err != nil || n != 1 {
		t.Errorf("RenewLeases(a) = %d, %v; want 1", n, err)
	}
	if got := row("renewed"); !got.LeaseUntil.After(old) || got.LeaseOwner != a.Owner {
		t.Errorf("renewal: lease until %s, was %s", got.LeaseUntil, old)
	}
	if n, err := st.RenewLeases(ctx, b.Owner, ttl); err != nil || n != 0 {
		t.Errorf("RenewLeases(b, holding nothing) = %d, %v; want 0", n, err)
	}
	// Releasing another run's lease does nothing.
	if err := st.ReleaseLease(ctx, doc.ID, b.Owner); err != nil {
		t.Fatal(err)
	}
	if row("foreign release").LeaseOwner != a.Owner {
		t.Error("ReleaseLease by a non-owner cleared the lease")
	}

	// A run known dead is taken over before its lease expires.
	takeOver := b
	takeOver.TakeOver = a.Owner
	if _, err := st.Claim(ctx, doc, takeOver); err != nil {
		t.Fatalf("Claim taking over a dead run: %v", err)
	}
	if got := row("taken over"); got.LeaseOwner != b.Owner || got.Status != store.StatusProcessing {
		t.Errorf("after take-over: owner %q status %s", got.LeaseOwner, got.Status)
	}

	// An expired lease is taken over.
	short := store.Lease{Owner: "host-c/3/run-c", TTL: 20 * time.Millisecond}
	if err := st.ReleaseLease(ctx, doc.ID, b.Owner); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(ctx, doc, short); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := st.Claim(ctx, doc, a); err != nil {
		t.Fatalf("Claim over an expired lease: %v", err)
	}

	// A failure settles the row and ends the lease; the next claim clears the error.
	if err := st.SetStatus(ctx, doc, store.StatusFailed, "extract: boom"); err != nil {
		t.Fatal(err)
	}
	if got := row("failed"); got.LeaseOwner != "" || got.Status != store.StatusFailed {
		t.Errorf("SetStatus(failed) left owner %q, status %s", got.LeaseOwner, got.Status)
	}
	if _, err := st.Claim(ctx, doc, b); err != nil {
		t.Fatal(err)
	}
	if got := row("failed, claimed"); got.Status != store.StatusProcessing || got.Error != "" || got.LeaseOwner != b.Owner {
		t.Errorf("claim of a failed row: status %s error %q owner %q", got.Status, got.Error, got.LeaseOwner)
	}

	// A committed write ends the lease.
	mustWrite(t, st, w)
	if got := row("written"); got.LeaseOwner != "" || !got.LeaseUntil.IsZero() || got.Status != store.StatusDone {
		t.Errorf("after the write: owner %q until %s status %s", got.LeaseOwner, got.LeaseUntil, got.Status)
	}

	// Done with these settings: nothing to claim, nothing changes.
	before, err = st.Claim(ctx, doc, a)
	if !errors.Is(err, store.ErrUpToDate) || before == nil || before.Status != store.StatusDone {
		t.Fatalf("Claim(done, same fingerprint) = %v, %v; want the done row and ErrUpToDate", before, err)
	}
	if got := row("up to date"); got.LeaseOwner != "" || got.Status != store.StatusDone {
		t.Errorf("an up-to-date claim changed the row: owner %q status %s", got.LeaseOwner, got.Status)
	}

	// Done with other settings: leased, but stays done and searchable.
	other := doc
	other.Fingerprint = "fp2"
	before, err = st.Claim(ctx, other, a)
	if err != nil || before == nil || before.Status != store.StatusDone || before.Chunks != len(w.Chunks) {
		t.Fatalf("Claim(done, other fingerprint) = %v, %v; want the done row before", before, err)
	}
	if got := row("rebuilding"); got.Status != store.StatusDone || got.LeaseOwner != a.Owner || got.Chunks != len(w.Chunks) || got.Fingerprint != "fp1" {
		t.Errorf("claimed done row: status %s owner %q chunks %d fingerprint %q", got.Status, got.LeaseOwner, got.Chunks, got.Fingerprint)
	}
	if hits, err := st.SearchChunksText(ctx, "Basel chemical", 10); err != nil || len(hits) == 0 {
		t.Errorf("a claimed done document left search: %v, %v", hitIDs(hits), err)
	}
	if _, err := st.Claim(ctx, other, b); !errors.Is(err, store.ErrClaimed) {
		t.Errorf("second claim of a done row being rebuilt: %v; want ErrClaimed", err)
	}
	if err := st.ReleaseLease(ctx, doc.ID, a.Owner); err != nil {
		t.Fatal(err)
	}
	if got := row("released"); got.LeaseOwner != "" || got.Status != store.StatusDone || got.Chunks != len(w.Chunks) {
		t.Errorf("released: owner %q status %s chunks %d", got.LeaseOwner, got.Status, got.Chunks)
	}

	// Many runs claiming one new id at once: exactly one wins.
	fresh := rhineV2().write().Document
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, refused := 0, 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.Claim(ctx, fresh, store.Lease{Owner: fmt.Sprintf("host/%d/run", i), TTL: ttl})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, store.ErrClaimed):
				refused++
			default:
				t.Errorf("concurrent Claim: %v", err)
			}
		}()
	}
	wg.Wait()
	if won != 1 || refused != 7 {
		t.Errorf("8 concurrent claims: %d won, %d refused; want 1 and 7", won, refused)
	}
}

// testClaimDocuments checks ClaimDocuments against Claim's rules in one
// batch: a new id is claimed, the same id again finds this run's own row,
// a done row with these settings and another run's live lease are refused
// and left alone, a document without an id fails alone, and a batch of
// nothing but refusals changes nothing.
func (s suite) testClaimDocuments(t *testing.T) {
	st, _ := s.fresh(t)
	bc, ok := st.(store.BatchClaimer)
	if !ok {
		t.Skip("store does not implement store.BatchClaimer")
	}
	ctx := ctxFor(t)
	const ttl = time.Minute
	a := store.Lease{Owner: "host-a/1/run-a", TTL: ttl}
	b := store.Lease{Owner: "host-b/2/run-b", TTL: ttl}

	done := rhineV1().write()
	done.Document.Fingerprint = "fp1"
	mustWrite(t, st, done)
	held := ports().write().Document
	held.Fingerprint = "fp1"
	if _, err := st.Claim(ctx, held, b); err != nil {
		t.Fatal(err)
	}
	heldRow, err := st.Document(ctx, held.ID)
	if err != nil {
		t.Fatal(err)
	}
	fresh := rhineV2().write().Document
	fresh.Fingerprint = "fp1"
	noID := store.Document{Path: "/nowhere.md", Fingerprint: "fp1"}

	claims, err := bc.ClaimDocuments(ctx, []store.Document{fresh, done.Document, noID, held, fresh}, a)
	if err != nil {
		t.Fatalf("ClaimDocuments: %v", err)
	}
	if len(claims) != 5 {
		t.Fatalf("ClaimDocuments returned %d claims for 5 documents", len(claims))
	}
	if c := claims[0]; c.Err != nil || c.Before != nil {
		t.Errorf("claim of a new id = %v, %v; want nil, nil", c.Before, c.Err)
	}
	if c := claims[1]; !errors.Is(c.Err, store.ErrUpToDate) || c.Before == nil || c.Before.Status != store.StatusDone {
		t.Errorf("claim of a done row with its settings = %v, %v; want the done row and ErrUpToDate", c.Before, c.Err)
	}
	if c := claims[2]; c.Err == nil || !strings.Contains(c.Err.Error(), noID.Path) {
		t.Errorf("claim of a document without an id: %v; want an error naming %s", c.Err, noID.Path)
	}
	var ce *store.ClaimedError
	if c := claims[3]; !errors.As(c.Err, &ce) || ce.Owner != b.Owner || c.Before == nil || c.Before.LeaseOwner != b.Owner {
		t.Errorf("claim of another run's document = %v, %v; want a ClaimedError naming %s", c.Before, c.Err, b.Owner)
	}
	if c := claims[4]; c.Err != nil || c.Before == nil || c.Before.Status != store.StatusProcessing || c.Before.LeaseOwner != a.Owner {
		t.Errorf("second claim of one id in a batch = %v, %v; want the first claim's row, processing for %s", c.Before, c.Err, a.Owner)
	}

	rows := map[string]*store.Document{}
	for _, id := range []string{fresh.ID, done.Document.ID, held.ID} {
		d, err := st.Document(ctx, id)
		if err != nil {
			t.Fatalf("Document(%s): %v", id, err)
		}
		rows[id] = d
	}
	if d := rows[fresh.ID]; d.Status != store.StatusProcessing || d.LeaseOwner != a.Owner || d.Chunks != 0 {
		t.Errorf("claimed new row: status %s owner %q chunks %d; want processing for %s, bare", d.Status, d.LeaseOwner, d.Chunks, a.Owner)
	}
	if d := rows[done.Document.ID]; d.Status != store.StatusDone || d.LeaseOwner != "" {
		t.Errorf("up-to-date row after the batch: status %s owner %q; want done, no lease", d.Status, d.LeaseOwner)
	}
	if d := rows[held.ID]; d.LeaseOwner != b.Owner || !d.LeaseUntil.Equal(heldRow.LeaseUntil) {
		t.Errorf("another run's row after the batch: owner %q until %s; want %s's lease unchanged", d.LeaseOwner, d.LeaseUntil, b.Owner)
	}

	// Refusals only: nothing to commit, and nothing changes.
	c := store.Lease{Owner: "host-c/3/run-c", TTL: ttl}
	claims, err = bc.ClaimDocuments(ctx, []store.Document{fresh, held}, c)
	if err != nil {
		t.Fatalf("ClaimDocuments of refusals: %v", err)
	}
	if len(claims) != 2 || !errors.Is(claims[0].Err, store.ErrClaimed) || !errors.Is(claims[1].Err, store.ErrClaimed) {
		t.Errorf("ClaimDocuments of two claimed rows = %+v; want two ErrClaimed", claims)
	}
	if d, err := st.Document(ctx, fresh.ID); err != nil || d.LeaseOwner != a.Owner {
		t.Errorf("refused batch changed the lease: %+v, %v", d, err)
	}
	if d, err := st.Document(ctx, held.ID); err != nil || d.LeaseOwner != b.Owner {
		t.Errorf("refused batch changed the lease: %+v, %v", d, err)
	}
	if claims, err := bc.ClaimDocuments(ctx, nil, a); err != nil || len(claims) != 0 {
		t.Errorf("ClaimDocuments(nothing) = %v, %v; want nothing", claims, err)
	}
}
