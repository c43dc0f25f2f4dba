package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFrom(t *testing.T) {
	vcs := func(rev, at, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: at}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "0f0cf51abcdef0123456789abcdef0123456789a"
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"module version", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: vcs(rev, "2026-11-26T12:15:00Z", "false")}, "v1.2.3"},
		{"clean checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "2026-11-26T12:15:00Z", "false")}, "v0.0.0-20261126121500-0f0cf51abcde"},
		{"modified", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "2026-11-26T13:15:00+01:00", "true")}, "v0.0.0-20261126121500-0f0cf51abcde+dirty"},
		{"no time", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "", "false")}, "v0.0.0-00010101000000-0f0cf51abcde"},
		{"no vcs", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"nothing", debug.BuildInfo{}, "dev"},
	} {
		if got := versionFrom(&tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestBuiltVersion builds wavesmith as make does (hack/version.sh through
// -ldflags) and checks that version and --version print the commit's
// pseudo-version (or its tag), not "dev".
func TestBuiltVersion(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed: the version comes from the repository")
	}
	out, err := exec.Command("bash", "../../hack/version.sh").Output()
	if err != nil {
		t.Fatalf("hack/version.sh: %v", err)
	}
	want := strings.TrimSpace(string(out))
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	tag, _ := exec.Command("git", "describe", "--tags", "--exact-match", "HEAD").Output()
	if len(tag) == 0 && !regexp.MustCompile(`^v0\.0\.0-\d{14}-`+string(rev[:12])+`(\+dirty)?$`).MatchString(want) {
		t.Fatalf("hack/version.sh printed %q, want the pseudo-version of %s", want, rev[:12])
	}
	bin := filepath.Join(t.TempDir(), "wavesmith")
	build := exec.Command("go", "build", "-ldflags", "-X main.version="+want, "-o", bin, ".")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var stdout bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("wavesmith %s: %v", args[0], err)
		}
		first := strings.SplitN(stdout.String(), "\n", 2)[0]
		if !strings.HasPrefix(first, "wavesmith "+want) || strings.Contains(first, "dev") {
			t.Errorf("wavesmith %s: %q, want wavesmith %s", args[0], first, want)
		}
	}
}
