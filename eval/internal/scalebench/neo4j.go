package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// wipeNeo4j empties the Neo4j database a neo4j:// or bolt:// store URL
// names of docgraph's nodes, so each scale is ingested into an empty graph;
// the indexes stay and are filled again by the ingest. Credentials come
// from NEO4J_USER and NEO4J_PASSWORD, as they do for the CLI.
func wipeNeo4j(ctx context.Context, storeURL string) error {
	u, err := url.Parse(storeURL)
	if err != nil {
		return err
	}
	database := strings.TrimPrefix(u.Path, "/")
	target := u.Scheme + "://" + u.Host
	driver, err := n4j.NewDriverWithContext(target, n4j.BasicAuth(os.Getenv("NEO4J_USER"), os.Getenv("NEO4J_PASSWORD"), ""))
	if err != nil {
		return err
	}
	defer driver.Close(ctx)
	sess := driver.NewSession(ctx, n4j.SessionConfig{DatabaseName: database})
	defer sess.Close(ctx)
	// An implicit transaction, as CALL ... IN TRANSACTIONS needs.
	res, err := sess.Run(ctx, `MATCH (n)
WHERE n:Document OR n:Chunk OR n:Entity OR n:RelationMention OR n:DocgraphMeta
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS`, nil)
	if err == nil {
		_, err = res.Consume(ctx)
	}
	if err != nil {
		return fmt.Errorf("wipe %s: %w", target, err)
	}
	return nil
}
