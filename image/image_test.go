package image

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestImages builds both real binaries statically, writes their image
// tarballs, loads them back and checks entrypoint, user, labels and
// content; the same inputs give the same digest.
func TestImages(t *testing.T) {
	dir := t.TempDir()
	bins := map[string]string{}
	for _, name := range []string{"wavesmith", "wavesmith-status"} {
		bins[name] = filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-trimpath", "-o", bins[name], "../cmd/"+name)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", name, err, out)
		}
	}
	for _, s := range Specs(bins["wavesmith"], bins["wavesmith-status"], "v0.0.0-test") {
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
