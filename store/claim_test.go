package store

import (
	"testing"
	"time"
)

func TestLeaseCheck(t *testing.T) {
	for _, c := range []struct {
		lease Lease
		ok    bool
	}{
		{Lease{Owner: "host/1/run", TTL: time.Minute}, true},
		{Lease{Owner: "", TTL: time.Minute}, false},
		{Lease{Owner: "host/1/run"}, false},
		{Lease{Owner: "host/1/run", TTL: -time.Second}, false},
	} {
		if err := c.lease.Check(); (err == nil) != c.ok {
			t.Errorf("%+v.Check() = %v, want ok %v", c.lease, err, c.ok)
		}
	}
}

func TestClaimsOp(t *testing.T) {
	for _, c := range []struct {
		docs []Document
		want string
	}{
		{[]Document{{ID: "doc-a"}}, "claim doc-a"},
		{[]Document{{ID: "doc-a"}, {ID: "doc-b"}}, "claim 2 documents"},
	} {
		if got := ClaimsOp(c.docs); got != c.want {
			t.Errorf("ClaimsOp(%d documents) = %q, want %q", len(c.docs), got, c.want)
		}
	}
}
