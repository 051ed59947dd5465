package main

import (
	"fmt"
	"runtime/debug"
)

// version is what --version prints after "lockbridge ": the module version
// of the build (a tag for `go install …@vX.Y.Z` or @latest, "(devel)" for a
// build from a checkout), the VCS commit when the build recorded one, and
// the Go version.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build information)"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	commit := "commit unknown"
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		commit = "commit " + rev
		if dirty {
			commit += "+modified"
		}
		if at != "" {
			commit += " of " + at
		}
	}
	return fmt.Sprintf("%s (%s, %s)", v, commit, bi.GoVersion)
}
