// Command query answers questions over docgraph's knowledge graph.
package main

import (
	"context"
	"os"

	"docgraph/cmd/internal/cli"
	_ "docgraph/store/neo4j"
	_ "docgraph/store/sqlite"
)

func main() {
	stopProfiles := cli.StartProfiles(os.Stderr)
	ctx, stop := cli.NotifyContext(context.Background())
	err := execute(ctx, streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.Args[1:])
	stop()
	stopProfiles()
	os.Exit(cli.ExitCode(err))
}
