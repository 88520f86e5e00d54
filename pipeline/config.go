package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/loader"
	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/splitter"
	"github.com/docgraph/docgraph/store"
)

// DefaultStore is the embedded default: a SQLite file under the working directory.
const DefaultStore = "sqlite://./.docgraph/graph.db"

// Settings are the knobs shared by the commands; flags, DOCGRAPH_* variables
// and docgraph.yaml all end up here.
type Settings struct {
	Store        string
	Embedder     string // "hash" or "hash:DIM"
	ChunkTokens  int
	ChunkOverlap int
	Concurrency  int
	// MaxFileSize is the largest file ingest reads (0: loader.DefaultMaxBytes).
	MaxFileSize   ByteSize
	Neo4jDatabase string
	// Neo4jUser and Neo4jPassword come from docgraph.yaml or DOCGRAPH_NEO4J_*
	// when NEO4J_USER / NEO4J_PASSWORD are not set; never logged.
	Neo4jUser     string
	Neo4jPassword string
	BatchSize     int
	// WriteRetryBudget bounds how long a write transaction is retried after
	// transient failures (deadlocks between processes, a busy database).
	WriteRetryBudget time.Duration
	// FollowOutsideLinks reads the files that symbolic links in the
	// folders lead to outside the paths given; off (the default), such
	// links are listed as not ingested and never opened.
	FollowOutsideLinks bool
	LLMSettings
}

// ApplyConfig fills every flag the user did not set on the command line from
// the environment (DOCGRAPH_CHUNK_TOKENS for --chunk-tokens) or, failing that,
// from the YAML config file (key chunk-tokens or chunk_tokens), then holds
// every numeric setting to its allowed range. A missing config file is fine
// unless required is true; a key no docgraph command knows is an error
// naming it, the file and the closest known key.
func ApplyConfig(flags *pflag.FlagSet, configPath string, required bool) error {
	file := map[string]any{}
	if configPath != "" {
		data, err := os.ReadFile(configPath)
		switch {
		case err == nil:
			if err := yaml.Unmarshal(data, &file); err != nil {
				return fmt.Errorf("config %s: %w", configPath, err)
			}
		case errors.Is(err, fs.ErrNotExist) && !required:
		default:
			return fmt.Errorf("config %s: %w", configPath, err)
		}
	}
	keys := make(map[string]any, len(file))
	for k, v := range file {
		name := configKey(k)
		if !IsConfigKey(name) || name == "config" {
			msg := fmt.Sprintf("config %s: unknown key %q", configPath, k)
			if near := closestKey(name); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			return errors.New(msg)
		}
		keys[name] = v
	}
	sources := map[string]string{}
	var firstErr error
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Changed || firstErr != nil || f.Name == "config" || f.Name == "help" {
			return
		}
		env := "DOCGRAPH_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if err := f.Value.Set(v); err != nil {
				firstErr = fmt.Errorf("%s=%q: %w", env, v, err)
			}
			sources[f.Name] = env
			return
		}
		v, ok := keys[f.Name]
		if !ok {
			return
		}
		if err := setFromYAML(f, v); err != nil {
			firstErr = fmt.Errorf("config %s: %s: %w", configPath, f.Name, err)
		}
		sources[f.Name] = configPath
	})
	if firstErr != nil {
		return firstErr
	}
	return checkRanges(flags, sources)
}

// setFromYAML sets f from its key's value in a config file: one scalar,
// or a list of them for a flag that takes many. Anything else is an error:
// printed with fmt.Sprint, {a: x} became the string "map[a:x]".
func setFromYAML(f *pflag.Flag, v any) error {
	list, isList := v.([]any)
	if !isList {
		list = []any{v}
	} else if _, many := f.Value.(pflag.SliceValue); !many {
		return errors.New("a list, where a single value is wanted")
	}
	for _, item := range list {
		s, err := yamlScalar(item)
		if err != nil {
			return err
		}
		if err := f.Value.Set(s); err != nil {
			return err
		}
	}
	return nil
}

// yamlScalar is a YAML scalar as the text a flag is set from.
func yamlScalar(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(v), nil
	case nil:
		return "", errors.New(`no value (write "" for an empty one)`)
	case map[string]any, map[any]any:
		return "", errors.New("a mapping, where a single value is wanted")
	case []any:
		return "", errors.New("a list, where a single value is wanted")
	}
	// A timestamp, for one: its text is not kept, so ask for it quoted.
	return "", fmt.Errorf("a YAML %T, where a single value is wanted (quote it to pass it as text)", v)
}

