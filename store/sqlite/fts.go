package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	"modernc.org/sqlite"

	"github.com/docgraph/docgraph/cjk"
)

// Full-text search in every script. FTS5's unicode61 tokenizer reads a run
// of Chinese or Japanese as one token, so the index is fed derived text
// instead: docgraph_fts(text) rewrites every CJK run into its overlapping
// bigrams (cjk.IndexText) and leaves other scripts to porter stemming, and
// queries are cut the same way (cjk.Terms). Measured on cmrc2018 against
// FTS5's trigram tokenizer: bigrams R@2 98.8 / R@5 99.6, trigrams 94.3 /
// 95.4 (a two-character word, the commonest length in Chinese, is below
// the trigram tokenizer's minimum), and trigrams would lose stemming.
//
// The indexes are contentless (content=''): they hold no copy of the text,
// so they can index the derived text, and contentless_delete=1 deletes by
// rowid, so a delete never depends on reproducing what was indexed.

// ftsVersion names what the FTS tables hold; init rebuilds them from the
// chunks and entities tables when a store records another.
const ftsVersion = "contentless-" + cjk.Version

const ftsSchema = `
CREATE VIRTUAL TABLE chunks_fts USING fts5(
	text, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE entities_fts USING fts5(
	name, description, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2');
`

func init() {
	sqlite.MustRegisterDeterministicScalarFunction("docgraph_fts", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return cjk.IndexText(v), nil
		case []byte:
			return cjk.IndexText(string(v)), nil
		case nil:
			return nil, nil
		default:
			return nil, fmt.Errorf("docgraph_fts: want text, got %T", v)
		}
	})
}

// ensureFTS (re)builds both FTS indexes from their tables unless the store
// already holds the current kind. Stores of schema version 1 had
// external-content indexes of the raw text; they are rebuilt here.
func ensureFTS(ctx context.Context, tx *sql.Tx, held string) (rebuilt bool, err error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name IN ('chunks_fts', 'entities_fts')`).Scan(&n); err != nil {
		return false, fmt.Errorf("look up FTS tables: %w", err)
	}
	if held == ftsVersion && n == 2 {
		return false, nil
	}
	for _, q := range []string{
		`DROP TABLE IF EXISTS chunks_fts`,
		`DROP TABLE IF EXISTS entities_fts`,
		ftsSchema,
		`INSERT INTO chunks_fts(rowid, text) SELECT seq, docgraph_fts(text) FROM chunks`,
		`INSERT INTO entities_fts(rowid, name, description) SELECT seq, docgraph_fts(name), docgraph_fts(description) FROM entities`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return false, fmt.Errorf("rebuild full-text indexes: %w", err)
		}
	}
	return true, nil
}

// maxQueryTerms bounds the OR-query built from a user's text.
const maxQueryTerms = 64

// ftsQuery turns arbitrary user text into an FTS5 query that cannot fail to
// parse: its terms (words, and bigrams of CJK runs), each quoted as a
// string, OR-ed together. Operators, quotes and column filters in the input
// are only ever separators.
func ftsQuery(text string) string {
	terms := cjk.TermList(text)
	if len(terms) > maxQueryTerms {
		terms = terms[:maxQueryTerms]
	}
	for i, t := range terms {
		terms[i] = `"` + t + `"`
	}
	return strings.Join(terms, " OR ")
}
