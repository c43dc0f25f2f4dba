package argocd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/app/discovery"
	"github.com/argoproj/argo-cd/v3/util/cmp"
	utilio "github.com/argoproj/argo-cd/v3/util/io"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"github.com/google/go-cmp/cmp/cmpopts"
	grpc_retry "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/test/testkit"
)

// pluginName is metadata.name in kustomize/argocd/plugin.yaml: the socket
// is <name>.sock and Applications name the plugin so.
const pluginName = "wavesmith"

// cmpServer is a running argocd-cmp-server serving the real plugin.yaml.
type cmpServer struct {
	// env is the server's whole environment; the plugin inherits it.
	env []string
	// wavesmith is WAVESMITH_BIN, the binary the plugin runs.
	wavesmith string
	logs      *testkit.LockedBuffer
}

// startCMPServer starts bin/argocd-cmp-server as the sidecar would: with the
// repository's kustomize/argocd/plugin.yaml as its configuration, and a
// controlled environment whose PATH holds only the folder of WAVESMITH_BIN.
// It points the Argo CD client packages at its socket folder, and kills it
// (SIGKILL: it ignores SIGTERM) when the test ends.
func startCMPServer(t *testing.T) *cmpServer {
	t.Helper()
	server := tool(t, "ARGOCD_CMP_SERVER_BIN", "make -C ../.. bin/argocd-cmp-server, or: cd test/argocd && go build -o ../../bin/argocd-cmp-server ./cmd/argocd-cmp-server")
	ws := tool(t, "WAVESMITH_BIN", "make -C ../.. build")
	if filepath.Base(ws) != "wavesmith" {
		t.Fatalf("WAVESMITH_BIN=%s: plugin.yaml runs \"wavesmith\" from PATH, so the binary must be named wavesmith", ws)
	}

	config := t.TempDir()
	copyFile(t, filepath.Join(repoRoot, "kustomize", "argocd", "plugin.yaml"), filepath.Join(config, "plugin.yaml"))
	// Unix socket paths are limited to 108 bytes: keep the folder short.
	sock, err := os.MkdirTemp("", "cmp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	work := t.TempDir()

	s := &cmpServer{
		env: []string{
			"PATH=" + filepath.Dir(ws),
			"HOME=" + work,
			"TMPDIR=" + work,
			"ARGOCD_PLUGINSOCKFILEPATH=" + sock,
			"ARGOCD_CMP_WORKDIR=" + work,
		},
		wavesmith: ws,
		logs:      &testkit.LockedBuffer{},
	}
	cmd := exec.Command(server, "--config-dir-path", config, "--logformat", "text", "--loglevel", "info")
	cmd.Env = s.env
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", server, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("argocd-cmp-server log:\n%s", s.logs)
		}
	})

	socket := filepath.Join(sock, pluginName+".sock")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if fi, err := os.Stat(socket); err == nil && fi.Mode()&os.ModeSocket != 0 {
			break
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("argocd-cmp-server exited before serving %s: %v\n%s", socket, err, s.logs)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("argocd-cmp-server did not create %s within 60 s:\n%s", socket, s.logs)
		}
	}
	// discovery.DetectConfigManagementPlugin finds plugins here.
	t.Setenv("ARGOCD_PLUGINSOCKFILEPATH", sock)
	return s
}

// application is what argocd-repo-server knows of an Application when it
// calls a plugin.
type application struct {
	name, namespace, sourcePath string
	kubeVersion                 string
	apiVersions                 []string
	plugin                      v1alpha1.ApplicationSourcePlugin
}

