package flux

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/object"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/tar"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavesmith/wavesmith/test/testkit"
)

// fluxSystem is the namespace flux install creates and the generated
// Kustomizations live in by default.
const fluxSystem = "flux-system"

// startKustomizeController runs Flux's kustomize-controller
// (KUSTOMIZE_CONTROLLER_BIN, the release Flux v2.9.5 ships) with the
// arguments of its Deployment in config/manager/deployment.yaml, except
// leader election, the metrics and probe listeners (several tests run at
// once), and --requeue-dependency: a wave whose dependency is not ready
// looks again after 1 s instead of 30 s, which only shortens the waits.
func (cl *cluster) startKustomizeController(t *testing.T) *testkit.Process {
	t.Helper()
	bin := tool(t, "KUSTOMIZE_CONTROLLER_BIN")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fluxSystem}}
	if err := cl.c.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return cl.startProcess(t, bin,
		// The controller builds in (and at start purges) the temp folder.
		[]string{"RUNTIME_NAMESPACE=" + fluxSystem, "TMPDIR=" + t.TempDir()},
		"--watch-all-namespaces", "--log-level=info", "--log-encoding=json",
		"--metrics-addr=0", "--health-addr=0", "--requeue-dependency=1s")
}

// source plays source-controller for one GitRepository: it serves each
// published folder as a tarball artifact over HTTP and writes the
// GitRepository's status.artifact (URL, revision, digest), which is all
// kustomize-controller reads of a source (getSource and the fetch in
// internal/controller/kustomization_controller.go, v1.9.5). The artifact's
// shape follows source-controller v1.9.5,
// internal/controller/gitrepository_controller.go: NewArtifactFor(kind,
// object, "<branch>@sha1:<commit>", "<commit>.tar.gz"), stored under
// <kind>/<namespace>/<name>/.
type source struct {
	cl       *cluster
	name     string
	srv      *httptest.Server
	mu       sync.Mutex
	archives map[string][]byte
}

