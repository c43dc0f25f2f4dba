package argocd

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/api/inventory"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/manifest"
)

// TestHookPhases: each native hook becomes its Argo CD hook phase; delete
// hooks run when the Application is deleted, never in a sync.
func TestHookPhases(t *testing.T) {
	order := 5
	cases := map[string]struct {
		hook      string
		purge     *int
		update    string
		phase     string
		deletePol string
	}{
		"PreInstall":       {inventory.HookPreInstall, nil, inventory.UpdateRecreate, "PreSync", "BeforeHookCreation"},
		"PostInstall":      {inventory.HookPostInstall, &order, inventory.UpdateSSAOverride, "PostSync", "HookSucceeded"},
		"InstallBoth":      {"post-install,pre-install", nil, inventory.UpdateSSAOverride, "PreSync", ""},
		"PreDelete":        {inventory.HookPreDelete, &order, inventory.UpdateRecreate, "PreDelete", "BeforeHookCreation,HookSucceeded"},
		"PostDelete":       {inventory.HookPostDelete, nil, inventory.UpdateSSAOverride, "PostDelete", ""},
		"InstallAndDelete": {"post-delete,pre-install", nil, inventory.UpdateSSAOverride, "PreSync,PostDelete", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := &manifest.Object{Map: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j", "namespace": "a"}}}
			lc := &gitops.Lifecycle{Hook: tc.hook, PurgeOrder: tc.purge, Update: tc.update, Delete: inventory.DeleteDelete,
				Adoption: inventory.AdoptionIfUnowned, Reconcile: inventory.ReconcileOnce, Explicit: map[string]bool{}}
			if w := (Engine{}).Annotate(obj, lc); len(w) != 0 {
				t.Errorf("warnings: %v", w)
			}
			got, _ := obj.Annotation(Hook)
			gotPol, _ := obj.Annotation(HookDeletePolicy)
			if diff := cmp.Diff([]string{tc.phase, tc.deletePol}, []string{got, gotPol}); diff != "" {
				t.Errorf("-want +got (hook, hook-delete-policy):\n%s", diff)
			}
		})
	}
}

// TestMergeSyncOptions: the object's own options come first and win;
// options added share no key, whether the object had options or not.
func TestMergeSyncOptions(t *testing.T) {
	cases := map[string]struct {
		own  string // "": none
		add  []string
		want string
	}{
		"none":             {"", []string{"ServerSideApply=true"}, "ServerSideApply=true"},
		"two":              {"", []string{"Replace=true", "Force=true"}, "Replace=true,Force=true"},
		"same key twice":   {"", []string{"Prune=false", "Prune=true"}, "Prune=false"},
		"own first":        {"Validate=false", []string{"ServerSideApply=true"}, "Validate=false,ServerSideApply=true"},
		"own wins":         {"ServerSideApply=false", []string{"ServerSideApply=true"}, "ServerSideApply=false"},
		"own spaces":       {" Validate=false , ", []string{"Prune=false"}, "Validate=false,Prune=false"},
		"nothing to write": {"", nil, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			o := manifest.New(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}})
			if c.own != "" {
				o.SetAnnotation(SyncOptions, c.own)
			}
			mergeSyncOptions(o, c.add)
			got, _ := o.Annotation(SyncOptions)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("sync-options (-want +got):\n%s", diff)
			}
		})
	}
}
