// Command ingest turns files and folders into docgraph's knowledge graph.
package main

import (
	"context"
	"os"
	"runtime/debug"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/internal/termtext"
	_ "github.com/docgraph/docgraph/store/neo4j"
	_ "github.com/docgraph/docgraph/store/sqlite"
)

// memoryLimit is ingest's soft memory limit unless GOMEMLIMIT sets one:
// near it the collector runs more often rather than letting garbage grow
// to the size of the live heap, which for one large document (a 64 MB
// text holds a few hundred MB of mention rows until its write commits)
// would double the process. It is soft: a bigger live heap only costs
// collector time.
const memoryLimit = 768 << 20

func main() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(memoryLimit)
	}
	stopProfiles := cli.StartProfiles(os.Stderr)
	ctx, stop := cli.NotifyContext(context.Background())
	err := execute(ctx, streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, OutTTY: termtext.IsTerminal(os.Stdout),
		TTY: termtext.IsTerminal(os.Stderr), Width: func() int { return termtext.Width(os.Stderr) }}, os.Args[1:])
	stop()
	stopProfiles()
	os.Exit(exitCode(err))
}