// newSource creates GitRepository flux-system/<name> and its artifact
// server.
func (cl *cluster) newSource(t *testing.T, name string) *source {
	t.Helper()
	s := &source{cl: cl, name: name, archives: map[string][]byte{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		b, ok := s.archives[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(s.srv.Close)
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fluxSystem},
		Spec: sourcev1.GitRepositorySpec{
			URL:      "https://git.example.com/wavesmith/deploy.git",
			Interval: metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	if err := cl.c.Create(context.Background(), repo); err != nil {
		t.Fatalf("creating GitRepository %s: %v", name, err)
	}
	return s
}

// publish makes the contents of dir the source's new revision, as
// source-controller does after a commit: a reproducible tar.gz (Flux's
// own archiver, fluxcd/pkg/tar) stored at gitrepository/<ns>/<name>/
// <commit>.tar.gz, its sha256 digest, revision main@sha1:<commit> (here a
// hash of the archive). It returns the revision.
func (s *source) publish(t *testing.T, ctx context.Context, dir string) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := tar.Tar(dir, &buf); err != nil {
		t.Fatalf("archiving %s: %v", dir, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	commit := sha1.Sum(buf.Bytes())
	rev := "main@sha1:" + hex.EncodeToString(commit[:])
	p := path.Join("gitrepository", fluxSystem, s.name, hex.EncodeToString(commit[:])+".tar.gz")
	s.mu.Lock()
	s.archives["/"+p] = buf.Bytes()
	s.mu.Unlock()

	var repo sourcev1.GitRepository
	if err := s.cl.c.Get(ctx, types.NamespacedName{Namespace: fluxSystem, Name: s.name}, &repo); err != nil {
		t.Fatal(err)
	}
	size := int64(buf.Len())
	repo.Status.Artifact = &fluxmeta.Artifact{
		Path: p, URL: s.srv.URL + "/" + p, Revision: rev,
		Digest: "sha256:" + hex.EncodeToString(sum[:]), LastUpdateTime: metav1.Now(), Size: &size,
	}
	repo.Status.ObservedGeneration = repo.Generation
	apimeta.SetStatusCondition(&repo.Status.Conditions, metav1.Condition{
		Type: fluxmeta.ReadyCondition, Status: metav1.ConditionTrue, Reason: fluxmeta.SucceededReason,
		Message: "stored artifact for revision '" + rev + "'", ObservedGeneration: repo.Generation,
	})
	if err := s.cl.c.Status().Update(ctx, &repo); err != nil {
		t.Fatalf("publishing revision %s: %v", rev, err)
	}
	return rev
}

// applyRoot creates the one Kustomization a user writes by hand (README,
// "Delivering with Flux"): it applies the tree's _flux/ folder, that is the
// wave Kustomizations, which kustomize-controller then reconciles.
func (cl *cluster) applyRoot(t *testing.T, ctx context.Context, name, fluxPath string) {
	t.Helper()
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fluxSystem},
		Spec: kustomizev1.KustomizationSpec{
			Interval:  metav1.Duration{Duration: 10 * time.Minute},
			Path:      fluxPath,
			Prune:     true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "flux-system"},
		},
	}
	if err := cl.c.Create(ctx, ks); err != nil {
		t.Fatalf("creating Kustomization %s: %v", name, err)
	}
}

// kustomization reads a Kustomization; nil when it does not exist.
func (cl *cluster) kustomization(t *testing.T, ctx context.Context, name string) *kustomizev1.Kustomization {
	t.Helper()
	var ks kustomizev1.Kustomization
	err := cl.c.Get(ctx, types.NamespacedName{Namespace: fluxSystem, Name: name}, &ks)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return &ks
}

// ksState is a one-line summary of a Kustomization's status.
func ksState(ks *kustomizev1.Kustomization) string {
	if ks == nil {
		return "not created"
	}
	c := apimeta.FindStatusCondition(ks.Status.Conditions, fluxmeta.ReadyCondition)
	if c == nil {
		return "no Ready condition yet"
	}
	s := fmt.Sprintf("Ready=%s %s: %s (applied %q, generation %d observed %d)", c.Status, c.Reason, c.Message,
		ks.Status.LastAppliedRevision, ks.Generation, ks.Status.ObservedGeneration)
	if r := apimeta.FindStatusCondition(ks.Status.Conditions, fluxmeta.ReconcilingCondition); r != nil && r.Status == metav1.ConditionTrue {
		s += "; Reconciling: " + r.Message
	}
	return s
}

// notReady lists the Kustomizations that have not applied revision and
// passed their health checks; "" when all have.
func (cl *cluster) notReady(t *testing.T, ctx context.Context, revision string, names []string) string {
	var out []string
	for _, n := range names {
		ks := cl.kustomization(t, ctx, n)
		if ks == nil || ks.Generation != ks.Status.ObservedGeneration || !apimeta.IsStatusConditionTrue(ks.Status.Conditions, fluxmeta.ReadyCondition) ||
			ks.Status.LastAppliedRevision != revision {
			out = append(out, "Kustomization "+n+": "+ksState(ks))
			if ks == nil {
				continue
			}
			if r := apimeta.FindStatusCondition(ks.Status.Conditions, fluxmeta.ReconcilingCondition); r != nil && r.Status == metav1.ConditionTrue && strings.Contains(r.Message, "health checks") {
				for _, w := range cl.unhealthy(t, ctx, ks) {
					out = append(out, "  waiting for "+w)
				}
			}
		}
	}
	return strings.Join(out, "\n")
}

// unhealthy lists the objects of a Kustomization's inventory that are not
// kstatus Current, the health its wait: true checks, with their status.
func (cl *cluster) unhealthy(t *testing.T, ctx context.Context, ks *kustomizev1.Kustomization) []string {
	t.Helper()
	var out []string
	if ks.Status.Inventory == nil {
		return out
	}
	for _, e := range ks.Status.Inventory.Entries {
		m, err := object.ParseObjMetadata(e.ID)
		if err != nil {
			t.Fatalf("Kustomization %s: inventory entry %q: %v", ks.Name, e.ID, err)
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(m.GroupKind.WithVersion(e.Version))
		what := m.GroupKind.Kind + "/" + m.Namespace + "/" + m.Name
		if err := cl.c.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: m.Name}, u); err != nil {
			out = append(out, what+": "+err.Error())
			continue
		}
		res, err := kstatus.Compute(u)
		if err != nil {
			out = append(out, what+": "+err.Error())
		} else if res.Status != kstatus.CurrentStatus {
			out = append(out, fmt.Sprintf("%s: %s: %s", what, res.Status, res.Message))
		}
	}
	return out
}

