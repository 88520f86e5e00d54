package neo4j

import "fmt"

// Every Cypher statement the store runs is a constant in this file: data
// travels only as parameters, and labels, relationship types, property keys
// and index names are fixed text. That includes the vector index DDL: its
// OPTIONS map is evaluated with the statement's parameters, so the embedder
// dimension is $dimension (validated in Go first, because a bad value would
// only surface as a server error).
//
// Labels and relationship types (schemaLabels and schemaRelTypes list them):
//
//	(:Document)                      one per document id; path, title, hash, status, ...
//	(:Chunk)-[:PART_OF]->(:Document) token-bounded spans with embedding
//	(:Chunk)-[:NEXT]->(:Chunk)       reading order inside a document
//	(:Entity)-[:MENTIONED_IN]->(:Chunk)  the edge holds that chunk's fragment
//	(:Entity)-[:RELATES]->(:Entity)  merged relation with embedding
//	(:RelationMention)               one chunk's fragment of a relation
//	(:DocgraphMeta)                  the embedder the vectors were made with

// statement is Cypher text. Helpers that run Cypher take a statement, so only
// constants (untyped string constants convert implicitly) or an explicit,
// reviewed conversion can reach the server; the tests reject conversions
// outside this file.
type statement string

var schemaLabels = []string{"Document", "Chunk", "Entity", "RelationMention", "DocgraphMeta"}

var schemaRelTypes = []string{"PART_OF", "NEXT", "MENTIONED_IN", "RELATES"}

// Index and constraint names. Vector and full-text indexes are addressed by
// name in queries, passed as parameters.
const (
	idxChunkVector    = "docgraph_chunk_embedding"
	idxEntityVector   = "docgraph_entity_embedding"
	idxRelatesVector  = "docgraph_relates_embedding"
	idxChunkText      = "docgraph_chunk_text"
	idxEntityText     = "docgraph_entity_text"
	metaEmbedderKey   = "embedder"
	maxVectorDims     = 4096 // Neo4j 5 vector index limit
	relVectorMinMajor = 5
	relVectorMinMinor = 18 // relationship vector indexes arrived in 5.18
)

// schemaStatements are run at open, in order; all are idempotent.
var schemaStatements = []statement{
	`CREATE CONSTRAINT docgraph_document_id IF NOT EXISTS FOR (d:Document) REQUIRE d.id IS UNIQUE`,
	`CREATE CONSTRAINT docgraph_chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE`,
	`CREATE CONSTRAINT docgraph_entity_id IF NOT EXISTS FOR (e:Entity) REQUIRE e.id IS UNIQUE`,
	`CREATE CONSTRAINT docgraph_meta_key IF NOT EXISTS FOR (m:DocgraphMeta) REQUIRE m.key IS UNIQUE`,
	`CREATE INDEX docgraph_document_path IF NOT EXISTS FOR (d:Document) ON (d.path)`,
	`CREATE INDEX docgraph_document_status IF NOT EXISTS FOR (d:Document) ON (d.status)`,
	`CREATE INDEX docgraph_document_lease IF NOT EXISTS FOR (d:Document) ON (d.lease_owner)`,
	`CREATE INDEX docgraph_chunk_doc IF NOT EXISTS FOR (c:Chunk) ON (c.doc_id)`,
	`CREATE INDEX docgraph_relmention_relation IF NOT EXISTS FOR (m:RelationMention) ON (m.relation_id)`,
	`CREATE INDEX docgraph_relmention_doc IF NOT EXISTS FOR (m:RelationMention) ON (m.doc_id)`,
	`CREATE INDEX docgraph_relmention_source IF NOT EXISTS FOR (m:RelationMention) ON (m.source_id)`,
	`CREATE INDEX docgraph_relmention_target IF NOT EXISTS FOR (m:RelationMention) ON (m.target_id)`,
	`CREATE INDEX docgraph_relates_id IF NOT EXISTS FOR ()-[r:RELATES]-() ON (r.id)`,
}

// Full-text index DDL. The cjk analyzer (Lucene's CJKAnalyzer) cuts
// Chinese, Japanese and Korean into overlapping bigrams, as the SQLite store
// does; Latin text it splits into words, lower-cases and rids of English
// stop words but does not stem. Neo4j keeps one full-text index per label
// and property list, so one analyzer serves every script; measured with the
// SQLite store's BM25 on 2wiki, stemming moves R@2/R@5 by +0.5/-0.5 only.
// An index of an earlier docgraph (analyzer english) is dropped and
// rebuilt by the DROP statements (textAnalyzer is what they are checked against).
const (
	textAnalyzer       = "cjk"
	stmtChunkTextIndex = "CREATE FULLTEXT INDEX docgraph_chunk_text IF NOT EXISTS FOR (c:Chunk) ON EACH [c.text] " +
		"OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk'}}"
	stmtEntityTextIndex = "CREATE FULLTEXT INDEX docgraph_entity_text IF NOT EXISTS FOR (e:Entity) ON EACH [e.name, e.description] " +
		"OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk'}}"
	stmtDropChunkTextIndex  = `DROP INDEX docgraph_chunk_text IF EXISTS`
	stmtDropEntityTextIndex = `DROP INDEX docgraph_entity_text IF EXISTS`
)

