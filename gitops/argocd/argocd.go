package argocd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wavesmith/wavesmith/api/v1alpha1"
	"github.com/wavesmith/wavesmith/gitops"
	"github.com/wavesmith/wavesmith/manifest"
)

// Dir is the tree folder that holds the Applications; AppsDir holds the
// child Applications of an app of apps. Dir starts with '_', so it is
// never a namespace's folder (namespaces are DNS labels): a spec in a
// namespace called argocd keeps its own folder, argocd/.
const (
	Dir     = "_argocd"
	AppsDir = Dir + "/apps"
)

// Argo CD names.
const (
	APIVersion = "argoproj.io/v1alpha1"
	Kind       = "Application"
	// ResourcesFinalizer makes Argo CD delete an Application's objects when
	// the Application is deleted.
	ResourcesFinalizer = "resources-finalizer.argocd.argoproj.io"
	// InClusterServer is the API server Argo CD runs in.
	InClusterServer = "https://kubernetes.default.svc"
)

// Defaults of Options.
const (
	DefaultName           = "wavesmith"
	DefaultNamespace      = "argocd"
	DefaultProject        = "default"
	DefaultTargetRevision = "HEAD"
)

// ErrTree is wrapped when the Applications' files would clash with the
// tree's own files.
var ErrTree = errors.New("argocd tree")

// Options say where the tree lives and where Argo CD deploys it.
type Options struct {
	// Name of the (root) Application; the prefix of child Applications
	// ("wavesmith" when empty).
	Name string
	// Namespace of the Application objects: Argo CD's namespace ("argocd"
	// when empty).
	Namespace string
	// Project is the Argo CD project ("default" when empty).
	Project string
	// RepoURL is the git repository holding the tree. Required.
	RepoURL string
	// TargetRevision is the branch, tag or commit ("HEAD" when empty).
	TargetRevision string
	// Path is the tree's folder inside the repository ("." for its root).
	// Required.
	Path string
	// DestinationServer is the API server objects go to
	// (https://kubernetes.default.svc when empty).
	DestinationServer string
	// DestinationNamespace, when set, is the namespace of every
	// Application's namespaced objects that have none. When empty, the
	// child Application of a spec folder uses the spec's namespace and the
	// others set none.
	DestinationNamespace string
}