// environ builds the plugin's environment as argocd-repo-server does
// (reposerver/repository newEnv and getPluginEnvs): the ARGOCD_APP_*
// variables, KUBE_VERSION, KUBE_API_VERSIONS, ARGOCD_ENV_<name> for each
// plugin env entry (with $VAR expanded), then ARGOCD_APP_PARAMETERS and
// PARAM_* from the plugin parameters.
func (a application) environ(t *testing.T) []string {
	t.Helper()
	const revision = "0123456789abcdef0123456789abcdef01234567"
	env := v1alpha1.Env{
		{Name: "ARGOCD_APP_NAME", Value: a.name},
		{Name: "ARGOCD_APP_NAMESPACE", Value: a.namespace},
		{Name: "ARGOCD_APP_PROJECT_NAME", Value: "default"},
		{Name: "ARGOCD_APP_REVISION", Value: revision},
		{Name: "ARGOCD_APP_REVISION_SHORT", Value: revision[:7]},
		{Name: "ARGOCD_APP_REVISION_SHORT_8", Value: revision[:8]},
		{Name: "ARGOCD_APP_SOURCE_REPO_URL", Value: "https://git.example.com/platform/apps.git"},
		{Name: "ARGOCD_APP_SOURCE_PATH", Value: a.sourcePath},
		{Name: "ARGOCD_APP_SOURCE_TARGET_REVISION", Value: "main"},
	}
	vars := env.Environ()
	vars = append(vars, "KUBE_VERSION="+a.kubeVersion, "KUBE_API_VERSIONS="+strings.Join(a.apiVersions, ","))
	parsed := make(v1alpha1.Env, len(vars))
	for i, v := range vars {
		e, err := v1alpha1.NewEnvEntry(v)
		if err != nil {
			t.Fatal(err)
		}
		parsed[i] = e
	}
	for _, e := range a.plugin.Env {
		vars = append(vars, fmt.Sprintf("ARGOCD_ENV_%s=%s", e.Name, parsed.Envsubst(e.Value)))
	}
	params, err := a.plugin.Parameters.Environ()
	if err != nil {
		t.Fatal(err)
	}
	return append(vars, params...)
}

// generate asks the plugin for the manifests of appPath inside repo, as
// argocd-repo-server does for an Application naming the plugin
// (runConfigManagementPluginSidecars, generateManifestsCMP).
func generate(ctx context.Context, repo, appPath string, env []string) ([]string, error) {
	conn, client, err := discovery.DetectConfigManagementPlugin(ctx, appPath, repo, pluginName, env, nil)
	if err != nil {
		return nil, fmt.Errorf("detecting the plugin: %w", err)
	}
	defer utilio.Close(conn)
	stream, err := client.GenerateManifest(ctx, grpc_retry.Disable())
	if err != nil {
		return nil, fmt.Errorf("opening the stream: %w", err)
	}
	if err := cmp.SendRepoStream(stream.Context(), appPath, repo, stream, env, nil); err != nil {
		return nil, fmt.Errorf("sending the repository: %w", err)
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		return nil, err
	}
	return resp.GetManifests(), nil
}

// render runs "$WAVESMITH_BIN render" in appPath with the server's and
// the application's environment: what the plugin runs, without Argo CD.
func (s *cmpServer) render(t *testing.T, appPath string, env []string) []byte {
	t.Helper()
	cmd := exec.Command(s.wavesmith, "render")
	cmd.Dir = appPath
	cmd.Env = append(append([]string(nil), s.env...), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s render in %s: %v\n%s", s.wavesmith, appPath, err, stderr.String())
	}
	return stdout.Bytes()
}

// objects parses manifests the way argocd-repo-server reads a plugin's
// output (kube.SplitYAML).
func objects(t *testing.T, docs ...[]byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range docs {
		us, err := kube.SplitYAML(d)
		if err != nil {
			t.Fatalf("parsing manifests: %v\n%s", err, d)
		}
		for _, u := range us {
			out = append(out, u.Object)
		}
	}
	return out
}

// exampleRepo copies testdata/examples into a new repository root, with the
// charts and kustomizations its Components use (../charts, ../kustomizations),
// and returns the root and the application folder.
func exampleRepo(t *testing.T) (root, appPath string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "repo")
	for _, d := range []string{"examples", "charts", "kustomizations"} {
		copyDir(t, filepath.Join(repoRoot, "testdata", d), filepath.Join(root, "testdata", d))
	}
	return root, filepath.Join(root, "testdata", "examples")
}

func str(s string) *string { return &s }