// NewEmbedder builds the offline embedder named by spec: "hash" (384
// dimensions) or "hash:DIM". NewModels also accepts provider embedders.
func NewEmbedder(spec string) (embedstore.Embedder, error) {
	name, arg, _ := strings.Cut(spec, ":")
	switch name {
	case "", "hash", "hash-v2", "hash-v1": // hash-vN is the name a store records
		dim := 384
		if arg != "" {
			n, err := strconv.Atoi(arg)
			if err != nil || n < 8 || n > 8192 {
				return nil, fmt.Errorf("embedder %q: dimension must be an integer in 8..8192", spec)
			}
			dim = n
		}
		version := 2
		if name == "hash-v1" {
			version = 1
		}
		return embedstore.NewHash(embedstore.WithDimension(dim), embedstore.WithVersion(version)), nil
	}
	return nil, fmt.Errorf("embedder %q: unknown provider %q (known: hash, openai, ollama)", spec, name)
}

// ErrNoStore is the cause OpenExistingStore reports when there is no store
// where the settings point.
var ErrNoStore = errors.New("no store")

// OpenExistingStore opens the configured store for reading or managing
// documents and never creates one: asking about a store that is not there
// is a mistake (a wrong --store or working directory) worth reporting, with
// how to make one. A zero opts.Embedder adopts the embedder the store holds.
func OpenExistingStore(ctx context.Context, s Settings, opts store.Options) (store.Store, error) {
	raw := s.Store
	if raw == "" {
		raw = DefaultStore
	}
	if path, ok := sqliteFile(raw); ok {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			howTo := "ingest PATH..."
			if raw != DefaultStore {
				howTo = "ingest --store " + store.Redact(raw) + " PATH..."
			}
			return nil, fmt.Errorf("%w at %s: nothing has been ingested there (make one with: %s), or another --store or working directory was meant",
				ErrNoStore, path, howTo)
		}
	}
	return OpenStoreWith(ctx, s, opts)
}

// EmbeddedStore reports whether a store URL names the embedded SQLite
// store (a file on this machine) rather than a store on a server.
func EmbeddedStore(raw string) bool {
	_, ok := sqliteFile(raw)
	return ok
}

// sqliteFile returns the database file of an embedded store URL.
func sqliteFile(raw string) (string, bool) {
	if !strings.Contains(raw, "://") {
		return raw, true
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "sqlite" && u.Scheme != "file") {
		return "", false
	}
	return store.SQLitePath(u), true
}

// AdoptEmbedder is the embedder spec to open an existing store with: the
// one given when explicit is set, else the one the store's vectors were
// made with (so a query or delete needs no --embedder), else s.Embedder for
// a store that holds no vectors yet.
func AdoptEmbedder(ctx context.Context, s Settings, explicit bool) (string, error) {
	if explicit {
		return s.Embedder, nil
	}
	st, err := OpenExistingStore(ctx, s, store.Options{ReadOnly: true})
	if err != nil {
		return "", err
	}
	held := st.Embedder()
	st.Close()
	if held.Name == "" {
		return s.Embedder, nil
	}
	return held.Spec(), nil
}

// OpenStore opens the configured store for the embedder's vectors. Server
// credentials come from NEO4J_USER/NEO4J_PASSWORD (or DOCGRAPH_NEO4J_*).
func OpenStore(ctx context.Context, s Settings, emb embedstore.Embedder, merger store.Merger) (store.Store, error) {
	return OpenStoreWith(ctx, s, store.Options{
		Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()},
		Merger:   merger,
	})
}

// OpenStoreWith opens the configured store with opts, whose connection
// settings (database, batch size, credentials) it fills from s as OpenStore
// does; a zero opts.Embedder adopts the embedder the store holds.
func OpenStoreWith(ctx context.Context, s Settings, opts store.Options) (store.Store, error) {
	if s.Store == "" {
		s.Store = DefaultStore
	}
	if s.WriteRetryBudget < 0 {
		return nil, fmt.Errorf("--write-retry-budget %s: must not be negative", s.WriteRetryBudget)
	}
	opts.Database, opts.BatchSize, opts.RetryBudget = s.Neo4jDatabase, s.BatchSize, s.WriteRetryBudget
	opts.Username = orDefault(firstEnv("NEO4J_USER", "NEO4J_USERNAME"), s.Neo4jUser)
	opts.Password = orDefault(firstEnv("NEO4J_PASSWORD"), s.Neo4jPassword)
	st, err := store.Open(ctx, s.Store, opts)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", store.Redact(s.Store), err)
	}
	return st, nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// Offline builds the pipeline that needs no model: the built-in extractor and
