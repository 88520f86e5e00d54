package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docgraph/docgraph/store"
)

// Two runs on one store (two processes, two machines on one Neo4j) must not
// build the same document twice. Before extracting a document a run claims
// its row with a lease (store.Writer.Claim) naming the run; another run that
// finds the lease live reports the file Claimed and moves on. The run renews
// its leases while it works (a heartbeat), and its write or settled failure
// ends them. A run that dies leaves leases behind: they expire after the
// lease duration, and one of a process on this machine that is gone (kill -9,
// a crash) is taken over at once, so a re-run repairs everything.

// DefaultLeaseTTL is Pipeline.LeaseTTL when unset: how long a claim outlives
// a run that stopped renewing it (a crash on another machine).
const DefaultLeaseTTL = 2 * time.Minute

// runOwner names one run: host/pid/process start/machine/random. The
// process start and machine (boot and pid namespace) let another process
// on the same machine tell that the run's process is gone, even when its
// pid was reused; the random part tells two runs in one process apart.
func runOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	host = strings.ReplaceAll(host, "/", "_")
	var b [6]byte
	_, _ = rand.Read(b[:])
	pid := os.Getpid()
	return fmt.Sprintf("%s/%d/%s/%s/%s", host, pid, processStart(pid), machineID(), hex.EncodeToString(b[:]))
}

// ownerMu guards the first use of a Pipeline's Owner. (A sync.Once field
// would make the Pipeline impossible to copy, which watch does.)
var ownerMu sync.Mutex

// owner is the run's lease owner, made on first use.
func (p *Pipeline) owner() string {
	ownerMu.Lock()
	defer ownerMu.Unlock()
	if p.Owner == "" {
		p.Owner = runOwner()
	}
	return p.Owner
}

func (p *Pipeline) leaseTTL() time.Duration {
	if p.LeaseTTL > 0 {
		return p.LeaseTTL
	}
	return DefaultLeaseTTL
}

// heldElsewhere reports whether another live run holds d's lease.
func (p *Pipeline) heldElsewhere(d *store.Document) bool {
	return d.Leased(p.owner(), time.Now()) && !ownerGone(d.LeaseOwner)
}

// ownerGone reports whether owner names a process on this machine that is
// no longer running. An owner on another machine, or one this platform
// cannot check, is not gone: its lease is waited out.
func ownerGone(owner string) bool {
	f := strings.Split(owner, "/")
	if len(f) != 5 || f[3] == "" || f[2] == "" {
		return false
	}
	host, _ := os.Hostname()
	if f[0] != strings.ReplaceAll(host, "/", "_") || f[3] != machineID() {
		return false
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return false
	}
	start := processStart(pid)
	return start == "" || start != f[2]
}

// ownerName is how a result names the run holding a document.
func ownerName(owner string) string {
	f := strings.Split(owner, "/")
	if len(f) != 5 {
		return owner
	}
	return fmt.Sprintf("pid %s on %s", f[1], f[0])
}

// heartbeat renews the run's leases every third of their duration until the
// returned stop is called. A renewal that fails is tried at the next beat;
// leases only lapse if the store stays unwritable for a whole duration.
func (p *Pipeline) heartbeat(ctx context.Context) (stop func()) {
	ttl := p.leaseTTL()
	owner := p.owner()
	return every(ctx, ttl/3, func() bool {
		_, _ = p.Store.RenewLeases(ctx, owner, ttl)
		return true
	})
}

// every calls fn every d in a goroutine of its own until fn returns false,
// ctx ends or the returned stop is called; stop waits for the goroutine.
func every(ctx context.Context, d time.Duration, fn func() (goOn bool)) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if !fn() {
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