func find(objs []map[string]any, apiVersion, kind, namespace, name string) map[string]any {
	for _, o := range objs {
		md, _ := o["metadata"].(map[string]any)
		if o["apiVersion"] == apiVersion && o["kind"] == kind && md["namespace"] == namespace && md["name"] == name {
			return o
		}
	}
	return nil
}

func countKind(objs []map[string]any, apiVersion, kind string) int {
	n := 0
	for _, o := range objs {
		if o["apiVersion"] == apiVersion && o["kind"] == kind {
			n++
		}
	}
	return n
}

func TestPluginGenerate(t *testing.T) {
	srv := startCMPServer(t)
	repo, appPath := exampleRepo(t)
	kubernetes := []string{"apps/v1", "networking.k8s.io/v1", "v1"}
	openshift := []string{"apps/v1", "networking.k8s.io/v1", "route.openshift.io/v1", "route.openshift.io/v1/Route", "v1"}
	const routeAPI, ingressAPI = "route.openshift.io/v1", "networking.k8s.io/v1"

	cases := map[string]struct {
		reason      string
		apiVersions []string
		plugin      v1alpha1.ApplicationSourcePlugin
		// wantRoutes: Routes and no Ingresses; else the reverse.
		wantRoutes bool
		// annotations wanted on Deployment demo/designer ("" = absent).
		want map[string]string
	}{
		"Defaults": {
			reason:      "no parameters: Ingresses, both dialects, the built-in policies",
			apiVersions: kubernetes,
			want: map[string]string{
				"wavesmith.io/update-policy":        "ssa-override",
				"wavesmith.io/delete-policy":        "delete",
				"argocd.argoproj.io/sync-options":   "ServerSideApply=true",
				"kustomize.toolkit.fluxcd.io/ssa":   "",
				"kustomize.toolkit.fluxcd.io/prune": "",
			},
		},
		"KubeAPIVersions": {
			reason:      "route.openshift.io/v1 in KUBE_API_VERSIONS means OpenShift",
			apiVersions: openshift,
			wantRoutes:  true,
		},
		"ParameterPlatform": {
			reason:      "the platform parameter (ARGOCD_APP_PARAMETERS) chooses Routes",
			apiVersions: kubernetes,
			plugin: v1alpha1.ApplicationSourcePlugin{Parameters: v1alpha1.ApplicationSourcePluginParameters{
				{Name: "platform", String_: str("openshift")},
			}},
			wantRoutes: true,
		},
		"EnvPlatform": {
			reason:      "ARGOCD_ENV_PLATFORM chooses Routes",
			apiVersions: kubernetes,
			plugin:      v1alpha1.ApplicationSourcePlugin{Env: v1alpha1.Env{{Name: "PLATFORM", Value: "openshift"}}},
			wantRoutes:  true,
		},
		"ParameterBeatsEnv": {
			reason:      "a parameter wins over an env entry, which wins over KUBE_API_VERSIONS",
			apiVersions: openshift,
			plugin: v1alpha1.ApplicationSourcePlugin{
				Env: v1alpha1.Env{{Name: "PLATFORM", Value: "openshift"}, {Name: "UPDATE_POLICY", Value: "replace"}},
				Parameters: v1alpha1.ApplicationSourcePluginParameters{
					{Name: "platform", String_: str("kubernetes")},
					{Name: "update-policy", String_: str("ssa-merge")},
				},
			},
			want: map[string]string{"wavesmith.io/update-policy": "ssa-merge"},
		},
		"Policies": {
			reason:      "policies and wave from parameters and env entries, in both dialects",
			apiVersions: kubernetes,
			plugin: v1alpha1.ApplicationSourcePlugin{
				Env:        v1alpha1.Env{{Name: "DELETE_POLICY", Value: "orphan"}, {Name: "WAVE", Value: "3"}},
				Parameters: v1alpha1.ApplicationSourcePluginParameters{{Name: "update-policy", String_: str("ssa-merge")}},
			},
			want: map[string]string{
				"wavesmith.io/update-policy":        "ssa-merge",
				"wavesmith.io/delete-policy":        "orphan",
				"argocd.argoproj.io/sync-options":   "ServerSideApply=true,Prune=false,Delete=false",
				"kustomize.toolkit.fluxcd.io/ssa":   "Merge",
				"kustomize.toolkit.fluxcd.io/prune": "Disabled",
			},
		},
		"Dialects": {
			reason:      "the dialects parameter as an array: Argo CD's annotations only",
			apiVersions: kubernetes,
			plugin: v1alpha1.ApplicationSourcePlugin{Parameters: v1alpha1.ApplicationSourcePluginParameters{
				{Name: "dialects", OptionalArray: &v1alpha1.OptionalArray{Array: []string{"argocd"}}},
				{Name: "update-policy", String_: str("ssa-merge")},
			}},
			want: map[string]string{
				"wavesmith.io/update-policy":      "ssa-merge",
				"argocd.argoproj.io/sync-options": "ServerSideApply=true",
				"kustomize.toolkit.fluxcd.io/ssa": "",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := application{
				name: "examples-" + strings.ToLower(name), namespace: "apps", sourcePath: "testdata/examples",
				kubeVersion: "1.34.2", apiVersions: tc.apiVersions, plugin: tc.plugin,
			}.environ(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			manifests, err := generate(ctx, repo, appPath, env)
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			docs := make([][]byte, len(manifests))
			for i, m := range manifests {
				docs[i] = []byte(m)
			}
			got := objects(t, docs...)
			want := objects(t, srv.render(t, appPath, env))
			if len(want) == 0 {
				t.Fatalf("%s: wavesmith rendered nothing", tc.reason)
			}
			if diff := gocmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: the plugin's manifests differ from 'wavesmith render' (-render +plugin):\n%s", tc.reason, diff)
			}

			routes, ingresses := countKind(got, routeAPI, "Route"), countKind(got, ingressAPI, "Ingress")
			if tc.wantRoutes && (routes == 0 || ingresses != 0) {
				t.Errorf("%s: %d Routes and %d Ingresses, want Routes only", tc.reason, routes, ingresses)
			}
			if !tc.wantRoutes && (routes != 0 || ingresses == 0) {
				t.Errorf("%s: %d Routes and %d Ingresses, want Ingresses only", tc.reason, routes, ingresses)
			}
			if len(tc.want) > 0 {
				dep := find(got, "apps/v1", "Deployment", "demo", "designer")
				if dep == nil {
					t.Fatalf("%s: no Deployment demo/designer", tc.reason)
				}
				md, _ := dep["metadata"].(map[string]any)
				ann, _ := md["annotations"].(map[string]any)
				gotAnn := map[string]string{}
				for k := range tc.want {
					if v, ok := ann[k].(string); ok {
						gotAnn[k] = v
					} else {
						gotAnn[k] = ""
					}
				}
				if diff := gocmp.Diff(tc.want, gotAnn); diff != "" {
					t.Errorf("%s: annotations of Deployment demo/designer (-want +got):\n%s", tc.reason, diff)
				}
			}
		})
	}
}

