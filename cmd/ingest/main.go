// Command ingest turns files and folders into docgraph's knowledge graph.
package main

import (
	"context"
	"os"

	"docgraph/cmd/internal/cli"
	_ "docgraph/store/neo4j"
	_ "docgraph/store/sqlite"
)

func main() {
	ctx, stop := cli.NotifyContext(context.Background())
	err := execute(ctx, streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		TTY: cli.IsTerminal(os.Stderr), Width: func() int { return cli.Width(os.Stderr) }}, os.Args[1:])
	stop()
	os.Exit(exitCode(err))
}
