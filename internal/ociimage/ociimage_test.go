package ociimage

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/wavesmith/wavesmith/internal/testtool"
)

// TestImages writes the image tarballs of both specs, loads them back and
// checks entrypoint, user, labels and content; the same inputs give the
// same digest. The binaries are a small static Go program (testdata/hello):
// what an image holds does not depend on which program it is, and building
// the two real binaries with CGO_ENABLED=0 -trimpath recompiled every
// dependency (327 s of a cold make test). make image builds the real ones.
func TestImages(t *testing.T) {
	dir := t.TempDir()
	bin := buildHello(t, dir, "0")
	for _, s := range Specs(bin, bin, "v0.0.0-test") {
		t.Run(s.Name, func(t *testing.T) {
			p := filepath.Join(dir, s.Name+".tar")
			if err := Write(p, s); err != nil {
				t.Fatal(err)
			}
			img, err := tarball.ImageFromPath(p, nil)
			if err != nil {
				t.Fatalf("loading the tarball: %v", err)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"/" + s.Name}, cfg.Config.Entrypoint); diff != "" {
				t.Errorf("entrypoint: %s", diff)
			}
			if cfg.Config.User != User || strings.HasPrefix(cfg.Config.User, "0") {
				t.Errorf("user %q, want the non-root %s", cfg.Config.User, User)
			}
			if cfg.Config.Labels["org.opencontainers.image.title"] != s.Name || cfg.Config.Labels["org.opencontainers.image.version"] != "v0.0.0-test" {
				t.Errorf("labels %v", cfg.Config.Labels)
			}
			if cfg.OS != "linux" {
				t.Errorf("os %q", cfg.OS)
			}
			layers, err := img.Layers()
			if err != nil || len(layers) != 1 {
				t.Fatalf("want one layer on an empty base, got %d (%v)", len(layers), err)
			}
			rc := mutate.Extract(img)
			defer rc.Close()
			var files []string
			tr := tarReader(rc)
			for {
				h, err := tr.Next()
				if err != nil {
					break
				}
				files = append(files, h.Name)
				if h.Mode&0o111 == 0 {
					t.Errorf("%s is not executable", h.Name)
				}
			}
			if diff := cmp.Diff([]string{s.Name}, files); diff != "" {
				t.Errorf("image content: %s", diff)
			}
			// Deterministic: building twice gives the same digest, and the
			// tarball holds that image's config.
			first, err := Build(s)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Build(s)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := first.Digest()
			b, _ := again.Digest()
			if a != b {
				t.Errorf("digests differ across builds: %s vs %s", a, b)
			}
			wantCfg, _ := first.ConfigName()
			gotCfg, _ := img.ConfigName()
			if wantCfg != gotCfg {
				t.Errorf("the tarball's config %s is not the built image's %s", gotCfg, wantCfg)
			}
		})
	}
}

// TestDynamicBinaryRefused: a binary that needs a dynamic loader would not
// start on the empty base; Build refuses it, and the error says why.
func TestDynamicBinaryRefused(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		reason string
		binary string
	}{
		"Cgo": {
			reason: "a cgo build links the C library's loader",
			binary: buildHello(t, dir, "1"),
		},
		"NotELF": {
			reason: "a script is not an executable of the image's OS",
			binary: writeFile(t, filepath.Join(dir, "script.sh"), "#!/bin/sh\necho hi\n"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Build(Spec{Binary: tc.binary, Name: "x"})
			if !errors.Is(err, ErrNotStatic) {
				t.Fatalf("%s: Build: got %v, want ErrNotStatic", tc.reason, err)
			}
			if !strings.Contains(err.Error(), tc.binary) {
				t.Errorf("the error does not name the binary: %v", err)
			}
		})
	}
}

// buildHello builds testdata/hello with CGO_ENABLED=cgo; with "1" it uses
// net's cgo resolver, so that the binary is dynamically linked.
func buildHello(t *testing.T, dir, cgo string) string {
	t.Helper()
	testtool.Inputs(t) // its source is under testdata/
	out := filepath.Join(dir, "hello-cgo"+cgo)
	args := []string{"build", "-o", out}
	if cgo == "1" {
		args = append(args, "-tags", "netcgo")
	}
	cmd := exec.Command("go", append(args, "./testdata/hello")...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building testdata/hello (CGO_ENABLED=%s): %v\n%s", cgo, err, b)
	}
	return out
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