// Vector index DDL; $dimension is the embedder's dimension (an INTEGER).
// From 5.23 the HNSW graph's shape and its quantization can be set, and
// docgraph sets them ($m, $ef_construction, $quantization: the hnsw
// constants below); older servers get their fixed defaults.
const (
	stmtChunkVectorIndex = `CREATE VECTOR INDEX docgraph_chunk_embedding IF NOT EXISTS FOR (c:Chunk) ON (c.embedding) ` +
		"OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}"
	stmtEntityVectorIndex = `CREATE VECTOR INDEX docgraph_entity_embedding IF NOT EXISTS FOR (e:Entity) ON (e.embedding) ` +
		"OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}"
	stmtRelatesVectorIndex = `CREATE VECTOR INDEX docgraph_relates_embedding IF NOT EXISTS FOR ()-[r:RELATES]-() ON (r.embedding) ` +
		"OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}"
	stmtChunkVectorIndexHNSW = `CREATE VECTOR INDEX docgraph_chunk_embedding IF NOT EXISTS FOR (c:Chunk) ON (c.embedding) ` +
		"OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine', " +
		"`vector.hnsw.m`: $m, `vector.hnsw.ef_construction`: $ef_construction, `vector.quantization.enabled`: $quantization}}"
	stmtEntityVectorIndexHNSW = `CREATE VECTOR INDEX docgraph_entity_embedding IF NOT EXISTS FOR (e:Entity) ON (e.embedding) ` +
		"OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine', " +
		"`vector.hnsw.m`: $m, `vector.hnsw.ef_construction`: $ef_construction, `vector.quantization.enabled`: $quantization}}"
	stmtRelatesVectorIndexHNSW = `CREATE VECTOR INDEX docgraph_relates_embedding IF NOT EXISTS FOR ()-[r:RELATES]-() ON (r.embedding) ` +
		"OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine', " +
		"`vector.hnsw.m`: $m, `vector.hnsw.ef_construction`: $ef_construction, `vector.quantization.enabled`: $quantization}}"
)

// The HNSW configuration of the vector indexes docgraph creates on 5.23 and
// later (docs/design/2026-11-23-neo4j-writes.md has the measurements): index
// maintenance at commit is most of the write time, and the server's
// defaults (m 16, ef_construction 100, quantization on) build a graph that
// ranks worse than this one, because quantized hashing-embedder vectors
// tie. Indexes an earlier docgraph made with the defaults are kept as they
// are: they answer the same queries.
const (
	hnswM              = 16
	hnswEfConstruction = 50
	hnswQuantization   = false
	hnswMinMajor       = 5
	hnswMinMinor       = 23 // vector.hnsw.* and vector.quantization.enabled arrived in 5.23
)

const (
	stmtServerInfo = `CALL dbms.components() YIELD name, versions, edition
RETURN name, versions[0] AS version, edition`

	// stmtSearchIndexes lists vector and full-text indexes, whatever their
	// names, so one made by hand on a docgraph property is found too.
	stmtSearchIndexes = `SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, options
WHERE type IN ['VECTOR', 'FULLTEXT']
RETURN name, type, entityType, labelsOrTypes, properties, options`

	// stmtAwaitIndex waits for one index: db.awaitIndexes would wait for
	// (and fail on) every index in the database, docgraph's or not.
	stmtAwaitIndex = `CALL db.awaitIndex($name, $seconds)`

	stmtReadMeta = `MATCH (m:DocgraphMeta {key: $key})
RETURN m.name AS name, m.dimension AS dimension`

	stmtWriteMeta = `MERGE (m:DocgraphMeta {key: $key})
ON CREATE SET m.name = $name, m.dimension = $dimension
RETURN m.name AS name, m.dimension AS dimension`
)

