package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wavesmith/wavesmith/generators/builtin"
	"github.com/wavesmith/wavesmith/internal/livediff"
	"github.com/wavesmith/wavesmith/manifest"
)

// Exit codes of diff, as kubectl diff's: differences are 1, and any error
// (bad input, a cluster that cannot be reached or refuses us, an object
// that could not be compared, a usage error) is 2.
const (
	exitDifferences = 1
	exitDiffError   = 2
)

func newDiffCommand() *cobra.Command {
	var f renderFlags
	var kubeconfig, kubeContext, fieldManager string
	var qps float32
	var burst int
	c := &cobra.Command{
		Use:   "diff [PATH|-]...",
		Short: "Show what applying the render would change in the current cluster",
		Long: `Diff renders exactly as render does (same inputs, project file and
settings) and asks the API server what applying each object would change.
For every object it reads the live object and applies the rendered one
server-side with dryRun=All, the field manager --field-manager and
conflicts forced; nothing in the cluster changes. It prints, in the render's
order, one unified diff per object that would change, headed by
Kind/namespace/name: "--- /dev/null" for a new object, "(live)" and
"(after apply)" otherwise.

Diff as the applier that owns the objects, so that a field the render
stopped setting shows as removed: --field-manager ` + livediff.FluxFieldManager + ` for
Flux, ` + livediff.ArgoCDFieldManager + ` for Argo CD (server-side apply). The default,
"` + livediff.FieldManager + `", owns nothing: such a field is not shown.

Not compared: metadata.managedFields, resourceVersion, generation, uid,
creationTimestamp, status and the kubectl.kubernetes.io/last-applied-configuration
annotation. Secret values never appear: they show as "(sensitive)", and
"(sensitive, changed)" where applying would change them.

An object whose Namespace or CustomResourceDefinition the same render
creates cannot be dry-run yet: it is shown as new, as rendered, marked "not
checked by the API server". A kind the cluster does not know and the render
does not define, or an apiVersion its CustomResourceDefinition does not
serve, is an error naming the object and the versions served.

An object the API server refuses to update in place (an immutable field
changed, a Job's pod template) is shown "(after replace)": the live object
with the rendered fields laid over it. Applying replaces it when it says so
(wavesmith.io/update-policy: recreate, Argo CD Force=true, Flux force:
enabled); otherwise applying would fail, and that is also an error.

No longer rendered, shown as deleted after the others: the objects a live
spec's inventory (wavesmith.io/inventory) lists, and the live specs that
carry an inventory, in the namespaces the render's objects occupy, that the
render no longer has (a deleted spec file), with what their inventories
list. When the specs still rendered were all applied by one Flux
Kustomization or Argo CD Application, only specs it applied are considered. An object
marked never to be pruned (wavesmith.io/delete-policy orphan or
orphan-on-apply, Argo CD Prune=false, Flux prune: disabled,
helm.sh/resource-policy: keep) is reported as kept on standard error, not as
deleted.

Hooks (wavesmith.io/hook, argocd.argoproj.io/hook) are left out when Argo
CD applies: --field-manager ` + livediff.ArgoCDFieldManager + ` or --dialects argocd. Argo CD
runs them on sync and deletes them after; argocd app diff leaves them out.

The cluster is the current context of the kubeconfig (--kubeconfig, else
KUBECONFIG, else ~/.kube/config, else the pod's service account); --context
picks another context. Namespaced objects without a namespace get the
context's namespace. Requests are limited to --kube-api-qps per second.
On a terminal, standard error shows progress.

Exit codes, as kubectl diff's: 0 nothing would change; 1 something would
change (the diffs on standard output, a summary line on standard error,
even with -q); 2 an error: bad input, a cluster that cannot be reached or
refuses the credentials, an object that could not be compared (the others
are still shown), a usage error.`,
		Example: `  # What applying deploy/ would change in the current cluster
  wavesmith diff deploy/

  # As Flux's kustomize-controller applies it: removed fields show
  wavesmith diff deploy/ --field-manager ` + livediff.FluxFieldManager + `

  # Against another context, rendering for OpenShift
  wavesmith diff deploy/ --context staging --platform openshift

  # In CI: fail when the cluster drifted from what is committed
  wavesmith diff --kubeconfig "$KUBECONFIG_PROD"; [ $? -le 1 ] || echo "diff failed"`,
		RunE: func(c *cobra.Command, args []string) error {
			s, err := f.setup(c, args, nil, nil)
			if err != nil {
				return err
			}
			defer s.close()
			cfg, ns, err := restConfig(kubeconfig, kubeContext)
			if err != nil {
				return usageError{cmd: c.CommandPath(), err: err}
			}
			if qps == 0 || burst < 0 {
				return usageError{cmd: c.CommandPath(), err: fmt.Errorf("--kube-api-qps must not be 0 (negative: no limit), --kube-api-burst must not be negative")}
			}
			res, err := f.render(c, s)
			if err != nil {
				return diffFailed(c, err)
			}
			f.printWarnings(c, res)
			objs := make([]livediff.Object, len(res.Items))
			for i, it := range res.Items {
				objs[i] = livediff.Object{Key: it.Key, YAML: it.YAML}
			}
			skipHooks := fieldManager == livediff.ArgoCDFieldManager ||
				len(s.opts.Dialects) == 1 && s.opts.Dialects[0].Name() == "argocd"
			p := newProgress(c, f.quiet)
			opts := livediff.Options{
				Namespace: ns, FieldManager: fieldManager, SkipHooks: skipHooks,
				SpecKinds: specKinds(), QPS: qps, Burst: burst,
				Progress: comparing(p),
			}
			out, err := livediff.Diff(c.Context(), cfg, objs, opts)
			p.done()
			if out == nil {
				return diffFailed(c, err)
			}
			return report(c, out, len(objs), err)
		},
	}
	f.bind(c)
	fs := c.Flags()
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file of the cluster to compare with (default: env KUBECONFIG, else ~/.kube/config, else in-cluster)")
	fs.StringVar(&kubeContext, "context", "", "kubeconfig context to use (default: the current context)")
	fs.StringVar(&fieldManager, "field-manager", livediff.FieldManager, "server-side apply field manager of the dry runs: the applier's, to see the fields the render stopped setting removed ("+livediff.FluxFieldManager+": Flux; "+livediff.ArgoCDFieldManager+": Argo CD)")
	fs.Float32Var(&qps, "kube-api-qps", livediff.DefaultQPS, "requests per second to the API server (negative: no limit)")
	fs.IntVar(&burst, "kube-api-burst", 0, "requests allowed at once above --kube-api-qps (default: twice it)")
	complete(c, "field-manager", livediff.FluxFieldManager, livediff.ArgoCDFieldManager, livediff.FieldManager)
	return c
}

