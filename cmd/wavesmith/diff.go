package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/wavesmith/wavesmith/livediff"
)

func newDiffCommand() *cobra.Command {
	var f renderFlags
	var kubeconfig, kubeContext string
	c := &cobra.Command{
		Use:   "diff [PATH|-]...",
		Short: "Show what applying the render would change in the current cluster",
		Long: `Diff renders exactly as render does (same inputs, project file and
settings) and asks the API server what applying each object would change.
For every object it reads the live object and applies the rendered one
server-side with dryRun=All, field manager "` + livediff.FieldManager + `" and
conflicts forced; nothing in the cluster changes. It prints, in the render's
order, one unified diff per object that would change, headed by
Kind/namespace/name: "--- /dev/null" for a new object, "(live)" and
"(after apply)" otherwise.

Not compared: metadata.managedFields, resourceVersion, generation, uid,
creationTimestamp, status and the kubectl.kubernetes.io/last-applied-configuration
annotation. Secret values never appear: they show as "(sensitive)", and
"(sensitive, changed)" where applying would change them.

An object whose Namespace or CustomResourceDefinition the same render
creates cannot be dry-run yet: it is shown as new, as rendered, marked "not
checked by the API server". A kind the cluster does not know and the render
does not define is an error naming the object and the kind.

Objects a live spec's inventory (wavesmith.io/inventory, written by the
render that was applied) lists, that the render no longer has and that
exist, are shown as deleted, after the others: a pruning GitOps engine
deletes them. Not shown: objects no live spec lists (apply the render once
for its specs to carry an inventory), and a field the render stopped
setting that another field manager owns (Argo CD's, Flux's).

The cluster is the current context of the kubeconfig (--kubeconfig, else
KUBECONFIG, else ~/.kube/config, else the pod's service account); --context
picks another context. Namespaced objects without a namespace get the
context's namespace.

Exit codes: 0 nothing would change; 1 something would change (the diffs are
on standard output), or bad input (nothing on standard output), or an
object that could not be compared; 2 a usage error (an unknown flag, a bad
setting, no kubeconfig).`,
		Example: `  # What applying deploy/ would change in the current cluster
  wavesmith diff deploy/

  # Against another context, rendering for OpenShift
  wavesmith diff deploy/ --context staging --platform openshift

  # In CI: fail when the cluster drifted from what is committed
  wavesmith diff --kubeconfig "$KUBECONFIG_PROD" || echo "the cluster differs"`,
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
			res, err := f.render(c, s)
			if err != nil {
				return err
			}
			f.printWarnings(c, res)
			objs := make([]livediff.Object, len(res.Items))
			for i, it := range res.Items {
				objs[i] = livediff.Object{Key: it.Key, YAML: it.YAML}
			}
			changes, err := livediff.Diff(c.Context(), cfg, objs, livediff.Options{Namespace: ns})
			for _, ch := range changes {
				fmt.Fprint(c.OutOrStdout(), ch.Diff)
			}
			if err != nil {
				return err
			}
			if len(changes) == 0 {
				if !f.quiet {
					fmt.Fprintf(c.ErrOrStderr(), "no differences: applying %d objects would change nothing\n", len(objs))
				}
				return nil
			}
			if !f.quiet {
				fmt.Fprintf(c.ErrOrStderr(), "%s\n", summary(changes, len(objs)))
			}
			return silentError{code: exitError}
		},
	}
	f.bind(c)
	c.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file of the cluster to compare with (default: env KUBECONFIG, else ~/.kube/config, else in-cluster)")
	c.Flags().StringVar(&kubeContext, "context", "", "kubeconfig context to use (default: the current context)")
	return c
}

// restConfig loads the client configuration with client-go's standard
// rules, and the context's namespace.
func restConfig(kubeconfig, kubeContext string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := cc.ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
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

// summary counts the objects applying would create and change.
func summary(changes []livediff.Change, total int) string {
	var created, updated, pruned int
	for _, ch := range changes {
		switch ch.Action {
		case livediff.Create:
			created++
		case livediff.Prune:
			pruned++
		default:
			updated++
		}
	}
	s := fmt.Sprintf("applying would create %d and change %d of %d objects", created, updated, total)
	if pruned > 0 {
		s += fmt.Sprintf("; a pruning applier would delete %d no longer rendered", pruned)
	}
	return s
}