// Lookups by a property that is not unique carry a USING INDEX hint: the
// planner picks between an index seek and a scan from statistics, and a
// plan made while the database was empty (a fresh store, a test) stays
// cached while the data grows, turning every lookup into a scan (PROFILE
// showed a seek of one RELATES edge by id planned as a scan of the whole
// relationship index, 10 million rows for 1,000 lookups). A RELATES edge is
// found by its id alone, with anonymous endpoints: with bound endpoint
// nodes the planner still preferred scanning the index to an expand.
//
// Writes. $docs is a list of document ids; $rows a batch of maps, $ids a
// batch of ids. Every batch that locks nodes comes sorted by the id it
// locks (see Store.writeDocuments), and whatever a rewrite keeps (the
// Document node, Chunk nodes of the same id, entities, RELATES edges) is
// updated in place, never deleted and created again.
const (
	// stmtOldState lists what the stored versions of $docs touch: the
	// entities their chunks mention (kind 1), their relations with
	// endpoints (kind 2), and any chunk of $chunks that belongs to
	// another document (kind 3, source_id the owner).
	stmtOldState = `UNWIND $docs AS doc
MATCH (c:Chunk {doc_id: doc})<-[:MENTIONED_IN]-(e:Entity)
USING INDEX c:Chunk(doc_id)
RETURN DISTINCT 1 AS kind, e.id AS id, null AS source_id, null AS target_id
UNION
UNWIND $docs AS doc
MATCH (m:RelationMention {doc_id: doc})
USING INDEX m:RelationMention(doc_id)
RETURN DISTINCT 2 AS kind, m.relation_id AS id, m.source_id AS source_id, m.target_id AS target_id
UNION
UNWIND $chunks AS id
MATCH (c:Chunk {id: id})
WHERE NOT c.doc_id IN $docs
RETURN 3 AS kind, c.id AS id, c.doc_id AS source_id, null AS target_id`

	// stmtLockEntities creates the entities a transaction will touch (as
	// placeholders, mentions = 0) and write-locks the existing ones:
	// setting a property to its own value takes the node's lock and changes
	// nothing. Every writer takes these locks first and in id order, so two
	// writers touching the same entities queue instead of deadlocking.
	stmtLockEntities = `UNWIND $ids AS id
MERGE (e:Entity {id: id})
ON CREATE SET e.mentions = 0
ON MATCH SET e.mentions = e.mentions`

	// stmtRemoveDocuments removes the stored versions of $docs: their
	// relation mentions, their MENTIONED_IN edges, their chunks except
	// those in $keep (chunks a rewrite keeps, updated in place), and the
	// documents in $gone (the others are rewritten in place). It reports
	// how many of $docs existed.
	stmtRemoveDocuments = `OPTIONAL MATCH (d:Document)
WHERE d.id IN $docs
WITH count(d) AS found
CALL {
  MATCH (m:RelationMention)
  USING INDEX m:RelationMention(doc_id)
  WHERE m.doc_id IN $docs
  DELETE m
}
CALL {
  MATCH (c:Chunk)<-[m:MENTIONED_IN]-(:Entity)
  USING INDEX c:Chunk(doc_id)
  WHERE c.doc_id IN $docs
  DELETE m
}
CALL {
  MATCH (c:Chunk)
  USING INDEX c:Chunk(doc_id)
  WHERE c.doc_id IN $docs AND NOT c.id IN $keep
  DETACH DELETE c
}
CALL {
  MATCH (d:Document)
  WHERE d.id IN $gone
  DETACH DELETE d
}
RETURN found`

	stmtWriteDocuments = `UNWIND $rows AS r
MERGE (d:Document {id: r.id})
SET d += r.props`

	// stmtSetStatus leaves an existing document's other properties alone
	// and settles it: any lease goes.
	stmtSetStatus = `MERGE (d:Document {id: $id})
ON CREATE SET d += $props, d.chunks = 0
SET d.status = $status, d.error = $error, d.updated_at = $updated_at,
    d.lease_owner = null, d.lease_until = null`

	// stmtClaim is Claim in one statement. MERGE on the unique id makes
	// concurrent claims of a new id queue; ON MATCH write-locks an existing
	// node before its lease is read, so two runs cannot both see it free.
	// Expiry is by the server's clock, the one clock every claimer shares.
	// It returns what it decided (0 claimed, 1 up to date, 2 held by
	// another run) and the node as it was (null when it created it).
	stmtClaim = `MERGE (d:Document {id: $id})
ON CREATE SET d.claim_new = true
ON MATCH SET d.claim_lock = true
WITH d, d.claim_new IS NOT NULL AS created, datetime() AS now
WITH d, created, now, CASE WHEN created THEN null ELSE d {.*} END AS before
WITH d, created, now, before,
  CASE
    WHEN NOT created AND d.status = $done AND d.fingerprint = $fingerprint THEN 1
    WHEN NOT created AND d.lease_owner IS NOT NULL AND NOT d.lease_owner IN [$owner, $takeover]
      AND d.lease_until > now THEN 2
    ELSE 0
  END AS outcome
FOREACH (_ IN CASE WHEN created THEN [1] ELSE [] END |
  SET d += $props, d.chunks = 0, d.status = $processing, d.error = $no_error)
FOREACH (_ IN CASE WHEN outcome = 0 AND NOT created AND d.status <> $done THEN [1] ELSE [] END |
  SET d.status = $processing, d.error = $no_error)
FOREACH (_ IN CASE WHEN outcome = 0 THEN [1] ELSE [] END |
  SET d.lease_owner = $owner, d.lease_until = now + duration({milliseconds: $ttl_ms}), d.updated_at = $updated_at)
REMOVE d.claim_new, d.claim_lock
RETURN outcome, before`

	stmtRenewLeases = `MATCH (d:Document)
WHERE d.lease_owner = $owner
SET d.lease_until = datetime() + duration({milliseconds: $ttl_ms})
RETURN count(d) AS n`

	stmtReleaseLease = `MATCH (d:Document {id: $id})
WHERE d.lease_owner = $owner
REMOVE d.lease_owner, d.lease_until`

	stmtRenameDocument = `MATCH (d:Document {id: $id})
SET d.path = $path, d.updated_at = $updated_at
RETURN count(d) AS n`

	stmtSetFileKey = `MATCH (d:Document {id: $id})
SET d.file_key = $key
RETURN count(d) AS n`

	// stmtWriteChunks writes each chunk in place, links it to its document
	// and to the chunk before it (rows come in reading order), and drops a
	// NEXT edge from any other chunk. A chunk id owned by another document
	// is left alone (stmtOldState reports it before anything is written).
	// The embedding goes through the node vector procedure (5.13+; see
	// stmtCreateRelations).
	stmtWriteChunks = "UNWIND $rows AS r\n" +
		"MATCH (d:Document {id: r.doc})\n" +
		"MERGE (c:Chunk {id: r.id})\n" +
		"ON CREATE SET c.doc_id = r.doc\n" +
		"WITH d, c, r\n" +
		"WHERE c.doc_id = r.doc\n" +
		"SET c.`index` = r.idx, c.text = r.text, c.tokens = r.tokens,\n" +
		"    c.start = r.start_off, c.`end` = r.end_off\n" +
		"FOREACH (_ IN CASE WHEN r.embedding IS NULL THEN [1] ELSE [] END | REMOVE c.embedding)\n" +
		"WITH d, c, r\n" +
		"CALL {\n" +
		"  WITH c, r\n" +
		"  WITH c, r WHERE r.embedding IS NOT NULL\n" +
		"  CALL db.create.setNodeVectorProperty(c, 'embedding', r.embedding)\n" +
		"}\n" +
		"MERGE (c)-[:PART_OF]->(d)\n" +
		"WITH c, r\n" +
		"CALL {\n" +
		"  WITH c, r\n" +
		"  MATCH (p:Chunk)-[x:NEXT]->(c)\n" +
		"  WHERE r.prev IS NULL OR p.id <> r.prev\n" +
		"  DELETE x\n" +
		"}\n" +
		"WITH c, r\n" +
		"WHERE r.prev IS NOT NULL\n" +
		"MATCH (p:Chunk {id: r.prev})\n" +
		"MERGE (p)-[:NEXT]->(c)"

	// Mentions are created, not merged: like the SQLite store, a repeated
	// (entity, chunk) pair stays a second fragment; seq keeps input order.
	// The entity exists: stmtLockEntities made it.
	stmtWriteEntityMentions = `UNWIND $rows AS r
MATCH (c:Chunk {id: r.chunk_id})
MATCH (e:Entity {id: r.entity_id})
CREATE (e)-[:MENTIONED_IN {name: r.name, type: r.type, description: r.description, doc_id: r.doc, seq: r.seq}]->(c)`

	stmtWriteRelationMentions = `UNWIND $rows AS r
CREATE (m:RelationMention)
SET m.relation_id = r.relation_id, m.chunk_id = r.chunk_id, m.doc_id = r.doc, m.seq = r.seq,
    m.source_id = r.source_id, m.target_id = r.target_id, m.type = r.type,
    m.keywords = r.keywords, m.description = r.description, m.weight = r.weight`

	// stmtEntityState returns each entity's merged properties and every
	// fragment its mentions hold, one row per entity: what reconcile merges
	// and compares with.
	stmtEntityState = `UNWIND $ids AS id
MATCH (e:Entity {id: id})
CALL {
  WITH e
  OPTIONAL MATCH (e)-[m:MENTIONED_IN]->(c:Chunk)
  RETURN collect([c.id, m.seq, m.name, m.type, m.description]) AS fragments
}
RETURN e.id AS id, e.name AS name, e.type AS type, e.description AS description,
       e.mentions AS mentions, e.vec_digest AS vec_digest, fragments`

	// stmtUpdateEntities sets what changed: r.props holds only those keys,
	// and r.vec the embedding only when it changed (see
	// stmtCreateRelations), so the vector index is left alone otherwise.
	stmtUpdateEntities = `UNWIND $rows AS r
MATCH (e:Entity {id: r.id})
SET e += r.props
WITH e, r
WHERE r.vec IS NOT NULL
CALL db.create.setNodeVectorProperty(e, 'embedding', r.vec)`

	// An entity the merge did not keep is deleted with its edges when no
	// chunk mentions it; one the Merger skipped despite mentions stays as a
	// placeholder holding them (mentions = 0, no merged properties).
	stmtDeleteOrphanEntities = `UNWIND $ids AS id
MATCH (e:Entity {id: id})
WHERE NOT EXISTS { (e)-[:MENTIONED_IN]->(:Chunk) }
DETACH DELETE e`

	stmtHideEntities = `UNWIND $ids AS id
MATCH (e:Entity {id: id})
SET e.mentions = 0
REMOVE e.name, e.type, e.description, e.embedding, e.vec_digest`

	// stmtRelationsOfEntities finds relations with a mention naming one of
	// the entities as an endpoint: they appear or vanish with it.
	stmtRelationsOfEntities = `UNWIND $ids AS id
CALL {
  WITH id
  MATCH (m:RelationMention {source_id: id})
  USING INDEX m:RelationMention(source_id)
  RETURN m.relation_id AS rid, m.source_id AS sid, m.target_id AS tid
  UNION
  WITH id
  MATCH (m:RelationMention {target_id: id})
  USING INDEX m:RelationMention(target_id)
  RETURN m.relation_id AS rid, m.source_id AS sid, m.target_id AS tid
}
RETURN DISTINCT rid AS id, sid AS source_id, tid AS target_id`

	// stmtRelationState returns, per relation, whether both endpoints are
	// live entities, every remaining fragment, and the stored edge if any
	// (found from its endpoints, which is an index seek whatever the
	// planner knows about RELATES).
	stmtRelationState = `UNWIND $rows AS r
OPTIONAL MATCH (s:Entity {id: r.source_id})
OPTIONAL MATCH (t:Entity {id: r.target_id})
CALL {
  WITH r
  OPTIONAL MATCH (m:RelationMention {relation_id: r.id})
  USING INDEX m:RelationMention(relation_id)
  RETURN collect([m.chunk_id, m.seq, m.type, m.keywords, m.description, m.weight]) AS fragments
}
CALL {
  WITH r
  OPTIONAL MATCH ()-[x:RELATES]->()
  USING INDEX x:RELATES(id)
  WHERE x.id = r.id
  RETURN x
}
RETURN r.id AS id, coalesce(s.mentions, 0) > 0 AND coalesce(t.mentions, 0) > 0 AS live, fragments,
       x IS NOT NULL AS stored, x.type AS type, x.keywords AS keywords, x.description AS description,
       x.weight AS weight, x.vec_digest AS vec_digest`

	// Embeddings are stored through the vector procedures, as 32-bit
	// floats (a SET stores a list of 64-bit ones): r.vec is a changed
	// embedding, null when it is unchanged or gone (then r.props removes
	// it). Servers before 5.18 have no procedure for relationships and get
	// the Props variants, which take the embedding in r.props.
	//
	// Two MATCH clauses: each is an index seek, and one comma pattern would
	// draw a cartesian-product notification for what is a single row.
	relatesCreate = `UNWIND $rows AS r
MATCH (s:Entity {id: r.source_id})
MATCH (t:Entity {id: r.target_id})
CREATE (s)-[x:RELATES {id: r.id}]->(t)
SET x += r.props
`
	stmtCreateRelations = relatesCreate + `WITH x, r
CALL {
  WITH x, r
  WITH x, r WHERE r.vec IS NOT NULL
  CALL db.create.setRelationshipVectorProperty(x, 'embedding', r.vec)
}
RETURN count(x) AS n`
	stmtCreateRelationsProps = relatesCreate + `RETURN count(x) AS n`

	relatesUpdate = `UNWIND $rows AS r
MATCH ()-[x:RELATES]->()
USING INDEX x:RELATES(id)
WHERE x.id = r.id
SET x += r.props`
	stmtUpdateRelations = relatesUpdate + `
WITH x, r
WHERE r.vec IS NOT NULL
CALL db.create.setRelationshipVectorProperty(x, 'embedding', r.vec)`
	stmtUpdateRelationsProps = relatesUpdate

	stmtDeleteRelations = `UNWIND $rows AS r
MATCH ()-[x:RELATES]->()
USING INDEX x:RELATES(id)
WHERE x.id = r.id
DELETE x`
)

