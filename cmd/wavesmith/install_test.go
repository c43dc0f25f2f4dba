package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/internal/testtool"
)

// TestMakeInstall runs the README's install command exactly as written
// (`make install` in the clone, GOBIN set to a temporary folder; GOFLAGS
// and GOCACHE inherited, so that it builds from the warm cache), then the
// installed `wavesmith --version`: it must be stamped from git
// (hack/version.sh: the tag, else the commit's pseudo-version), never
// "dev". It skips only under -short (testtool.Short: never under make).
func TestMakeInstall(t *testing.T) {
	testtool.Short(t)
	readme, err := os.ReadFile(filepath.Join(packageDir, "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := fenced(t, string(readme), "```sh\ngit clone https://github.com/wavesmith/wavesmith.git && cd wavesmith\n")
	var command []string
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(line, "make ") {
			command = strings.Fields(strings.SplitN(line, "#", 2)[0])
		}
	}
	if strings.Join(command, " ") != "make install" {
		t.Fatalf("the README's install block runs %q, not make install:\n%s", command, block)
	}
	root := filepath.Join(packageDir, "..", "..")
	gobin := t.TempDir()
	make := exec.Command(command[0], command[1:]...)
	make.Dir = root
	make.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := make.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(command, " "), err, out)
	}
	for _, name := range []string{"wavesmith", "wavesmith-status"} {
		if _, err := os.Stat(filepath.Join(gobin, name)); err != nil {
			t.Errorf("make install did not install %s into GOBIN: %v", name, err)
		}
	}

	version := exec.Command("bash", "hack/version.sh")
	version.Dir = root
	v, err := version.Output()
	if err != nil {
		t.Fatalf("hack/version.sh: %v", err)
	}
	want := strings.TrimSpace(string(v))
	var stdout bytes.Buffer
	run := exec.Command(filepath.Join(gobin, "wavesmith"), "--version")
	run.Stdout, run.Stderr = &stdout, os.Stderr
	if err := run.Run(); err != nil {
		t.Fatalf("wavesmith --version: %v", err)
	}
	first := strings.SplitN(stdout.String(), "\n", 2)[0]
	if want == "" || first != "wavesmith "+want && !strings.HasPrefix(first, "wavesmith "+want+" ") || strings.Contains(first, "dev") {
		t.Errorf("the installed wavesmith --version says %q, want wavesmith %s (stamped from git, not dev)", first, want)
	}
}
