package argocd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	gocmp "github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

const (
	// argocdModule is the Argo CD this module builds against; its
	// manifests/install.yaml is the install the kustomize test builds.
	argocdModule  = "github.com/argoproj/argo-cd/v3"
	argocdVersion = "v3.2.11"
	// The documented install's remote entries, which the test replaces
	// with local copies (no network).
	installURL   = "https://raw.githubusercontent.com/argoproj/argo-cd/" + argocdVersion + "/manifests/install.yaml"
	componentURL = "github.com/wavesmith/wavesmith/kustomize/argocd?ref=main"
)

// argocdInstall returns the path of manifests/install.yaml in the Argo CD
// module of this module's build list (go mod download).
func argocdInstall(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command finds Argo CD's install.yaml in the module cache: %v", err)
	}
	cmd := exec.Command(goBin, "mod", "download", "-json", argocdModule)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s%s", cmd, err, stdout.String(), stderr.String())
	}
	var mod struct{ Version, Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &mod); err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	if mod.Error != "" || mod.Version != argocdVersion || mod.Dir == "" {
		t.Fatalf("%s: version %q in %q (%s); want %s", cmd, mod.Version, mod.Dir, mod.Error, argocdVersion)
	}
	return filepath.Join(mod.Dir, "manifests", "install.yaml")
}

// documentedInstall is the kustomization that kustomize/argocd's
// kustomization.yaml tells users to write (its indented comment block),
// with the remote entries replaced by the local install and component.
func documentedInstall(t *testing.T, install, component string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "kustomize", "argocd", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if s, ok := strings.CutPrefix(l, "#   "); ok {
			lines = append(lines, s)
		}
	}
	doc := strings.Join(lines, "\n") + "\n"
	for _, s := range []string{installURL, componentURL} {
		if !strings.Contains(doc, s) {
			t.Fatalf("kustomize/argocd/kustomization.yaml documents no install with %s:\n%s", s, doc)
		}
	}
	doc = strings.Replace(doc, componentURL, component, 1)
	return strings.Replace(doc, installURL, install, 1)
}

// kustomizeBuild builds dir with the real kustomize and returns the
// objects by Kind/name.
func kustomizeBuild(t *testing.T, kustomize, dir string) map[string]*unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command(kustomize, "build", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", dir, err, stderr.String())
	}
	objs, err := kube.SplitYAML(stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		out[o.GetKind()+"/"+o.GetName()] = o
	}
	return out
}