// Reads.
const (
	stmtDocument = `MATCH (d:Document {id: $id})
RETURN d {.*} AS d`

	stmtDocumentByPath = `MATCH (d:Document {path: $path})
USING INDEX d:Document(path)
RETURN d {.*} AS d
ORDER BY CASE d.status WHEN $done THEN 0 ELSE 1 END, d.updated_at DESC, d.id
LIMIT 1`

	stmtDocuments = `MATCH (d:Document)
RETURN d {.*} AS d
ORDER BY d.path, d.id`

	stmtStatusCounts = `MATCH (d:Document)
RETURN d.status AS status, count(*) AS n`

	stmtCounts = `CALL { MATCH (c:Chunk) RETURN count(c) AS chunks }
CALL { MATCH (e:Entity) WHERE e.mentions > 0 RETURN count(e) AS entities }
CALL { MATCH ()-[r:RELATES]->() RETURN count(r) AS relations }
CALL { MATCH (e:Entity)-[:MENTIONED_IN]->(c:Chunk) WITH DISTINCT e, c RETURN count(*) AS mentions }
RETURN chunks, entities, relations, mentions`

	stmtChunks = "UNWIND $ids AS id\n" +
		"MATCH (c:Chunk {id: id})\n" +
		"RETURN c {.id, .doc_id, .`index`, .text, .tokens, .start, .`end`, .embedding} AS c"

	// stmtDocumentChunks also returns the chunk count the document records,
	// so a read that raced a commit can tell and look again.
	stmtDocumentChunks = "OPTIONAL MATCH (d:Document {id: $doc})\n" +
		"CALL {\n" +
		"  MATCH (c:Chunk {doc_id: $doc})\n" +
		"  USING INDEX c:Chunk(doc_id)\n" +
		"  WITH c ORDER BY c.`index`\n" +
		"  RETURN collect(c {.id, .doc_id, .`index`, .text, .tokens, .start, .`end`, .embedding}) AS chunks\n" +
		"}\n" +
		"RETURN coalesce(d.chunks, 0) AS expected, chunks"

	// stmtHitsSettled tells whether hits read a moment ago still stand
	// whole: how many of the hit chunks exist, and per document of the
	// hits its status, the chunk count it records and the chunks it has.
	stmtHitsSettled = `CALL {
  UNWIND $chunks AS id
  MATCH (c:Chunk {id: id})
  RETURN count(c) AS present
}
UNWIND $docs AS doc
OPTIONAL MATCH (d:Document {id: doc})
RETURN present, d.status AS status, coalesce(d.chunks, -1) AS expected, COUNT { (d)<-[:PART_OF]-(:Chunk) } AS live`

	stmtEntities = `UNWIND $ids AS id
MATCH (e:Entity {id: id})
WHERE e.mentions > 0
RETURN e {.id, .name, .type, .description, .embedding, .mentions} AS e`

	stmtRelations = `UNWIND $ids AS id
MATCH ()-[r:RELATES]->()
USING INDEX r:RELATES(id)
WHERE r.id = id
RETURN r {.id, .type, .keywords, .description, .weight, .embedding,
          source_id: startNode(r).id, target_id: endNode(r).id} AS r`

	// Vector searches ask the index for $n candidates (more than the k
	// wanted) and score them again with the exact cosine, computed as the
	// scan variants below do: the index's own score is (1+cos)/2 of
	// quantized vectors (quantization is on by default from 5.23), so it
	// neither matches the other stores' cosine nor ranks near-ties exactly.
	// $qnorm is |$vec|. Chunk hits carry their document's status; the
	// caller filters them and widens $n when too many fall away.
	stmtSearchChunksVector = "CALL db.index.vector.queryNodes($index, $n, $vec) YIELD node AS c\n" +
		"WHERE size(c.embedding) = size($vec)\n" +
		"WITH c, reduce(a = [0.0, 0.0], i IN range(0, size($vec) - 1) |\n" +
		"       [a[0] + c.embedding[i] * $vec[i], a[1] + c.embedding[i] * c.embedding[i]]) AS dn\n" +
		"WHERE dn[1] > 0\n" +
		"OPTIONAL MATCH (c)-[:PART_OF]->(d:Document)\n" +
		"RETURN c {.id, .doc_id, .`index`, .text, .tokens, .start, .`end`, .embedding} AS c,\n" +
		"       d.status AS status, d.path AS path, d.title AS title, dn[0] / sqrt(dn[1]) / $qnorm AS score"

	// The scan variants compute the plain cosine in Cypher, so they work on
	// every 5.x server and with no index at all. $qnorm is |$vec|.
	stmtSearchChunksScan = "MATCH (c:Chunk)-[:PART_OF]->(d:Document {status: $done})\n" +
		"WHERE c.embedding IS NOT NULL AND size(c.embedding) = size($vec)\n" +
		"WITH c, d, reduce(a = [0.0, 0.0], i IN range(0, size($vec) - 1) |\n" +
		"       [a[0] + c.embedding[i] * $vec[i], a[1] + c.embedding[i] * c.embedding[i]]) AS dn\n" +
		"WHERE dn[1] > 0\n" +
		"WITH c, d, dn[0] / sqrt(dn[1]) / $qnorm AS score\n" +
		"ORDER BY score DESC, c.id\n" +
		"LIMIT $k\n" +
		"RETURN c {.id, .doc_id, .`index`, .text, .tokens, .start, .`end`, .embedding} AS c,\n" +
		"       d.status AS status, d.path AS path, d.title AS title, score"

	stmtSearchChunksText = "CALL db.index.fulltext.queryNodes($index, $query) YIELD node AS c, score\n" +
		"MATCH (c)-[:PART_OF]->(d:Document {status: $done})\n" +
		"RETURN c {.id, .doc_id, .`index`, .text, .tokens, .start, .`end`, .embedding} AS c,\n" +
		"       d.status AS status, d.path AS path, d.title AS title, score\n" +
		"ORDER BY score DESC, c.id\n" +
		"LIMIT $k"

	stmtSearchEntitiesVector = `CALL db.index.vector.queryNodes($index, $n, $vec) YIELD node AS e
WHERE e.mentions > 0 AND size(e.embedding) = size($vec)
WITH e, reduce(a = [0.0, 0.0], i IN range(0, size($vec) - 1) |
       [a[0] + e.embedding[i] * $vec[i], a[1] + e.embedding[i] * e.embedding[i]]) AS dn
WHERE dn[1] > 0
WITH e, dn[0] / sqrt(dn[1]) / $qnorm AS score
ORDER BY score DESC, e.id
LIMIT $k
RETURN e {.id, .name, .type, .description, .embedding, .mentions} AS e, score`

	stmtSearchEntitiesScan = `MATCH (e:Entity)
WHERE e.mentions > 0 AND e.embedding IS NOT NULL AND size(e.embedding) = size($vec)
WITH e, reduce(a = [0.0, 0.0], i IN range(0, size($vec) - 1) |
       [a[0] + e.embedding[i] * $vec[i], a[1] + e.embedding[i] * e.embedding[i]]) AS dn
WHERE dn[1] > 0
WITH e, dn[0] / sqrt(dn[1]) / $qnorm AS score
ORDER BY score DESC, e.id
LIMIT $k
RETURN e {.id, .name, .type, .description, .embedding, .mentions} AS e, score`

	stmtSearchEntitiesText = `CALL db.index.fulltext.queryNodes($index, $query) YIELD node AS e, score
WHERE e.mentions > 0
RETURN e {.id, .name, .type, .description, .embedding, .mentions} AS e, score
ORDER BY score DESC, e.id
LIMIT $k`

	stmtSearchRelationsVector = `CALL db.index.vector.queryRelationships($index, $n, $vec) YIELD relationship AS r
WHERE size(r.embedding) = size($vec)
WITH r, reduce(a = [0.0, 0.0], i IN range(0, size($vec) - 1) |
       [a[0] + r.embedding[i] * $vec[i], a[1] + r.embedding[i] * r.embedding[i]]) AS dn
WHERE dn[1] > 0
WITH r, dn[0] / sqrt(dn[1]) / $qnorm AS score
ORDER BY score DESC, r.id
LIMIT $k
RETURN r {.id, .type, .keywords, .description, .weight, .embedding,
          source_id: startNode(r).id, target_id: endNode(r).id} AS r, score`

	stmtSearchRelationsScan = `MATCH (s:Entity)-[r:RELATES]->(t:Entity)
WHERE r.embedding IS NOT NULL AND size(r.embedding) = size($vec)
WITH s, r, t, reduce(a = [0.0, 0.0], i IN range(0, size($vec) - 1) |
       [a[0] + r.embedding[i] * $vec[i], a[1] + r.embedding[i] * r.embedding[i]]) AS dn
WHERE dn[1] > 0
WITH s, r, t, dn[0] / sqrt(dn[1]) / $qnorm AS score
ORDER BY score DESC, r.id
LIMIT $k
RETURN r {.id, .type, .keywords, .description, .weight, .embedding, source_id: s.id, target_id: t.id} AS r, score`

	// stmtRelationsOf returns each batch's strongest relations; the caller
	// merges batches and applies the overall limit.
	stmtRelationsOf = `UNWIND $ids AS id
MATCH (e:Entity {id: id})-[r:RELATES]-()
WITH DISTINCT r
ORDER BY r.weight DESC, r.id
LIMIT $limit
RETURN r {.id, .type, .keywords, .description, .weight, .embedding,
          source_id: startNode(r).id, target_id: endNode(r).id} AS r`

	stmtMentionsOf = `UNWIND $ids AS id
MATCH (e:Entity {id: id})-[:MENTIONED_IN]->(c:Chunk)
RETURN DISTINCT e.id AS entity_id, c.id AS chunk_id, c.doc_id AS doc_id
ORDER BY entity_id, chunk_id
LIMIT $limit`

	stmtEntitiesOfChunks = `UNWIND $ids AS id
MATCH (c:Chunk {id: id})<-[:MENTIONED_IN]-(e:Entity)
RETURN DISTINCT e.id AS entity_id, c.id AS chunk_id, c.doc_id AS doc_id
ORDER BY chunk_id, entity_id`

	// The passage graph around given nodes (store.PassageGraph), one
	// statement per call. Both start from the nodes asked for by their
	// unique id, pinned by a hint because the patterns also name Documents
	// by their indexed status, where a plan cached on an empty database
	// could otherwise start (every done document). Whether an entity is a
	// hub (in more than $hub_above chunks of done documents) is decided by
	// e.mentions when it can be: it counts chunks of documents in any
	// status, never fewer, so 1..$hub_above of them is no hub. Otherwise
	// (a hub by that count, or a placeholder at 0) n counts its chunks of
	// done documents, stopping after $count_limit, so a hub costs
	// $count_limit steps, not its degree; n is 0 when not counted.
	//
	// stmtEntityNeighbors returns each entity of $ids: n and, when n is at
	// most $hub_above, its chunks of done documents as [id, document id,
	// title] lists (the caller counts them).
	stmtEntityNeighbors = `UNWIND $ids AS id
MATCH (e:Entity {id: id})
USING INDEX e:Entity(id)
CALL {
  WITH e
  WITH e
  WHERE NOT (coalesce(e.mentions, 0) >= 1 AND e.mentions <= $hub_above)
  MATCH (e)-[:MENTIONED_IN]->(c:Chunk)-[:PART_OF]->(d:Document)
  WHERE d.status = $done
  WITH DISTINCT c
  LIMIT $count_limit
  RETURN count(c) AS n
}
CALL {
  WITH e, n
  WITH e, n
  WHERE n <= $hub_above
  MATCH (e)-[:MENTIONED_IN]->(c:Chunk)-[:PART_OF]->(d:Document)
  WHERE d.status = $done
  RETURN collect(DISTINCT [c.id, c.doc_id, d.title]) AS chunks
}
RETURN e.id AS id, n, chunks`

	// stmtChunkNeighbors returns one row per edge into the chunks of $ids
	// that belong to done documents: the chunk's document and title, the
	// entity and whether it is a hub, decided once per entity however many
	// of the chunks it is in.
	stmtChunkNeighbors = `UNWIND $ids AS id
MATCH (c:Chunk {id: id})-[:PART_OF]->(d:Document)
USING INDEX c:Chunk(id)
WHERE d.status = $done
MATCH (e:Entity)-[:MENTIONED_IN]->(c)
WITH DISTINCT c, d, e
WITH e, collect([c.id, c.doc_id, d.title]) AS chunks
CALL {
  WITH e
  WITH e
  WHERE NOT (coalesce(e.mentions, 0) >= 1 AND e.mentions <= $hub_above)
  MATCH (e)-[:MENTIONED_IN]->(x:Chunk)-[:PART_OF]->(y:Document)
  WHERE y.status = $done
  WITH DISTINCT x
  LIMIT $count_limit
  RETURN count(x) AS n
}
UNWIND chunks AS chunk
RETURN chunk[0] AS chunk_id, chunk[1] AS doc_id, chunk[2] AS title, e.id AS entity_id, n > $hub_above AS hub`
)

// validDimension checks an embedder dimension before it reaches the index
// DDL: it must be a positive integer a Neo4j vector index accepts.
func validDimension(dim int) error {
	if dim < 1 || dim > maxVectorDims {
		return fmt.Errorf("embedding dimension %d: Neo4j vector indexes take 1 to %d dimensions", dim, maxVectorDims)
	}
	return nil
}
