package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/splitter"
	"github.com/docgraph/docgraph/store"
)

// DryRunModel is what one model would be sent by a run.
type DryRunModel struct {
	Model string `json:"model"`
	// Chunks are the chunks with text, each asked about once at least.
	Chunks int `json:"chunks"`
	// Calls are the first extraction calls not answered by the cache;
	// CacheHits those whose exact request is cached.
	Calls     int `json:"calls"`
	CacheHits int `json:"cache_hits"`
	// PromptTokens are the rendered extraction prompts of Calls (the
	// project's tokenizer, cl100k); CachedPromptTokens those of CacheHits.
	PromptTokens       int64 `json:"prompt_tokens"`
	CachedPromptTokens int64 `json:"cached_prompt_tokens"`
	// Gleaning is the most gleaning rounds per chunk: they are not in
	// Calls or PromptTokens (their number depends on the answers).
	Gleaning int `json:"gleaning_rounds_not_estimated"`
}

// DryRunSummary is what an ingest of the same paths would do, computed
// without writing anything or calling a model.
type DryRunSummary struct {
	// Documents would be built (added or updated), in Chunks chunks.
	Documents int `json:"documents"`
	Chunks    int `json:"chunks"`
	// Unchanged are left as stored (same content, settings; also moved
	// or duplicate content, which is reused rather than built).
	Unchanged   int `json:"unchanged"`
	Failed      int `json:"failed"`
	Unsupported int `json:"unsupported"`
	// Models is empty offline: no model call would be made.
	Models []DryRunModel `json:"models"`
}

// DryRun walks and loads paths as Ingest does, decides which documents
// would be built against the store (nil: none stored yet), splits them and
// renders the first extraction prompt of every chunk to count its tokens
// and look it up in the LLM response cache. It writes nothing and calls no
// model.
func (p *Pipeline) DryRun(ctx context.Context, paths []string) (*DryRunSummary, error) {
	files, walkFailures, err := walk(paths, newScope(paths, p.FollowOutsideLinks))
	if err != nil {
		return nil, err
	}
	sum := &DryRunSummary{Models: []DryRunModel{}}
	for _, f := range walkFailures {
		if f.Outcome == Unsupported {
			sum.Unsupported++
		} else {
			sum.Failed++
		}
	}
	loop, _ := p.Extractor.(*ner.Loop)
	var est *DryRunModel
	var count func(string) int
	if loop != nil {
		tok, err := splitter.NewTokenizer("")
		if err != nil {
			return nil, err
		}
		count = tok.Count
		est = &DryRunModel{Gleaning: loop.Gleaning()}
		if n, ok := loop.Model().(interface{ Name() string }); ok {
			est.Model = n.Name()
		}
	}
	cache, _ := p.extractorCache(loop)
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		build, err := p.wouldBuild(ctx, path)
		if err != nil {
			sum.Failed++
			continue
		}
		if build == nil {
			sum.Unchanged++
			continue
		}
		chunks := p.Splitter.Split(build.ID, build.Text)
		if len(chunks) == 0 {
			sum.Failed++ // "no text to index after splitting"
			continue
		}
		sum.Documents++
		sum.Chunks += len(chunks)
		if loop == nil {
			continue
		}
		for _, c := range chunks {
			prompt, msgs, opts, ok, err := loop.FirstRequest(ner.Chunk{ID: c.ID(), DocTitle: build.Title, Text: c.Text})
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			est.Chunks++
			n := int64(count(prompt))
			hit := false
			if cache != nil {
				if hit, err = cache(ctx, msgs, opts...); err != nil {
					return nil, err
				}
			}
			if hit {
				est.CacheHits++
				est.CachedPromptTokens += n
			} else {
				est.Calls++
				est.PromptTokens += n
			}
		}
	}
	if est != nil {
		sum.Models = append(sum.Models, *est)
	}
	return sum, nil
}