// TestKustomizeInstall builds the documented install (Argo CD's
// install.yaml of v3.2.11 under resources, kustomize/argocd under
// components, namespace argocd) with the real kustomize, and compares it
// with the same install without the component: the repo-server gains the
// wavesmith sidecar and the plugin's ConfigMap as a volume, argocd-cm gains
// the health checks, the plugin's ConfigMap is added, and nothing else
// changes.
func TestKustomizeInstall(t *testing.T) {
	kustomize := tool(t, "KUSTOMIZE_BIN", "make -C ../.. bin/kustomize")
	work := t.TempDir()
	site := filepath.Join(work, "site")
	copyFile(t, argocdInstall(t), filepath.Join(site, "install.yaml"))
	writeFile(t, filepath.Join(site, "kustomization.yaml"), documentedInstall(t, "install.yaml", componentFrom(t, site)))
	got := kustomizeBuild(t, kustomize, site)
	plain := filepath.Join(work, "plain")
	copyFile(t, filepath.Join(site, "install.yaml"), filepath.Join(plain, "install.yaml"))
	writeFile(t, filepath.Join(plain, "kustomization.yaml"), "resources:\n- install.yaml\nnamespace: argocd\n")
	base := kustomizeBuild(t, kustomize, plain)

	// One object more, the plugin's ConfigMap: plugin.yaml under a name
	// with a content hash, in argocd.
	var pluginCM corev1.ConfigMap
	for id, o := range got {
		if _, ok := base[id]; ok {
			continue
		}
		if o.GetKind() != "ConfigMap" || !strings.HasPrefix(o.GetName(), "wavesmith-cmp-plugin-") || pluginCM.Name != "" {
			t.Errorf("the component adds %s", id)
			continue
		}
		convert(t, o, &pluginCM)
	}
	for id := range base {
		if got[id] == nil {
			t.Errorf("the component drops %s", id)
		}
	}
	plugin, err := os.ReadFile(filepath.Join(repoRoot, "kustomize", "argocd", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if pluginCM.Name == "" || pluginCM.Namespace != "argocd" {
		t.Fatalf("plugin ConfigMap %s/%s: want wavesmith-cmp-plugin-<hash> in argocd", pluginCM.Namespace, pluginCM.Name)
	}
	if diff := gocmp.Diff(map[string]string{"plugin.yaml": string(plugin)}, pluginCM.Data); diff != "" {
		t.Errorf("plugin ConfigMap differs from plugin.yaml (-want +got):\n%s", diff)
	}

	// Every object but the two the component patches is as without it.
	for id, o := range base {
		if id == "Deployment/argocd-repo-server" || id == "ConfigMap/argocd-cm" || got[id] == nil {
			continue
		}
		if diff := gocmp.Diff(o.Object, got[id].Object); diff != "" {
			t.Errorf("the component changes %s (-without +with):\n%s", id, diff)
		}
	}

	checkRepoServer(t, base["Deployment/argocd-repo-server"], got["Deployment/argocd-repo-server"], pluginCM.Name)
	checkArgoCDConfigMap(t, base["ConfigMap/argocd-cm"], got["ConfigMap/argocd-cm"])
}

// checkRepoServer: the repo-server gains the sidecar, as Argo CD documents
// plugin sidecars, and the volumes it alone mounts; its own containers
// are as they were.
func checkRepoServer(t *testing.T, baseObj, gotObj *unstructured.Unstructured, pluginCM string) {
	t.Helper()
	if baseObj == nil || gotObj == nil {
		t.Fatal("no Deployment argocd-repo-server in the build")
	}
	var base, dep appsv1.Deployment
	convert(t, baseObj, &base)
	convert(t, gotObj, &dep)
	spec := dep.Spec.Template.Spec
	var sidecar corev1.Container
	var others []corev1.Container
	for _, c := range spec.Containers {
		if c.Name == "wavesmith" {
			sidecar = c
		} else {
			others = append(others, c)
		}
	}
	if diff := gocmp.Diff(base.Spec.Template.Spec.Containers, others); diff != "" {
		t.Errorf("the repo-server's own containers changed (-without +with):\n%s", diff)
	}
	if diff := gocmp.Diff(base.Spec.Template.Spec.InitContainers, spec.InitContainers); diff != "" {
		t.Errorf("the repo-server's init containers changed (-without +with):\n%s", diff)
	}
	want := corev1.Container{
		Name:    "wavesmith",
		Image:   "ghcr.io/wavesmith/wavesmith:0.1.0",
		Command: []string{"/var/run/argocd/argocd-cmp-server"},
		Env:     []corev1.EnvVar{{Name: "PATH", Value: "/"}, {Name: "HOME", Value: "/tmp"}},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			RunAsUser:                ptr.To[int64](999),
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "var-files", MountPath: "/var/run/argocd"},
			{Name: "plugins", MountPath: "/home/argocd/cmp-server/plugins"},
			{Name: "wavesmith-plugin", MountPath: "/home/argocd/cmp-server/config/plugin.yaml", SubPath: "plugin.yaml"},
			{Name: "wavesmith-tmp", MountPath: "/tmp"},
		},
	}
	if diff := gocmp.Diff(want, sidecar); diff != "" {
		t.Errorf("sidecar (-want +got):\n%s", diff)
	}
	volumes := map[string]corev1.VolumeSource{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v.VolumeSource
	}
	wantVolumes := map[string]corev1.VolumeSource{
		"wavesmith-plugin": {ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: pluginCM}}},
		"wavesmith-tmp":    {EmptyDir: &corev1.EmptyDirVolumeSource{}},
	}
	for _, v := range base.Spec.Template.Spec.Volumes {
		wantVolumes[v.Name] = v.VolumeSource
	}
	if diff := gocmp.Diff(wantVolumes, volumes); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	// The volumes the sidecar shares with the repo-server come from
	// Argo CD's install: var-files (where its init container copies
	// argocd-cmp-server) and plugins (the sockets).
	for _, name := range []string{"var-files", "plugins"} {
		if _, ok := volumes[name]; !ok {
			t.Errorf("Argo CD's install has no volume %s for the sidecar", name)
		}
	}
	if len(base.Spec.Template.Spec.InitContainers) == 0 || !strings.Contains(strings.Join(base.Spec.Template.Spec.InitContainers[0].Command, " "), "/var/run/argocd/argocd-cmp-server") {
		t.Errorf("Argo CD's install does not copy argocd-cmp-server to /var/run/argocd: %+v", base.Spec.Template.Spec.InitContainers)
	}
}

