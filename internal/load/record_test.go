package load

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/internal/outtree"
)

// TestLoadEmptyRecord: an empty tree record in an input folder is an
// error naming it, never a reason to skip the folder's specs; a record
// with content marks a rendered tree, skipped.
func TestLoadEmptyRecord(t *testing.T) {
	for name, tc := range map[string]struct {
		record string
		err    bool
	}{
		"Empty":      {"", true},
		"Whitespace": {" \n\n", true},
		"Record":     {"# How this tree was rendered\napiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\n", false},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			prod := filepath.Join(dir, "deploy", "prod")
			if err := os.MkdirAll(prod, 0o755); err != nil {
				t.Fatal(err)
			}
			for p, s := range map[string]string{
				filepath.Join(dir, "deploy", "cm.yaml"): "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
				filepath.Join(prod, "kaoto.yaml"):       "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: k}\n",
				filepath.Join(prod, outtree.RecordFile): tc.record,
			} {
				if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			objs, err := loadIn(dir, []string{filepath.Join(dir, "deploy")}, nil)
			if !tc.err {
				if err != nil || len(objs) != 1 {
					t.Fatalf("a rendered tree is skipped: %d objects, %v", len(objs), err)
				}
				return
			}
			if !errors.Is(err, outtree.ErrEmptyRecord) || !strings.Contains(err.Error(), filepath.Join(prod, outtree.RecordFile)) {
				t.Fatalf("got %d objects, %v; want ErrEmptyRecord naming the file", len(objs), err)
			}
		})
	}
}