// waitApplied waits until every named Kustomization applied revision and
// is Ready. One that failed on revision fails the test at once: it would
// retry only after its interval.
func (cl *cluster) waitApplied(t *testing.T, ctx context.Context, timeout time.Duration, revision string, names []string) {
	t.Helper()
	waitFor(t, ctx, timeout, fmt.Sprintf("%d Kustomizations to apply %s", len(names), revision), func() string {
		cl.failFast(t, ctx, revision, names)
		return cl.notReady(t, ctx, revision, names)
	})
}

// failFast fails t when a named Kustomization failed on revision for a
// reason kustomize-controller retries only after the Kustomization's
// interval (10m): building, applying, pruning, or its health check.
func (cl *cluster) failFast(t *testing.T, ctx context.Context, revision string, names []string) {
	t.Helper()
	for _, n := range names {
		ks := cl.kustomization(t, ctx, n)
		if ks == nil || ks.Status.LastAttemptedRevision != revision {
			continue
		}
		c := apimeta.FindStatusCondition(ks.Status.Conditions, fluxmeta.ReadyCondition)
		if c == nil || c.Status != metav1.ConditionFalse {
			continue
		}
		switch c.Reason {
		case fluxmeta.BuildFailedReason, fluxmeta.ReconciliationFailedReason, fluxmeta.PruneFailedReason, fluxmeta.HealthCheckFailedReason:
			t.Fatalf("Kustomization %s failed on %s: %s: %s", n, revision, c.Reason, c.Message)
		}
	}
}

// requestReconcile asks kustomize-controller to reconcile the named
// Kustomizations now, as 'flux reconcile kustomization' does (the
// reconcile.fluxcd.io/requestedAt annotation), and waits until each has
// handled the request and is Ready again.
func (cl *cluster) requestReconcile(t *testing.T, ctx context.Context, timeout time.Duration, names []string) {
	t.Helper()
	token := time.Now().Format(time.RFC3339Nano)
	for _, n := range names {
		ks := cl.kustomization(t, ctx, n)
		if ks == nil {
			t.Fatalf("Kustomization %s does not exist", n)
		}
		patch := client.MergeFrom(ks.DeepCopy())
		if ks.Annotations == nil {
			ks.Annotations = map[string]string{}
		}
		ks.Annotations[fluxmeta.ReconcileRequestAnnotation] = token
		if err := cl.c.Patch(ctx, ks, patch); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, ctx, timeout, "kustomize-controller to handle the reconcile request", func() string {
		var out []string
		for _, n := range names {
			ks := cl.kustomization(t, ctx, n)
			if ks.Status.LastHandledReconcileAt != token || !apimeta.IsStatusConditionTrue(ks.Status.Conditions, fluxmeta.ReadyCondition) {
				out = append(out, "Kustomization "+n+": "+ksState(ks))
			}
		}
		return strings.Join(out, "\n")
	})
}

// inventory is a Kustomization's status.inventory as Kind/namespace/name.
func inventory(t *testing.T, ks *kustomizev1.Kustomization) []string {
	t.Helper()
	var out []string
	if ks.Status.Inventory == nil {
		return out
	}
	for _, e := range ks.Status.Inventory.Entries {
		m, err := object.ParseObjMetadata(e.ID)
		if err != nil {
			t.Fatalf("Kustomization %s: inventory entry %q: %v", ks.Name, e.ID, err)
		}
		out = append(out, m.GroupKind.Kind+"/"+m.Namespace+"/"+m.Name)
	}
	sort.Strings(out)
	return out
}

// waveNames lists the names of the wave Kustomizations of a tree.
func waveNames(ks []ksFile) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Metadata.Name)
	}
	return out
}
