// Command query answers questions over docgraph's knowledge graph.
package main

import (
	"context"
	"os"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/internal/termtext"
	_ "github.com/docgraph/docgraph/store/neo4j"
	_ "github.com/docgraph/docgraph/store/sqlite"
)

func main() {
	stopProfiles := cli.StartProfiles(os.Stderr)
	ctx, stop := cli.NotifyContext(context.Background())
	err := execute(ctx, streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, OutTTY: termtext.IsTerminal(os.Stdout)}, os.Args[1:])
	stop()
	stopProfiles()
	os.Exit(cli.ExitCode(err))
}