// the given embedder, over the opened store.
func Offline(s Settings, emb embedstore.Embedder, st Store) (*Pipeline, error) {
	return New(s, &Models{Embedder: emb, Extractor: ner.NewOffline()}, st)
}

// New composes the ingest pipeline from settings, models and an opened store.
func New(s Settings, m *Models, st Store) (*Pipeline, error) {
	if s.ChunkTokens == 0 {
		// Zero settings mean the defaults; a chunk size given with overlap
		// 0 means no overlap.
		s.ChunkTokens = 768
		if s.ChunkOverlap == 0 {
			s.ChunkOverlap = 32
		}
	}
	sp, err := splitter.New(splitter.WithChunkSize(s.ChunkTokens), splitter.WithOverlap(s.ChunkOverlap))
	if err != nil {
		return nil, fmt.Errorf("splitter: %w", err)
	}
	var stalled func() error
	if s.Stall > 0 && len(m.Waits()) > 0 {
		stalled = func() error { return m.Stalled(s.Stall) }
	}
	return &Pipeline{
		Stalled:     stalled,
		Loader:      loader.New(loader.WithMaxBytes(int64(s.MaxFileSize))),
		Splitter:    sp,
		Extractor:   m.Extractor,
		Embedder:    m.Embedder,
		Store:       st,
		Concurrency: s.Concurrency,
		Fingerprint: Fingerprint(s, m.ExtractorName(), m.Embedder),

		FollowOutsideLinks: s.FollowOutsideLinks,
	}, nil
}

// Fingerprint names the settings that shape a document's chunks and graph.
func Fingerprint(s Settings, extractor string, emb embedstore.Embedder) string {
	return fmt.Sprintf("chunk=%d/%d ner=%s emb=%s/%d", s.ChunkTokens, s.ChunkOverlap, extractor, emb.Name(), emb.Dimension())
}

// NewMerger is the merger every command uses for the embedder.
func NewMerger(emb embedstore.Embedder) store.Merger {
	return graphbuild.NewMerger(emb)
}

// AddStoreFlags registers the flags every command needs to reach a store.
func (s *Settings) AddStoreFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.Store, "store", DefaultStore, "graph store URL: sqlite://PATH or neo4j://HOST:7687 (bolt://, neo4j+s://)")
	fs.StringVar(&s.Embedder, "embedder", "hash", "embedder: hash[:DIM] (offline), openai:MODEL, ollama:MODEL")
	fs.StringVar(&s.Neo4jDatabase, "neo4j-database", "", "Neo4j database name (default: the server's default)")
	fs.IntVar(&s.BatchSize, "batch-size", 1000, "rows per write statement on server stores")
	fs.DurationVar(&s.WriteRetryBudget, "write-retry-budget", store.DefaultRetryBudget, "how long a write is retried after deadlocks or a busy store before its documents fail")
	// Secrets are settable from the config file and environment only in
	// spirit: the flags exist so ApplyConfig can fill them, and are hidden.
	fs.StringVar(&s.Neo4jUser, "neo4j-user", "", "Neo4j user (prefer NEO4J_USER)")
	fs.StringVar(&s.Neo4jPassword, "neo4j-password", "", "Neo4j password (prefer NEO4J_PASSWORD or docgraph.yaml)")
	_ = fs.MarkHidden("neo4j-user")
	_ = fs.MarkHidden("neo4j-password")
}

// AddIngestFlags registers the flags that shape chunks and the run.
func (s *Settings) AddIngestFlags(fs *pflag.FlagSet) {
	fs.IntVar(&s.ChunkTokens, "chunk-tokens", 768, "chunk size in tokens (cl100k)")
	fs.IntVar(&s.ChunkOverlap, "chunk-overlap", 32, "overlap between consecutive chunks in tokens")
	fs.IntVar(&s.Concurrency, "concurrency", 4, "documents (and chunk extractions) processed at once")
	s.MaxFileSize = ByteSize(loader.DefaultMaxBytes)
	fs.Var(&s.MaxFileSize, "max-file-size", "largest file read, e.g. 64MiB or 200MB; bigger files fail with a message naming this flag (at most 1GiB)")
	fs.BoolVar(&s.FollowOutsideLinks, "follow-outside-links", false, "read the files that symbolic links in the folders lead to outside the paths given (off: such links are listed as not ingested and never opened)")
}
