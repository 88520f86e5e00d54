package sqlite

import (
	"testing"

	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/storetest"
)

func TestGraphScanner(t *testing.T) {
	storetest.RunGraphScanner(t, func(t *testing.T) store.Store { return openTemp(t, storetest.Options()) })
}

func TestPassageGraph(t *testing.T) {
	storetest.RunPassageGraph(t, func(t *testing.T) store.Store { return openTemp(t, storetest.Options()) })
}