// specKinds are the kinds of wavesmith's specs, from the registry.
func specKinds() []schema.GroupKind {
	var out []schema.GroupKind
	for _, k := range builtin.Registry().Kinds() {
		group, kind, _ := strings.Cut(k, "/")
		out = append(out, schema.GroupKind{Group: group, Kind: kind})
	}
	return out
}

// diffFailed prints err as run does and exits with exitDiffError; usage
// errors keep their own handling (exit 2 with a hint).
func diffFailed(c *cobra.Command, err error) error {
	var u usageError
	if errors.As(err, &u) {
		return err
	}
	printErrors(c.ErrOrStderr(), err)
	return silentError{code: exitDiffError}
}

func printErrors(w io.Writer, err error) {
	var es manifest.Errors
	if errors.As(err, &es) {
		for _, e := range es {
			fmt.Fprintf(w, "error: %v\n", e)
		}
		return
	}
	fmt.Fprintf(w, "error: %v\n", err)
}

// report prints the diffs, the kept objects, the errors and the summary
// line, and returns the exit code.
func report(c *cobra.Command, res *livediff.Result, total int, err error) error {
	stdout, stderr := c.OutOrStdout(), c.ErrOrStderr()
	if n := len(res.Hooks); n > 0 {
		fmt.Fprintf(stderr, "left out: %d hooks (Argo CD runs them on sync and may delete them after; argocd app diff leaves them out too)\n", n)
	}
	differs := false
	for _, ch := range res.Changes {
		if ch.Action == livediff.Keep {
			fmt.Fprintf(stderr, "kept: %s is no longer rendered; %s keeps it (a pruning applier leaves it, unmanaged)\n", ch.Key, ch.Reason)
			continue
		}
		differs = true
		fmt.Fprint(stdout, ch.Diff)
	}
	if err != nil {
		printErrors(stderr, err)
	}
	compared := total - len(res.Hooks)
	if !differs && err == nil {
		fmt.Fprintf(stderr, "no differences: applying %d objects would change nothing\n", compared)
		return nil
	}
	fmt.Fprintln(stderr, summary(res.Changes, compared, err != nil))
	if err != nil {
		return silentError{code: exitDiffError}
	}
	return silentError{code: exitDifferences}
}

// restConfig loads the client configuration with client-go's standard
// rules, and the context's namespace.
func restConfig(kubeconfig, kubeContext string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := cc.ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); kubeconfig == "" && env != "" {
			var missing []string
			for _, p := range filepath.SplitList(env) {
				if _, serr := os.Stat(p); serr != nil {
					missing = append(missing, p)
				}
			}
			if len(missing) > 0 {
				return nil, "", fmt.Errorf("KUBECONFIG=%s: no kubeconfig file %s: %w", env, strings.Join(missing, ", "), os.ErrNotExist)
			}
			return nil, "", fmt.Errorf("KUBECONFIG=%s: no cluster in it", env)
		}
		return nil, "", errors.New("no cluster to compare with: give --kubeconfig, set KUBECONFIG, or write ~/.kube/config")
	}
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, ns, nil
}

// summary counts what applying would do to the compared objects.
func summary(changes []livediff.Change, total int, failed bool) string {
	var created, updated, replaced, pruned, kept int
	for _, ch := range changes {
		switch ch.Action {
		case livediff.Create:
			created++
		case livediff.Prune:
			pruned++
		case livediff.Keep:
			kept++
		case livediff.Replace:
			replaced++
			updated++
		default:
			updated++
		}
	}
	s := fmt.Sprintf("applying would create %d and change %d of %d objects", created, updated, total)
	if replaced > 0 {
		s += fmt.Sprintf(" (%d by deleting and re-creating it)", replaced)
	}
	if pruned > 0 {
		s += fmt.Sprintf("; a pruning applier would delete %d no longer rendered", pruned)
	}
	if kept > 0 {
		s += fmt.Sprintf("; %d no longer rendered are kept", kept)
	}
	if failed {
		s += "; some objects could not be compared (errors above)"
	}
	return s
}

// comparing shows, on a terminal, how many objects were compared (p is
// silent elsewhere and for runs under a second).
func comparing(p *progress) func(done, total int) {
	if p.w == nil {
		return nil
	}
	return func(done, total int) { p.report("comparing", "objects", done, total) }
}
