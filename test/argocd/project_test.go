package argocd_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPluginProjectFileAtRepositoryRoot runs the documented layout through
// the real cmp-server: the project file at the repository root
// (inputs: [deploy], platform: openshift) and an Application whose path
// is deploy. The plugin finds the project file above the application
// folder, as git finds .git: the Kaoto gets a Route, not an Ingress.
func TestPluginProjectFileAtRepositoryRoot(t *testing.T) {
	startCMPServer(t)
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, ".wavesmith.yaml"), "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nmetadata: {name: platform}\nspec:\n  inputs: [deploy]\n  platform: openshift\n")
	appPath := filepath.Join(repo, "deploy")
	writeFile(t, filepath.Join(appPath, "kaoto.yaml"), "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: designer, namespace: demo}\nspec:\n  ingress: {}\n")
	writeFile(t, filepath.Join(repo, "other", "kaoto.yaml"), "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: other, namespace: demo}\nspec: {}\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// An Application of a folder the project file's inputs do not
	// concern: refused, naming the file, no manifests (never a sibling's).
	other := application{name: "other", namespace: "demo", sourcePath: "other", kubeVersion: "1.34.2"}.environ(t)
	if m, err := generate(ctx, repo, filepath.Join(repo, "other"), other); err == nil || !strings.Contains(err.Error(), "none is the application folder") {
		t.Errorf("path: other, project inputs [deploy]: %d manifests, error %v; want the refusal", len(m), err)
	}

	env := application{name: "designers", namespace: "demo", sourcePath: "deploy", kubeVersion: "1.34.2"}.environ(t)
	manifests, err := generate(ctx, repo, appPath, env)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, m := range manifests {
		docs = append(docs, []byte(m))
	}
	objs := objects(t, docs...)
	if n := countKind(objs, "route.openshift.io/v1", "Route"); n != 1 {
		t.Errorf("%d Routes, want 1: the project file's platform: openshift was not read", n)
	}
	if n := countKind(objs, "networking.k8s.io/v1", "Ingress"); n != 0 {
		t.Errorf("%d Ingresses, want none", n)
	}
}
