package cli

import (
	"runtime/debug"
	"strings"
)

// buildVersion names the build that runs: the module version and the VCS
// revision the go command stamped into the binary, so an audit of the
// journal knows which dlqt acted. A build without that information (go
// run, tests) says so instead of pretending.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build information)"
	}
	return versionOf(info)
}

// versionOf is "VERSION (REVISION[, modified])", or VERSION alone when the
// build carries no revision.
func versionOf(info *debug.BuildInfo) string {
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return version
	}
	parts := []string{"revision " + rev}
	if modified == "true" {
		parts = append(parts, "modified")
	}
	return version + " (" + strings.Join(parts, ", ") + ")"
}
