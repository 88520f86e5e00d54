package main

import (
	"os"
	"runtime/pprof"
)

func startProf(path string) func() {
	if path == "" {
		return func() {}
	}
	f, _ := os.Create(path)
	pprof.StartCPUProfile(f)
	return func() { pprof.StopCPUProfile(); f.Close() }
}
