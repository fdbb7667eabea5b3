package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionNamesTheModuleVersionAndTheRevision(t *testing.T) {
	tests := []struct {
		info debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "false"}}},
			"v1.4.0 (revision 0123456789abcdef)"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}},
			"(devel) (revision abc, modified)"},
		{debug.BuildInfo{}, "(devel)"},
	}
	for _, tt := range tests {
		if got := versionOf(&tt.info); got != tt.want {
			t.Errorf("versionOf(%+v) = %q, want %q", tt.info, got, tt.want)
		}
	}
}

func TestVersionFlagPrintsTheBuild(t *testing.T) {
	isolate(t)
	stdout, stderr, code := run(t, Assets{}, "--version")
	if code != 0 || stderr != "" || stdout != "dlqt "+buildVersion()+"\n" || !strings.HasPrefix(stdout, "dlqt ") {
		t.Errorf("dlqt --version: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
