package flux

import (
	"strings"
	"testing"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestDeleteHooks: Flux never applies a delete-only hook (ssa: Ignore)
// and says so; a hook that also runs on install is applied, with a
// warning that its delete part never runs.
func TestDeleteHooks(t *testing.T) {
	cases := map[string]struct {
		hook, ssa, warning string
	}{
		"PreDelete":        {inventory.HookPreDelete, "Ignore", "never applied"},
		"PostDelete":       {"post-delete,pre-delete", "Ignore", "never applied"},
		"InstallAndDelete": {"pre-delete,pre-install", "IfNotPresent", "its delete part never runs"},
		"Install":          {inventory.HookPreInstall, "IfNotPresent", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := &manifest.Object{Map: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j", "namespace": "a"}}}
			lc := &gitops.Lifecycle{Hook: tc.hook, Update: inventory.UpdateSSAOverride, Delete: inventory.DeleteDelete,
				Adoption: inventory.AdoptionIfUnowned, Reconcile: inventory.ReconcileOnce, Explicit: map[string]bool{}}
			warns := Engine{}.Annotate(obj, lc)
			if got, _ := obj.Annotation(SSAAnnotation); got != tc.ssa {
				t.Errorf("%s = %q, want %q", SSAAnnotation, got, tc.ssa)
			}
			switch {
			case tc.warning == "" && len(warns) != 0:
				t.Errorf("warnings: %v", warns)
			case tc.warning != "" && (len(warns) != 1 || !strings.Contains(warns[0].Message, tc.warning) || warns[0].Field != manifest.KeyPath("metadata.annotations", inventory.Hook)):
				t.Errorf("want one warning on %s saying %q, got %+v", inventory.Hook, tc.warning, warns)
			}
		})
	}
}
