package cli

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// StartProfiles writes the profiles the environment asks for, for
// developers measuring a whole run (ARCHITECTURE.md, "Profiling"):
// DOCGRAPH_CPUPROFILE=FILE records a CPU profile until the returned stop is
// called, DOCGRAPH_MEMPROFILE=FILE a heap profile (allocations since start
// and what is live) when it is called. A profile that cannot be written is
// reported on stderr and never stops the command.
func StartProfiles(stderr io.Writer) (stop func()) {
	var stops []func()
	if path := os.Getenv("DOCGRAPH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			if err = pprof.StartCPUProfile(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "DOCGRAPH_CPUPROFILE: %v\n", err)
		} else {
			stops = append(stops, func() {
				pprof.StopCPUProfile()
				if err := f.Close(); err != nil {
					fmt.Fprintf(stderr, "DOCGRAPH_CPUPROFILE: %v\n", err)
				}
			})
		}
	}
	if path := os.Getenv("DOCGRAPH_MEMPROFILE"); path != "" {
		stops = append(stops, func() {
			runtime.GC() // live objects as of the end of the run
			f, err := os.Create(path)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				fmt.Fprintf(stderr, "DOCGRAPH_MEMPROFILE: %v\n", err)
			}
		})
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}
