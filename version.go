package docgraph

import (
	"fmt"
	"runtime/debug"

	"github.com/docgraph/docgraph/store/sqlite"
)

// Version is this release of docgraph; CHANGELOG.md says what each one
// changed.
const Version = "0.10.0"

// VersionString is Version with what the build knows of its source (the
// commit, and whether the tree had changes, or the module version `go
// install` fetched) and the store schema it reads and writes, as the
// commands' --version prints it.
func VersionString() string {
	v := Version
	if info, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		switch {
		case rev != "":
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if modified == "true" {
				rev += ", modified"
			}
			v += " (commit " + rev + ")"
		case info.Main.Version != "" && info.Main.Version != "(devel)":
			v += " (module " + info.Main.Version + ")"
		}
	}
	return fmt.Sprintf("%s; store schema: sqlite v%d", v, sqlite.SchemaVersion)
}
