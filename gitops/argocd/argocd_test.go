package argocd_test

import (
	"bytes"
	"context"
	"errors"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/gitops/argocd"
	"github.com/wavesmith/wavesmith/gitops/engines"
	"github.com/wavesmith/wavesmith/internal/golden"
	"github.com/wavesmith/wavesmith/internal/load"
	"github.com/wavesmith/wavesmith/manifest"
	"github.com/wavesmith/wavesmith/render"
)

func renderDir(t *testing.T, dir string) *render.Result {
	t.Helper()
	objs, err := load.Inputs(context.Background(), "../..", builtin.Registry(), []string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := render.Render(context.Background(), objs, render.Options{Engines: engines.Dialects(), Root: "../..", Generators: builtin.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var testOptions = argocd.Options{RepoURL: "https://git.example.com/platform/deploy.git", Path: "clusters/prod/rendered"}

// TestGolden covers both layouts: the bundled examples and depends/ have
// Component dependencies (app of apps), nodeps/ has none (one
// Application).
func TestGolden(t *testing.T) {
	cases := map[string]struct {
		dir  string
		opts argocd.Options
	}{
		"examples": {"../../testdata/examples", testOptions},
		"depends":  {"testdata/depends", argocd.Options{Name: "shop", Namespace: "gitops", Project: "shop", RepoURL: "git@git.example.com:shop/deploy.git", TargetRevision: "v1.2.0", Path: "./rendered/", DestinationServer: "https://prod.example.com:6443"}},
		"nodeps":   {"testdata/nodeps", argocd.Options{RepoURL: "https://git.example.com/web.git", Path: ".", DestinationNamespace: "web"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files, err := argocd.Applications(renderDir(t, tc.dir).Plan(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, filepath.Join("testdata", name+".golden.yaml"), golden.JoinFiles(files))
		})
	}
}

type app struct {
	File, Name, Wave, Path string
}

// apps decodes the files and checks each is one Application with the
// tree header.
func apps(t *testing.T, files map[string][]byte) []app {
	t.Helper()
	var out []app
	for p, b := range files {
		if !bytes.HasPrefix(b, []byte(gitops.TreeHeader)) {
			t.Errorf("%s: no tree header", p)
		}
		objs, err := manifest.Decode(p, b)
		if err != nil || len(objs) != 1 {
			t.Fatalf("%s: %v (%d objects)", p, err, len(objs))
		}
		o := objs[0]
		if o.APIVersion() != argocd.APIVersion || o.Kind() != argocd.Kind {
			t.Errorf("%s: %s %s, want an Application", p, o.APIVersion(), o.Kind())
		}
		wave, _ := o.Annotation(argocd.SyncWave)
		spec, _ := o.Map["spec"].(map[string]any)
		src, _ := spec["source"].(map[string]any)
		srcPath, _ := src["path"].(string)
		out = append(out, app{File: p, Name: o.Name(), Wave: wave, Path: srcPath})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}

// TestAppOfApps checks the layout against the tree itself: one child per
// tree folder, pointing at it, in its spec's wave, and no kustomization
// in _argocd/apps/ (Argo CD reads it as a plain directory).
func TestAppOfApps(t *testing.T) {
	res := renderDir(t, "testdata/depends")
	files, err := argocd.Applications(res.Plan(), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	want := []app{
		{"_argocd/apps/wavesmith-infra-component-cache.yaml", "wavesmith-infra-component-cache", "-2", "clusters/prod/rendered/infra/component-cache"},
		{"_argocd/apps/wavesmith-objects.yaml", "wavesmith-objects", "-1", "clusters/prod/rendered/_objects"},
		{"_argocd/apps/wavesmith-shop-component-api.yaml", "wavesmith-shop-component-api", "1", "clusters/prod/rendered/shop/component-api"},
		{"_argocd/apps/wavesmith-shop-component-db.yaml", "wavesmith-shop-component-db", "0", "clusters/prod/rendered/shop/component-db"},
		{"_argocd/apps/wavesmith-shop-component-web.yaml", "wavesmith-shop-component-web", "5", "clusters/prod/rendered/shop/component-web"},
		{"_argocd/wavesmith.yaml", "wavesmith", "", "clusters/prod/rendered/_argocd/apps"},
	}
	got := apps(t, files)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	tree := res.Tree()
	for _, a := range got[:len(got)-1] {
		folder := strings.TrimPrefix(a.Path, testOptions.Path+"/")
		if _, ok := tree[folder+"/kustomization.yaml"]; !ok {
			t.Errorf("%s: source folder %s is not a folder of the tree", a.File, folder)
		}
	}
	var treeFolders []string
	for p := range tree {
		if d := path.Dir(p); d != "." && path.Base(p) == "kustomization.yaml" {
			treeFolders = append(treeFolders, d)
		}
	}
	if len(treeFolders) != len(got)-1 {
		t.Errorf("%d tree folders %v, %d child argocd.Applications", len(treeFolders), treeFolders, len(got)-1)
	}
	if _, ok := files[argocd.AppsDir+"/kustomization.yaml"]; ok {
		t.Error("_argocd/apps/ must be a plain directory")
	}
	for p := range files {
		if _, ok := tree[p]; ok {
			t.Errorf("%s replaces a file of the tree", p)
		}
	}
}

// TestWaveFollowsDependencies: a dependent's Application is after each of
// its dependencies', even when the dependency has a later wave of its own,
// and keeps its own wave (spec.wave) when that is later still.
func TestWaveFollowsDependencies(t *testing.T) {
	src := `apiVersion: wavesmith.io/v1alpha1
kind: Component
metadata: {name: NAME, namespace: ns ANNOTATIONS}
spec:
  source: {chart: {path: ../../testdata/charts/webapp}}
`
	comp := func(name, annotations, extra string) *manifest.Object {
		return decodeOne(t, strings.NewReplacer("NAME", name, " ANNOTATIONS", annotations).Replace(src)+extra)
	}
	res, err := render.Render(context.Background(), []*manifest.Object{
		comp("base", `, annotations: {wavesmith.io/apply-order: "7"}`, ""),
		comp("dep", "", "  dependsOn: [{name: base}]\n"),
		comp("late", "", "  wave: 20\n  dependsOn: [{name: dep}]\n"),
	}, render.Options{Engines: engines.Dialects(), Root: "../..", Generators: builtin.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	files, err := argocd.Applications(res.Plan(), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	waves := map[string]string{}
	for _, a := range apps(t, files) {
		waves[a.Name] = a.Wave
	}
	want := map[string]string{"wavesmith": "", "wavesmith-ns-component-base": "7", "wavesmith-ns-component-dep": "8", "wavesmith-ns-component-late": "20"}
	if diff := cmp.Diff(want, waves); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

func decodeOne(t *testing.T, s string) *manifest.Object {
	t.Helper()
	objs, err := manifest.Decode("test.yaml", []byte(s))
	if err != nil || len(objs) != 1 {
		t.Fatalf("%v (%d objects)", err, len(objs))
	}
	return objs[0]
}

func TestSingleApplication(t *testing.T) {
	files, err := argocd.Applications(renderDir(t, "testdata/nodeps").Plan(), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	want := []app{{"_argocd/wavesmith.yaml", "wavesmith", "", "clusters/prod/rendered"}}
	if diff := cmp.Diff(want, apps(t, files)); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

func TestDeterministic(t *testing.T) {
	first, err := argocd.Applications(renderDir(t, "../../testdata/examples").Plan(), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		again, err := argocd.Applications(renderDir(t, "../../testdata/examples").Plan(), testOptions)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, again); diff != "" {
			t.Fatalf("run %d differs:\n%s", i, diff)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	res := renderDir(t, "testdata/nodeps")
	cases := map[string]struct {
		opts argocd.Options
		want []string
	}{
		"NoRepoURL":      {argocd.Options{Path: "x"}, []string{"argocd.repo: is required"}},
		"NoPath":         {argocd.Options{RepoURL: "r"}, []string{"treePath: is required"}},
		"Neither":        {argocd.Options{}, []string{"argocd.repo: is required", "treePath: is required"}},
		"BlankPath":      {argocd.Options{RepoURL: "r", Path: "  "}, []string{"treePath: is required"}},
		"AbsolutePath":   {argocd.Options{RepoURL: "r", Path: "/abs"}, []string{`treePath: "/abs" must be a slash-separated path relative`}},
		"LeavingPath":    {argocd.Options{RepoURL: "r", Path: "a/../../b"}, []string{`treePath: "a/../../b" leaves the repository`}},
		"BadName":        {argocd.Options{RepoURL: "r", Path: "x", Name: "Wave_Smith"}, []string{`argocd.name: "Wave_Smith"`}},
		"BadNamespace":   {argocd.Options{RepoURL: "r", Path: "x", Namespace: "argo.cd"}, []string{`argocd.namespace: "argo.cd"`}},
		"BadDestination": {argocd.Options{RepoURL: "r", Path: "x", DestinationNamespace: "-x"}, []string{`argocd.destinationNamespace: "-x"`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files, err := argocd.Applications(res.Plan(), tc.opts)
			var oe *gitops.OptionError
			if !errors.Is(err, gitops.ErrOption) || !errors.As(err, &oe) {
				t.Fatalf("want a *gitops.OptionError, got %v", err)
			}
			if files != nil {
				t.Errorf("files returned with an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestEmptyResult(t *testing.T) {
	if _, err := argocd.Applications(&gitops.Plan{}, testOptions); !errors.Is(err, argocd.ErrTree) {
		t.Fatalf("want argocd.ErrTree, got %v", err)
	}
}

// TestDiscardObjects: the CLI renders with DiscardObjects (children keep
// only their YAML, key and wave); the argocd.Applications are the same.
func TestDiscardObjects(t *testing.T) {
	want, err := argocd.Applications(renderDir(t, "testdata/depends").Plan(), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := load.Inputs(context.Background(), "../..", builtin.Registry(), []string{"testdata/depends"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := render.Render(context.Background(), objs, render.Options{Engines: engines.Dialects(), Root: "../..", Generators: builtin.Registry(), DiscardObjects: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := argocd.Applications(res.Plan(), testOptions)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-full render +discarding render:\n%s", diff)
	}
}
