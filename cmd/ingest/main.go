// Command ingest turns files and folders into docgraph's knowledge graph.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	_ "docgraph/store/neo4j"
	_ "docgraph/store/sqlite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := newRootCmd(streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, TTY: isTerminal(os.Stderr)})
	if err := cmd.ExecuteContext(ctx); err != nil {
		os.Exit(exitCode(err))
	}
}
