package pipeline_test

import (
	"github.com/spf13/pflag"

	"github.com/docgraph/docgraph/pipeline"
)

type pflagSet = pflag.FlagSet

func newFlagSet(s *pipeline.Settings) *pflag.FlagSet {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	s.AddStoreFlags(fs)
	s.AddIngestFlags(fs)
	return fs
}