func TestPluginErrors(t *testing.T) {
	startCMPServer(t)
	cases := map[string]struct {
		reason string
		files  map[string]string
		plugin v1alpha1.ApplicationSourcePlugin
		// want are parts of the error Argo CD shows.
		want []string
	}{
		"UnknownField": {
			reason: "a spec with an unknown field fails the render",
			files: map[string]string{
				"kaoto.yaml": "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: a, namespace: n}\nspec:\n  imagee: x\n",
			},
			want: []string{"wavesmith (argocd app broken): error:", "kaoto.yaml:5", "spec.imagee"},
		},
		"MalformedYAML": {
			reason: "a spec that is not YAML still selects the plugin, and fails the render",
			files: map[string]string{
				"ok.yaml":    "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: a, namespace: n}\n",
				"kaoto.yaml": "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: [\n",
			},
			want: []string{"wavesmith (argocd app broken): error:", "kaoto.yaml:"},
		},
		"UnknownParameter": {
			reason: "a parameter wavesmith does not know is an error",
			files: map[string]string{
				"kaoto.yaml": "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: a, namespace: n}\n",
			},
			plugin: v1alpha1.ApplicationSourcePlugin{Parameters: v1alpha1.ApplicationSourcePluginParameters{
				{Name: "plattform", String_: str("openshift")},
			}},
			want: []string{"ARGOCD_APP_PARAMETERS", `unknown parameter "plattform"`},
		},
		"BadEnv": {
			reason: "a bad env entry names its variable",
			files: map[string]string{
				"kaoto.yaml": "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: a, namespace: n}\n",
			},
			plugin: v1alpha1.ApplicationSourcePlugin{Env: v1alpha1.Env{{Name: "UPDATE_POLICY", Value: "sometimes"}}},
			want:   []string{"ARGOCD_ENV_UPDATE_POLICY", "sometimes"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			repo := t.TempDir()
			appPath := filepath.Join(repo, "apps", "broken")
			for f, content := range tc.files {
				writeFile(t, filepath.Join(appPath, f), content)
			}
			env := application{name: "broken", namespace: "apps", sourcePath: "apps/broken", kubeVersion: "1.34.2", plugin: tc.plugin}.environ(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			manifests, err := generate(ctx, repo, appPath, env)
			if err == nil {
				t.Fatalf("%s: no error; manifests: %q", tc.reason, manifests)
			}
			if len(manifests) != 0 {
				t.Errorf("%s: manifests came with the error: %q", tc.reason, manifests)
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: error lacks %q:\n%v", tc.reason, s, err)
				}
			}
		})
	}
}

