// Package kustomize holds the install manifests (kustomize folders); its
// test checks that every image they and the chart name is pinned.
package kustomize

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoFloatingImages: no image in kustomize/ or charts/ is :latest or
// without a tag or digest, and no images: override sets newTag latest. An
// install must run the release it came with.
func TestNoFloatingImages(t *testing.T) {
	checked := 0
	for _, root := range []string{".", "../charts"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".tpl")) {
				return err
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			for line := 1; sc.Scan(); line++ {
				l := sc.Text()
				if strings.Contains(l, ":latest") {
					t.Errorf("%s:%d: a floating :latest tag: %s", p, line, strings.TrimSpace(l))
				}
				code := strings.TrimSpace(strings.SplitN(l, "#", 2)[0])
				if v, ok := strings.CutPrefix(strings.TrimPrefix(code, "- "), "newTag:"); ok && strings.Trim(strings.TrimSpace(v), `"'`) == "latest" {
					t.Errorf("%s:%d: newTag latest", p, line)
				}
				v, ok := strings.CutPrefix(strings.TrimPrefix(code, "- "), "image:")
				if !ok || strings.TrimSpace(v) == "" || strings.Contains(v, "{{") {
					continue // a mapping (the chart's values), or a template
				}
				checked++
				ref := strings.Trim(strings.TrimSpace(v), `"'`)
				name := ref[strings.LastIndex(ref, "/")+1:]
				if !strings.Contains(name, ":") && !strings.Contains(ref, "@sha256:") {
					t.Errorf("%s:%d: image %s has no tag or digest", p, line, ref)
				}
			}
			return sc.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 2 {
		t.Fatalf("found %d image references; the install YAML moved?", checked)
	}
}