// extractorCache is the read-only cache lookup of the loop's model, nil
// when it has none.
func (p *Pipeline) extractorCache(loop *ner.Loop) (func(context.Context, []llms.MessageContent, ...llms.CallOption) (bool, error), bool) {
	if loop == nil {
		return nil, false
	}
	c, ok := loop.Model().(interface {
		Cached(context.Context, []llms.MessageContent, ...llms.CallOption) (bool, error)
	})
	if !ok {
		return nil, false
	}
	return c.Cached, true
}

// dryDoc is a loaded document a run would build.
type dryDoc struct{ ID, Title, Text string }

// wouldBuild is prepare's decision without its writes: nil when the file
// would be left as stored (unchanged by its file key or content, or
// content stored under another path), else the loaded document.
func (p *Pipeline) wouldBuild(ctx context.Context, path string) (*dryDoc, error) {
	var prev *store.Document
	if p.Store != nil {
		var err error
		prev, err = p.Store.DocumentByPath(ctx, path)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%s: read store: %w", path, err)
		}
	}
	before, _ := os.Stat(path)
	if prev != nil && prev.FileKey != "" && before != nil && before.Mode().IsRegular() {
		known := fileKey(before)
		if prev.Status == store.StatusDone && prev.Fingerprint == p.Fingerprint && prev.FileKey == known {
			return nil, nil
		}
		if prev.Status == store.StatusFailed && prev.FileKey == failedLoadKey(known) {
			return nil, errors.New("failed before, unchanged since")
		}
	}
	doc, err := p.Loader.Load(ctx, path)
	if err != nil {
		return nil, err
	}
	if prev != nil && prev.ID == doc.ID && prev.Status == store.StatusDone && prev.Fingerprint == p.Fingerprint {
		return nil, nil
	}
	if p.Store != nil && (prev == nil || prev.ID != doc.ID) {
		same, err := p.Store.Document(ctx, doc.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%s: read store: %w", path, err)
		}
		if same != nil && same.Status == store.StatusDone && same.Fingerprint == p.Fingerprint && same.Path != path {
			return nil, nil // renamed or duplicate: the stored graph is reused
		}
	}
	return &dryDoc{ID: doc.ID, Title: doc.Title, Text: doc.Text}, nil
}

// DryRunSettings are s for a dry run, which must create nothing: no LLM
// cache when none exists yet (every request is then a miss), and whether
// the store exists (a SQLite file not there yet is not opened, as opening
// would create it).
func DryRunSettings(s Settings) (Settings, bool) {
	if c := s.cachePath(); c != "" {
		if _, err := os.Stat(c); err != nil {
			s.Cache = "off"
		}
	}
	st := s.Store
	if st == "" {
		st = DefaultStore
	}
	if strings.Contains(st, "://") && !strings.HasPrefix(st, "sqlite://") {
		return s, true // a server store: opening it creates nothing
	}
	file := strings.TrimPrefix(st, "sqlite://")
	if i := strings.IndexByte(file, '?'); i >= 0 {
		file = file[:i]
	}
	_, err := os.Stat(file)
	return s, err == nil
}

// PlanIngest is a dry run of an ingest of paths with settings s: it opens
// what exists (the store, the LLM cache) and creates and writes nothing.
// Without embedderSet it assumes the store's own embedder, as an ingest
// adopts it, since the embedder is part of the fingerprint that decides
// what is unchanged.
func PlanIngest(ctx context.Context, s Settings, embedderSet bool, paths []string) (*DryRunSummary, error) {
	s, storeExists := DryRunSettings(s)
	var st Store
	if storeExists {
		// Opened without an embedder to check, so nothing is recorded.
		opened, err := OpenStoreWith(ctx, s, store.Options{})
		if err != nil {
			return nil, err
		}
		defer opened.Close()
		st = opened
		if stats, err := opened.Stats(ctx); err == nil && !embedderSet && stats.Embedder.Name != "" {
			s.Embedder = stats.Embedder.Spec()
		}
	}
	models, err := NewModels(ctx, s)
	if err != nil {
		return nil, err
	}
	defer models.Close()
	p, err := New(s, models, st)
	if err != nil {
		return nil, err
	}
	return p.DryRun(ctx, paths)
}