func (o Options) normalize() (Options, error) {
	def := func(s *string, v string) {
		if *s = strings.TrimSpace(*s); *s == "" {
			*s = v
		}
	}
	def(&o.Name, DefaultName)
	def(&o.Namespace, DefaultNamespace)
	def(&o.Project, DefaultProject)
	def(&o.TargetRevision, DefaultTargetRevision)
	def(&o.DestinationServer, InClusterServer)
	o.RepoURL = strings.TrimSpace(o.RepoURL)
	o.DestinationNamespace = strings.TrimSpace(o.DestinationNamespace)
	var errs []error
	if o.RepoURL == "" {
		errs = append(errs, gitops.Optionf("argocd.repo", "is required (the URL of the git repository that holds the tree)"))
	}
	p := strings.TrimSpace(o.Path)
	switch {
	case p == "":
		errs = append(errs, gitops.Optionf("treePath", "is required (the tree's folder inside the repository, \".\" for its root)"))
	case strings.HasPrefix(p, "/") || strings.Contains(p, `\`):
		errs = append(errs, gitops.Optionf("treePath", "%q must be a slash-separated path relative to the repository root", o.Path))
	default:
		p = path.Clean(p)
		if p == ".." || strings.HasPrefix(p, "../") {
			errs = append(errs, gitops.Optionf("treePath", "%q leaves the repository", o.Path))
		}
	}
	o.Path = p
	if msgs := validation.IsDNS1123Subdomain(o.Name); len(msgs) > 0 {
		errs = append(errs, gitops.Optionf("argocd.name", "%q: %s", o.Name, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
		errs = append(errs, gitops.Optionf("argocd.namespace", "%q: %s", o.Namespace, strings.Join(msgs, "; ")))
	}
	if o.DestinationNamespace != "" {
		if msgs := validation.IsDNS1123Label(o.DestinationNamespace); len(msgs) > 0 {
			errs = append(errs, gitops.Optionf("argocd.destinationNamespace", "%q: %s", o.DestinationNamespace, strings.Join(msgs, "; ")))
		}
	}
	return o, errors.Join(errs...)
}

// Files implements gitops.Engine: the Applications of the tree when
// cfg.ArgoCD is set.
func (Engine) Files(p *gitops.Plan, _ fs.FS, cfg *v1alpha1.RenderConfigSpec) (map[string][]byte, error) {
	if cfg == nil || cfg.ArgoCD == nil {
		return nil, nil
	}
	a := cfg.ArgoCD
	return Applications(p, Options{
		Name: a.Name, Namespace: a.Namespace, Project: a.Project, RepoURL: a.Repo, TargetRevision: a.Revision,
		Path: cfg.TreePath, DestinationNamespace: a.DestinationNamespace,
	})
}

// Applications returns the Argo CD Applications that deploy the tree of
// the plan from opts.Path in opts.RepoURL: file path (under _argocd/,
// slash-separated, relative to the tree) to content. See the package
// documentation for the layout.
func Applications(p *gitops.Plan, opts Options) (map[string][]byte, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	if p == nil || len(p.Objects) == 0 {
		return nil, fmt.Errorf("%w: the render result is empty", ErrTree)
	}
	files := map[string][]byte{}
	rootFile := Dir + "/" + opts.Name + ".yaml"
	if !p.HasDependencies() {
		ns := opts.DestinationNamespace
		if ns == "" {
			ns = sharedNamespace(p)
		}
		files[rootFile] = encode(application(opts, opts.Name, nil, source(opts, opts.Path), destination(opts.DestinationServer, ns), ns != ""))
	} else {
		files[rootFile] = encode(application(opts, opts.Name, nil, source(opts, path.Join(opts.Path, AppsDir)), destination(InClusterServer, opts.Namespace), false))
		childApplications(p, opts, files)
	}
	if err := checkClashes(p, files); err != nil {
		return nil, err
	}
	return files, nil
}

// childApplications adds the child Applications of an app of apps to
// files. The children differ only in their name, wave, source path and
// destination namespace: one Application of each shape (with or without
// CreateNamespace) is built and its fields set for each child, and one
// encoder writes them all (it keeps the shape's key order: no sorting).
func childApplications(p *gitops.Plan, opts Options, files map[string][]byte) {
	type shape struct{ app, meta, annotations, src, dst map[string]any }
	var shapes [2]*shape // without, with CreateNamespace
	var enc manifest.Encoder
	var b bytes.Buffer
	for _, c := range children(p, opts) {
		ns := opts.DestinationNamespace
		if ns == "" {
			ns = c.namespace
		}
		i := 0
		if c.createNamespace {
			i = 1
		}
		sh := shapes[i]
		if sh == nil {
			sh = &shape{annotations: map[string]any{SyncWave: ""}, src: source(opts, ""), dst: destination(opts.DestinationServer, "")}
			sh.app = application(opts, "", sh.annotations, sh.src, sh.dst, c.createNamespace)
			sh.meta = sh.app["metadata"].(map[string]any)
			sh.meta["finalizers"] = []any{ResourcesFinalizer}
			shapes[i] = sh
		}
		sh.meta["name"] = c.name
		sh.annotations[SyncWave] = strconv.Itoa(c.wave)
		sh.src["path"] = path.Join(opts.Path, c.folder)
		if ns != "" {
			sh.dst["namespace"] = ns
		} else {
			delete(sh.dst, "namespace")
		}
		b.Reset()
		b.WriteString(gitops.TreeHeader)
		enc.Encode(&b, sh.app)
		files[AppsDir+"/"+c.name+".yaml"] = bytes.Clone(b.Bytes())
	}
}

// sharedNamespace is the namespace of every spec when they all share one,
// else "".
func sharedNamespace(p *gitops.Plan) string {
	ns := ""
	for i, s := range p.Specs {
		if i > 0 && s.Key.Namespace != ns {
			return ""
		}
		ns = s.Key.Namespace
	}
	return ns
}

// child is one child Application of an app of apps.
type child struct {
	folder, name, namespace string
	wave                    int
	createNamespace         bool
}

// children returns the child Applications, sorted by folder: one per spec
// folder, in the earliest wave of its objects as the plan placed them (a
// spec that depends on another already starts after the other's last
// object), and one for the objects of no spec, in their earliest wave.
func children(p *gitops.Plan, opts Options) []child {
	var out []child
	for _, s := range p.Specs {
		out = append(out, child{folder: s.Folder, namespace: s.Key.Namespace, wave: s.First, createNamespace: true,
			name: opts.Name + "-" + s.Key.Namespace + "-" + strings.ToLower(s.Key.Kind) + "-" + s.Key.Name})
	}
	objWave, objFolder := 0, ""
	for _, o := range p.Objects {
		if o.Spec >= 0 {
			continue
		}
		if objFolder == "" || o.Wave < objWave {
			objWave = o.Wave
		}
		objFolder = path.Dir(o.Path)
	}
	if objFolder != "" {
		out = append(out, child{folder: objFolder, name: opts.Name + "-objects", wave: objWave})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].folder < out[j].folder })
	uniqueNames(out)
	return out
}

// maxName is the label-value limit: Argo CD's label tracking puts the
// Application name in app.kubernetes.io/instance.
const maxName = 63

// uniqueNames shortens long names and separates names two folders share
// with a hash of the folder.
func uniqueNames(cs []child) {
	count := map[string]int{}
	for _, c := range cs {
		count[c.name]++
	}
	for i := range cs {
		c := &cs[i]
		if len(c.name) <= maxName && count[c.name] == 1 {
			continue
		}
		sum := sha256.Sum256([]byte(c.folder))
		suffix := "-" + hex.EncodeToString(sum[:])[:8]
		base := c.name
		if len(base) > maxName-len(suffix) {
			base = strings.TrimRight(base[:maxName-len(suffix)], "-.")
		}
		c.name = base + suffix
	}
}

func application(opts Options, name string, annotations map[string]any, src, dst map[string]any, createNamespace bool) map[string]any {
	meta := map[string]any{
		"name":      name,
		"namespace": opts.Namespace,
		"labels": map[string]any{
			"app.kubernetes.io/managed-by": "wavesmith",
			"app.kubernetes.io/part-of":    opts.Name,
		},
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	syncOptions := []any{"ServerSideApply=true"}
	if createNamespace {
		syncOptions = append(syncOptions, "CreateNamespace=true")
	}
	return map[string]any{
		"apiVersion": APIVersion,
		"kind":       Kind,
		"metadata":   meta,
		"spec": map[string]any{
			"project":     opts.Project,
			"source":      src,
			"destination": dst,
			"syncPolicy": map[string]any{
				"automated":   map[string]any{"prune": true, "selfHeal": true},
				"syncOptions": syncOptions,
			},
		},
	}
}

func source(opts Options, p string) map[string]any {
	return map[string]any{"repoURL": opts.RepoURL, "targetRevision": opts.TargetRevision, "path": p}
}

func destination(server, namespace string) map[string]any {
	d := map[string]any{"server": server}
	if namespace != "" {
		d["namespace"] = namespace
	}
	return d
}

func encode(m map[string]any) []byte {
	var b bytes.Buffer
	b.WriteString(gitops.TreeHeader)
	manifest.Encode(&b, m)
	return b.Bytes()
}

// checkClashes refuses files that the tree already has, or that would be
// a folder where the tree has a file, or a file where it has a folder.
func checkClashes(plan *gitops.Plan, files map[string][]byte) error {
	// When every file is a clean path under Dir, as Applications writes
	// them, each path the check looks up starts with Dir, and a path of the
	// tree that starts with Dir comes from an object whose path holds Dir
	// (cleaning a path only drops segments): the other objects, all of
	// them in a rendered tree, need not be listed.
	under := true
	for p := range files {
		if !strings.HasPrefix(p, Dir+"/") || path.Clean(p) != p {
			under = false
			break
		}
	}
	return clashes(plan, files, under)
}

// clashes is checkClashes; with under, only the objects whose path holds
// Dir are listed.
func clashes(plan *gitops.Plan, files map[string][]byte, under bool) error {
	treeFiles := map[string]bool{"kustomization.yaml": true}
	treeDirs := map[string]bool{}
	for _, o := range plan.Objects {
		p := o.Path
		if under && !strings.Contains(p, Dir) {
			continue
		}
		treeFiles[p] = true
		treeFiles[path.Dir(p)+"/kustomization.yaml"] = true
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			treeDirs[d] = true
		}
	}
	var errs []error
	for p := range files {
		if treeFiles[p] || treeDirs[p] {
			errs = append(errs, fmt.Errorf("%w: %s is already a path of the tree", ErrTree, p))
			continue
		}
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if treeFiles[d] {
				errs = append(errs, fmt.Errorf("%w: %s needs the folder %s, a file of the tree", ErrTree, p, d))
				break
			}
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}
