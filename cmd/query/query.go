package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"docgraph/pipeline"
	"docgraph/retrieve"
)

// streams are the command's input and output, injectable for tests.
type streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// queryOptions is everything one query needs.
type queryOptions struct {
	Settings    pipeline.Settings
	Config      string
	Question    string
	Mode        string
	TopK        int
	JSON        bool
	ContextOnly bool
}

func newRootCmd(io streams) *cobra.Command {
	opts := &queryOptions{}
	cmd := &cobra.Command{
		Use:   `query [flags] "question"`,
		Short: "Retrieve ranked passages (and, with an LLM, an answer) for a question",
		Long: `query searches the knowledge graph built by ingest and prints the passages
that best answer the question, each with its source document and score.

Every flag can also be set as DOCGRAPH_<FLAG> or in docgraph.yaml.`,
		Args:          cobra.ExactArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := pipeline.ApplyConfig(cmd.Flags(), opts.Config, cmd.Flags().Changed("config")); err != nil {
				fmt.Fprintln(io.Err, "query:", err)
				return err
			}
			opts.Question = args[0]
			if err := runQuery(cmd.Context(), opts, io); err != nil {
				fmt.Fprintln(io.Err, "query:", err)
				return err
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Config, "config", "docgraph.yaml", "optional YAML config file")
	opts.Settings.AddStoreFlags(fs)
	fs.StringVar(&opts.Mode, "mode", "naive", "retrieval mode: naive")
	fs.IntVar(&opts.TopK, "top-k", 5, "passages to return")
	fs.BoolVar(&opts.JSON, "json", false, "print passages, scores and stage timings as JSON")
	fs.BoolVar(&opts.ContextOnly, "context-only", false, "print only the assembled context")
	return cmd
}

func runQuery(ctx context.Context, opts *queryOptions, io streams) error {
	if strings.TrimSpace(opts.Question) == "" {
		return fmt.Errorf("empty question")
	}
	if opts.Mode != "naive" {
		return fmt.Errorf("unknown mode %q (available: naive)", opts.Mode)
	}
	emb, err := pipeline.NewEmbedder(opts.Settings.Embedder)
	if err != nil {
		return err
	}
	st, err := pipeline.OpenStore(ctx, opts.Settings, emb, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	start := time.Now()
	r := &retrieve.Naive{Store: st, Embedder: emb}
	res, err := r.Retrieve(ctx, opts.Question, opts.TopK)
	if err != nil {
		return err
	}
	res.Timings["total"] = time.Since(start)
	switch {
	case opts.JSON:
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	case opts.ContextOnly:
		for i, p := range res.Passages {
			fmt.Fprintf(io.Out, "[%d] %s (chunk %d)\n%s\n\n", i+1, displayPath(p.DocPath), p.Index, strings.TrimSpace(p.Text))
		}
		return nil
	}
	if len(res.Passages) == 0 {
		fmt.Fprintln(io.Out, "no passages found (has anything been ingested into this store?)")
		return nil
	}
	for i, p := range res.Passages {
		fmt.Fprintf(io.Out, "[%d] %.4f  %s  (chunk %d)\n", i+1, p.Score, displayPath(p.DocPath), p.Index)
		fmt.Fprintf(io.Out, "    %s\n\n", snippet(p.Text, 320))
	}
	return nil
}

// displayPath shows paths under the working directory relative to it.
func displayPath(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}

func snippet(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) <= n {
		return text
	}
	cut := n
	for cut > 0 && text[cut]&0xC0 == 0x80 {
		cut--
	}
	return text[:cut] + "…"
}