// checkArgoCDConfigMap: argocd-cm keeps Argo CD's data and labels and
// gains exactly the entries of argocd-cm-patch.yaml.
func checkArgoCDConfigMap(t *testing.T, baseObj, gotObj *unstructured.Unstructured) {
	t.Helper()
	if baseObj == nil || gotObj == nil {
		t.Fatal("no ConfigMap argocd-cm in the build")
	}
	var base, cm, patch corev1.ConfigMap
	convert(t, baseObj, &base)
	convert(t, gotObj, &cm)
	b, err := os.ReadFile(filepath.Join(repoRoot, "kustomize", "argocd", "argocd-cm-patch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &patch); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for k, v := range base.Data {
		want[k] = v
	}
	var added []string
	for k, v := range patch.Data {
		if _, ok := want[k]; ok {
			t.Errorf("argocd-cm-patch.yaml replaces Argo CD's %s", k)
		}
		want[k] = v
		added = append(added, k)
	}
	sort.Strings(added)
	wantAdded := []string{
		"resource.customizations.health.argoproj.io_Application",
		"resource.customizations.health.designer.kaoto.io_Kaoto",
		"resource.customizations.health.wavesmith.io_Component",
	}
	if diff := gocmp.Diff(wantAdded, added); diff != "" {
		t.Errorf("health checks in argocd-cm-patch.yaml (-want +got):\n%s", diff)
	}
	if diff := gocmp.Diff(want, cm.Data); diff != "" {
		t.Errorf("argocd-cm data (-want +got):\n%s", diff)
	}
	if diff := gocmp.Diff(base.Labels, cm.Labels); diff != "" {
		t.Errorf("argocd-cm labels (-without +with):\n%s", diff)
	}
}

// TestKustomizeNotAResource shows why kustomize/argocd is a Component:
// listed under resources, kustomize refuses it.
func TestKustomizeNotAResource(t *testing.T) {
	kustomize := tool(t, "KUSTOMIZE_BIN", "make -C ../.. bin/kustomize")
	site := t.TempDir()
	writeFile(t, filepath.Join(site, "kustomization.yaml"), "resources:\n- "+componentFrom(t, site)+"\nnamespace: argocd\n")
	cmd := exec.Command(kustomize, "build", site)
	out, err := cmd.CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("expected kind != 'Component'")) {
		t.Fatalf("kustomize build with kustomize/argocd under resources: err %v, want kustomize's refusal of a Component:\n%s", err, out)
	}
}

// componentFrom is the path of kustomize/argocd relative to the folder of
// a kustomization (kustomize takes no absolute paths there).
func componentFrom(t *testing.T, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join(repoRoot, "kustomize", "argocd"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(rel)
}

func convert(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
}
