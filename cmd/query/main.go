// Command query answers questions over docgraph's knowledge graph.
package main

import (
	"context"
	"os"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	_ "github.com/docgraph/docgraph/store/neo4j"
	_ "github.com/docgraph/docgraph/store/sqlite"
)

func main() {
	stopProfiles := cli.StartProfiles(os.Stderr)
	ctx, stop := cli.NotifyContext(context.Background())
	err := execute(ctx, streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.Args[1:])
	stop()
	stopProfiles()
	os.Exit(cli.ExitCode(err))
}
