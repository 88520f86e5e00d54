package storetest

import (
	"errors"
	"fmt"
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