func TestPluginDiscovery(t *testing.T) {
	startCMPServer(t)
	cases := map[string]struct {
		reason string
		files  map[string]string
		want   bool
	}{
		"Kaoto":     {"a Kaoto in a subfolder", map[string]string{"sub/kaoto.yaml": "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: a}\n"}, true},
		"Component": {"a Component in JSON", map[string]string{"c.json": `{"apiVersion": "wavesmith.io/v1alpha1", "kind": "Component", "metadata": {"name": "c"}}`}, true},
		"Marker":    {"the .wavesmith.yaml marker alone", map[string]string{".wavesmith.yaml": "# wavesmith renders this folder\n", "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}, true},
		"Broken":    {"a spec that does not parse", map[string]string{"k.yaml": "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: [\n"}, true},
		"Plain":     {"plain manifests are not wavesmith's", map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}, false},
		"OtherKind": {"another group's Component", map[string]string{"c.yaml": "apiVersion: example.com/v1\nkind: Component\nmetadata: {name: a}\n"}, false},
		"Hidden":    {"specs in hidden folders do not count", map[string]string{".github/k.yaml": "apiVersion: designer.kaoto.io/v1alpha1\nkind: Kaoto\nmetadata: {name: a}\n", "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}, false},
		"Kustomize": {"a kustomization without specs", map[string]string{"kustomization.yaml": "resources: [cm.yaml]\n", "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			repo := t.TempDir()
			appPath := filepath.Join(repo, "apps", "app")
			writeFile(t, filepath.Join(repo, "README.md"), "a repository\n")
			for f, content := range tc.files {
				writeFile(t, filepath.Join(appPath, f), content)
			}
			env := application{name: "app", namespace: "apps", sourcePath: "apps/app", kubeVersion: "1.34.2"}.environ(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			// An Application without a plugin name: the repo-server asks
			// every plugin whether it takes the folder.
			conn, _, err := discovery.DetectConfigManagementPlugin(ctx, appPath, repo, "", env, nil)
			if err == nil {
				utilio.Close(conn)
			}
			if got := err == nil; got != tc.want {
				t.Errorf("%s: DetectConfigManagementPlugin found the plugin: %v, want %v (err %v)", tc.reason, got, tc.want, err)
			}
			// The source type the repo-server derives from it.
			wantType := "Directory"
			if tc.want {
				wantType = string(v1alpha1.ApplicationSourceTypePlugin)
			} else if _, ok := tc.files["kustomization.yaml"]; ok {
				wantType = string(v1alpha1.ApplicationSourceTypeKustomize)
			}
			gotType, err := discovery.AppType(ctx, appPath, repo, map[string]bool{}, nil, env)
			if err != nil {
				t.Fatal(err)
			}
			if gotType != wantType {
				t.Errorf("%s: AppType %q, want %q", tc.reason, gotType, wantType)
			}
		})
	}
}

// TestPluginNamedNeedsDiscovery documents Argo CD's rule: with discovery
// configured, even an Application naming the plugin needs a folder the
// discovery matches.
func TestPluginNamedNeedsDiscovery(t *testing.T) {
	startCMPServer(t)
	repo := t.TempDir()
	appPath := filepath.Join(repo, "app")
	writeFile(t, filepath.Join(appPath, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	env := application{name: "plain", namespace: "apps", sourcePath: "app"}.environ(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := generate(ctx, repo, appPath, env)
	if err == nil || !strings.Contains(err.Error(), "could not find cmp-server plugin") {
		t.Errorf("a folder without specs or %s: err %v, want the plugin not found", ".wavesmith.yaml", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Error("timed out")
	}
}

// TestPluginParameters asks the plugin for its parameter announcement, as
// argocd-repo-server does for the UI (populatePluginAppDetails), and sets
// every announced parameter on an Application: plugin.yaml announces
// exactly what wavesmith accepts.
func TestPluginParameters(t *testing.T) {
	startCMPServer(t)
	repo, appPath := exampleRepo(t)
	env := application{name: "examples", namespace: "apps", sourcePath: "testdata/examples", kubeVersion: "1.34.2"}.environ(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	conn, client, err := discovery.DetectConfigManagementPlugin(ctx, appPath, repo, pluginName, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer utilio.Close(conn)
	stream, err := client.GetParametersAnnouncement(ctx, grpc_retry.Disable())
	if err != nil {
		t.Fatal(err)
	}
	if err := cmp.SendRepoStream(stream.Context(), appPath, repo, stream, env, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		t.Fatal(err)
	}

	type announced struct{ Name, CollectionType string }
	var got []announced
	for _, p := range resp.GetParameterAnnouncements() {
		got = append(got, announced{p.Name, p.CollectionType})
		if p.Title == "" || p.Tooltip == "" {
			t.Errorf("parameter %s has no title or tooltip", p.Name)
		}
		if p.String_ != "" || len(p.Array) > 0 || len(p.Map) > 0 {
			t.Errorf("parameter %s announces a default value: it would hide ARGOCD_ENV_ entries once the UI sends it", p.Name)
		}
	}
	want := []announced{
		{"platform", ""}, {"dialects", "array"}, {"wave", ""}, {"adoption-policy", ""},
		{"update-policy", ""}, {"delete-policy", ""}, {"reconcile-policy", ""}, {"timeout", ""},
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("announced parameters (-want +got):\n%s", diff)
	}

	// Every announced parameter set at once is accepted.
	samples := map[string]string{
		"platform": "openshift", "wave": "1", "adoption-policy": "always", "update-policy": "replace",
		"delete-policy": "orphan", "reconcile-policy": "once", "timeout": "90s",
	}
	var params v1alpha1.ApplicationSourcePluginParameters
	for _, p := range resp.GetParameterAnnouncements() {
		if p.CollectionType == "array" {
			params = append(params, v1alpha1.ApplicationSourcePluginParameter{Name: p.Name, OptionalArray: &v1alpha1.OptionalArray{Array: []string{"argocd"}}})
			continue
		}
		v, ok := samples[p.Name]
		if !ok {
			t.Fatalf("no sample value for parameter %s", p.Name)
		}
		params = append(params, v1alpha1.ApplicationSourcePluginParameter{Name: p.Name, String_: str(v)})
	}
	env = application{
		name: "examples", namespace: "apps", sourcePath: "testdata/examples", kubeVersion: "1.34.2",
		plugin: v1alpha1.ApplicationSourcePlugin{Parameters: params},
	}.environ(t)
	manifests, err := generate(ctx, repo, appPath, env)
	if err != nil {
		t.Fatalf("every announced parameter set: %v", err)
	}
	if len(manifests) == 0 {
		t.Fatal("every announced parameter set: no manifests")
	}
}
