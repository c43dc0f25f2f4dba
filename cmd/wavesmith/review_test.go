package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavesmith/wavesmith/generators/helm"
	"github.com/wavesmith/wavesmith/internal/review"
	"github.com/wavesmith/wavesmith/internal/treecache"
	"github.com/wavesmith/wavesmith/render"
)

// gitRepo is a repository a review test builds commit by commit.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// write writes files (path: content; "" removes the file).
func (r *gitRepo) write(files map[string]string) {
	r.t.Helper()
	for name, content := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if content == "" {
			if err := os.Remove(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// commit writes files and commits everything, returning the commit.
func (r *gitRepo) commit(msg string, files map[string]string) string {
	r.t.Helper()
	r.write(files)
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

const reviewKaoto = `apiVersion: designer.kaoto.io/v1alpha1
kind: Kaoto
metadata:
  name: designer
  namespace: demo
spec:
  image: quay.io/kaotoio/kaoto-app:IMAGE
`

const reviewChart = `apiVersion: v2
name: webapp
version: VERSION
`

const reviewChartTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
  labels:
    helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
data:
  color: {{ .Values.color | quote }}
`

const reviewComponent = `apiVersion: wavesmith.io/v1alpha1
kind: Component
metadata:
  name: web
  namespace: apps
spec:
  source:
    chart: {path: ../charts/webapp}
  values: {color: blue}
  wave: WAVE
`

const reviewSecret = `apiVersion: v1
kind: Secret
metadata:
  name: token
  namespace: apps
stringData:
  token: VALUE
`

// baseFiles is the repository every review case starts from.
func baseFiles() map[string]string {
	return map[string]string{
		"deploy/kaoto.yaml":                     strings.ReplaceAll(reviewKaoto, "IMAGE", "2.4.0"),
		"deploy/web.yaml":                       strings.ReplaceAll(reviewComponent, "WAVE", "1"),
		"deploy/secret.yaml":                    strings.ReplaceAll(reviewSecret, "VALUE", "s3cr3t-base-8f2a"),
		"charts/webapp/Chart.yaml":              strings.ReplaceAll(reviewChart, "VERSION", "1.0.0"),
		"charts/webapp/templates/config.yaml":   reviewChartTemplate,
		"deploy/.wavesmith.yaml":                "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nmetadata: {name: p}\nspec:\n  platform: kubernetes\n",
		"README.md":                             "a repository\n",
		"deploy/notes/unrelated-notes.txt.yaml": "# no objects\n",
	}
}

func TestReview(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  map[string]string
		code    int
		want    []string // in the text report
		absent  []string
		summary string
	}{
		{
			name:   "a value changed",
			change: map[string]string{"deploy/kaoto.yaml": strings.ReplaceAll(reviewKaoto, "IMAGE", "2.5.0")},
			code:   exitError,
			want: []string{"main -> work tree: 0 added, 0 removed, 2 changed", "--- Kaoto.designer.kaoto.io/demo/designer (main)",
				"--- Deployment.apps/demo/designer (main)", "-        image: quay.io/kaotoio/kaoto-app:2.4.0", "+        image: quay.io/kaotoio/kaoto-app:2.5.0"},
		},
		{
			name:   "a Component moved to another wave",
			change: map[string]string{"deploy/web.yaml": strings.ReplaceAll(reviewComponent, "WAVE", "3")},
			code:   exitError,
			want:   []string{"waves, hooks and policies:\n  Component.wavesmith.io/apps/web: apply-order 1 -> 3\n  ConfigMap/apps/web-config: apply-order 1 -> 3\n\n"},
		},
		{
			name:   "a child added",
			change: map[string]string{"deploy/kaoto.yaml": strings.ReplaceAll(reviewKaoto, "IMAGE", "2.4.0") + "  ingress: {host: kaoto.example.com}\n"},
			code:   exitError,
			want:   []string{"1 added, 0 removed, 1 changed", "--- /dev/null\n+++ Ingress.networking.k8s.io/demo/designer (work tree)"},
		},
		{
			name:   "an object removed",
			change: map[string]string{"deploy/secret.yaml": ""},
			code:   exitError,
			want:   []string{"0 added, 1 removed, 0 changed", "--- Secret/apps/token (main)\n+++ /dev/null", "token: (sensitive)"},
			absent: []string{"s3cr3t-base-8f2a"},
		},
		{
			name:   "a chart version changed",
			change: map[string]string{"charts/webapp/Chart.yaml": strings.ReplaceAll(reviewChart, "VERSION", "1.1.0")},
			code:   exitError,
			want:   []string{"-    helm.sh/chart: webapp-1.0.0", "+    helm.sh/chart: webapp-1.1.0"},
		},
		{
			name:   "the project file changed the platform",
			change: map[string]string{"deploy/.wavesmith.yaml": "apiVersion: wavesmith.io/v1alpha1\nkind: RenderConfig\nmetadata: {name: p}\nspec:\n  platform: openshift\n", "deploy/kaoto.yaml": strings.ReplaceAll(reviewKaoto, "IMAGE", "2.4.0") + "  ingress: {}\n"},
			code:   exitError,
			want:   []string{"+++ Route.route.openshift.io/demo/designer (work tree)"},
			absent: []string{"Ingress.networking.k8s.io"},
		},
		{
			name:   "a Secret changed",
			change: map[string]string{"deploy/secret.yaml": strings.ReplaceAll(reviewSecret, "VALUE", "s3cr3t-head-77c1")},
			code:   exitError,
			want:   []string{"-  token: (sensitive)", "+  token: (sensitive, changed)"},
			absent: []string{"s3cr3t-base-8f2a", "s3cr3t-head-77c1"},
		},
		{
			name:   "nothing changed but a file no render reads",
			change: map[string]string{"README.md": "a repository, described\n"},
			code:   exitOK,
			want:   []string{"main -> work tree: no difference in the rendered objects"},
		},
		{
			name:   "a revision that does not render",
			change: map[string]string{"deploy/web.yaml": strings.ReplaceAll(reviewComponent, "WAVE", "\"one\"")},
			code:   exitReviewError,
			want:   []string{"error: work tree does not render:", "web.yaml"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newGitRepo(t)
			r.commit("base", baseFiles())
			r.write(tc.change)
			statusBefore := r.git("status", "--porcelain")
			indexBefore := readFile(t, filepath.Join(r.dir, ".git", "index"))
			t.Chdir(filepath.Join(r.dir, "deploy"))
			code, out, stderr := wavesmithBinary(t, "review", "--base", "main")
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, stderr)
			}
			all := out + stderr
			for _, s := range tc.want {
				if !strings.Contains(all, s) {
					t.Errorf("the report lacks %q:\n%s", s, all)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(all, s) {
					t.Errorf("the report shows %q:\n%s", s, all)
				}
			}
			if got := r.git("status", "--porcelain"); got != statusBefore {
				t.Errorf("review changed the work tree: git status\n%s\nwas\n%s", got, statusBefore)
			}
			if got := readFile(t, filepath.Join(r.dir, ".git", "index")); got != indexBefore {
				t.Errorf("review rewrote the index")
			}
		})
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReviewRevisions compares two commits (no work tree), a base where
// the folder does not exist yet, and JSON output.
func TestReviewRevisions(t *testing.T) {
	r := newGitRepo(t)
	empty := r.commit("empty", map[string]string{"README.md": "a repository\n"})
	first := r.commit("specs", baseFiles())
	second := r.commit("image", map[string]string{"deploy/kaoto.yaml": strings.ReplaceAll(reviewKaoto, "IMAGE", "2.5.0")})
	r.write(map[string]string{"deploy/kaoto.yaml": strings.ReplaceAll(reviewKaoto, "IMAGE", "9.9.9")}) // the work tree: ignored with --head
	t.Chdir(filepath.Join(r.dir, "deploy"))

	code, out, stderr := wavesmithBinary(t, "review", "--base", first, "--head", second, "--format", "json")
	if code != exitError {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep review.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var changed []string
	for _, e := range rep.Entries {
		changed = append(changed, string(e.Change)+" "+e.Object)
	}
	if want := []string{"changed Deployment.apps/demo/designer", "changed Kaoto.designer.kaoto.io/demo/designer"}; rep.Changed != 2 || rep.Added != 0 || rep.Removed != 0 || strings.Join(changed, ", ") != strings.Join(want, ", ") {
		t.Errorf("want %v, got %v (%d added, %d removed, %d changed)", want, changed, rep.Added, rep.Removed, rep.Changed)
	}
	if strings.Contains(out, "9.9.9") {
		t.Errorf("--head %s rendered the work tree", second)
	}

	// The folder does not exist at the base: everything is new.
	t.Chdir(r.dir)
	code, out, stderr = wavesmithBinary(t, "review", "--base", empty, "--head", first, "deploy")
	if code != exitError {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "6 added, 0 removed, 0 changed") {
		t.Errorf("a base without the inputs: want every object added, got:\n%s", out)
	}

	// The same tree: equal without rendering.
	code, out, stderr = wavesmithBinary(t, "review", "--base", second, "--head", "HEAD")
	if code != exitOK || !strings.Contains(out, "no difference") {
		t.Errorf("the same commit: exit %d\n%s%s", code, out, stderr)
	}
}

// TestReviewUsage covers what is refused before anything renders.
func TestReviewUsage(t *testing.T) {
	r := newGitRepo(t)
	r.commit("specs", baseFiles())
	t.Chdir(r.dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"review"}, "--base REV is required"},
		{[]string{"review", "--base", "main", "--format", "html"}, `--format "html"`},
		{[]string{"review", "--base", "no-such-branch"}, "no-such-branch is not a commit of this repository (fetch it first"},
		{[]string{"review", "--base", "--upload-pack=evil"}, "is no revision"},
		{[]string{"review", "--base", "main", "/etc"}, "want a path relative to the current folder"},
	} {
		code, _, stderr := wavesmithBinary(t, tc.args...)
		if code != exitReviewError {
			t.Errorf("%v: exit %d, want %d", tc.args, code, exitReviewError)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: stderr lacks %q:\n%s", tc.args, tc.want, stderr)
		}
	}

	// Outside a repository.
	t.Chdir(t.TempDir())
	if code, _, stderr := wavesmithBinary(t, "review", "--base", "main"); code != exitReviewError || !strings.Contains(stderr, "not inside a git work tree") {
		t.Errorf("outside a repository: exit %d: %s", code, stderr)
	}
}

// TestReviewShallowClone: a CI checkout holds only the head; the base is
// missing, and the error says how to fetch it.
func TestReviewShallowClone(t *testing.T) {
	r := newGitRepo(t)
	base := r.commit("specs", baseFiles())
	r.commit("image", map[string]string{"deploy/kaoto.yaml": strings.ReplaceAll(reviewKaoto, "IMAGE", "2.5.0")})
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", "--depth=1", "file://"+r.dir, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	t.Chdir(clone)
	code, _, stderr := wavesmithBinary(t, "review", "--base", base)
	if code != exitReviewError {
		t.Fatalf("exit %d, want %d: %s", code, exitReviewError, stderr)
	}
	if want := "is not in this shallow clone: fetch it first, e.g. 'git fetch --no-tags --depth=1 origin " + base + "'"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// TestReviewSharesRenders runs the review's own path in this process:
// with a Memo, a spec whose inputs did not change between the revisions
// is generated once (the Component and its chart, the unchanged Kaoto),
// the changed one twice, and the report is the one without sharing.
func TestReviewSharesRenders(t *testing.T) {
	r := newGitRepo(t)
	files := baseFiles()
	files["deploy/other.yaml"] = strings.ReplaceAll(strings.ReplaceAll(reviewKaoto, "IMAGE", "1.0.0"), "name: designer", "name: other")
	base := r.commit("specs", files)
	head := r.commit("image", map[string]string{"deploy/kaoto.yaml": strings.ReplaceAll(reviewKaoto, "IMAGE", "2.5.0")})
	t.Chdir(filepath.Join(r.dir, "deploy"))

	// The review's renders go to temporary folders: they leave nothing
	// in the tree cache, where they would push the user's own entries
	// out (the control: a render -o with the same cache keeps one).
	cache := t.TempDir()
	t.Setenv(treecache.Env, cache)
	memo := render.NewMemo(helm.LockFile)
	shared, err := reviewRevisions(context.Background(), base, head, nil, memo)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("a review wrote %d files into the tree cache", len(entries))
	}
	if code, _, stderr := wavesmith(t, "", "render", "-q", "-o", filepath.Join(t.TempDir(), "out")); code != exitOK {
		t.Fatalf("render: exit %d: %s", code, stderr)
	}
	if idx, _ := filepath.Glob(filepath.Join(cache, "*.idx")); len(idx) != 1 {
		t.Errorf("the control render -o kept %d cache entries, want 1", len(idx))
	}
	// The base generates three specs; the head reuses two and generates
	// the changed Kaoto.
	hits, misses := memo.Stats()
	if hits != 2 || misses != 4 {
		t.Errorf("Stats() = %d reused, %d generated; want 2 reused (web, other), 4 generated (3 at the base, designer at the head)", hits, misses)
	}
	alone, err := reviewRevisions(context.Background(), base, head, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(alone, shared); diff != "" {
		t.Errorf("the report with shared renders differs (-alone +shared):\n%s", diff)
	}
	if shared.Changed != 2 {
		t.Errorf("%d changed, want 2 (the Kaoto and its Deployment)", shared.Changed)
	}
}
