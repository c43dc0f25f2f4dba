package argocd_test

import (
	"bytes"
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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// argocdInstall is the part of Argo CD's install manifest the overlay
// patches: the repo-server, with the volumes a plugin sidecar shares, and
// argocd-cm.
const argocdInstall = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: argocd-repo-server
  labels: {app.kubernetes.io/name: argocd-repo-server, app.kubernetes.io/part-of: argocd}
spec:
  selector:
    matchLabels: {app.kubernetes.io/name: argocd-repo-server}
  template:
    metadata:
      labels: {app.kubernetes.io/name: argocd-repo-server}
    spec:
      initContainers:
      - name: copyutil
        image: quay.io/argoproj/argocd:v3.2.11
        command: [/bin/cp, -n, /usr/local/bin/argocd, /var/run/argocd/argocd-cmp-server]
        volumeMounts:
        - {name: var-files, mountPath: /var/run/argocd}
      containers:
      - name: argocd-repo-server
        image: quay.io/argoproj/argocd:v3.2.11
        args: [/usr/local/bin/argocd-repo-server]
        volumeMounts:
        - {name: var-files, mountPath: /var/run/argocd}
        - {name: plugins, mountPath: /home/argocd/cmp-server/plugins}
        - {name: tmp, mountPath: /tmp}
      volumes:
      - {name: var-files, emptyDir: {}}
      - {name: plugins, emptyDir: {}}
      - {name: tmp, emptyDir: {}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  labels: {app.kubernetes.io/name: argocd-cm, app.kubernetes.io/part-of: argocd}
data:
  timeout.reconciliation: 180s
`

// TestKustomizeOverlay builds kustomize/argocd with the real kustomize over
// an Argo CD install, the way its kustomization.yaml tells users to.
func TestKustomizeOverlay(t *testing.T) {
	kustomize := tool(t, "KUSTOMIZE_BIN", "make -C ../.. bin/kustomize")
	dir := filepath.Join(t.TempDir(), "argocd")
	copyDir(t, filepath.Join(repoRoot, "kustomize", "argocd"), dir)
	writeFile(t, filepath.Join(dir, "install.yaml"), argocdInstall)
	k, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), string(k)+"resources:\n- install.yaml\nnamespace: argocd\n")

	cmd := exec.Command(kustomize, "build", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, stderr.String())
	}
	objs, err := kube.SplitYAML(stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var dep appsv1.Deployment
	var argocdCM, pluginCM corev1.ConfigMap
	for _, o := range objs {
		var into any
		switch {
		case o.GetKind() == "Deployment" && o.GetName() == "argocd-repo-server":
			into = &dep
		case o.GetKind() == "ConfigMap" && o.GetName() == "argocd-cm":
			into = &argocdCM
		case o.GetKind() == "ConfigMap" && strings.HasPrefix(o.GetName(), "wavesmith-cmp-plugin"):
			into = &pluginCM
		default:
			t.Errorf("unexpected object %s %s", o.GetKind(), o.GetName())
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
			t.Fatal(err)
		}
	}

	// The plugin's ConfigMap holds plugin.yaml, under a name with a content
	// hash that the Deployment follows.
	plugin, err := os.ReadFile(filepath.Join(repoRoot, "kustomize", "argocd", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if pluginCM.Name == "wavesmith-cmp-plugin" || pluginCM.Namespace != "argocd" {
		t.Errorf("plugin ConfigMap %s/%s: want a hashed name in argocd", pluginCM.Namespace, pluginCM.Name)
	}
	if diff := gocmp.Diff(string(plugin), pluginCM.Data["plugin.yaml"]); diff != "" {
		t.Errorf("plugin ConfigMap differs from plugin.yaml:\n%s", diff)
	}

	// The sidecar, as Argo CD documents it.
	spec := dep.Spec.Template.Spec
	var names []string
	var sidecar corev1.Container
	for _, c := range spec.Containers {
		names = append(names, c.Name)
		if c.Name == "wavesmith" {
			sidecar = c
		}
	}
	sort.Strings(names)
	if diff := gocmp.Diff([]string{"argocd-repo-server", "wavesmith"}, names); diff != "" {
		t.Errorf("containers (-want +got):\n%s", diff)
	}
	want := corev1.Container{
		Name:    "wavesmith",
		Image:   "ghcr.io/wavesmith/wavesmith:latest",
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
		"var-files":        {EmptyDir: &corev1.EmptyDirVolumeSource{}},
		"plugins":          {EmptyDir: &corev1.EmptyDirVolumeSource{}},
		"tmp":              {EmptyDir: &corev1.EmptyDirVolumeSource{}},
		"wavesmith-plugin": {ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: pluginCM.Name}}},
		"wavesmith-tmp":    {EmptyDir: &corev1.EmptyDirVolumeSource{}},
	}
	if diff := gocmp.Diff(wantVolumes, volumes); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}

	// argocd-cm keeps its data and gains the health checks.
	for _, k := range []string{
		"timeout.reconciliation",
		"resource.customizations.health.designer.kaoto.io_Kaoto",
		"resource.customizations.health.wavesmith.io_Component",
		"resource.customizations.health.argoproj.io_Application",
	} {
		if argocdCM.Data[k] == "" {
			t.Errorf("argocd-cm lacks %s", k)
		}
	}
}
